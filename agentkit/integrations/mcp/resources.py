"""MCPResources: an MCP server's resources as a memory source: ``Agent(memory=...)``.

Each query lists the server's resources and reads the text ones (up to
``max_resources``), then ranks them by the share of the query's words each contains,
counting its name, description and URI. Binary resources are skipped. Retrieval is
plain word overlap, like ``FileMemory``'s; put an embedding index behind your own
memory source for recall by meaning.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import mcp.types as types

from agentkit.integrations.mcp.errors import MCPConnectionError
from agentkit.state.memory import MemoryItem

if TYPE_CHECKING:
    from agentkit.core.runtime.context import RunContext
    from agentkit.integrations.mcp.client import MCPSession

__all__ = ["MCPResources"]

_WORD = re.compile(r"\w+")
_STOPWORDS = frozenset({
    "a", "about", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for",
    "from", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "of", "on",
    "or", "our", "that", "the", "their", "this", "to", "was", "we", "what", "when", "where",
    "which", "who", "with", "you", "your",
})


def _terms(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in _STOPWORDS}


class MCPResources:
    """A memory source over the resources of one MCP session.

    ``uris`` limits recall to those resources (default: everything the server
    lists). Each item's content is the resource's text, clipped to ``max_chars``; its
    source is the URI. A resource that fails to read is skipped, not fatal; a
    connection that is gone raises :class:`MCPConnectionError`.
    """

    __slots__ = ("max_chars", "max_resources", "session", "uris")

    def __init__(
        self,
        session: MCPSession,
        *,
        uris: Sequence[str] | None = None,
        max_chars: int = 2000,
        max_resources: int = 50,
    ) -> None:
        if max_chars < 1 or max_resources < 1:
            raise ValueError(
                f"max_chars and max_resources must be at least 1, got {max_chars} and "
                f"{max_resources}"
            )
        self.session = session
        self.uris = None if uris is None else tuple(uris)
        self.max_chars = max_chars
        self.max_resources = max_resources

    async def query(self, text: str, k: int, ctx: RunContext | None) -> tuple[MemoryItem, ...]:
        """The ``k`` resources sharing the largest share of ``text``'s words, best first."""
        wanted = _terms(text)
        if k < 1 or not wanted:
            return ()
        scored: list[tuple[float, str, str]] = []
        for resource in await self._candidates():
            content = await self._read(resource.uri)
            if content is None:
                continue
            label = " ".join(filter(None, (resource.name, resource.description, resource.uri)))
            share = len(wanted & (_terms(content) | _terms(label))) / len(wanted)
            if share > 0:
                scored.append((round(share, 4), resource.uri, content))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return tuple(MemoryItem(self._clip(c), uri, score) for score, uri, c in scored[:k])

    async def _candidates(self) -> list[types.Resource]:
        listed = await self.session.list_resources()
        if self.uris is not None:
            wanted = set(self.uris)
            listed = [r for r in listed if r.uri in wanted]
        return listed[: self.max_resources]

    async def _read(self, uri: str) -> str | None:
        try:
            contents = await self.session.read_resource(uri)
        except MCPConnectionError:
            raise
        except Exception:  # one unreadable resource must not cost the whole recall
            return None
        texts = [c.text for c in contents if isinstance(c, types.TextResourceContents)]
        return "\n".join(texts) if texts else None

    def _clip(self, content: str) -> str:
        content = content.strip()
        return content if len(content) <= self.max_chars else content[: self.max_chars] + "…"

    def __repr__(self) -> str:
        return f"MCPResources(server={self.session.server_name!r}, uris={self.uris!r})"
