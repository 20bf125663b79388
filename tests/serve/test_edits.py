"""Edited arguments are checked against the tool's schema before a run resumes: a value
the tool cannot take is 422 naming the problem, the run still waits, nothing runs."""

from __future__ import annotations

from pathlib import Path

import httpx2

from agentkit.state.stores.sqlite import SQLiteStore
from tests.serve.served import (
    TOKENS,
    ByTask,
    Shop,
    bearer,
    context_for,
    create_app,
    nested_turns,
    refund_turns,
    served,
)

ANA = bearer("tok-ana")


async def test_an_edit_that_does_not_fit_the_schema_is_422_and_a_fitting_one_runs(
    tmp_path: Path,
) -> None:
    shop = Shop()
    llm = ByTask({"refund A": refund_turns("A", 10), **nested_turns("C")})
    store = SQLiteStore(tmp_path / "runs.db")
    app = create_app([shop.support], context=context_for(llm, store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url, headers=ANA) as http:
        for run_id, task in (("ra", "refund A"), ("rc", "delegate C")):
            await http.post("/v1/agents/support/runs",
                            json={"input": task, "run_id": run_id, "wait": True})
        refused = await http.post("/v1/runs/ra/decisions", json={
            "decisions": {"c1": {"order_id": "A", "usd": "lots"}}})
        assert refused.status_code == 422
        assert refused.json()["error"] == {
            "type": "invalid_arguments",
            "message": "run 'ra': the edited arguments of call 'c1' do not fit the tool's "
                       "schema: $.usd: expected integer, got string; nothing ran and the "
                       "run still waits",
            "problems": {"c1": ["$.usd: expected integer, got string"]},
        }
        nested = await http.post("/v1/runs/rc/decisions", json={
            "decisions": {"c1/s1": {"order_id": "C"}}})
        assert (nested.status_code, nested.json()["error"]["problems"]) == (
            422, {"c1/s1": ["$: missing required property ['usd']"]})
        assert (await http.get("/v1/runs/ra")).json()["status"] == "suspended"
        assert shop.refunds == []
        edited = await http.post("/v1/runs/ra/decisions", json={
            "decisions": {"c1": {"order_id": "A", "usd": 7}}})
        assert edited.status_code == 202
        await http.post("/v1/agents/support/runs", json={"input": "refund A", "run_id": "ra",
                                                         "wait": True})
    assert shop.refunds == [("A", 7)]
    store.close()
