"""The error hierarchy, branched by when an error is settled and who can fix it.

::

    AgentkitError
    ├── ToolDefinitionError (ValueError)   definition: raised at import, you fix it
    ├── ModelCallError                     model: becomes a repair turn, the model fixes it
    │   ├── ToolArgumentError (ValueError)   bad arguments, before the body runs
    │   └── ToolNotFoundError (LookupError)  a tool name that is not registered
    ├── ToolShapeError (ValueError)        tool: a bad value after the body ran
    └── RunError                           run: the run cannot go on as asked
        ├── RunCancelled
        └── DepthLimitExceeded

Every class renders its message from typed fields in ``__init__``, so callers match on
fields (``exc.unexpected``) rather than on text.
"""

from __future__ import annotations

from collections.abc import Sequence


class AgentkitError(Exception):
    """Root of every error agentkit raises on purpose."""


class ToolDefinitionError(AgentkitError, ValueError):
    """A tool is wired wrongly; raised when it is defined or registered, before any run."""


class ModelCallError(AgentkitError):
    """The model authored a call that cannot run; the fix is a repair turn."""


class ToolArgumentError(ModelCallError, ValueError):
    """The model's arguments for a tool were missing, unexpected or invalid.

    Raised before the tool body runs, with every problem collected so one repair turn
    can fix them all.
    """

    def __init__(
        self,
        tool: str,
        *,
        missing: Sequence[str] = (),
        unexpected: Sequence[str] = (),
        invalid: Sequence[tuple[str, str]] = (),
        accepted: Sequence[str] = (),
        call_id: str | None = None,
    ) -> None:
        self.tool = tool
        self.missing = tuple(missing)
        self.unexpected = tuple(unexpected)
        self.invalid = tuple(invalid)
        self.accepted = tuple(accepted)
        self.call_id = call_id
        problems = []
        if self.missing:
            problems.append(f"missing required argument(s) {list(self.missing)}")
        if self.unexpected:
            problems.append(f"unexpected argument(s) {list(self.unexpected)}")
        if self.invalid:
            details = "; ".join(f"{name}: {reason}" for name, reason in self.invalid)
            problems.append(f"invalid argument(s): {details}")
        super().__init__(
            f"tool {tool!r} call rejected: {'; '.join(problems)}. "
            f"Accepted arguments: {list(self.accepted)}"
        )


class ToolNotFoundError(ModelCallError, LookupError):
    """The model asked for a tool name that is not registered."""

    def __init__(self, name: str, available: Sequence[str]) -> None:
        self.name = name
        self.available = tuple(available)
        super().__init__(f"no tool named {name!r}. Available tools: {list(self.available)}")


class ToolShapeError(AgentkitError, ValueError):
    """A tool returned a value that does not match its declared output schema."""

    def __init__(self, tool: str, raw: object, expected: str, reason: str = "") -> None:
        self.tool = tool
        self.raw = raw
        self.expected = expected
        self.reason = reason
        super().__init__(f"tool {tool!r} returned value not matching schema {expected!r}")


class RunError(AgentkitError):
    """The run cannot continue as asked (cancelled, too deep, over budget)."""


class RunCancelled(RunError):
    """The run's cancellation token was set; raised at the next safe point."""

    def __init__(self, reason: str = "cancelled") -> None:
        self.reason = reason
        super().__init__(f"run cancelled: {reason}")


class DepthLimitExceeded(RunError):
    """A nested run (an agent called as a tool) would go deeper than allowed."""

    def __init__(self, depth: int, max_depth: int) -> None:
        self.depth = depth
        self.max_depth = max_depth
        super().__init__(
            f"nested run refused: depth {depth} would exceed the maximum of {max_depth}. "
            "Raise max_depth on the context if the nesting is deliberate."
        )
