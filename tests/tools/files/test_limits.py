"""The limits — one file's size, the whole tree's size, the number of files — on every
backend: each has a default, each is configurable, and crossing one is a clear tool error
that leaves the tree as it was."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit.tools import Files, FileTool
from agentkit.tools.files import (
    ROOT,
    FileLimitExceeded,
    FileLimits,
    FileToolError,
    FileUsage,
    PathRefused,
    parse_path,
)
from agentkit.tools.files.commands import check_write


async def call(tool: FileTool, **args: Any) -> str:
    return await tool.run(args, None)


async def exceeded(tool: FileTool, **args: Any) -> FileLimitExceeded:
    before = (await tool.backend.listing(ROOT, None), await tool.backend.usage())
    with pytest.raises(FileLimitExceeded) as caught:
        await tool.run(args, None)
    assert (await tool.backend.listing(ROOT, None), await tool.backend.usage()) == before
    return caught.value


def test_defaults_are_sane() -> None:
    limits = FileTool().limits

    assert limits == FileLimits(
        max_file_bytes=256 * 1024, max_total_bytes=8 * 1024 * 1024, max_files=1000, max_depth=16
    )


@pytest.mark.parametrize("value", [0, -1, True, 1.5, "10"])
def test_a_limit_must_be_a_positive_integer(value: Any) -> None:
    with pytest.raises(ValueError, match=r"FileLimits.max_files must be a positive integer"):
        FileTool(max_files=value)


async def test_one_file_may_not_exceed_max_file_bytes(files: Files) -> None:
    tool = FileTool(files, max_file_bytes=10)

    assert await call(tool, command="create", path="/memories/ok.md", file_text="x" * 10) == (
        "File created successfully at: /memories/ok.md"
    )
    error = await exceeded(tool, command="create", path="/memories/big.md", file_text="é" * 6)
    assert str(error) == (
        "Cannot write /memories/big.md: the file would be 12B (12 bytes), over the limit of "
        "10B (10 bytes) for one file. Keep notes short, or split this one into several files."
    )
    assert (error.limit, error.maximum, error.would_be) == ("file_bytes", 10, 12)


@pytest.mark.parametrize(
    "args",
    [
        {"command": "str_replace", "path": "/memories/ok.md", "old_str": "x", "new_str": "xyzw"},
        {"command": "insert", "path": "/memories/ok.md", "insert_line": 1, "insert_text": "yy"},
    ],
    ids=["str_replace", "insert"],
)
async def test_an_edit_may_not_grow_a_file_past_max_file_bytes(
    files: Files, args: dict[str, Any]
) -> None:
    tool = FileTool(files, max_file_bytes=4)
    await call(tool, command="create", path="/memories/ok.md", file_text="x\n")

    assert (await exceeded(tool, **args)).limit == "file_bytes"


async def test_the_tree_may_not_exceed_max_total_bytes(files: Files) -> None:
    tool = FileTool(files, max_total_bytes=2048)
    await call(tool, command="create", path="/memories/a.md", file_text="a" * 1024)
    await call(tool, command="create", path="/memories/b.md", file_text="b" * 1000)

    error = await exceeded(tool, command="create", path="/memories/c.md", file_text="c" * 100)
    assert str(error) == (
        "Cannot write /memories/c.md: the memory directory would hold 2.1K (2124 bytes), over "
        "its limit of 2K (2048 bytes). Delete or condense notes you no longer need first."
    )
    assert (await exceeded(
        tool, command="str_replace", path="/memories/b.md", old_str="b" * 1000,
        new_str="b" * 1100,
    )).limit == "total_bytes"


async def test_shrinking_a_file_is_allowed_even_over_the_total(files: Files) -> None:
    await FileTool(files).run(
        {"command": "create", "path": "/memories/a.md", "file_text": "a" * 100}, None
    )
    tool = FileTool(files, max_total_bytes=50)

    assert await call(
        tool, command="str_replace", path="/memories/a.md", old_str="a" * 100, new_str="a"
    ) == (
        "The memory file has been edited. Here is the snippet showing the change (with line "
        "numbers):\n     1\ta"
    )


async def test_the_tree_may_not_hold_more_than_max_files(files: Files) -> None:
    tool = FileTool(files, max_files=2)
    await call(tool, command="create", path="/memories/a.md", file_text="a")
    await call(tool, command="create", path="/memories/d/b.md", file_text="b")

    error = await exceeded(tool, command="create", path="/memories/c.md", file_text="c")
    assert str(error) == (
        "Cannot write /memories/c.md: the memory directory would hold 3 files, over its limit "
        "of 2. Delete or merge notes you no longer need first."
    )
    # Editing and moving existing files is still fine.
    await call(tool, command="rename", old_path="/memories/a.md", new_path="/memories/e.md")
    await call(tool, command="insert", path="/memories/e.md", insert_line=0, insert_text="z")
    await call(tool, command="delete", path="/memories/e.md")
    await call(tool, command="create", path="/memories/c.md", file_text="c")


async def test_view_will_not_read_a_file_larger_than_the_file_limit(files: Files) -> None:
    await files.write(parse_path("/memories/huge.md"), "x" * 2000)
    tool = FileTool(files, max_file_bytes=1024)

    with pytest.raises(FileToolError) as caught:
        await call(tool, command="view", path="/memories/huge.md")
    assert str(caught.value) == (
        "The file /memories/huge.md is 2.0K, over the limit of 1K for one file, so it was not "
        "read."
    )


# -- depth ---------------------------------------------------------------------------------

_TWELVE = "/memories/" + "/".join(f"d{i}" for i in range(1, 13))  # 12 levels deep


async def test_a_rename_that_would_bury_files_past_max_depth_is_refused_before_anything_moves(
    files: Files,
) -> None:
    """Moving /memories/d1 five levels down would put its files 18 levels deep."""
    tool = FileTool(files)
    for n in range(12):
        await call(tool, command="create", path=f"{_TWELVE}/x/f{n:02}.md", file_text="n" * 4000)

    error = await exceeded(
        tool, command="rename", old_path="/memories/d1", new_path="/memories/e1/e2/e3/e4/e5"
    )

    assert str(error) == (
        "Cannot move /memories/d1 to /memories/e1/e2/e3/e4/e5: what it holds would reach 18 "
        "levels below /memories, over the limit of 16. Choose a destination nearer /memories."
    )
    assert (error.limit, error.maximum, error.would_be) == ("depth", 16, 18)
    assert await files.usage() == FileUsage(12, 48_000)
    assert await files.stat(parse_path("/memories/e1")) is None


async def test_a_rename_to_the_depth_limit_is_allowed(files: Files) -> None:
    tool = FileTool(files)
    await call(tool, command="create", path=f"{_TWELVE}/x/f.md", file_text="n")

    assert await call(
        tool, command="rename", old_path="/memories/d1", new_path="/memories/e1/e2/e3"
    ) == "Successfully renamed /memories/d1 to /memories/e1/e2/e3"
    deepest = "/memories/e1/e2/e3/" + "/".join(f"d{i}" for i in range(2, 13)) + "/x/f.md"
    assert len(parse_path(deepest).parts) == 16
    assert await files.usage() == FileUsage(1, 1)


async def test_max_depth_is_configurable_and_deeper_paths_are_refused(files: Files) -> None:
    tool = FileTool(files, max_depth=3)

    assert await call(tool, command="create", path="/memories/a/b/c.md", file_text="x") == (
        "File created successfully at: /memories/a/b/c.md"
    )
    with pytest.raises(PathRefused) as caught:
        await call(tool, command="create", path="/memories/a/b/c/d.md", file_text="x")
    assert str(caught.value) == (
        "Path /memories/a/b/c/d.md is refused: it is 4 levels deep, over the limit of 3"
    )
    assert (await exceeded(
        tool, command="rename", old_path="/memories/a", new_path="/memories/z/a"
    )).limit == "depth"
    assert await files.usage() == FileUsage(1, 1)


async def test_a_rename_that_makes_nothing_deeper_is_allowed_over_the_depth_limit(
    files: Files,
) -> None:
    """A tree deeper than a (lowered) limit can still be tidied up."""
    await call(FileTool(files), command="create", path="/memories/a/b/c/d/n.md", file_text="x")
    tool = FileTool(files, max_depth=3)

    assert await call(tool, command="rename", old_path="/memories/a", new_path="/memories/z") == (
        "Successfully renamed /memories/a to /memories/z"
    )
    assert await call(tool, command="delete", path="/memories/z/b") == (
        "Successfully deleted /memories/z/b"
    )
    assert await files.usage() == FileUsage(0, 0)


@pytest.mark.parametrize("value", [0, 65, True, 2.0])
def test_max_depth_must_be_between_1_and_64(value: Any) -> None:
    with pytest.raises(ValueError) as caught:
        FileTool(max_depth=value)
    assert str(caught.value) == (
        f"FileLimits.max_depth must be an integer from 1 to 64, got {value!r}"
    )


async def test_a_write_past_max_depth_is_refused_by_the_limit_check_too(files: Files) -> None:
    """Code that writes below FileTool's path check (FileMemory) is held to the limit."""
    with pytest.raises(FileLimitExceeded) as caught:
        await check_write(
            files, parse_path("/memories/a/b/c.md"), "x", FileLimits(max_depth=2), replacing=None
        )
    assert str(caught.value) == (
        "Cannot write /memories/a/b/c.md: it would be 3 levels below /memories, over the "
        "limit of 2. Choose a shallower path."
    )
