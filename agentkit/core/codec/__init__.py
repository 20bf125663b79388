"""The store format: versioned JSON for every value agentkit writes to a store (also
importable as ``agentkit.state.codec``).

Checkpoints, idempotency records, audit entries and intents are written as JSON text in
an envelope that names the format version::

    {"agentkit": 1, "value": ...}

Plain JSON values stand for themselves (a JSON array is a ``list``, an object with
string keys a ``dict``). Everything else is an object with a ``"$"`` tag: ``tuple``,
``frozendict``, ``set``, ``frozenset``, ``bytes`` and ``bytearray`` (base64), ``dict``
(non-string keys, or a ``"$"`` key), ``float`` (NaN and the infinities), ``datetime``,
``date``, ``time``, ``timedelta``, ``decimal``, ``uuid``, and agentkit's own values
(``agentkit.Message``, ``agentkit.RunState``, ...) whose fields sit beside the tag,
defaults left out.

Reading never imports or executes anything the data names: a tag is looked up in a
registry of codecs filled by code (agentkit's, and yours through :func:`register`). A
tag of agentkit's own whose module is not loaded yet loads that module from a fixed
table (:mod:`agentkit.core.codec._types`), so a process that only opened a store
still reads a checkpoint. Anything
that does not decode is :class:`CheckpointCorrupt`, naming the key and what was wrong.
"""

from agentkit.core.codec._format import FORMAT_VERSION, dumps, loads, register

__all__ = ["FORMAT_VERSION", "dumps", "loads", "register"]
