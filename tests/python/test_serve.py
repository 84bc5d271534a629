"""`claimdag serve` through real HTTP clients: httpx (PyPI) and curl. The server is the
`claimdag` command the wheel installed (tests/python/run.sh sets $CLAIMDAG_CLI to it), started
on a free loopback port; every test reads its replies as a client would."""

from __future__ import annotations

import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import threading
import time
from collections import Counter
from contextlib import contextmanager
from typing import Any, Iterator

import httpx

import claimdag
from conftest import cli, files

A = claimdag.actor("http-a")
B = claimdag.actor("http-b")


class Server:
    def __init__(self, proc: subprocess.Popen[str], url: str, token: str | None):
        self.proc, self.url, self.token = proc, url, token
        self.stderr = ""

    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def post(self, verb: str, body: Any = None, *, token: bool = True) -> httpx.Response:
        return httpx.post(
            f"{self.url}v1/{verb}",
            json={} if body is None else body,
            headers=self.auth() if token else {},
            timeout=30,
        )

    def ok(self, verb: str, body: Any = None) -> Any:
        r = self.post(verb, body)
        assert r.status_code == 200, f"{verb}: {r.status_code} {r.text}"
        return r.json()


@contextmanager
def served(store: str | pathlib.Path, *args: str, state: pathlib.Path | None = None
           ) -> Iterator[Server]:
    env = dict(os.environ)
    if state is not None:
        # A database store's token goes in the state directory: a test's own.
        env["XDG_STATE_HOME"] = str(state)
        env.pop("CLAIMDAG_DIR", None)
    proc = subprocess.Popen(
        [cli(), "--dir", str(store), "serve", "--listen", "127.0.0.1:0", *args],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    url, token_path = None, None
    seen = []
    deadline = time.monotonic() + 30
    while (url is None or token_path is None) and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        if m := re.search(r" on (http://127\.0\.0\.1:\d+/)", line):
            url = m.group(1)
        if m := re.search(r"the token in (.+)$", line.strip()):
            token_path = m.group(1)
    assert url and token_path, f"the server did not say where it listens (exit {proc.poll()})"
    token = pathlib.Path(token_path).read_text().strip()
    server = Server(proc, url, token)
    try:
        yield server
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0, "the server did not stop cleanly on SIGTERM"
        server.stderr = "".join(seen) + proc.stderr.read()


def test_every_served_verb_answers_as_the_verb_layer(store_dir: pathlib.Path) -> None:
    with served(store_dir) as s:
        a = s.ok("upsert", {"summary": "parse the header", "labels": ["parser"]})["id"]
        b = s.ok("upsert", {"summary": "reject a bad header"})["id"]
        assert s.ok("link", {"parent": a, "child": b}) is not None
        assert s.ok("unlink", {"parent": a, "child": b}) is not None
        s.ok("link", {"parent": a, "child": b})
        listed = s.ok("list", {})
        assert {n["id"] for n in listed} == {a, b}
        assert s.ok("show", {"node": a[:8]})["summary"] == "parse the header"
        assert [n["id"] for n in s.ok("ready", {})] == [a]
        assert s.ok("next", {"role": ""})["id"] == a
        got = s.ok("claim", {"node": a, "assignee": A})
        gen = got["generation"]
        assert s.ok("renew", {"node": a, "actor": A, "gen": gen, "ttl": "10m"})
        released = s.ok("release", {"node": a, "actor": A, "gen": gen})
        assert released is not None
        granted = s.ok("claim_next", {"assignee": B})
        assert granted["id"] == a
        done = s.ok("complete", {"node": a, "status": "done", "gen": granted["generation"], "actor": B})
        assert done is not None
        assert s.ok("reopen", {"node": a}) is not None
        c = s.ok("claim", {"node": a, "assignee": A})
        many = s.ok("complete_many", {"completions": [
            {"node": a, "status": "done", "gen": c["generation"], "actor": A}]})
        assert many is not None
        assert s.ok("cancel", {"node": b, "reason": "not needed"}) is not None
        log = s.ok("log", {"node": a})
        assert [e["verb"] for e in log][:2] == ["create", "claim"]
        assert s.ok("reclaim", {}) is not None
        assert s.ok("archive", {}) is not None
        assert s.ok("unarchive", {"node": a}) is not None
        drawn = s.ok("graph", {"format": "mermaid", "all": True})
        assert drawn["format"] == "mermaid" and a[:8] in drawn["graph"]
        plan = {"nodes": [{"key": "x", "summary": "from a plan"}]}
        assert s.ok("import", {"plan": plan})
        assert s.ok("config", {})["max_held"] >= 1
        assert s.ok("check", {})["problems"] == []
        assert s.ok("actor", {"name": "http-a"})["actor"] == A
        # The command line reads what the server wrote.
        shown = subprocess.run([cli(), "--dir", str(store_dir), "--json", "show", a],
                               capture_output=True, text=True, check=True).stdout
        assert json.loads(shown)["status"] == "done"


def test_a_stale_complete_is_409_and_changes_nothing(store_dir: pathlib.Path) -> None:
    with served(store_dir) as s:
        n = s.ok("upsert", {"summary": "fenced"})["id"]
        old = s.ok("claim", {"node": n, "assignee": A})["generation"]
        s.ok("release", {"node": n, "actor": A, "gen": old})
        new = s.ok("claim", {"node": n, "assignee": B})["generation"]
        before = files(store_dir)
        r = s.post("complete", {"node": n, "status": "done", "gen": old})
        assert r.status_code == 409
        body = r.json()["error"]
        assert body["code"] == "stale_generation" and body["generation"] == new
        assert files(store_dir) == before
        assert s.ok("show", {"node": n})["status"] == "claimed"


def test_a_write_without_the_token_is_refused_and_changes_nothing(store_dir: pathlib.Path) -> None:
    with served(store_dir) as s:
        s.ok("upsert", {"summary": "first"})
        before = files(store_dir)
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {s.token}"},
                        {"Authorization": f"Bearer {s.token}x"}):
            r = httpx.post(f"{s.url}v1/upsert", json={"summary": "second"}, headers=headers)
            assert r.status_code == 401, headers
            assert r.headers["www-authenticate"] == "Bearer"
            assert r.json()["error"]["code"] == "invalid_input"
            assert "Authorization: Bearer" in r.json()["error"]["message"]
        assert files(store_dir) == before
        # Reads need no token on loopback.
        assert len(s.post("list", {}, token=False).json()) == 1


