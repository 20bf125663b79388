"""``agentkit serve MODULE[:ATTR] --store URL``: a module's agents over HTTP.

MODULE is loaded as ``agentkit tools inspect`` loads it (same messages, same statuses).
Its agents are ATTR's, else the module's ``agents`` sequence, else every ``Agent`` it
defines; ``def context() -> RunContext`` gives the base context, else one is made with
``make_ctx`` from the first agent's model spec. ``--store`` replaces the context's store.
The command prints the address, serves until SIGINT or SIGTERM, then stops the runs in
flight at their last checkpoint (the next start recovers them). With ``--temporal`` the
agents' runs execute on the workers of ``--task-queue`` instead, and go on while it is
stopped (a module's Workflows still run in the server's process).
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentkit.cli.errors import UsageError
from agentkit.cli.targets import load_target
from agentkit.cli.temporal import _Unreachable as Unreachable
from agentkit.cli.temporal import find_agents
from agentkit.core.contracts.ports import Store
from agentkit.core.runtime.context import RunContext
from agentkit.integrations.http_hosts import allowed_hosts
from agentkit.serve.access import Access, Principal, check_exposure, load_tokens, operator_tokens

__all__ = ["open_store", "serve_agents_command"]


def open_store(url: str) -> Store:
    """The store a ``--store`` URL names: ``memory:``, ``sqlite:///PATH`` or
    ``postgresql://...``; UsageError for anything else."""
    if url == "memory:":
        from agentkit.state.stores import InMemoryStore

        return InMemoryStore()
    if url.startswith("sqlite:///") and len(url) > len("sqlite:///"):
        from agentkit.state.stores.sqlite import SQLiteStore

        return SQLiteStore(Path(url[len("sqlite:///"):]))
    if url.startswith(("postgresql://", "postgres://")):
        from agentkit.state.stores.postgres import PostgresStore

        return PostgresStore(url)
    raise UsageError(f"--store {url!r} is not a store URL: use memory:, sqlite:///runs.db "
                     "(a file), or postgresql://user@host/db")


def _tokens(token_env: str | None, tokens_file: str | None) -> dict[str, Principal] | None:
    if token_env is not None and tokens_file is not None:
        raise UsageError("give --token-env NAME or --tokens FILE, not both")
    if token_env is not None:
        token = os.environ.get(token_env)
        if not token or not token.strip():
            raise UsageError(f"--token-env {token_env}: the environment variable {token_env} "
                             "is not set or empty; set it to a long random secret")
        return operator_tokens(token)
    if tokens_file is not None:
        try:
            return load_tokens(tokens_file)
        except ValueError as error:
            raise UsageError(f"--tokens: {error}") from None
    return None


def _agents(target: str) -> tuple[Any, list[Any]]:
    from agentkit.agents.agent import Agent
    from agentkit.agents.workflow import Workflow

    # Workflows run in the server's process on either engine (Temporal workers host
    # the Agents).
    kinds: tuple[type, ...] = (Agent, Workflow)
    module, named = load_target(target)
    if named is not None:
        agents = find_agents(named, kinds)
    else:
        listed = getattr(module, "agents", None)
        agents = find_agents(listed if isinstance(listed, list | tuple) else module, kinds)
    if not agents:
        raise UsageError(f"no agents found in {target!r}: define Agent objects at module "
                         "level, an `agents` list, or name one: agentkit serve MODULE:ATTR")
    return module, agents


def _context(module: Any, agents: Sequence[Any], store: Store) -> Callable[[], RunContext]:
    given = getattr(module, "context", None)
    if callable(given):
        def context() -> RunContext:
            base = given()
            if not isinstance(base, RunContext):
                raise UsageError(f"{module.__name__}.context() must return a RunContext, "
                                 f"got {type(base).__name__}")
            return base.for_run(base.correlation_id, store=store)
        return context
    from agentkit.core.assembly import make_ctx
    from agentkit.providers.factory import llm_for

    specs = sorted({agent.model for agent in agents if getattr(agent, "model", None)})
    if not specs:
        raise UsageError(f"{module.__name__} serves no Agent with a model spec to make a "
                         "context from: define `def context() -> RunContext` in the module")
    try:
        llm = llm_for(specs[0])
    except (ValueError, TypeError) as error:
        raise UsageError(f"cannot make a model for {specs[0]!r}: {error}; define "
                         "`def context() -> RunContext` in the module instead") from None
    return lambda: make_ctx(llm, store=store)


