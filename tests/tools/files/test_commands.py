"""The six memory commands, their results and their failures, word for word, on every
backend (the ``files`` fixture runs each test on InMemoryFiles, LocalFiles and
SQLiteFiles)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from agentkit.tools import Files, FileTool, FileToolError, InMemoryFiles, ToolArgumentError
from agentkit.tools.files import MemoryPath, parse_path

LISTING = "Here're the files and directories up to 2 levels deep in {}, excluding hidden items:"


async def call(tool: FileTool, **args: Any) -> str:
    return await tool.run(args, None)


async def fails(tool: FileTool, **args: Any) -> str:
    with pytest.raises(FileToolError) as caught:
        await tool.run(args, None)
    return str(caught.value)


@pytest.fixture
def memory(files: Files) -> FileTool:
    return FileTool(files)


async def seed(tool: FileTool, notes: dict[str, str]) -> None:
    for path, text in notes.items():
        await call(tool, command="create", path=path, file_text=text)


# -- view ----------------------------------------------------------------------------------


async def test_view_of_an_empty_root_lists_only_the_root(memory: FileTool) -> None:
    assert await call(memory, command="view", path="/memories") == (
        LISTING.format("/memories") + "\n0B\t/memories"
    )


async def test_view_lists_two_levels_deep_sorted_with_sizes(memory: FileTool) -> None:
    await seed(memory, {
        "/memories/b.md": "bb",
        "/memories/a/one.md": "1" * 1024,
        "/memories/a/deep/two.md": "22",
        "/memories/a/deep/deeper/three.md": "333",
        "/memories/café.md": "café",
    })

    assert await call(memory, command="view", path="/memories") == "\n".join([
        LISTING.format("/memories"),
        "1.0K\t/memories",
        "1.0K\t/memories/a/",
        "5B\t/memories/a/deep/",
        "1K\t/memories/a/one.md",
        "2B\t/memories/b.md",
        "5B\t/memories/café.md",
    ])


async def test_view_sizes_a_directory_by_every_file_below_it(memory: FileTool) -> None:
    await seed(memory, {"/memories/a/deep/two.md": "22", "/memories/a/deep/deeper/x.md": "333"})

    assert await call(memory, command="view", path="/memories/a/") == "\n".join([
        LISTING.format("/memories/a"),
        "5B\t/memories/a",
        "5B\t/memories/a/deep/",
        "3B\t/memories/a/deep/deeper/",
        "2B\t/memories/a/deep/two.md",
    ])


async def test_view_shows_a_file_with_numbered_lines(memory: FileTool) -> None:
    await seed(memory, {"/memories/notes.md": "# Notes\n- likes tea\n"})

    assert await call(memory, command="view", path="/memories/notes.md") == (
        "Here's the content of /memories/notes.md with line numbers:\n"
        "     1\t# Notes\n"
        "     2\t- likes tea\n"
        "     3\t"
    )


@pytest.mark.parametrize(
    ("view_range", "shown"),
    [
        ([2, 3], "     2\tb\n     3\tc"),
        ([2, -1], "     2\tb\n     3\tc\n     4\td"),
        ([4, 4], "     4\td"),
        ([3, 99], "     3\tc\n     4\td"),
    ],
)
async def test_view_range_picks_lines(
    memory: FileTool, view_range: list[int], shown: str
) -> None:
    await seed(memory, {"/memories/n.md": "a\nb\nc\nd"})

    assert await call(memory, command="view", path="/memories/n.md", view_range=view_range) == (
        "Here's the content of /memories/n.md with line numbers:\n" + shown
    )


async def test_view_range_outside_the_file_is_refused(memory: FileTool) -> None:
    await seed(memory, {"/memories/n.md": "a\nb"})

    assert await fails(memory, command="view", path="/memories/n.md", view_range=[5, 6]) == (
        "Invalid `view_range` parameter: [5, 6]. Its first element `5` should be within the "
        "range of lines of the file: [1, 2]."
    )
    assert await fails(memory, command="view", path="/memories/n.md", view_range=[0, 1]) == (
        "Invalid `view_range` parameter: [0, 1]. Its first element `0` should be within the "
        "range of lines of the file: [1, 2]."
    )
    assert await fails(memory, command="view", path="/memories/n.md", view_range=[2, 1]) == (
        "Invalid `view_range` parameter: [2, 1]. Its second element `1` should be -1 (to the "
        "end) or at least its first element `2`."
    )


async def test_view_of_a_missing_path_says_so(memory: FileTool) -> None:
    assert await fails(memory, command="view", path="/memories/nope.md") == (
        "The path /memories/nope.md does not exist. Please provide a valid path."
    )


# -- create ----------------------------------------------------------------------------------


async def test_create_writes_a_new_file_and_its_directories(memory: FileTool) -> None:
    assert await call(
        memory, command="create", path="/memories/projects/alpha/status.md", file_text="go\n"
    ) == "File created successfully at: /memories/projects/alpha/status.md"

    assert await call(memory, command="view", path="/memories/projects/alpha/status.md") == (
        "Here's the content of /memories/projects/alpha/status.md with line numbers:\n"
        "     1\tgo\n     2\t"
    )
    assert "3B\t/memories/projects/alpha/" in await call(memory, command="view", path="/memories")


async def test_create_refuses_an_existing_file_or_directory(memory: FileTool) -> None:
    await seed(memory, {"/memories/a/n.md": "keep"})

    assert await fails(memory, command="create", path="/memories/a/n.md", file_text="x") == (
        "File /memories/a/n.md already exists"
    )
    assert await fails(memory, command="create", path="/memories/a", file_text="x") == (
        "File /memories/a already exists"
    )
    assert await fails(memory, command="create", path="/memories", file_text="x") == (
        "File /memories already exists"
    )
    assert "     1\tkeep" in await call(memory, command="view", path="/memories/a/n.md")


async def test_create_under_a_file_is_refused(memory: FileTool) -> None:
    await seed(memory, {"/memories/n.md": "x"})

    assert await fails(memory, command="create", path="/memories/n.md/sub.md", file_text="y") == (
        "Cannot create /memories/n.md/sub.md: /memories/n.md is a file, not a directory."
    )


async def test_create_keeps_text_exactly(memory: FileTool) -> None:
    text = "crlf\r\nno final newline — ünïcödé 🎉"
    await seed(memory, {"/memories/t.md": text})

    assert await memory.backend.read(parse_path("/memories/t.md")) == text


# -- str_replace -----------------------------------------------------------------------------


async def test_str_replace_edits_and_shows_the_lines_around_the_change(memory: FileTool) -> None:
    await seed(memory, {"/memories/n.md": "1\n2\n3\nold\n5\n6\n7\n"})

    assert await call(
        memory, command="str_replace", path="/memories/n.md", old_str="old", new_str="new"
    ) == (
        "The memory file has been edited. Here is the snippet showing the change (with line "
        "numbers):\n"
        "     2\t2\n     3\t3\n     4\tnew\n     5\t5\n     6\t6"
    )
    assert "     4\tnew" in await call(memory, command="view", path="/memories/n.md")


async def test_str_replace_snippet_is_clipped_at_the_top_of_the_file(memory: FileTool) -> None:
    await seed(memory, {"/memories/n.md": "old\nb"})

    assert await call(
        memory, command="str_replace", path="/memories/n.md", old_str="old", new_str="x\ny"
    ) == (
        "The memory file has been edited. Here is the snippet showing the change (with line "
        "numbers):\n"
        "     1\tx\n     2\ty\n     3\tb"
    )


async def test_str_replace_refuses_text_that_is_not_there(memory: FileTool) -> None:
    await seed(memory, {"/memories/n.md": "likes tea"})

    assert await fails(
        memory, command="str_replace", path="/memories/n.md", old_str="coffee", new_str="x"
    ) == (
        "No replacement was performed, old_str `coffee` did not appear verbatim in "
        "/memories/n.md."
    )


async def test_str_replace_refuses_text_that_appears_more_than_once(memory: FileTool) -> None:
    await seed(memory, {"/memories/n.md": "tea\ncoffee\ntea and tea\n"})

    assert await fails(
        memory, command="str_replace", path="/memories/n.md", old_str="tea", new_str="x"
    ) == (
        "No replacement was performed. Multiple occurrences of old_str `tea` in lines: 1, 3. "
        "Please ensure it is unique"
    )
    assert "     1\ttea" in await call(memory, command="view", path="/memories/n.md")


async def test_str_replace_counts_overlapping_occurrences(memory: FileTool) -> None:
    await seed(memory, {"/memories/n.md": "aaa"})

    assert "Multiple occurrences of old_str `aa` in lines: 1." in await fails(
        memory, command="str_replace", path="/memories/n.md", old_str="aa", new_str="b"
    )


async def test_str_replace_on_a_missing_file_or_a_directory(memory: FileTool) -> None:
    await seed(memory, {"/memories/d/n.md": "x"})

    assert await fails(
        memory, command="str_replace", path="/memories/no.md", old_str="a", new_str="b"
    ) == "The path /memories/no.md does not exist. Please provide a valid path."
    assert await fails(
        memory, command="str_replace", path="/memories/d", old_str="a", new_str="b"
    ) == "The path /memories/d is not a file."


async def test_str_replace_with_an_empty_old_str_is_an_argument_error(memory: FileTool) -> None:
    await seed(memory, {"/memories/n.md": "x"})

    with pytest.raises(ToolArgumentError) as caught:
        await call(memory, command="str_replace", path="/memories/n.md", old_str="", new_str="y")

    assert caught.value.invalid == (
        ("old_str", "must not be empty: give text that appears exactly once in the file"),
    )


# -- insert ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [(0, "new\na\nb\n"), (1, "a\nnew\nb\n"), (2, "a\nb\nnew\n")],
)
async def test_insert_puts_text_after_the_given_line(
    memory: FileTool, line: int, expected: str
) -> None:
    await seed(memory, {"/memories/n.md": "a\nb\n"})

    assert await call(
        memory, command="insert", path="/memories/n.md", insert_line=line, insert_text="new\n"
    ) == "The file /memories/n.md has been edited."

    assert await memory.backend.read(parse_path("/memories/n.md")) == expected


async def test_insert_ends_the_file_with_a_newline(memory: FileTool) -> None:
    await seed(memory, {"/memories/n.md": "a"})
    await call(memory, command="insert", path="/memories/n.md", insert_line=1, insert_text="b")

    assert await memory.backend.read(parse_path("/memories/n.md")) == "a\nb\n"


@pytest.mark.parametrize("line", [-1, 3])
async def test_insert_outside_the_file_is_refused(memory: FileTool, line: int) -> None:
    await seed(memory, {"/memories/n.md": "a\nb\n"})

    assert await fails(
        memory, command="insert", path="/memories/n.md", insert_line=line, insert_text="x"
    ) == f"Invalid `insert_line` parameter: {line}. It should be within the range [0, 2]."


async def test_insert_on_a_missing_file_or_a_directory(memory: FileTool) -> None:
    await seed(memory, {"/memories/d/n.md": "x"})

    assert await fails(
        memory, command="insert", path="/memories/no.md", insert_line=0, insert_text="x"
    ) == "The path /memories/no.md does not exist. Please provide a valid path."
    assert await fails(
        memory, command="insert", path="/memories/d", insert_line=0, insert_text="x"
    ) == "The path /memories/d is not a file."


# -- delete ------------------------------------------------------------------------------------


async def test_delete_removes_a_file(memory: FileTool) -> None:
    await seed(memory, {"/memories/n.md": "x", "/memories/keep.md": "k"})

    assert await call(memory, command="delete", path="/memories/n.md") == (
        "Successfully deleted /memories/n.md"
    )
    assert await call(memory, command="view", path="/memories") == "\n".join(
        [LISTING.format("/memories"), "1B\t/memories", "1B\t/memories/keep.md"]
    )


async def test_delete_removes_a_directory_and_everything_in_it(memory: FileTool) -> None:
    await seed(memory, {"/memories/d/a.md": "x", "/memories/d/e/b.md": "y"})

    assert await call(memory, command="delete", path="/memories/d") == (
        "Successfully deleted /memories/d"
    )
    assert await call(memory, command="view", path="/memories") == (
        LISTING.format("/memories") + "\n0B\t/memories"
    )


async def test_delete_of_a_missing_path_or_the_root_is_refused(memory: FileTool) -> None:
    assert await fails(memory, command="delete", path="/memories/no.md") == (
        "The path /memories/no.md does not exist"
    )
    assert await fails(memory, command="delete", path="/memories") == (
        "Cannot delete the /memories directory itself"
    )
    assert await fails(memory, command="delete", path="/memories/") == (
        "Cannot delete the /memories directory itself"
    )


# -- rename ------------------------------------------------------------------------------------


async def test_rename_moves_a_file_into_new_directories(memory: FileTool) -> None:
    await seed(memory, {"/memories/n.md": "x"})

    assert await call(
        memory, command="rename", old_path="/memories/n.md", new_path="/memories/a/b/n.md"
    ) == "Successfully renamed /memories/n.md to /memories/a/b/n.md"
    assert await call(memory, command="view", path="/memories") == "\n".join([
        LISTING.format("/memories"), "1B\t/memories", "1B\t/memories/a/", "1B\t/memories/a/b/",
    ])


async def test_rename_moves_a_directory_with_its_contents(memory: FileTool) -> None:
    await seed(memory, {"/memories/d/a.md": "x", "/memories/d/e/b.md": "yy"})

    await call(memory, command="rename", old_path="/memories/d", new_path="/memories/archive")

    assert await call(memory, command="view", path="/memories") == "\n".join([
        LISTING.format("/memories"),
        "3B\t/memories",
        "3B\t/memories/archive/",
        "1B\t/memories/archive/a.md",
        "2B\t/memories/archive/e/",
    ])


async def test_rename_failures(memory: FileTool) -> None:
    await seed(memory, {"/memories/a.md": "x", "/memories/b.md": "y", "/memories/d/c.md": "z"})

    assert await fails(
        memory, command="rename", old_path="/memories/a.md", new_path="/memories/b.md"
    ) == "The destination /memories/b.md already exists"
    assert await fails(
        memory, command="rename", old_path="/memories/no.md", new_path="/memories/x.md"
    ) == "The path /memories/no.md does not exist"
    assert await fails(
        memory, command="rename", old_path="/memories", new_path="/memories/x"
    ) == "Cannot rename the /memories directory itself"
    assert await fails(
        memory, command="rename", old_path="/memories/d", new_path="/memories/d/inner"
    ) == (
        "Cannot move /memories/d into itself (/memories/d/inner); choose a destination "
        "outside it."
    )
    assert await fails(
        memory, command="rename", old_path="/memories/b.md", new_path="/memories/a.md/b.md"
    ) == "Cannot create /memories/a.md/b.md: /memories/a.md is a file, not a directory."
    assert await fails(
        memory, command="rename", old_path="/memories/a.md", new_path="/memories"
    ) == "The destination /memories already exists"


# -- a path below a file -------------------------------------------------------------------


async def test_a_path_below_a_file_does_not_exist(memory: FileTool) -> None:
    await seed(memory, {"/memories/n.md": "x"})
    below = "/memories/n.md/x.md"

    assert await fails(memory, command="view", path=below) == (
        f"The path {below} does not exist. Please provide a valid path."
    )
    assert await fails(memory, command="str_replace", path=below, old_str="x", new_str="y") == (
        f"The path {below} does not exist. Please provide a valid path."
    )
    assert await fails(memory, command="insert", path=below, insert_line=0, insert_text="y") == (
        f"The path {below} does not exist. Please provide a valid path."
    )
    assert await fails(memory, command="delete", path=below) == f"The path {below} does not exist"
    assert await fails(memory, command="rename", old_path=below, new_path="/memories/y.md") == (
        f"The path {below} does not exist"
    )


# -- a backend that changes between the check and the act --------------------------------


class _Racing(InMemoryFiles):
    """Another writer gets in between FileTool's look and its act, every time."""

    async def read(self, path: MemoryPath) -> str:
        raise FileNotFoundError(2, "gone", str(path))

    async def write(self, path: MemoryPath, text: str, *, exclusive: bool = False) -> None:
        raise FileExistsError(17, "exists", str(path))

    async def rename(self, old: MemoryPath, new: MemoryPath) -> None:
        raise FileNotFoundError(2, "gone", str(old)) if "gone" in old.key else FileExistsError(
            17, "exists", str(new)
        )


