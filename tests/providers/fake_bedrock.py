"""A real HTTP server on 127.0.0.1 that speaks the Bedrock Runtime's Converse wire format.

``POST /model/{modelId}/converse`` answers with a JSON body and ``POST
/model/{modelId}/converse-stream`` with an ``application/vnd.amazon.eventstream`` body:
binary frames, each a prelude (total and header lengths, their CRC32), string headers
(``:message-type``, ``:event-type`` or ``:exception-type``, ``:content-type``), a JSON
payload and the frame's CRC32, so botocore's own parser reads them as it reads AWS's.
Failures are AWS's: an HTTP status, ``x-amzn-ErrorType`` and ``{"message": ...}``.

Every request is recorded (model id, headers, JSON body) and checked against botocore's
service model for ``bedrock-runtime`` with botocore's ``ParamValidator``: a request the
real service would refuse at its front door is answered with a ``ValidationException``
and listed in :attr:`FakeBedrock.problems`, which the fixture asserts is empty, so the
fake cannot drift from the API.
"""

from __future__ import annotations

import base64
import functools
import json
import struct
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

import pytest

MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
REQUEST_ID = "7b3e4c1a-0000-4000-8000-000000000001"


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream message: prelude, prelude CRC, headers, payload, message CRC."""
    encoded = b"".join(
        struct.pack("!B", len(name)) + name.encode() + struct.pack("!BH", 7, len(value))
        + value.encode()
        for name, value in headers.items()
    )
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack("!II", total, len(encoded))
    head = prelude + struct.pack("!I", zlib.crc32(prelude)) + encoded + payload
    return head + struct.pack("!I", zlib.crc32(head))


def event(kind: str, body: dict[str, Any]) -> bytes:
    """A ConverseStream event frame (``messageStart``, ``contentBlockDelta``, ...)."""
    return frame({":event-type": kind, ":content-type": "application/json",
                  ":message-type": "event"}, json.dumps(body).encode())


def exception(kind: str, message: str) -> bytes:
    """An error frame in the middle of a stream (``throttlingException``, ...)."""
    return frame({":exception-type": kind, ":content-type": "application/json",
                  ":message-type": "exception"}, json.dumps({"message": message}).encode())


@dataclass
class Recorded:
    operation: str
    """``converse`` or ``converse-stream``."""
    model: str
    headers: dict[str, str]
    body: Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    """A JSON body (Converse), or an error's ``{"message": ...}``."""
    frames: list[bytes] | None = None
    """The event-stream body, frame by frame (ConverseStream)."""
    error_type: str | None = None
    """``x-amzn-ErrorType`` for a failure: ``ThrottlingException``, ..."""
    raw: bytes | None = None
    """Sent as it is instead of ``body``, with ``content_type``."""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before answering, as a model thinks (bench/bedrock_sdk.py)."""


def converse_reply(
    content: list[dict[str, Any]],
    *,
    stop: str = "end_turn",
    usage: dict[str, int] | None = None,
) -> Reply:
    """A Converse reply body holding one assistant message."""
    tokens = usage or {"inputTokens": 10, "outputTokens": 5}
    return Reply(body={
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {"totalTokens": sum(tokens.values()), **tokens},
        "metrics": {"latencyMs": 12},
    })


def stream_reply(*frames: bytes) -> Reply:
    return Reply(frames=list(frames), content_type="application/vnd.amazon.eventstream")


def text_stream(*pieces: str, usage: dict[str, int] | None = None) -> list[bytes]:
    """The frames of a streamed text answer, messageStart to metadata."""
    tokens = usage or {"inputTokens": 10, "outputTokens": 5}
    return [
        event("messageStart", {"role": "assistant"}),
        *(event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": piece}})
          for piece in pieces),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("messageStop", {"stopReason": "end_turn"}),
        event("metadata", {"usage": {"totalTokens": sum(tokens.values()), **tokens},
                           "metrics": {"latencyMs": 12}}),
    ]


@functools.cache
def _service_model() -> Any:
    import botocore.session

    return botocore.session.get_session().get_service_model("bedrock-runtime")


def _as_params(value: Any, shape: Any) -> Any:
    """Wire JSON back to the Python parameters botocore takes: blobs from base64 to
    bytes, everything else as it is, unknown members kept for the validator to refuse."""
    if shape is None or shape.metadata.get("document"):
        return value
    if shape.type_name == "blob" and isinstance(value, str):
        return base64.b64decode(value)
    if shape.type_name == "structure" and isinstance(value, dict):
        return {k: _as_params(v, shape.members.get(k)) for k, v in value.items()}
    if shape.type_name == "list" and isinstance(value, list):
        return [_as_params(v, shape.member) for v in value]
    if shape.type_name == "map" and isinstance(value, dict):
        return {k: _as_params(v, shape.value) for k, v in value.items()}
    return value


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default 5 resets connections of a burst of calls


class FakeBedrock:
    """The server: scripted replies in order, every request recorded and validated."""

    def __init__(self) -> None:
        from botocore.validate import ParamValidator

        self.requests: list[Recorded] = []
        self.replies: list[Reply] = []
        self.problems: list[str] = []
        self._lock = threading.Lock()
        model = _service_model()
        operations = {"converse": model.operation_model("Converse"),
                      "converse-stream": model.operation_model("ConverseStream")}
        validator = ParamValidator()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body leave in one segment: written apart, Nagle's algorithm
            # and the client's delayed ACK would hold each reply back 40 ms.
            wbufsize = -1
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                parts = self.path.split("/")  # "", "model", "{id}", "converse"
                operation = operations.get(parts[-1]) if len(parts) == 4 else None
                body = json.loads(raw) if raw else {}
                model_id = unquote(parts[2]) if len(parts) == 4 else ""
                problem = None
                if operation is None or parts[1] != "model":
                    problem = f"no such operation: POST {self.path}"
                elif "authorization" not in {k.lower() for k in self.headers}:
                    problem = "the request is not signed (no Authorization header)"
                else:
                    params = {"modelId": model_id,
                              **_as_params(body, operation.input_shape)}
                    report = validator.validate(params, operation.input_shape)
                    if report.has_errors():
                        problem = report.generate_report()
                with server._lock:
                    server.requests.append(Recorded(
                        parts[-1], model_id, {k.lower(): v for k, v in self.headers.items()},
                        body))
                    if problem is not None:
                        server.problems.append(problem)
                        reply = Reply(400, {"message": problem},
                                      error_type="ValidationException")
                    elif server.replies:
                        reply = server.replies.pop(0)
                    else:
                        reply = Reply(500, {"message": "the test server's script ran out"},
                                      error_type="InternalServerException")
                self._answer(reply)

            def _answer(self, reply: Reply) -> None:
                if reply.delay:
                    time.sleep(reply.delay)
                self.send_response(reply.status)
                self.send_header("content-type", reply.content_type)
                self.send_header("x-amzn-RequestId", REQUEST_ID)
                if reply.error_type is not None:
                    self.send_header("x-amzn-ErrorType", f"{reply.error_type}:http://internal/")
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                if reply.frames is not None:
                    # No length: the body ends when the server hangs up, so a script
                    # can cut a stream anywhere, even inside a frame.
                    self.send_header("connection", "close")
                    self.end_headers()
                    for piece in reply.frames:
                        self.wfile.write(piece)
                        self.wfile.flush()
                    self.close_connection = True
                    return
                payload = json.dumps(reply.body).encode() if reply.raw is None else reply.raw
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,),
                                        daemon=True)
        self._thread.start()

    def reply(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


AWS_ENVIRONMENT = {
    # Dummy static credentials, found by the standard chain in the environment.
    "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
    # Nothing from the machine's own AWS set-up, and no instance-metadata look-up.
    "AWS_CONFIG_FILE": "/nonexistent/aws-config",
    "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/aws-credentials",
    "AWS_EC2_METADATA_DISABLED": "true",
}


def isolate_aws(monkeypatch: pytest.MonkeyPatch, *, credentials: bool = True) -> None:
    """The environment of the standard AWS chain, with dummy credentials or none."""
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION",
                 "AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                 "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                 "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_BEARER_TOKEN_BEDROCK"):
        monkeypatch.delenv(name, raising=False)
    for name, value in AWS_ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    if not credentials:
        monkeypatch.delenv("AWS_ACCESS_KEY_ID")
        monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")


@dataclass
class BedrockWire:
    """One provider on its fake: what a provider contract case needs."""

    server: FakeBedrock
    llm: Any
    model: str = MODEL


@pytest.fixture
def bedrock_server() -> Iterator[FakeBedrock]:
    server = FakeBedrock()
    yield server
    server.close()
    assert server.problems == []


@pytest.fixture
def bedrock(bedrock_server: FakeBedrock, monkeypatch: pytest.MonkeyPatch) -> BedrockWire:
    from agentkit.providers import BedrockLLM

    isolate_aws(monkeypatch)
    llm = BedrockLLM(region="us-east-1", endpoint_url=bedrock_server.url, max_retries=0)
    return BedrockWire(bedrock_server, llm)