def test_bad_bodies_are_refused_with_a_clear_error(store_dir: pathlib.Path) -> None:
    with served(store_dir, "--max-body", "1000") as s:
        big = {"summary": "x" * 2000}
        r = s.post("upsert", big)
        assert r.status_code == 413 and "over 1000 bytes" in r.json()["error"]["message"]
        # Without a length: sent in chunks, cut at the limit.
        def chunks() -> Iterator[bytes]:
            yield b'{"summary": "'
            for _ in range(40):
                yield b"y" * 100
            yield b'"}'
        r = httpx.post(f"{s.url}v1/upsert", content=chunks(), headers=s.auth())
        assert r.status_code == 413
        r = httpx.post(f"{s.url}v1/upsert", content=b'{"summary": ', headers=s.auth())
        assert r.status_code == 400 and "not JSON" in r.json()["error"]["message"]
        r = s.post("upsert", {"summary": "x", "priority": "high"})
        assert r.status_code == 400 and "priority" in r.json()["error"]["message"]
        r = s.post("no_such_verb", {})
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
        assert "claim_next" in r.json()["error"]["message"]
        for verb in ("copy", "diff_check"):
            assert s.post(verb, {}).status_code == 404
        r = httpx.get(f"{s.url}v1/list")
        assert r.status_code == 405 and r.headers["allow"] == "POST"
        assert s.post("show", {"node": "0" * 32}).status_code == 404
        assert s.ok("list", {}) == []


def test_fifty_clients_racing_claim_next_get_every_node_once(store_dir: pathlib.Path) -> None:
    race(store_dir, nodes=150, clients=50)


def test_fifty_clients_racing_on_postgres(pg_url: str, tmp_path: pathlib.Path) -> None:
    # A password in the store's URL (the test server trusts local connections and ignores
    # it) never shows: not in what the server prints, not in a reply.
    secret = "hunter2-never-shown"
    s = race(f"{pg_url}&password={secret}", nodes=100, clients=50, state=tmp_path / "state")
    token = tmp_path / "state" / "claimdag-serve.token"
    assert oct(token.stat().st_mode & 0o777) == "0o600"
    assert "postgres" in s.stderr and secret not in s.stderr


