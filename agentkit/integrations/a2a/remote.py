"""A2AAgent: a remote A2A agent, called as an agentkit delegate (and so as a tool).

``A2AAgent(url, token=...)`` reads the remote agent's card at construction
(``await A2AAgent.connect(...)`` does the same inside a running event loop) and refuses
an unusable one with :class:`~agentkit.integrations.a2a.errors.A2ACardError`.
``.as_tool()`` makes it a tool of one ``task`` string. Each call sends the task as a
message (streamed when the card says so, its status messages becoming ``tool.progress``
events of the calling run) and answers with the task's output artifact.

A remote task that ends ``input-required`` is a suspended sub-run: the call is pending
as nested, its remote pending calls appear under the call's path (``"c1/s3"`` for an
agentkit remote, whose status message lists them; ``"c1/remote"``, a question, for any
other), and resuming the calling run sends the decisions to that remote task (a data
part ``{"decisions": {...}}``, or the answer's text to a generic remote). Which remote
task a call waits on is kept in the run's store under the sub-run's key.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentkit.agents.nested import run_delegated, suspension
from agentkit.agents.result import Suspended
from agentkit.core.contracts.frozen import FrozenDict, freeze
from agentkit.core.contracts.types import ToolCall
from agentkit.core.runtime.context import RunContext
from agentkit.integrations.a2a.card import Egress, RemoteCard, card_location, egress_of, read_card
from agentkit.integrations.a2a.errors import (
    A2ACardError,
    RemoteError,
    RemoteTaskFailed,
    RemoteUnreachable,
)
from agentkit.integrations.a2a.protocol import (
    DECISIONS_KEY,
    PENDING_KEY,
    PROTOCOL_VERSION,
    pending_of,
)
from agentkit.tools.as_tool import as_tool
from agentkit.tools.function_tool import FunctionTool

__all__ = ["GENERIC_CALL", "A2AAgent", "A2AResult"]

GENERIC_CALL = "remote"
"""The call id of a generic remote's question: ``"c1/remote"`` under call ``c1``."""

_FAILED = {"TASK_STATE_FAILED": "failed", "TASK_STATE_CANCELED": "cancelled",
           "TASK_STATE_REJECTED": "rejected", "TASK_STATE_AUTH_REQUIRED": "auth-required"}


@dataclass(frozen=True, slots=True)
class A2AResult:
    """What a remote task ended with."""

    task_id: str
    """The remote task."""
    context_id: str
    """Its context (the remote conversation)."""
    output: Any = None
    """The output artifact: its text, or its data for a data part."""
    stop_reason: str = "complete"
    """``complete``, or ``suspended`` when the remote waits for a person."""
    evals: Mapping[str, Any] = field(default_factory=FrozenDict)
    """``{"suspended": Suspended}`` while the remote waits (as a sub-run reports it)."""


def _httpx() -> Any:
    try:
        import httpx
    except ImportError as error:
        raise ImportError('agentkit.integrations.a2a needs httpx, which is not installed: '
                          'pip install "agentkit-framework[a2a]"') from error
    return httpx


def _texts(parts: Any) -> str:
    return "\n".join(p["text"] for p in parts or () if isinstance(p, Mapping)
                     and isinstance(p.get("text"), str))


