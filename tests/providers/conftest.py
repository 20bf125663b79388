"""A real HTTP server on 127.0.0.1 that speaks a provider's wire format from a script.

It records every request (path, headers, JSON body) and answers each with the next
scripted response: a JSON body with a status, raw bytes of any content type (a broken
reply), or a server-sent-events stream.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    events: list[tuple[str | None, Any]] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    """Sent as it is instead of ``body``, with ``content_type``."""
    content_type: str = "application/json"
    length: int | None = None
    """A content-length to announce instead of the real one: more than is sent makes
    the server hang up in the middle of the body."""
    hold: threading.Event | None = None
    """For a stream: after its events, keep the connection open until this is set."""


class WireServer:
    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.replies: list[Reply] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                with server._lock:
                    server.requests.append(
                        Recorded("POST", self.path, {k.lower(): v for k, v in self.headers.items()},
                                 body)
                    )
                    reply = server.replies.pop(0) if server.replies else Reply(
                        500, {"error": {"message": "the test server's script ran out"}}
                    )
                if reply.events is not None:
                    self._stream(reply)
                else:
                    payload = json.dumps(reply.body).encode() if reply.raw is None else reply.raw
                    self.send_response(reply.status)
                    self.send_header("content-type", reply.content_type)
                    length = len(payload) if reply.length is None else reply.length
                    self.send_header("content-length", str(length))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                    if length != len(payload):
                        self.wfile.flush()
                        self.close_connection = True

            def _stream(self, reply: Reply) -> None:
                self.send_response(reply.status)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                for name, data in reply.events or ():
                    text = data if isinstance(data, str) else json.dumps(data)
                    frame = (f"event: {name}\n" if name else "") + f"data: {text}\n\n"
                    self.wfile.write(frame.encode())
                    self.wfile.flush()
                if reply.hold is not None:
                    reply.hold.wait(timeout=30)
                self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def reply(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]


def serving() -> Iterator[WireServer]:
    """A started server, shut down when the generator is closed (a fixture's body)."""
    server = WireServer()
    server.thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()


@pytest.fixture
def wire() -> Iterator[WireServer]:
    yield from serving()


@pytest.fixture
def second_wire() -> Iterator[WireServer]:
    """Another server, for a test that talks to two providers."""
    yield from serving()


@pytest.fixture
def gemini(wire: WireServer) -> Any:
    """The Gemini provider's pair for a contract case: the scripted server and a
    ``GeminiLLM`` pointed at it (see ``fake_gemini``)."""
    from .fake_gemini import google_llm  # needs google-genai, which only these tests use

    return wire, google_llm(wire)


from .fake_bedrock import bedrock, bedrock_server  # noqa: E402, F401  (fixtures)
