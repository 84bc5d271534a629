"""`make bench`: how long a write takes to reach a `claimdag watch --json` of another
process, and how that grows with the history.

    python3 benches/watch.py --cli PATH/claimdag [--baseline PATH/claimdag] [--events N,...]

For each history size (events written before, by imports of a plan in another workspace),
one node is claimed and released by separate `claimdag` processes, again and again; a
watcher started before prints each event. The figure is the time from the start of the
writing process (the same binary in every row: its own start-up and write are in the figure)
to the watcher's line, median over the rounds, beside the writing process's own time (what
the watcher adds is the difference). With --baseline, the same store is watched by the other binary too, in turn,
and the ratio is printed. It never fails on a time."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def grow(cli: str, store: Path, events: int) -> None:
    """Writes about `events` history events, a plan of at most 50,000 nodes at a time."""
    done, part = 0, 0
    while done < events:
        n = min(50_000, events - done)
        plan = store.parent / f"plan-{part}.json"
        plan.write_text(json.dumps({"nodes": [
            {"key": f"k{k}", "summary": f"filler {part}-{k}"} for k in range(n)]}))
        subprocess.run([cli, "--dir", str(store), "--workspace", "filler", "import", str(plan)],
                       stdout=subprocess.DEVNULL, check=True)
        plan.unlink()
        done, part = done + n, part + 1


def rounds(cli: str, watcher: str, store: Path, node: str, n: int
           ) -> tuple[list[float], list[float]]:
    """Milliseconds from the start of each writing process to the watcher's line for it, and
    the writing processes' own times."""
    proc = subprocess.Popen([watcher, "--dir", str(store), "--json", "watch"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    seen: list[float] = []
    lock = threading.Condition()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if '"verb":"claim"' in line or '"verb":"release"' in line:
                with lock:
                    seen.append(time.perf_counter())
                    lock.notify_all()

    threading.Thread(target=read, daemon=True).start()
    time.sleep(1.0)  # the watcher reads the history's end before the first write
    me = "name:watch-bench"
    out: list[float] = []
    writes: list[float] = []
    try:
        for _ in range(n):
            with lock:
                before = len(seen)
            shown = json.loads(subprocess.run(
                [cli, "--dir", str(store), "--json", "show", node],
                capture_output=True, text=True, check=True).stdout)
            argv = ([cli, "--dir", str(store), "claim", node, "--assignee", me]
                    if shown["holder"] is None
                    else [cli, "--dir", str(store), "release", node, "--actor", me,
                          "--gen", str(shown["generation"])])
            started = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
            writes.append((time.perf_counter() - started) * 1000)
            with lock:
                lock.wait_for(lambda: len(seen) > before, timeout=30)
                if len(seen) == before:
                    raise RuntimeError("the watcher printed nothing in 30 s")
                out.append((seen[before] - started) * 1000)
    finally:
        proc.terminate()
        proc.wait()
    return out, writes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--baseline")
    ap.add_argument("--events", default="0,40000,400000")
    ap.add_argument("--rounds", type=int, default=20)
    a = ap.parse_args()
    sizes = [int(s) for s in a.events.split(",")]
    print("| history events | the writing process (ms) | watch: write started -> event "
          "printed (ms) |" + (" baseline (ms) | baseline / this |" if a.baseline else ""))
    print("| --- | --- | --- |" + (" --- | --- |" if a.baseline else ""))
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "claims"
        node = subprocess.run([a.cli, "--dir", str(store), "upsert", "--summary", "watched"],
                              capture_output=True, text=True, check=True).stdout.strip()
        grown = 0
        for size in sizes:
            grow(a.cli, store, size - grown)
            grown = max(grown, size)
            got, writes = rounds(a.cli, a.cli, store, node, a.rounds)
            mine = statistics.median(got)
            row = f"| {size:,} | {statistics.median(writes):.2f} | {mine:.2f} |"
            if a.baseline:
                theirs = statistics.median(rounds(a.cli, a.baseline, store, node, a.rounds)[0])
                ratio = theirs / mine if mine > 0 else float("inf")
                row += f" {theirs:.2f} | {ratio:.1f}x |"
            print(row, flush=True)


if __name__ == "__main__":
    sys.exit(main())