def race(store: str | pathlib.Path, nodes: int, clients: int,
         state: pathlib.Path | None = None) -> Server:
    with served(store, state=state) as s:
        plan = {"nodes": [{"key": f"n{i}", "summary": f"race node {i}"} for i in range(nodes)]}
        s.ok("import", {"plan": plan})
        s.ok("config", {"key": "max_held", "value": "1000"})
        grants: list[tuple[str, int]] = []
        errors: list[str] = []
        lock = threading.Lock()

        def worker(k: int) -> None:
            me = claimdag.actor(f"racer-{k}")
            with httpx.Client(base_url=s.url, headers=s.auth(), timeout=60) as c:
                while True:
                    r = c.post("v1/claim_next", json={"assignee": me})
                    if r.status_code != 200:
                        with lock:
                            errors.append(f"{r.status_code} {r.text}")
                        return
                    got = r.json()
                    if got is None:
                        return
                    with lock:
                        grants.append((got["id"], got["generation"]))

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        by_node = Counter(node for node, _ in grants)
        assert len(by_node) == nodes and set(by_node.values()) == {1}, "a node granted twice"
        assert s.ok("check", {})["problems"] == []
        for verb, body in (("list", {}), ("check", {}), ("show", {"node": "0" * 32})):
            assert "password" not in s.post(verb, body).text
    return s


