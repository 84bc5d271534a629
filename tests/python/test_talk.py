"""The holder and the rest talking, from Python: checkpoints that outlive a stalled holder,
cancel requests that reach the holder (through renew, a lease's callback and an asyncio
await), outputs that flow to dependents, several completions in one write, and the limits.
Every test runs on a directory store and on a PostgreSQL one (tests/python/run.sh starts the
server and sets $CLAIMDAG_TEST_PG)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import pathlib
import threading
import time
from typing import Any

import pytest

import claimdag
from conftest import ME, YOU, actor

_n = itertools.count()


@pytest.fixture(params=["dir", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: pathlib.Path) -> claimdag.Store:
    if request.param == "dir":
        return claimdag.Store(tmp_path / "claims")
    base = os.environ.get("CLAIMDAG_TEST_PG", "")
    assert base, "CLAIMDAG_TEST_PG is not set: tests/python/run.sh starts a PostgreSQL server"
    sep = "&" if "?" in base else "?"
    return claimdag.Store(f"{base}{sep}schema=talk_{os.getpid()}_{next(_n)}")


def snapshot(store: claimdag.Store) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every node (finished and archived ones too) and the whole history."""
    nodes = [n.to_dict() for n in store.list(terminal=True)]
    nodes += [n.to_dict() for n in store.list(archived=True, terminal=True)]
    return nodes, [e.to_dict() for e in store.log()]


