#!/usr/bin/env bash
# Where the time of a command-line write goes (the evidence in docs/performance.md):
# process start, instruction counts (callgrind), system calls (strace) and, for 4 processes
# draining 1,000 nodes, the wait for the lock, the time it is held and the fsyncs; for ours
# and the public claimdag 0.8 (installed by `make bench` under target/alt/).
#
#   bash scripts/bench_profile.sh      (a few minutes; installs valgrind and strace if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO=${CARGO:-cargo}
missing=()
for tool in valgrind strace; do
    command -v "$tool" >/dev/null || missing+=("$tool")
done
if ((${#missing[@]})); then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
        apt-get update -qq && apt-get install -y -qq "${missing[@]}"
    else
        echo "bench_profile.sh: needs ${missing[*]}" >&2
        exit 1
    fi
fi
$CARGO build --release --bin claimdag
# A copy: the target directory may be shared with other builds.
mkdir -p target/bench-bin
cp target/release/claimdag target/bench-bin/claimdag-profile
v08=()
if [[ -x target/alt/claimdag08/bin/claimdag ]]; then
    v08=(--v08 target/alt/claimdag08/bin/claimdag)
fi
$CARGO bench --no-run --bench store --message-format=json >target/bench-bin/profile-build.json
store=$(python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "store" and m.get("executable"):
        print(m["executable"])' <target/bench-bin/profile-build.json)
cp "$store" target/bench-bin/store-profile
python3 benches/attribute.py --ours target/bench-bin/claimdag-profile "${v08[@]}" \
    --store-bench target/bench-bin/store-profile --work target/bench-work/profile
