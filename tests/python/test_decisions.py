"""Containers, deadlines and budgets through the Python module: an epic is never claimed
and follows its children; a deadline passed shows `overdue`; a lease that reports spend past
the node's budget learns to stop in that renewal, and a `work` command that writes its usage
file is stopped."""

import datetime
import json
import os
import subprocess
import sys

import claimdag
import pytest
from conftest import ME


def test_an_epic_follows_its_children(store: claimdag.Store) -> None:
    epic = store.upsert("release 2.0", kind="epic")
    a = store.upsert("parse", parent=epic)
    b = store.upsert("docs", parent=epic)
    assert store.get(epic).children == {"total": 2, "done": 0, "failed": 0, "cancelled": 0, "open": 2}
    with pytest.raises(claimdag.NotReady):
        store.claim(epic, ME)
    store.complete(a, store.claim(a, ME))
    assert store.get(epic).status == "todo"
    store.cancel(b)
    shown = store.get(epic)
    assert (shown.status, shown.children["open"]) == ("done", 0)
    assert [e.detail for e in store.log(epic) if e.verb == "settle"] == ["done"]


def test_a_deadline_passed_is_overdue(store: claimdag.Store) -> None:
    assert store.config(deadline_action="cancel").deadline_action == "cancel"
    with pytest.raises(claimdag.InvalidInput, match="none or cancel"):
        store.config(deadline_action="stop")  # type: ignore[arg-type]
    past = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
    late = store.upsert("late", deadline=past)
    soon = store.upsert("soon", deadline="+1h")
    assert store.get(late).overdue and not store.get(soon).overdue
    assert store.get(late).deadline == 1577836800000
    assert [n.id for n in store.list(status="overdue")] == [late]
    with pytest.raises(claimdag.InvalidInput, match="aware"):
        store.upsert("naive", deadline=datetime.datetime(2020, 1, 1))
    with pytest.raises(claimdag.InvalidInput, match="deadline"):
        store.upsert("past the clock", deadline="+3000000d")


def test_spend_past_the_budget_asks_the_lease_to_stop(store: claimdag.Store) -> None:
    n = store.upsert("summarise", budget={"tokens": 1000, "cost": "0.5"})
    assert store.get(n).budget == {"tokens": 1000, "cost": "0.5"}
    with store.lease_next(ME, ttl=60) as lease:
        assert lease is not None
        assert lease.usage({"tokens": 400}, now=True) is None
        asked = lease.usage("tokens=400,cost=0.75", now=True)
        assert asked is not None and asked.reason == "over budget: cost 0.75 of 0.5"
        assert lease.cancel_requested is not None
        lease.complete("cancelled")
    assert store.get(n).spent == {"tokens": 400, "cost": "0.75"}
    with pytest.raises(claimdag.InvalidInput, match="budget"):
        store.upsert("bad", budget="tokens=many")


def test_work_reports_the_usage_file_and_stops_over_budget(
    store: claimdag.Store, tmp_path: "os.PathLike[str]"
) -> None:
    n = store.upsert("spend", budget="tokens=100")
    script = (
        "import os, time\n"
        "open(os.environ['CLAIMDAG_USAGE_FILE'], 'w').write('tokens=150')\n"
        "time.sleep(30)\n"
    )
    cli = os.environ.get("CLAIMDAG_CLI", "claimdag")
    env = dict(os.environ, CLAIMDAG_DIR=store.path)
    ran = subprocess.run(
        [cli, "work", "--actor", "name:w", "--ttl", "600ms", "--max", "1", "--",
         sys.executable, "-c", script],
        env=env, capture_output=True, text=True, timeout=25,
    )
    assert ran.returncode == 10, ran.stderr  # 10: a command stopped on a cancel request
    node = store.get(n)
    assert (node.status, node.spent["tokens"]) == ("cancelled", 150), ran.stderr
    reasons = [e.detail for e in store.log(n) if e.verb == "over_budget"]
    assert reasons == ["tokens 150 of 100"]
    assert "over budget" in ran.stderr + ran.stdout
    json.dumps(node.to_dict())


def test_finished_tells_done_from_waiting(store: claimdag.Store) -> None:
    a = store.upsert("first")
    b = store.upsert("second")
    store.link(a, b)
    assert not store.finished()
    gen = store.claim(a, ME)
    other = claimdag.actor("other")
    work = store.lease_next(other, ttl=60)
    assert work.lease is None and not work.finished, "a claim others hold may free b"
    assert store.call("pending")["pending"][0]["id"] == a
    store.complete(a, gen)
    with store.lease_next(other, ttl=60) as lease:
        assert lease is not None and lease.id == b
    work = store.lease_next(other, ttl=60)
    assert work.lease is None and work.finished and store.finished()
