"""The way back from a served tool call to the MCP client that made it.

While a served call runs, a :class:`ServedCall` is installed as the call's reporter
(:func:`agentkit.core.runtime.reporting.reporting_to`), so from inside the tool:

* ``await ctx.progress(done, total, message)`` becomes ``notifications/progress``
  (when the client sent a progress token);
* ``await ctx.log(level, message)`` becomes ``notifications/message`` at or above the
  level the client chose with ``logging/setLevel`` (``info`` until it chooses; on the
  2026 protocol, the level the request opted in to);
* :func:`elicit` asks the client's user to fill in a form (``elicitation/create``);
* a served context's model, :class:`ClientModel`, asks the client's model
  (``sampling/createMessage``) when the client offers sampling.

Both directions ride the call's own response stream. Outside a served call, or with a
client that lacks the capability, :func:`elicit` raises :class:`ElicitationUnavailable`
and :class:`ClientModel` refuses with a ``ProviderError``.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import mcp.types as types
from mcp.server.connection import allowed_log_levels
from mcp.shared.message import ServerMessageMetadata

from agentkit.core.contracts.errors import AgentkitError, ProviderError, UnsupportedSetting
from agentkit.core.contracts.ports import Context
from agentkit.core.contracts.types import ChatRequest, LLMResult, StreamEvent, Usage
from agentkit.core.runtime.reporting import LOG_LEVELS, current_reporter

__all__ = [
    "ClientModel",
    "ElicitationUnavailable",
    "Elicited",
    "ServedCall",
    "connection_of",
    "elicit",
    "set_log_level",
]

_log = logging.getLogger("agentkit.mcp.server")
_DEFAULT_LEVEL = "info"
_levels: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
_FINISH = {
    "endTurn": "stop", "maxTokens": "length", "stopSequence": "stop", "toolUse": "tool_calls"
}


def connection_of(request_context: Any) -> Any | None:
    """The SDK's per-client connection behind a request: one per stdio process or HTTP
    session, created by the server (never named by the client)."""
    return getattr(request_context.session, "_connection", None)


def set_log_level(request_context: Any, level: str) -> None:
    """Remember the lowest level this client wants to receive (``logging/setLevel``)."""
    connection = connection_of(request_context)
    if connection is not None:
        _levels[connection] = level


class ElicitationUnavailable(AgentkitError, RuntimeError):
    """A served tool asked the client's user something, and there is no way to ask."""


@dataclass(frozen=True, slots=True)
class Elicited:
    """The user's answer to :func:`elicit`."""

    action: Literal["accept", "decline", "cancel"]
    """``accept`` (``content`` holds the form), ``decline`` or ``cancel``."""
    content: Mapping[str, Any] = field(default_factory=dict)
    """The submitted form, when accepted."""