def serve_agents_command(
    target: str, *, store: str, host: str = "127.0.0.1", port: int = 8000,
    token_env: str | None = None, tokens_file: str | None = None,
    allow_hosts: Sequence[str] | None = None, allow_origins: Sequence[str] | None = None,
    a2a: bool = False, temporal: str | None = None, task_queue: str | None = None,
    namespace: str = "default",
) -> int:
    """Serve the agents of ``target`` until interrupted; the exit status."""
    if (temporal is None) != (task_queue is None):
        raise UsageError("--temporal ADDRESS and --task-queue Q go together: the Temporal "
                         "frontend and the task queue its `agentkit temporal worker`s poll")
    tokens = _tokens(token_env, tokens_file)
    try:  # refused before the module is imported: nothing of it runs exposed
        check_exposure(host, Access(tokens))
        hosts = allowed_hosts(host, port, allow_hosts or None, flag="--allow-host",
                              example="agents.example.com")
    except ValueError as error:
        raise UsageError(f"--host {host}: {error}") from None
    opened = open_store(store)
    module, agents = _agents(target)
    from agentkit.serve import create_app

    engine = None if temporal is None or task_queue is None else _temporal(
        temporal, task_queue, namespace)
    app = create_app(agents, context=_context(module, agents, opened), auth=tokens,
                     engine=engine, allowed_hosts=hosts, allowed_origins=allow_origins or None,
                     a2a=a2a)
    try:
        asyncio.run(_serve(app, _listen(host, port), host, port, [a.name for a in agents],
                           opened, engine))
    except Unreachable as exc:
        # As `agentkit temporal worker` does: the SDK's native threads may call into
        # Python while the interpreter finalizes after a failed connect; leave at once.
        print(f"agentkit: error: {exc}", file=sys.stderr, flush=True)
        os._exit(2)
    return 0


def _temporal(address: str, task_queue: str, namespace: str) -> Any:
    try:
        from agentkit.serve.temporal import TemporalEngine
    except ImportError as error:
        raise UsageError(f"--temporal: {error}") from None
    return TemporalEngine(address, task_queue=task_queue, namespace=namespace)


async def _connected(engine: Any) -> None:
    """Connect to Temporal before serving, so an unreachable frontend is one line."""
    from temporalio.client import Client

    address = engine.address
    try:
        engine.client = await Client.connect(address, namespace=engine.namespace)
    except Exception as exc:
        raise Unreachable(f"cannot reach Temporal at {address}: {exc}") from None


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, with small writes sent at once: without TCP_NODELAY a
    response written in two parts waits up to 40 ms for the client's delayed ACK."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host.strip("[]"), port))
    except OSError as error:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {error.strerror}") from None
    return sock


async def _serve(app: Any, sock: socket.socket, host: str, port: int, names: list[str],
                 store: Store, engine: Any = None) -> None:
    import uvicorn

    if engine is not None:
        await _connected(engine)

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            # Stop as uvicorn does (a second Ctrl-C forces it), but exit 0 afterwards
            # instead of raising the signal again: the stop was asked for, and done.
            if self.should_exit and sig == signal.SIGINT:
                self.force_exit = True
            self.should_exit = True

    server = Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    announce = asyncio.create_task(_announce(server, host, port, names))
    try:
        await server.serve(sockets=[sock])  # ends on SIGINT/SIGTERM, after the lifespan
    finally:
        announce.cancel()
        close = getattr(store, "close", None)
        if close is not None:
            done = close()
            if asyncio.iscoroutine(done):
                await done
    print("agentkit serve: stopped; runs in flight keep their last checkpoint", flush=True)


async def _announce(server: Any, host: str, port: int, names: list[str]) -> None:
    while not server.started:
        await asyncio.sleep(0.02)
    shown = f"[{host}]" if ":" in host else host
    print(f"agentkit serve: {', '.join(names)} on http://{shown}:{port}/v1 "
          "(Ctrl-C stops)", flush=True)
