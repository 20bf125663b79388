"""AnthropicLLM's prompt caching, against a fake Messages API that caches and bills by
Anthropic's documented rules (``fake_anthropic``)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentkit import make_ctx
from agentkit.agents import Agent, ModelSettings
from agentkit.agents.cognition import ReActCognition
from agentkit.core.policies import Budget, meter, tracing
from agentkit.core.testing import FakeLLM, RecordingTracer, make_test_ctx
from agentkit.providers import AnthropicLLM
from agentkit.state.memory import FileMemory
from agentkit.tools import FileTool, LocalFiles, tool

from .conftest import Reply, WireServer
from .fake_anthropic import CachingAnthropic, count_tokens, serve

MODEL = "claude-sonnet-4-6"
# About 1,500 tokens by the fake's count: above the 1,024-token minimum on its own.
PROMPT = "You answer questions about cities, citing the census year each time. " * 90


@tool(side_effecting=False, idempotent=True)
def city_population(city: str) -> int:
    """Look up the most recent census population for a named city."""
    return {"lisbon": 545_000, "porto": 231_000}.get(city.lower(), 0)


@tool(side_effecting=False, idempotent=True)
def airport_code(city: str) -> str:
    """Look up the main airport's IATA code for a named city."""
    return {"lisbon": "LIS", "porto": "OPO"}.get(city.lower(), "?")


CENSUS_GUIDE = (
    "Look up the census records of a named city for one census year: the population, "
    "households, median age and the count of residents born abroad. "
    + "Years before the first census of the country, or after the latest one, are refused "
    "with the list of census years; a city with no record gives an empty result. " * 30
)


@tool(side_effecting=False, idempotent=True, description=CENSUS_GUIDE)
def census_records(city: str, year: int) -> str:
    return f"{city} {year}: no records"


TOOLS = [city_population, airport_code, census_records]


