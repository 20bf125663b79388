"""BedrockLLM: the LLM seam over Amazon Bedrock's Converse and ConverseStream APIs.

Built on botocore, AWS's official SDK core, whose blocking client runs in the
provider's own worker threads, one hop per call and one per stream event (see
``docs/provider-bedrock.md`` for why not aiobotocore). The request is built in
``_bedrock_wire`` (messages, tools, settings, media, cache points) and the replies are
read in ``_bedrock_reply``; this module holds the client: region and credentials from
the AWS chain, retries, and the hooks that hand each raw reply to the reader.

Replies are read as the JSON Bedrock sent, every field checked, so a reply of the wrong
shape is a ``ProviderError`` (see ``_errors``), never a short answer or a raw
``TypeError``; a stream that ends before ``messageStop`` and its ``metadata`` is an error.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from agentkit.core.contracts.errors import ProviderError
from agentkit.core.contracts.ports import Context
from agentkit.core.contracts.types import ChatRequest, LLMResult, StreamEvent
from agentkit.core.policies import under_retry
from agentkit.core.policies.prices import DEFAULT_PRICES, CacheTTL, PriceTable
from agentkit.providers._bedrock_reply import StreamAssembly, converse_result
from agentkit.providers._bedrock_wire import PROVIDER, converse_params
from agentkit.providers._errors import MalformedReply, ProviderCall, StreamTruncated, missing_extra
from agentkit.providers._json import excerpt
from agentkit.providers._prompt_cache import CacheMode
from agentkit.providers._reply import json_body, obj
from agentkit.providers.spec import model_id

if TYPE_CHECKING:
    pass

__all__ = ["BedrockLLM"]

_EVENT_STREAM = "application/vnd.amazon.eventstream"
_END = object()
# What urllib3 and botocore raise when a stream's connection breaks mid-body.
_BROKEN_STREAM = frozenset({"ProtocolError", "ResponseStreamingError", "IncompleteRead"})


class BedrockLLM:
    """Models on Amazon Bedrock (Claude, Nova, Llama, Mistral, ...) through Converse.

    ``region`` defaults to ``AWS_REGION``, then to the AWS chain (``AWS_DEFAULT_REGION``,
    the profile's ``region``); none is an error naming ``AWS_REGION``. Credentials come
    from the standard AWS chain only (environment, ``profile=`` or ``AWS_PROFILE``,
    container and instance roles), never from agentkit. ``endpoint_url`` points the
    client at another endpoint (a VPC endpoint, a proxy, a local fake). ``timeout``
    (seconds) and ``max_retries`` go to botocore; left unset, ``max_retries`` is
    botocore's default outside an agentkit ``retry()`` and 0 inside one. The model id
    (``anthropic.claude-sonnet-4-5-20250929-v1:0``, or an inference profile such as
    ``us.anthropic.claude-sonnet-4-5-20250929-v1:0``) comes from ``Agent(model=...)``.

    ``cache="auto"`` (the default) places ``cachePoint`` blocks as AnthropicLLM places
    its breakpoints, for the models that cache; ``cache_ttl`` is ``"5m"`` or ``"1h"``.

    ``max_connections`` bounds the calls in flight at once: each holds one of this
    provider's worker threads and one pooled connection until its reply (or its stream)
    has been read; more calls wait for a free one.
    """

    provider = PROVIDER

    def __init__(
        self,
        *,
        region: str | None = None,
        profile: str | None = None,
        endpoint_url: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        prices: PriceTable = DEFAULT_PRICES,
        cache: CacheMode = "auto",
        cache_ttl: CacheTTL = "5m",
        max_connections: int = 32,
    ) -> None:
        if cache not in ("auto", None):
            raise ValueError(
                f"BedrockLLM(cache=...) must be 'auto' (cache points on) or None (off), "
                f"got {cache!r}"
            )
        if cache_ttl not in ("5m", "1h"):
            raise ValueError(f"BedrockLLM(cache_ttl=...) must be '5m' or '1h', got {cache_ttl!r}")
        self.cache: CacheMode = cache
        self.cache_ttl: CacheTTL = cache_ttl
        self.prices = prices
        self._session: Any = None
        self._single_try: Any = None
        self._build_single_try: Callable[[], Any] | None = None
        if isinstance(max_connections, bool) or not isinstance(max_connections, int) or (
            max_connections < 1
        ):
            raise ValueError(
                f"BedrockLLM(max_connections=...) must be a positive int, got {max_connections!r}"
            )
        self.region: str = ""
        # Its own threads: the loop's default executor has min(32, cores + 4) of them,
        # six on two cores, shared with every other to_thread() of the process.
        self._threads = ThreadPoolExecutor(max_connections, thread_name_prefix="agentkit-bedrock")
        self.client = self._build(region, profile, endpoint_url, timeout, max_retries,
                                  max_connections)

    def _build(
        self, region: str | None, profile: str | None, endpoint_url: str | None,
        timeout: float | None, max_retries: int | None, max_connections: int,
    ) -> Any:
        try:
            import botocore.config
            import botocore.session
        except ImportError:
            raise missing_extra("Amazon Bedrock", "bedrock") from None
        session = botocore.session.Session(profile=profile)
        try:
            # botocore reads AWS_DEFAULT_REGION; the other AWS SDKs read AWS_REGION first.
            region = region or os.environ.get("AWS_REGION") or session.get_config_variable(
                "region")
        except Exception as error:  # a profile that does not exist, say
            raise _setup_error(f"the AWS configuration cannot be read: {error}") from error
        if not region:
            raise _setup_error(
                "no AWS region: set AWS_REGION (or AWS_DEFAULT_REGION, or region in your AWS "
                "profile), or pass BedrockLLM(region=...)"
            )
        self.region = region
        self._session = session

        def client(attempts: int | None) -> Any:
            options: dict[str, Any] = {"max_pool_connections": max_connections}
            if timeout is not None:
                options.update(connect_timeout=timeout, read_timeout=timeout)
            if attempts is not None:
                options["retries"] = {"total_max_attempts": attempts, "mode": "standard"}
            built = session.create_client(
                "bedrock-runtime", region_name=region, endpoint_url=endpoint_url,
                config=botocore.config.Config(**options),
            )
            _watch_replies(built)
            return built

        if max_retries is not None:
            return client(max_retries + 1)
        self._build_single_try = lambda: client(1)
        return client(None)

    def _check_credentials(self) -> None:
        """Raise now, naming what to set, when the AWS chain finds no credentials."""
        if self._session is not None and self._session.get_credentials() is None:
            raise ProviderError(
                "bedrock: no AWS credentials: set AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones), or "
                "AWS_PROFILE naming a profile in ~/.aws, or run with an instance or task "
                "role",
                provider=self.provider, transient=False, kind="authentication",
            )

    def _for_call(self) -> Any:
        # Inside retry() one attempt is one request, unless max_retries= was chosen.
        if self._build_single_try is None or not under_retry():
            return self.client
        if self._single_try is None:
            self._single_try = self._build_single_try()
        return self._single_try

    def _params(self, request: ChatRequest) -> dict[str, Any]:
        return converse_params(request, model_id(request.model), cache=self.cache == "auto",
                               ttl=self.cache_ttl)

    async def chat(self, request: ChatRequest, ctx: Context) -> LLMResult:
        """One Converse call."""
        params = self._params(request)
        client = self._for_call()
        with ProviderCall(self.provider, "x-amzn-requestid") as call:
            reply = await self._send(call, client.converse, params)
            return converse_result(reply.get(_RAW), params["modelId"], self.prices, self.cache_ttl)

    async def stream(self, request: ChatRequest, ctx: Context) -> AsyncIterator[StreamEvent]:
        """One ConverseStream call: deltas, then the complete result.

        A stream that ends before ``messageStop`` and its ``metadata`` is an error.
        """
        params = self._params(request)
        client = self._for_call()
        with ProviderCall(self.provider, "x-amzn-requestid") as call:
            reply = await self._send(call, client.converse_stream, params)
            events = reply.get("stream") if isinstance(reply, dict) else None
            if events is None:
                raise MalformedReply("stream: expected an event stream, got nothing")
            assembly = StreamAssembly(params["modelId"])
            try:
                iterator = iter(events)
                while not assembly.done:
                    item = await self._in_thread(_next_event, iterator, assembly.delivered)
                    if item is _END:
                        break
                    for delta in assembly.take(obj(item, "event")):
                        yield delta
            finally:
                await self._in_thread(events.close)
            yield assembly.result(self.prices, self.cache_ttl)

    async def _in_thread(self, function: Callable[..., Any], *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._threads, functools.partial(function, *args))

    async def _send(
        self, call: ProviderCall, method: Callable[..., Any], params: dict[str, Any]
    ) -> Any:
        """One SDK call in a worker thread; its reply's request id noted on ``call``."""
        try:
            reply = await self._in_thread(_sdk_call, method, params)
        except MalformedReply as error:
            call.request_id = getattr(error, "request_id", None)
            raise
        call.answered(_headers(reply))
        return reply

    def __repr__(self) -> str:
        options = [f"region={self.region!r}"]
        if self.cache is None:
            options.append("cache=None")
        elif self.cache_ttl != "5m":
            options.append("cache_ttl='1h'")
        return f"BedrockLLM({', '.join(options)})"


def _setup_error(problem: str) -> ProviderError:
    return ProviderError(f"bedrock: {problem}", provider=PROVIDER, transient=False,
                         kind="configuration")


_RAW = "agentkit_raw_body"
"""Where the hook below leaves a Converse reply's own JSON in botocore's result."""


def _watch_replies(client: Any) -> None:
    """Read each successful raw reply before botocore parses it.

    A Converse body is decoded here (an empty, HTML or non-JSON body is a
    :class:`MalformedReply`) and handed on whole, so that the reply is read as the JSON
    the API sent, every field checked, rather than as what botocore's parser makes of a
    body of the wrong shape (it raises ``AttributeError`` on some). botocore is given an
    empty object to parse in its place. A stream must be an event stream.
    """
    events = client.meta.events
    events.register("before-parse.bedrock-runtime.Converse", _take_body,
                    unique_id="agentkit-converse-body")
    events.register("before-parse.bedrock-runtime.ConverseStream", _check_stream,
                    unique_id="agentkit-converse-stream-body")


def _take_body(
    response_dict: dict[str, Any], customized_response_dict: dict[str, Any], **_: Any
) -> None:
    if response_dict.get("status_code") != 200:
        return  # botocore reads the service's exceptions
    headers = response_dict.get("headers") or {}
    try:
        customized_response_dict[_RAW] = json_body(response_dict.get("body") or b"", headers)
    except MalformedReply as error:
        error.request_id = headers.get("x-amzn-requestid")  # type: ignore[attr-defined]
        raise
    response_dict["body"] = b"{}"


def _check_stream(response_dict: dict[str, Any], **_: Any) -> None:
    if response_dict.get("status_code") != 200:
        return
    headers = response_dict.get("headers") or {}
    media = headers.get("content-type", "").partition(";")[0].strip().lower()
    if media != _EVENT_STREAM:
        body = response_dict.get("body")
        text = body.read() if body is not None and hasattr(body, "read") else b""
        error = MalformedReply(
            f"asked for a stream, got a body of type {media or 'unknown'} instead of "
            f"{_EVENT_STREAM}: {excerpt(text.decode('utf-8', errors='replace'))}"
        )
        error.request_id = headers.get("x-amzn-requestid")  # type: ignore[attr-defined]
        raise error


def _sdk_call(method: Callable[..., Any], params: dict[str, Any]) -> Any:
    try:
        return method(**params)
    except (AttributeError, TypeError, KeyError, IndexError) as error:
        # botocore's parser walks a stream's events by the API's model and trips over a
        # value of the wrong type; our own parameters were checked before sending.
        raise MalformedReply(
            f"the reply does not fit the Converse API's shape ({type(error).__name__}: "
            f"{error})"
        ) from error


def _next_event(iterator: Iterator[Any], delivered: int) -> Any:
    try:
        return next(iterator, _END)
    except (AttributeError, TypeError, KeyError, IndexError) as error:
        raise MalformedReply(
            f"an event does not fit the ConverseStream API's shape ({type(error).__name__}: "
            f"{error})"
        ) from error
    except Exception as error:
        if {cls.__name__ for cls in type(error).__mro__} & _BROKEN_STREAM:
            raise StreamTruncated("with the connection broken mid-event", delivered) from error
        raise


def _headers(reply: Any) -> dict[str, str]:
    metadata = reply.get("ResponseMetadata") if isinstance(reply, dict) else None
    headers = metadata.get("HTTPHeaders") if isinstance(metadata, dict) else None
    return headers if isinstance(headers, dict) else {}