def test_a_client_that_disconnects_mid_request_leaves_the_store_whole(
    store_dir: pathlib.Path,
) -> None:
    with served(store_dir) as s:
        s.ok("upsert", {"summary": "kept"})
        host, port = s.url[len("http://"):-1].split(":")
        before = files(store_dir)
        # Half a body, then gone.
        with socket.create_connection((host, int(port))) as raw:
            raw.sendall(
                b"POST /v1/upsert HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + f"Authorization: Bearer {s.token}\r\nContent-Length: 200\r\n\r\n".encode()
                + b'{"summary": "never'
            )
        # Headers only, then gone.
        with socket.create_connection((host, int(port))) as raw:
            raw.sendall(b"POST /v1/upsert HTTP/1.1\r\nHost: x\r\n")
        time.sleep(0.3)
        assert files(store_dir) == before
        # A claim_next that waits, and a client that leaves while it waits: the server
        # goes on serving others meanwhile.
        waiter = socket.create_connection((host, int(port)))
        body = json.dumps({"assignee": A, "wait": 2, "role": "nobody"}).encode()
        waiter.sendall(
            b"POST /v1/claim_next HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Authorization: Bearer {s.token}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        time.sleep(0.2)
        waiter.close()
        assert [n["summary"] for n in s.ok("list", {})] == ["kept"]
        assert s.ok("upsert", {"summary": "after"})["id"]
        assert s.ok("check", {})["problems"] == []


def test_curl_writes_with_the_token_and_sees_the_fence(store_dir: pathlib.Path) -> None:
    with served(store_dir) as s:
        def curl(verb: str, body: dict[str, Any], token: bool = True) -> tuple[int, Any]:
            argv = ["curl", "-sS", "-X", "POST", f"{s.url}v1/{verb}", "-d", json.dumps(body),
                    "-H", "Content-Type: application/json", "-w", "\n%{http_code}"]
            if token:
                argv += ["-H", f"Authorization: Bearer {s.token}"]
            out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
            text, code = out.rsplit("\n", 1)
            return int(code), json.loads(text)

        code, made = curl("upsert", {"summary": "from curl"})
        assert code == 200
        n = made["id"]
        assert curl("upsert", {"summary": "no token"}, token=False)[0] == 401
        code, got = curl("claim", {"node": n, "assignee": A})
        assert code == 200
        code, err = curl("complete", {"node": n, "status": "done", "gen": got["generation"] - 1})
        assert code == 409 and err["error"]["code"] == "stale_generation"
        code, _ = curl("complete", {"node": n, "status": "done", "gen": got["generation"]})
        assert code == 200
        code, shown = curl("show", {"node": n}, token=False)
        assert code == 200 and shown["status"] == "done"


def test_the_openapi_document_describes_every_served_verb(store_dir: pathlib.Path) -> None:
    with served(store_dir) as s:
        doc = httpx.get(f"{s.url}v1/openapi.json").json()
        assert doc["openapi"].startswith("3.1")
        paths = doc["paths"]
        assert "/v1/claim_next" in paths and "/v1/copy" not in paths
        assert len(paths) >= 20
        claim = paths["/v1/claim"]["post"]
        props = claim["requestBody"]["content"]["application/json"]["schema"]["properties"]
        assert {"node", "assignee"} <= set(props)
        assert claim["security"] == [{"bearer": []}]
        assert "security" not in paths["/v1/list"]["post"]
        assert "409" in claim["responses"]
        error = doc["components"]["schemas"]["Error"]["properties"]["error"]
        codes = error["properties"]["code"]["enum"]
        assert "stale_generation" in codes


def test_the_token_file_is_private_and_kept_across_restarts(store_dir: pathlib.Path) -> None:
    with served(store_dir) as s:
        first = s.token
    token_file = store_dir.with_name(store_dir.name + ".serve-token")
    assert oct(token_file.stat().st_mode & 0o777) == "0o600"
    assert len(first) == 64
    with served(store_dir) as s:
        assert s.token == first
    token_file.chmod(0o644)
    r = subprocess.run([cli(), "--dir", str(store_dir), "serve", "--listen", "127.0.0.1:0"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "chmod 600" in r.stderr


def test_a_server_stopped_as_soon_as_it_speaks_stops_cleanly(store_dir: pathlib.Path) -> None:
    # A supervisor may stop the server the moment it prints anything: by then both signals
    # are watched, so each stop is clean (exit 0, "stopped"), never a death by the signal.
    for i in range(24):
        sig = signal.SIGTERM if i % 2 == 0 else signal.SIGINT
        proc = subprocess.Popen(
            [cli(), "--dir", str(store_dir), "serve", "--listen", "127.0.0.1:0"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        assert proc.stderr is not None
        first = os.read(proc.stderr.fileno(), 1)
        proc.send_signal(sig)
        rest = proc.stderr.read().decode()
        code = proc.wait(timeout=20)
        assert first == b"c" and code == 0, f"stop {i} by {sig.name}: exit {code}\n{rest}"
        assert rest.rstrip().endswith("claimdag serve: stopped"), rest


def test_listening_beyond_loopback_needs_a_token_file(store_dir: pathlib.Path) -> None:
    r = subprocess.run([cli(), "--dir", str(store_dir), "serve", "--listen", "0.0.0.0:0"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
    assert "--token-file" in r.stderr
    assert not store_dir.exists(), "a refused start made the store"


def scrape(s: Server) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of /metrics, parsed by Prometheus's own client library's parser."""
    from prometheus_client.parser import text_string_to_metric_families

    r = httpx.get(f"{s.url}metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    out = {}
    for family in text_string_to_metric_families(r.text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def test_metrics_parse_and_move_as_the_store_is_used(store_dir: pathlib.Path) -> None:
    with served(store_dir) as s:
        before = scrape(s)
        assert before[("claimdag_up", ())] == 1
        assert before[("claimdag_claims_granted_total", ())] == 0
        ids = [s.ok("upsert", {"summary": f"m{i}"})["id"] for i in range(3)]
        g = s.ok("claim", {"node": ids[0], "assignee": A})["generation"]
        assert s.post("complete", {"node": ids[0], "status": "done", "gen": g - 1}).status_code == 409
        s.ok("release", {"node": ids[0], "actor": A, "gen": g})
        # A claim by another process, straight on the store: the scrape counts it too, from
        # the history.
        subprocess.run([cli(), "--dir", str(store_dir), "claim", ids[1], "--assignee", B],
                       check=True, capture_output=True)
        after = scrape(s)
        assert after[("claimdag_claims_granted_total", ())] == 2
        assert after[("claimdag_handbacks_total", (("cause", "release"),))] == 1
        assert after[("claimdag_stale_refusals_total", (("verb", "complete"),))] == 1
        assert after[("claimdag_nodes", (("display", "claimed"), ("workspace", "")))] == 1
        assert after[("claimdag_nodes", (("display", "ready"), ("workspace", "")))] == 2
        assert after[("claimdag_lease_age_seconds_count", ())] == 1
        assert after[("claimdag_http_requests_total", (("outcome", "ok"), ("verb", "upsert")))] == 3
        assert after[("claimdag_request_duration_seconds_count", (("verb", "claim"),))] == 1
        assert after[("claimdag_store_bytes", ())] > 0


def test_the_watch_stream_shows_another_process_write_without_asking(
    store_dir: pathlib.Path,
) -> None:
    watch_stream_case(store_dir)


def test_the_watch_stream_on_postgres(pg_url: str, tmp_path: pathlib.Path) -> None:
    # Some writes first: the history's numbers and the store's version then differ.
    for k in range(5):
        subprocess.run([cli(), "--dir", pg_url, "upsert", "--summary", f"earlier {k}"],
                       check=True, capture_output=True)
    watch_stream_case(pg_url, state=tmp_path)


def watch_stream_case(store_dir: str | pathlib.Path,
                      state: pathlib.Path | None = None) -> None:
    with served(store_dir, state=state) as s:
        first = s.ok("upsert", {"summary": "before the watch"})["id"]
        got: list[dict[str, Any]] = []
        ids: list[str] = []

        def follow() -> None:
            with httpx.stream("GET", f"{s.url}v1/watch", timeout=30) as r:
                assert r.headers["content-type"] == "text/event-stream"
                for line in r.iter_lines():
                    if line.startswith("id: "):
                        ids.append(line[4:])
                    elif line.startswith("data: "):
                        got.append(json.loads(line[6:]))
                        if len(got) == 2:
                            return

        t = threading.Thread(target=follow)
        t.start()
        time.sleep(0.5)
        subprocess.run([cli(), "--dir", str(store_dir), "claim", first, "--assignee", A],
                       check=True, capture_output=True)
        subprocess.run([cli(), "--dir", str(store_dir), "upsert", "--summary", "later"],
                       check=True, capture_output=True)
        t.join(timeout=20)
        assert not t.is_alive(), "the stream did not show the writes"
        assert [e["verb"] for e in got] == ["claim", "create"]
        assert got[0]["node"] == first
        # Resuming after the first of them replays the second.
        with httpx.stream("GET", f"{s.url}v1/watch", headers={"Last-Event-ID": ids[0]},
                          timeout=30) as r:
            for line in r.iter_lines():
                if line.startswith("data: "):
                    assert json.loads(line[6:])["verb"] == "create"
                    break
        assert httpx.get(f"{s.url}v1/watch?since=x").status_code == 400
        # The whole history from the start, each line once, in order.
        log = s.ok("log", {})
        seen: list[tuple[int, int]] = []
        with httpx.stream("GET", f"{s.url}v1/watch?since=0", timeout=30) as r:
            for line in r.iter_lines():
                if line.startswith("data: "):
                    e = json.loads(line[6:])
                    seen.append((e["seq"], e["i"]))
                    if len(seen) == len(log):
                        break
        assert seen == [(e["seq"], e["i"]) for e in log]


def test_a_request_for_another_host_name_is_refused(store_dir: pathlib.Path) -> None:
    # DNS rebinding: a page of another site whose name now resolves to 127.0.0.1.
    with served(store_dir) as s:
        for path in ("", "v1/openapi.json", "metrics"):
            r = httpx.get(f"{s.url}{path}", headers={"Host": "attacker.example:80"})
            assert r.status_code == 403 and "loopback name" in r.json()["error"]["message"]
        assert httpx.get(s.url, headers={"Host": "localhost"}).status_code == 200


def test_beyond_loopback_every_read_needs_the_token(store_dir: pathlib.Path,
                                                    tmp_path: pathlib.Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("a-secret-of-the-operator\n")
    token_file.chmod(0o600)
    proc = subprocess.Popen(
        [cli(), "--dir", str(store_dir), "serve", "--listen", "0.0.0.0:0",
         "--token-file", str(token_file)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        port = re.search(r":(\d+)/", line)
        assert port, line
        url = f"http://127.0.0.1:{port.group(1)}/"
        auth = {"Authorization": "Bearer a-secret-of-the-operator"}
        for path in ("v1/watch", "metrics", "", "rows"):
            assert httpx.get(f"{url}{path}").status_code == 401, path
        assert httpx.post(f"{url}v1/list", json={}).status_code == 401
        assert httpx.post(f"{url}v1/list", json={}, headers=auth).status_code == 200
        for path in ("v1/openapi.json", "dashboard.js", "dashboard.css"):
            assert httpx.get(f"{url}{path}").status_code == 401, path
            assert httpx.get(f"{url}{path}", headers=auth).status_code == 200, path
        # The dashboard, opened once with the token, keeps a session cookie for its reads.
        with httpx.Client(follow_redirects=True) as c:
            page = c.get(f"{url}?token=a-secret-of-the-operator")
            assert page.status_code == 200 and "claimdag" in page.text
            assert "a-secret-of-the-operator" not in page.text
            cookie = page.history[0].headers["set-cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
            for path in ("rows", "dashboard.js", "v1/openapi.json"):
                assert c.get(f"{url}{path}").status_code == 200, path
            # A write needs the bearer header or the session's CSRF secret too.
            assert c.post(f"{url}v1/upsert", json={"summary": "x"}).status_code == 401
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0


def imported(store: pathlib.Path, n: int, summary: str = "node number {i}") -> list[str]:
    """`n` nodes made by one `claimdag import`, each with its own summary; their ids in
    plan (creation) order."""
    plan = store.parent / f"plan-{n}.json"
    plan.write_text(json.dumps({"nodes": [
        {"key": f"k{i}", "summary": summary.format(i=i), "labels": [f"group-{i % 3}"]}
        for i in range(n)]}))
    out = subprocess.run([cli(), "--dir", str(store), "import", str(plan)], check=True,
                         capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines()]


def row_ids(html: str) -> list[str]:
    return re.findall(r'<tr data-id="([0-9a-f]{32})"', html)


def test_a_request_for_rows_never_returns_every_node_of_a_big_workspace(
    store_dir: pathlib.Path,
) -> None:
    ids = imported(store_dir, 1500)
    with served(store_dir) as s:
        rows = httpx.get(f"{s.url}rows").text
        assert row_ids(rows) == ids[:200]
        assert 'data-offset="0" data-limit="200" data-matched="1500"' in rows
        # The counts still cover the whole workspace.
        assert 'data-counts="ready 1500"' in rows
        page = httpx.get(s.url).text
        assert row_ids(page) == ids[:200]
        assert "1500 ready" in page and "rows 1-200 of 1500" in page
        # A page asks for at most 1,000 rows, however many it names.
        assert len(row_ids(httpx.get(f"{s.url}rows?limit=100000").text)) == 1000
        # The pages reach every node: the last one, and past it the last one again.
        assert row_ids(httpx.get(f"{s.url}rows?offset=1400").text) == ids[1400:]
        assert row_ids(httpx.get(f"{s.url}rows?offset=1450&limit=100").text) == ids[1400:]
        assert row_ids(httpx.get(f"{s.url}rows?offset=99999").text) == ids[1400:]
        bad = httpx.get(f"{s.url}rows?offset=-1")
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_input"


def test_the_server_side_search_finds_a_node_beyond_the_first_page(
    store_dir: pathlib.Path,
) -> None:
    ids = imported(store_dir, 600)
    with served(store_dir) as s:
        def found(query: str) -> list[str]:
            r = httpx.get(f"{s.url}rows", params={"workspace": "", **dict([query.split("=")])})
            assert r.status_code == 200, r.text
            return row_ids(r.text)
        # By its summary (in any case), by its id, by its label.
        assert found("q=NODE NUMBER 543") == [ids[543]]
        assert found(f"q={ids[431][:10]}") == [ids[431]]
        assert found(f"q={ids[431][:8]}...") == [ids[431]]
        assert len(found("q=group-2")) == 200
        assert 'data-matched="200"' in httpx.get(f"{s.url}rows?label=group-2").text
        # By the state it shows, and by its holder, answered by the server.
        s.ok("claim", {"node": ids[555], "assignee": "name:far-worker"})
        assert found("status=claimed") == [ids[555]]
        assert found("holder=name:far-worker") == [ids[555]]
        assert 'data-counts="ready 599 claimed 1"' in httpx.get(f"{s.url}rows").text
        # The whole page says what it searched for, escaped.
        page = httpx.get(s.url, params={"q": "<b>543"}).text
        assert 'value="&lt;b&gt;543"' in page and "<b>543" not in page
        bad = httpx.get(f"{s.url}rows?status=asleep")
        assert bad.status_code == 400 and "asleep" in bad.json()["error"]["message"]
