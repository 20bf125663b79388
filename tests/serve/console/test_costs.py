"""The Costs page sums the run registry with one aggregate, and only over the runs the
signed-in principal may see: another tenant's usage and cost never reach it."""

from __future__ import annotations

import re
from pathlib import Path

import httpx2

from agentkit.core.contracts.runs import RunRecord
from agentkit.core.contracts.types import Usage
from agentkit.state.stores.sqlite import SQLiteStore
from tests.serve.console.test_pages import sign_in
from tests.serve.served import HOME, TOKENS, ByTask, Shop, context_for, create_app, served

DEC_1 = 1_764_547_200.0  # 2025-12-01 00:00 UTC


def run(run_id: str, created: float, scope: str, cost: float, tokens: int,
        agent: str = "support") -> RunRecord:
    return RunRecord(run_id=run_id, agent=agent, status="complete", scope=scope,
                     created=created, updated=created, cost_usd=cost,
                     usage=Usage(input_tokens=tokens, output_tokens=1, cache_read_tokens=tokens))


def rows(page: str, heading: str) -> list[list[str]]:
    """The cells of the table under ``heading``."""
    table = page.split(f"<h2>{heading}</h2>", 1)[1].split("</table>", 1)[0]
    return [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", table)
            if "<td>" in row]


async def test_the_costs_page_sums_only_the_runs_the_principal_may_see(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    for record in (
        run("h1", DEC_1 + 5, HOME.key(), 0.25, 100),
        run("h2", DEC_1 + 86400, HOME.key(), 0.5, 300, agent="billing"),
        run("o1", DEC_1 + 7, "org9:dom9", 2.0, 1000),
    ):
        await store.put_run(record)
    app = create_app([Shop().support], auth=TOKENS, context=context_for(ByTask({}), store))
    async with served(app) as url:
        async with httpx2.AsyncClient(base_url=url) as ana:
            await sign_in(ana, "tok-ana")
            everything = (await ana.get("/costs")).text
        async with httpx2.AsyncClient(base_url=url) as other:
            await sign_in(other, "tok-other")
            theirs = (await other.get("/costs")).text
    store.close()
    assert "<p>3 runs, $2.7500; cache share of input tokens: <strong>50%</strong>.</p>" in (
        everything)
    assert rows(everything, "Per agent") == [
        ["billing", "1", "$0.5000", "300", "1", "300", "50%"],
        ["support", "2", "$2.2500", "1,100", "2", "1,100", "50%"],
    ]
    assert rows(everything, "Per day (UTC)") == [
        ["2025-12-02", "1", "$0.5000", "300", "1", "300", "50%"],
        ["2025-12-01", "2", "$2.2500", "1,100", "2", "1,100", "50%"],
    ]
    assert "<p>1 runs, $2.0000; cache share" in theirs
    assert "<p class=\"statuses\">3 complete.</p>" in everything
    assert rows(theirs, "Per agent") == [["support", "1", "$2.0000", "1,000", "1", "1,000", "50%"]]
    assert "billing" not in theirs and "$0.2500" not in theirs
