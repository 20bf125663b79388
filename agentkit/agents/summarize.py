"""Summarize: a history policy that replaces a conversation's older turns by a summary.

History is cut into turns as :class:`~agentkit.agents.history.HistoryPolicy` cuts it
(a turn starts at a user message), so a summary never cuts inside a turn and a tool
call is never separated from its result. Where to cut is worked out from the messages
alone, turn by turn from the first: while the turns kept since the last cut, plus the
summary's allowance, fit ``max_tokens``, nothing changes; when a turn makes them
overflow, a new cut keeps the last ``keep_last`` turns (fewer when they alone would not
fit, never fewer than one) and the summary stands for everything before. So each cut
is made once, at the turn that first overflowed, and every later run of the
conversation finds the same cuts: a session keeps each cut's summary
(:func:`~agentkit.state.sessions.store_summary`) and reads it instead of asking a model
again, and a resumed run rebuilds the very history it started from.

The summary of a cut is written by a model from the summary of the cut before it and
the turns between the two, so what a model is asked to summarise stays about
``max_tokens`` long however long the conversation grows. Its text is bounded by the
allowance (``summary_tokens``, a quarter of ``max_tokens`` unless set): the model is
asked for no more, and a longer answer is cut to it. Tokens are the same estimate
:func:`~agentkit.agents.history.estimate_tokens` makes.

What it does not do: it does not shorten the run's own turn (the new task and what the
run does with it), and a single turn larger than the budget is kept whole, over it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass

from agentkit.agents.history import HistoryPolicy, estimate_tokens, turn_bounds
from agentkit.core.contracts.errors import ProviderError
from agentkit.core.contracts.types import ChatRequest, Message, ModelSettings
from agentkit.core.runtime.context import RunContext
from agentkit.state.sessions import SessionSummary, load_summaries, store_summary

__all__ = ["SUMMARY_PREFIX", "Summarize", "agent_history", "compacted"]

SUMMARY_PREFIX = "Summary of the earlier conversation:\n"
"""How the message that stands for the summarised turns begins."""

_CHARS_PER_TOKEN = 4
_MIN_ALLOWANCE = 16
"""Tokens a summary needs at the least: the prefix and framing take about 14."""

_INSTRUCTIONS = (
    "You write the summary an assistant continues a conversation from. Keep the facts, "
    "names, numbers, decisions, promises, open questions and the results of tool calls "
    "that still matter; drop greetings and repetition. Write plain prose, at most "
    "{words} words, without a preamble."
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Summarize:
    """``Agent(history=Summarize(max_tokens=..., keep_last=...))``: keep the history a
    run starts from under ``max_tokens`` by summarising its older turns (see the
    module docs for where it cuts and what it keeps)."""

    max_tokens: int
    """The budget for the history a run starts from, summary included (estimated)."""
    keep_last: int = 4
    """How many of the latest turns a cut keeps as they are."""
    model: str | None = None
    """The model that writes summaries; None: the agent's own. It is asked through the
    context's LLM and chat chain, so its cost is charged to the run's budget."""
    summary_tokens: int | None = None
    """The summary's allowance within ``max_tokens``; None: a quarter of it."""

    def __post_init__(self) -> None:
        for name, low in (("max_tokens", 1), ("keep_last", 1), ("summary_tokens", 1)):
            value = getattr(self, name)
            if value is None and name == "summary_tokens":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"Summarize.{name} must be a positive int, got {value!r}")
        if self.summary_tokens is not None and self.summary_tokens >= self.max_tokens:
            raise ValueError(
                f"Summarize.summary_tokens ({self.summary_tokens}) must be less than "
                f"max_tokens ({self.max_tokens}): the kept turns need room too"
            )
        if self.allowance < _MIN_ALLOWANCE:
            raise ValueError(
                f"Summarize: the summary's allowance ({self.allowance} tokens) must be at "
                f"least {_MIN_ALLOWANCE} to hold a summary; set summary_tokens= or a larger "
                "max_tokens (the allowance is a quarter of it unless set)"
            )
        if self.model is not None and (not isinstance(self.model, str) or not self.model):
            raise ValueError(f"Summarize.model must be a model id or None, got {self.model!r}")

    @property
    def allowance(self) -> int:
        """The tokens a summary may take."""
        return self.summary_tokens if self.summary_tokens is not None else max(
            1, self.max_tokens // 4)

    def cuts(self, history: Sequence[Message]) -> list[int]:
        """The turn numbers where ``history`` is cut, oldest first: the summary of cut
        ``n`` stands for its first ``n`` turns."""
        sizes = [sum(estimate_tokens(m) for m in history[start:end])
                 for start, end in turn_bounds(history)]
        cuts: list[int] = []
        cut = kept = 0
        for i, size in enumerate(sizes):
            kept += size
            if (self.allowance if cut else 0) + kept <= self.max_tokens:
                continue
            new = max(cut, i + 1 - self.keep_last)
            kept = sum(sizes[new:i + 1])
            while new < i and self.allowance + kept > self.max_tokens:
                kept -= sizes[new]
                new += 1
            if new > cut:
                cut = new
                cuts.append(cut)
        return cuts

    async def compact(
        self,
        history: Sequence[Message],
        ctx: RunContext,
        *,
        model: str | None = None,
        session: str | None = None,
        force: bool = False,
    ) -> tuple[Message, ...]:
        """``history`` with the turns before its last cut replaced by their summary.

        ``model`` writes the summaries when :attr:`model` is None (``Agent`` sets
        :attr:`model` to its own when it is None). With ``session``, the
        summaries are read from and kept in ``ctx.store``. ``force`` summarises every
        turn (a provider said the request was too long for its window).
        """
        messages = tuple(history)
        bounds = turn_bounds(messages)
        cuts = self.cuts(messages)
        if force and bounds and (not cuts or cuts[-1] < len(bounds)):
            cuts.append(len(bounds))
        if not cuts:
            return messages
        writer = self.model or model
        if writer is None:
            raise ValueError("Summarize.compact needs a model: set Summarize(model=...)")
        stored = {} if session is None else await load_summaries(
            ctx.store, ctx.scope, session, cuts)
        start = max((k for k, n in enumerate(cuts) if n in stored), default=-1)
        summary = stored[cuts[start]] if start >= 0 else None
        for n in cuts[start + 1:]:
            since = 0 if summary is None else bounds[summary.turns - 1][1]
            text = await self._summarise(summary, messages[since:bounds[n - 1][1]], ctx,
                                         writer)
            summary = SessionSummary(n, Message(role="user", content=SUMMARY_PREFIX + text))
            if session is not None:
                summary = await store_summary(ctx.store, ctx.scope, session, summary)
        assert summary is not None
        ctx.emit("history.summarised", turns=summary.turns, of=len(bounds))
        kept = messages[bounds[summary.turns - 1][1]:]
        return (summary.message, *kept)

    async def _summarise(
        self, earlier: SessionSummary | None, turns: Sequence[Message], ctx: RunContext,
        model: str,
    ) -> str:
        words = max(1, self.allowance * 3 // 4)  # about four characters a token, a word five
        parts = [] if earlier is None else [
            "Summary so far: " + earlier.message.content.removeprefix(SUMMARY_PREFIX)]
        parts += [_line(m) for m in turns]
        request = ChatRequest(
            model=model,
            system=_INSTRUCTIONS.format(words=words),
            messages=(Message(role="user", content="\n".join(parts)),),
            settings=ModelSettings(max_tokens=self.allowance),
        )
        result = await ctx.invoker.chat(request, ctx)
        room = self.allowance * _CHARS_PER_TOKEN - len(SUMMARY_PREFIX) - 4 * _CHARS_PER_TOKEN
        return result.content.strip()[:max(0, room)]


async def compacted(
    policy: object, history: Sequence[Message], ctx: RunContext, session: str | None,
    error: ProviderError,
) -> tuple[Message, ...]:
    """``history`` with every turn summarised, after a provider refused a request with
    ``error``; ``error`` is raised again unless it says the request was too long for the
    model's window and there is something to compact (a Summarize policy, a history that
    is more than its summary)."""
    if error.kind != "context_length" or not isinstance(policy, Summarize) or not history:
        raise error
    prior = tuple(history)
    shorter = await policy.compact(prior, ctx, session=session, force=True)
    if shorter == prior:
        raise error
    return shorter


def _line(message: Message) -> str:
    if message.role == "tool":
        return f"tool {message.name or ''} returned: {message.content}"
    calls = "".join(
        f"\n  [called {c.name}({json.dumps(dict(c.arguments), default=str)})]"
        for c in message.tool_calls
    )
    return f"{message.role}: {message.content}{calls}"


def agent_history(
    history: HistoryPolicy | Summarize | None, model: str
) -> HistoryPolicy | Summarize | None:
    """``Agent(history=...)`` checked, with a :class:`Summarize` that names no model
    given the agent's own (``model``) to write its summaries."""
    if history is not None and not isinstance(history, HistoryPolicy | Summarize):
        raise TypeError(
            "Agent(history=...) takes a HistoryPolicy(max_messages=..., max_tokens=...) "
            f"or a Summarize(max_tokens=..., keep_last=...), got {history!r}"
        )
    if isinstance(history, Summarize) and history.model is None:
        return dataclasses.replace(history, model=model)
    return history
