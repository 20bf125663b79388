"""FileMemory recalls from the note tree FileTool edits: what the model wrote is what a
later task finds, best match first."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentkit.state.memory import FileMemory, MemoryItem, MemorySource, WritableMemorySource
from agentkit.tools import FileTool, InMemoryFiles, LocalFiles
from agentkit.tools.files import FileLimitExceeded, FileLimits, parse_path

NOTES = {
    "/memories/user_preferences.md": "The user prefers green tea in the morning.",
    "/memories/projects/alpha.md": "Project alpha ships in May. The user owns the launch.",
    "/memories/projects/beta.md": "Project beta is paused.",
}


@pytest.fixture
def memory() -> FileMemory:
    return FileMemory(InMemoryFiles(NOTES))


def test_it_is_a_writable_memory_source(memory: FileMemory) -> None:
    assert isinstance(memory, MemorySource)
    assert isinstance(memory, WritableMemorySource)
    assert repr(memory) == "FileMemory(InMemoryFiles(3 files), under='/memories')"


async def test_the_note_sharing_the_rarest_words_comes_first(memory: FileMemory) -> None:
    items = await memory.query("What tea does the user like?", 5, None)

    assert items == (
        MemoryItem("The user prefers green tea in the morning.",
                   "/memories/user_preferences.md", 1.0),
        MemoryItem("Project alpha ships in May. The user owns the launch.",
                   "/memories/projects/alpha.md", 0.3979),
    )


async def test_words_of_the_path_count(memory: FileMemory) -> None:
    items = await memory.query("beta status", 5, None)

    assert [item.source for item in items] == ["/memories/projects/beta.md"]


async def test_k_bounds_the_answer_and_nothing_matches_nothing(memory: FileMemory) -> None:
    assert len(await memory.query("project user", 1, None)) == 1
    assert await memory.query("quantum chromodynamics", 5, None) == ()
    assert await memory.query("the of and", 5, None) == ()
    assert await memory.query("tea", 0, None) == ()


async def test_under_limits_recall_to_a_subtree() -> None:
    memory = FileMemory(InMemoryFiles(NOTES), under="/memories/projects")

    assert [i.source for i in await memory.query("user tea project", 5, None)] == [
        "/memories/projects/alpha.md", "/memories/projects/beta.md",
    ]
    assert await FileMemory(InMemoryFiles(), under="/memories/none").query("x y", 5, None) == ()


async def test_long_notes_are_clipped() -> None:
    memory = FileMemory(InMemoryFiles({"/memories/long.md": "tea " * 100}), max_chars=10)

    assert (await memory.query("tea", 1, None))[0].content == "tea tea te…"


async def test_it_reads_what_file_tool_wrote() -> None:
    files = InMemoryFiles()
    tool = FileTool(files)
    await tool.run({"command": "create", "path": "/memories/deploys.md",
                    "file_text": "Deploys need a green CI run first.\n"}, None)
    await tool.run({"command": "str_replace", "path": "/memories/deploys.md",
                    "old_str": "green CI run", "new_str": "green CI run and a changelog"}, None)

    items = await FileMemory(files).query("how do I deploy with a changelog", 3, None)

    assert items[0].content == "Deploys need a green CI run and a changelog first."


async def test_files_it_cannot_safely_read_are_skipped(tmp_path: Path) -> None:
    root = tmp_path / "memories"
    files = LocalFiles(root)
    (tmp_path / "outside.txt").write_text("tea secrets from outside")
    (root / "note.md").write_text("tea notes")
    (root / "link.md").symlink_to(tmp_path / "outside.txt")
    os.link(tmp_path / "outside.txt", root / "hard.md")
    (root / "binary.md").write_bytes(b"tea \xff")
    (root / "huge.md").write_text("tea " * 100)

    memory = FileMemory(files, limits=FileLimits(max_file_bytes=50))

    assert [i.source for i in await memory.query("tea", 10, None)] == ["/memories/note.md"]


async def test_write_appends_lines_to_a_notes_file() -> None:
    files = InMemoryFiles()
    memory = FileMemory(files)

    await memory.write([MemoryItem("Prefers tea", "chat")], None)
    await memory.write([MemoryItem("Ships on\nFridays", "chat"), MemoryItem("Owns alpha", "x")],
                       None)
    await memory.write([], None)

    assert await files.read(parse_path("/memories/remembered.md")) == (
        "- Prefers tea\n- Ships on Fridays\n- Owns alpha\n"
    )
    assert (await memory.query("fridays", 1, None))[0].source == "/memories/remembered.md"


async def test_write_respects_the_limits() -> None:
    memory = FileMemory(InMemoryFiles(), limits=FileLimits(max_file_bytes=10))

    with pytest.raises(FileLimitExceeded):
        await memory.write([MemoryItem("a much longer fact than allowed", "chat")], None)


def test_max_chars_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_chars must be at least 1"):
        FileMemory(InMemoryFiles(), max_chars=0)
