"""Evaluators of cost and speed: MaxCost, MaxTokens, MaxLatency, MaxSteps."""

from __future__ import annotations

from agentkit.evals.scores import EvalContext, Score

__all__ = ["MaxCost", "MaxLatency", "MaxSteps", "MaxTokens"]


class MaxCost:
    """The run cost at most ``usd`` US dollars (the agent's model and tool calls; an
    unknown price fails, since the cost is then only a lower bound)."""

    __slots__ = ("usd",)

    def __init__(self, usd: float) -> None:
        self.usd = usd

    def __call__(self, ctx: EvalContext) -> Score:
        usage = ctx.usage
        if usage.unpriced_models:
            return Score(usage.cost_usd, False, f"cost unknown: no price for "
                                                f"{list(usage.unpriced_models)}")
        ok = usage.cost_usd <= self.usd
        reason = "" if ok else f"cost ${usage.cost_usd:.4f}, more than ${self.usd:.4f}"
        return Score(usage.cost_usd, ok, reason)


class MaxTokens:
    """The run used at most ``n`` tokens, cached ones included."""

    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n

    def __call__(self, ctx: EvalContext) -> Score:
        used = ctx.usage.total_tokens
        ok = used <= self.n
        return Score(float(used), ok, "" if ok else f"{used} tokens, more than {self.n}")


class MaxLatency:
    """The run took at most ``seconds`` of wall-clock time."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def __call__(self, ctx: EvalContext) -> Score:
        ok = ctx.latency_s <= self.seconds
        reason = "" if ok else f"took {ctx.latency_s:.3f}s, more than {self.seconds}s"
        return Score(ctx.latency_s, ok, reason)


class MaxSteps:
    """The run made at most ``n`` model calls."""

    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n

    def __call__(self, ctx: EvalContext) -> Score:
        steps = ctx.result.steps
        ok = steps <= self.n
        return Score(float(steps), ok, "" if ok else f"{steps} model calls, more than {self.n}")