class ServedCall:
    """One ``tools/call`` being served: progress, logs, elicitation and sampling go
    back to its client on its own stream."""

    __slots__ = ("_connection", "_deliverable", "_session", "request_id", "tool")

    def __init__(self, request_context: Any, tool: str) -> None:
        self._session = request_context.session
        self._connection = connection_of(request_context)
        # The 2026 protocol delivers logs only when the request opted in (in its _meta);
        # handshake-era connections may receive every level, filtered by setLevel.
        self._deliverable = allowed_log_levels(request_context.protocol_version,
                                               request_context.meta)
        self.request_id = request_context.request_id
        self.tool = tool

    async def progress(self, done: float, total: float | None, message: str | None) -> None:
        await self._session.report_progress(done, total, message)

    async def log(self, level: str, message: str, data: Mapping[str, Any]) -> None:
        wanted = _levels.get(self._connection, _DEFAULT_LEVEL) if self._connection else "info"
        if level not in self._deliverable or LOG_LEVELS.index(level) < LOG_LEVELS.index(wanted):
            return
        payload: Any = {"message": message, **data} if data else message
        note = types.LoggingMessageNotification(
            params=types.LoggingMessageNotificationParams(
                level=level,
                data=payload,
                logger=self.tool,
            )
        )
        await self._session.send_notification(note, related_request_id=self.request_id)

    def _capable(self, name: str) -> bool:
        capabilities = self._session.client_capabilities
        return (
            capabilities is not None
            and getattr(capabilities, name, None) is not None
            and bool(self._session.can_send_request)
        )

    @property
    def can_elicit(self) -> bool:
        """The client takes ``elicitation/create`` requests on this call's stream."""
        return self._capable("elicitation")

    @property
    def can_sample(self) -> bool:
        """The client takes ``sampling/createMessage`` requests on this call's stream."""
        return self._capable("sampling")

    async def elicit(self, message: str, schema: Mapping[str, Any]) -> Elicited:
        result = await self._session.elicit_form(
            message, dict(schema), related_request_id=self.request_id
        )
        return Elicited(result.action, dict(result.content or {}))

    async def sample(self, request: ChatRequest) -> LLMResult:
        messages = [
            types.SamplingMessage(
                role="assistant" if m.role == "assistant" else "user",
                content=types.TextContent(
                    text=m.content if m.role != "tool" else f"[tool result] {m.content}"
                ),
            )
            for m in request.messages
            if m.role != "system"
        ]
        system = "\n\n".join([request.system] + [m.content for m in request.messages
                                                 if m.role == "system"]).strip()
        params = types.CreateMessageRequestParams(
            messages=messages,
            system_prompt=system or None,
            max_tokens=request.max_tokens or 1024,
            temperature=request.temperature,
            stop_sequences=_sampling_stop(request),
        )
        result = await self._session.send_request(
            types.CreateMessageRequest(params=params),
            types.CreateMessageResult,
            metadata=ServerMessageMetadata(related_request_id=self.request_id),
        )
        blocks = result.content if isinstance(result.content, list) else [result.content]
        text = "".join(b.text for b in blocks if isinstance(b, types.TextContent))
        finish = _FINISH.get(str(result.stop_reason), "stop")
        return LLMResult(content=text, usage=Usage(), finish_reason=finish,  # type: ignore[arg-type]
                         model=result.model)


# ModelSettings fields MCP sampling has no place for (tools are not offered to the
# client's model, so no tool_choice either).
_NOT_SAMPLED = ("top_p", "seed", "tool_choice", "parallel_tool_calls", "extra")


def _sampling_stop(request: ChatRequest) -> list[str] | None:
    """The request's stop sequences, after refusing any setting sampling cannot carry."""
    settings = request.settings
    for name in _NOT_SAMPLED:
        value = getattr(settings, name)
        if value is not None and value != {}:
            raise UnsupportedSetting(
                "mcp-server", name, "MCP sampling (sampling/createMessage) has no field for it"
            )
    return list(settings.stop) if settings.stop else None


def _current_call() -> ServedCall | None:
    reporter = current_reporter()
    return reporter if isinstance(reporter, ServedCall) else None


async def elicit(message: str, schema: Mapping[str, Any]) -> Elicited:
    """Ask the user of the MCP client that made the running call to fill in a form.

    ``schema`` is the flat object schema MCP elicitation takes (string, number, integer,
    boolean and enum properties). Raises :class:`ElicitationUnavailable` outside a
    served call or when the client does not support elicitation.
    """
    call = _current_call()
    if call is None:
        raise ElicitationUnavailable(
            "elicit() asks the user of an MCP client, and no served MCP call is running: "
            "call it from a tool served with agentkit.integrations.mcp.serve"
        )
    if not call.can_elicit:
        raise ElicitationUnavailable(
            f"tool {call.tool!r} needs to ask the user something, and this MCP client does "
            "not support elicitation, so the call did not complete"
        )
    return await call.elicit(message, schema)


class ClientModel:
    """The model of a served context that has none of its own: the MCP client's model,
    through sampling, while a served call from a client that offers it is running."""

    async def chat(self, request: ChatRequest, ctx: Context) -> LLMResult:
        call = _current_call()
        if call is None or not call.can_sample:
            raise ProviderError(
                "this agentkit MCP server has no model, and the MCP client did not offer its "
                "own (sampling): a served tool called ctx.llm. Use a client that supports "
                "sampling, or serve with serve(..., ctx_factory=...) returning a context "
                "built on a real model",
                provider="mcp-server",
                transient=False,
                kind="no_model",
            )
        return await call.sample(request)

    async def stream(self, request: ChatRequest, ctx: Context) -> AsyncIterator[StreamEvent]:
        yield await self.chat(request, ctx)
