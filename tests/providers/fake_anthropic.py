"""A fake Anthropic Messages API on 127.0.0.1 that caches prompts by Anthropic's documented
rules and bills each request the way Anthropic would.

The rules it applies:

- the prompt is a sequence of blocks in a fixed order: each tool definition, each system
  text block, then each content block of each message;
- a block with ``cache_control`` is a breakpoint; more than four is a 400
  ``invalid_request_error``, and so is a mark on an empty text block;
- the cache key of a prefix is its blocks' content with the ``cache_control`` marks
  taken out, so a breakpoint that moves does not change what came before it;
- at each breakpoint the longest cached prefix ending at it or at one of the twenty
  blocks before it is read; the prefix up to each breakpoint is (re)written with that
  breakpoint's lifetime (``5m`` by default, ``1h``), and a read refreshes it;
- a prefix shorter than the model's minimum cacheable length is neither read nor written;
- an entry a request writes becomes visible when that request's reply has been sent, so
  concurrent requests do not see each other's entries;
- billing: ``cache_read_input_tokens`` is the longest prefix read, ``cache_creation_input_
  tokens`` runs from there to the last breakpoint that qualifies, ``input_tokens`` is the
  rest.

Tokens are counted by this fake's own rule (a quarter of a block's JSON text, rounded
up); what matters is that both runs of a comparison are counted the same way. Answers
come from ``answer(body) -> (content blocks, stop_reason)``, a function of the request,
so concurrent runs get consistent replies. ``clock`` is injectable so a test moves time
on instead of sleeping.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = Callable[[dict[str, Any]], tuple[list[dict[str, Any]], str]]

LOOKBACK = 20
MAX_BREAKPOINTS = 4
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
MINIMUM_TOKENS = (
    ("claude-opus-4-7", 2048),
    ("claude-opus-4-6", 4096),
    ("claude-opus-4-5", 4096),
    ("claude-haiku-4-5", 4096),
    ("claude-3-5-haiku", 2048),
    ("claude-3-haiku", 2048),
)
DEFAULT_MINIMUM = 1024


def count_tokens(value: Any) -> int:
    """This fake's token count for one block."""
    return -(-len(json.dumps(value, ensure_ascii=False, sort_keys=True)) // 4)


def minimum_for(model: str) -> int:
    for prefix, tokens in MINIMUM_TOKENS:
        if model.startswith(prefix):
            return tokens
    return DEFAULT_MINIMUM


@dataclass
class Billed:
    """What one request was billed."""

    input_tokens: int
    cache_read: int
    cache_write: int
    output_tokens: int
    write_ttl: str


@dataclass
class _Entry:
    expires: float
    visible: bool


class BadRequest(Exception):
    pass


@dataclass
class CachingAnthropic:
    """The fake server's state: cache entries, the requests it saw, the bills."""

    answer: Answer
    clock: Callable[[], float] = time.monotonic
    latency: float = 0.0
    """Seconds each reply is held back (the model "thinking"), for the concurrency bench."""
    requests: list[dict[str, Any]] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)
    bills: list[Billed] = field(default_factory=list)
    _entries: dict[str, _Entry] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- the caching rules ------------------------------------------------------------

    def _blocks(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = list(body.get("tools") or [])
        system = body.get("system")
        if isinstance(system, str):
            blocks.append({"type": "text", "text": system})
        elif isinstance(system, list):
            blocks.extend(system)
        for message in body.get("messages") or []:
            content = message["content"]
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            blocks.extend({**block, "_role": message["role"]} for block in content)
        return blocks

    def bill(self, body: dict[str, Any]) -> tuple[Billed, list[str]]:
        """Apply the caching rules to one request; returns its bill and the keys it wrote."""
        model = body["model"]
        blocks = self._blocks(body)
        marks = [i for i, block in enumerate(blocks) if "cache_control" in block]
        if len(marks) > MAX_BREAKPOINTS:
            raise BadRequest(
                f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
                f"Found {len(marks)}."
            )
        for i in marks:
            if blocks[i].get("type") == "text" and not blocks[i].get("text"):
                raise BadRequest("cache_control cannot be set for empty text blocks")
        plain = [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks]
        sizes = [count_tokens(b) for b in plain]
        prefix_tokens: list[int] = []
        keys: list[str] = []
        running = 0
        digest = hashlib.sha256(model.encode())
        for block, size in zip(plain, sizes, strict=True):
            running += size
            prefix_tokens.append(running)
            digest.update(json.dumps(block, ensure_ascii=False, sort_keys=True).encode())
            keys.append(digest.copy().hexdigest())
        total = running
        minimum = minimum_for(model)
        now = self.clock()
        read = 0
        qualifying = [i for i in marks if prefix_tokens[i] >= minimum]
        for i in qualifying:
            for j in range(i, max(-1, i - LOOKBACK - 1), -1):
                entry = self._entries.get(keys[j])
                if entry is not None and entry.visible and entry.expires > now:
                    read = max(read, prefix_tokens[j])
                    break
        last = prefix_tokens[qualifying[-1]] if qualifying else 0
        write = max(0, last - read)
        ttl = "5m"
        written: list[str] = []
        for i in qualifying:
            ttl = blocks[i]["cache_control"].get("ttl", "5m")
            expires = now + TTL_SECONDS[ttl]
            entry = self._entries.get(keys[i])
            if entry is not None and entry.expires > now:
                entry.expires = max(entry.expires, expires)
            else:
                self._entries[keys[i]] = _Entry(expires, visible=False)
                written.append(keys[i])
        return Billed(total - read - write, read, write, 0, ttl), written

    # -- billing summaries ------------------------------------------------------------

    def input_cost(self, input_price: float) -> float:
        """Dollars billed for input across every request, at ``input_price`` per million
        (cache reads at 0.1x, writes at 1.25x for 5m entries and 2x for 1h ones)."""
        units = 0.0
        for bill in self.bills:
            factor = 2.0 if bill.write_ttl == "1h" else 1.25
            units += bill.input_tokens + 0.1 * bill.cache_read + factor * bill.cache_write
        return units * input_price / 1e6

    # -- HTTP -------------------------------------------------------------------------

    def handle(self, raw: bytes) -> tuple[int, dict[str, Any], list[str]]:
        body = json.loads(raw)
        with self._lock:
            self.requests.append(body)
            self.raw.append(raw)
            try:
                bill, written = self.bill(body)
            except BadRequest as exc:
                return 400, {"type": "error", "error": {
                    "type": "invalid_request_error", "message": str(exc)}}, []
            content, stop = self.answer(body)
            bill.output_tokens = sum(count_tokens(b) for b in content)
            self.bills.append(bill)
        usage = {
            "input_tokens": bill.input_tokens,
            "output_tokens": bill.output_tokens,
            "cache_read_input_tokens": bill.cache_read,
            "cache_creation_input_tokens": bill.cache_write,
            "cache_creation": {
                "ephemeral_5m_input_tokens": bill.cache_write if bill.write_ttl == "5m" else 0,
                "ephemeral_1h_input_tokens": bill.cache_write if bill.write_ttl == "1h" else 0,
            },
        }
        reply = {
            "id": f"msg_{len(self.bills)}", "type": "message", "role": "assistant",
            "model": body["model"], "content": content, "stop_reason": stop,
            "stop_sequence": None, "usage": usage,
        }
        return 200, reply, written

    def publish(self, written: list[str]) -> None:
        with self._lock:
            for key in written:
                entry = self._entries.get(key)
                if entry is not None:
                    entry.visible = True


@contextmanager
def serve(fake: CachingAnthropic) -> Iterator[str]:
    """Serve ``fake`` on 127.0.0.1 for the ``with`` block; yields its base URL."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            status, reply, written = fake.handle(self.rfile.read(length))
            if fake.latency:
                time.sleep(fake.latency)  # the model's answer takes time to arrive
            payload = json.dumps(reply).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
            fake.publish(written)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    host, port = httpd.server_address[:2]
    try:
        yield f"http://{host!s}:{port}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