class A2AAgent:
    """A remote A2A agent. ``url`` is its base URL or its card's URL; ``token`` the
    bearer token its card asks for; ``name`` replaces the card's name. Outbound URLs
    pass the egress check: ``allow_hosts`` narrows them, ``private_hosts`` admits
    internal hosts by name (a peer inside the company network, or loopback in tests)."""

    def __init__(self, url: str, *, token: str | None = None, name: str | None = None,
                 allow_hosts: Iterable[str] | None = None, private_hosts: Iterable[str] = (),
                 timeout: float = 60.0) -> None:
        self._setup(url, token, allow_hosts, private_hosts, timeout)
        httpx = _httpx()
        try:
            with httpx.Client(timeout=self._timeout) as http:
                response = http.get(self._card_url, headers=self._headers)
        except httpx.HTTPError as error:
            raise A2ACardError(self._card_url, f"it could not be read: {error}") from error
        self._adopt(response, name)

    @classmethod
    async def connect(cls, url: str, *, token: str | None = None, name: str | None = None,
                      allow_hosts: Iterable[str] | None = None,
                      private_hosts: Iterable[str] = (), timeout: float = 60.0) -> A2AAgent:
        """As the constructor, reading the card without blocking the event loop."""
        made = cls.__new__(cls)
        made._setup(url, token, allow_hosts, private_hosts, timeout)
        httpx = _httpx()
        try:
            async with httpx.AsyncClient(timeout=made._timeout) as http:
                response = await http.get(made._card_url, headers=made._headers)
        except httpx.HTTPError as error:
            raise A2ACardError(made._card_url, f"it could not be read: {error}") from error
        made._adopt(response, name)
        return made

    def _setup(self, url: str, token: str | None, allow_hosts: Iterable[str] | None,
               private_hosts: Iterable[str], timeout: float) -> None:
        if token is not None and (not isinstance(token, str) or not token.strip()):
            raise ValueError("A2AAgent(token=...) is empty; pass the bearer token, or None")
        self._egress: Egress = egress_of(allow_hosts, private_hosts)
        self._card_url = card_location(url)
        self._egress.check(self._card_url, "card")
        self._token, self._timeout = token, timeout
        # Without the version header an A2A server reads the request as protocol 0.3.
        self._headers = {"a2a-version": PROTOCOL_VERSION}
        if token is not None:
            self._headers["authorization"] = f"Bearer {token}"

    def _adopt(self, response: Any, name: str | None) -> None:
        if response.status_code in (401, 403):
            raise A2ACardError(self._card_url, f"the server refused the credentials (HTTP "
                               f"{response.status_code}); pass A2AAgent(..., token=...)")
        if response.status_code != 200:
            raise A2ACardError(self._card_url, f"HTTP {response.status_code}")
        try:
            data = response.json()
        except ValueError:
            raise A2ACardError(self._card_url, "the card is not JSON") from None
        self.card: RemoteCard = read_card(data, self._card_url, self._token, self._egress,
                                          name)
        self.name = self.card.name
        self.description = self.card.description

    def __repr__(self) -> str:
        return f"A2AAgent({self.card.endpoint!r}, name={self.name!r})"

    def as_tool(self, *, name: str | None = None, description: str | None = None,
                side_effecting: bool = True, idempotent: bool = False,
                requires_approval: bool = False) -> FunctionTool:
        """The remote agent as a tool of one ``task`` string. It is side-effecting unless
        said otherwise: the remote may act on the world, and nothing here can tell."""
        tool_name = name or "".join(c if c.isalnum() or c in "_-" else "_" for c in self.name)
        # The card's own words, framed so the model knows the tool hands the task over.
        told = description or f"Ask the remote A2A agent {self.name!r}: {self.description}"
        return as_tool(self, name=tool_name, description=told,
                       side_effecting=side_effecting, idempotent=idempotent,
                       requires_approval=requires_approval)

    # -- the delegate protocol (agentkit.agents.nested) ----------------------------------

    async def run(self, task: str, ctx: RunContext) -> A2AResult:
        """Send ``task`` as a new remote task and wait for where it ends."""
        return await self._send(self._message(task), ctx)

    async def run_delegated(self, task: str, ctx: RunContext) -> A2AResult:
        """Run as the sub-run of the tool call being executed (``as_tool`` calls this)."""
        result: A2AResult = await run_delegated(self, task, ctx)
        return result

    async def _start_at(self, key: str, task: str, ctx: RunContext) -> A2AResult:
        result = await self._send(self._message(task), ctx)
        if result.stop_reason == "suspended":
            await ctx.store.set(_task_key(key), {"task_id": result.task_id,
                                                 "context_id": result.context_id})
        return result

    async def _resume_at(self, key: str, decisions: Mapping[str, Any],
                         ctx: RunContext) -> A2AResult:
        waiting = await ctx.store.get(_task_key(key))
        if not isinstance(waiting, Mapping):
            raise RemoteTaskFailed(self.name, "?", "lost", f"no remote task is recorded "
                                   f"for the sub-run {key!r}")
        answer = decisions.get(GENERIC_CALL)
        if set(decisions) == {GENERIC_CALL} and isinstance(answer, Mapping):
            parts: list[dict[str, Any]] = [{"text": str(answer.get("answer", ""))}]
        else:
            parts = [{"data": {DECISIONS_KEY: _plain(decisions)}}]
        message = self._message(parts, task_id=waiting["task_id"],
                                context_id=waiting["context_id"])
        result = await self._send(message, ctx)
        if result.stop_reason != "suspended":
            await ctx.store.delete(_task_key(key))
        return result

    # -- the wire -------------------------------------------------------------------------

    def _message(self, content: Any, **ids: str) -> dict[str, Any]:
        parts = [{"text": content}] if isinstance(content, str) else content
        message: dict[str, Any] = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER",
                                   "parts": parts}
        message.update({{"task_id": "taskId", "context_id": "contextId"}[k]: v
                        for k, v in ids.items()})
        return message

    def _request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": uuid.uuid4().hex, "method": method,
                "params": dict(params)}

    def _answer(self, method: str, body: Any) -> Any:
        if not isinstance(body, Mapping) or ("result" not in body and "error" not in body):
            raise RemoteError(self.name, method, None,
                              f"not a JSON-RPC response: {json.dumps(body)[:200]}")
        if "error" in body:
            error = body["error"] if isinstance(body["error"], Mapping) else {}
            code = error.get("code")
            raise RemoteError(self.name, method, code if isinstance(code, int) else None,
                              str(error.get("message", "")), error.get("data"))
        return body["result"]

    async def _send(self, message: dict[str, Any], ctx: RunContext) -> A2AResult:
        httpx = _httpx()
        method = "SendStreamingMessage" if self.card.streaming else "SendMessage"
        request = self._request(method, {"message": message})
        task: dict[str, Any] = {}
        try:
            async with httpx.AsyncClient(timeout=self._timeout, headers=self._headers) as http:
                if not self.card.streaming:
                    response = await http.post(self.card.endpoint, json=request)
                    self._check_status(method, response)
                    result = self._answer(method, response.json())
                    task = dict(result.get("task") or {}) if isinstance(result, Mapping) else {}
                else:
                    async for event in self._stream(http, method, request):
                        _fold(task, event, ctx, self.name)
        except httpx.TransportError as error:
            raise RemoteUnreachable(self.name, self.card.endpoint, str(error) or
                                    type(error).__name__) from error
        return self._result(task)

    def _check_status(self, method: str, response: Any) -> None:
        if response.status_code >= 400 and "json" not in response.headers.get(
                "content-type", ""):
            raise RemoteError(self.name, method, None, f"HTTP {response.status_code}")
        if response.status_code in (401, 403):
            raise RemoteError(self.name, method, None, f"HTTP {response.status_code}: the "
                              "server refused the credentials")

    async def _stream(self, http: Any, method: str,
                      request: dict[str, Any]) -> AsyncIterator[Mapping[str, Any]]:
        async with http.stream("POST", self.card.endpoint, json=request,
                               headers={"accept": "text/event-stream"}) as response:
            self._check_status(method, response)
            if "text/event-stream" not in response.headers.get("content-type", ""):
                await response.aread()
                yield self._answer(method, response.json())
                return
            data: list[str] = []
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    data.append(line[5:].lstrip(" "))
                elif not line and data:
                    yield self._answer(method, json.loads("\n".join(data)))
                    data = []

    def _result(self, task: Mapping[str, Any]) -> A2AResult:
        task_id, context = str(task.get("id", "")), str(task.get("contextId", ""))
        status = _object(task.get("status"))
        state = str(status.get("state", ""))
        message = _object(status.get("message"))
        if state == "TASK_STATE_COMPLETED":
            return A2AResult(task_id, context, _output(task.get("artifacts"), message))
        if state == "TASK_STATE_INPUT_REQUIRED":
            suspended = _suspended(task_id, self.name, message)
            return A2AResult(task_id, context, None, "suspended",
                             FrozenDict({"suspended": suspended}))
        detail = _texts(message.get("parts"))
        raise RemoteTaskFailed(self.name, task_id, _FAILED.get(state, state or "unanswered"),
                               detail)


