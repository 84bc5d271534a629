"""Gates through the Python module: a gate is never claimed, `approve` and `reject` (through
`Store.call`) decide it at its generation, and a stale decision is refused."""

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
