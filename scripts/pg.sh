#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests and benchmarks, started from the server
# binaries of this machine (installed from Debian's `postgresql` package when missing).
#
#   scripts/pg.sh start DIR    initdb + pg_ctl start in DIR; prints the store URL
#   scripts/pg.sh stop DIR     pg_ctl stop (immediate) and removes DIR
#   scripts/pg.sh restart DIR  pg_ctl restart -m immediate (a crash and a recovery)
#
# The server listens on a Unix socket in DIR and on 127.0.0.1 at a free port. Local socket
# connections are trusted; TCP connections need the password of user `claimdag` (password
# `claimdag-test`), so that tests see a real password refused. initdb refuses root, so as
# root the server runs as the `postgres` user.
set -euo pipefail
cmd="${1:?usage: pg.sh start|stop|restart DIR}"
dir="${2:?usage: pg.sh start|stop|restart DIR}"

bindir() {
  local b=""
  if command -v pg_config >/dev/null 2>&1; then b="$(pg_config --bindir)"; fi
  if [ -z "$b" ] || [ ! -x "$b/initdb" ]; then
    b="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
  fi
  if [ -z "$b" ] || [ ! -x "$b/initdb" ]; then
    echo "pg.sh: no PostgreSQL server binaries; installing Debian's postgresql package" >&2
    if [ "$(id -u)" = 0 ]; then
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >&2
    else
      echo "pg.sh: not root: install the postgresql package" >&2
      exit 1
    fi
    b="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
  fi
  echo "$b"
}

need_openssl() {
  command -v openssl >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ]; then
    echo "pg.sh: installing Debian's openssl package (for the test certificates)" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl) >&2
  else
    echo "pg.sh: openssl is missing: install the openssl package" >&2
    exit 1
  fi
}

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

case "$cmd" in
  start)
    bin="$(bindir)"
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    if [ "$(id -u)" = 0 ]; then
      chown postgres: "$dir"
      # The server's user must reach DIR: open the search (x) bit of the directories above it
      # that lack it (a temporary directory of mode 0700, typically).
      up="$(dirname "$dir")"
      while [ "$up" != / ]; do
        if ! runuser -u postgres -- test -x "$up"; then chmod o+x "$up"; fi
        up="$(dirname "$up")"
      done
    fi
    chmod 700 "$dir"
    port="$(free_port)"
    as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
      -E UTF8 --locale=C >"$dir/initdb.log" 2>&1
    # TLS for tests of sslmode: a CA, a server certificate it signs (for localhost), and an
    # unrelated CA (other.crt) that must not verify.
    need_openssl
    (
      cd "$dir"
      openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3 \
        -subj /CN=claimdag-test-ca -keyout ca.key -out ca.crt
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -subj /CN=localhost -keyout data/server.key -out server.csr
      printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' >ext.cnf
      openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3 \
        -extfile ext.cnf -out data/server.crt
      openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3 \
        -subj /CN=someone-else -keyout other.key -out other.crt
    ) >"$dir/openssl.log" 2>&1
    chmod 600 "$dir/data/server.key"
    if [ "$(id -u)" = 0 ]; then chown -R postgres: "$dir"; fi
    {
      echo "ssl = on"
      echo "listen_addresses = '127.0.0.1'"
      echo "port = $port"
      echo "unix_socket_directories = '$dir'"
      echo "max_connections = 200"
      echo "fsync = on"
      echo "synchronous_commit = on"
    } >>"$dir/data/postgresql.conf"
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null
    as_owner "$bin/psql" -h "$dir" -p "$port" -U postgres -d postgres -q -v ON_ERROR_STOP=1 \
      -c "CREATE ROLE claimdag LOGIN SUPERUSER PASSWORD 'claimdag-test'" \
      -c "CREATE DATABASE claimdag OWNER claimdag" >/dev/null
    echo "$port" >"$dir/port"
    echo "postgresql:///claimdag?host=$dir&port=$port&user=claimdag"
    ;;
  stop)
    bin="$(bindir)"
    if [ -f "$dir/data/postmaster.pid" ]; then
      as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
  restart)
    bin="$(bindir)"
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m immediate -w -t 60 restart >/dev/null
    ;;
  *)
    echo "usage: pg.sh start|stop|restart DIR" >&2
    exit 2
    ;;
esac
