#!/usr/bin/env bash
# scripts/need.sh COMMAND[=PACKAGE]...: installs the Debian package of each command the tests
# run that is missing (tmux for the pane's end-to-end test; chromium=chromium and
# chromedriver=chromium-driver for the dashboard's), so that make test works on a brand-new
# machine. PACKAGE defaults to the command's name. Needs root to install; says what to
# install otherwise.
set -euo pipefail
missing=()
for spec in "$@"; do
  c="${spec%%=*}"
  pkg="${spec#*=}"
  command -v "$c" >/dev/null 2>&1 || missing+=("$pkg")
done
[ "${#missing[@]}" -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "need.sh: missing ${missing[*]}: install the Debian package(s) of that name" >&2
  exit 1
fi
echo "need.sh: installing Debian's ${missing[*]}" >&2
(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >&2
