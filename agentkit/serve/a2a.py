"""Served agents as A2A agents: ``create_app(..., a2a=True)`` (``agentkit serve --a2a``).

Each agent is at ``/a2a/{agent}``: its agent card at ``/a2a/{agent}/.well-known/
agent-card.json``, and A2A 1.0's JSON-RPC binding by ``POST /a2a/{agent}`` (the 0.3
method names too). Every method is one call of :class:`~agentkit.serve.runs.ServedRuns`,
as the JSON API's routes are, behind the same Host/Origin check and bearer tokens:

* ``SendMessage`` without a ``taskId`` starts a run (its context id is the session,
  a new one when none is given) and, unless ``configuration.returnImmediately``, answers
  once the run completes, fails or waits for a person; with the ``taskId`` of a waiting
  task, it carries the decisions (a data part ``{"decisions": {...}}``, or plain text
  answering the one question a task asks) and resumes the run. The run id of a start
  is derived from the message's ``messageId`` (with the agent and the principal), so a
  retried message is the same task, never a second run.
* A task's ``history`` is its run's messages (the user's as ``ROLE_USER``, the model's,
  its tool calls and their results as ``ROLE_AGENT``), the last ``historyLength`` of
  them when the request gives one.
* ``SendStreamingMessage`` does the same and streams the task (as ``GetTask`` gives
  it, history included), its text as ``output`` artifact chunks, its tool calls as
  ``working`` status updates, and its last state.
* ``GetTask``, ``CancelTask`` (the run stops at its next safe point; the answer comes
  once it has, or after :data:`CANCEL_GRACE` seconds) and ``SubscribeToTask`` (the task
  as it stands, with its whole history, then its updates).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from agentkit.agents.run_state import TERMINAL
from agentkit.core.contracts.runs import RunRecord
from agentkit.core.runtime.context import new_run_id
from agentkit.integrations.a2a.protocol import (
    CARD_PATH,
    DECISIONS_KEY,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    METHODS,
    PARSE_ERROR,
    TASK_NOT_CANCELABLE,
    TASK_NOT_FOUND,
    UNSUPPORTED_OPERATION,
    V03_METHODS,
    PartError,
    as_v03,
    input_parts,
)
from agentkit.serve.a2a_tasks import (
    A2ASkill,
    agent_card,
    history_data,
    output_artifact,
    reply_hint,
    status_data,
    task_data,
)
from agentkit.serve.access import Principal
from agentkit.serve.app import principal_of, runs_of
from agentkit.serve.runs import ServedRuns, ServeError, StartRequest

__all__ = ["CANCEL_GRACE", "a2a_routes"]

CANCEL_GRACE = 10.0
"""Seconds ``CancelTask`` waits for the run to stop before answering with where it is."""


class _RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


_BY_STATUS = {404: TASK_NOT_FOUND, 409: UNSUPPORTED_OPERATION, 400: INVALID_PARAMS,
              422: INVALID_PARAMS, 403: INVALID_REQUEST, 413: INVALID_REQUEST}


def _from_serve(error: ServeError) -> _RpcError:
    code = TASK_NOT_CANCELABLE if error.kind == "not_cancellable" else _BY_STATUS.get(
        error.status, INTERNAL_ERROR)
    data = {"type": error.kind, **{k: v for k, v in error.detail.items()}}
    return _RpcError(code, error.message, data)


def _rpc_error(request_id: Any, error: _RpcError) -> dict[str, Any]:
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


class _Call:
    """One JSON-RPC request to one served agent, by one principal."""

    def __init__(self, request: Request, runs: ServedRuns, principal: Principal,
                 agent: str, request_id: Any, v03: bool) -> None:
        self.request, self.runs, self.principal = request, runs, principal
        self.agent, self.request_id, self.v03 = agent, request_id, v03

    def result(self, value: dict[str, Any]) -> dict[str, Any]:
        shaped = as_v03(value) if self.v03 else value
        return {"jsonrpc": "2.0", "id": self.request_id, "result": shaped}

    async def record(self, params: Mapping[str, Any]) -> RunRecord:
        task_id = params.get("id")
        if not isinstance(task_id, str) or not task_id:
            raise _RpcError(INVALID_PARAMS, 'params need "id": the task id')
        return await self.task(task_id)

    async def task(self, task_id: str) -> RunRecord:
        record = await self.runs.record(task_id, self.principal)
        if record.agent != self.agent:  # another agent's run is not a task of this one
            raise _RpcError(TASK_NOT_FOUND, f"no task {task_id!r} is known to agent "
                            f"{self.agent!r}")
        return record

    async def task_data(self, record: RunRecord, limit: int | None) -> dict[str, Any]:
        """The run as a Task, with the last ``limit`` messages of its run (all for None)."""
        history: list[dict[str, Any]] = []
        if limit != 0:
            state = await self.runs.state(record.run_id, self.principal)
            if state is not None:
                history = history_data(record, state.messages, state.history_len, limit)
        return task_data(record, history)

    # -- methods ------------------------------------------------------------------------

    async def get(self, params: Mapping[str, Any]) -> dict[str, Any]:
        return await self.task_data(await self.record(params),
                                    _history_length(params.get("historyLength")))

    async def cancel(self, params: Mapping[str, Any]) -> dict[str, Any]:
        record = await self.record(params)
        if record.status in TERMINAL:
            raise _RpcError(TASK_NOT_CANCELABLE, f"task {record.run_id!r} is "
                            f"{record.status}: it cannot be cancelled")
        await self.runs.cancel(record.run_id, self.principal)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.runs.wait(record.run_id, self.principal),
                                   CANCEL_GRACE)
        return await self.task_data(await self.task(record.run_id), None)

    async def send(self, params: Mapping[str, Any]) -> tuple[RunRecord, int]:
        """Start or resume the run a message is for: its record, and the number of
        events logged before this message (its own events come after)."""
        message = params.get("message")
        if not isinstance(message, Mapping):
            raise _RpcError(INVALID_PARAMS, 'params need "message": a Message with "parts"')
        task_id = message.get("taskId") or None
        if task_id is not None:
            record = await self.task(str(task_id))
            decisions = _decisions(record, message.get("parts"))
            seen = self.runs.last_event(record.run_id)
            return await self.runs.decide(record.run_id, decisions, self.principal), seen
        try:
            task = input_parts(message.get("parts"))
        except PartError as error:
            raise _RpcError(INVALID_PARAMS, str(error)) from None
        context = message.get("contextId") or new_run_id()
        start = StartRequest(agent=self.agent, task=task, session=str(context),
                             run_id=self.run_id_of(message.get("messageId")))
        record, _ = await self.runs.start(start, self.principal)
        return record, 0

    def run_id_of(self, message_id: Any) -> str | None:
        """The run id a message starts: one per (agent, principal, message id), so a
        retried message finds the run its first delivery started; None (a new id)
        for a message without one."""
        if not isinstance(message_id, str) or not message_id:
            return None
        key = json.dumps([self.agent, self.principal.name, message_id])
        return "a2a-" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]

    async def send_blocking(self, params: Mapping[str, Any]) -> dict[str, Any]:
        configuration = _configuration(params)
        limit = _history_length(configuration.get("historyLength"))
        record, _ = await self.send(params)
        if self.v03:  # 0.3 says "blocking"; 1.0 blocks unless told to return at once
            wait = configuration.get("blocking", True) is not False
        else:
            wait = configuration.get("returnImmediately") is not True
        if wait:
            record = await self.runs.wait(record.run_id, self.principal)
        task = await self.task_data(record, limit)
        return task if self.v03 else {"task": task}

    async def stream_from(self, record: RunRecord, seen: int, limit: int | None
                          ) -> AsyncIterator[dict[str, Any]]:
        """The task as it stands (with the last ``limit`` messages of its history, as
        ``GetTask`` gives it), then its updates after event ``seen``, up to its last
        state."""
        yield {"task": await self.task_data(record, limit)}
        task_id, context = record.run_id, record.session or ""
        update = {"taskId": task_id, "contextId": context}
        chunked = False
        async for _, data in await self.runs.events(task_id, self.principal, seen):
            kind = data.get("kind")
            if kind == "final":
                break
            if kind == "text_delta" and data.get("text"):
                yield {"artifactUpdate": {**update, "append": chunked, "lastChunk": False,
                                          "artifact": {"artifactId": "output", "name": "output",
                                                       "parts": [{"text": data["text"]}]}}}
                chunked = True
            elif kind in ("tool_call", "tool_result"):
                yield {"statusUpdate": {**update, "status": {
                    "state": "TASK_STATE_WORKING", "message": {
                        "messageId": f"{task_id}:{kind}:{_call_id(data)}",
                        "role": "ROLE_AGENT", "taskId": task_id, "contextId": context,
                        "parts": [{"text": _progress_text(data)}, {"data": {kind: data}}],
                    }}}}
        record = await self.task(task_id)
        artifact = output_artifact(record)
        if artifact is not None:
            yield {"artifactUpdate": {**update, "append": False, "lastChunk": True,
                                      "artifact": artifact}}
        yield {"statusUpdate": {**update, "status": status_data(record)}}

    async def subscribe(self, params: Mapping[str, Any]) -> tuple[RunRecord, int]:
        record = await self.record(params)
        if record.status in TERMINAL:
            raise _RpcError(UNSUPPORTED_OPERATION, f"task {record.run_id!r} is "
                            f"{record.status}: there is nothing to follow; GetTask reads it")
        return record, self.runs.last_event(record.run_id)


def _configuration(params: Mapping[str, Any]) -> Mapping[str, Any]:
    configuration = params.get("configuration")
    return configuration if isinstance(configuration, Mapping) else {}


def _history_length(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _RpcError(INVALID_PARAMS, '"historyLength" must be a whole number of messages, '
                        f"0 or more, or left out for all of them; got {value!r}")
    return value


def _call_id(data: Mapping[str, Any]) -> str:
    return str(data.get("call_id") or data["call"]["id"])


def _progress_text(data: Mapping[str, Any]) -> str:
    if data["kind"] == "tool_call":
        return f"calling {data['call']['name']}"
    outcome = "failed" if data.get("is_error") else "returned"
    return f"{data.get('name')} {outcome}: {str(data.get('content'))[:200]}"


def _decisions(record: RunRecord, parts: Any) -> Any:
    """The decisions a message to a waiting task carries: a data part's
    ``{"decisions": {...}}``, or text that answers the task's one question."""
    if record.status != "suspended":
        raise _RpcError(UNSUPPORTED_OPERATION, f"task {record.run_id!r} is {record.status}: "
                        "it waits for no decision, so it takes no message; start a new task "
                        "(a message without taskId) to continue the conversation")
    texts: list[str] = []
    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, Mapping):
            continue
        data = part.get("data")
        if isinstance(data, Mapping) and DECISIONS_KEY in data:
            return data[DECISIONS_KEY]
        if isinstance(part.get("text"), str):
            texts.append(part["text"])
    pending = record.pending
    if texts and len(pending) == 1 and pending[0].kind == "input":
        return {pending[0].call_id: {"answer": "\n".join(texts)}}
    raise _RpcError(INVALID_PARAMS, reply_hint(record), {
        "type": "invalid_decision", "pending": {c.call_id: c.kind for c in pending}})


