#!/usr/bin/env bash
# `make bench`: measures the embedded store in process and through the command line, and the
# same work on the alternatives, then prints one table of figures and ratios. It installs what
# it compares against on a new machine: the public claimdag 0.8 command (cargo install, under
# target/alt/), SQLite (rusqlite with its bundled SQLite, built from benches/alt-sqlite/) and
# a venv with `filelock` (target/bench-venv). It never fails on a time.
#
#   QUICK=1 make bench    skips 1M nodes and takes fewer samples (a few minutes)
#   BASELINE=/path/to/an/older/claimdag make bench
#                         also measures the command-line figures of that binary, in whole
#                         runs of the command-line bench alternating with this tree's
#                         (current, baseline, baseline, current, ...: BASELINE_RUNS of each,
#                         default 3, or 2 with QUICK), and prints each figure for both with
#                         their ratio after the usual output. The in-process figures link
#                         the library, so they are this tree's only.
#
# Stores are made under target/bench-work, on the filesystem of the work tree: the figures
# are this disk's. Results: target/bench-results/results.tsv and table.md.
set -uo pipefail
cd "$(dirname "$0")/.."

CARGO=${CARGO:-cargo}
WORK=target/bench-work
OUT=target/bench-results
RESULTS=$OUT/results.tsv
QUICK=${QUICK:-0}
quick=()
if [[ "$QUICK" != 0 && -n "$QUICK" ]]; then
    quick=(--quick)
