"""The dashboard's views beside its rows, in chromium: the graph (a thousand nodes laid out,
the critical path the same as `claimdag graph` marks), the activity charts (claims,
completions, hand-backs and time to claim per minute, as the server counted them), a node's
attempts in its detail, how long ago each row changed, and both views on a phone.
Screenshots are saved to target/dashboard-{graph,activity,attempts,phone-activity}.png."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import time

import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from conftest import cli
from test_dashboard import ROOT, browser, row, run, until  # noqa: F401 (a fixture)
from test_serve import served


def live(b: WebDriver) -> None:
    until("the live stream", lambda: b.find_element(By.ID, "live").text == "live")


def view(b: WebDriver, name: str) -> None:
    b.find_element(By.CSS_SELECTOR, f'#views button[data-view="{name}"]').click()


def layered_plan(path: pathlib.Path, n: int) -> dict:
    """`n` nodes: a chain of 12 with large estimates (the critical path), and the rest in
    fans of ten hanging off it, so the picture is deep and wide."""
    nodes = [{"key": "c0", "summary": "chain step 0", "estimate": 50}]
    for i in range(1, 12):
        nodes.append({"key": f"c{i}", "summary": f"chain step {i}", "estimate": 50,
                      "deps": [f"c{i - 1}"]})
    for i in range(n - 12):
        nodes.append({"key": f"f{i}", "summary": f"fan node {i}", "estimate": 1,
                      "deps": [f"c{i % 12}"] + ([f"f{i - 12}"] if i >= 12 and i % 5 == 0 else [])})
    plan = {"nodes": nodes}
    path.write_text(json.dumps(plan))
    return plan


def test_the_graph_view_draws_a_thousand_nodes_and_the_critical_path(
        store_dir: pathlib.Path, browser: WebDriver) -> None:
    plan = store_dir.parent / "plan.json"
    layered_plan(plan, 1000)
    run(store_dir, "import", str(plan))
    drawn = json.loads(run(store_dir, "graph", "--format", "json"))
    critical = {n["id"] for n in drawn["nodes"] if n["critical"]}
    chain = {n["id"] for n in drawn["nodes"] if n["summary"].startswith("chain step")}
    assert len(drawn["nodes"]) == 1000 and chain <= critical
    with served(store_dir) as s:
        browser.get(f"{s.url}?token={s.token}")
        live(browser)
        view(browser, "graph")
        until("the graph", lambda: browser.execute_script(
            "return document.querySelectorAll('#dag g.node').length") == 1000, 30)
        assert browser.current_url.endswith("#view=graph")
        marked = set(browser.execute_script(
            "return [...document.querySelectorAll('#dag g.node.critical')].map(g => g.dataset.id)"))
        assert marked == critical
        links = browser.execute_script("return document.querySelectorAll('#dag path.link').length")
        assert links == len(drawn["edges"])
        assert browser.execute_script(
            "return document.querySelectorAll('#dag path.link.critical').length") == len(critical) - 1
        # The chain runs left to right, a column a step: each step right of the one before.
        xs = browser.execute_script(
            "const at = id => document.querySelector(`#dag g.node[data-id='${id}']`)"
            ".transform.baseVal[0].matrix.e;"
            "return arguments[0].map(at)", [n["id"] for n in drawn["nodes"][:12]])
        assert xs == sorted(xs) and len(set(xs)) == 12, xs
        info = browser.find_element(By.ID, "graph-info").text
        assert "1000 nodes" in info and f"critical path ({len(critical)} nodes)" in info, info
        took = browser.execute_script("return document.getElementById('dag').dataset.took")
        print(f"the graph of 1000 nodes, {links} links, laid out and drawn in {took} ms")
        browser.save_screenshot(str(ROOT / "target" / "dashboard-graph.png"))
        # A write shows in the graph while it is shown; a click opens the node's detail.
        first = drawn["nodes"][0]["id"]
        run(store_dir, "claim", first, "--assignee", "name:worker-1")
        until("the claim drawn", lambda: browser.execute_script(
            f"return document.querySelector(\"#dag g.node[data-id='{first}']\").dataset.status")
            == "claimed", 15)
        # The rows behind it reloaded for that write; the address still names the view.
        until("the rows reloaded", lambda: browser.execute_script(
            f"return document.querySelector(\"tr[data-id='{first}']\").dataset.status")
            == "claimed")
        assert browser.current_url.endswith("#view=graph"), browser.current_url
        browser.execute_script(
            f"document.querySelector(\"#dag g.node[data-id='{first}']\")"
            ".dispatchEvent(new MouseEvent('click', {bubbles: true}))")
        detail = browser.find_element(By.ID, "detail")
        until("the detail", lambda: detail.is_displayed() and "chain step 0" in detail.text)


def test_the_activity_charts_count_what_every_process_did(
        store_dir: pathlib.Path, browser: WebDriver) -> None:
    ids = [run(store_dir, "upsert", "--summary", f"job {i}") for i in range(6)]
    with served(store_dir) as s:
        browser.get(f"{s.url}?token={s.token}#view=activity")
        live(browser)
        # Another process: six claims, three done, one failed, one released, one expired
        # (and reclaimed by the next write's clock).
        for i, nid in enumerate(ids):
            run(store_dir, "claim", nid, "--assignee", f"name:w{i}", "--ttl", "1s"
                if i == 5 else "10m")
        for i, nid in enumerate(ids[:3]):
            run(store_dir, "complete", nid, "--gen", "2", "--actor", f"name:w{i}", "--status", "done")
        run(store_dir, "complete", ids[3], "--gen", "2", "--actor", "name:w3", "--status",
            "failed")
        run(store_dir, "release", ids[4], "--gen", "2", "--actor", "name:w4")
        time.sleep(1.2)
        run(store_dir, "reclaim")
        total = lambda chart: browser.execute_script(  # noqa: E731
            f"const s = document.querySelector('#chart-{chart} svg');"
            "return s ? Number(s.dataset.total) : -1")
        until("the charts", lambda: total("handbacks") == 2, 20)
        assert total("claims") == 6
        assert total("completions") == 4
        assert total("waited") == 6
        bars = browser.execute_script(
            "return [...document.querySelectorAll('#chart-completions rect')]"
            ".map(r => [r.dataset.key, Number(r.dataset.value)])")
        by = {k: sum(v for key, v in bars if key == k) for k in ("done", "failed", "cancelled")}
        assert by == {"done": 3, "failed": 1, "cancelled": 0}, bars
        text = browser.find_element(By.ID, "view-activity").text
        assert "claims granted: 6 this hour" in text, text
        # The same counts from the server, as the charts read them.
        raw = browser.execute_script(
            "return fetch('/activity').then(r => r.json())")
        assert sum(m["claims"] for m in raw["minutes"]) == 6
        assert sum(m["expired"] + m["reclaimed"] for m in raw["minutes"]) == 1
        assert len(raw["minutes"]) == 60
        browser.save_screenshot(str(ROOT / "target" / "dashboard-activity.png"))


def test_a_nodes_attempts_and_how_long_ago_each_row_changed(
        store_dir: pathlib.Path, browser: WebDriver) -> None:
    nid = run(store_dir, "upsert", "--summary", "flaky job")
    run(store_dir, "claim", nid, "--assignee", "name:first")
    run(store_dir, "renew", nid, "--actor", "name:first", "--progress", "half way")
    run(store_dir, "release", nid, "--gen", "2", "--actor", "name:first", "--retry-in", "0s")
    gen = json.loads(run(store_dir, "--json", "claim", nid, "--assignee", "name:second"))
    run(store_dir, "complete", nid, "--gen", str(gen["generation"]), "--actor", "name:second", "--status",
        "failed", "--output", '{"error": "disk full"}')
    with served(store_dir) as s:
        browser.get(f"{s.url}?token={s.token}#node={nid}")
        live(browser)
        changed = row(browser, nid).find_element(By.CSS_SELECTOR, "time.ago")
        assert re.fullmatch(r"changed \d+s ago", changed.text), changed.text
        assert changed.get_attribute("title").startswith("changed 20")
        detail = browser.find_element(By.ID, "detail")
        until("the attempts", lambda: "attempts (2)" in detail.text)
        tries = browser.execute_script(
            "return [...document.querySelectorAll('#detail table.attempts tr')].slice(1)"
            ".map(tr => [...tr.cells].map(td => td.textContent))")
        assert [t[1] for t in tries] == ["first", "second"], tries
        assert tries[0][4] == "1" and tries[0][5] == "released", tries
        assert tries[1][5].startswith("completed failed: output"), tries
        assert "disk full" in tries[1][5]
        browser.save_screenshot(str(ROOT / "target" / "dashboard-attempts.png"))


def test_the_graph_and_the_charts_fit_a_phone(store_dir: pathlib.Path, browser: WebDriver) -> None:
    plan = store_dir.parent / "plan.json"
    layered_plan(plan, 60)
    run(store_dir, "import", str(plan))
    with served(store_dir) as s:
        browser.set_window_size(390, 844)
        browser.get(f"{s.url}?token={s.token}")
        live(browser)
        for name, drawn in [("graph", "#dag g.node"), ("activity", "#charts svg")]:
            view(browser, name)
            until(f"the {name}", lambda: browser.execute_script(
                f"return document.querySelectorAll('{drawn}').length") > 0)
            wide = browser.execute_script(
                "return [document.documentElement.scrollWidth, window.innerWidth]")
            assert wide[0] <= wide[1], (name, wide)
            if name == "graph":
                # The graph scrolls inside its own box.
                box = browser.execute_script(
                    "const b = document.getElementById('graph-box');"
                    "return [b.clientWidth, b.scrollWidth]")
                assert box[0] <= 390 < box[1], box
        # The charts shrink to the screen.
        chart = browser.find_element(By.CSS_SELECTOR, "#chart-claims svg").rect
        assert chart["x"] + chart["width"] <= 390, chart
        browser.save_screenshot(str(ROOT / "target" / "dashboard-phone-activity.png"))


def test_a_workspace_too_big_to_draw_says_so_and_draws_what_fits(
        store_dir: pathlib.Path, browser: WebDriver) -> None:
    plan = store_dir.parent / "plan.json"
    layered_plan(plan, 3100)
    run(store_dir, "import", str(plan))
    with served(store_dir) as s:
        browser.get(f"{s.url}?token={s.token}#view=graph")
        live(browser)
        info = browser.find_element(By.ID, "graph-info")
        until("the refusal", lambda: "more than the 3000" in info.text)
        assert "3100 nodes" in info.text
        assert browser.find_elements(By.CSS_SELECTOR, "#dag") == []
        # Finish some: with 2,999 left the picture comes back by itself.
        fans = [n["id"] for n in json.loads(run(store_dir, "--json", "list"))
                if n["summary"].startswith("fan node")]
        for nid in fans[-101:]:
            run(store_dir, "cancel", nid)
        until("the graph", lambda: browser.execute_script(
            "return document.querySelectorAll('#dag g.node').length") == 2999, 30)
        assert "2999 nodes" in info.text


@pytest.mark.parametrize("backend", ["directory", "postgres"])
def test_the_server_counts_the_activity_of_other_processes_on_both_backends(
        backend: str, request: pytest.FixtureRequest, tmp_path: pathlib.Path) -> None:
    pg = backend == "postgres"
    store = request.getfixturevalue("pg_url") if pg else str(tmp_path / "claims")

    def do(*args: str) -> str:
        return subprocess.run([cli(), "--dir", store, *args], check=True,
                              capture_output=True, text=True).stdout.strip()

    ids = [do("upsert", "--summary", f"job {i}") for i in range(3)]
    with served(store, state=tmp_path if pg else None) as s:
        for i, nid in enumerate(ids):
            do("claim", nid, "--assignee", f"name:w{i}")
        do("complete", ids[0], "--gen", "2", "--actor", "name:w0", "--status", "done")
        do("release", ids[1], "--gen", "2", "--actor", "name:w1")
        do("--workspace", "other", "upsert", "--summary", "elsewhere")

        def minutes(ws: str = "") -> list[dict]:
            r = httpx.get(f"{s.url}activity", params={"workspace": ws}, timeout=10)
            assert r.status_code == 200, r.text
            return r.json()["minutes"]

        total = lambda key, ws="": sum(m[key] for m in minutes(ws))  # noqa: E731
        until("the counts", lambda: total("released") == 1)
        assert (total("claims"), total("done"), total("failed")) == (3, 1, 0)
        waited = [m["waited"] for m in minutes() if m["waited"]["n"]]
        assert sum(w["n"] for w in waited) == 3 and all(w["max_ms"] >= 0 for w in waited)
        assert total("claims", "other") == 0, "a workspace's own counts"
