"""Where the time of a command-line write goes: evidence for docs/performance.md.

    python3 benches/attribute.py --ours target/release/claimdag [--v08 PATH] [--work DIR]

scripts/bench_profile.sh runs it (after installing valgrind and strace). It prints:

1. process start: wall time and CPU time (user + system) a spawn, for /bin/true, our
   `--version` and claimdag 0.8's `--version`;
2. instruction counts (valgrind --tool=callgrind) of our `--version`, `show` and `claim` at
   4,096 nodes, and of `claim-next` on a 1,000-node store half drained, with the share of
   each part of the write path (parsing the snapshot, scanning the journal, the rules,
   the append, the argument parser);
3. system calls of one claim at 4,096 nodes (strace -T): the fdatasync and the reads;
4. 4 processes draining 1,000 nodes with claim-next + complete loops under
   `strace -ff -ttt -T`: per writing process, start-up until the lock is asked for, the wait
   for the lock, the time the lock is held before the append (load + decide), the fsyncs,
   and the whole time the lock is held; for ours and for claimdag 0.8;
5. with --store-bench, the same for 4 processes draining 1,000 nodes through the library:
   per write, the wait for the lock, the time held before the append, the fdatasync and the
   whole time held.

Figures, not verdicts. Tracing slows the processes a little; compare the parts, not the
totals, with the table of `make bench`.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time


def actor(n: int) -> str:
    return f"{n:032x}"


def run(cmd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def spawn_cost(cmd: list[str], n: int = 200) -> tuple[float, float]:
    """Median wall ms and mean CPU ms (user + system) of one spawn."""
    walls = []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
        walls.append((time.perf_counter() - t) * 1e3)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) / n * 1e3
    return statistics.median(walls), cpu


def import_plan(ours: str, d: str, n: int) -> list[str]:
    shutil.rmtree(d, ignore_errors=True)
    plan = {"nodes": [{"key": f"n{i}", "summary": f"bench node {i}"} for i in range(n)]}
    out = subprocess.run([ours, "--dir", d, "import", "-"], input=json.dumps(plan),
                         check=True, capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines()]


PARTS = [
    ("snapshot::read", "parse snapshot.json"),
    ("journal::scan", "scan + parse journal records"),
    ("rules::apply", "the rules (incl. picking for claim-next)"),
    ("Embedded::append", "append + fdatasync call"),
    ("journal::encode", "encode the record"),
    ("Parser::try_parse_from", "argument parser (clap)"),
]


def callgrind(cmd: list[str], work: str, tag: str) -> None:
    out = os.path.join(work, f"callgrind.{tag}")
    res = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + cmd,
                         capture_output=True, text=True)
    total = re.search(r"Collected : (\d+)", res.stderr)
    if not total:
        print(f"  {tag}: callgrind failed: {res.stderr.strip()[-200:]}")
        return
    total_ir = int(total.group(1))
    ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", out],
                         capture_output=True, text=True).stdout
    print(f"  {tag}: {total_ir:,} instructions")
    funcs: dict[str, int] = {}
    for line in ann.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+[^:\s]*:(\S+)", line)
        if m and "=>" not in line:
            ir = int(m.group(1).replace(",", ""))
            funcs[m.group(2)] = max(funcs.get(m.group(2), 0), ir)
    for fn, what in PARTS:
        best = max((ir for name, ir in funcs.items() if name.endswith(fn)), default=0)
        if best:
            print(f"    {what:44} {best:>12,}  {100 * best / total_ir:5.1f}%")


def strace_claim(ours: str, d: str, node: str) -> None:
    res = subprocess.run(["strace", "-T", "-e", "trace=openat,read,pwrite64,fdatasync,flock",
                          ours, "--dir", d, "claim", node, "--assignee", actor(77)],
                         capture_output=True, text=True)
    files: dict[str, str] = {}
    for line in res.stderr.splitlines():
        m = re.match(r'(\w+)\((\w+)?,? ?"?([^",]*)"?.*= (-?\d+).*<([\d.]+)>', line)
        if not m:
            continue
        call, fd, arg, rc, dur = m.groups()
        if call == "openat" and arg.startswith(d):
            files[rc] = os.path.basename(arg)
            continue
        if call in ("read", "pwrite64", "fdatasync", "flock") and (fd in files or call == "flock"):
            print(f"    {call:10} {files.get(fd, 'lock'):14} {rc:>8} B  {float(dur) * 1e3:7.3f} ms")


DRAIN = r"""
B=$1; D=$2; P=$3; K=$4
w() {
  A=$(printf '%032x' $1)
  while out=$($B --dir $D claim-next --assignee $A); do
    set -- $out
    if [ "$K" = ours ]; then $B --dir $D complete $1 --status done --gen ${2#gen=} --actor $A
    else $B --dir $D complete $1 --gen ${2#gen=} --actor $A; fi >/dev/null
  done
}
for k in $(seq 1 $P); do w $((100 + k)) & done; wait
"""


def drain_trace(bin_: str, d: str, kind: str, work: str) -> None:
    prefix = os.path.join(work, f"trace-{kind}")
    for f in glob.glob(prefix + ".*"):
        os.remove(f)
    script = os.path.join(work, "drain.sh")
    with open(script, "w") as f:
        f.write(DRAIN)
    t = time.perf_counter()
    subprocess.run(["strace", "-ff", "--seccomp-bpf", "-ttt", "-T", "-e",
                    "trace=execve,flock,write,pwrite64,fsync,fdatasync", "-o", prefix,
                    "bash", script, bin_, d, "4", kind], check=True, capture_output=True)
    wall = time.perf_counter() - t
    start, wait, load, sync, held = [], [], [], [], []
    for path in glob.glob(prefix + ".*"):
        es = []
        for line in open(path):
            m = re.match(r"([\d.]+)\s+(\w+)\((.*)\)\s+=\s+(-?\d+).*<([\d.]+)>", line)
            if m:
                ts, name, args, _, dur = m.groups()
                es.append((float(ts), name, args, float(dur)))
        ex = [e for e in es if e[1] == "execve" and bin_ in e[2]]
        lk = [e for e in es if e[1] == "flock" and "LOCK_EX" in e[2]]
        fs = [e for e in es if e[1] in ("fsync", "fdatasync")]
        if not (ex and lk and fs):
            continue
        locked = lk[0][0] + lk[0][3]
        writes = [e for e in es if e[1] in ("write", "pwrite64") and e[0] > locked
                  and not e[2].startswith(("1,", "2,"))]
        if not writes:
            continue
        start.append((lk[0][0] - (ex[0][0] + ex[0][3])) * 1e3)
        wait.append(lk[0][3] * 1e3)
        load.append((writes[0][0] - locked) * 1e3)
        sync.append(sum(f[3] for f in fs) * 1e3)
        last = max(e[0] + e[3] for e in es)
        unlock = [e for e in es if e[1] == "flock" and "LOCK_UN" in e[2]]
        held.append(((unlock[-1][0] if unlock else last) - locked) * 1e3)
    if not start:
        print(f"  {kind}: no writing process traced")
        return
    print(f"  {kind}: {len(start)} writing processes, {wall:.1f} s under strace "
          f"(medians, mean in brackets, ms)")
    for what, v in (("start-up until the lock is asked for", start), ("waiting for the lock", wait),
                    ("lock held before the append: load + decide", load),
                    ("fsync / fdatasync", sync), ("lock held in total", held)):
        print(f"    {what:44} {statistics.median(v):7.3f}  ({statistics.mean(v):.3f})")


def library_drain_trace(store_bench: str, ours: str, work: str) -> None:
    """4 processes drain 1,000 nodes through the library: the lock, section by section."""
    d = os.path.join(work, "lib")
    import_plan(ours, d, 1000)
    prefix = os.path.join(work, "trace-lib")
    script = os.path.join(work, "lib-drain.sh")
    with open(script, "w") as f:
        f.write(f'for k in 1 2 3 4; do "{store_bench}" --child-drain "{d}" $((100 + k)) '
                ">/dev/null & done; wait\n")
    subprocess.run(["strace", "-ff", "--seccomp-bpf", "-ttt", "-T", "-e",
                    "trace=flock,pwrite64,fdatasync", "-o", prefix, "bash", script],
                   check=True, capture_output=True)
    wait, before, sync, held = [], [], [], []
    for path in glob.glob(prefix + ".*"):
        locked = first = None
        for line in open(path):
            m = re.match(r"([\d.]+)\s+(\w+)\((.*)\)\s+=\s+(-?\d+).*<([\d.]+)>", line)
            if not m:
                continue
            ts, name, args, _, dur = float(m.group(1)), m.group(2), m.group(3), 0, float(m.group(5))
            if name == "flock" and "LOCK_EX" in args:
                locked, first = ts + dur, None
                wait.append(dur * 1e3)
            elif name == "pwrite64" and locked and first is None:
                first = ts
                before.append((ts - locked) * 1e3)
            elif name == "fdatasync" and locked:
                sync.append(dur * 1e3)
            elif name == "flock" and "LOCK_UN" in args and locked:
                held.append((ts - locked) * 1e3)
                locked = None
    print(f"  {len(held)} locked sections (medians, mean in brackets, ms)")
    for what, v in (("waiting for the lock", wait), ("lock held before the append", before),
                    ("fdatasync", sync), ("lock held in total", held)):
        if v:
            print(f"    {what:44} {statistics.median(v):7.3f}  ({statistics.mean(v):.3f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ours", default="target/release/claimdag")
    ap.add_argument("--v08")
    ap.add_argument("--work", default="target/bench-work/profile")
    ap.add_argument("--store-bench", help="the benches/store.rs program (for section 5)")
    args = ap.parse_args()
    ours = os.path.abspath(args.ours)
    v08 = os.path.abspath(args.v08) if args.v08 and os.path.exists(args.v08) else None
    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    print("1. process start (200 spawns): median wall ms, CPU ms (user + system) a spawn")
    for name, cmd in (("/bin/true", ["/bin/true"]), ("ours --version", [ours, "--version"]),
                      ("claimdag 0.8 --version", [v08, "--version"] if v08 else None)):
        if cmd:
            wall, cpu = spawn_cost(cmd)
            print(f"  {name:24} wall {wall:6.3f}   cpu {cpu:6.3f}")

    print("\n2. instructions (callgrind), inclusive, with the share of the whole process")
    d4 = os.path.join(work, "s4096")
    ids = import_plan(ours, d4, 4096)
    callgrind([ours, "--version"], work, "ours --version")
    callgrind([ours, "--dir", d4, "show", ids[-1]], work, "ours show at 4,096 nodes")
    callgrind([ours, "--dir", d4, "claim", ids[0], "--assignee", actor(1)], work,
              "ours claim at 4,096 nodes")
    d1 = os.path.join(work, "s1000")
    import_plan(ours, d1, 1000)
    who = actor(5)
    for _ in range(500):
        out = run([ours, "--dir", d1, "claim-next", "--assignee", who]).stdout.split()
        run([ours, "--dir", d1, "complete", out[0], "--status", "done", "--gen",
             out[1].removeprefix("gen="), "--actor", who])
    sizes = {f: os.path.getsize(os.path.join(d1, f)) for f in sorted(os.listdir(d1))}
    callgrind([ours, "--dir", d1, "claim-next", "--assignee", who], work,
              f"ours claim-next at 1,000 nodes, 500 done (bytes on disk: {sizes})")

    print("\n3. system calls of one claim at 4,096 nodes (strace -T)")
    strace_claim(ours, d4, ids[1])

    print("\n4. 4 processes draining 1,000 nodes, each step a process (strace -ff -ttt -T)")
    import_plan(ours, d1, 1000)
    drain_trace(ours, d1, "ours", work)
    if v08:
        d8 = os.path.join(work, "v08")
        for i in range(1000):
            run([v08, "--dir", d8, "upsert", "--summary", f"bench node {i}"])
        drain_trace(v08, d8, "v08", work)
    if args.store_bench and os.path.exists(args.store_bench):
        print("\n5. 4 processes draining 1,000 nodes through the library (strace -ff -ttt -T)")
        library_drain_trace(os.path.abspath(args.store_bench), ours, work)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
