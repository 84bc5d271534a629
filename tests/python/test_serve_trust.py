"""`claimdag serve` against the clients a careless or hostile neighbour would run: a process
of the same machine scraping the dashboard, hundreds of idle streams, streams that never
read, long polls whose clients leave, a stop while a poll waits. Each test reads the server
as a client would (raw sockets where a library would hide what it does)."""

from __future__ import annotations

import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import time
from typing import Any

import httpx

import claimdag
from conftest import cli
from test_serve import served

LEAD = "name:lead"
WORKER = "name:worker-1"


def raw(url: str, request: str) -> socket.socket:
    """A connection that has sent `request` (a whole HTTP/1.1 request) and reads nothing."""
    m = re.match(r"http://([^:/]+):(\d+)/", url)
    assert m, url
    sock = socket.create_connection((m.group(1), int(m.group(2))), timeout=10)
    sock.sendall(request.encode())
    return sock


def post_raw(url: str, verb: str, body: Any, token: str) -> socket.socket:
    data = json.dumps(body)
    host = url.split("/")[2]
    return raw(url, f"POST /v1/{verb} HTTP/1.1\r\nHost: {host}\r\n"
                    f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(data)}\r\n\r\n{data}")


def get_raw(url: str, path: str) -> socket.socket:
    host = url.split("/")[2]
    return raw(url, f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n")


def show(store: pathlib.Path, node: str) -> dict[str, Any]:
    out = subprocess.run([cli(), "--dir", str(store), "--json", "show", node],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def rss_kib(pid: int) -> int:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_no_answer_carries_a_credential_and_a_scraped_page_cannot_write(
        store_dir: pathlib.Path) -> None:
    with served(store_dir) as s:
        s.ok("upsert", {"summary": "a node to show"})
        # Everything a process of another user can ask for without a credential.
        for path in ("", "rows", "dashboard.js", "dashboard.css", "v1/openapi.json", "metrics"):
            r = httpx.get(f"{s.url}{path}")
            assert r.status_code == 200, path
            assert s.token not in r.text and s.token not in str(r.headers), path
        page = httpx.get(s.url).text
        scraped = re.findall(r'<meta name="[^"]*" content="([^"]*)"', page)
        assert re.search(r'<meta name="claimdag-csrf" content="">', page), \
            "a page served without a session has no secret for writes"
        for secret in filter(None, scraped):
            for headers in ({"Authorization": f"Bearer {secret}"},
                            {"X-Claimdag-Csrf": secret}):
                r = httpx.post(f"{s.url}v1/upsert", json={"summary": "scraped"},
                               headers=headers)
                assert r.status_code == 401, (secret, headers, r.text)
        assert not any(n["summary"] == "scraped" for n in s.ok("list", {}))


def test_the_dashboard_link_opens_a_session_whose_writes_need_its_csrf_secret(
        store_dir: pathlib.Path) -> None:
    with served(store_dir) as s:
        with httpx.Client() as c:
            opened = c.get(f"{s.url}?token={s.token}&workspace=team")
            assert opened.status_code == 303
            assert opened.headers["location"] == "/?workspace=team"
            cookie = opened.headers["set-cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
            assert s.token not in cookie
            page = c.get(s.url).text
            assert s.token not in page
            csrf = re.search(r'<meta name="claimdag-csrf" content="([0-9a-f]+)"', page)
            assert csrf, "a page of a session carries its CSRF secret"
            # The cookie alone, or the secret alone, writes nothing.
            assert c.post(f"{s.url}v1/upsert", json={"summary": "x"}).status_code == 401
            alone = httpx.post(f"{s.url}v1/upsert", json={"summary": "x"},
                               headers={"X-Claimdag-Csrf": csrf.group(1)})
            assert alone.status_code == 401
            both = c.post(f"{s.url}v1/upsert", json={"summary": "x"},
                          headers={"X-Claimdag-Csrf": csrf.group(1)})
            assert both.status_code == 200, both.text
        # A wrong token in the link opens nothing.
        assert httpx.get(f"{s.url}?token=not-the-token").status_code == 401
    assert f"/?token={s.token}" in s.stderr, "the server prints the dashboard's link"


def test_the_bearer_scheme_is_matched_in_any_case(store_dir: pathlib.Path) -> None:
    with served(store_dir) as s:
        for scheme in ("bearer", "BEARER", "BeArEr"):
            r = httpx.post(f"{s.url}v1/upsert", json={"summary": f"by {scheme}"},
                           headers={"Authorization": f"{scheme} {s.token}"})
            assert r.status_code == 200, (scheme, r.text)


def test_refusals_have_the_error_body_of_every_door(store_dir: pathlib.Path) -> None:
    missing = "f" * 32
    with served(store_dir) as s:
        r = s.post("show", {"node": missing})
        assert r.status_code == 404
        cli_body = subprocess.run([cli(), "--dir", str(store_dir), "--json", "show", missing],
                                  capture_output=True, text=True)
        assert r.json() == json.loads(cli_body.stderr)
        assert r.json()["error"]["code"] == "not_found"
        for made_here in (s.post("no_such_verb", {}), s.post("upsert", {}, token=False),
                          httpx.post(f"{s.url}v1/upsert", content=b"{not json",
                                     headers=s.auth())):
            body = made_here.json()
            assert set(body) == {"error"} and {"code", "message"} <= set(body["error"]), body


def test_hundreds_of_idle_streams_never_stop_other_requests(store_dir: pathlib.Path) -> None:
    with served(store_dir) as s:
        streams = [get_raw(s.url, "/v1/watch") for _ in range(520)]
        polls = [post_raw(s.url, "claim_next", {"assignee": WORKER, "wait": 20}, s.token)
                 for _ in range(40)]
        try:
            started = time.monotonic()
            r = httpx.post(f"{s.url}v1/list", json={}, timeout=5)
            assert r.status_code == 200 and time.monotonic() - started < 5
            # Past the bound for one address, a stream is answered 503 at once.
            late = httpx.get(f"{s.url}v1/watch", timeout=5)
            assert late.status_code == 503 and "Retry-After" in late.headers
            assert late.json()["error"]["code"] == "io"
        finally:
            for sock in streams + polls:
                sock.close()
        time.sleep(0.5)
        with httpx.stream("GET", f"{s.url}v1/watch", timeout=5) as again:
            assert again.status_code == 200, "closed streams give their places back"


def test_streams_that_never_read_hold_no_copy_of_the_history(store_dir: pathlib.Path,
                                                              tmp_path: pathlib.Path) -> None:
    plan = tmp_path / "plan.json"
    for part in range(2):
        plan.write_text(json.dumps({"nodes": [
            {"key": f"k{k}", "summary": f"part {part} node {k} " + "x" * 120}
            for k in range(25_000)]}))
        subprocess.run([cli(), "--dir", str(store_dir), "import", str(plan)],
                       stdout=subprocess.DEVNULL, check=True)
    with served(store_dir) as s:
        before = rss_kib(s.proc.pid)
        sockets = [get_raw(s.url, "/v1/watch?since=0") for _ in range(40)]
        try:
            time.sleep(4)
            grown = rss_kib(s.proc.pid) - before
            print(f"40 idle streams of since=0: the server grew by {grown} KiB")
            assert grown < 80 * 1024, f"the server grew by {grown} KiB for 40 idle streams"
            assert httpx.post(f"{s.url}v1/next", json={}, timeout=10).status_code == 200
        finally:
            for sock in sockets:
                sock.close()
        # A stream that reads gets every line once, in order, ids on whole writes only.
        seen: list[tuple[int, int]] = []
        ids: list[int] = []
        with httpx.stream("GET", f"{s.url}v1/watch?since=0", timeout=30) as r:
            for line in r.iter_lines():
                if line.startswith("id: "):
                    ids.append(int(line[4:]))
                if line.startswith("data: "):
                    e = json.loads(line[6:])
                    seen.append((e["seq"], e["i"]))
                    if len(seen) == 50_000:
                        break
        assert seen == sorted(set(seen)) and len(seen) == 50_000
        assert ids == sorted({seq for seq, _ in seen})[:len(ids)] and len(ids) >= 1


def test_a_long_poll_whose_client_left_grants_nothing(store_dir: pathlib.Path) -> None:
    with served(store_dir) as s:
        sock = post_raw(s.url, "claim_next", {"assignee": WORKER, "wait": 6}, s.token)
        time.sleep(0.5)
        sock.close()
        time.sleep(1)
        node = s.ok("upsert", {"summary": "made after the client left"})["id"]
        time.sleep(1.5)
        got = show(store_dir, node)
        assert got["status"] == "todo" and got["holder"] is None, got
        # A client that stays gets the node a write makes ready.
        with httpx.Client(timeout=30) as c:
            import threading
            answer: dict[str, Any] = {}
            t = threading.Thread(target=lambda: answer.update(c.post(
                f"{s.url}v1/claim_next", json={"assignee": LEAD, "wait": 10},
                headers=s.auth()).json()))
            t.start()
            time.sleep(0.5)
            other = s.ok("upsert", {"summary": "made for a client that waits"})["id"]
            t.join(15)
            assert answer.get("id") in (node, other), answer


def test_sigterm_ends_a_pending_long_poll_at_once_and_grants_nothing(
        store_dir: pathlib.Path) -> None:
    with served(store_dir) as s:
        sock = post_raw(s.url, "claim_next", {"assignee": WORKER, "wait": 25}, s.token)
        time.sleep(0.5)
        started = time.monotonic()
        s.proc.send_signal(signal.SIGTERM)
        assert s.proc.wait(timeout=10) == 0
        took = time.monotonic() - started
        assert took < 8, f"the server took {took:.1f} s to stop"
        sock.settimeout(5)
        answer = sock.recv(65536).decode(errors="replace")
        sock.close()
        assert answer == "" or answer.startswith("HTTP/1.1 503"), answer
    nodes = subprocess.run([cli(), "--dir", str(store_dir), "--json", "list", "--all"],
                           capture_output=True, text=True, check=True).stdout
    assert all(n["holder"] is None for n in json.loads(nodes))


def test_a_lead_acting_from_the_dashboard_is_recorded_beside_the_holder(
        store_dir: pathlib.Path) -> None:
    lead, worker = claimdag.actor("lead"), claimdag.actor("worker-1")
    with served(store_dir) as s:
        as_lead = {**s.auth(), "X-Claimdag-Actor": LEAD}
        a = s.ok("upsert", {"summary": "released by the lead"})["id"]
        b = s.ok("upsert", {"summary": "completed by the lead"})["id"]
        g = s.ok("claim", {"node": a, "assignee": WORKER})["generation"]
        r = httpx.post(f"{s.url}v1/release", json={"node": a, "actor": WORKER, "gen": g},
                       headers=as_lead)
        assert r.status_code == 200, r.text
        g = s.ok("claim", {"node": b, "assignee": WORKER})["generation"]
        r = httpx.post(f"{s.url}v1/complete", json={"node": b, "status": "done", "gen": g},
                       headers=as_lead)
        assert r.status_code == 200, r.text
        for node, verb in ((a, "release"), (b, "complete")):
            events = [e for e in s.ok("log", {"node": node}) if e["verb"] == verb]
            assert [(e["actor"], e.get("by")) for e in events] == [(worker, lead)], events
        assert s.ok("show", {"node": b})["completed_by"] == worker
        bad = httpx.post(f"{s.url}v1/cancel", json={"node": a},
                         headers={**s.auth(), "X-Claimdag-Actor": "nobody at all"})
        assert bad.status_code == 400 and "X-Claimdag-Actor" in bad.json()["error"]["message"]
    text = subprocess.run([cli(), "--dir", str(store_dir), "log", a],
                          capture_output=True, text=True, check=True).stdout
    # The text shows the names kept for both (the lead's kept at the call it made).
    assert "actor=name:worker-1  by=name:lead" in text
