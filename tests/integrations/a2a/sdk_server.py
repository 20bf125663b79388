"""A scripted A2A agent served by the official ``a2a-sdk`` server classes: it books a
room, asks which date (``input-required``) and, told one, completes with the booking."""

from __future__ import annotations

from typing import Any

from a2a.helpers.proto_helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Role,
)
from starlette.applications import Starlette


class Booking(AgentExecutor):
    """Asks for a date on a new task; completes the task the date was given for."""

    def __init__(self) -> None:
        self.booked: list[str] = []
        self.received: list[str] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        said = context.get_user_input()
        self.received.append(said)
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if context.current_task is None:
            await updater.start_work(self._say(task, "Looking at the calendar."))
            await updater.requires_input(self._say(task, "Which date should I book?"))
            return
        self.booked.append(said)
        await updater.add_artifact([Part(text=f"Booked a room for {said}.")],
                                   artifact_id="booking", name="booking")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError("bookings cannot be cancelled")

    @staticmethod
    def _say(task: Any, text: str) -> Message:
        return Message(message_id=f"{task.id}-{len(text)}", role=Role.ROLE_AGENT,
                       task_id=task.id, context_id=task.context_id, parts=[Part(text=text)])


def booking_app(base: str, executor: Booking) -> Starlette:
    """The app serving ``executor`` as the agent ``booking`` whose URL is ``base``."""
    card = AgentCard(
        name="booking", description="Books meeting rooms.", version="1.0.0",
        supported_interfaces=[AgentInterface(url=base, protocol_binding="JSONRPC",
                                              protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"], default_output_modes=["text/plain"],
        skills=[AgentSkill(id="book", name="book", description="Book a room",
                           tags=["rooms"])],
    )
    handler = DefaultRequestHandler(agent_executor=executor, task_store=InMemoryTaskStore(),
                                    agent_card=card)
    return Starlette(routes=[*create_agent_card_routes(card),
                             *create_jsonrpc_routes(handler, rpc_url="/")])
