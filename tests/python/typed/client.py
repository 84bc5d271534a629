"""A typed client of claimdag: `mypy --strict` must accept it (tests/python/test_stubs.py)."""

from __future__ import annotations

import datetime
from typing import Optional

import claimdag


def work_one(store: claimdag.Store, me: str) -> Optional[str]:
    picked = store.claim_next(me, role=None, ttl=datetime.timedelta(minutes=10))
    if picked is None:
        return None
    nid, gen = picked
    store.renew(nid, me, gen=gen, ttl=600)
    try:
        store.complete(nid, gen=gen, status="done", actor=me, note="ok")
    except claimdag.StaleGeneration as e:
        current: Optional[int] = e.generation
        print(f"fenced off at {current}")
    node: claimdag.Node = store.get(nid)
    labels: tuple[str, ...] = node.labels
    created: int = node.created_at
    print(labels, created, node.to_dict()["status"], node.display, node.ready)
    return nid


def tour(store: claimdag.Store) -> None:
    a = store.upsert("a", kind="task", parent=None, role="", priority=0, estimate=1,
                     labels=(), resources=(), ref=None, max_attempts=None, workspace=None)
    b = store.upsert("b", parent=a)
    store.link(a, b, soft=False)
    store.unlink(a, b)
    gen: int = store.claim(a, "0" * 32, gen=None, ttl=None)
    gen = store.release(a, "0" * 32, gen)
    handed: list[tuple[str, int]] = store.reclaim(lease=None)
    nodes: list[claimdag.Node] = store.list(status=None, ready=None, holder=None)
    nxt: Optional[str] = store.next(role=None)
    gen = store.reopen(a)
    events: list[claimdag.Event] = store.log(a)
    picks: list[claimdag.Pick] = store.ready()
    settings: claimdag.Settings = store.config(max_attempts=3, default_ttl=60.0)
    report: claimdag.Report = store.check()
    print(handed, nodes, nxt, gen, events, picks, settings.max_attempts, report.ok)


def housekeeping(store: claimdag.Store) -> None:
    plan = {"nodes": [{"key": "a", "summary": "a"}, {"key": "b", "summary": "b", "deps": ["a"]}]}
    ids: list[tuple[str, str]] = store.import_plan(plan, workspace=None)
    ids = store.import_plan('{"nodes": []}')
    ids = store.import_plan(b'{"nodes": []}')
    moved: int = store.archive(ids[0][0], older_than=datetime.timedelta(days=1), workspace=None)
    moved = store.archive()
    status: str = store.unarchive(ids[0][0])
    gone: list[claimdag.Node] = store.list(archived=True, terminal=False)
    dot: str = store.graph(format="mermaid", all=True, workspace=None)
    print(moved, status, gone, dot)


def time_rules(store: claimdag.Store, me: str) -> None:
    later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
    a = store.upsert("later", not_before=later)
    b = store.upsert("soon", not_before="+90s")
    when: Optional[int] = store.get(a).not_before
    shown = store.get(b).display
    if shown == "scheduled":
        print(when)
    picked = store.claim_next(me, wait=datetime.timedelta(seconds=1))
    if picked is not None:
        gen: int = store.release(picked[0], me, picked[1], retry_in=30)
        print(gen)
    with store.lease_next(me, ttl=60, wait=0.5) as lease:
        if lease is not None:
            lease.release(retry_in=datetime.timedelta(minutes=5))
    s: claimdag.Settings = store.config(retry_delay=30, retry_delay_max=3600.0)
    delays: tuple[int, int] = (s.retry_delay_ms, s.retry_delay_max_ms)
    for event in store.watch(since=0, timeout=0.1):
        seq: int = event.seq
        print(seq, delays)


async def time_rules_async(store: claimdag.Store, me: str) -> None:
    picked: Optional[tuple[str, int]] = await store.aclaim_next(me, wait=1.0)
    print(picked)


def conversation(store: claimdag.Store, me: str) -> None:
    grant: Optional[claimdag.Grant] = store.claim_next(me, details=True)
    if grant is None:
        return
    inputs: dict[str, object] = grant.inputs
    checkpoint: Optional[str] = grant.progress
    asked: Optional[claimdag.CancelRequest] = store.renew(
        grant.id, me, gen=grant.generation, progress="half way"
    )
    if asked is not None:
        why: Optional[str] = asked.reason
        print(why, asked.by, asked.at)
    store.complete(grant.id, gen=grant.generation, output={"rows": 3}, note=checkpoint)
    gen: int = store.claim(grant.id, me)
    whole: claimdag.Grant = store.claim(grant.id, me, details=True)
    pair: Optional[tuple[str, int]] = store.claim_next(me)
    finished = store.complete_many(
        [(whole.id, gen), {"node": whole.id, "gen": gen, "output": [1]}]
    )
    first: str = finished[0][1]
    requested: bool = store.cancel(whole.id, reason="stop", actor=me, gen=None)
    node = store.get(whole.id)
    progress_at: Optional[int] = node.progress_at
    print(inputs, pair, first, requested, node.output, node.cancel_requested, progress_at)

    def heard(request: claimdag.CancelRequest) -> None:
        print(request.to_dict())

    with store.lease_next(me, on_cancel=heard) as lease:
        if lease is not None:
            lease.progress("step 1")
            now: Optional[claimdag.CancelRequest] = lease.progress("step 2", now=True)
            print(now, lease.cancel_requested, lease.inputs, lease.grant.progress_at)
            lease.on_cancel(heard)
            lease.complete("done", note=None, output={"ok": True})


async def conversation_async(store: claimdag.Store, me: str) -> None:
    async with store.alease_next(me, ttl=60) as lease:
        if lease is not None:
            lease.progress("step 1")
            asked: Optional[claimdag.CancelRequest] = await lease.progress_now("step 2")
            request: claimdag.CancelRequest = await lease.cancelled()
            print(asked, request.reason, lease.inputs)
            await lease.complete("cancelled", output=None)
