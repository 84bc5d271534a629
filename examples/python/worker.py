"""A worker loop in Python, to copy into a harness.

    python examples/python/worker.py DIR NAME [SEED]

DIR is the store directory, NAME this worker's name (its actor is ``name:NAME``), and SEED,
when given, first upserts that many demo tasks. Run two at once on one DIR: every task is
finished once, by one of them.

Each node is held as a lease (``store.lease_next``): it renews itself while the work runs
and completes with the generation it was granted when the block ends; an exception inside
the block finishes the node ``failed`` (or releases it, with ``on_error="release"``). When the
store hands the claim to someone else meanwhile, ``lease.lost`` is set and the result must be
dropped; leaving the block then finishes nothing. When nothing is ready, ``work.finished``
tells a plan that is done (stop) from work others still hold (look again).
"""

from __future__ import annotations

import sys
import time

import claimdag


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print("usage: worker.py DIR NAME [SEED]", file=sys.stderr)
        return 2
    store = claimdag.Store(argv[1])
    me = claimdag.actor(argv[2])
    for i in range(int(argv[3]) if len(argv) > 3 else 0):
        store.upsert(f"demo task {i}")  # idempotent: every worker may seed the same tasks
    finished = lost = 0
    while True:
        work = store.lease_next(me, ttl=30, wait=5)  # waits up to 5 s for a ready node
        with work as lease:
            if lease is None:
                if work.finished:  # nothing ready and nothing that can become ready
                    break
                continue  # others hold what this waits on: look again
            time.sleep(0.005)  # the real work goes here
            if lease.lost:
                lost += 1  # someone else has the node now: leaving the block finishes nothing
                continue
            print(f"{lease.id[:8]}...  done  gen={lease.generation}  {lease.node.summary}")
            finished += 1
    print(f"{argv[2]}: {finished} finished, {lost} lost", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
