"""AG-UI on the serve app: ``POST /v1/agents/{agent}/ag-ui`` takes a RunAgentInput and
answers with the run's events as AG-UI events over Server-Sent Events.

The endpoint is a face like the JSON API: it parses the input, then goes through
:class:`~agentkit.serve.runs.ServedRuns` (``start``, ``decide``, ``events``), so the
lifecycle and the decision module do the work, with the same tokens, scopes and audit.
A thread is an agentkit session; a new run's run id is the agentkit run id. A run that
waits for a person ends its AG-UI run with an interrupt outcome: one interrupt, whose id
is the agentkit run id, listing the pending calls and a ``responseSchema`` for the
decisions. The client resumes with a new AG-UI run whose one resume entry answers that
interrupt; its payload is the decisions mapping ``Agent.resume`` takes.

Problems found before a run starts are HTTP errors with the API's JSON body (400 for a
malformed input, 422 for decisions the run cannot take, ...): the client's interrupt
stays open and nothing changed. A run that fails once streaming ends with RUN_ERROR.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from agentkit.agents.agent import Agent
from agentkit.agents.decisions import decision_schema, waiting_for
from agentkit.serve.access import Principal
from agentkit.serve.app import _body, _route, principal_of, runs_of
from agentkit.serve.runs import ServedRuns, ServeError, StartRequest
from agentkit.serve.wire import waiting_data

__all__ = ["PROTOCOL_VERSION", "ag_ui_routes"]

PROTOCOL_VERSION = "1.0"
"""The AG-UI protocol version this endpoint speaks (declared on RUN_STARTED)."""

_ROLES = ("activity", "assistant", "developer", "reasoning", "system", "tool", "user")
_STEP = "model_call"
"""The name of every AG-UI step: one model call of the run."""


@dataclass(frozen=True, slots=True)
class _Answer:
    """One resume entry of a RunAgentInput."""

    interrupt_id: str
    """The interrupt answered: the agentkit run id."""
    decisions: Mapping[str, Any]
    """The decisions by pending call id ({} for an abandoned interrupt)."""


@dataclass(frozen=True, slots=True)
class _Input:
    """What the endpoint reads of a RunAgentInput."""

    thread_id: str
    """The conversation: the agentkit session."""
    run_id: str
    """This AG-UI run's id."""
    start: str | _Answer
    """The text of the user's last message (a new run), or the resume entry (a resume)."""


def _bad(message: str) -> ServeError:
    return ServeError(400, "bad_request", f"RunAgentInput: {message}")


def _shown(value: Any) -> str:
    return json.dumps(value)[:80]


def _text_of(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        for p in content
    ):
        return "\n".join(p["text"] for p in content)
    raise _bad(f"{where}'s content must be text, or a list of text parts "
               '[{"type": "text", "text": "..."}]')


def _answer(resume: Any) -> _Answer | None:
    if resume is None or resume == []:
        return None
    if not isinstance(resume, list):
        raise _bad(f'"resume" must be a list of resume entries, got {_shown(resume)}')
    if len(resume) != 1:
        raise _bad(f"a suspended run ends with one interrupt, so a resume answers it with "
                   f"one entry; got {len(resume)}")
    entry = resume[0]
    if not (isinstance(entry, dict) and isinstance(entry.get("interruptId"), str)
            and entry.get("status") in ("resolved", "cancelled")):
        raise _bad('resume[0] needs "interruptId" (a string) and "status", '
                   "'resolved' or 'cancelled'")
    if entry["status"] == "cancelled":
        # Abandoning the interrupt decides nothing: as with Agent.resume, a call left
        # without a decision is rejected.
        return _Answer(entry["interruptId"], {})
    payload = entry.get("payload")
    if not isinstance(payload, dict):
        raise _bad("resume[0]'s payload must be the decisions by pending call id, as "
                   f'Agent.resume takes them (e.g. {{"c1": "approve"}}), got {_shown(payload)}')
    return _Answer(entry["interruptId"], payload)


