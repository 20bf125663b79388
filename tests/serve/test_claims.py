"""Decision claims on a store: one taker per suspension, a claim left by a dead server
taken over once its lease ran out and only while the run still waits where it was
claimed, a refused decision's claim given back."""

from __future__ import annotations

import pytest

from agentkit.core.contracts.errors import RunNotResumable
from agentkit.core.contracts.runs import RunRecord
from agentkit.serve.claims import DecisionClaims
from agentkit.state.stores.memory import InMemoryStore

RECORD = RunRecord(run_id="r1", agent="support", status="suspended", scope="1:1",
                   created=1.0, updated=2.0)
TAKEN = "run 'r1' cannot be resumed: another decision (or a cancel) was accepted first"


class Workflow:
    """Where a run's workflow waits, as the engine would ask it: the suspension, or
    None once it does not wait; and every question asked."""

    def __init__(self, waits_at: int | None) -> None:
        self.waits_at = waits_at
        self.asked: list[int | None] = []

    async def still_waiting(self, run_id: str, at: int | None) -> bool:
        self.asked.append(at)
        return self.waits_at is not None and (at is None or at == self.waits_at)


def claims(store: InMemoryStore, workflow: Workflow, owner: str, lease: float
           ) -> DecisionClaims:
    return DecisionClaims(store, owner=owner, lease=lease,
                          still_waiting=workflow.still_waiting)


async def test_a_claim_within_its_lease_is_its_owners_alone() -> None:
    store, workflow = InMemoryStore(), Workflow(waits_at=1)
    await claims(store, workflow, "a", 30.0).take(RECORD, "decision", 1)
    with pytest.raises(RunNotResumable) as refused:
        await claims(store, workflow, "b", 30.0).take(RECORD, "decision", 1)
    assert str(refused.value) == TAKEN
    assert workflow.asked == []  # a live claim is not second-guessed


async def test_past_its_lease_a_claim_is_taken_over_while_the_run_waits_where_claimed(
) -> None:
    store, workflow = InMemoryStore(), Workflow(waits_at=1)
    await claims(store, workflow, "dead", 0.0).take(RECORD, "decision", 1)
    await claims(store, workflow, "b", 0.0).take(RECORD, "decision", 1)
    assert workflow.asked == [1]
    held, _ = await store.get_versioned("agentkit:serve:claim:r1:2.0")
    assert (held["owner"], held["by"], held["at"]) == ("b", "decision", 1)
    # Taken over once: the next must take it over from b, and b's lease ran out too.
    await claims(store, workflow, "c", 0.0).take(RECORD, "cancelled by ana", 1)


async def test_a_claim_whose_decision_reached_the_run_is_never_taken_over() -> None:
    store = InMemoryStore()
    moved_on, ended = Workflow(waits_at=2), Workflow(waits_at=None)
    await claims(store, moved_on, "slow", 0.0).take(RECORD, "decision", 1)
    for workflow in (moved_on, ended):
        with pytest.raises(RunNotResumable) as refused:
            await claims(store, workflow, "b", 0.0).take(RECORD, "decision", 1)
        assert str(refused.value) == TAKEN
        assert workflow.asked == [1]


async def test_a_released_claim_is_taken_at_once_and_a_stale_release_changes_nothing(
) -> None:
    store, workflow = InMemoryStore(), Workflow(waits_at=1)
    a = claims(store, workflow, "a", 30.0)
    version = await a.take(RECORD, "decision", 1)
    await a.release(RECORD, version)  # the run refused a's decision
    b = claims(store, workflow, "b", 30.0)
    await b.take(RECORD, "decision", 1)
    await a.release(RECORD, version)  # too late: b holds it now
    with pytest.raises(RunNotResumable):
        await claims(store, workflow, "c", 30.0).take(RECORD, "decision", 1)
    assert workflow.asked == []


async def test_a_claim_of_an_earlier_version_is_taken_over_while_the_run_waits() -> None:
    store, workflow = InMemoryStore(), Workflow(waits_at=1)
    # What servers before leases wrote: the taker's name, no time, no suspension.
    await store.set_versioned("agentkit:serve:claim:r1:2.0", "decision", expected_version=0)
    await claims(store, workflow, "b", 30.0).take(RECORD, "decision", 1)
    assert workflow.asked == [None]


def test_a_lease_is_a_number_of_seconds() -> None:
    with pytest.raises(ValueError) as refused:
        claims(InMemoryStore(), Workflow(None), "a", -1)
    assert str(refused.value) == "a claim lease is a number of seconds, at least 0, got -1"