def _object(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _task_key(key: str) -> str:
    return f"agentkit:a2a:task:{key}"


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _fold(task: dict[str, Any], event: Mapping[str, Any], ctx: RunContext, name: str) -> None:
    """Fold one streamed event into the task as it stands, and report its progress."""
    if "task" in event:
        task.clear()
        task.update(event["task"])
    elif "statusUpdate" in event:
        update = event["statusUpdate"]
        task.setdefault("id", update.get("taskId"))
        task.setdefault("contextId", update.get("contextId"))
        task["status"] = update.get("status", {})
        text = _texts((update.get("status", {}).get("message") or {}).get("parts"))
        if text and task["status"].get("state") == "TASK_STATE_WORKING":
            ctx.emit("tool.progress", agent=name, done=None, total=None, message=text)
    elif "artifactUpdate" in event:
        update = event["artifactUpdate"]
        artifact = dict(update.get("artifact") or {})
        artifacts = task.setdefault("artifacts", [])
        same = [a for a in artifacts if a.get("artifactId") == artifact.get("artifactId")]
        if update.get("append") and same:
            same[0]["parts"] = [*same[0].get("parts", []), *artifact.get("parts", [])]
        else:
            artifacts[:] = [a for a in artifacts if a not in same] + [artifact]
    elif "message" in event:  # a remote that answers with a message, not a task
        task["status"] = {"state": "TASK_STATE_COMPLETED", "message": event["message"]}


def _output(artifacts: Any, message: Mapping[str, Any]) -> Any:
    listed = [a for a in artifacts or () if isinstance(a, Mapping)]
    chosen = next((a for a in listed if a.get("artifactId") == "output"),
                  listed[0] if listed else None)
    parts = (chosen or {}).get("parts") or message.get("parts") or []
    data = [p["data"] for p in parts if isinstance(p, Mapping) and "data" in p]
    text = _texts(parts)
    if data and not text:
        return freeze(data[0]) if len(data) == 1 else freeze(data)
    return text


def _suspended(task_id: str, name: str, message: Mapping[str, Any]) -> Suspended:
    """The remote's waiting calls as a sub-run's ``Suspended`` (its own ids, which the
    calling run puts under its call's path)."""
    listed = pending_of(message.get("parts"))
    if listed is None:  # a generic remote: one question, answered with text
        question = _texts(message.get("parts")) or "The remote agent needs more input."
        calls = [ToolCall(GENERIC_CALL, name, {"question": question})]
        kinds = {GENERIC_CALL: "input"}
    else:
        calls = [ToolCall(str(e.get("call_id")), str(e.get("tool")), e.get("arguments") or {})
                 for e in listed[PENDING_KEY] if isinstance(e, Mapping)]
        kinds = {str(e.get("call_id")): str(e.get("kind", "approval"))
                 for e in listed[PENDING_KEY] if isinstance(e, Mapping)}
    return suspension(task_id, name, calls, kinds, {})
