#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for SECONDS seconds each (default 10).
#
#   bash scripts/fuzz.sh 10     the short pass of make test
#   bash scripts/fuzz.sh 300    make fuzz
#
# cargo-fuzz needs nightly compiler flags (-Z sanitizer, -Z instrument-coverage...); the
# stable toolchain accepts them with RUSTC_BOOTSTRAP=1. cargo-fuzz itself is installed once
# into target/tools. Inputs found interesting go to target/fuzz-corpus/<target> (the
# committed seeds stay in fuzz/seeds/<target>); a crash is saved in fuzz/artifacts/<target>
# and the run fails: copy the input into fuzz/seeds/<target> so that every later run
# replays it.
set -euo pipefail

seconds="${1:-10}"
# FUZZ_SEED fixes libFuzzer's random seed (make test uses 1, so the short pass explores the
# same inputs on every run and cannot fail by chance); unset or 0, each run picks its own.
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cargo="${CARGO:-cargo}"
tools="$root/target/tools"
if [[ ! -x "$tools/bin/cargo-fuzz" ]]; then
    "$cargo" install cargo-fuzz --locked --root "$tools"
fi
export RUSTC_BOOTSTRAP=1
# The fuzz build stays in the project's target directory, apart from the normal builds.
export CARGO_TARGET_DIR="$root/target/fuzz"

targets=(snapshot journal plan cli)
for t in "${targets[@]}"; do
    corpus="$root/target/fuzz-corpus/$t"
    mkdir -p "$corpus" "$root/fuzz/artifacts/$t"
    echo "fuzz: $t for ${seconds}s"
    log="$root/target/fuzz-corpus/$t.log"
    status=0
    "$tools/bin/cargo-fuzz" run --fuzz-dir "$root/fuzz" "$t" "$corpus" "$root/fuzz/seeds/$t" -- \
        -max_total_time="$seconds" -seed="${FUZZ_SEED:-0}" -print_final_stats=1 -timeout=20 -rss_limit_mb=4096 \
        -artifact_prefix="$root/fuzz/artifacts/$t/" >"$log" 2>&1 || status=$?
    # libFuzzer's summary: executions, coverage, corpus; and what went wrong, if anything.
    grep -E '^(Done [0-9]+ runs|stat::number_of_executed_units|stat::new_units_added|==[0-9]+== ?ERROR|SUMMARY|thread .* panicked)' "$log" || true
    if [[ $status -ne 0 ]]; then
        # A failed build prints its compiler errors far above cargo-fuzz's own last words.
        grep -E '^(error|warning: build failed)|No space left|signal: [0-9]+|could not compile' "$log" | head -n 40 >&2 || true
        tail -n 40 "$log" >&2
        df -h "$root/target" >&2 || true
        echo "fuzz: $t failed (exit $status); the input is in fuzz/artifacts/$t (log: $log)" >&2
        exit "$status"
    fi
done
