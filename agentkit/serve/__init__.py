"""agentkit over HTTP: ``create_app(agents, context=...)`` is an ASGI app serving runs,
their events and traces, and one approval inbox for every run (see ``docs/serve.md``).

Starlette is imported when an app is created, not with this package: ``Principal`` and
the token helpers work without the ``serve`` extra.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentkit.serve.access import Principal

if TYPE_CHECKING:
    from agentkit.agents.agent import Agent
    from agentkit.core.runtime.context import RunContext
    from agentkit.serve.a2a_tasks import A2ASkill
    from agentkit.serve.engine import Engine

__all__ = ["DEFAULT_MAX_BODY", "Principal", "create_app"]

DEFAULT_MAX_BODY = 16 * 1024 * 1024
"""Request bodies past this many bytes are answered 413."""


def create_app(
    agents: Sequence[Agent],
    *,
    context: Callable[[], RunContext],
    auth: Mapping[str, Principal] | None = None,
    engine: Engine | None = None,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
    max_body: int = DEFAULT_MAX_BODY,
    routes: Sequence[Any] = (),
    a2a: bool | Mapping[str, Sequence[A2ASkill]] = False,
    console: bool = True,
) -> Any:
    """An ASGI app serving ``agents`` by name under ``/v1``.

    ``context`` is called once, at creation, for the base
    :class:`~agentkit.core.runtime.context.RunContext` (its store keeps the runs);
    each run gets a context of its own from it. ``auth`` maps bearer tokens to
    principals; without it every request is the principal ``local``, which is only
    safe on loopback. ``allowed_hosts`` are the ``Host`` values accepted (default:
    loopback names on any port), ``allowed_origins`` the browser origins (default:
    those hosts). ``routes`` are more Starlette routes, mounted beside the API, which
    reach the runs through :func:`agentkit.serve.app.runs_of`. ``a2a=True`` serves each
    agent as an A2A agent at ``/a2a/{agent}`` (``docs/a2a.md``); a mapping from agent name
    to :class:`~agentkit.serve.a2a_tasks.A2ASkill` objects lists those skills on its card
    instead of one per tool. ``engine`` is where runs execute: None for this process
    (:class:`~agentkit.serve.inprocess.InProcessEngine`), or
    :class:`~agentkit.serve.temporal.TemporalEngine` for Temporal workers. ``console``
    serves the browser console at ``/`` (``docs/console.md``).
    """
    try:
        from agentkit.serve.agui import ag_ui_routes
        from agentkit.serve.app import build_app
    except ImportError as error:
        raise ImportError(
            "agentkit.serve needs Starlette and uvicorn, which are not installed: "
            'pip install "agentkit-framework[serve]"'
        ) from error
    if a2a:
        from agentkit.serve.a2a import a2a_routes

        routes = [*routes, *a2a_routes(None if a2a is True else a2a)]
    return build_app(agents, context=context, auth=auth, engine=engine,
                     allowed_hosts=allowed_hosts, allowed_origins=allowed_origins,
                     max_body=max_body, routes=[*ag_ui_routes(), *routes], a2a=bool(a2a),
                     console=console)