def _parse(body: Mapping[str, Any]) -> _Input:
    """The parts of a RunAgentInput the endpoint acts on; 400 naming what is wrong.

    ``state``, ``tools``, ``context`` and ``forwardedProps`` are accepted and not used:
    the agent's tools and state are the server's."""
    ids = {}
    for name in ("threadId", "runId"):
        value = body.get(name)
        if not isinstance(value, str) or not value:
            raise _bad(f'"{name}" must be a non-empty string, got {_shown(value)}')
        ids[name] = value
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise _bad(f'"messages" must be a list of messages, got {_shown(messages)}')
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("id"), str):
            raise _bad(f'messages[{index}] must be an object with an "id" and a "role"')
        if message.get("role") not in _ROLES:
            raise _bad(f"messages[{index}] has role {message.get('role')!r}; a message's "
                       f"role is one of {list(_ROLES)}")
    for name in ("tools", "context"):
        if body.get(name) is not None and not isinstance(body[name], list):
            raise _bad(f'"{name}" must be a list, got {_shown(body[name])}')
    answer = _answer(body.get("resume"))
    if answer is not None:
        return _Input(ids["threadId"], ids["runId"], answer)
    last = messages[-1] if messages else None
    if last is None or last["role"] != "user":
        got = "no messages" if last is None else f"a {last['role']} message last"
        raise _bad(f'a new run needs the user\'s message last in "messages"; got {got}')
    task = _text_of(last.get("content"), f"messages[{len(messages) - 1}]")
    return _Input(ids["threadId"], ids["runId"], task)


# -- the run as AG-UI events ---------------------------------------------------------


def _interrupt(run_id: str, pending: list[dict[str, Any]], reason: str) -> dict[str, Any]:
    """The one interrupt of a suspended run: its pending calls, and the schema of the
    decisions that resume it."""
    asks = ", ".join(f"{p['tool']} ({p['call_id']}) {waiting_for(p['waits_for'])}"
                     for p in pending)
    interrupt: dict[str, Any] = {
        "id": run_id, "reason": reason,
        "message": f"run {run_id!r} waits for a person: {asks}",
    }
    if len(pending) == 1 and "/" not in pending[0]["call_id"]:
        interrupt["toolCallId"] = pending[0]["call_id"]
    interrupt["responseSchema"] = {
        "type": "object",
        "properties": {p["call_id"]: decision_schema(p["waits_for"]) for p in pending},
        "additionalProperties": False,
        "description": "decisions by pending call id, as Agent.resume takes them; a call "
                       "left out is rejected",
    }
    interrupt["metadata"] = {"agentkit": {"run_id": run_id, "pending": pending}}
    return interrupt


