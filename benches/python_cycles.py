"""How long 1,000 claim+complete cycles take from Python on a 10,000-node store.

    python benches/python_cycles.py [--nodes 10000] [--cycles 1000] [--cli-cycles 50]

Needs the package installed (`pip install .`, or `bash tests/python/run.sh` once and then
`.venv/bin/python benches/python_cycles.py`). Each write is committed (appended and
fdatasync'ed) before the call returns, so the figures depend on the disk. Prints figures;
never fails on a time.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import claimdag


def actor(n: int) -> str:
    return f"{n:032x}"


def per_cycle(label: str, seconds: float, cycles: int) -> float:
    each = seconds / cycles
    print(f"{label:<44} {cycles:>6} cycles  {seconds:8.3f} s  {each * 1e3:8.3f} ms/cycle")
    return each


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--cycles", type=int, default=1_000)
    ap.add_argument("--cli-cycles", type=int, default=50, help="0 skips the CLI comparison")
    ap.add_argument("--dir", help="store directory's parent (default: a temporary one)")
    args = ap.parse_args()
    assert args.cycles * 2 <= args.nodes, "each pass needs fresh ready nodes"

    root = pathlib.Path(tempfile.mkdtemp(prefix="claimdag-bench-", dir=args.dir))
    try:
        store = claimdag.Store(root / "claims")
        me = actor(7)
        print(f"claimdag {claimdag.__version__}, Python {sys.version.split()[0]}, store in {root}")

        t = time.perf_counter()
        ids = [store.upsert(f"node {i}", priority=i % 7) for i in range(args.nodes)]
        setup = time.perf_counter() - t
        print(f"{'setup: upsert':<44} {args.nodes:>6} nodes   {setup:8.3f} s  "
              f"{setup / args.nodes * 1e3:8.3f} ms/node")

        # claim(id) + complete(gen): the caller chose the node.
        t = time.perf_counter()
        for nid in ids[: args.cycles]:
            gen = store.claim(nid, me)
            store.complete(nid, gen=gen, actor=me)
        direct = per_cycle("claim(id) + complete", time.perf_counter() - t, args.cycles)

        # claim_next + complete: the store picks by critical path, over every ready node.
        t = time.perf_counter()
        for _ in range(args.cycles):
            picked = store.claim_next(me)
            assert picked is not None
            store.complete(picked[0], gen=picked[1], actor=me)
        picked_each = per_cycle("claim_next + complete", time.perf_counter() - t, args.cycles)

        # Where claim_next's time goes: ranking every ready node by critical path.
        reps = max(1, args.cycles // 10)
        t = time.perf_counter()
        for _ in range(reps):
            store.next()
        ranked = time.perf_counter() - t
        print(f"{'next() alone (ranking, no write)':<44} {reps:>6} calls   {ranked:8.3f} s  "
              f"{ranked / reps * 1e3:8.3f} ms/call")

        assert store.check().ok
        done = sum(1 for n in store.list(status="done"))
        assert done == 2 * args.cycles, done
        print(f"{'(store after: nodes, done)':<44} {args.nodes:>6}, {done}")

        if args.cli_cycles:
            exe = shutil.which("claimdag") or str(pathlib.Path(sys.executable).parent / "claimdag")
            env = dict(os.environ, CLAIMDAG_DIR=str(root / "claims"))
            todo = [n.id for n in store.list(status="ready")][: args.cli_cycles]
            t = time.perf_counter()
            for nid in todo:
                out = subprocess.run([exe, "claim", nid, "--assignee", me], env=env,
                                     capture_output=True, text=True, check=True).stdout
                gen = out.strip().removeprefix("gen=")
                subprocess.run([exe, "complete", nid, "--status", "done", "--gen", gen],
                               env=env, capture_output=True, check=True)
            cli = per_cycle("claimdag command (2 processes a cycle)", time.perf_counter() - t,
                            len(todo))
            print(f"the module is {cli / direct:.0f}x faster than the command per claim(id) "
                  f"cycle, {cli / picked_each:.0f}x per claim_next cycle")

        print(f"\n{args.cycles} claim+complete cycles on a {args.nodes}-node store: "
              f"{direct * args.cycles:.2f} s with claim(id), "
              f"{picked_each * args.cycles:.2f} s with claim_next")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
