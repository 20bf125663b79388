"""A run's task: text, or text with media, as the user message that opens the turn.

``agent.run("Summarise this", ctx)`` and ``agent.run(["Summarise this",
File.from_path("q3.pdf")], ctx)`` both open the turn with one user message: the text
parts joined by blank lines are its content, the media parts its attachments, in the
order given. Each provider renders the attachments natively, or refuses one it cannot
take with :class:`~agentkit.core.contracts.errors.UnsupportedMedia` before any request.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentkit.core.contracts.media import Audio, File, Image, Media
from agentkit.core.contracts.types import Message

__all__ = ["Task", "task_message", "task_text"]

Task = str | Sequence[str | Media]
"""What a run is asked: a string, or a sequence of ``str``, ``Image``, ``File`` and
``Audio`` parts."""

_ACCEPTED = "a str, or a sequence of str, Image, File and Audio parts"


def task_message(task: Task) -> Message:
    """The user message for ``task``; :class:`TypeError` naming what is accepted for
    anything else, before the run touches a store or a model."""
    if isinstance(task, str):
        return Message(role="user", content=task)
    # bytes are a Sequence too, but of ints: refuse them with the same message.
    if not isinstance(task, Sequence) or isinstance(task, bytes | bytearray):
        raise TypeError(f"a task must be {_ACCEPTED}, got {type(task).__name__}")
    texts: list[str] = []
    media: list[Media] = []
    for index, part in enumerate(task):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, Image | File | Audio):
            media.append(part)
        else:
            raise TypeError(
                f"task part {index} is a {type(part).__name__}; a task must be {_ACCEPTED}"
            )
    return Message(role="user", content="\n\n".join(texts), attachments=tuple(media))


def task_text(task: Task) -> str:
    """The text of ``task`` (what memory is queried with): its user message's content."""
    return task_message(task).content
