"""The dashboard of `claimdag serve` in a real browser: Debian's chromium, headless, driven by
selenium (PyPI) through Debian's chromedriver (tests/python/run.sh installs both). The page
shows the store a page of rows at a time (the pager and the search reach the rest), follows
another process's writes without a reload, acts with the generation it shows (and says why
when that generation is stale), and shows a summary of `<script>` as text. A screenshot is
saved to target/dashboard.png."""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import time
from typing import Callable, Iterator

import pytest
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select

from test_serve import cli, imported, served

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    driver_path = shutil.which("chromedriver")
    assert driver_path and shutil.which("chromium"), (
        "chromium and chromedriver are missing: tests/python/run.sh installs Debian's "
        "chromium and chromium-driver"
    )
    opts = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1280,860"):
        opts.add_argument(a)
    opts.binary_location = shutil.which("chromium") or ""
    driver = webdriver.Chrome(service=Service(driver_path), options=opts)
    try:
        yield driver
    finally:
        driver.quit()


def until(what: str, ok: Callable[[], bool], seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if ok():
                return
        except StaleElementReferenceException:
            pass  # the rows were replaced by a live update meanwhile: look again
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def status_of(b: WebDriver, node: str) -> str:
    return b.execute_script(
        "const r = document.querySelector(`tr[data-id='${arguments[0]}']`);"
        "return r ? r.dataset.status : ''", node)


def shown(b: WebDriver) -> set[str]:
    return set(b.execute_script(
        "return [...document.querySelectorAll('tr[data-id]')]"
        ".filter(r => !r.hidden).map(r => r.dataset.id)"))


def click(b: WebDriver, node: str, selector: str) -> None:
    """Clicks a button of a row, again if a live update replaced the row meanwhile."""
    def go() -> bool:
        row(b, node).find_element(By.CSS_SELECTOR, selector).click()
        return True
    until(f"a click on {selector}", go)


def run(store: pathlib.Path, *args: str) -> str:
    return subprocess.run([cli(), "--dir", str(store), *args], check=True,
                          capture_output=True, text=True).stdout.strip()


def row(b: WebDriver, node: str):
    return b.find_element(By.CSS_SELECTOR, f'tr[data-id="{node}"]')


def test_the_dashboard_in_a_browser(store_dir: pathlib.Path, browser: WebDriver) -> None:
    hostile = "<script>alert('x')</script><img src=x onerror=alert(2)>"
    bad = run(store_dir, "upsert", "--summary", hostile, "--label", "<b>")
    parse = run(store_dir, "upsert", "--summary", "parse the manifest header", "--label", "parser")
    index = run(store_dir, "upsert", "--summary", "build the index", "--parent", parse)
    run(store_dir, "link", parse, index)
    run(store_dir, "claim", parse, "--assignee", "name:worker-1", "--ttl", "10m")
    run(store_dir, "upsert", "--summary", "rebuild at night", "--not-before", "+2h")
    with served(store_dir) as s:
        # The link the server printed: a session, then the page without the token.
        browser.get(f"{s.url}?token={s.token}")
        assert "token" not in browser.current_url and s.token not in browser.page_source
        until("the live stream", lambda: browser.find_element(By.ID, "live").text == "live")
        rows = browser.find_elements(By.CSS_SELECTOR, "tr[data-id]")
        assert len(rows) == 4
        # Escaped: the summary is its text, no script ran, no element was made of it.
        cell = row(browser, bad).find_element(By.CSS_SELECTOR, "td.summary")
        assert cell.text.startswith(hostile)
        assert cell.find_elements(By.TAG_NAME, "img") == []
        with pytest.raises(NoAlertPresentException):
            browser.switch_to.alert.text
        # The claim's countdown ticks; the critical path is marked.
        lease = row(browser, parse).find_element(By.CSS_SELECTOR, ".countdown")
        assert "left" in lease.text
        assert "critical" in row(browser, parse).get_attribute("class")
        assert row(browser, index).get_attribute("data-status") == "todo"
        # The DAG's edge: the index waits on the parse, named by its summary and status.
        assert "after parse the manifest header (claimed)" in row(browser, index).find_element(
            By.CSS_SELECTOR, "td.summary").text
        # Another process writes: the page shows it without a reload.
        marker = browser.execute_script("window.__kept = 1; return window.__kept")
        later = run(store_dir, "upsert", "--summary", "written by another process")
        until("the new row", lambda: len(browser.find_elements(
            By.CSS_SELECTOR, f'tr[data-id="{later}"]')) == 1)
        assert browser.execute_script("return window.__kept") == marker, "the page reloaded"
        # An action: claim the new node as name:browser.
        actor = browser.find_element(By.NAME, "actor")
        actor.clear()
        actor.send_keys("name:browser")
        click(browser, later, 'button[data-verb="claim"]')
        until("the claim", lambda: status_of(browser, later) == "claimed")
        assert "claim" in browser.find_element(By.ID, "message").text
        node = run(store_dir, "--json", "show", later)
        assert '"status":"claimed"' in node.replace(" ", "")
        # A stale page: the row shows an older generation than the node's (as a page that
        # missed a hand-back would). The release is refused, the page says why, nothing
        # changes.
        gen = int(row(browser, later).get_attribute("data-gen"))
        browser.execute_script(
            "arguments[0].dataset.gen = String(arguments[1])", row(browser, later), gen - 1)
        before = run(store_dir, "--json", "show", later)
        click(browser, later, 'button[data-verb="release"]')
        message = browser.find_element(By.ID, "message")
        until("the refusal", lambda: "refused" in message.text)
        assert f"showed generation {gen - 1}" in message.text
        assert f"now at {gen}" in message.text
        assert run(store_dir, "--json", "show", later) == before
        # Filters: only the claimed ones.
        status = Select(browser.find_element(By.NAME, "status"))
        status.select_by_value("claimed")
        until("the filter", lambda: shown(browser) == {parse, later})
        # A node's detail and history.
        click(browser, parse, "button.show")
        detail = browser.find_element(By.ID, "detail")
        until("the detail", lambda: detail.is_displayed() and "history" in detail.text)
        assert "parse the manifest header" in detail.text and "claim" in detail.text
        browser.find_element(By.CSS_SELECTOR, "#detail button").click()
        # Bulk: cancel every ready node shown, then reopen every cancelled one shown.
        status.select_by_value("ready")
        until("the ready filter", lambda: shown(browser) == {bad})
        browser.find_element(By.ID, "bulk-cancel").click()
        browser.switch_to.alert.accept()
        # The server filters: a node no longer ready leaves the rows of the ready ones.
        until("the bulk cancel", lambda: shown(browser) == set())
        status.select_by_value("cancelled")
        until("the cancelled filter", lambda: shown(browser) == {bad})
        assert status_of(browser, bad) == "cancelled"
        browser.find_element(By.ID, "bulk-reopen").click()
        browser.switch_to.alert.accept()
        until("the bulk reopen", lambda: shown(browser) == set())
        log = run(store_dir, "log", bad)
        assert "cancel" in log and "reopen" in log
        status.select_by_value("")
        until("no filter", lambda: len(shown(browser)) == 5)
        assert status_of(browser, bad) == "ready"
        out = ROOT / "target" / "dashboard.png"
        out.parent.mkdir(exist_ok=True)
        browser.save_screenshot(str(out))
        assert out.stat().st_size > 10_000


def test_a_page_opened_without_the_link_shows_and_cannot_act(store_dir: pathlib.Path,
                                                              browser: WebDriver) -> None:
    node = run(store_dir, "upsert", "--summary", "seen by anyone on this machine")
    with served(store_dir) as s:
        browser.get(s.url)
        until("the live stream", lambda: browser.find_element(By.ID, "live").text == "live")
        assert s.token not in browser.page_source
        before = run(store_dir, "--json", "show", node)
        actor = browser.find_element(By.NAME, "actor")
        actor.send_keys("name:scraper")
        click(browser, node, 'button[data-verb="claim"]')
        message = browser.find_element(By.ID, "message")
        until("the refusal", lambda: "only shows the store" in message.text)
        assert "/?token=" in message.text
        # Even a script on the page, calling the API itself, is refused.
        status = browser.execute_script(
            "const r = await fetch('/v1/claim', {method: 'POST', headers: {'Content-Type': "
            "'application/json'}, body: JSON.stringify({node: arguments[0], assignee: "
            "'name:scraper'})}); return r.status", node)
        assert status == 401
        assert run(store_dir, "--json", "show", node) == before


def test_a_release_from_the_dashboard_records_who_acted(store_dir: pathlib.Path,
                                                        browser: WebDriver) -> None:
    node = run(store_dir, "upsert", "--summary", "held by a worker that stalled")
    run(store_dir, "claim", node, "--assignee", "name:worker-1", "--ttl", "10m")
    with served(store_dir) as s:
        browser.get(f"{s.url}?token={s.token}")
        until("the live stream", lambda: browser.find_element(By.ID, "live").text == "live")
        # The holder shows by its name, not its 32 hex characters.
        until("the holder's name", lambda: "worker-1" in row(browser, node).text)
        assert run(store_dir, "actor", "worker-1") not in row(browser, node).text
        actor = browser.find_element(By.NAME, "actor")
        actor.clear()
        actor.send_keys("name:lead")
        click(browser, node, 'button[data-verb="release"]')
        until("the release", lambda: status_of(browser, node) == "ready")
    release = [line for line in run(store_dir, "log", node).splitlines() if " release " in line]
    # Both names are kept (the worker's at its claim, the lead's at the release it made).
    assert len(release) == 1 and "actor=name:worker-1  by=name:lead" in release[0], release
    event = [e for e in json.loads(run(store_dir, "--json", "log", node)) if e["verb"] == "release"]
    assert (event[0]["actor"], event[0]["by"]) == (run(store_dir, "actor", "worker-1"),
                                                   run(store_dir, "actor", "lead"))
    assert event[0]["door"] == "dashboard", "the history says the dashboard did it"


def info(b: WebDriver) -> str:
    return b.find_element(By.ID, "page-info").text


def page_ids(b: WebDriver) -> list[str]:
    return b.execute_script(
        "return [...document.querySelectorAll('tr[data-id]')].map(r => r.dataset.id)")


def test_a_big_workspace_shows_one_page_and_the_pager_reaches_the_rest(
        store_dir: pathlib.Path, browser: WebDriver) -> None:
    ids = imported(store_dir, 450)
    with served(store_dir) as s:
        browser.get(f"{s.url}?token={s.token}")
        until("the live stream", lambda: browser.find_element(By.ID, "live").text == "live")
        assert page_ids(browser) == ids[:200]
        assert info(browser) == "rows 1-200 of 450"
        assert browser.find_element(By.ID, "counts").text == "450 ready"
        assert not browser.find_element(By.ID, "page-prev").is_enabled()
        browser.find_element(By.ID, "page-next").click()
        until("the second page", lambda: page_ids(browser) == ids[200:400])
        assert info(browser) == "rows 201-400 of 450"
        browser.find_element(By.ID, "page-last").click()
        until("the last page", lambda: page_ids(browser) == ids[400:])
        assert info(browser) == "rows 401-450 of 450"
        assert not browser.find_element(By.ID, "page-next").is_enabled()
        # A reload shows the same page: where the page is lives in its address.
        browser.refresh()
        until("the last page again", lambda: page_ids(browser) == ids[400:])
        browser.find_element(By.ID, "page-first").click()
        until("the first page", lambda: page_ids(browser) == ids[:200])


def test_the_search_finds_a_node_that_is_not_on_the_first_page(
        store_dir: pathlib.Path, browser: WebDriver) -> None:
    ids = imported(store_dir, 450)
    with served(store_dir) as s:
        browser.get(f"{s.url}?token={s.token}")
        until("the live stream", lambda: browser.find_element(By.ID, "live").text == "live")
        assert ids[321] not in page_ids(browser)
        search = browser.find_element(By.NAME, "q")
        search.send_keys("Node Number 321")
        until("the search", lambda: page_ids(browser) == [ids[321]])
        assert info(browser) == "rows 1-1 of 1"
        # The counts stay the whole workspace's.
        assert browser.find_element(By.ID, "counts").text == "450 ready"
        search.clear()
        search.send_keys(ids[432][:8])
        until("the search by id", lambda: page_ids(browser) == [ids[432]])
        search.clear()
        search.send_keys("nothing like this")
        until("no match", lambda: page_ids(browser) == [] and info(browser) == "no rows")


def test_a_live_write_updates_a_row_on_the_page_shown(
        store_dir: pathlib.Path, browser: WebDriver) -> None:
    ids = imported(store_dir, 450)
    with served(store_dir) as s:
        browser.get(f"{s.url}?token={s.token}")
        until("the live stream", lambda: browser.find_element(By.ID, "live").text == "live")
        browser.find_element(By.ID, "page-next").click()
        until("the second page", lambda: page_ids(browser) == ids[200:400])
        marker = browser.execute_script("window.__kept = 2; return window.__kept")
        run(store_dir, "claim", ids[333], "--assignee", "name:elsewhere", "--ttl", "10m")
        until("the claim on the page shown", lambda: status_of(browser, ids[333]) == "claimed")
        assert browser.execute_script("return window.__kept") == marker, "the page reloaded"
        assert info(browser) == "rows 201-400 of 450"
        until("the counts", lambda: all(
            c in browser.find_element(By.ID, "counts").text for c in ("449 ready", "1 claimed")))
        # A burst: one write of 1,000 events (an import) costs the page a few fetches of
        # its rows, not one an event.
        fetches = "return performance.getEntriesByType('resource')" \
                  ".filter(e => e.name.includes('/rows')).length"
        browser.execute_script("performance.setResourceTimingBufferSize(10000)")
        before = browser.execute_script(fetches)
        imported(store_dir, 1000, "more work {i}")
        until("the import", lambda: info(browser) == "rows 201-400 of 1450")
        time.sleep(1)
        assert browser.execute_script(fetches) - before <= 4


def test_a_lead_decides_gates_first_and_sees_epics_deadlines_and_spend(
        store_dir: pathlib.Path, browser: WebDriver) -> None:
    epic = run(store_dir, "upsert", "--kind", "epic", "--summary", "release 2.0")
    run(store_dir, "upsert", "--summary", "write the notes", "--parent", epic,
        "--deadline", "2020-01-01T00:00:00Z", "--budget", "tokens=100")
    gate = run(store_dir, "upsert", "--kind", "gate", "--summary", "sign off the release")
    stale = run(store_dir, "upsert", "--kind", "gate", "--summary", "a page saw it before")
    with served(store_dir) as s:
        browser.get(f"{s.url}?token={s.token}")
        until("the live stream", lambda: browser.find_element(By.ID, "live").text == "live")
        ids = browser.execute_script(
            "return [...document.querySelectorAll('tr[data-id]')].map(r => r.dataset.id)")
        assert ids[:2] == [gate, stale], "the gates waiting for a person come first"
        assert "0/1" in row(browser, epic).find_element(By.CSS_SELECTOR, ".children").text
        # An epic follows its children: no button acts on it.
        assert row(browser, epic).find_elements(By.CSS_SELECTOR, "button.act") == []
        notes = [r for r in ids if r not in (epic, gate, stale)][0]
        assert row(browser, notes).find_elements(By.CSS_SELECTOR, ".overdue")
        assert "spent tokens=0 of tokens=100" in row(browser, notes).text
        actor = browser.find_element(By.NAME, "actor")
        actor.clear()
        actor.send_keys("name:lead")
        click(browser, gate, 'button[data-verb="approve"]')
        until("the approval", lambda: status_of(browser, gate) == "done")
        # Another process decided the other gate and reopened it; a page that still shows
        # generation 1 (one that missed the update) approves: refused, nothing changes.
        run(store_dir, "reject", stale, "--gen", "1")
        run(store_dir, "reopen", stale)
        until("the reopened gate", lambda: row(browser, stale).get_attribute("data-gen") == "2")
        # The row's generation set back and its approve clicked in one step: no live
        # update comes between.
        browser.execute_script(
            "const r = arguments[0]; r.dataset.gen = '1';"
            "r.querySelector('button[data-verb=\"approve\"]').click()", row(browser, stale))
        message = browser.find_element(By.ID, "message")
        until("the refusal", lambda: "refused" in message.text)
        assert "showed generation 1" in message.text
        # A deep link opens a node's detail: readable times, names in the history.
        browser.get(f"{s.url}#node={gate}")
        detail = browser.find_element(By.ID, "detail")
        until("the linked detail", lambda: detail.is_displayed() and "history" in detail.text)
        assert "sign off the release" in detail.text
        assert " UTC (" in detail.text and " ago)" in detail.text, detail.text
        assert "approve gen 1 by lead" in detail.text, detail.text
        browser.save_screenshot(str(ROOT / "target" / "dashboard-decisions.png"))
    shown = json.loads(run(store_dir, "--json", "show", stale))
    assert (shown["status"], shown["generation"]) == ("todo", 2)
    approved = [e for e in json.loads(run(store_dir, "--json", "log", gate))
                if e["verb"] == "approve"]
    assert approved[0]["door"] == "dashboard" and approved[0]["generation"] == 1


def test_on_a_phone_each_row_fits_the_screen(store_dir: pathlib.Path,
                                              browser: WebDriver) -> None:
    run(store_dir, "upsert", "--summary", "a summary long enough to wrap on a narrow screen "
        "rather than push the page sideways", "--label", "mobile")
    gate = run(store_dir, "upsert", "--kind", "gate", "--summary", "sign off")
    with served(store_dir) as s:
        browser.set_window_size(390, 844)
        browser.get(f"{s.url}?token={s.token}")
        until("the live stream", lambda: browser.find_element(By.ID, "live").text == "live")
        wide = browser.execute_script(
            "return [document.documentElement.scrollWidth, window.innerWidth,"
            " document.getElementById('nodes').scrollWidth,"
            " document.getElementById('nodes').clientWidth]")
        assert wide[0] <= wide[1] and wide[2] <= wide[3], wide
        approve = row(browser, gate).find_element(By.CSS_SELECTOR, 'button[data-verb="approve"]')
        assert approve.is_displayed() and approve.rect["x"] + approve.rect["width"] <= wide[1]
        out = ROOT / "target" / "dashboard-phone.png"
        browser.save_screenshot(str(out))


def test_the_rows_sort_by_priority_deadline_or_change(store_dir: pathlib.Path,
                                                      browser: WebDriver) -> None:
    low = run(store_dir, "upsert", "--summary", "low", "--priority", "1")
    high = run(store_dir, "upsert", "--summary", "high", "--priority", "9",
               "--deadline", "+2h")
    soon = run(store_dir, "upsert", "--summary", "soon", "--deadline", "+1h")
    with served(store_dir) as s:
        browser.get(f"{s.url}?token={s.token}")
        until("the live stream", lambda: browser.find_element(By.ID, "live").text == "live")
        assert page_ids(browser) == [low, high, soon], "creation order by default"
        Select(browser.find_element(By.NAME, "sort")).select_by_value("priority")
        until("the priority order", lambda: page_ids(browser) == [high, low, soon])
        assert "sort=priority" in browser.current_url, "a reload keeps the order"
        Select(browser.find_element(By.NAME, "sort")).select_by_value("deadline")
        until("the deadline order", lambda: page_ids(browser) == [soon, high, low])
        run(store_dir, "upsert", "--summary", "low", "--priority", "2")
        Select(browser.find_element(By.NAME, "sort")).select_by_value("updated")
        until("the changed first", lambda: page_ids(browser)[0] == low)
