"""botocore in a worker thread against aiobotocore, on BedrockLLM's wire test.

Both SDKs talk to ``tests/providers/fake_bedrock.py`` (Converse JSON and the
ConverseStream event stream, on a loopback port) with the same request. Rows:

- import: ``python -c "import botocore.session"`` and ``"import aiobotocore.session"``
  in a fresh interpreter, minus ``python -c "pass"`` (median of ``--import-repeat``);
- client: building one ``bedrock-runtime`` client (median of 11);
- converse: sequential Converse calls, per call (median of ``--repeat`` loops of
  ``--n``), through each SDK alone (botocore in a worker thread) and through
  ``BedrockLLM.chat`` (the request built, the reply read and priced);
- stream: sequential ConverseStream calls of 20 text deltas each, per call;
- gather: ``--concurrent`` calls at once, each answered after ``--latency`` seconds, as a
  model that thinks: the wall time of the whole gather.

The stream and gather rows go through ``BedrockLLM`` itself for botocore (its own worker
threads) and call the aiobotocore client directly, the floor an adapter on it could
reach. Run with ``.venv/bin/python bench/bedrock_sdk.py``; figures are in bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "providers"))

from fake_bedrock import (  # noqa: E402
    AWS_ENVIRONMENT,
    MODEL,
    FakeBedrock,
    converse_reply,
    stream_reply,
    text_stream,
)

from agentkit.core.contracts.types import ChatRequest, Message  # noqa: E402
from agentkit.core.testing import make_test_ctx  # noqa: E402
from agentkit.providers import BedrockLLM  # noqa: E402

PARAMS: dict[str, Any] = {"modelId": MODEL,
                          "messages": [{"role": "user", "content": [{"text": "Hello?"}]}]}
REQUEST = ChatRequest(model=MODEL, messages=(Message("user", "Hello?"),))


def import_cost(module: str, repeat: int) -> float:
    def run(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return time.perf_counter() - start

    base = statistics.median(run("pass") for _ in range(repeat))
    return statistics.median(run(f"import {module}") for _ in range(repeat)) - base


def median_time(action: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def amedian(action: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        await action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--import-repeat", type=int, default=7)
    parser.add_argument("--concurrent", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.5)
    args = parser.parse_args()
    os.environ.update(AWS_ENVIRONMENT)
    server = FakeBedrock()
    import aiobotocore.session
    import botocore.session

    rows: list[tuple[str, float, float]] = []
    rows.append(("import (ms)", import_cost("botocore.session", args.import_repeat) * 1e3,
                 import_cost("aiobotocore.session", args.import_repeat) * 1e3))

    def sync_client() -> Any:
        return botocore.session.Session().create_client(
            "bedrock-runtime", region_name="us-east-1", endpoint_url=server.url)

    async_session = aiobotocore.session.get_session()

    async def async_client() -> None:  # a new session each time, as for botocore
        async with aiobotocore.session.AioSession().create_client(
            "bedrock-runtime", region_name="us-east-1", endpoint_url=server.url):
            pass

    rows.append(("client (ms)", median_time(sync_client, 11) * 1e3,
                 await amedian(async_client, 11) * 1e3))

    llm = BedrockLLM(region="us-east-1", endpoint_url=server.url, max_retries=0, cache=None)
    ctx = make_test_ctx(llm=llm)
    async with async_session.create_client(
        "bedrock-runtime", region_name="us-east-1", endpoint_url=server.url
    ) as client:

        async def threaded_calls() -> None:
            server.reply(*(converse_reply([{"text": "ok"}]) for _ in range(args.n)))
            for _ in range(args.n):
                await llm.chat(REQUEST, ctx)

        async def native_calls() -> None:
            server.reply(*(converse_reply([{"text": "ok"}]) for _ in range(args.n)))
            for _ in range(args.n):
                await client.converse(**PARAMS)

        raw = sync_client()
        loop = asyncio.get_running_loop()

        async def raw_threaded_calls() -> None:
            server.reply(*(converse_reply([{"text": "ok"}]) for _ in range(args.n)))
            for _ in range(args.n):
                await loop.run_in_executor(None, lambda: raw.converse(**PARAMS))

        await threaded_calls()  # warm-up: connections and first-call caches
        await native_calls()
        await raw_threaded_calls()
        rows.append(("converse, SDK alone (ms/call)", await amedian(raw_threaded_calls,
                     args.repeat) / args.n * 1e3,
                     await amedian(native_calls, args.repeat) / args.n * 1e3))
        rows.append(("converse, BedrockLLM.chat (ms/call)",
                     await amedian(threaded_calls, args.repeat) / args.n * 1e3, float("nan")))

        pieces = [f"w{i} " for i in range(20)]
        streams = max(1, args.n // 4)

        async def threaded_streams() -> None:
            server.reply(*(stream_reply(*text_stream(*pieces)) for _ in range(streams)))
            for _ in range(streams):
                async for _event in llm.stream(REQUEST, ctx):
                    pass

        async def native_streams() -> None:
            server.reply(*(stream_reply(*text_stream(*pieces)) for _ in range(streams)))
            for _ in range(streams):
                reply = await client.converse_stream(**PARAMS)
                async for _event in reply["stream"]:
                    pass

        rows.append(("stream, 20 deltas (ms/call)",
                     await amedian(threaded_streams, args.repeat) / streams * 1e3,
                     await amedian(native_streams, args.repeat) / streams * 1e3))

        def slow() -> list[Any]:
            return [converse_reply([{"text": "ok"}]) for _ in range(args.concurrent)]

        async def threaded_gather() -> None:
            server.reply(*(r for r in slow() if setattr(r, "delay", args.latency) or True))
            await asyncio.gather(*(llm.chat(REQUEST, ctx) for _ in range(args.concurrent)))

        async def native_gather() -> None:
            server.reply(*(r for r in slow() if setattr(r, "delay", args.latency) or True))
            await asyncio.gather(*(client.converse(**PARAMS) for _ in range(args.concurrent)))

        rows.append((f"gather of {args.concurrent}, {args.latency}s each (s)",
                     await amedian(threaded_gather, 3), await amedian(native_gather, 3)))
    server.close()
    print(f"{'row':<36} {'botocore+thread':>16} {'aiobotocore':>12}")
    for name, threaded, native in rows:
        print(f"{name:<36} {threaded:>16.3f} {native:>12.3f}")


if __name__ == "__main__":
    asyncio.run(main())
