#!/usr/bin/env bash
# A fixed transcript of the command line, to compare two builds byte for byte:
#
#   bash scripts/cli-transcript.sh BIN OUT_DIR
#   diff -r OLD_OUT_DIR OUT_DIR          # empty when the two builds answer alike
#
# Runs about 80 claimdag commands with the binary BIN against a fresh embedded store in a
# temporary directory: text and --json, reads (list, show, ready, next, graph, log, config,
# check), writes (upsert, link, claim, claim-next, renew, release, complete, reopen,
# reclaim, import, archive, unarchive, config, copy, work), the MCP door, and refusals (bad
# and ambiguous ids, a stale generation, a busy assignee, a cycle, a bad plan, an unknown
# flag). Each command's line, stdout, stderr and exit code go to OUT_DIR/NN.txt.
#
# The command has no fake clock, so times are masked: ISO times as <TIME>, epoch
# milliseconds as <MS>, and the temporary directory as <TMP>. Node and actor ids are
# derived from their fields (docs/reference.md, "The id recipe"), so they are the same on
# every run.
set -uo pipefail

if [[ $# -ne 2 ]]; then
    echo "usage: $0 BIN OUT_DIR" >&2
    exit 2
fi
BIN=$(realpath "$1")
OUT=$2
if [[ ! -x "$BIN" ]]; then
    echo "$0: $BIN is not an executable" >&2
    exit 2
fi
mkdir -p "$OUT"
rm -f "$OUT"/[0-9][0-9].txt

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
unset CLAIMDAG_ACTOR CLAIMDAG_WORKSPACE
export CLAIMDAG_DIR=$TMP/store HOME=$TMP XDG_STATE_HOME=$TMP/state LC_ALL=C TZ=UTC

mask() {
    sed -E \
        -e "s#$TMP#<TMP>#g" \
        -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z/<TIME>/g' \
        -e 's/(^|[^0-9a-f])1[0-9]{12}([^0-9a-f]|$)/\1<MS>\2/g' \
        -e 's/(^|[^0-9a-f])1[0-9]{12}([^0-9a-f]|$)/\1<MS>\2/g' \
        -e 's/(^|[ (])[0-9]+\.[0-9]s([ ):,]|$)/\1<SECS>\2/g'
}

n=0
# t [ARGS...]: runs `claimdag ARGS...` with stdin from $STDIN (default: none) and records it
# (with its stdout's lines sorted when $SORTED is set).
# Its stdout is left in $TMP/stdout for the script to read ids from.
t() {
    n=$((n + 1))
    local f
    f=$(printf '%s/%02d.txt' "$OUT" "$n")
    "$BIN" "$@" <"${STDIN:-/dev/null}" >"$TMP/stdout" 2>"$TMP/stderr"
    local rc=$?
    {
        {
            printf '$ claimdag'
            printf ' %q' "$@"
            printf '\n'
        } | mask
        if [[ -n "${STDIN:-}" ]]; then
            echo '--- stdin'
            mask <"$STDIN"
        fi
        if [[ -n "${SORTED:-}" ]]; then
            echo '--- stdout (lines sorted: the answers may come in any order)'
            mask <"$TMP/stdout" | sort
        else
            echo '--- stdout'
            mask <"$TMP/stdout"
        fi
        echo '--- stderr'
        mask <"$TMP/stderr"
        echo "--- exit $rc"
    } >"$f"
}
out() { cat "$TMP/stdout"; }
# gen ID: the node's generation, read without recording a command.
gen() { "$BIN" --json show "$1" | sed -E 's/.*"generation":([0-9]+).*/\1/'; }

W1=$(printf '%032x' 1)
W2=$(printf '%032x' 2)

# Reads of a store that does not exist yet.
t list
t --json ready
t next

# Nodes, links and settings.
t upsert --summary "parse the manifest header" --priority 2 --estimate 3 --label parser \
    --resource src/parse/
a=$(out)
t upsert --summary "reject a manifest with no header" --parent "$a" --role tester
b=$(out)
t --json upsert --summary "document the header" --kind doc --ref DOC-1
c=$(out | sed -E 's/.*"id":"([0-9a-f]+)".*/\1/')
t link "$a" "$b"
t link --soft "$a" "$c"
t --json link "$b" "$a"
t upsert --summary "parse the manifest header" --priority 5
t config
t config max_held 2
t --json config default_ttl 10m
t config max_attempts bogus

# Reads.
t list
t --json list --all
t show "$a"
t --json show "${b:0:8}"
t show "${a:0:8}..."
t ready
t --json ready --role tester
t next
t graph
t graph --format mermaid --all

# Claims and their generations.
t claim "$a" --assignee "$W1" --ttl 5m
t --json claim "$a" --assignee "$W2"
t renew "$a" --actor "$W1" --gen 2 --ttl 20m
t renew "$a" --actor "$W2" --gen 2
t complete "$a" --status done --gen 1 --actor "$W1"
t --json complete "$a" --status done --gen 1
t list --status claimed
t --json show "$a"
t complete "$a" --status done --gen 2 --actor "$W1" --note "header parsed"
t ready
t claim-next --assignee "$W2" --role tester
t --json claim-next --assignee "$W2" --resume --role tester
t release "$b" --actor "$W2" --gen 2
t --json claim-next --assignee name:worker-1 --role tester
t claim-next --assignee name:worker-1
t reclaim --lease 0
t claim "$c" --assignee "$W1" --ttl 1ms
sleep 0.2
t list --status expired
t --json reclaim
t --json complete "$b" --status cancelled --gen 4
t reopen "$a" --gen 2
t reopen "$a" --gen 3

# A plan.
cat >"$TMP/plan.json" <<'EOF'
{"nodes": [
  {"key": "design", "summary": "design the parser", "estimate": 3},
  {"key": "lex", "summary": "write the lexer", "deps": ["design"], "resources": ["src/lex/"]},
  {"key": "docs", "summary": "document the grammar", "soft_deps": ["design"], "role": "writer"}
]}
EOF
STDIN=$TMP/plan.json t import -
STDIN=$TMP/plan.json t --json import -
cat >"$TMP/cycle.json" <<'EOF'
{"nodes": [
  {"key": "x", "summary": "x", "deps": ["y"]},
  {"key": "y", "summary": "y", "deps": ["x"]}
]}
EOF
STDIN=$TMP/cycle.json t import -
echo '{"nodes": [{"key": "z", "summary": "z", "colour": "red"}]}' >"$TMP/unknown.json"
STDIN=$TMP/unknown.json t --json import -
t ready
t --json next

# Archive, history, workspaces.
t complete "$c" --status cancelled --gen "$(gen "$c")"
t archive "$c"
t --json list --archived
t unarchive "${c:0:8}"
t --json archive --older-than 1d
t log "$a"
t --json log --since 20
t --workspace other upsert --summary "parse the manifest header"
t --workspace other list
t --workspace "bad space" list

# Other verbs.
t actor worker-1
t --json actor worker-1
t actor name:nested
t work --actor name:worker-2 --max 1 -- true
t copy --from "$TMP/store" --to "$TMP/copy"
t --dir "$TMP/copy" --json list --all
t check
t --json check
cat >"$TMP/mcp.in" <<'EOF'
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"transcript","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ready","arguments":{}}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"show","arguments":{"id":"00000000"}}}
{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"show","arguments":{"node":"00000000"}}}
EOF
SORTED=1 STDIN=$TMP/mcp.in t mcp --actor name:agent-1 --tools worker
echo 'not json' >"$TMP/mcp-bad.in"
STDIN=$TMP/mcp-bad.in t mcp --actor name:agent-1

# Refusals.
t show zzzz
t show 00000000
t --json show 00000000000000000000000000000000
t claim "$b" --assignee not-an-actor
t claim "$b" --assignee "$W1" --ttl 0
t list --bogus
t --json list --bogus
t frobnicate
t complete "$b" --status finished --gen 1
t upsert
t --version
t claim-next --help

exit 0
