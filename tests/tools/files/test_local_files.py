"""LocalFiles on disk: writes are atomic (a crash leaves the old note or the new one,
never half), new files are private, and odd things found on disk are handled."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentkit.tools import FileTool, LocalFiles
from agentkit.tools.files import (
    ROOT,
    FileLimitExceeded,
    FileToolError,
    FileUsage,
    PathRefused,
    parse_path,
)


async def call(tool: FileTool, **args: Any) -> str:
    return await tool.run(args, None)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "memories"


@pytest.fixture
def tool(root: Path) -> FileTool:
    return FileTool(LocalFiles(root))


def test_the_directory_is_created_and_must_be_a_directory(tmp_path: Path) -> None:
    files = LocalFiles(tmp_path / "a" / "b")
    assert Path(files.directory).is_dir()
    assert repr(files) == f"LocalFiles({str(tmp_path / 'a' / 'b')!r})"

    (tmp_path / "file").write_text("x")
    with pytest.raises(FileExistsError):
        LocalFiles(tmp_path / "file")


def test_links_in_the_directory_path_itself_are_resolved_once(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")

    assert LocalFiles(tmp_path / "alias").directory == str((tmp_path / "real").resolve())


async def test_new_files_and_directories_are_private(tool: FileTool, root: Path) -> None:
    await call(tool, command="create", path="/memories/d/n.md", file_text="x")

    assert stat.S_IMODE((root / "d").stat().st_mode) == 0o700
    assert stat.S_IMODE((root / "d" / "n.md").stat().st_mode) == 0o600


async def test_a_failed_write_leaves_the_old_text_and_no_temporary_file(
    tool: FileTool, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await call(tool, command="create", path="/memories/n.md", file_text="old text\n")
    real_write = os.write

    def half_then_fail(fd: int, data: Any) -> int:
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", half_then_fail)
    with pytest.raises(OSError, match="No space left"):
        await call(tool, command="str_replace", path="/memories/n.md", old_str="old",
                   new_str="new")
    monkeypatch.undo()

    assert (root / "n.md").read_text() == "old text\n"
    assert sorted(os.listdir(root)) == [".lock", "n.md"]  # the write lock, no temporary file


async def test_a_failed_create_leaves_nothing_behind(
    tool: FileTool, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*args: Any, **kwargs: Any) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(OSError):
        await call(tool, command="create", path="/memories/n.md", file_text="x")
    monkeypatch.undo()

    assert os.listdir(root) == [".lock"]  # the write lock, nothing else


_CRASH = """
import asyncio, os, sys
from agentkit.tools import FileTool, LocalFiles

def crash(*args, **kwargs):
    os._exit(9)  # the process dies after writing the new text, before it replaces the old

os.replace = crash
tool = FileTool(LocalFiles(sys.argv[1]))
asyncio.run(tool.run({"command": "str_replace", "path": "/memories/n.md",
                      "old_str": "old", "new_str": "new"}, None))
"""


async def test_a_process_killed_mid_write_leaves_the_old_note_whole(
    tool: FileTool, root: Path
) -> None:
    await call(tool, command="create", path="/memories/n.md", file_text="old text\n")

    done = subprocess.run([sys.executable, "-c", _CRASH, str(root)], check=False)

    assert done.returncode == 9
    assert (root / "n.md").read_text() == "old text\n"
    leftovers = [name for name in os.listdir(root) if name.startswith(".tmp-")]
    assert len(leftovers) == 1  # the orphaned new text, hidden from the model:
    assert (root / leftovers[0]).read_text() == "new text\n"
    assert await call(tool, command="view", path="/memories") == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden "
        "items:\n9B\t/memories\n9B\t/memories/n.md"
    )
    assert (await tool.backend.usage()).files == 1


async def test_names_the_model_could_not_address_are_not_listed(
    tool: FileTool, root: Path
) -> None:
    for name in ("ok.md", ".hidden", "a%2eb", "line\nbreak", "trail "):
        (root / name).write_text("x")

    assert [str(e.path) for e in await tool.backend.listing(ROOT, None)] == ["/memories/ok.md"]


async def test_a_fifo_is_refused_without_blocking(tool: FileTool, root: Path) -> None:
    os.mkfifo(root / "pipe")

    with pytest.raises(PathRefused, match="it is not a regular file or a directory"):
        await call(tool, command="view", path="/memories/pipe")
    with pytest.raises(PathRefused):
        await tool.backend.read(parse_path("/memories/pipe"))


async def test_text_that_is_not_utf8_is_reported(tool: FileTool, root: Path) -> None:
    (root / "bin.dat").write_bytes(b"\xff\xfe\x00")

    with pytest.raises(FileToolError) as caught:
        await call(tool, command="view", path="/memories/bin.dat")
    assert str(caught.value) == "The file /memories/bin.dat is not UTF-8 text."


async def test_a_memory_directory_removed_from_under_the_tool_is_started_again(
    tool: FileTool, root: Path
) -> None:
    await call(tool, command="create", path="/memories/n.md", file_text="x")
    shutil.rmtree(root)

    assert await call(tool, command="view", path="/memories") == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden "
        "items:\n0B\t/memories"
    )
    assert root.is_dir()
    assert await call(tool, command="create", path="/memories/m.md", file_text="y") == (
        "File created successfully at: /memories/m.md"
    )
    assert (root / "m.md").read_text() == "y"


async def test_notes_written_by_one_instance_are_read_by_another(root: Path) -> None:
    await FileTool(LocalFiles(root)).run(
        {"command": "create", "path": "/memories/n.md", "file_text": "kept"}, None
    )

    assert "     1\tkept" in await FileTool(LocalFiles(root)).run(
        {"command": "view", "path": "/memories/n.md"}, None
    )


async def test_files_deeper_than_the_depth_limit_still_count(tool: FileTool, root: Path) -> None:
    """Files put on disk 18 levels deep (by hand, or by an older version) are counted by
    every limit, sized in listings, and removed with their ancestor."""
    deep = root.joinpath(*(f"d{i}" for i in range(1, 18)))
    deep.mkdir(parents=True)
    for n in range(12):
        (deep / f"f{n:02}.md").write_text("n" * 4000)
    limited = FileTool(tool.backend, max_files=12)

    assert await tool.backend.usage() == FileUsage(12, 48_000)
    assert await call(tool, command="view", path="/memories") == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden "
        "items:\n46.9K\t/memories\n46.9K\t/memories/d1/\n46.9K\t/memories/d1/d2/"
    )
    with pytest.raises(FileLimitExceeded) as caught:
        await call(limited, command="create", path="/memories/n.md", file_text="x")
    assert caught.value.would_be == 13
    assert await call(tool, command="delete", path="/memories/d1/d2") == (
        "Successfully deleted /memories/d1/d2"
    )
    assert os.listdir(root / "d1") == []
    assert await tool.backend.usage() == FileUsage(0, 0)


async def test_a_closed_backend_refuses_work(root: Path) -> None:
    files = LocalFiles(root)
    files.close()
    files.close()

    with pytest.raises(RuntimeError) as caught:
        await files.usage()
    assert str(caught.value) == f"LocalFiles({str(root)!r}) is closed"
