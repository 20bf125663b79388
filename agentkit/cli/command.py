"""``agentkit``: parse the command line and run one command.

User mistakes (a module that does not import, a bad model spec) are one clear line on
stderr and exit status 2; nothing here prints a traceback for them. When whatever reads
stdout goes away (``| head -1``) the command stops quietly with status 141, as a
command ended by SIGPIPE does.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from agentkit import __version__
from agentkit._examples import EXAMPLE_SPECS
from agentkit.cli.errors import UsageError

__all__ = ["main"]

_SIGPIPE_STATUS = 128 + 13


def _examples() -> str:
    *first, last = EXAMPLE_SPECS.values()
    return f"{', '.join(first)} or {last}"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentkit",
        description="agentkit: agents whose tools say exactly what they do.",
    )
    parser.add_argument("--version", action="version", version=f"agentkit {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = commands.add_parser(
        "demo", help="run the demo agent (scripted and offline unless --model is given)"
    )
    demo.add_argument(
        "--model",
        help=f"a model spec: PROVIDER:MODEL[@BASE_URL], such as {_examples()} (default: "
        "$AGENTKIT_MODEL, else the offline scripted model)",
    )
    demo.add_argument(
        "--store", metavar="URL",
        help="keep the run and its trace in this store (sqlite:///demo.db), to open it in "
        "the console: agentkit serve agentkit.demo --store URL",
    )

    tools = commands.add_parser("tools", help="look at tools as the model sees them")
    tools_commands = tools.add_subparsers(dest="tools_command", metavar="SUBCOMMAND")
    inspect = tools_commands.add_parser(
        "inspect", help="print each tool's name, description and JSON Schema"
    )
    inspect.add_argument("target", metavar="MODULE[:ATTR]", help="a module, file or attribute")
    inspect.add_argument("--json", action="store_true", help="machine-readable output")

    mcp = commands.add_parser("mcp", help="serve tools over the Model Context Protocol")
    mcp_commands = mcp.add_subparsers(dest="mcp_command", metavar="SUBCOMMAND")
    serve = mcp_commands.add_parser("serve", help="serve tools over stdio or streamable HTTP")
    serve.add_argument("target", metavar="MODULE[:ATTR]", help="where the tools are")
    serve.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP here")
    serve.add_argument("--name", help="the server name MCP clients see")
    serve.add_argument("--token-env", metavar="NAME",
                       help="require 'Authorization: Bearer <token>', the token read from $NAME")
    serve.add_argument("--insecure-no-auth", action="store_true",
                       help="serve a non-loopback address without a token")
    serve.add_argument("--allow-host", action="append", metavar="HOST:PORT",
                       help="a Host header to accept (repeatable; default: the bound address)")
    serve.add_argument("--allow-origin", action="append", metavar="ORIGIN",
                       help="an Origin header to accept (repeatable; default: the allowed hosts)")

    evals = commands.add_parser("eval", help="run a dataset of cases against an agent and score it")
    evals.add_argument("target", metavar="MODULE:DATASET", help="where the Dataset is")
    evals.add_argument("--agent", required=True, metavar="MODULE:AGENT", help="the Agent to run")
    evals.add_argument("--repeat", type=int, default=1, metavar="N", help="runs per case")
    evals.add_argument("--json", metavar="OUT.json", help="write the report as JSON")
    evals.add_argument("--junit", metavar="OUT.xml", help="write the report as JUnit XML")
    evals.add_argument("--baseline", metavar="OLD.json", help="compare with an earlier --json")
    evals.add_argument("--model", help="a model spec (default: $AGENTKIT_MODEL, else the "
                       "agent's own model and its module's ctx_factory())")

    http = commands.add_parser("serve", help="serve agents over HTTP, with one approval inbox")
    http.add_argument("target", metavar="MODULE[:ATTR]", help="where the agents are")
    http.add_argument("--store", required=True, metavar="URL",
                      help="memory:, sqlite:///runs.db or postgresql://... (keeps the runs)")
    http.add_argument("--host", default="127.0.0.1", help="the address to bind")
    http.add_argument("--port", type=int, default=8000, help="the port to bind")
    http.add_argument("--token-env", metavar="NAME",
                      help="one principal, operator, whose bearer token is read from $NAME")
    http.add_argument("--tokens", metavar="FILE",
                      help='a JSON object from token to {"name", "scopes", "can_decide"}')
    http.add_argument("--allow-host", action="append", metavar="HOST:PORT",
                      help="a Host header to accept (repeatable; default: the bound address)")
    http.add_argument("--allow-origin", action="append", metavar="ORIGIN",
                      help="an Origin header to accept (repeatable; default: the allowed hosts)")
    http.add_argument("--temporal", metavar="ADDRESS",
                      help="run on Temporal: the server is a client of this frontend, and "
                      "runs execute on `agentkit temporal worker` processes")
    http.add_argument("--task-queue", metavar="Q", help="the workers' task queue (--temporal)")
    http.add_argument("--namespace", default="default", help="the Temporal namespace")
    http.add_argument("--a2a", action="store_true",
                      help="serve each agent as an A2A agent too, at /a2a/AGENT")

    temporal = commands.add_parser("temporal", help="run agents on Temporal")
    temporal_commands = temporal.add_subparsers(dest="temporal_command", metavar="SUBCOMMAND")
    worker = temporal_commands.add_parser(
        "worker", help="run a Temporal worker for the agents a module defines"
    )
    worker.add_argument("target", metavar="MODULE[:ATTR]", help="where the agents are")
    worker.add_argument("--address", default="localhost:7233", metavar="HOST:PORT")
    worker.add_argument("--namespace", default="default", metavar="NS")
    worker.add_argument("--task-queue", required=True, metavar="Q")
    return parser


def _dispatch(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.command == "demo":
        from agentkit.demo import run_demo

        return run_demo(args.model, args.store)
    if args.command == "tools" and args.tools_command == "inspect":
        from agentkit.cli.tools import inspect_command

        return inspect_command(args.target, as_json=args.json)
    if args.command == "mcp" and args.mcp_command == "serve":
        from agentkit.cli.mcp import serve_command

        return serve_command(
            args.target, http=args.http, name=args.name, token_env=args.token_env,
            insecure_no_auth=args.insecure_no_auth, allow_hosts=args.allow_host,
            allow_origins=args.allow_origin,
        )
    if args.command == "eval":
        from agentkit.cli.evals import eval_command

        return eval_command(
            args.target, agent=args.agent, repeat=args.repeat, json_path=args.json,
            junit_path=args.junit, baseline=args.baseline, model=args.model,
        )
    if args.command == "serve":
        from agentkit.cli.serve import serve_agents_command

        return serve_agents_command(
            args.target, store=args.store, host=args.host, port=args.port,
            token_env=args.token_env, tokens_file=args.tokens, allow_hosts=args.allow_host,
            allow_origins=args.allow_origin, a2a=args.a2a, temporal=args.temporal,
            task_queue=args.task_queue, namespace=args.namespace,
        )
    if args.command == "temporal" and args.temporal_command == "worker":
        from agentkit.cli.temporal import worker_command

        return worker_command(
            args.target, address=args.address, namespace=args.namespace,
            task_queue=args.task_queue,
        )
    parser.print_help(sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
        status = _dispatch(args, parser)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return status
    except BrokenPipeError:
        return _stdout_closed()
    except (UsageError, ImportError) as exc:
        # ImportError here is an optional extra that is not installed; its message
        # names the pip command that installs it.
        print(f"agentkit: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _stdout_closed() -> int:
    """The reader of stdout left (``agentkit ... | head -1``): stop quietly with the
    status a shell reports for a command that SIGPIPE ended, 128 + 13."""
    # Point stdout at /dev/null so the interpreter's last flush has nowhere to fail.
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
    return _SIGPIPE_STATUS

