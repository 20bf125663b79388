"""Workflow: a small DAG of steps — agents, async functions, tools, human gates.

Independent steps run concurrently; each finished step is checkpointed, so a workflow
suspended at a gate resumes (in another process, with a durable store) without
re-running what already finished. A side-effecting tool step keeps an intent while it
runs, as an agent's tool call does (:mod:`agentkit.agents.intents`), so ``recover`` does
not silently run it twice.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from agentkit.agents.autonomy import key_step
from agentkit.agents.decisions import checked, routed
from agentkit.agents.intents import Intent, intent_key, settle, start_intent
from agentkit.agents.lifecycle import claim_checkpoint, load_checkpoint
from agentkit.agents.nested import SubRunSuspended, calling, left_call, run_delegated, suspension
from agentkit.agents.result import Suspended
from agentkit.agents.run_state import SubRun
from agentkit.agents.workflow_state import (
    NodeInput,
    WorkflowError,
    WorkflowResult,
    _Gate,
    _Node,
    _State,
)
from agentkit.core.contracts.errors import RunCancelled, RunNotResumable
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.ports import Checkpointer, Tool
from agentkit.core.contracts.types import ToolCall, ToolRequest, Usage
from agentkit.core.runtime.context import RunContext
from agentkit.state.checkpoints.store_checkpointer import checkpointer_for, missing_checkpoint_hint

__all__ = ["Workflow", "WorkflowError", "WorkflowResult"]

class Workflow:
    """A DAG of named steps, built with :meth:`add` and :meth:`gate`, run with ``run``.

    A step is an Agent (or anything with ``async run(task, ctx)``), an async function
    ``fn(inputs, ctx)``, or a Tool (run through ``ctx.invoker.invoke_tool``, so every
    middleware applies). ``inputs`` maps every upstream step's name (direct or not) to
    its output, plus ``"task"``. ``input=`` turns that mapping into the step's input:
    an agent's task text (default: the task, or the direct dependencies as
    ``name: output`` lines) or a tool's arguments (default: the direct dependencies'
    outputs by name).
    """

    def __init__(
        self, name: str, *, description: str | None = None, max_concurrency: int = 8
    ) -> None:
        self.name = name
        self.description = description
        self.max_concurrency = max_concurrency
        self._nodes: dict[str, _Node] = {}

    def add(
        self,
        name: str,
        step: Any,
        *,
        after: Sequence[str] = (),
        input: NodeInput | None = None,
    ) -> Workflow:
        """Add a step that runs once every step in ``after`` has finished."""
        if isinstance(step, Tool):
            kind: Literal["agent", "function", "tool", "gate"] = "tool"
        elif inspect.iscoroutinefunction(step):
            kind = "function"
        elif callable(getattr(step, "run", None)):
            kind = "agent"
        else:
            raise TypeError(
                f"workflow {self.name!r}: step {name!r} must be an agent (async run(task, ctx)), "
                f"an async function fn(inputs, ctx) or a Tool; got {step!r}"
            )
        return self._add(_Node(name, step, tuple(after), input, kind))

    def gate(self, name: str, question: str, *, after: Sequence[str] = ()) -> Workflow:
        """Add a human gate: the workflow suspends here until ``resume`` approves or
        rejects it; a rejected gate skips every step after it."""
        return self._add(_Node(name, _Gate(question), tuple(after), None, "gate"))

    def _add(self, node: _Node) -> Workflow:
        if "/" in node.name:
            # "/" separates a path's ids ("<step>/<call id>"), so a decision must not
            # be able to mean a step and a call inside another step at once.
            raise ValueError(
                f"workflow {self.name!r}: step name {node.name!r} holds '/', which "
                "separates the ids of a path to a call inside a step; name it without '/'"
            )
        if node.name in self._nodes or node.name == "task":
            raise ValueError(
                f"workflow {self.name!r}: step name {node.name!r} is taken"
                + (" (reserved for the workflow's task)" if node.name == "task" else "")
            )
        unknown = [d for d in node.after if d not in self._nodes]
        if unknown:
            raise ValueError(
                f"workflow {self.name!r}: step {node.name!r} comes after unknown step(s) "
                f"{unknown}; add those first. Known steps: {list(self._nodes)}"
            )
        self._nodes[node.name] = node
        return self

    @property
    def terminal(self) -> tuple[str, ...]:
        """Steps no other step depends on."""
        needed = {d for n in self._nodes.values() for d in n.after}
        return tuple(n for n in self._nodes if n not in needed)

    # -- running --------------------------------------------------------------------

    def _key(self, run_id: str) -> str:
        return f"{run_id}:workflow:{self.name}"

    async def run(self, task: str, ctx: RunContext) -> WorkflowResult:
        """Run every step in dependency order, concurrently where independent."""
        return await self._start_at(self._key(ctx.correlation_id), task, ctx, fresh=False)

    async def run_delegated(self, task: str, ctx: RunContext) -> WorkflowResult:
        """Run as the sub-run of the tool call being executed (``as_tool`` calls this):
        its suspension suspends the run above (see :mod:`agentkit.agents.nested`)."""
        result: WorkflowResult = await run_delegated(self, task, ctx)
        return result

    async def _start_at(
        self, key: str, task: str, ctx: RunContext, *, fresh: bool = True
    ) -> WorkflowResult:
        checkpointer = checkpointer_for(ctx)
        existing, version = await self._read(checkpointer, ctx.correlation_id, key)
        if not fresh and existing is not None and existing.status in ("running", "suspended"):
            raise RunNotResumable(
                ctx.correlation_id,
                f"workflow {self.name!r} already has a {existing.status} run under this run id",
            )
        state = _State("running", FrozenDict({"task": task}), (), (), FrozenDict(), Usage())
        version = await claim_checkpoint(
            checkpointer, key, state, version, ctx.correlation_id,
            f"another worker started workflow {self.name!r} under this run id at the "
            "same moment, and got there first",
        )
        return await _Execution(self, ctx, checkpointer, key, version, state).go()

    async def _resume_at(
        self, key: str, decisions: Mapping[str, Any], ctx: RunContext
    ) -> WorkflowResult:
        return await self._resume(ctx.correlation_id, decisions, ctx, key)

    async def resume(
        self, run_id: str, decisions: Mapping[str, Any], ctx: RunContext
    ) -> WorkflowResult:
        """Continue at the pending gates: ``{gate_name: "approve" | "reject"}``; a gate
        with no decision is rejected.

        A call waiting inside an agent step has a path id, ``"<step>/<call id>"``; its
        decision goes to that step's sub-run (as for ``Agent.resume``). A step whose
        sub-run gets no decision stays suspended.
        """
        return await self._resume(run_id, decisions, ctx, self._key(run_id))

    async def _resume(
        self, run_id: str, decisions: Mapping[str, Any], ctx: RunContext, key: str
    ) -> WorkflowResult:
        checkpointer = checkpointer_for(ctx)
        state, version = await self._load(checkpointer, run_id, want="suspended", key=key)
        waiting = self._suspension(run_id, state)
        # Gates and tool steps held for a person take "approve" or "reject".
        kinds = {**waiting.kinds, **dict.fromkeys(state.pending, "gate")}
        decided = checked(run_id, kinds, decisions, workflow=self.name)
        steps = routed(
            {p: d for p, d in decided.items() if p not in state.pending}, state.nested
        )
        given = {g: decisions.get(g, "reject") for g in state.pending}
        state = _State("running", state.outputs, state.skipped, (), FrozenDict(
            {**state.decisions, **given}), state.usage, state.nested)
        return await self._take_over(checkpointer, run_id, state, version, ctx, steps, key)

    def _suspension(self, run_id: str, state: _State) -> Suspended:
        """What the workflow waits for: its gates, and the calls its agent steps wait on
        (by path, ``"<step>/<call id>"``)."""
        calls = [
            ToolCall(g, "human_gate", {"question": self._nodes[g].step.question})
            if self._nodes[g].kind == "gate" else ToolCall(g, self._nodes[g].step.name)
            for g in state.pending
        ]
        calls += [ToolCall(step, "agent_step") for step in state.nested]
        kinds = {
            g: "approval" if self._nodes[g].kind == "gate" else "unknown_outcome"
            for g in state.pending
        }
        kinds.update(dict.fromkeys(state.nested, "nested"))
        return suspension(run_id, self.name, calls, kinds, state.nested)

    async def recover(self, run_id: str, ctx: RunContext) -> WorkflowResult:
        """Continue a workflow whose worker died (or whose step failed) while running.

        Finished steps keep their checkpointed outputs and are not run again. A
        side-effecting tool step the crash interrupted is settled by its intent: it runs
        again only when declared idempotent, its recorded output (or an ``idempotent()``
        record) is used, and otherwise it waits for a person: the workflow suspends
        (``reason="outcome_unknown"``) and ``resume`` with ``"approve"`` runs it again,
        ``"reject"`` skips it and what follows it. Taking the run over bumps its
        checkpoint version, so a worker that was alive after all fails its next save
        instead of carrying on beside this one.
        """
        checkpointer = checkpointer_for(ctx)
        state, version = await self._load(checkpointer, run_id, want="running")
        return await self._take_over(checkpointer, run_id, state, version, ctx, recovering=True)

    async def _load(
        self, checkpointer: Checkpointer, run_id: str, *, want: str, key: str | None = None
    ) -> tuple[_State, int]:
        state, version = await self._read(checkpointer, run_id, key)
        if state is None or state.status != want:
            status = "unknown" if state is None else state.status
            hint = missing_checkpoint_hint(checkpointer) if state is None else ""
            raise RunNotResumable(
                run_id, f"workflow {self.name!r} is {status}, not {want}{hint}"
            )
        return state, version

    async def _read(
        self, checkpointer: Checkpointer, run_id: str, key: str | None = None
    ) -> tuple[_State | None, int]:
        key = key or self._key(run_id)
        return await load_checkpoint(checkpointer, key, run_id, _State, "a workflow's state")

    async def _take_over(
        self,
        checkpointer: Checkpointer,
        run_id: str,
        state: _State,
        version: int,
        ctx: RunContext,
        wakes: Mapping[str, Any] = FrozenDict(),
        key: str | None = None,
        *,
        recovering: bool = False,
    ) -> WorkflowResult:
        """Claim the run with a compare-and-set save, then carry on from ``state``."""
        key = key or self._key(run_id)
        ctx = ctx if ctx.correlation_id == run_id else ctx.for_run(run_id)
        version = await claim_checkpoint(
            checkpointer, key, state, version, run_id, "another worker took it over first"
        )
        execution = _Execution(self, ctx, checkpointer, key, version, state, wakes)
        if recovering:
            await execution.settle_interrupted()
        return await execution.go()

    def __repr__(self) -> str:
        return f"Workflow({self.name!r}, steps={list(self._nodes)})"


class _Execution:
    def __init__(
        self,
        workflow: Workflow,
        ctx: RunContext,
        checkpointer: Checkpointer,
        key: str,
        version: int,
        state: _State,
        wakes: Mapping[str, Any] = FrozenDict(),
    ) -> None:
        self.wf = workflow
        self.ctx = ctx
        self.checkpointer = checkpointer
        self.key = key
        self.version = version
        self.outputs: dict[str, Any] = dict(state.outputs)
        self.skipped: list[str] = list(state.skipped)
        self.decisions: dict[str, str] = dict(state.decisions)
        self.usage = state.usage
        self.nested: dict[str, SubRun] = dict(state.nested)
        self.wakes = dict(wakes)
        """Per waiting agent step, the decisions its sub-run resumes with."""
        self.held: set[str] = set()
        """Tool steps a crash interrupted whose outcome is unknown, until a person decides."""
        self.intended: set[str] = set()
        """Tool steps whose intent is stored, until the checkpoint holds their output."""
        self.recovering = False
        self.lock = asyncio.Lock()

    async def settle_interrupted(self) -> None:
        """Settle the tool steps a crash may have interrupted by their intents (the rule
        of :func:`~agentkit.agents.intents.settle`), before any step runs again; agent
        steps will continue the sub-runs they started."""
        self.recovering = True
        settled = []
        for node in self.wf._nodes.values():
            done = node.name in self.outputs or node.name in self.skipped
            if node.kind != "tool" or done or not all(d in self.outputs for d in node.after):
                continue
            call = self._call(node, self._inputs(node))
            how, value = await settle(self.ctx, self.key, call, node.step)
            if how == "finished" or how == "replayed":
                self.outputs[node.name] = value[0] if how == "finished" else value
                settled.append(node.name)
            elif how == "unknown":
                # A workflow has no model to tell: a person decides, even an earlier
                # "approve" of this step does not cover this second interruption.
                self.held.add(node.name)
                self.decisions.pop(node.name, None)
        await self.save("running")
        for name in settled:
            await self.ctx.store.delete(intent_key(self.key, name))

    async def save(self, status: Literal["running", "suspended", "complete", "cancelled"],
                   pending: tuple[str, ...] = ()) -> None:
        state = _State(status, FrozenDict(self.outputs), tuple(self.skipped), pending,
                       FrozenDict(self.decisions), self.usage, FrozenDict(self.nested))
        self.version = await self.checkpointer.save(self.key, state, expected_version=self.version)

    def _ready(self) -> tuple[list[_Node], list[str]]:
        ready, gates = [], []
        done = set(self.outputs) | set(self.skipped)
        for node in self.wf._nodes.values():
            if node.name in done or not all(d in done for d in node.after):
                continue
            if node.name in self.nested and node.name not in self.wakes:
                continue  # its sub-run still waits for a person
            if any(d in self.skipped for d in node.after):
                self.skipped.append(node.name)
                return self._ready()
            # A tool step held after a crash waits for a decision as a gate does.
            held = node.kind == "tool" and (node.name in self.held or node.name in self.decisions)
            if node.kind == "gate" or held:
                decision = self.decisions.get(node.name)
                if decision is None:
                    gates.append(node.name)
                    continue
                if decision == "reject":
                    self.skipped.append(node.name)
                    return self._ready()
            ready.append(node)
        return ready, gates

    async def go(self) -> WorkflowResult:
        limit = asyncio.Semaphore(self.wf.max_concurrency)
        while True:
            if self.ctx.cancel.cancelled:
                # A safe point: what finished is checkpointed, and the end is final (no
                # resume or recover takes a cancelled run up again).
                await self.save("cancelled")
                return self.result("cancelled")
            ready, gates = self._ready()
            if not ready:
                break
            try:
                async with asyncio.TaskGroup() as group:
                    for node in ready:
                        group.create_task(self._run_node(node, limit))
            except BaseExceptionGroup as failed:
                first = failed.exceptions[0]
                raise first from first.__cause__
        suspended = None
        if gates or self.nested:
            await self.save("suspended", tuple(gates))
            state = _State("suspended", {}, (), tuple(gates), {}, self.usage,
                           FrozenDict(self.nested))
            suspended = self.wf._suspension(self.ctx.correlation_id, state)
        else:
            await self.save("complete")
        return self.result("suspended" if suspended else "complete", suspended)

    def result(self, stop_reason: Literal["complete", "suspended", "cancelled"],
               suspended: Suspended | None = None) -> WorkflowResult:
        outputs = {k: v for k, v in self.outputs.items() if k != "task"}
        return WorkflowResult(
            outputs=FrozenDict(outputs),
            usage=self.usage,
            stop_reason=stop_reason,
            evals=FrozenDict({"suspended": suspended} if suspended else {}),
            skipped=tuple(self.skipped),
            terminal=self.wf.terminal,
            run_id=self.ctx.correlation_id,
        )

    @staticmethod
    def _call(node: _Node, inputs: Mapping[str, Any]) -> ToolCall:
        args = node.input(inputs) if node.input else {d: inputs[d] for d in node.after}
        return ToolCall(node.name, node.step.name, args)

    async def _run_tool(self, node: _Node, call: ToolCall) -> Any:
        """Run a tool step through the tool chain; a side-effecting one keeps an intent
        (see :mod:`agentkit.agents.intents`) until its output is checkpointed."""
        tool = node.step
        request = ToolRequest(call.name, call.arguments, tool, bool(tool.side_effecting),
                              call_id=call.id)
        digest = None
        if key_step(tool, call):
            digest = await start_intent(self.ctx, self.key, call, call.arguments)
        try:
            value = await self.ctx.invoker.invoke_tool(request, self.ctx)
        except Exception:
            if digest is not None:
                # It failed, and the step fails with it; recover runs a failed step again.
                await self.ctx.store.delete(intent_key(self.key, call.id))
            raise
        if digest is not None:
            # A 1-tuple, so that a step whose output is None still has an outcome.
            await self.ctx.store.set(
                intent_key(self.key, call.id), Intent(call.id, call.name, digest, (value,))
            )
            self.intended.add(node.name)
        return value

    def _inputs(self, node: _Node) -> dict[str, Any]:
        inputs: dict[str, Any] = {}
        stack = list(node.after)
        while stack:
            name = stack.pop()
            if name not in inputs:
                inputs[name] = self.outputs[name]
                stack.extend(self.wf._nodes[name].after)
        inputs["task"] = self.outputs["task"]
        return inputs

    async def _run_node(self, node: _Node, limit: asyncio.Semaphore) -> None:
        async with limit:
            try:
                value = await self._execute(node)
            except SubRunSuspended as exc:
                async with self.lock:
                    self.nested[node.name] = exc.sub
                    await self.save("running")
                return
            except (asyncio.CancelledError, WorkflowError):
                raise
            except RunCancelled as exc:
                if self.ctx.cancel.cancelled:
                    return  # stopped by the run's cancel: unfinished, as the run ends
                raise WorkflowError(self.wf.name, node.name, f"RunCancelled: {exc}") from exc
            except Exception as exc:
                reason = f"{type(exc).__name__}: {exc}"
                raise WorkflowError(self.wf.name, node.name, reason) from exc
        async with self.lock:
            self.outputs[node.name] = value
            self.nested.pop(node.name, None)
            await self.save("running")
        if node.name in self.intended:
            self.intended.discard(node.name)
            await self.ctx.store.delete(intent_key(self.key, node.name))

    async def _execute(self, node: _Node) -> Any:
        inputs = self._inputs(node)
        if node.kind == "gate":
            return self.decisions[node.name] == "approve"
        if node.kind == "function":
            return await node.step(inputs, self.ctx)
        if node.kind == "tool":
            return await self._run_tool(node, self._call(node, inputs))
        if node.input is not None:
            text = str(node.input(inputs))
        elif node.after:
            text = "\n".join(f"{d}: {_render(inputs[d])}" for d in node.after)
        else:
            text = str(inputs["task"])
        child = self.ctx.child()
        if callable(getattr(node.step, "_resume_at", None)):
            # A waiting step runs again only with decisions for its sub-run, once.
            decisions = self.wakes.pop(node.name, None)
            wake = self.nested.get(node.name) if decisions is not None else None
            # After a crash, a sub-run the step started continues from its checkpoint.
            token = calling(self.key, node.name, wake, decisions, again=self.recovering)
            try:
                result = await run_delegated(node.step, text, child)
            finally:
                left_call(token)
        else:
            result = await node.step.run(text, child)
        usage = getattr(result, "usage", None)
        if isinstance(usage, Usage):
            self.usage = self.usage + usage
        if getattr(result, "stop_reason", "complete") == "cancelled":
            raise RunCancelled(self.ctx.cancel.reason or "cancelled")
        if getattr(result, "stop_reason", "complete") == "suspended":
            raise WorkflowError(
                self.wf.name, node.name,
                "the agent suspended for approval inside the workflow; put a gate step "
                "before the step that needs a human instead",
            )
        output = getattr(result, "output", result)
        return output


def _render(value: Any) -> str:
    return value if isinstance(value, str) else str(value)