def _sse(events: AsyncIterator[dict[str, Any]], call: _Call) -> AsyncIterator[bytes]:
    async def stream() -> AsyncIterator[bytes]:
        try:
            async for event in events:
                yield f"data: {json.dumps(call.result(event))}\n\n".encode()
        except _RpcError as error:
            yield f"data: {json.dumps(_rpc_error(call.request_id, error))}\n\n".encode()
        except ServeError as error:
            failed = _rpc_error(call.request_id, _from_serve(error))
            yield f"data: {json.dumps(failed)}\n\n".encode()
    return stream()


async def _dispatch(call: _Call, method: str, params: Mapping[str, Any]) -> Response:
    if method == "GetTask":
        return JSONResponse(call.result(await call.get(params)))
    if method == "CancelTask":
        return JSONResponse(call.result(await call.cancel(params)))
    if method == "SendMessage":
        return JSONResponse(call.result(await call.send_blocking(params)))
    if method == "SendStreamingMessage":
        limit = _history_length(_configuration(params).get("historyLength"))
        record, seen = await call.send(params)
    else:  # SubscribeToTask: its request has no historyLength, so the whole history
        limit = None
        record, seen = await call.subscribe(params)
    return StreamingResponse(_sse(call.stream_from(record, seen, limit), call),
                             media_type="text/event-stream", headers={"cache-control": "no-store"})


