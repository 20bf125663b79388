"""Where AnthropicLLM puts its prompt-cache breakpoints (``cache_control`` markers).

Anthropic caches a request's prefix (tools, then system, then messages, in that order)
up to each block marked ``cache_control``; a later request whose prefix is identical up
to a marked block reads it from the cache at a tenth of the input price. At most four
blocks may be marked, and a prefix shorter than the model's minimum is never cached.

The marks, in prefix order, each only when the prefix up to it is long enough:

- the last tool: the tool list is shared by every run of the agent;
- the end of the stable system prompt (``ChatRequest.stable_system``): shared by every
  run too, while what follows it (recalled memory) belongs to one run;
- the last block of the message the previous request ended with: this request reads
  the previous turn's whole prefix from the cache even when the turn added many blocks
  (Anthropic only looks back about twenty blocks from a mark for an earlier entry);
- the last block of the newest message: the moving mark that the next turn reads.

Tokens are estimated from the JSON text, at three characters a token. That errs on the
long side on purpose: a mark on a prefix that turns out too short costs nothing (it is
not cached), while a mark left out loses the saving.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from agentkit.core.policies.prices import CacheTTL

__all__ = [
    "MAX_BREAKPOINTS",
    "CacheMode",
    "estimate_tokens",
    "mark_breakpoints",
    "message_anchors",
    "minimum_cacheable",
    "select_marks",
]

CacheMode = Literal["auto"] | None
"""``"auto"``: breakpoints placed as above; None: no caching."""

MAX_BREAKPOINTS = 4
"""Anthropic refuses a request with more ``cache_control`` blocks than this."""

_MINIMUM_TOKENS: tuple[tuple[str, int], ...] = (
    # Anthropic's prompt-caching page, as quoted in public pages read on 2026-11-30 (see
    # prices.py on sources); a model not listed gets _DEFAULT_MINIMUM.
    ("claude-opus-4-7", 2048),
    ("claude-opus-4-6", 4096),
    ("claude-opus-4-5", 4096),
    ("claude-haiku-4-5", 4096),
    ("claude-3-5-haiku", 2048),
    ("claude-3-haiku", 2048),
)
_DEFAULT_MINIMUM = 1024
_CHARS_PER_TOKEN = 3


def minimum_cacheable(model: str) -> int:
    """The fewest prompt tokens ``model`` caches (matched by model-id prefix)."""
    for prefix, tokens in _MINIMUM_TOKENS:
        if model.startswith(prefix):
            return tokens
    return _DEFAULT_MINIMUM


def estimate_tokens(value: Any) -> int:
    """The tokens ``value`` (JSON, bytes counted as their base64 text) is taken to cost."""
    return -(-len(json.dumps(value, ensure_ascii=False, default=_as_base64)) // _CHARS_PER_TOKEN)


_tokens = estimate_tokens


def _as_base64(value: Any) -> str:
    if isinstance(value, bytes | bytearray):  # a blob some SDKs (botocore) take raw
        return "#" * (-(-len(value) // 3) * 4)
    raise TypeError(f"{type(value).__name__} is not JSON")


def message_anchors(roles: list[str]) -> tuple[int, int]:
    """The two messages to mark: the one the previous request ended with (the message
    before the last assistant answer; -1 when there is none) and the newest one."""
    last_answer = max((i for i, role in enumerate(roles) if role == "assistant"), default=-1)
    return last_answer - 1, len(roles) - 1


def select_marks(candidates: list[tuple[int, int]], minimum: int) -> list[int]:
    """Which candidates to mark, each given as ``(position, prefix tokens up to it)`` in
    prefix order: those whose prefix reaches ``minimum``, at most :data:`MAX_BREAKPOINTS`."""
    return [position for position, prefix in candidates if prefix >= minimum][:MAX_BREAKPOINTS]


def mark_breakpoints(
    params: dict[str, Any], *, model: str, ttl: CacheTTL, stable_system: int | None
) -> int:
    """Add ``cache_control`` to ``params`` (Messages API keywords, changed in place);
    returns how many blocks were marked.

    The system prompt becomes a list of text blocks: the stable part, then (when
    ``stable_system`` says part of it is per run) the rest.
    """
    marker: dict[str, Any] = {"type": "ephemeral"}
    if ttl != "5m":
        marker["ttl"] = ttl
    minimum = minimum_cacheable(model)
    candidates: list[tuple[dict[str, Any], int]] = []
    running = 0

    tools = params.get("tools") or []
    if tools:
        running += _tokens(tools)
        candidates.append((tools[-1], running))

    system = params.get("system")
    if isinstance(system, str) and system:
        cut = len(system) if stable_system is None else max(0, min(stable_system, len(system)))
        blocks = [{"type": "text", "text": part} for part in (system[:cut], system[cut:]) if part]
        if cut:
            running += _tokens(blocks[0])
            candidates.append((blocks[0], running))
        if len(blocks) > 1 or not cut:
            running += _tokens(blocks[-1])
        # A plain string unless a block needs a mark or the per-run part is split off;
        # either depends only on the tools and the system prompt, so it holds all run.
        if len(blocks) > 1 or (cut and running >= minimum):
            params["system"] = blocks

    messages: list[dict[str, Any]] = params.get("messages") or []
    anchors = message_anchors([message["role"] for message in messages])
    for i, message in enumerate(messages):
        running += _tokens(message)
        if i in anchors:
            block = _last_markable(message)
            if block is not None:
                candidates.append((block, running))

    # A block marked already (a caller's own mark) is not marked twice.
    fresh = [(i, tokens) for i, (block, tokens) in enumerate(candidates)
             if "cache_control" not in block]
    chosen = select_marks(fresh, minimum)
    for i in chosen:
        candidates[i][0]["cache_control"] = dict(marker)
    return len(chosen)


def _last_markable(message: dict[str, Any]) -> dict[str, Any] | None:
    content = message.get("content")
    if not isinstance(content, list) or not content:
        return None
    block = content[-1]
    # Anthropic refuses cache_control on an empty text block.
    if not isinstance(block, dict) or (block.get("type") == "text" and not block.get("text")):
        return None
    return block
