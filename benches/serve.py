"""`make bench`: `claimdag serve` against the Python module in process.

    python benches/serve.py --cli PATH/claimdag [--quick]

- claim_next + complete cycles over HTTP with keep-alive (the standard library's
  http.client, one connection a client), 1 and 8 clients, against the same cycle through
  the Python module in process (one thread), on fresh directory stores, durable: the cost
  per cycle and the ratio (target: at most 1.5x with 8 clients);
- the dashboard's first paint with 100,000 nodes in headless chromium (selenium, when it
  and chromium are installed; target: under 1 s): a page of 200 rows, the first load the
  server's first read of the store;
- the dashboard's graph view of 1,000 nodes in chains (the same chromium): laid out and
  drawn by the page, against Graphviz's `dot -Tsvg` drawing the same DAG from
  `claimdag graph` (when Graphviz is installed);
- the server's resident memory with 100,000 nodes, after one dashboard page and one list.

Prints a Markdown table. It never fails on a time."""

from __future__ import annotations

import argparse
import http.client
import json
import os
import pathlib
import re
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time

from served import serve, stop

import claimdag




def plan(n: int) -> dict:
    return {"nodes": [{"key": f"n{i}", "summary": f"bench node {i}"} for i in range(n)]}


def http_cycles(cli: str, work: pathlib.Path, clients: int, per: int) -> float:
    """µs per claim_next + complete cycle, over all clients."""
    store = work / f"http-{clients}"
    shutil.rmtree(store, ignore_errors=True)
    claimdag.Store(str(store)).call("import", plan=plan(clients * per + 10))
    claimdag.Store(str(store)).call("config", key="max_held", value="1000")
    proc, port, token = serve(cli, store)
    head = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    try:
        def client(k: int) -> None:
            c = http.client.HTTPConnection("127.0.0.1", port)
            c.connect()
            c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            me = claimdag.actor(f"bench-{k}")
            ask = json.dumps({"assignee": me}).encode()
            for _ in range(per):
                c.request("POST", "/v1/claim_next", ask, head)
                got = json.loads(c.getresponse().read())
                body = {"node": got["id"], "status": "done", "gen": got["generation"]}
                c.request("POST", "/v1/complete", json.dumps(body).encode(), head)
                r = c.getresponse()
                r.read()
                assert r.status == 200
            c.close()
        threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
        t = time.perf_counter()
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        return (time.perf_counter() - t) * 1e6 / (clients * per)
    finally:
        stop(proc)


def module_cycles(work: pathlib.Path, n: int) -> float:
    store = work / "module"
    shutil.rmtree(store, ignore_errors=True)
    s = claimdag.Store(str(store))
    s.call("import", plan=plan(n + 10))
    me = claimdag.actor("bench-module")
    t = time.perf_counter()
    for _ in range(n):
        got = s.call("claim_next", assignee=me)
        s.call("complete", node=got["id"], status="done", gen=got["generation"])
    return (time.perf_counter() - t) * 1e6 / n


