"""Gates and the parked lane through the Python module: a gate is never claimed, `approve`
and `reject` (as methods and through `Store.call`) decide it at its generation, a stale
decision is refused; a parked node is retried."""

import claimdag
import pytest
from conftest import ME


def test_a_gate_is_decided_at_its_generation(store: claimdag.Store) -> None:
    gate = store.upsert("sign off", kind="gate")
    with pytest.raises(claimdag.NotReady):
        store.claim(gate, ME)
    assert store.call("approve", node=gate, gen=1, note="ok") == {"id": gate, "status": "done"}
    assert store.get(gate).status == "done"
    gen = store.reopen(gate)
    with pytest.raises(claimdag.StaleGeneration):
        store.call("reject", node=gate, gen=1)
    assert store.call("reject", node=gate, gen=gen)["status"] == "failed"


def test_the_methods_decide_gates_and_retry_parked_nodes(store: claimdag.Store) -> None:
    gate = store.upsert("ship it", kind="gate")
    assert store.approve(gate, 1, note="yes", actor=ME) == "done"
    with pytest.raises(claimdag.Terminal):
        store.reject(gate, 1)
    store.config(max_attempts=1)
    flaky = store.upsert("flaky")
    gen = store.release(flaky, ME, store.claim(flaky, ME))
    assert store.get(flaky).display == "parked"
    with pytest.raises(claimdag.AttemptsExhausted):
        store.claim(flaky, ME)
    assert store.retry(flaky, gen) == gen + 1
    assert store.get(flaky).display == "ready"
    with pytest.raises(claimdag.InvalidInput):
        store.retry(flaky, gen + 1)