def react_answer(body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """Two tool turns, then an answer: the turn number is the count of assistant turns."""
    turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if turn < 2:
        name = ("city_population", "airport_code")[turn]
        return [{"type": "tool_use", "id": f"toolu_{turn}", "name": name,
                 "input": {"city": "Lisbon"}}], "tool_use"
    return [{"type": "text", "text": "Lisbon: 545,000 people, airport LIS."}], "end_turn"


def text_answer(text: str) -> Any:
    return lambda body: ([{"type": "text", "text": text}], "end_turn")


@dataclass
class Clock:
    now: float = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@contextmanager
def fake_server(answer: Any, clock: Clock) -> Iterator[tuple[CachingAnthropic, str]]:
    fake = CachingAnthropic(answer, clock=clock)
    with serve(fake) as url:
        yield fake, url


@pytest.fixture
def react(clock: Clock) -> Iterator[tuple[CachingAnthropic, str]]:
    with fake_server(react_answer, clock) as served:
        yield served


def llm(url: str, **options: Any) -> AnthropicLLM:
    return AnthropicLLM(api_key="test-key", base_url=url, max_retries=0, **options)


def agent(prompt: str = PROMPT, **options: Any) -> Agent:
    return Agent(name="atlas", model=MODEL, prompt=prompt,
                 cognition=ReActCognition(tools=TOOLS), **options)


def marks(body: dict[str, Any]) -> list[str]:
    """Where the request's cache_control marks are, in prefix order."""
    found = []
    for i, t in enumerate(body.get("tools") or []):
        if "cache_control" in t:
            found.append(f"tools[{i}]")
    system = body.get("system")
    if isinstance(system, list):
        for i, block in enumerate(system):
            if "cache_control" in block:
                found.append(f"system[{i}]")
    for i, message in enumerate(body["messages"]):
        content = message["content"]
        for j, block in enumerate(content if isinstance(content, list) else []):
            if "cache_control" in block:
                found.append(f"messages[{i}][{j}]")
    return found


def unmarked(value: Any) -> Any:
    """``value`` with every cache_control mark taken out."""
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [unmarked(v) for v in value]
    return value


def prefix_bytes(body: dict[str, Any], messages: int) -> bytes:
    """The request's tools, system and first ``messages`` messages as sent (key order
    kept), without cache marks."""
    part = {"tools": body.get("tools"), "system": body.get("system"),
            "messages": body["messages"][:messages]}
    return json.dumps(unmarked(part), ensure_ascii=False).encode()


async def test_a_react_run_marks_tools_system_and_the_moving_newest_message(
    react: tuple[CachingAnthropic, str],
) -> None:
    fake, url = react
    result = await agent().run("How big is Lisbon, and its airport?", make_test_ctx(llm=llm(url)))

    assert result.output == "Lisbon: 545,000 people, airport LIS."
    first, second, third = fake.requests
    assert marks(first) == ["tools[2]", "system[0]", "messages[0][0]"]
    assert marks(second) == ["tools[2]", "system[0]", "messages[0][0]", "messages[2][0]"]
    assert marks(third) == ["tools[2]", "system[0]", "messages[2][0]", "messages[4][0]"]
    assert first["tools"][2]["cache_control"] == {"type": "ephemeral"}
    assert first["system"] == [{"type": "text", "text": PROMPT,
                                "cache_control": {"type": "ephemeral"}}]
    # Each turn reads the whole previous request from the cache and writes only what's new.
    sizes = [sum(count_tokens(b) for b in fake._blocks(unmarked(r))) for r in fake.requests]
    assert [(b.cache_read, b.cache_write, b.input_tokens) for b in fake.bills] == [
        (0, sizes[0], 0), (sizes[0], sizes[1] - sizes[0], 0), (sizes[1], sizes[2] - sizes[1], 0),
    ]
    assert result.usage.cache_read_tokens == sizes[0] + sizes[1]
    assert result.usage.cache_write_tokens == sizes[2]


async def test_the_prefix_is_byte_identical_across_turns_and_runs(
    react: tuple[CachingAnthropic, str],
) -> None:
    fake, url = react
    await agent().run("How big is Lisbon, and its airport?", make_test_ctx(llm=llm(url)))
    await agent().run("How big is Lisbon, and its airport?", make_test_ctx(llm=llm(url)))

    first_run, second_run = fake.requests[:3], fake.requests[3:]
    for run in (first_run, second_run):
        for earlier, later in itertools.pairwise(run):
            shared = len(earlier["messages"])
            assert prefix_bytes(later, shared) == prefix_bytes(earlier, shared)
    for a, b in zip(first_run, second_run, strict=True):
        assert fake.raw[fake.requests.index(a)] == fake.raw[fake.requests.index(b)]
    # The second run reads its first request whole: tools, system and task were cached.
    assert fake.bills[3].cache_write == 0
    assert fake.bills[3].cache_read == fake.bills[0].cache_write


async def test_tools_are_sent_sorted_by_name_with_stable_json(
    react: tuple[CachingAnthropic, str],
) -> None:
    fake, url = react
    shuffled = Agent(name="atlas", model=MODEL, prompt=PROMPT,
                     cognition=ReActCognition(tools=TOOLS[::-1]))
    await agent().run("How big is Lisbon?", make_test_ctx(llm=llm(url)))
    await shuffled.run("How big is Lisbon?", make_test_ctx(llm=llm(url)))

    assert [t["name"] for t in fake.requests[0]["tools"]] == [
        "airport_code", "census_records", "city_population",
    ]
    assert json.dumps(fake.requests[0]["tools"]) == json.dumps(fake.requests[3]["tools"])


async def test_a_single_call_marks_the_system_prompt_and_the_task(clock: Clock) -> None:
    with fake_server(text_answer("Lisbon."), clock) as (fake, url):
        single = Agent(name="atlas", model=MODEL, prompt=PROMPT)
        result = await single.run("Capital of Portugal?", make_test_ctx(llm=llm(url)))

        assert result.output == "Lisbon."
        assert marks(fake.requests[0]) == ["system[0]", "messages[0][0]"]
        assert "tools" not in fake.requests[0]


async def test_no_mark_is_placed_on_a_prefix_below_the_models_minimum(clock: Clock) -> None:
    with fake_server(text_answer("Lisbon."), clock) as (fake, url):
        short = Agent(name="atlas", model=MODEL, prompt="You answer briefly.")
        await short.run("Capital of Portugal?", make_test_ctx(llm=llm(url)))
        # Haiku 4.5 caches nothing under 4,096 tokens: PROMPT (about 1,500) is too short.
        haiku = Agent(name="atlas", model="claude-haiku-4-5", prompt=PROMPT)
        await haiku.run("Capital of Portugal?", make_test_ctx(llm=llm(url)))

        assert b"cache_control" not in fake.raw[0]
        assert b"cache_control" not in fake.raw[1]
        assert fake.requests[0]["system"] == "You answer briefly."


async def test_cache_none_sends_no_marks_and_the_system_prompt_as_a_string(
    react: tuple[CachingAnthropic, str],
) -> None:
    fake, url = react
    result = await agent().run("How big is Lisbon?", make_test_ctx(llm=llm(url, cache=None)))

    assert result.output == "Lisbon: 545,000 people, airport LIS."
    assert all(b"cache_control" not in raw for raw in fake.raw)
    assert fake.requests[0]["system"] == PROMPT
    assert [(b.cache_read, b.cache_write) for b in fake.bills] == [(0, 0)] * 3
    assert repr(llm(url, cache=None)) == "AnthropicLLM(cache=None)"


async def test_a_one_hour_ttl_is_sent_and_priced_at_twice_the_input_price(
    react: tuple[CachingAnthropic, str], clock: Clock,
) -> None:
    fake, url = react
    ctx = make_test_ctx(llm=llm(url, cache_ttl="1h"))
    result = await agent().run("How big is Lisbon?", ctx)

    assert fake.requests[0]["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    bill = fake.bills[0]
    assert result.steps == 3
    first_cost = (bill.cache_write * 6.0 + bill.output_tokens * 15.0) / 1e6
    total = sum(
        (b.input_tokens * 3.0 + b.cache_read * 0.3 + b.cache_write * 6.0
         + b.output_tokens * 15.0) / 1e6
        for b in fake.bills
    )
    assert result.usage.cost_usd == pytest.approx(total)
    assert first_cost > 0
    # Twenty minutes later a 1h entry is still there, a 5m one would not be.
    clock.now += 20 * 60
    await agent().run("How big is Lisbon?", make_test_ctx(llm=llm(url, cache_ttl="1h")))
    assert fake.bills[3].cache_write == 0


async def test_a_five_minute_entry_expires_and_is_written_again(
    react: tuple[CachingAnthropic, str], clock: Clock,
) -> None:
    fake, url = react
    await agent().run("How big is Lisbon?", make_test_ctx(llm=llm(url)))
    clock.now += 6 * 60
    await agent().run("How big is Lisbon?", make_test_ctx(llm=llm(url)))

    assert fake.bills[3].cache_read == 0
    assert fake.bills[3].cache_write == fake.bills[0].cache_write


def test_bad_cache_settings_say_what_is_accepted() -> None:
    with pytest.raises(ValueError) as bad_mode:
        AnthropicLLM(api_key="k", cache="always")  # type: ignore[arg-type]
    assert str(bad_mode.value) == (
        "AnthropicLLM(cache=...) must be 'auto' (prompt caching on) or None (off), "
        "got 'always'"
    )
    with pytest.raises(ValueError) as bad_ttl:
        AnthropicLLM(api_key="k", cache_ttl="10m")  # type: ignore[arg-type]
    assert str(bad_ttl.value) == "AnthropicLLM(cache_ttl=...) must be '5m' or '1h', got '10m'"


async def test_memory_recall_goes_after_the_stable_system_prompt(
    react: tuple[CachingAnthropic, str], tmp_path: Path,
) -> None:
    fake, url = react
    notes = tmp_path / "notes"
    (notes / "memories").mkdir(parents=True)
    (notes / "memories" / "lisbon.md").write_text("Lisbon census: 2021.\n")
    (notes / "memories" / "porto.md").write_text("Porto census: 2021.\n")
    remembering = agent(memory=FileMemory(LocalFiles(notes)))

    await remembering.run("How big is Lisbon?", make_test_ctx(llm=llm(url)))
    await remembering.run("How big is Porto?", make_test_ctx(llm=llm(url)))

    lisbon, porto = fake.requests[0], fake.requests[3]
    assert lisbon["system"][0] == {"type": "text", "text": PROMPT,
                                   "cache_control": {"type": "ephemeral"}}
    assert lisbon["system"][1]["text"].startswith("\n\nNotes recalled from your memory")
    assert "Lisbon census" in lisbon["system"][1]["text"]
    assert "Porto census" in porto["system"][1]["text"]
    assert "cache_control" not in lisbon["system"][1]
    assert marks(fake.requests[1]) == [
        "tools[2]", "system[0]", "messages[0][0]", "messages[2][0]",
    ]
    # The second run's recall differs, yet it reads tools + the stable prompt from cache.
    stable = sum(count_tokens(b) for b in fake._blocks(unmarked(lisbon))[:len(TOOLS) + 1])
    assert fake.bills[3].cache_read == stable


async def test_structured_output_with_a_repair_turn_keeps_its_marks(clock: Clock) -> None:
    answers = iter(['{"city": "Lisbon"', '{"city": "Lisbon", "people": 545000}'])

    def answer(body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        return [{"type": "text", "text": next(answers)}], "end_turn"

    @dataclass
    class Census:
        city: str
        people: int

    with fake_server(answer, clock) as (fake, url):
        structured = Agent(name="atlas", model=MODEL, prompt=PROMPT, output=Census)
        result = await structured.run("How big is Lisbon?", make_test_ctx(llm=llm(url)))

        assert result.output == Census("Lisbon", 545000)
        assert marks(fake.requests[0]) == ["system[0]", "messages[0][0]"]
        assert marks(fake.requests[1]) == ["system[0]", "messages[0][0]", "messages[2][0]"]
        assert fake.bills[1].cache_read == fake.bills[0].cache_write


async def test_filetool_keeps_its_native_declaration_with_a_mark(
    clock: Clock, tmp_path: Path,
) -> None:
    def answer(body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        if len(body["messages"]) == 1:
            return [{"type": "tool_use", "id": "toolu_1", "name": "memory",
                     "input": {"command": "create", "path": "/memories/ada.md",
                               "file_text": "Ada drinks tea.\n"}}], "tool_use"
        return [{"type": "text", "text": "Saved."}], "end_turn"

    with fake_server(answer, clock) as (fake, url):
        remembering = Agent(name="assistant", model=MODEL, prompt=PROMPT,
                            cognition=ReActCognition(
                                tools=[FileTool(LocalFiles(tmp_path)), census_records]))
        result = await remembering.run("Ada drinks tea.", make_test_ctx(llm=llm(url)))

        assert result.output == "Saved."
        assert fake.requests[0]["tools"][1] == {"type": "memory_20250818", "name": "memory",
                                                "cache_control": {"type": "ephemeral"}}
        assert (tmp_path / "ada.md").read_text() == "Ada drinks tea.\n"
        assert fake.bills[1].cache_read == fake.bills[0].cache_write


async def test_never_more_than_four_marks(
    react: tuple[CachingAnthropic, str], tmp_path: Path,
) -> None:
    """Tools, stable system, recall and two message anchors would be five places; the
    recall block is never marked, so four is the most a request carries."""
    fake, url = react
    (tmp_path / "memories").mkdir()
    (tmp_path / "memories" / "lisbon.md").write_text("Lisbon census: 2021.\n")
    remembering = agent(memory=FileMemory(LocalFiles(tmp_path)))
    await remembering.run("How big is Lisbon?", make_test_ctx(llm=llm(url)))

    assert [len(marks(body)) for body in fake.requests] == [3, 4, 4]
    assert all(bill.cache_read or bill.cache_write for bill in fake.bills)


async def test_the_fake_refuses_a_fifth_mark(clock: Clock) -> None:
    """The limit the provider enforces, so the test above means something."""
    with fake_server(text_answer("x"), clock) as (fake, _):
        body = {"model": MODEL, "messages": [{"role": "user", "content": [
            {"type": "text", "text": str(i), "cache_control": {"type": "ephemeral"}}
            for i in range(5)]}]}
        status, reply, _ = fake.handle(json.dumps(body).encode())
        assert (status, reply["error"]["message"]) == (
            400, "A maximum of 4 blocks with cache_control may be provided. Found 5.")


async def test_cache_usage_shows_on_spans_and_in_the_result(
    react: tuple[CachingAnthropic, str],
) -> None:
    fake, url = react
    tracer = RecordingTracer()
    budget = Budget(max_cost_usd=1.0)
    ctx = make_test_ctx(llm=llm(url), tracer=tracer, chat_middleware=[tracing(), meter()],
                        budget=budget)
    result = await agent().run("How big is Lisbon?", ctx)

    chats = tracer.named(f"chat {MODEL}")
    assert [s.attributes.get("gen_ai.usage.cache_read.input_tokens", 0) for s in chats] == [
        b.cache_read for b in fake.bills
    ]
    assert [s.attributes.get("gen_ai.usage.cache_creation.input_tokens", 0) for s in chats] == [
        b.cache_write for b in fake.bills
    ]
    (run_span,) = tracer.named("invoke_agent atlas")
    assert run_span.attributes["gen_ai.usage.cache_read.input_tokens"] == sum(
        b.cache_read for b in fake.bills)
    assert run_span.attributes["gen_ai.usage.cache_creation.input_tokens"] == sum(
        b.cache_write for b in fake.bills)
    expected = sum(
        (b.input_tokens * 3.0 + b.cache_read * 0.3 + b.cache_write * 3.75
         + b.output_tokens * 15.0) / 1e6
        for b in fake.bills
    )
    assert result.usage.cost_usd == pytest.approx(expected)
    assert budget.spent_usd == pytest.approx(expected)


async def test_a_reply_that_splits_writes_by_lifetime_is_priced_per_lifetime(
    wire: WireServer,
) -> None:
    wire.reply(Reply(body={
        "id": "msg_1", "type": "message", "role": "assistant", "model": MODEL,
        "content": [{"type": "text", "text": "Lisbon."}], "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 4, "cache_read_input_tokens": 2000,
                  "cache_creation_input_tokens": 1500,
                  "cache_creation": {"ephemeral_5m_input_tokens": 500,
                                     "ephemeral_1h_input_tokens": 1000}},
    }))
    single = Agent(name="atlas", model=MODEL, prompt="You answer briefly.")
    result = await single.run("Capital?", make_test_ctx(llm=llm(wire.url)))

    usage = result.usage
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (2000, 1500)
    assert usage.cost_usd == pytest.approx(
        (10 * 3.0 + 4 * 15.0 + 2000 * 0.3 + 500 * 3.75 + 1000 * 6.0) / 1e6
    )


async def test_writes_the_reply_says_were_five_minute_are_priced_so_under_a_1h_setting(
    wire: WireServer,
) -> None:
    wire.reply(Reply(body={
        "id": "msg_1", "type": "message", "role": "assistant", "model": MODEL,
        "content": [{"type": "text", "text": "Lisbon."}], "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 1000,
                  "cache_creation": {"ephemeral_5m_input_tokens": 1000,
                                     "ephemeral_1h_input_tokens": 0}},
    }))
    single = Agent(name="atlas", model=MODEL, prompt="You answer briefly.")
    result = await single.run("Capital?", make_test_ctx(llm=llm(wire.url, cache_ttl="1h")))
    assert result.usage.cost_usd == pytest.approx(1000 * 3.75 / 1e6)


@pytest.mark.parametrize("routed", [False, True], ids=["one provider", "routed"])
async def test_a_one_hour_cache_run_stays_under_its_money_ceiling(
    clock: Clock, routed: bool
) -> None:
    """A 1h cache write costs 2x input, not the 5m rate's 1.25x: the meter reserves what
    the provider will write, so the ceiling holds, also behind make_ctx(providers=...)."""
    single = Agent(name="atlas", model=f"anthropic:{MODEL}" if routed else MODEL,
                   prompt=PROMPT, settings=ModelSettings(max_tokens=50))

    def context(url: str, budget: Budget) -> Any:
        anthropic = llm(url, cache_ttl="1h")
        if routed:
            return make_ctx(providers={"anthropic": anthropic, "google": FakeLLM()},
                            chat_middleware=[meter()], budget=budget)
        return make_test_ctx(llm=anthropic, chat_middleware=[meter()], budget=budget)

    with fake_server(text_answer("Lisbon."), clock) as (fake, url):
        # The prompt (about 1,600 tokens) written at 1h costs about $0.0097; at the 5m
        # rate the call would reserve $0.0068 and be let through.
        tight = Budget(max_cost_usd=0.008)
        refused = await single.run("Capital?", context(url, tight))
        assert (refused.stop_reason, tight.spent_usd, fake.requests) == (
            "budget_exceeded", 0.0, [])

        roomy = Budget(max_cost_usd=0.011)
        answered = await single.run("Capital?", context(url, roomy))
    (bill,) = fake.bills
    assert (answered.output, bill.write_ttl, bill.cache_write > 1500) == ("Lisbon.", "1h", True)
    real = (bill.input_tokens * 3.0 + bill.cache_write * 6.0 + bill.output_tokens * 15.0) / 1e6
    assert roomy.spent_usd == pytest.approx(real)
    assert 0.008 < roomy.spent_usd <= 0.011