async def test_a_change_between_check_and_act_is_reported_plainly() -> None:
    tool = FileTool(_Racing({"/memories/n.md": "x", "/memories/gone.md": "y"}))

    assert await fails(tool, command="view", path="/memories/n.md") == (
        "The file /memories/n.md no longer exists (may have been deleted or renamed "
        "concurrently)."
    )
    assert await fails(tool, command="create", path="/memories/new.md", file_text="x") == (
        "File /memories/new.md already exists"
    )
    assert await fails(
        tool, command="rename", old_path="/memories/gone.md", new_path="/memories/a.md"
    ) == "The path /memories/gone.md does not exist"
    assert await fails(
        tool, command="rename", old_path="/memories/n.md", new_path="/memories/a.md"
    ) == "The destination /memories/a.md already exists"
    assert isinstance(_Racing(), Files)


async def test_a_note_holding_nul_is_kept_exactly_on_every_backend(memory: FileTool) -> None:
    text = "before \x00 after, and a second \x00"
    await seed(memory, {"/memories/nul.md": text})
    await call(memory, command="str_replace", path="/memories/nul.md",
               old_str="second \x00", new_str="third \x00\x00")

    assert await memory.backend.read(parse_path("/memories/nul.md")) == (
        "before \x00 after, and a third \x00\x00"
    )


async def test_a_path_at_the_depth_limit_with_long_names_is_stored(memory: FileTool) -> None:
    # Digits of no pattern, so the server cannot compress the path below its index limit.
    names = ["".join(hashlib.sha256(f"{n}.{i}".encode()).hexdigest() for i in range(4))[:250]
             for n in range(12)]
    path = "/memories/" + "/".join(names) + "/deep.md"
    await seed(memory, {path: "deep note"})
    await call(memory, command="str_replace", path=path, old_str="deep", new_str="deeper")

    assert await memory.backend.read(parse_path(path)) == "deeper note"
    (entry,) = [e for e in await memory.backend.listing(parse_path("/memories"), None)
                if e.path == parse_path(path)]
    assert entry.size == len("deeper note")
