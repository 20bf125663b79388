"""Issue 23: every accepted decision (and a cancel) is in audit()'s log with the deciding
principal's name, beside the run's own decision log, on both engines."""

from __future__ import annotations

from typing import Any

from agentkit.core.policies import audit, tracing
from agentkit.core.policies.audit import DecisionRecord
from agentkit.core.testing import make_test_ctx
from tests.serve.served import (
    HOME,
    MakeApp,
    bearer,
    decide_at_once,
    sse,
    waiting_refund,
)
from tests.serve.test_api import (  # noqa: F401  (the fixtures, on every backend)
    backend,
    make_app,
    store,
)

ANA = bearer("tok-ana")


def audited(llm: Any, kept: Any) -> Any:
    return lambda: make_test_ctx(llm=llm, store=kept, autonomy="gated", scope=HOME,
                                 tool_middleware=[tracing(), audit()],
                                 chat_middleware=[tracing()])


def decisions_in(records: list[Any]) -> list[tuple[str, str | None, str, str]]:
    return [(r.run_id, r.call_id, r.kind, r.by) for r in records
            if isinstance(r, DecisionRecord)]


async def test_the_winning_decision_is_in_the_audit_log_and_the_losing_one_is_not(
    store: Any, make_app: MakeApp  # noqa: F811
) -> None:
    async with waiting_refund(make_app, store, context=audited) as (_, http):
        winner, loser = await decide_at_once(http, "r1", {"c1": "approve"})
        assert (winner.status_code, loser.status_code) == (202, 409)
        suspended = await sse(http, "/v1/runs/r1/events")
        await sse(http, "/v1/runs/r1/events", last=suspended[-1]["id"])
        run = (await http.get("/v1/runs/r1", headers=ANA)).json()
        assert [(d["call_id"], d["decision"], d["by"]) for d in run["decisions"]] == [
            ("c1", "approve", "ana")]
    records = await store.list("audit")
    assert decisions_in(records) == [("r1", "c1", "approve", "ana")]
    [decided] = [r for r in records if isinstance(r, DecisionRecord)]
    assert (decided.scope, decided.time) == (HOME.key(), run["decisions"][0]["at"])
    # Beside the refund the decision let run (a gated call waits before audit() sees it).
    assert sorted((type(r).__name__, r.call_id) for r in records) == [
        ("AuditRecord", "c1"), ("DecisionRecord", "c1")]


async def test_a_cancel_is_in_the_audit_log_with_who_cancelled(
    store: Any, make_app: MakeApp  # noqa: F811
) -> None:
    async with waiting_refund(make_app, store, context=audited) as (_, http):
        cancelled = await http.post("/v1/runs/r1/cancel", headers=ANA)
        assert cancelled.status_code == 202
        again = await http.post("/v1/runs/r1/cancel", headers=ANA)
        assert again.status_code == 409
        late = await http.post("/v1/runs/r1/decisions", json={"decisions": {"c1": "approve"}},
                               headers=ANA)
        assert late.status_code == 409
    assert decisions_in(await store.list("audit")) == [("r1", None, "cancel", "ana")]
