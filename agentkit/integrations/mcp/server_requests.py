"""What an MCP server may ask the client mid-call: a completion, a person, the roots.

A server that is running one of our tool calls can send requests back: sampling
(``sampling/createMessage``), elicitation (``elicitation/create``) and ``roots/list``.
Each is answered on behalf of the *run* that made the call:

- sampling goes through the run's own ``ctx.invoker.chat``, so its budget, meter and
  tracing apply, with the run's model (or ``sampling_model``);
- elicitation goes to the run's human channel: the tool raises
  :class:`~agentkit.core.contracts.errors.HumanInputRequired` and the agent run
  suspends with the question, while the request stays open on the session ("parked"
  under the run and call id). Resumed in the same process, the answer goes to the
  waiting question and the very same call carries on. Resumed anywhere else (the
  session is gone), the call is made again and the same question gets the person's
  answer at once;
- roots are the directories the user configured (none by default).

The SDK does not say which of our requests a server request belongs to, so it is
attributed to the most recent call still open on the session (one call at a time per
session is exact; with concurrent calls on one session, use one session per run).
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mcp.types as types

from agentkit.core.contracts.errors import HumanInputRequired
from agentkit.core.contracts.media import Image, Media
from agentkit.core.contracts.types import ChatRequest, Message, ModelSettings
from agentkit.core.runtime.current_call import CurrentCall, current_call

if TYPE_CHECKING:
    from mcp.client.session import ClientRequestContext

    from agentkit.core.runtime.context import RunContext

__all__ = ["OpenCall", "ServerRequests", "elicit_result"]

_log = logging.getLogger("agentkit.mcp")
_STOP_REASONS = {"stop": "endTurn", "length": "maxTokens", "tool_calls": "toolUse"}


@dataclass(slots=True, eq=False)
class OpenCall:
    """One tool call in flight on a session, and what the server asked during it."""

    tool: str
    ctx: RunContext | None
    call: CurrentCall | None
    question: HumanInputRequired | None = None
    asked: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the server asked a question only a person can answer."""
    abandoned: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the call was given up, so the pending question can be let go."""
    answer: asyncio.Future[Any] | None = None
    """The person's decision for the pending question, once given."""
    request: asyncio.Future[types.CallToolResult] | None = None
    """The request in flight."""

    def resume(self, ctx: RunContext | None, call: CurrentCall | None) -> None:
        """Carry on after a suspension: hand over the person's answer, if given."""
        question, self.question = self.question, None
        self.asked.clear()
        self.ctx, self.call = ctx, call
        decision = None
        if question is not None and call is not None:
            decision = call.answers.get(question.message)
        if self.answer is not None and not self.answer.done():
            if decision is None:
                self.answer.set_result({"action": "cancel"})
            else:
                self.answer.set_result(decision)
        self.answer = None


class ServerRequests:
    """The client's answers to one server's requests; its callbacks go to ``mcp.Client``."""

    __slots__ = (
        "_open",
        "_parked",
        "elicitation",
        "roots",
        "sampling",
        "sampling_model",
        "server",
    )

    def __init__(
        self,
        server: str,
        *,
        sampling: bool,
        sampling_model: str | None,
        elicitation: bool,
        roots: Sequence[str | Path],
    ) -> None:
        self.server = server
        self.sampling = sampling
        self.sampling_model = sampling_model
        self.elicitation = elicitation
        self.roots = tuple(_root(r) for r in roots)
        self._open: list[OpenCall] = []
        self._parked: dict[tuple[str, str], OpenCall] = {}

    def client_options(self) -> dict[str, Any]:
        """Keyword arguments for ``mcp.Client``: a callback per declared capability."""
        options: dict[str, Any] = {}
        if self.sampling:
            options["sampling_callback"] = self.sample
        if self.elicitation:
            options["elicitation_callback"] = self.elicit
        if self.roots:
            options["list_roots_callback"] = self.list_roots
        return options

    def open(self, tool: str, ctx: RunContext | None) -> OpenCall:
        """Register a new call as open."""
        open_call = OpenCall(tool, ctx, current_call.get())
        self._open.append(open_call)
        return open_call

    def close(self, open_call: OpenCall) -> None:
        """The call is over (or given up): let go of anything it still waits for."""
        open_call.abandoned.set()
        if open_call in self._open:
            self._open.remove(open_call)
        if open_call.request is not None and not open_call.request.done():
            open_call.request.cancel()

    def park(self, key: tuple[str, str], open_call: OpenCall) -> None:
        """Keep a call that waits for a person open, under (run id, call id)."""
        stale = self._parked.pop(key, None)
        if stale is not None and stale is not open_call:
            self.close(stale)
        self._parked[key] = open_call

    def unpark(self, key: tuple[str, str]) -> OpenCall | None:
        """The parked call for (run id, call id), if it is still alive."""
        open_call = self._parked.pop(key, None)
        if open_call is None:
            return None
        if open_call.request is None or open_call.request.done():
            self.close(open_call)
            return None
        return open_call

    def close_all(self) -> None:
        """The session is closing: every parked call is given up."""
        for open_call in list(self._parked.values()):
            self.close(open_call)
        self._parked.clear()

    def _latest(self) -> OpenCall | None:
        return self._open[-1] if self._open else None

    async def sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        """Answer ``sampling/createMessage`` with the calling run's model."""
        open_call = self._latest()
        if open_call is None or open_call.ctx is None:
            return types.ErrorData(
                code=types.INVALID_REQUEST,
                message="sampling is answered only during a tool call made from an agentkit "
                "run (its model and budget answer it); there is none open",
            )
        ctx = open_call.ctx
        model = self.sampling_model or (open_call.call.model if open_call.call else "")
        request = ChatRequest(
            model=model,
            messages=tuple(_message(m) for m in params.messages),
            system=params.system_prompt or "",
            # The server's temperature is a preference, like its model hints: the run's
            # own model settings decide it (some providers refuse a temperature outright).
            settings=ModelSettings(
                max_tokens=params.max_tokens, stop=tuple(params.stop_sequences or ()) or None
            ),
        )
        ctx.emit("mcp.sampling", server=self.server, tool=open_call.tool, model=model)
        try:
            result = await ctx.invoker.chat(request, ctx)
        except Exception as exc:  # the server gets the failure; the run decides on its own
            _log.info("sampling for MCP server %r failed: %s", self.server, exc)
            return types.ErrorData(code=types.INTERNAL_ERROR, message=f"sampling failed: {exc}")
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(text=result.content),
            model=result.model or model,
            stop_reason=_STOP_REASONS.get(result.finish_reason, result.finish_reason),
        )

    async def elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        """Answer ``elicitation/create`` from the person's answer, or ask them."""
        open_call = self._latest()
        schema = getattr(params, "requested_schema", None)
        url = getattr(params, "url", None)
        message = params.message if url is None else f"{params.message} ({url})"
        if open_call is None:
            return types.ElicitResult(action="cancel")
        answers = open_call.call.answers if open_call.call is not None else {}
        if message in answers:
            return elicit_result(answers[message], schema)
        open_call.question = HumanInputRequired(
            open_call.tool,
            message,
            None if schema is None else schema.model_dump(by_alias=True, exclude_none=True)
            if hasattr(schema, "model_dump") else dict(schema),
            f"MCP server {self.server!r}",
        )
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        open_call.answer = answer
        open_call.asked.set()
        # Wait for the person (the run resumes) or for the call to be given up; never
        # answer for them, so the server does not act on a "no" nobody said.
        given_up = asyncio.ensure_future(open_call.abandoned.wait())
        try:
            await asyncio.wait((answer, given_up), return_when=asyncio.FIRST_COMPLETED)
        finally:
            given_up.cancel()
        if answer.done():
            return elicit_result(answer.result(), schema)
        return types.ErrorData(
            code=types.INTERNAL_ERROR,
            message="the question was handed to a person and the call was given up; it "
            "will be made again with the answer",
        )

    async def list_roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        """The configured roots."""
        return types.ListRootsResult(roots=list(self.roots))