def until(what: Any, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not what():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


# -- checkpoints --------------------------------------------------------------------------


def test_a_checkpoint_outlives_a_holder_that_stalls(store: claimdag.Store) -> None:
    nid = store.upsert("migrate the orders table")
    gen = store.claim(nid, ME, ttl=0.3)
    assert store.renew(nid, ME, gen=gen, progress="copied 4 of 9 chunks") is None
    node = store.get(nid)
    assert node.progress == "copied 4 of 9 chunks" and node.progress_at is not None
    assert node.to_dict()["progress"] == "copied 4 of 9 chunks"
    # The holder stalls: its lease runs out, and the next holder picks up where it was.
    until(lambda: store.get(nid).display == "expired")
    grant = store.claim_next(YOU, details=True)
    assert isinstance(grant, claimdag.Grant)
    assert grant.id == nid and grant.generation > gen
    assert grant.progress == "copied 4 of 9 chunks"
    assert grant.progress_at == node.progress_at
    assert grant.inputs == {}
    assert grant.to_dict()["progress"] == "copied 4 of 9 chunks"
    # The stalled holder is fenced off, checkpoint and all.
    with pytest.raises(claimdag.StaleGeneration):
        store.renew(nid, ME, gen=gen, progress="copied 5 of 9 chunks")
    assert store.get(nid).progress == "copied 4 of 9 chunks"
    # The same through claim(details=True), after a release.
    store.release(nid, YOU, grant.generation)
    again = store.claim(nid, ME, details=True)
    assert isinstance(again, claimdag.Grant) and again.progress == "copied 4 of 9 chunks"
    assert isinstance(store.release(nid, ME, again.generation), int)
    # Without details the answers stay as they were.
    assert isinstance(store.claim(nid, ME), int)


def test_a_lease_sends_its_checkpoint_with_the_next_renewal_or_at_once(
    store: claimdag.Store,
) -> None:
    nid = store.upsert("index the archive")
    with store.lease_next(ME, ttl=0.3) as lease:
        assert lease is not None and lease.grant.progress is None
        assert lease.progress("page 10") is None
        until(lambda: store.get(nid).progress == "page 10")
        assert lease.progress("page 20", now=True) is None
        assert store.get(nid).progress == "page 20"
    assert store.get(nid).status == "done"
    # A reopen clears it; a new holder then gets none.
    store.reopen(nid)
    assert store.get(nid).progress is None


# -- cancel requests ----------------------------------------------------------------------


def test_a_cancel_request_reaches_the_holder_through_renew(store: claimdag.Store) -> None:
    nid = store.upsert("render the report")
    gen = store.claim(nid, ME)
    assert store.cancel(nid, reason="the customer withdrew", actor=YOU) is True
    node = store.get(nid)
    assert node.status == "claimed" and node.generation == gen
    asked = node.cancel_requested
    assert asked is not None
    assert (asked.by, asked.reason) == (YOU, "the customer withdrew") and asked.at > 0
    assert asked.to_dict() == {"by": YOU, "reason": "the customer withdrew", "at": asked.at}
    heard = store.renew(nid, ME, gen=gen)
    assert heard == asked
    store.complete(nid, gen=gen, status="cancelled", actor=ME)
    done = store.get(nid)
    assert done.status == "cancelled" and done.cancel_requested is None
    verbs = [e.verb for e in store.log(nid)]
    assert verbs[-1] == "complete" and "cancel_request" in verbs
    assert [e.detail for e in store.log(nid) if e.verb == "cancel_request"] == [
        "the customer withdrew"
    ]
    with pytest.raises(claimdag.Terminal):
        store.cancel(nid)


def test_cancel_of_a_todo_node_and_its_refusals(store: claimdag.Store) -> None:
    nid = store.upsert("send the newsletter")
    gen = store.get(nid).generation
    with pytest.raises(claimdag.StaleGeneration):
        store.cancel(nid, gen=gen + 5)
    with pytest.raises(claimdag.NotFound):
        store.cancel("f" * 32)
    assert store.get(nid).status == "todo"
    assert store.cancel(nid, reason="not this week", gen=gen) is False
    node = store.get(nid)
    assert node.status == "cancelled"
    assert store.log(nid)[-1].verb == "cancel"


def test_a_cancel_request_reaches_a_lease_callback(store: claimdag.Store) -> None:
    store.upsert("train the model")
    seen: list[claimdag.CancelRequest] = []
    heard = threading.Event()

    def on_cancel(request: claimdag.CancelRequest) -> None:
        seen.append(request)
        heard.set()

    with store.lease_next(ME, ttl=0.3, on_cancel=on_cancel) as lease:
        assert lease is not None and lease.cancel_requested is None
        assert store.cancel(lease.id, reason="out of budget", actor=YOU)
        assert heard.wait(10)
        assert seen[0].reason == "out of budget" and seen[0].by == YOU
        assert lease.cancel_requested == seen[0]
        # A callback given after the request runs at once.
        late: list[claimdag.CancelRequest] = []
        lease.on_cancel(late.append)
        assert late == seen
        # A renewal at once answers the request too.
        assert lease.progress("stopping at epoch 3", now=True) == seen[0]
        lease.complete("cancelled", note="stopped")
        assert not lease.lost
    node = store.get(lease.id)
    assert node.status == "cancelled" and node.progress == "stopping at epoch 3"
    assert lease.cancel_requested == seen[0]


def test_a_cancel_request_can_be_awaited(store: claimdag.Store) -> None:
    nid = store.upsert("crawl the site")

    async def main() -> claimdag.CancelRequest:
        async with store.alease_next(ME, ttl=0.3) as lease:
            assert lease is not None and lease.cancel_requested is None
            waiting = asyncio.ensure_future(lease.cancelled())
            await asyncio.sleep(0.05)
            assert not waiting.done()
            await asyncio.to_thread(store.cancel, nid, "enough pages", YOU)
            request = await asyncio.wait_for(waiting, 10)
            assert lease.cancel_requested == request
            # Already requested: returns at once.
            assert await asyncio.wait_for(lease.cancelled(), 1) == request
            lease.progress("crawled 120 pages")
            assert await lease.progress_now("crawled 121 pages") == request
            await lease.complete("cancelled", output={"pages": 121})
            return request

    request = asyncio.run(main())
    assert request.reason == "enough pages" and request.by == YOU
    node = store.get(nid)
    assert node.status == "cancelled" and node.output == {"pages": 121}
    assert node.progress == "crawled 121 pages"


# -- outputs ------------------------------------------------------------------------------


def test_outputs_flow_to_dependents_even_after_archive(store: claimdag.Store) -> None:
    a = store.upsert("extract")
    b = store.upsert("summarise")
    c = store.upsert("publish")
    soft = store.upsert("optional lint")
    store.link(a, c)
    store.link(b, c)
    store.link(soft, c, soft=True)
    ga = store.claim(a, ME)
    store.complete(a, gen=ga, output={"rows": 3, "files": ["x.csv"], "ok": True})
    gb = store.claim(b, ME)
    store.complete(b, gen=gb)  # no output
    gs = store.claim(soft, ME)
    store.complete(soft, gen=gs, status="failed", output="lint crashed")
    assert store.get(a).output == {"rows": 3, "files": ["x.csv"], "ok": True}
    assert store.get(b).output is None
    assert store.get(soft).output == "lint crashed"
    assert store.log(a)[-1].output == {"rows": 3, "files": ["x.csv"], "ok": True}
    assert store.archive(a, b, soft) == 3
    with store.lease_next(YOU) as lease:
        assert lease is not None and lease.id == c
        # Done prerequisites only (the failed soft one is not an input), archived included.
        assert lease.inputs == {a: {"rows": 3, "files": ["x.csv"], "ok": True}, b: None}
        assert lease.grant.inputs == lease.inputs
        lease.complete(output=[1, 2.5, None, "three"])
    assert store.get(c).output == [1, 2.5, None, "three"]


def test_an_output_keeps_every_digit(store: claimdag.Store) -> None:
    big = 123456789012345678901234567890
    out = {"id": big, "below": -big, "f": 2.5}
    a = store.upsert("count the rows")
    b = store.upsert("use the count")
    store.link(a, b)
    ga = store.claim(a, ME)
    store.complete(a, gen=ga, output=out)
    assert store.get(a).output == out and type(store.get(a).output["id"]) is int
    assert store.get(a).to_dict()["output"] == out
    assert store.log(a)[-1].output == out
    with store.lease_next(YOU) as lease:
        assert lease is not None and lease.id == b
        assert lease.inputs == {a: out}
        lease.complete(output=[big])
    assert store.get(b).output == [big]
    # Given as JSON text, 1e2 is the float json.loads makes of it, the long number an int.
    c = store.upsert("an exponent")
    gc = store.claim(c, ME)
    store.complete_many(
        f'[{{"node": "{c}", "gen": {gc}, "status": "done", "output": {{"e": 1e2, "id": {big}}}}}]'
    )
    got = store.get(c).output
    assert got == json.loads(f'{{"e": 1e2, "id": {big}}}') and type(got["e"]) is float


def test_claim_details_carry_the_inputs(store: claimdag.Store) -> None:
    a = store.upsert("fetch")
    b = store.upsert("parse")
    store.link(a, b)
    ga = store.claim(a, ME)
    store.complete(a, gen=ga, output="plain text is JSON too")
    grant = store.claim(b, YOU, details=True)
    assert grant.inputs == {a: "plain text is JSON too"}
    assert grant.to_dict()["inputs"] == {a: "plain text is JSON too"}
    assert grant.resumed is False


# -- complete_many ------------------------------------------------------------------------


def test_complete_many_is_all_or_nothing(store: claimdag.Store) -> None:
    store.config(max_held=0)
    ids = [store.upsert(f"shard {i}") for i in range(10)]
    gens = [store.claim(n, ME) for n in ids]
    before = snapshot(store)
    stale = [{"node": n, "gen": g, "output": {"shard": i}} for i, (n, g) in
             enumerate(zip(ids, gens))]
    stale[6]["gen"] = gens[6] - 1
    with pytest.raises(claimdag.StaleGeneration) as info:
        store.complete_many(stale)
    assert info.value.node == ids[6]
    assert snapshot(store) == before
    # One too large an output refuses the whole write too.
    big = [(n, g, "done", {"shard": i}) for i, (n, g) in enumerate(zip(ids, gens))]
    big[3] = (ids[3], gens[3], "done", "x" * 70_000)
    with pytest.raises(claimdag.InvalidInput):
        store.complete_many(big)
    assert snapshot(store) == before
    # A node named twice, a bad status, an unknown key: refused, nothing changes.
    with pytest.raises(claimdag.InvalidInput):
        store.complete_many([(ids[0], gens[0]), (ids[1], gens[1], "finished")])
    with pytest.raises(claimdag.InvalidInput):
        store.complete_many([{"node": ids[0], "gen": gens[0], "colour": "red"}])
    with pytest.raises(claimdag.InvalidInput):
        store.complete_many("[{\"node\": ")
    with pytest.raises(TypeError):
        store.complete_many([(ids[0], True)])
    with pytest.raises(TypeError):
        store.complete_many(42)  # type: ignore[arg-type]
    assert snapshot(store) == before
    # All of them at once: every form.
    text = json.dumps([{"node": ids[9], "gen": gens[9], "status": "failed", "note": "n"}])
    assert store.complete_many(text) == [(ids[9], "failed")]
    done = store.complete_many(
        [(ids[0], gens[0]), (ids[1], gens[1], "cancelled")]
        + [{"node": n, "gen": g, "output": {"shard": i}, "actor": ME}
           for i, (n, g) in enumerate(zip(ids[2:9], gens[2:9]), start=2)]
    )
    assert done == [(ids[0], "done"), (ids[1], "cancelled")] + [(n, "done") for n in ids[2:9]]
    assert store.get(ids[4]).output == {"shard": 4}
    assert store.get(ids[9]).status == "failed"
    assert store.list() == []


# -- batches of claims ---------------------------------------------------------------------


def test_claim_next_many_claims_a_batch_in_one_write(store: claimdag.Store) -> None:
    store.config(max_held=3)
    ids = [store.upsert(f"page {i}", estimate=10 - i) for i in range(5)]
    with pytest.raises(claimdag.InvalidInput):
        store.claim_next_many(ME, 0)
    got = store.claim_next_many(ME, 10)
    # In pick order (longest critical path first), up to max_held, each at generation 2.
    assert [(g.id, g.generation) for g in got] == [(n, 2) for n in ids[:3]]
    assert all(isinstance(g, claimdag.Grant) and g.inputs == {} for g in got)
    seqs = {e.seq for e in store.log() if e.verb == "claim"}
    assert len(seqs) == 1  # one write
    with pytest.raises(claimdag.AssigneeBusy):
        store.claim_next_many(ME, 2)
    assert [g.id for g in store.claim_next_many(YOU, 5)] == ids[3:]
    assert store.claim_next_many(actor(9), 5, wait=0.05) == []


def test_aclaim_next_many_waits_for_a_batch(store: claimdag.Store) -> None:
    store.config(max_held=0)

    async def main() -> None:
        assert await store.aclaim_next_many(ME, 2, wait=0.05) == []
        waiting = asyncio.create_task(store.aclaim_next_many(ME, 2, wait=30))
        await asyncio.sleep(0.2)
        made = [store.upsert(f"async page {i}") for i in range(3)]
        got = await asyncio.wait_for(waiting, 20)
        assert 1 <= len(got) <= 2 and all(g.id in made for g in got)
        rest = await store.aclaim_next_many(ME, 5)
        assert sorted(g.id for g in got + rest) == sorted(made)

    asyncio.run(main())


# -- limits and bad values ----------------------------------------------------------------


def test_64_kib_limits_refuse_and_change_nothing(store: claimdag.Store) -> None:
    nid = store.upsert("long notes")
    gen = store.claim(nid, ME)
    store.renew(nid, ME, gen=gen, progress="p" * 65536)  # exactly 64 KiB is fine
    before = snapshot(store)
    with pytest.raises(claimdag.InvalidInput):
        store.renew(nid, ME, gen=gen, progress="p" * 65537)
    with pytest.raises(claimdag.InvalidInput):
        store.renew(nid, ME, gen=gen, progress="nul\x00inside")
    with pytest.raises(claimdag.InvalidInput):
        store.complete(nid, gen=gen, output={"blob": "x" * 65536})
    with pytest.raises(claimdag.InvalidInput):
        store.cancel(nid, reason="r" * 5000)
    assert snapshot(store) == before
    with store.lease_next(YOU, ttl=30) as lease:
        assert lease is None  # nothing else is ready
    other = store.upsert("leased")
    with store.lease_next(YOU, ttl=30) as lease:
        assert lease is not None and lease.id == other
        with pytest.raises(claimdag.InvalidInput):
            lease.progress("q" * 65537, now=True)
        before = snapshot(store)
        with pytest.raises(claimdag.InvalidInput):
            lease.complete(output="y" * 70_000)
        assert snapshot(store) == before
        # The claim is still held: the lease renews on and completes with a smaller output.
        assert not lease.lost
        lease.complete(output={"summary": "fits"})
    assert store.get(other).status == "done"
    assert store.get(other).output == {"summary": "fits"}


def test_an_oversized_checkpoint_is_refused_at_once_and_the_lease_lives_on(
    store: claimdag.Store,
) -> None:
    nid = store.upsert("long checkpoints")
    with store.lease_next(YOU, ttl=1.2) as lease:
        assert lease is not None and lease.id == nid
        for now in (False, True):
            with pytest.raises(claimdag.InvalidInput, match="65537 bytes"):
                lease.progress("q" * 65537, now=now)
        with pytest.raises(claimdag.InvalidInput, match="NUL"):
            lease.progress("nul\x00inside")
        lease.progress("fits")
        # Past two leases: the renewals went on (the refused text was never queued).
        time.sleep(2.6)
        assert not lease.lost
        lease.complete()
    done = store.get(nid)
    assert done.status == "done" and done.progress == "fits"


def test_unserialisable_outputs_are_refused(store: claimdag.Store) -> None:
    nid = store.upsert("odd values")
    gen = store.claim(nid, ME)
    before = snapshot(store)
    with pytest.raises(TypeError):
        store.complete(nid, gen=gen, output={1, 2})
    with pytest.raises(TypeError):
        store.complete(nid, gen=gen, output={"when": object()})
    with pytest.raises(TypeError):
        store.complete(nid, gen=gen, output={1: "int keys"})
    with pytest.raises(claimdag.InvalidInput):
        store.complete(nid, gen=gen, output=float("nan"))
    assert snapshot(store) == before
    store.complete(nid, gen=gen, output=("a", 1))
    assert store.get(nid).output == ["a", 1]


def test_talk_words_are_the_same_as_the_cli_json(store: claimdag.Store) -> None:
    """`store.call` (the verb layer as the CLI's --json prints it) and the typed methods
    agree."""
    nid = store.upsert("agree")
    g = store.claim(nid, actor(3))
    store.cancel(nid, reason="why", actor=actor(4))
    reply = store.call("renew", node=nid, actor=actor(3), gen=g)
    typed = store.get(nid).cancel_requested
    assert typed is not None and reply["cancel_requested"] == typed.to_dict()