fi
BASELINE=${BASELINE:-}
if [[ -n "$BASELINE" ]]; then
    if [[ ! -x "$BASELINE" || -d "$BASELINE" ]]; then
        echo "bench.sh: BASELINE=$BASELINE is not an executable" >&2
        exit 2
    fi
    BASELINE_RUNS=${BASELINE_RUNS:-$([[ ${#quick[@]} -gt 0 ]] && echo 2 || echo 3)}
    if ! [[ "$BASELINE_RUNS" =~ ^[1-9][0-9]*$ ]]; then
        echo "bench.sh: BASELINE_RUNS=$BASELINE_RUNS is not a count" >&2
        exit 2
    fi
fi
mkdir -p "$WORK" "$OUT"
: >"$RESULTS"
started=$(date +%s)

log() { echo "bench.sh: $*" >&2; }
# A whole system could not be measured: one NA line per key, with the reason.
missing() {
    local system=$1 why=$2
    shift 2
    for key in "$@"; do
        printf '%s\t%s\tNA\t%s\n' "$system" "$key" "$why" >>"$RESULTS"
    done
}
per_size_keys() {
    local k s
    for s in "$@"; do
        for k in import_s claim_us cycle_us cycles_per_s claim_nosync_us cycle_nosync_us \
            load_ms load_all_ms rss_lazy_b_per_node rss_b_per_node hwm_b_per_node disk_b_per_node; do
            echo "$k@$s"
        done
    done
}

log "building claimdag and the bench programs"
# The target directory may be shared with other builds: run copies, so that every figure
# of one run comes from the same build.
BIN=target/bench-bin
mkdir -p "$BIN"
# One cargo call builds the command and both bench programs from the same tree.
$CARGO bench --no-run --bench store --bench cli --message-format=json >"$OUT/build.json" || exit 1
python3 - "$OUT/build.json" "$BIN" <<'PY' || exit 1
import json, shutil, sys
wanted = {("bench", "store"), ("bench", "cli"), ("bin", "claimdag")}
found = set()
for line in open(sys.argv[1]):
    m = json.loads(line)
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    for kind in m["target"]["kind"]:
        if (kind, m["target"]["name"]) in wanted:
            shutil.copy2(m["executable"], f"{sys.argv[2]}/{m['target']['name']}")
            found.add((kind, m["target"]["name"]))
sys.exit(0 if found == wanted else f"bench.sh: built {sorted(found)}, wanted {sorted(wanted)}")
PY
if [[ -n "$BASELINE" ]]; then
    # A copy too, so that the baseline cannot change under the run either.
    cp "$BASELINE" "$BIN/claimdag-baseline" || exit 1
fi

log "building the SQLite alternative (rusqlite, bundled SQLite)"
sqlite_ok=1
$CARGO build --release --manifest-path benches/alt-sqlite/Cargo.toml \
    --target-dir target/bench-alt >"$OUT/build-sqlite.log" 2>&1 || sqlite_ok=0

log "installing the public claimdag 0.8 command"
V08=target/alt/claimdag08/bin/claimdag
v08_why=""
if [[ ! -x "$V08" ]]; then
    if ! $CARGO install claimdag-cli --version 0.8.0 --locked --root target/alt/claimdag08 \
        >"$OUT/install-v08.log" 2>&1; then
        # The published lock file may no longer resolve: try once without it.
        $CARGO install claimdag-cli --version 0.8.0 --root target/alt/claimdag08 \
            >>"$OUT/install-v08.log" 2>&1 ||
            v08_why="cargo install claimdag-cli 0.8.0 failed: $(grep -m1 -E '^error' "$OUT/install-v08.log")"
    fi
fi
if [[ -z "$v08_why" && ! -x "$V08" ]]; then
    v08_why="cargo install claimdag-cli 0.8.0 left no binary"
fi

log "making the venv for the filelock alternative"
VENV=target/bench-venv
py_why=""
if [[ ! -x "$VENV/bin/python" ]]; then
    if ! python3 -m venv "$VENV" >"$OUT/venv.log" 2>&1; then
        if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
            apt-get install -y python3-venv >>"$OUT/venv.log" 2>&1
        fi
        rm -rf "$VENV"
        python3 -m venv "$VENV" >>"$OUT/venv.log" 2>&1 || py_why="python3 -m venv failed"
    fi
fi
if [[ -z "$py_why" ]] && ! "$VENV/bin/python" -c 'import filelock' 2>/dev/null; then
    "$VENV/bin/pip" install --quiet filelock >>"$OUT/venv.log" 2>&1 ||
        py_why="pip install filelock failed"
fi

{
    echo "# machine"
    echo "# nproc: $(nproc)"
    lscpu | head -n 15 | sed 's/^/# /'
    echo "# kernel: $(uname -r)"
    echo "# measured: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(
        git status --porcelain -- src Cargo.toml 2>/dev/null | grep -q . && echo ' with uncommitted changes in src')"
    if [[ -n "$BASELINE" ]]; then
        echo "# baseline: $BASELINE ($("$BIN/claimdag-baseline" --version 2>&1 | head -n 1))"
    fi
    df -T "$WORK" | sed 's/^/# /'
    echo "# load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/machine.txt"

log "ours, in process"
"$BIN/store" "${quick[@]}" --work "$WORK" >>"$RESULTS"

if [[ $sqlite_ok == 1 ]]; then
    log "SQLite, in process"
    target/bench-alt/release/claimdag-bench-sqlite "${quick[@]}" --work "$WORK" >>"$RESULTS"
else
    why="building rusqlite failed: see $OUT/build-sqlite.log"
    missing sqlite "$why" lib_drain4_wps lib_threads8_wps $(per_size_keys 1k 10k 100k)
fi

if [[ -z "$py_why" ]]; then
    log "filelock + JSON, in process"
    "$VENV/bin/python" benches/alt_filelock.py "${quick[@]}" --work "$WORK" >>"$RESULTS"
else
    missing filelock "$py_why" lib_drain4_wps $(per_size_keys 1k 10k)
fi

log "command line: ours, then claimdag 0.8"
v08_args=(--v08 "$V08")
if [[ -n "$v08_why" ]]; then
    v08_args=(--v08-missing "$v08_why")
fi
"$BIN/cli" "${quick[@]}" --work "$WORK" --ours "$BIN/claimdag" "${v08_args[@]}" >"$OUT/cli.tsv"
cat "$OUT/cli.tsv" >>"$RESULTS"

# With a baseline: more whole runs of the command-line bench, this tree's and the
# baseline's in turn (the run above is this tree's first), each system's lines kept as
# `current` or `baseline` in baseline.tsv with the run's number.
if [[ -n "$BASELINE" ]]; then
    CMP=$OUT/baseline.tsv
    awk -F'\t' -v OFS='\t' '$1 == "ours" { $1 = "current"; print $0, 1 }' "$OUT/cli.tsv" >"$CMP"
    # current, baseline, baseline, current, current, baseline, ...: each system runs as
    # often early as late, so a drift of the machine's load touches both alike.
    order=(baseline)
    while [[ ${#order[@]} -lt $((2 * BASELINE_RUNS - 1)) ]]; do
        last=${order[-1]}
        other=$([[ $last == baseline ]] && echo current || echo baseline)
        if [[ ${#order[@]} -ge 2 && ${order[-2]} == "$last" ]]; then
            order+=("$other")
        else
            order+=("$last")
        fi
    done
    declare -A run_no=([current]=1 [baseline]=0)
    for system in "${order[@]}"; do
        run_no[$system]=$((run_no[$system] + 1))
        bin=$BIN/claimdag
        [[ $system == baseline ]] && bin=$BIN/claimdag-baseline
        log "command line: $system, run ${run_no[$system]} of $BASELINE_RUNS"
        "$BIN/cli" "${quick[@]}" --work "$WORK" --ours "$bin" --v08-missing "not run" |
            awk -F'\t' -v OFS='\t' -v s="$system" -v r="${run_no[$system]}" \
                '$1 == "ours" { $1 = s; print $0, r }' >>"$CMP"
    done
fi

log "PostgreSQL: ours against a plain SKIP LOCKED queue and the embedded store"
$CARGO bench --bench postgres -- "${quick[@]}" >"$OUT/postgres.md" 2>"$OUT/postgres.log" ||
    echo "(the PostgreSQL bench failed: see $OUT/postgres.log)" >"$OUT/postgres.md"

log "PostgreSQL: the history's reads at 1M lines (200k with QUICK), their plans, retention"
$CARGO bench --bench pg_history -- "${quick[@]}" >"$OUT/pg_history.md" 2>"$OUT/pg_history.log" ||
    echo "(the PostgreSQL history bench failed: see $OUT/pg_history.log)" >"$OUT/pg_history.md"

log "waiting for work: --wait against a 10 ms polling loop, both backends"
$CARGO bench --bench wait -- "${quick[@]}" >"$OUT/wait.md" 2>"$OUT/wait.log" ||
    echo "(the waiting bench failed: see $OUT/wait.log)" >"$OUT/wait.md"

log "watch: a write to a watcher of another process, as the history grows"
watch_args=(--cli "$BIN/claimdag")
[[ -n "$BASELINE" ]] && watch_args+=(--baseline "$BIN/claimdag-baseline")
[[ ${#quick[@]} -gt 0 ]] && watch_args+=(--events 0,40000 --rounds 6) ||
    watch_args+=(--events 0,40000,400000,1000000)
python3 benches/watch.py "${watch_args[@]}" >"$OUT/watch.md" 2>"$OUT/watch.log" ||
    echo "(the watch bench failed: see $OUT/watch.log)" >"$OUT/watch.md"

log "the history at 1M events: log NODE, log --since, and history_keep over 30 days"
$CARGO bench --bench history -- --cli "$BIN/claimdag" "${quick[@]}" >"$OUT/history.md" \
    2>"$OUT/history.log" ||
    echo "(the history bench failed: see $OUT/history.log)" >"$OUT/history.md"

log "claimdag serve: a write with 8 open watch streams against one with none"
python3 benches/serve_streams.py --cli "$BIN/claimdag" "${quick[@]}" >"$OUT/streams.md" \
    2>"$OUT/streams.log" ||
    echo "(the streams bench failed: see $OUT/streams.log)" >"$OUT/streams.md"

log "talking: renewals with a checkpoint, complete_many, both backends"
$CARGO bench --bench talk -- "${quick[@]}" >"$OUT/talk.md" 2>"$OUT/talk.log" ||
    echo "(the talking bench failed: see $OUT/talk.log)" >"$OUT/talk.md"

log "resources: claim_next among 1,000 claims of 5 globs each, a pool grant"
$CARGO bench --bench resources -- "${quick[@]}" >"$OUT/resources.md" 2>"$OUT/resources.log" ||
    echo "(the resources bench failed: see $OUT/resources.log)" >"$OUT/resources.md"
log "decisions: a claim's cycle under an epic of 10,000 children, deadlines, a budget"
$CARGO bench --bench decisions -- "${quick[@]}" >"$OUT/decisions.md" 2>"$OUT/decisions.log" ||
    echo "(the decisions bench failed: see $OUT/decisions.log)" >"$OUT/decisions.md"

log "the pane: open, redraw and follow a write at 1k, 10k (and 100k) nodes"
$CARGO bench --bench pane -- "${quick[@]}" >"$OUT/pane.md" 2>"$OUT/pane.log" ||
    echo "(the pane bench failed: see $OUT/pane.log)" >"$OUT/pane.md"

log "the wheel's claimdag command against the native binary (start and an empty list)"
wheel_cmd() {
    bash scripts/wheel.sh >"$OUT/wheel.log" 2>&1 || return 1
    local whl wv=target/bench-wheel-venv
    whl="$(ls target/wheels/claimdag-*.whl | head -n 1)"
    [[ -x "$wv/bin/python" ]] || python3 -m venv "$wv" >>"$OUT/wheel.log" 2>&1 || return 1
    "$wv/bin/python" -m pip install --quiet --no-index --force-reinstall "$whl" \
        >>"$OUT/wheel.log" 2>&1 || return 1
    python3 benches/wheel_command.py "$wv/bin/claimdag" "$BIN/claimdag" --wheel "$whl" \
        "${quick_runs[@]}"
}
quick_runs=()
[[ ${#quick[@]} -gt 0 ]] && quick_runs=(--runs 40)
wheel_cmd >"$OUT/wheel.md" 2>>"$OUT/wheel.log" ||
    echo "(the wheel's command bench failed: see $OUT/wheel.log)" >"$OUT/wheel.md"

log "claimdag serve: claim_next + complete over HTTP against the module, the dashboard, memory"
serve_bench() {
    local wv=target/bench-wheel-venv
    # Graphviz draws the DAG the graph view is compared with (installed when missing).
    bash scripts/need.sh dot=graphviz >>"$OUT/serve.log" 2>&1 || true
    [[ -x "$wv/bin/python" && -x "$wv/bin/claimdag" ]] || return 1
    # The dashboard's first paint needs selenium and chromium; without them it says so.
    "$wv/bin/python" -m pip install --quiet "selenium>=4.20" >>"$OUT/serve.log" 2>&1 || true
    "$wv/bin/python" benches/serve.py --cli "$wv/bin/claimdag" "${quick[@]}"
}
serve_bench >"$OUT/serve.md" 2>>"$OUT/serve.log" ||
    echo "(the serve bench failed: see $OUT/serve.log)" >"$OUT/serve.md"

log "the dashboard of claimdag serve: 100,000 nodes, 3 pages open, writes followed"
python3 benches/dashboard.py --cli "$BIN/claimdag" "${quick[@]}" >"$OUT/dashboard.md" \
    2>"$OUT/dashboard.log" ||
    echo "(the dashboard bench failed: see $OUT/dashboard.log)" >"$OUT/dashboard.md"

echo "# load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/machine.txt"
echo "# total run time: $(($(date +%s) - started)) s" >>"$OUT/machine.txt"
python3 benches/report.py "$RESULTS" >"$OUT/table.md"
cat "$OUT/machine.txt"
echo
cat "$OUT/table.md"
echo
echo "PostgreSQL, claim + complete cycles per second (one connection a worker):"
echo
cat "$OUT/postgres.md"
echo
echo "PostgreSQL history: log NODE, --since and a follower against an empty history, plans:"
echo
cat "$OUT/pg_history.md"
echo
echo "Waiting for work (claim-next --wait against a polling loop), workers in other processes:"
echo
cat "$OUT/wait.md"
echo
echo "Talking (checkpoints on renewals, several completions in one write), one handle:"
echo
cat "$OUT/talk.md"
echo
echo "Resources (globs held by live claims, a pool slot), one handle:"
echo
cat "$OUT/resources.md"
echo
echo "Epics, deadlines and budgets (a claim's cycle under them), one handle:"
echo
cat "$OUT/decisions.md"
echo
echo "Watching: a write of another process to a claimdag watch, as the history grows:"
echo
cat "$OUT/watch.md"
echo
echo "The history at scale (log NODE, log --since, retention), the directory store:"
echo
cat "$OUT/history.md"
echo
cat "$OUT/streams.md"
echo
echo "The pane (claimdag pane), medians:"
echo
cat "$OUT/pane.md"
echo
echo "The wheel's claimdag command against the native binary, medians:"
echo
cat "$OUT/wheel.md"
echo
echo "claimdag serve (HTTP keep-alive) against the Python module in process, durable:"
echo
cat "$OUT/serve.md"
echo
echo "The dashboard of claimdag serve: memory, the first page, a write to each page:"
echo
cat "$OUT/dashboard.md"
if [[ -n "$BASELINE" ]]; then
    echo
    echo "Against the baseline $BASELINE: the command-line figures, medians of" \
        "$BASELINE_RUNS whole runs of each, alternating (every run in $CMP):"
    echo
    python3 - "$CMP" <<'PY'
import statistics, sys
sys.path.insert(0, "benches")
from report import OTHER, fmt, ratio

runs = {}
for line in open(sys.argv[1], encoding="utf-8"):
    parts = line.rstrip("\n").split("\t")
    if len(parts) < 5 or parts[2] == "NA":
        continue
    runs.setdefault((parts[0], parts[1]), []).append(float(parts[2]))
med = {k: statistics.median(v) for k, v in runs.items()}
specs = [spec for _, specs in OTHER for spec in specs]
rows = [["measurement", "current", "baseline", "baseline vs current"]]
for key, label, kind in specs:
    c, b = med.get(("current", key)), med.get(("baseline", key))
    if c is None and b is None:
        continue
    rows.append([label, fmt(c), fmt(b), ratio(c, b, kind)])
widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
for n, r in enumerate(rows):
    print("| " + " | ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i])
                            for i, c in enumerate(r)) + " |")
    if n == 0:
        print("|" + "|".join("-" * (w + 2) if i == 0 else "-" * (w + 1) + ":"
                             for i, w in enumerate(widths)) + "|")
print()
print("baseline vs current: how many times faster the current tree is (the baseline's time "
      "over the current's, or the current's rate over the baseline's); below 1 the "
      "baseline is ahead. Rows without a ratio are the machine's, not the command's.")
PY
fi