class _Translation:
    """One AG-UI run's events from the agentkit events of the run it streams.

    Message ids are the AG-UI run id and the number of the event that opened the
    message, unique across every AG-UI run of a thread."""

    def __init__(self, thread_id: str, run_id: str, agentkit_run: str) -> None:
        self.thread_id, self.run_id, self.agentkit_run = thread_id, run_id, agentkit_run
        self.text: str | None = None
        self.reasoning: str | None = None
        self.step_open = False
        self.message: str | None = None
        """The assistant message of the model call under way."""
        self.reason = "awaiting_decision"

    def opening(self) -> list[dict[str, Any]]:
        return [
            {"type": "RUN_STARTED", "threadId": self.thread_id, "runId": self.run_id,
             "protocolVersion": PROTOCOL_VERSION,
             "metadata": {"agentkit": {"run_id": self.agentkit_run}}},
            {"type": "STATE_SNAPSHOT", "snapshot": {"run_id": self.agentkit_run,
                                                    "status": "running", "pending": []}},
        ]

    def _close(self, *, reasoning: bool = True, text: bool = True) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if reasoning and self.reasoning is not None:
            out += [{"type": "REASONING_MESSAGE_END", "messageId": self.reasoning},
                    {"type": "REASONING_END", "messageId": self.reasoning}]
            self.reasoning = None
        if text and self.text is not None:
            out.append({"type": "TEXT_MESSAGE_END", "messageId": self.text})
            self.text = None
        return out

    def _in_step(self) -> list[dict[str, Any]]:
        if self.step_open:
            return []
        self.step_open = True
        return [{"type": "STEP_STARTED", "stepName": _STEP}]

    def event(self, number: int, data: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The AG-UI events for agentkit event ``number`` (the final one excepted)."""
        kind = data["kind"]
        mid = f"{self.run_id}-{number}"
        if kind == "reasoning_delta":
            out = self._in_step() + self._close(reasoning=False)
            if self.reasoning is None:
                self.reasoning = mid
                out += [{"type": "REASONING_START", "messageId": mid},
                        {"type": "REASONING_MESSAGE_START", "messageId": mid,
                         "role": "reasoning"}]
            return [*out, {"type": "REASONING_MESSAGE_CONTENT", "messageId": self.reasoning,
                           "delta": data["text"]}]
        if kind == "text_delta":
            out = self._in_step() + self._close(text=False)
            if self.text is None:
                self.text = self.message = self.message or mid
                out.append({"type": "TEXT_MESSAGE_START", "messageId": self.text,
                            "role": "assistant"})
            return [*out, {"type": "TEXT_MESSAGE_CONTENT", "messageId": self.text,
                           "delta": data["text"]}]
        if kind == "tool_call":
            out = self._in_step() + self._close()
            self.message = self.message or mid
            call = data["call"]
            return [*out,
                    {"type": "TOOL_CALL_START", "toolCallId": call["id"],
                     "toolCallName": call["name"], "parentMessageId": self.message},
                    {"type": "TOOL_CALL_ARGS", "toolCallId": call["id"],
                     "delta": json.dumps(call["arguments"])},
                    {"type": "TOOL_CALL_END", "toolCallId": call["id"]}]
        if kind == "tool_result":
            return [*self._close(), {
                "type": "TOOL_CALL_RESULT", "messageId": mid,
                "toolCallId": data["call_id"], "content": data["content"], "role": "tool"}]
        if kind == "step":
            out = self._in_step() + self._close()
            self.step_open, self.message = False, None
            return [*out, {"type": "STEP_FINISHED", "stepName": _STEP},
                    {"type": "STATE_DELTA",
                     "delta": [{"op": "add", "path": "/step", "value": data["step"]}]}]
        if kind == "interrupt":
            self.reason = data["reason"]
        elif kind == "retry":
            # A retried model call (Temporal): the text so far is superseded, and the
            # retry's is a message of its own.
            self.message = None
        return self._close()

    def ending(self, status: str, pending: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Everything open closed, and the run's state where it stopped."""
        out = self._close()
        if self.step_open:
            out.append({"type": "STEP_FINISHED", "stepName": _STEP})
            self.step_open = False
        return [*out, {"type": "STATE_DELTA", "delta": [
            {"op": "replace", "path": "/status", "value": status},
            {"op": "replace", "path": "/pending", "value": pending}]}]

    def finished(self, data: Mapping[str, Any], pending: list[dict[str, Any]]) -> dict[str, Any]:
        """The event that ends the AG-UI run, from the run's final event."""
        ids = {"threadId": self.thread_id, "runId": self.run_id}
        stop = data.get("stop_reason")
        if stop == "suspended" and pending:
            return {"type": "RUN_FINISHED", **ids, "outcome": {
                "type": "interrupt",
                "interrupts": [_interrupt(self.agentkit_run, pending, self.reason)]}}
        if stop == "complete":
            return {"type": "RUN_FINISHED", **ids, "result": data.get("output"),
                    "outcome": {"type": "success"}}
        if stop == "cancelled":
            return {"type": "RUN_FINISHED", **ids, "outcome": {"type": "cancelled"}}
        why = data.get("error") or f"the run stopped: {stop}"
        return {"type": "RUN_ERROR", "message": f"run {self.agentkit_run!r}: {why}",
                "code": str(stop)}


async def _stream(runs: ServedRuns, principal: Principal, translation: _Translation,
                  events: AsyncIterator[tuple[int, dict[str, Any]]]) -> AsyncIterator[bytes]:
    run_id = translation.agentkit_run
    for event in translation.opening():
        yield _sse(event)
    async for number, data in events:
        if data["kind"] == "final" or data["kind"] == "status":
            record = await runs.record(run_id, principal)
            pending = [waiting_data(record, call) for call in record.pending]
            for event in translation.ending(record.status, pending):
                yield _sse(event)
            if data["kind"] == "status":  # advanced elsewhere: its events are not here
                yield _sse({"type": "RUN_ERROR", "code": "not_streamed",
                            "message": f"run {run_id!r} is {record.status} and not advancing "
                                       "on this server; its events are not here"})
            else:
                yield _sse(translation.finished(data, pending))
            return
        for event in translation.event(number, data):
            yield _sse(event)


def _sse(event: Mapping[str, Any]) -> bytes:
    return f"data: {json.dumps(event)}\n\n".encode()


async def _resume(runs: ServedRuns, agent: Agent, given: _Input, answer: _Answer,
                  principal: Principal) -> tuple[str, int]:
    """Decide for the run the interrupt names; its id and the last event before."""
    record = await runs.record(answer.interrupt_id, principal)
    if record.agent != agent.name:
        raise _bad(f"interrupt {record.run_id!r} is a run of agent {record.agent!r}, not of "
                   f"{agent.name!r}; resume it at /v1/agents/{record.agent}/ag-ui")
    if record.session != given.thread_id:
        raise _bad(f"interrupt {record.run_id!r} belongs to thread {record.session!r}, not "
                   f"to thread {given.thread_id!r}; resume it on its own thread")
    # A suspended run adds no events until a decision is accepted: what follows this
    # number is the resumed run.
    last = runs.last_event(record.run_id)
    await runs.decide(record.run_id, answer.decisions, principal)
    return record.run_id, last


async def _joined(
    runs: ServedRuns, run_id: str, principal: Principal
) -> AsyncIterator[tuple[int, dict[str, Any]]]:
    """The events of a run that a runId given again joins: what comes next while it
    runs, or how it stopped (replaying its log would end at its first stop)."""
    last = runs.last_event(run_id)
    # Read after the count: a run the record still calls running has not logged its
    # final event yet, so that event comes after ``last``.
    record = await runs.record(run_id, principal)
    if record.status == "running":
        return await runs.events(run_id, principal, last)
    return _stopped({"kind": "final", "stop_reason": record.stop_reason or record.status,
                     "output": record.output, "error": record.error})


async def _stopped(final: dict[str, Any]) -> AsyncIterator[tuple[int, dict[str, Any]]]:
    yield 0, final


async def _run_ag_ui(request: Request) -> Response:
    """Start or resume a run from a RunAgentInput; its AG-UI events as SSE."""
    runs, principal = runs_of(request), principal_of(request)
    agent = runs.agent(request.path_params["agent"])
    given = _parse(await _body(request))
    if isinstance(given.start, _Answer):
        run_id, last = await _resume(runs, agent, given, given.start, principal)
        events = await runs.events(run_id, principal, last)
    else:
        record, started = await runs.start(StartRequest(
            agent=agent.name, task=given.start, session=given.thread_id, run_id=given.run_id,
        ), principal)
        if record.session != given.thread_id:
            raise ServeError(409, "run_id_taken", f"run id {record.run_id!r} is taken by a "
                             f"run of thread {record.session!r}; choose another runId")
        run_id = record.run_id
        events = (await runs.events(run_id, principal, 0) if started
                  else await _joined(runs, run_id, principal))
    translation = _Translation(given.thread_id, given.run_id, run_id)
    return StreamingResponse(_stream(runs, principal, translation, events),
                             media_type="text/event-stream",
                             headers={"cache-control": "no-store"})


def ag_ui_routes() -> list[Route]:
    """The AG-UI endpoint, for the app to mount beside the JSON API."""
    return [Route("/v1/agents/{agent}/ag-ui", _route(_run_ag_ui), methods=["POST"])]
