"""`make bench`: what open watch streams cost the writes of `claimdag serve`.

    python3 benches/serve_streams.py --cli PATH/claimdag [--quick]

A store of 20,000 nodes whose history holds 100,000 events (1M without --quick), served by
`claimdag serve`; one client upserts one node again and again over HTTP (keep-alive), in
rounds that alternate between no watch stream open and 8 open `/v1/watch` streams that
read every event. Prints the median write with and without the streams and their ratio,
beside the goal (at most 1.2x). It never fails on a time."""

from __future__ import annotations

import argparse
import http.client
import json
import pathlib
import shutil
import socket
import statistics
import subprocess
import threading
import time

from served import serve, stop




def grow(cli: str, store: pathlib.Path, nodes: int, events: int) -> None:
    """`nodes` nodes, then imports in another workspace until the history holds `events`."""
    done, part = 0, 0
    while done < events:
        n = min(50_000, events - done) if done >= nodes else nodes
        plan = store.parent / f"plan-{part}.json"
        plan.write_text(json.dumps({"nodes": [
            {"key": f"k{k}", "summary": f"node {part}-{k}"} for k in range(n)]}))
        ws = "work" if part == 0 else "filler"
        subprocess.run([cli, "--dir", str(store), "--workspace", ws, "import", str(plan)],
                       stdout=subprocess.DEVNULL, check=True)
        plan.unlink()
        done, part = done + n, part + 1


class Streams:
    """`n` open `/v1/watch` streams, each read by a thread until closed."""

    def __init__(self, port: int, token: str, n: int) -> None:
        self.socks: list[socket.socket] = []
        self.threads: list[threading.Thread] = []
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(f"GET /v1/watch HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      f"Authorization: Bearer {token}\r\nAccept: text/event-stream\r\n\r\n"
                      .encode())
            t = threading.Thread(target=self.drain, args=(s,), daemon=True)
            t.start()
            self.socks.append(s)
            self.threads.append(t)

    @staticmethod
    def drain(s: socket.socket) -> None:
        try:
            while s.recv(65536):
                pass
        except OSError:
            pass

    def close(self) -> None:
        for s in self.socks:
            s.shutdown(socket.SHUT_RDWR)
            s.close()
        for t in self.threads:
            t.join(timeout=5)


def writes(c: http.client.HTTPConnection, head: dict, n: int) -> list[float]:
    """Milliseconds of `n` upserts that each change one node's priority."""
    out = []
    for _ in range(n):
        writes.k += 1  # type: ignore[attr-defined]
        body = json.dumps({"summary": "written", "workspace": "work",
                           "priority": writes.k}).encode()  # type: ignore[attr-defined]
        t = time.perf_counter()
        c.request("POST", "/v1/upsert", body, head)
        r = c.getresponse()
        r.read()
        out.append((time.perf_counter() - t) * 1e3)
        assert r.status == 200, r.status
    return out


writes.k = 0  # type: ignore[attr-defined]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--work", default="target/bench-work/serve-streams")
    a = ap.parse_args()
    events = 100_000 if a.quick else 1_000_000
    work = pathlib.Path(a.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    store = work / "store"
    grow(a.cli, store, 20_000, events)
    proc, port, token = serve(a.cli, store)
    head = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    try:
        c = http.client.HTTPConnection("127.0.0.1", port)
        c.connect()
        c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        writes(c, head, 50)  # warm
        none: list[float] = []
        eight: list[float] = []
        for _ in range(4 if a.quick else 8):
            none += writes(c, head, 100)
            streams = Streams(port, token, 8)
            time.sleep(0.5)
            eight += writes(c, head, 100)
            streams.close()
        a0, a8 = statistics.median(none), statistics.median(eight)
        print(f"### Writes through `claimdag serve` with open watch streams ({events:,} "
              "history events, 20,000 nodes)\n")
        print("| measure | no stream | 8 streams | ratio | goal |")
        print("| --- | ---: | ---: | ---: | --- |")
        print(f"| upsert over HTTP, median | {a0:.2f} ms | {a8:.2f} ms | {a8 / a0:.2f}x | "
              "at most 1.2x |")
        p0 = statistics.quantiles(none, n=20)[18]
        p8 = statistics.quantiles(eight, n=20)[18]
        print(f"| upsert over HTTP, 95th percentile | {p0:.2f} ms | {p8:.2f} ms | "
              f"{p8 / p0:.2f}x | |")
    finally:
        stop(proc)


if __name__ == "__main__":
    main()
