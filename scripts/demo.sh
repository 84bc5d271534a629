#!/usr/bin/env bash
# The README walkthrough, on a fresh embedded store. Each command is echoed before it runs.
set -euo pipefail
export CLAIMDAG_DIR="${CLAIMDAG_DIR:-$(mktemp -d)/demo-claims}"
run() { printf '$ %s\n' "$*"; "$@"; }
printf '$ export CLAIMDAG_DIR=%s\n' "$CLAIMDAG_DIR"
a=$(claimdag upsert --summary "parse the manifest header")
printf '$ a=$(claimdag upsert --summary "parse the manifest header")\n'
b=$(claimdag upsert --summary "reject a manifest with no header" --parent "$a")
printf '$ b=$(claimdag upsert --summary "reject a manifest with no header" --parent $a)\n'
run claimdag link "$a" "$b"
run claimdag list
me=$(printf '%032x' 7); you=$(printf '%032x' 8)
printf "\$ me=\$(printf '%%032x' 7); you=\$(printf '%%032x' 8)\n"
run claimdag claim "$a" --assignee "$me"
printf '$ claimdag claim %s --assignee %s\n' "$a" "$you"
if claimdag claim "$a" --assignee "$you"; then echo "unexpected: a second claim was granted" >&2; exit 1; fi
run claimdag renew "$a" --actor "$me"
run claimdag reclaim --lease 60
run claimdag complete "$a" --status done --gen 2
run claimdag list
echo
echo "# a worker that stalled past its lease and wakes up late is fenced off:"
run claimdag claim "$b" --assignee "$you" --ttl 1s
sleep 1.1
run claimdag reclaim
printf '$ claimdag complete %s --status done --gen 2\n' "$b"
set +e
claimdag complete "$b" --status done --gen 2
code=$?
set -e
echo "(exit $code: stale generation, the node is untouched)"
[ "$code" -eq 5 ] || { echo "expected exit 5" >&2; exit 1; }
run claimdag list
run claimdag check
