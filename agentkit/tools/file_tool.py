"""FileTool: the client-side memory tool — a note tree under /memories the model edits.

It implements Anthropic's ``memory_20250818`` contract: advertised name ``memory``, six
commands dispatched by one ``command`` argument, every path under ``/memories``. With
Anthropic it is declared as the provider's native memory tool (the schema's
``native["anthropic"]``); with any other provider it is an ordinary tool with the JSON
Schema below.

Every path is checked by :func:`~agentkit.tools.files.paths.parse_path` before the
backend sees it; the disk backend adds its own link checks as it walks. Argument shapes
the model got wrong raise :class:`ToolArgumentError` (a repair turn); a command that
cannot be carried out raises :class:`FileToolError`, whose message the model reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from agentkit.core.contracts.errors import ToolArgumentError, ToolDefinitionError
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.traits import ToolTraits
from agentkit.core.contracts.types import ToolContext, ToolSchema
from agentkit.tools.files import commands
from agentkit.tools.files.commands import FileLimits
from agentkit.tools.files.errors import FileToolError
from agentkit.tools.files.in_memory import InMemoryFiles
from agentkit.tools.files.paths import parse_path
from agentkit.tools.files.ports import Files

__all__ = ["FileTool", "FileToolError"]

MEMORY_TOOL_TYPE = "memory_20250818"

_DESCRIPTION = (
    "Your persistent memory: a directory of notes at /memories that outlasts this "
    "conversation. Look at it before you start a task, and record progress, decisions "
    "and what you learn as you go, so a later session can pick up where this one "
    "stopped.\n\n"
    "Pick the operation with `command`: view (a directory listing two levels deep, or a "
    "file with line numbers; `view_range` [first, last] picks lines, -1 as last means "
    "to the end), create (a new file holding `file_text`), str_replace (replace "
    "`old_str`, which must appear exactly once, with `new_str`), insert (put "
    "`insert_text` after line `insert_line`, 0 for the top), delete (a file, or a "
    "directory and everything in it), rename (`old_path` to `new_path`). Every path "
    "starts with /memories/."
)

# command -> (required arguments, optional arguments)
_COMMANDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "view": (("path",), ("view_range",)),
    "create": (("path", "file_text"), ()),
    "str_replace": (("path", "old_str", "new_str"), ()),
    "insert": (("path", "insert_line", "insert_text"), ()),
    "delete": (("path",), ()),
    "rename": (("old_path", "new_path"), ()),
}

_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {
            "type": "string",
            "enum": list(_COMMANDS),
            "description": "The operation to perform.",
        },
        "path": {
            "type": "string",
            "description": "view, create, str_replace, insert, delete: the file or "
            "directory, starting with /memories/.",
        },
        "view_range": {
            "type": "array",
            "items": {"type": "integer"},
            "minItems": 2,
            "maxItems": 2,
            "description": "view, optional: [first line, last line], numbered from 1; "
            "-1 as the last line means to the end of the file.",
        },
        "file_text": {"type": "string", "description": "create: the text of the new file."},
        "old_str": {
            "type": "string",
            "description": "str_replace: text that appears exactly once in the file.",
        },
        "new_str": {"type": "string", "description": "str_replace: the text to put in its place."},
        "insert_line": {
            "type": "integer",
            "minimum": 0,
            "description": "insert: the line after which the text goes (0 for the top).",
        },
        "insert_text": {"type": "string", "description": "insert: the text to insert."},
        "old_path": {"type": "string", "description": "rename: what to move."},
        "new_path": {"type": "string", "description": "rename: where it goes; must not exist."},
    },
    "required": ["command"],
    "additionalProperties": False,
}

_ARGUMENTS: tuple[str, ...] = tuple(_PARAMETERS["properties"])
_BACKEND_METHODS = (
    "delete", "exclusive", "listing", "read", "rename", "stat", "usage", "write"
)
_STRING_ARGUMENTS = frozenset(
    {"path", "file_text", "old_str", "new_str", "insert_text", "old_path", "new_path"}
)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _problem(name: str, value: Any) -> str | None:
    """Why ``value`` is not a valid ``name`` argument, or None when it is."""
    if name in _STRING_ARGUMENTS:
        if not isinstance(value, str):
            return f"expected a string, got {type(value).__name__}"
        if name == "old_str" and not value:
            return "must not be empty: give text that appears exactly once in the file"
    elif name == "insert_line":
        if not _is_int(value):
            return f"expected an integer, got {type(value).__name__}"
    elif name == "view_range" and not (
        isinstance(value, list | tuple) and len(value) == 2 and all(_is_int(v) for v in value)
    ):
        return f"expected two integers [first line, last line], got {value!r}"
    return None


def _reads_only(arguments: Mapping[str, Any]) -> bool:
    """True for ``view``: it changes nothing, so GATED autonomy need not pause it."""
    return arguments.get("command") == "view"


def _check_arguments(args: Mapping[str, Any], call: str) -> tuple[str, dict[str, Any]]:
    """``(command, arguments)`` once the call has the shape its command needs."""
    command = args.get("command")
    if command is None:
        raise ToolArgumentError(call, missing=["command"], accepted=_ARGUMENTS)
    if not isinstance(command, str) or command not in _COMMANDS:
        raise ToolArgumentError(
            call,
            invalid=[("command", f"{command!r} is not one of {list(_COMMANDS)}")],
            accepted=_ARGUMENTS,
        )
    required, optional = _COMMANDS[command]
    accepted = ("command", *required, *optional)
    # A null stands for "not given": models that fill every field of the flat schema
    # send nulls for the ones their command does not use.
    given = {k: v for k, v in args.items() if k != "command" and v is not None}
    missing = [name for name in required if name not in given]
    unexpected = sorted(name for name in given if name not in accepted)
    invalid = [
        (name, problem)
        for name in (*required, *optional)
        if name in given and (problem := _problem(name, given[name])) is not None
    ]
    if missing or unexpected or invalid:
        raise ToolArgumentError(
            call, missing=missing, unexpected=unexpected, invalid=invalid, accepted=accepted
        )
    return command, given


class FileTool:
    """The ``memory`` tool over a :class:`Files` backend (an :class:`InMemoryFiles` by
    default); pass :class:`LocalFiles` or :class:`SQLiteFiles` to keep notes.

    ``max_file_bytes``, ``max_total_bytes``, ``max_files`` and ``max_depth`` bound what
    the model may keep (see :class:`FileLimits` for the defaults). Every command that
    writes runs inside the backend's ``exclusive()`` lock, so a limit check and the write
    it guards cannot interleave with another writer of the same tree — another call,
    another FileTool, or another process.
    """

    name = "memory"
    description = _DESCRIPTION
    schema = ToolSchema(
        name="memory",
        description=_DESCRIPTION,
        parameters=_PARAMETERS,
        native=FrozenDict(
            {"anthropic": FrozenDict({"type": MEMORY_TOOL_TYPE, "name": "memory"})}
        ),
    )
    output_schema = None
    side_effecting = True
    idempotent = False
    accepted_arguments = _ARGUMENTS

    __slots__ = ("backend", "limits", "traits")

    def __init__(
        self,
        backend: Files | None = None,
        *,
        max_file_bytes: int | None = None,
        max_total_bytes: int | None = None,
        max_files: int | None = None,
        max_depth: int | None = None,
        requires_approval: bool = False,
    ) -> None:
        if backend is not None and not isinstance(backend, Files):
            missing = [name for name in _BACKEND_METHODS if not hasattr(backend, name)]
            why = ", ".join(f"{name}()" for name in missing)
            if "exclusive" in missing:
                why += (
                    ". exclusive() is the write lock that keeps the limits when several "
                    "writers share the tree; see docs/filetool.md"
                )
            raise ToolDefinitionError(
                f"FileTool(backend=...) takes a Files backend (InMemoryFiles, LocalFiles, "
                f"SQLiteFiles or your own), got {backend!r}, which lacks {why}"
            )
        defaults = FileLimits()
        self.backend: Files = backend if backend is not None else InMemoryFiles()
        self.limits = FileLimits(
            max_file_bytes=defaults.max_file_bytes if max_file_bytes is None else max_file_bytes,
            max_total_bytes=(
                defaults.max_total_bytes if max_total_bytes is None else max_total_bytes
            ),
            max_files=defaults.max_files if max_files is None else max_files,
            max_depth=defaults.max_depth if max_depth is None else max_depth,
        )
        self.traits = ToolTraits(
            side_effecting=True,
            requires_approval=requires_approval,
            # Repeating a command is a new action (a second view after an edit must see
            # the edit), so idempotent() replays only a retry of the same model call.
            idempotency_scope="call",
            accepted_arguments=_ARGUMENTS,
            read_only_call=_reads_only,
        )

    @property
    def requires_approval(self) -> bool:
        """Every call waits for a person (``traits.requires_approval``)."""
        return self.traits.requires_approval

    @requires_approval.setter
    def requires_approval(self, value: bool) -> None:
        # The Protocol's flag stays assignable; the traits remain the one record.
        self.traits = replace(self.traits, requires_approval=value)

    @property
    def idempotency_scope(self) -> str:
        """``"call"``: ``idempotent()`` replays only a retry of the same model call."""
        return self.traits.idempotency_scope

    def is_read_only_call(self, arguments: Mapping[str, Any]) -> bool:
        """True for ``view``: it changes nothing, so GATED autonomy need not pause it."""
        return self.traits.is_read_only_call(arguments)

    async def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> str:
        """Carry out one memory command and return what the model reads.

        Raises :class:`ToolArgumentError` for a call of the wrong shape and
        :class:`FileToolError` (or its :class:`PathRefused` / :class:`FileLimitExceeded`)
        when the command cannot be carried out; nothing is written then.
        """
        command, given = _check_arguments(args, self.name)
        limits = self.limits
        if command == "rename":
            old = parse_path(given["old_path"], max_depth=limits.max_depth)
            new = parse_path(given["new_path"], max_depth=limits.max_depth)
            async with self.backend.exclusive() as files:
                return await commands.rename(files, old, new, limits)
        path = parse_path(given["path"], max_depth=limits.max_depth)
        if command == "view":  # reads need no lock: every write is atomic
            view_range = given.get("view_range")
            span = None if view_range is None else (view_range[0], view_range[1])
            return await commands.view(self.backend, path, span, limits)
        async with self.backend.exclusive() as files:
            if command == "create":
                return await commands.create(files, path, given["file_text"], limits)
            if command == "str_replace":
                return await commands.str_replace(
                    files, path, given["old_str"], given["new_str"], limits
                )
            if command == "insert":
                return await commands.insert(
                    files, path, given["insert_line"], given["insert_text"], limits
                )
            return await commands.delete(files, path)

    def __repr__(self) -> str:
        return f"FileTool({self.backend!r})"
