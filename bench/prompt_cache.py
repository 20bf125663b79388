"""What prompt caching saves: billed input cost of scripted ReAct runs with
``AnthropicLLM(cache="auto")`` against ``cache=None``.

The model is ``tests/providers/fake_anthropic.py``: a local HTTP server that speaks the
Messages API, caches prompt prefixes by Anthropic's documented rules (prefix match up
to each breakpoint with a twenty-block look-back, minimum cacheable length, TTL, at
most four breakpoints) and bills every request as Anthropic would. Run with
``.venv/bin/python bench/prompt_cache.py``; figures are in bench/README.md.

Each run has about 3,000 tokens of tools and system prompt (by the fake's count) and
tool results of a few hundred tokens. Rows: a ten-turn run, a three-turn run, and twenty
concurrent ten-turn runs of one agent, whose replies take ``--latency`` seconds so the
runs overlap as real ones do (an entry becomes visible only when the request that wrote
it has been answered).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "providers"))

from fake_anthropic import CachingAnthropic, count_tokens, serve  # noqa: E402

from agentkit.agents import Agent  # noqa: E402
from agentkit.agents.cognition import ReActCognition  # noqa: E402
from agentkit.core.testing import make_test_ctx  # noqa: E402
from agentkit.providers import AnthropicLLM  # noqa: E402
from agentkit.tools import tool  # noqa: E402

MODEL = "claude-sonnet-4-6"
INPUT_PRICE = 3.0  # US dollars per million input tokens (Sonnet)

_RULES = (
    "Quote figures with their source and year. Prefer the most recent census. When two "
    "sources disagree, say so and give both. Never guess a number you did not look up. "
)
PROMPT = "You are a research assistant for city statistics. " + _RULES * 34

_DETAIL = (
    "The answer is a JSON object whose fields are documented by the statistics office; "
    "missing values are null, never zero, and every figure carries its reference year. "
)


@tool(side_effecting=False, idempotent=True,
      description="Census population, households and age structure of a city. " + _DETAIL * 6)
def census(city: str, year: int = 2021) -> dict[str, Any]:
    return _record("census", city, year)


@tool(side_effecting=False, idempotent=True,
      description="Employment, unemployment and income figures for a city. " + _DETAIL * 6)
def economy(city: str, year: int = 2021) -> dict[str, Any]:
    return _record("economy", city, year)


@tool(side_effecting=False, idempotent=True,
      description="Housing stock, rents and prices per square metre in a city. " + _DETAIL * 6)
def housing(city: str, year: int = 2021) -> dict[str, Any]:
    return _record("housing", city, year)


@tool(side_effecting=False, idempotent=True,
      description="Public transport lines, ridership and commute times of a city. " + _DETAIL * 6)
def transport(city: str, year: int = 2021) -> dict[str, Any]:
    return _record("transport", city, year)


@tool(side_effecting=False, idempotent=True,
      description="Tourism: visitors, overnight stays and hotel beds of a city. " + _DETAIL * 6)
def tourism(city: str, year: int = 2021) -> dict[str, Any]:
    return _record("tourism", city, year)


TOOLS = [census, economy, housing, transport, tourism]


def _record(kind: str, city: str, year: int) -> dict[str, Any]:
    # A few hundred tokens of deterministic figures, as a real statistics API returns.
    rows = {f"{kind}_indicator_{i:02d}": {"value": (len(city) * 7919 + i * 104729) % 99991,
                                          "unit": "count", "year": year} for i in range(14)}
    return {"city": city, "source": f"{kind} office", **rows}


def script(turns: int) -> Any:
    """The model: ``turns - 1`` tool calls (one per turn), then an answer built from what
    it read, so a difference in what it was sent would change the answer."""

    def answer(body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        task = body["messages"][0]["content"][0]["text"]
        if turn < turns - 1:
            name = TOOLS[turn % len(TOOLS)].name
            return [
                {"type": "text", "text": f"Checking {name}."},
                {"type": "tool_use", "id": f"toolu_{turn}", "name": name,
                 "input": {"city": task.split()[-1].rstrip("?"), "year": 2021}},
            ], "tool_use"
        results = [b for m in body["messages"] for b in m["content"]
                   if b.get("type") == "tool_result"]
        size = sum(len(b["content"]) for b in results)
        return [{"type": "text",
                 "text": f"Read {len(results)} tool results ({size} characters)."}], "end_turn"

    return answer


def agent() -> Agent:
    return Agent("statistician", MODEL, PROMPT,
                 cognition=ReActCognition(tools=TOOLS, max_iterations=20))


async def run_many(url: str, cache: Any, tasks: list[str]) -> list[Any]:
    provider = AnthropicLLM(api_key="bench", base_url=url, max_retries=0, cache=cache)
    try:
        return list(await asyncio.gather(
            *(agent().run(task, make_test_ctx(llm=provider)) for task in tasks)
        ))
    finally:
        await provider.client.close()


def measure(turns: int, runs: int, latency: float) -> dict[str, Any]:
    tasks = [f"Summarise the statistics of city number {i} Lisbon{i}?" for i in range(runs)]
    figures: dict[str, Any] = {}
    for cache in ("auto", None):
        fake = CachingAnthropic(script(turns), latency=latency)
        with serve(fake) as url:
            results = asyncio.run(run_many(url, cache, tasks))
        figures[str(cache)] = {
            "cost": fake.input_cost(INPUT_PRICE),
            "answers": [r.output for r in results],
            "steps": sum(r.steps for r in results),
            "read": sum(b.cache_read for b in fake.bills),
            "write": sum(b.cache_write for b in fake.bills),
            "plain": sum(b.input_tokens for b in fake.bills),
            "prefix": sum(count_tokens(b) for b in fake._blocks(fake.requests[0])[:len(TOOLS) + 1]),
        }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.05,
                        help="seconds each concurrent reply takes (default 0.05)")
    args = parser.parse_args()
    rows = [("ten-turn run", 10, 1, 0.0), ("three-turn run", 3, 1, 0.0),
            ("20 concurrent ten-turn runs", 10, 20, args.latency)]
    print(f"{'run':<30}{'tools+system':>13}{'uncached $':>12}{'cached $':>11}{'ratio':>8}"
          f"{'read':>9}{'written':>9}{'full':>8}  answers")
    for label, turns, runs, latency in rows:
        f = measure(turns, runs, latency)
        on, off = f["auto"], f["None"]
        same = "identical" if on["answers"] == off["answers"] else "DIFFERENT"
        print(f"{label:<30}{on['prefix']:>13,}{off['cost']:>12.5f}{on['cost']:>11.5f}"
              f"{on['cost'] / off['cost']:>8.1%}{on['read']:>9,}{on['write']:>9,}"
              f"{on['plain']:>8,}  {same}")


if __name__ == "__main__":
    main()