async def _rpc(request: Request) -> Response:
    runs = runs_of(request)
    try:
        agent = runs.agent(request.path_params["agent"])
    except ServeError as error:
        return JSONResponse({"error": {"type": error.kind, "message": error.message}}, 404)
    request_id: Any = None
    try:
        try:
            body = json.loads(await request.body() or b"null")
        except ValueError as error:
            raise _RpcError(PARSE_ERROR, f"the body is not JSON: {error}") from None
        if not isinstance(body, dict) or body.get("jsonrpc") != "2.0":
            raise _RpcError(INVALID_REQUEST, 'the body must be a JSON-RPC 2.0 request object '
                            '{"jsonrpc": "2.0", "id": ..., "method": ..., "params": {...}}')
        request_id = body.get("id")
        named = body.get("method")
        method = V03_METHODS.get(named, named) if isinstance(named, str) else None
        if method not in METHODS:
            raise _RpcError(METHOD_NOT_FOUND, f"no method {named!r}; methods: "
                            f"{[*METHODS, *V03_METHODS]}")
        params = body.get("params")
        if not isinstance(params, dict):
            raise _RpcError(INVALID_PARAMS, '"params" must be an object')
        call = _Call(request, runs, principal_of(request), agent.name, request_id,
                     named in V03_METHODS)
        return await _dispatch(call, method, params)
    except _RpcError as error:
        return JSONResponse(_rpc_error(request_id, error))
    except ServeError as error:
        return JSONResponse(_rpc_error(request_id, _from_serve(error)))


def a2a_routes(skills: Mapping[str, Sequence[A2ASkill]] | None = None) -> list[Route]:
    """The A2A routes: each served agent's card and JSON-RPC endpoint. ``skills`` lists
    the skills of an agent's card by agent name (else one skill per tool)."""
    chosen = dict(skills or {})

    async def card(request: Request) -> Response:
        agent = runs_of(request).agent(request.path_params["agent"])
        url = f"{str(request.base_url).rstrip('/')}/a2a/{agent.name}"
        return JSONResponse(agent_card(agent, url, bearer=request.app.state.auth_required,
                                       skills=chosen.get(agent.name)))

    async def guarded_card(request: Request) -> Response:
        try:
            return await card(request)
        except ServeError as error:
            return JSONResponse({"error": {"type": error.kind, "message": error.message}},
                                error.status)

    return [Route("/a2a/{agent}" + CARD_PATH, guarded_card, methods=["GET"]),
            Route("/a2a/{agent}", _rpc, methods=["POST"])]