def elicit_result(decision: Any, schema: Any) -> types.ElicitResult:
    """A person's decision as an ``ElicitResult``; an accepted form gets the schema's
    defaults for the fields the person left out."""
    properties = _properties(schema)
    if isinstance(decision, Mapping) and "answer" in decision:
        answer = decision["answer"]
        if len(properties) == 1:
            [(name, spec)] = properties.items()
            content = {name: _coerce(answer, spec)}
        else:
            content = {"answer": answer}
        return types.ElicitResult(action="accept", content=_with_defaults(content, properties))
    action = decision.get("action") if isinstance(decision, Mapping) else None
    if action == "accept":
        given = decision.get("content") or {}
        return types.ElicitResult(
            action="accept", content=_with_defaults(dict(given), properties)
        )
    return types.ElicitResult(action="decline" if action == "decline" else "cancel")


def _properties(schema: Any) -> Mapping[str, Any]:
    if schema is None:
        return {}
    if hasattr(schema, "model_dump"):
        schema = schema.model_dump(by_alias=True, exclude_none=True)
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    return properties if isinstance(properties, Mapping) else {}


def _with_defaults(content: dict[str, Any], properties: Mapping[str, Any]) -> dict[str, Any]:
    for name, spec in properties.items():
        if name not in content and isinstance(spec, Mapping) and "default" in spec:
            content[name] = spec["default"]
    return content


def _coerce(answer: str, spec: Any) -> Any:
    """A typed answer to a one-field form, from the person's text where it parses."""
    kind = spec.get("type") if isinstance(spec, Mapping) else None
    try:
        if kind == "integer":
            return int(answer)
        if kind == "number":
            return float(answer)
    except ValueError:
        return answer
    if kind == "boolean":
        return answer.strip().lower() in ("yes", "y", "true", "1")
    return answer


def _message(sampled: types.SamplingMessage) -> Message:
    blocks = sampled.content if isinstance(sampled.content, list) else [sampled.content]
    texts: list[str] = []
    media: list[Media] = []
    for block in blocks:
        if isinstance(block, types.TextContent):
            texts.append(block.text)
        elif isinstance(block, types.ImageContent):
            image = Image(base64.b64decode(block.data), block.mime_type)
            media.append(image)
            texts.append(image.describe())
        else:
            texts.append(f"[{getattr(block, 'type', 'content')}]")
    if sampled.role == "assistant":
        return Message("assistant", "\n".join(texts), attachments=tuple(media))
    return Message("user", "\n".join(texts), attachments=tuple(media))


def _root(root: str | Path) -> types.Root:
    if isinstance(root, str) and "://" in root:
        uri, name = root, root.rstrip("/").rsplit("/", 1)[-1] or root
    else:
        path = Path(root).expanduser().resolve()
        uri, name = path.as_uri(), path.name or str(path)
    return types.Root.model_validate({"uri": uri, "name": name})
