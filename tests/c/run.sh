#!/usr/bin/env bash
# Builds libclaimdag with cargo, then compiles the C tests (C99, -Wall -Wextra -Wpedantic
# -Werror), the C++ header check and the example worker under AddressSanitizer and
# UndefinedBehaviorSanitizer, links each test against both the static and the shared
# library, runs everything and prints "N passed, M failed". Exits non-zero on any failure.
# Run from anywhere: `make test-c` or `bash tests/c/run.sh`.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
CARGO="${CARGO:-cargo}"
CC="${CC:-gcc}"
CXX="${CXX:-g++}"
target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
lib="$target/debug"
build="$root/tests/c/build"
mkdir -p "$build"

# --features testing: claimdag_testing_panic (test_errors calls it) and the core's fault
# injection. The shipped library has neither; tests/shipped.sh checks that.
echo "== cargo build -p claimdag-capi --features testing"
"$CARGO" build -p claimdag-capi --features testing
# The shared tests ask the loader for the library's soname (libclaimdag.so.0) in $lib.
bash "$root/scripts/soname-link.sh" "$lib"

# The system libraries libclaimdag.a needs on Linux, as printed by
#   cargo rustc -p claimdag-capi --lib --crate-type staticlib -- --print native-static-libs
static_libs=(-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc)
warn=(-Wall -Wextra -Wpedantic -Werror)
sanitize=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g)
includes=(-I"$root/include" -I"$root/tests/c")
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=86${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
unset CLAIMDAG_DIR CLAIMDAG_WORKSPACE CLAIMDAG_CRASH_AT

# Every test makes its own directory under this one (mkdtemp) and removes it.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
export TMPDIR="$scratch"

passed=0
failed=0

# run NAME COMMAND...: runs a test program; each "ok - " line is a pass, each "not ok - "
# line a failure, and a program that exits non-zero without reporting one is a failure.
run() {
  local name="$1"
  shift
  local out="$build/$name.out" status=0
  echo "== $name"
  "$@" >"$out" 2>&1 || status=$?
  cat "$out"
  local ok bad
  ok=$(grep -c '^ok - ' "$out" || true)
  bad=$(grep -c '^not ok - ' "$out" || true)
  passed=$((passed + ok))
  failed=$((failed + bad))
  if [ "$status" -ne 0 ] && [ "$bad" -eq 0 ]; then
    echo "not ok - $name exited with status $status"
    failed=$((failed + 1))
  fi
}

compile_failed() {
  echo "not ok - $1 does not compile"
  failed=$((failed + 1))
}

# RUST_BACKTRACE=0: test_errors panics on purpose (claimdag_testing_panic), and the one-line
# panic message is enough.
tests=(test_walkthrough test_errors test_verbs test_plans test_threads test_time test_talk)
for t in "${tests[@]}"; do
  src=("$root/tests/c/$t.c" "$root/tests/c/util.c")
  echo "== compile $t (static, shared)"
  if "$CC" -std=c99 "${warn[@]}" "${sanitize[@]}" "${includes[@]}" "${src[@]}" \
    "$lib/libclaimdag.a" "${static_libs[@]}" -o "$build/$t-static"; then
    run "$t-static" env RUST_BACKTRACE=0 "$build/$t-static"
  else
    compile_failed "$t-static"
  fi
  if "$CC" -std=c99 "${warn[@]}" "${sanitize[@]}" "${includes[@]}" "${src[@]}" \
    "$lib/libclaimdag.so" -Wl,-rpath,"$lib" -lpthread -o "$build/$t-shared"; then
    run "$t-shared" env RUST_BACKTRACE=0 "$build/$t-shared"
  else
    compile_failed "$t-shared"
  fi
done

# test_reconnect is about a PostgreSQL connection: built here, run on the server below.
echo "== compile test_reconnect (shared)"
if ! "$CC" -std=c99 "${warn[@]}" "${sanitize[@]}" "${includes[@]}" \
  "$root/tests/c/test_reconnect.c" "$root/tests/c/util.c" "$lib/libclaimdag.so" \
  -Wl,-rpath,"$lib" -lpthread -o "$build/test_reconnect-shared"; then
  compile_failed test_reconnect-shared
fi

# The walkthrough and the conversation again on a PostgreSQL store (a throwaway server,
# scripts/pg.sh): the same C calls, a postgres:// URL in place of the directory.
pgdir="$scratch/pg"
pgurl="$(bash "$root/scripts/pg.sh" start "$pgdir")"
trap 'bash "$root/scripts/pg.sh" stop "$pgdir" >/dev/null 2>&1 || true; rm -rf "$scratch"' EXIT
run test_walkthrough-postgres env RUST_BACKTRACE=0 CLAIMDAG_C_STORE_BASE="$pgurl" \
  "$build/test_walkthrough-shared"
run test_talk-postgres env RUST_BACKTRACE=0 CLAIMDAG_C_STORE_BASE="$pgurl" \
  "$build/test_talk-shared"
# The faults test_reconnect makes: the server ends every claimdag connection; it restarts.
kill_sql="SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity \
WHERE application_name = 'claimdag' AND pid <> pg_backend_pid()"
run test_reconnect-postgres env RUST_BACKTRACE=0 CLAIMDAG_C_STORE_BASE="$pgurl" \
  CLAIMDAG_C_KILL="psql '$pgurl' -X -q -t -A -c \"$kill_sql\" >/dev/null" \
  CLAIMDAG_C_RESTART="bash '$root/scripts/pg.sh' restart '$pgdir' >/dev/null" \
  "$build/test_reconnect-shared"
bash "$root/scripts/pg.sh" stop "$pgdir"

echo "== compile header_twice.cpp"
if "$CXX" -std=c++11 "${warn[@]}" "${sanitize[@]}" -I"$root/include" \
  "$root/tests/c/header_twice.cpp" "$lib/libclaimdag.a" "${static_libs[@]}" \
  -o "$build/header_twice"; then
  run header_twice "$build/header_twice"
else
  compile_failed header_twice.cpp
fi

echo "== compile examples/c/worker.c"
if "$CC" -std=c99 "${warn[@]}" "${sanitize[@]}" -I"$root/include" \
  "$root/examples/c/worker.c" "$lib/libclaimdag.so" -Wl,-rpath,"$lib" \
  -o "$build/worker"; then
  # Two worker processes seed the same 20 tasks (upsert is idempotent) and work through
  # them together: every task is finished exactly once, by one of them.
  example() {
    local dir
    dir="$(mktemp -d)"
    "$build/worker" "$dir/store" 1 20 >"$dir/one" &
    local one=$!
    "$build/worker" "$dir/store" 2 20 >"$dir/two" &
    local two=$!
    local status=0
    wait "$one" || status=1
    wait "$two" || status=1
    cat "$dir/one" "$dir/two"
    local finished
    finished=$(cat "$dir/one" "$dir/two" | grep -c '  done  gen=2$' || true)
    local distinct
    distinct=$(cat "$dir/one" "$dir/two" | grep '  done  gen=2$' | cut -c1-32 | sort -u | wc -l)
    rm -rf "$dir"
    if [ "$status" -eq 0 ] && [ "$finished" -eq 20 ] && [ "$distinct" -eq 20 ]; then
      echo "ok - two example workers finish 20 tasks, each once"
    else
      echo "not ok - two example workers: status $status, $finished finished, $distinct distinct"
    fi
  }
  run example example
else
  compile_failed examples/c/worker.c
fi

if [ -n "$(ls -A "$scratch")" ]; then
  echo "not ok - tests left temporary directories behind: $(ls "$scratch")"
  failed=$((failed + 1))
fi

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
