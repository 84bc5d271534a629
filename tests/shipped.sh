#!/usr/bin/env bash
# The shipped builds carry no test hooks: the release `claimdag` command and the release C
# library ignore CLAIMDAG_CRASH_AT, CLAIMDAG_COMPACT_MIN_BYTES, CLAIMDAG_SEGMENT_BYTES and
# CLAIMDAG_SYNC_FAIL_AFTER,
# and the library exports no claimdag_testing_panic. (The Python module, built by `pip install .`, is checked by
# tests/python/test_shipped.py.) Prints "ok - ..." per check; exits non-zero on a failure.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
CARGO="${CARGO:-cargo}"
CC="${CC:-gcc}"
target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
rel="$target/release"

echo "== cargo build --release (the command and the C library, default features)"
"$CARGO" build --release --bin claimdag
"$CARGO" build --release -p claimdag-capi
bash "$root/scripts/soname-link.sh" "$rel"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
failed=0
check() { # check NAME COMMAND...
  local name="$1"
  shift
  if "$@"; then echo "ok - $name"; else echo "not ok - $name"; failed=$((failed + 1)); fi
}

cli_ignores_hooks() {
  local d="$scratch/cli"
  for i in 1 2 3; do
    CLAIMDAG_CRASH_AT=before-append CLAIMDAG_COMPACT_MIN_BYTES=1 CLAIMDAG_SYNC_FAIL_AFTER=0 \
      "$rel/claimdag" --dir "$d" upsert --summary "node $i" >/dev/null || return 1
  done
  # With the threshold of 1 byte honoured, the journal would have been compacted away.
  [ "$("$rel/claimdag" --dir "$d" list | wc -l)" -eq 3 ] && [ -s "$d/journal" ] &&
    [ "$(wc -c <"$d/journal")" -gt 100 ]
}
check "the release command ignores CLAIMDAG_CRASH_AT, CLAIMDAG_COMPACT_MIN_BYTES and CLAIMDAG_SYNC_FAIL_AFTER" cli_ignores_hooks

cli_ignores_segment_bytes() {
  local d="$scratch/segments" plan="$scratch/plan.json"
  python3 -c 'import json; print(json.dumps({"nodes": [{"key": f"k{i}", "summary": f"node {i} " + "s" * 80} for i in range(400)]}))' >"$plan"
  # One write past the compaction threshold: compacted at once; with a segment size of one
  # byte honoured, its history file would have been sealed under history/.
  CLAIMDAG_SEGMENT_BYTES=1 "$rel/claimdag" --dir "$d" import "$plan" >/dev/null || return 1
  [ -s "$d/history.jsonl" ] && [ ! -e "$d/history" ]
}
check "the release command ignores CLAIMDAG_SEGMENT_BYTES" cli_ignores_segment_bytes

no_testing_symbol() {
  [ -f "$rel/libclaimdag.so" ] && [ -f "$rel/libclaimdag.a" ] &&
    nm -D --defined-only "$rel/libclaimdag.so" | grep -q claimdag_upsert &&
    ! nm -D --defined-only "$rel/libclaimdag.so" | grep -q claimdag_testing_panic &&
    ! nm --defined-only "$rel/libclaimdag.a" 2>/dev/null | grep -q claimdag_testing_panic
}
check "the release library exports no claimdag_testing_panic" no_testing_symbol

c_ignores_hooks() {
  cat >"$scratch/host.c" <<'C'
#include <stdio.h>
#include "claimdag.h"
int main(int argc, char **argv) {
  claimdag_store *s;
  char id[33];
  if (argc < 2 || claimdag_open(argv[1], &s) != CLAIMDAG_OK) return 2;
  if (claimdag_upsert(s, "written by a C host", NULL, NULL, id) != CLAIMDAG_OK) return 3;
  claimdag_close(s);
  puts(id);
  return 0;
}
C
  "$CC" -std=c99 -I"$root/include" "$scratch/host.c" "$rel/libclaimdag.so" \
    -Wl,-rpath,"$rel" -o "$scratch/host" &&
    CLAIMDAG_CRASH_AT=before-append CLAIMDAG_SYNC_FAIL_AFTER=0 "$scratch/host" "$scratch/c" >/dev/null &&
    [ "$("$rel/claimdag" --dir "$scratch/c" list | wc -l)" -eq 1 ]
}
check "a C host on the release library ignores CLAIMDAG_CRASH_AT and CLAIMDAG_SYNC_FAIL_AFTER" c_ignores_hooks

# make demo finds the command where cargo put it, also when CARGO_TARGET_DIR points
# elsewhere. A stand-in for cargo puts the release command built above into that directory.
demo_with_target_dir() {
  local fake="$scratch/fake-cargo" tdir="$scratch/elsewhere"
  printf '#!/usr/bin/env bash\nmkdir -p "$CARGO_TARGET_DIR/release"\ncp "%s" "$CARGO_TARGET_DIR/release/"\n' \
    "$rel/claimdag" >"$fake"
  chmod +x "$fake"
  # A copy of the project's Makefile and demo, so that nothing is found in ./target.
  mkdir -p "$scratch/project/scripts"
  cp "$root/Makefile" "$scratch/project/"
  cp "$root/scripts/demo.sh" "$scratch/project/scripts/"
  CARGO_TARGET_DIR="$tdir" CLAIMDAG_DIR="$scratch/demo" PATH="/usr/bin:/bin" \
    make --no-print-directory -C "$scratch/project" demo CARGO="$fake" >"$scratch/demo.out" 2>&1 &&
    grep -q "^ok: 2 live nodes" "$scratch/demo.out"
}
check "make demo with CARGO_TARGET_DIR set runs the walkthrough" demo_with_target_dir

[ "$failed" -eq 0 ]
