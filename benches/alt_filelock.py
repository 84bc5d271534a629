"""The file-lock alternative: the design of file-based claim stores.

The whole state is one JSON file. Every write takes a `filelock.FileLock` on a lock file
beside it, reads and parses the file, hands back expired claims and counts the actor's live
claims (a scan of the nodes), changes the node, writes the whole state to a temporary file,
fsyncs it and renames it over the old one (the directory is not fsynced, and no history is
kept: both favour this design). The comparison without fsync skips the fsync.

    python benches/alt_filelock.py [--quick] [--work DIR] [--sizes 1000,10000]

Needs `filelock` (scripts/bench.sh makes a venv with it). Prints
`filelock<TAB>key<TAB>value<TAB>note` lines with the keys of benches/store.rs; progress on
stderr. Never fails on a time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

from filelock import FileLock

SYSTEM = "filelock"
TTL_MS = 900_000


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def node_id(i: int) -> str:
    return f"{(i * 0x9E3779B97F4A7C15) % (1 << 128):032x}"


def actor(n: int) -> str:
    return f"{n:032x}"


def emit(key: str, value: float, note: str = "") -> None:
    print(f"{SYSTEM}\t{key}\t{value:.3f}\t{note}", flush=True)


def progress(what: str) -> None:
    print(f"bench: {what}", file=sys.stderr, flush=True)


def label(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1_000 and n % 1_000 == 0:
        return f"{n // 1_000}k"
    return str(n)


def vm_kib(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return float(line.split()[1])
    return 0.0


class Refused(Exception):
    pass


class JsonStore:
    def __init__(self, directory: str, sync: bool = True) -> None:
        self.path = os.path.join(directory, "claims.json")
        self.lock = FileLock(self.path + ".lock")
        self.sync = sync

    def load(self) -> dict:
        with open(self.path, "rb") as f:
            return json.load(f)

    def save(self, state: dict) -> None:
        tmp = self.path + ".tmp"
        data = json.dumps(state, separators=(",", ":")).encode()
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            if self.sync:
                os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def write(self, change):
        with self.lock:
            state = self.load()
            now = now_ms()
            held = self._expire(state, now)
            out = change(state, now, held)
            self.save(state)
            return out

    @staticmethod
    def _expire(state: dict, now: int) -> dict:
        """Hands back expired claims; returns the live claims per actor."""
        held: dict = {}
        for n in state["nodes"].values():
            if n["status"] == "claimed":
                if n["renewed_at"] + n["ttl_ms"] <= now:
                    n.update(status="todo", holder=None, generation=n["generation"] + 1)
                else:
                    held[n["holder"]] = held.get(n["holder"], 0) + 1
        return held

    def create(self, n: int) -> None:
        now = now_ms()
        nodes = {}
        for i in range(n):
            nid = node_id(i)
            nodes[nid] = {
                "id": nid, "kind": "task", "summary": f"bench node {i}", "status": "todo",
                "generation": 1, "holder": None, "attempts": 0, "claimed_at": None,
                "renewed_at": None, "ttl_ms": None, "priority": 0, "deps": [],
                "created_at": now, "updated_at": now,
            }
        with self.lock:
            self.save({"settings": {"max_held": 1}, "nodes": nodes})

    @staticmethod
    def _grant(state: dict, node: dict, who: str, now: int, held: dict) -> int:
        if held.get(who, 0) >= state["settings"]["max_held"]:
            raise Refused("assignee busy")
        if any(state["nodes"][d]["status"] != "done" for d in node["deps"]):
            raise Refused("not ready")
        node.update(status="claimed", holder=who, generation=node["generation"] + 1,
                    attempts=node["attempts"] + 1, claimed_at=now, renewed_at=now,
                    ttl_ms=TTL_MS, updated_at=now)
        return node["generation"]

    def claim(self, nid: str, who: str) -> int:
        def change(state, now, held):
            node = state["nodes"][nid]
            if node["status"] != "todo":
                raise Refused("already claimed")
            return self._grant(state, node, who, now, held)
        return self.write(change)

    def claim_next(self, who: str):
        def change(state, now, held):
            done = {k for k, n in state["nodes"].items() if n["status"] == "done"}
            for node in state["nodes"].values():
                if node["status"] == "todo" and all(d in done for d in node["deps"]):
                    return node["id"], self._grant(state, node, who, now, held)
            return None
        return self.write(change)

    def complete(self, nid: str, gen: int, who: str) -> None:
        def change(state, now, held):
            node = state["nodes"][nid]
            if node["status"] != "claimed" or node["generation"] != gen or node["holder"] != who:
                raise Refused("stale generation")
            node.update(status="done", completed_by=who, holder=None, updated_at=now)
        self.write(change)


class Series:
    def __init__(self, most: int, budget_s: float) -> None:
        self.most = most
        self.budget = budget_s

    def run(self, f) -> list[float]:
        start = time.perf_counter()
        out = []
        for i in range(self.most):
            t = time.perf_counter()
            f(i)
            out.append((time.perf_counter() - t) * 1e6)
            if i + 1 >= 10 and time.perf_counter() - start > self.budget:
                break
        return out


def fresh(path: str) -> str:
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def claims(store: JsonStore, start: int, s: Series) -> float:
    return statistics.median(
        s.run(lambda i: store.claim(node_id(start + i), actor(1000 + start + i))))


def cycles(store: JsonStore, start: int, s: Series) -> tuple[float, float]:
    who = actor(1)

    def one(i: int) -> None:
        nid = node_id(start + i)
        store.complete(nid, store.claim(nid, who), who)

    t = time.perf_counter()
    us = s.run(one)
    return statistics.median(us), len(us) / (time.perf_counter() - t)


def child_load(directory: str) -> None:
    before = vm_kib("VmRSS")
    t = time.perf_counter()
    state = JsonStore(directory).load()
    ms = (time.perf_counter() - t) * 1e3
    assert state["nodes"]
    print(ms, before, vm_kib("VmRSS"), vm_kib("VmHWM"))


def child_drain(directory: str, who: int) -> None:
    store = JsonStore(directory)
    me = actor(who)
    done = 0
    while (picked := store.claim_next(me)) is not None:
        store.complete(picked[0], picked[1], me)
        done += 1
    print(done)


def size(work: str, n: int, quick: bool) -> None:
    tag = label(n)
    d = fresh(os.path.join(work, f"filelock-{tag}"))
    store = JsonStore(d)
    progress(f"filelock: writing {n} nodes")
    t = time.perf_counter()
    store.create(n)
    emit(f"import_s@{tag}", time.perf_counter() - t)
    most = min(50 if quick else 200, n // 4)
    s = Series(most, 2.0 if quick else 5.0)
    progress(f"filelock: durable writes at {n} nodes")
    emit(f"claim_us@{tag}", claims(store, 0, s), "median")
    med, per_s = cycles(store, most, s)
    emit(f"cycle_us@{tag}", med, "median")
    emit(f"cycles_per_s@{tag}", per_s)
    store = JsonStore(d, sync=False)
    progress(f"filelock: writes without fsync at {n} nodes")
    emit(f"claim_nosync_us@{tag}", claims(store, 2 * most, s), "median")
    emit(f"cycle_nosync_us@{tag}", cycles(store, 3 * most, s)[0], "median")
    loads, rss, hwm = [], [], []
    for _ in range(1 if quick else 3):
        out = subprocess.run([sys.executable, __file__, "--child-load", d],
                             check=True, capture_output=True, text=True).stdout.split()
        ms, before, after, peak = map(float, out)
        loads.append(ms)
        rss.append((after - before) * 1024 / n)
        hwm.append((peak - before) * 1024 / n)
    emit(f"load_ms@{tag}", statistics.median(loads), "json.load")
    emit(f"rss_b_per_node@{tag}", statistics.median(rss))
    emit(f"hwm_b_per_node@{tag}", statistics.median(hwm))
    disk = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
    emit(f"disk_b_per_node@{tag}", disk / n)
    shutil.rmtree(d, ignore_errors=True)


def drain(work: str, procs: int, n: int) -> float:
    d = fresh(os.path.join(work, f"filelock-drain{procs}"))
    JsonStore(d).create(n)
    t = time.perf_counter()
    kids = [subprocess.Popen([sys.executable, __file__, "--child-drain", d, str(100 + k)],
                             stdout=subprocess.PIPE, text=True) for k in range(procs)]
    total = sum(int(k.communicate()[0]) for k in kids)
    secs = time.perf_counter() - t
    assert total == n, f"drained {total} of {n}"
    shutil.rmtree(d, ignore_errors=True)
    return 2 * n / secs


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child-load":
        return child_load(sys.argv[2])
    if len(sys.argv) > 3 and sys.argv[1] == "--child-drain":
        return child_drain(sys.argv[2], int(sys.argv[3]))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--work", default="target/bench-work")
    ap.add_argument("--sizes", default="1000,10000")
    args = ap.parse_args()
    quick = args.quick or os.environ.get("QUICK", "") not in ("", "0")
    os.makedirs(args.work, exist_ok=True)
    for n in map(int, args.sizes.split(",")):
        size(args.work, n, quick)
    progress("filelock: 4 processes draining 1,000 nodes")
    emit("lib_drain4_wps", drain(args.work, 4, 1_000), "one run")


if __name__ == "__main__":
    main()
