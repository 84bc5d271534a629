"""The `claimdag` command the wheel installs against the native binary cargo builds: the
time to start and answer `--version`, and `list` on an empty store, run in turn.

    python benches/wheel_command.py WHEEL_CLAIMDAG NATIVE_CLAIMDAG [--runs 200] [--wheel W]

Prints a Markdown table of medians with the ratio (goal: at most 1.5x), and the wheel's
size when --wheel names it. Never fails on a time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from typing import Dict, List


def once(argv: List[str], env: Dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                   check=True)
    return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("wheel_cli")
    ap.add_argument("native_cli")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--wheel", default=None)
    args = ap.parse_args()
    store = tempfile.mkdtemp(prefix="claimdag-bench-")
    env = dict(os.environ, CLAIMDAG_DIR=os.path.join(store, "s"))
    print("| command | the wheel's claimdag (ms) | native (ms) | ratio | goal |")
    print("|---|---:|---:|---:|---|")
    for verb in (["--version"], ["list"]):
        times: Dict[str, List[float]] = {"wheel": [], "native": []}
        for i in range(args.runs):
            # In turn, starting with the other one every run, so drift hits both alike.
            order = ("wheel", "native") if i % 2 == 0 else ("native", "wheel")
            for who in order:
                cli = args.wheel_cli if who == "wheel" else args.native_cli
                times[who].append(once([cli, *verb], env))
        w = statistics.median(times["wheel"]) * 1000
        n = statistics.median(times["native"]) * 1000
        ratio = w / n
        met = "met" if ratio <= 1.5 else "NOT met"
        print(f"| claimdag {' '.join(verb)} | {w:.2f} | {n:.2f} | {ratio:.2f}x | "
              f"at most 1.5x: {met} |")
    if args.wheel:
        size = os.path.getsize(args.wheel)
        print(f"\nwheel {os.path.basename(args.wheel)}: {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