def chromium():  # -> a selenium WebDriver, or why there is none
    """Headless chromium under selenium, or the reason it cannot be measured."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return "not measured: selenium is not installed"
    driver = shutil.which("chromedriver")
    if not driver or not shutil.which("chromium"):
        return "not measured: chromium and chromedriver are not installed"
    opts = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        opts.add_argument(a)
    b = webdriver.Chrome(service=Service(driver), options=opts)
    return b


def first_paint(cli: str, work: pathlib.Path, n: int) -> str:
    b = chromium()
    if isinstance(b, str):
        return b
    store = work / "paint"
    shutil.rmtree(store, ignore_errors=True)
    claimdag.Store(str(store)).call("import", plan=plan(n))
    proc, port, _ = serve(cli, store)
    try:
        times = []
        for _ in range(3):
            b.get(f"http://127.0.0.1:{port}/")
            fcp = None
            for _ in range(50):  # headless chromium records the paint a little later
                fcp = b.execute_script(
                    "const p = performance.getEntriesByName('first-contentful-paint')[0];"
                    "return p ? p.startTime : null")
                if fcp is not None:
                    break
                time.sleep(0.1)
            assert fcp is not None, "chromium recorded no first contentful paint"
            rows = b.execute_script("return document.querySelectorAll('tr[data-id]').length")
            assert rows == min(n, 200), rows  # one page of rows
            times.append(fcp)
        return (f"{times[0]:.0f} ms the first load (the server's first read of the store), "
                f"{statistics.median(times[1:]):.0f} ms the next ones (target: under 1,000 ms)")
    finally:
        b.quit()
        stop(proc)


def graph_view(cli: str, work: pathlib.Path, n: int) -> str:
    b = chromium()
    if isinstance(b, str):
        return b
    store = work / "graph"
    shutil.rmtree(store, ignore_errors=True)
    chains = {"nodes": [{"key": f"n{i}", "summary": f"bench node {i}",
                         "deps": [f"n{i - 1}"] if i % 25 else []} for i in range(n)]}
    claimdag.Store(str(store)).call("import", plan=chains)
    proc, port, _ = serve(cli, store)
    try:
        took, shown = [], []
        for _ in range(3):
            b.get(f"http://127.0.0.1:{port}/#view=graph")
            for _ in range(300):
                drawn = b.execute_script(
                    "const g = document.getElementById('dag');"
                    "return g ? [Number(g.dataset.took), performance.now()] : null")
                if drawn:
                    break
                time.sleep(0.01)
            assert drawn, "the graph view drew nothing"
            nodes = b.execute_script("return document.querySelectorAll('#dag g.node').length")
            assert nodes == n, nodes
            took.append(drawn[0])
            shown.append(drawn[1])
    finally:
        b.quit()
        stop(proc)
    mine = statistics.median(took)
    text = (f"{mine:.0f} ms laid out and its SVG built, {statistics.median(shown):.0f} ms from the "
            f"page's start to the picture")
    if not shutil.which("dot"):
        return text + "; Graphviz's dot: not measured (not installed)"
    source = subprocess.run([cli, "--dir", str(store), "graph"], check=True,
                            capture_output=True).stdout
    t = time.perf_counter()
    subprocess.run(["dot", "-Tsvg", "-o", os.devnull], input=source, check=True)
    dot = (time.perf_counter() - t) * 1000
    return text + f"; Graphviz's dot -Tsvg for the same DAG: {dot:.0f} ms ({dot / mine:.1f}x)"


def memory(cli: str, work: pathlib.Path, n: int) -> str:
    store = work / "memory"
    shutil.rmtree(store, ignore_errors=True)
    claimdag.Store(str(store)).call("import", plan=plan(n))
    proc, port, _ = serve(cli, store)
    try:
        c = http.client.HTTPConnection("127.0.0.1", port)
        c.request("GET", "/")
        c.getresponse().read()
        c.request("POST", "/v1/list", "{}", {"Content-Type": "application/json"})
        c.getresponse().read()
        status = pathlib.Path(f"/proc/{proc.pid}/status").read_text()
        rss = int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1))
        hwm = int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1))
        return f"{rss / 1024:.0f} MiB resident ({rss * 1024 / n:.0f} B a node), peak {hwm / 1024:.0f} MiB"
    finally:
        stop(proc)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--work", default="target/bench-work/serve")
    a = ap.parse_args()
    work = pathlib.Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    per = 100 if a.quick else 300
    module = module_cycles(work, per)
    one = http_cycles(a.cli, work, 1, per)
    eight = http_cycles(a.cli, work, 8, per // 2)
    print("| claim_next + complete, durable | µs a cycle | ÷ the module in process |")
    print("| --- | ---: | ---: |")
    print(f"| the Python module, in process, one thread | {module:.0f} | 1.00x |")
    print(f"| HTTP keep-alive, 1 client | {one:.0f} | {one / module:.2f}x |")
    print(f"| HTTP keep-alive, 8 clients (per cycle, all clients) | {eight:.0f} | "
          f"{eight / module:.2f}x (target: at most 1.5x) |")
    print()
    print(f"- the dashboard's first paint with 100,000 nodes: "
          f"{first_paint(a.cli, work, 100_000)}")
    print(f"- the dashboard's graph view of 1,000 nodes: {graph_view(a.cli, work, 1000)}")
    n = 20_000 if a.quick else 100_000
    print(f"- the server's memory with {n:,} nodes after a page and a list: {memory(a.cli, work, n)}")


if __name__ == "__main__":
    os.environ.pop("CLAIMDAG_DIR", None)
    tempfile.tempdir = None
    main()
