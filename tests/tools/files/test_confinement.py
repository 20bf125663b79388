"""Confinement is a security boundary: every path outside /memories is refused before
anything is read or written, on every backend.

Each attempt in ``ESCAPES`` is sent through every path argument of every command
(view, create, str_replace, insert, delete, and both sides of rename). On LocalFiles a
sibling directory ``outside/`` sits next to the memory directory, exactly where
``/memories/../outside`` would land; every file in it is hashed before and after, and
must be byte-for-byte unchanged. The disk-only attacks — symbolic links, hard links,
and a directory swapped for a link while the tool works — follow.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentkit.tools import (
    Files,
    FileTool,
    LocalFiles,
    PostgresFiles,
    SQLiteFiles,
    ToolArgumentError,
)
from agentkit.tools.files import ROOT, FileToolError, PathRefused

from .conftest import BACKENDS, make_files

ESCAPES: list[tuple[str, str]] = [
    # traversal and the root prefix
    ("dotdot-sibling", "/memories/../outside/secret.txt"),
    ("dotdot-twice", "/memories/../../etc/passwd"),
    ("dotdot-after-name", "/memories/a/../../outside/secret.txt"),
    ("dotdot-alone", "/memories/.."),
    ("dotdot-trailing", "/memories/notes/.."),
    ("dot-component", "/memories/./notes.md"),
    ("relative-dotdot", "../outside/secret.txt"),
    ("relative-plain", "outside/secret.txt"),
    ("relative-memories", "memories/notes.md"),
    ("absolute-etc", "/etc/passwd"),
    ("absolute-tmp", "/tmp/agentkit-escape.txt"),
    ("prefix-evil-file", "/memories-evil/x.md"),
    ("prefix-evil-dir", "/memories-evil"),
    ("prefix-glued", "/memoriesX/notes.md"),
    ("prefix-case", "/Memories/notes.md"),
    ("prefix-double-slash", "//memories/notes.md"),
    ("prefix-dot", "/./memories/notes.md"),
    ("prefix-dotdot", "/../memories/notes.md"),
    ("empty", ""),
    ("leading-space", " /memories/notes.md"),
    ("space-dotdot", "/memories/ ../outside"),
    ("home", "~/notes.md"),
    ("hidden-name", "/memories/.hidden"),
    ("temp-name", "/memories/.tmp-1-deadbeef"),
    # other separators
    ("backslash-traversal", "/memories\\..\\outside\\secret.txt"),
    ("mixed-separators", "/memories/..\\outside"),
    ("backslash-root", "\\memories\\notes.md"),
    # percent encodings
    ("percent-dots", "/memories/%2e%2e/outside/secret.txt"),
    ("percent-upper", "/memories/%2E%2E%2Foutside%2Fsecret.txt"),
    ("percent-slash", "/memories/..%2foutside"),
    ("percent-double", "/memories/%252e%252e/outside"),
    ("percent-prefix", "%2fmemories%2f..%2foutside"),
    ("percent-overlong", "/memories/%c0%ae%c0%ae/outside"),
    ("percent-nul", "/memories/notes.md%00.txt"),
    # unicode look-alikes and invisible characters
    ("fullwidth-dots", "/memories/\uff0e\uff0e/outside/secret.txt"),
    ("two-dot-leader", "/memories/\u2025/outside"),
    ("one-dot-leaders", "/memories/\u2024\u2024/outside"),
    ("small-full-stops", "/memories/\ufe52\ufe52/outside"),
    ("fullwidth-solidus", "/memories/..\uff0foutside"),
    ("division-slash", "/memories/..\u2215outside"),
    ("fraction-slash", "/memories/..\u2044outside"),
    ("fullwidth-prefix", "/memories\uff0f..\uff0foutside"),
    ("fullwidth-backslash", "/memories/\uff3c..\uff3coutside"),
    ("small-reverse-solidus", "/memories/\ufe68..\ufe68outside"),
    ("fullwidth-percent", "/memories/\uff052e\uff052e/outside"),
    ("surrogate-dots", "/memories/\udc2e\udc2e/outside"),
    ("surrogate-slash", "/memories/..\udc2foutside"),
    ("rtl-override", "/memories/txt.\u202egnp"),
    ("zero-width-space", "/memories/\u200b../outside"),
    ("byte-order-mark", "/memories/\ufeffnotes.md"),
    ("combining-dot", "/memories/.\u0338./outside"),
    # control characters
    ("nul-suffix", "/memories/notes.md\x00.txt"),
    ("nul-traversal", "/memories/\x00/../../outside"),
    ("newline", "/memories/notes\n.md"),
    ("carriage-return", "/memories/notes\r.md"),
    ("tab", "/memories/notes\t.md"),
    ("delete-char", "/memories/\x7f"),
    # size
    ("name-too-long", "/memories/" + "a" * 300),
    ("too-deep", "/memories/" + "d/" * 20 + "x.md"),
]

NOT_A_PATH: list[Any] = [7, ["/memories/x"], {"p": 1}, b"/memories/x", True, 1.5]

SECRET = b"top secret: do not touch\n"


def _slots(raw: Any) -> list[dict[str, Any]]:
    """The call ``raw`` reaches in every path argument of every command."""
    return [
        {"command": "view", "path": raw},
        {"command": "create", "path": raw, "file_text": "pwned"},
        {"command": "str_replace", "path": raw, "old_str": "secret", "new_str": "pwned"},
        {"command": "insert", "path": raw, "insert_line": 0, "insert_text": "pwned"},
        {"command": "delete", "path": raw},
        {"command": "rename", "old_path": raw, "new_path": "/memories/moved.md"},
        {"command": "rename", "old_path": "/memories/notes.md", "new_path": raw},
    ]


def snapshot(directory: Path) -> dict[str, str]:
    """Every entry below ``directory``: files by content hash and mode, links by target.
    (Not the link count: the hard-link tests add a link to a file here themselves.)"""
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(directory, followlinks=False):
        for name in dirnames + filenames:
            full = Path(dirpath, name)
            rel = str(full.relative_to(directory))
            st = full.lstat()
            if full.is_symlink():
                found[rel] = "link->" + os.readlink(full)
            elif full.is_dir():
                found[rel] = f"dir {oct(st.st_mode)}"
            else:
                digest = hashlib.sha256(full.read_bytes()).hexdigest()
                found[rel] = f"file {digest} {oct(st.st_mode)}"
    return found


@pytest.fixture
def outside(tmp_path: Path) -> Iterator[Path]:
    """A directory next to the memory root, holding files an escape would hit."""
    out = tmp_path / "outside"
    (out / "nested").mkdir(parents=True)
    (out / "secret.txt").write_bytes(SECRET)
    (out / "nested" / "deep.txt").write_bytes(b"deep secret\n")
    before = snapshot(out)
    yield out
    assert snapshot(out) == before, "a file outside /memories changed"


@pytest.fixture(params=BACKENDS)
async def tool(
    request: pytest.FixtureRequest, tmp_path: Path, outside: Path
) -> AsyncIterator[FileTool]:
    backend = make_files(request.param, tmp_path, request)
    yield FileTool(backend)
    if isinstance(backend, SQLiteFiles):
        backend.close()
    elif isinstance(backend, PostgresFiles):
        await backend.close()


async def _state(files: Files) -> tuple[Any, ...]:
    return (await files.listing(ROOT, None), await files.usage())


async def test_the_corpus_has_at_least_fifty_attempts() -> None:
    assert len(ESCAPES) >= 50
    assert len({raw for _, raw in ESCAPES}) == len(ESCAPES)


@pytest.mark.parametrize("raw", [raw for _, raw in ESCAPES], ids=[name for name, _ in ESCAPES])
async def test_every_escape_is_refused_in_every_path_argument(tool: FileTool, raw: str) -> None:
    await tool.run({"command": "create", "path": "/memories/notes.md", "file_text": "secret"}, None)
    before = await _state(tool.backend)

    for args in _slots(raw):
        with pytest.raises(PathRefused):
            await tool.run(args, None)

    assert await _state(tool.backend) == before


@pytest.mark.parametrize("value", NOT_A_PATH, ids=repr)
async def test_a_path_that_is_not_a_string_is_an_argument_error(
    tool: FileTool, value: Any
) -> None:
    for args in _slots(value):
        with pytest.raises(ToolArgumentError) as caught:
            await tool.run(args, None)
        assert caught.value.invalid[0][1].startswith("expected a string, got ")


async def test_refusals_name_the_path_and_the_reason(tool: FileTool) -> None:
    async def refusal(raw: str) -> str:
        with pytest.raises(PathRefused) as caught:
            await tool.run({"command": "view", "path": raw}, None)
        return str(caught.value)

    assert await refusal("/memories/../outside") == (
        "Path /memories/../outside is refused: '..' is not allowed: a path may not climb out "
        "of a directory"
    )
    assert await refusal("/memories-evil") == (
        "Path /memories-evil is refused: paths must start with /memories/ (or be /memories "
        "itself), e.g. /memories/notes.md"
    )
    assert await refusal("/memories/%2e%2e") == (
        "Path /memories/%2e%2e is refused: it contains the percent escape '%2e'; paths are "
        "taken literally, so write the character itself"
    )
    assert await refusal("/memories/a\x00b") == (
        "Path '/memories/a\\x00b' is refused: it contains U+0000, a control or invisible "
        "character"
    )
    assert await refusal("/memories/\uff0e\uff0e") == (
        "Path /memories/\uff0e\uff0e is refused: it contains U+FF0E (FULLWIDTH FULL STOP), "
        "which can stand in for '.', '/', '\\' or '%'; use plain ASCII punctuation"
    )


async def test_plain_unicode_names_are_accepted_and_normalised(tool: FileTool) -> None:
    decomposed = "/memories/cafe\u0301.md"  # e + combining acute: NFC makes it é
    await tool.run({"command": "create", "path": decomposed, "file_text": "x"}, None)

    assert await tool.run({"command": "view", "path": "/memories/café.md"}, None) == (
        "Here's the content of /memories/café.md with line numbers:\n     1\tx"
    )
    assert await tool.run({"command": "create", "path": "/memories/日本語 メモ.md",
                           "file_text": "y"}, None) == (
        "File created successfully at: /memories/日本語 メモ.md"
    )


# -- on disk: links and races ------------------------------------------------------------


@pytest.fixture
def disk(tmp_path: Path, outside: Path) -> tuple[FileTool, Path, Path]:
    root = tmp_path / "memories"
    tool = FileTool(LocalFiles(root))
    (root / "notes.md").write_text("plain notes\n")
    return tool, root, outside


async def _refused(tool: FileTool, args: dict[str, Any]) -> str:
    with pytest.raises(PathRefused) as caught:
        await tool.run(args, None)
    return str(caught.value)


async def test_a_symlinked_directory_pointing_outside_is_refused(
    disk: tuple[FileTool, Path, Path],
) -> None:
    tool, root, outside = disk
    (root / "link").symlink_to(outside)

    for args in _slots("/memories/link/secret.txt") + _slots("/memories/link/new.md"):
        message = await _refused(tool, args)
        assert "/memories/link is refused: it is a symbolic link" in message
    assert await _refused(tool, {"command": "view", "path": "/memories/link"}) == (
        "Path /memories/link is refused: it is a symbolic link, and links may point outside "
        "/memories"
    )
    assert not (outside / "new.md").exists()


async def test_a_symlinked_file_pointing_outside_is_refused(
    disk: tuple[FileTool, Path, Path],
) -> None:
    tool, root, outside = disk
    (root / "secret.md").symlink_to(outside / "secret.txt")

    for args in _slots("/memories/secret.md"):
        await _refused(tool, args)
    assert (root / "secret.md").is_symlink()


async def test_a_dangling_symlink_is_not_written_through(
    disk: tuple[FileTool, Path, Path],
) -> None:
    tool, root, outside = disk
    (root / "dangling.md").symlink_to(outside / "created-by-escape.txt")

    await _refused(tool, {"command": "create", "path": "/memories/dangling.md", "file_text": "x"})
    assert not (outside / "created-by-escape.txt").exists()


async def test_a_symlink_deep_in_the_tree_is_refused(disk: tuple[FileTool, Path, Path]) -> None:
    tool, root, _ = disk
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "up").symlink_to("../../..")
    (root / "a" / "root").symlink_to("/")

    for raw in ("/memories/a/b/up/outside/secret.txt", "/memories/a/root/etc/passwd"):
        for args in _slots(raw):
            await _refused(tool, args)


async def test_a_hard_link_to_a_file_outside_is_refused(
    disk: tuple[FileTool, Path, Path],
) -> None:
    tool, root, outside = disk
    os.link(outside / "secret.txt", root / "hard.md")

    for args in _slots("/memories/hard.md"):
        assert "has other hard links" in await _refused(tool, args)
    assert (root / "hard.md").read_bytes() == SECRET


async def test_links_are_left_out_of_listings(
    disk: tuple[FileTool, Path, Path],
) -> None:
    tool, root, outside = disk
    (root / "link").symlink_to(outside)
    (root / "file-link.md").symlink_to(outside / "secret.txt")
    os.link(outside / "secret.txt", root / "hard.md")

    assert await tool.run({"command": "view", "path": "/memories"}, None) == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden "
        "items:\n12B\t/memories\n12B\t/memories/notes.md"
    )


async def test_deleting_a_directory_never_follows_a_link_inside_it(
    disk: tuple[FileTool, Path, Path],
) -> None:
    tool, root, outside = disk
    (root / "d").mkdir()
    (root / "d" / "escape").symlink_to(outside)
    os.link(outside / "secret.txt", root / "d" / "hard.md")

    assert await tool.run({"command": "delete", "path": "/memories/d"}, None) == (
        "Successfully deleted /memories/d"
    )
    assert not (root / "d").exists()


async def test_renaming_into_a_symlinked_directory_is_refused(
    disk: tuple[FileTool, Path, Path],
) -> None:
    tool, root, outside = disk
    (root / "link").symlink_to(outside)

    await _refused(
        tool, {"command": "rename", "old_path": "/memories/notes.md",
               "new_path": "/memories/link/notes.md"},
    )
    assert (root / "notes.md").read_text() == "plain notes\n"


@pytest.mark.parametrize("swap_at", [1, 2, 3, 4])
@pytest.mark.parametrize(
    "args",
    [
        {"command": "view", "path": "/memories/d/secret.txt"},
        {"command": "view", "path": "/memories/d"},
        {"command": "create", "path": "/memories/d/new.md", "file_text": "pwned"},
        {"command": "str_replace", "path": "/memories/d/secret.txt", "old_str": "secret",
         "new_str": "pwned"},
        {"command": "insert", "path": "/memories/d/secret.txt", "insert_line": 0,
         "insert_text": "pwned"},
        {"command": "delete", "path": "/memories/d/secret.txt"},
        {"command": "rename", "old_path": "/memories/d/secret.txt", "new_path": "/memories/x.md"},
        {"command": "rename", "old_path": "/memories/notes.md", "new_path": "/memories/d/x.md"},
    ],
    ids=lambda args: "-".join(str(v).rsplit("/", 1)[-1] for v in args.values()),
)
async def test_a_directory_swapped_for_a_link_between_check_and_use_is_refused(
    disk: tuple[FileTool, Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    args: dict[str, Any],
    swap_at: int,
) -> None:
    """The attacker wins the race exactly: /memories/d is a real directory when it is
    checked and a link to the outside directory the moment it is next opened."""
    tool, root, outside = disk
    (root / "d").mkdir()
    (root / "d" / "secret.txt").write_text("my secret\n")
    real_open = os.open
    opened = 0

    def racing_open(path: Any, flags: int, mode: int = 0o777, *, dir_fd: Any = None) -> int:
        nonlocal opened
        if path == "d":
            opened += 1
            if opened == swap_at:
                os.rename(root / "d", root / "parked")
                os.symlink(outside, root / "d")
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", racing_open)
    try:
        result = await tool.run(args, None)
    except (PathRefused, FileToolError) as exc:
        result = str(exc)
    monkeypatch.undo()

    assert "top secret" not in result
    if opened >= swap_at:
        assert (root / "d").is_symlink()
        assert "is refused: it is a symbolic link" in result


async def test_a_directory_swapped_back_and_forth_while_the_tool_works(
    disk: tuple[FileTool, Path, Path],
) -> None:
    """Another process keeps replacing /memories/swap with a link to the outside
    directory and back, while the tool reads and writes through it."""
    tool, root, outside = disk
    real = root / "swap"
    real.mkdir()
    parked = root / "parked"
    stop = threading.Event()
    cycles = 0

    def swapper() -> None:
        nonlocal cycles
        steps = (
            lambda: os.rename(real, parked),
            lambda: os.symlink(outside, real),
            lambda: os.unlink(real),
            lambda: os.rename(parked, real),
        )
        while not stop.is_set():
            for step in steps:
                # The tool made or removed something meanwhile: keep swapping.
                with contextlib.suppress(OSError):
                    step()
            cycles += 1

    thread = threading.Thread(target=swapper)
    thread.start()
    calls = 0
    try:
        for i in range(400):
            args = [
                {"command": "create", "path": f"/memories/swap/n{i}.md", "file_text": "pwned"},
                {"command": "str_replace", "path": "/memories/swap/secret.txt",
                 "old_str": "secret", "new_str": "pwned"},
                {"command": "insert", "path": "/memories/swap/secret.txt", "insert_line": 0,
                 "insert_text": "pwned"},
                {"command": "view", "path": "/memories/swap/secret.txt"},
                {"command": "view", "path": "/memories/swap"},
                {"command": "delete", "path": "/memories/swap/secret.txt"},
                {"command": "delete", "path": "/memories/swap/nested"},
            ][i % 7]
            try:
                result = await tool.run(args, None)
                assert "top secret" not in result and "nested" not in result
            except (FileToolError, OSError):
                pass  # refused as a link, or caught mid-swap: not there, not a directory
            calls += 1
    finally:
        stop.set()
        thread.join()

    assert calls == 400
    assert cycles > 0


async def test_a_rename_racing_a_link_swap_never_moves_a_file_outside(
    disk: tuple[FileTool, Path, Path],
) -> None:
    """Renames whose destination directory flips between real and a link to outside."""
    tool, root, outside = disk
    target = root / "dest"
    stop = threading.Event()

    def flipper() -> None:
        kept = 0
        while not stop.is_set():
            with contextlib.suppress(OSError):
                target.mkdir()
                os.rename(target, root / f"kept{kept}")
                kept += 1
                target.symlink_to(outside)
                target.unlink()

    thread = threading.Thread(target=flipper)
    thread.start()
    try:
        for i in range(200):
            (root / f"n{i}.md").write_text(f"note {i}\n")
            with contextlib.suppress(FileToolError, OSError):
                await tool.run({"command": "rename", "old_path": f"/memories/n{i}.md",
                                "new_path": f"/memories/dest/n{i}.md"}, None)
    finally:
        stop.set()
        thread.join()

    assert sorted(p.name for p in outside.iterdir()) == ["nested", "secret.txt"]



async def test_a_lock_file_that_is_a_link_is_refused_and_not_followed(
    disk: tuple[FileTool, Path, Path],
) -> None:
    """The write lock lives in /memories/.lock; a link planted there stops every write."""
    tool, root, outside = disk
    (root / ".lock").symlink_to(outside / "secret.txt")

    for args in _slots("/memories/notes.md")[1:]:
        assert await _refused(tool, args) == (
            "Path /memories/.lock is refused: the lock file is not a regular file"
        )
    assert (root / "notes.md").read_text() == "plain notes\n"

# -- the memory directory's own path changed after construction ----------------------------


@pytest.mark.parametrize("swapped", ["ancestor", "memory-directory"])
async def test_a_path_component_swapped_for_a_link_after_construction_redirects_nothing(
    tmp_path: Path, swapped: str
) -> None:
    """LocalFiles is built over home/a/memories; then an ancestor (home/a), or the memory
    directory itself, is moved aside and a link to a look-alike tree elsewhere put in its
    place. Every command must still work on the directory opened at construction, and
    nothing in the look-alike tree may be read or changed."""
    home = tmp_path / "home"
    tool = FileTool(LocalFiles(home / "a" / "memories"))
    await tool.run({"command": "create", "path": "/memories/notes.md",
                    "file_text": "plain notes\n"}, None)
    await tool.run({"command": "create", "path": "/memories/d/inner.md",
                    "file_text": "inner\n"}, None)
    evil = tmp_path / "evil"
    (evil / "memories" / "d").mkdir(parents=True)
    (evil / "memories" / "notes.md").write_bytes(SECRET)
    (evil / "memories" / "d" / "inner.md").write_bytes(SECRET)
    before = snapshot(evil)
    if swapped == "ancestor":
        os.rename(home / "a", home / "parked")
        os.symlink(evil, home / "a")
        real = home / "parked" / "memories"
    else:
        os.rename(home / "a" / "memories", home / "a" / "parked")
        os.symlink(evil / "memories", home / "a" / "memories")
        real = home / "a" / "parked"

    results = [await tool.run(args, None) for args in [
        {"command": "view", "path": "/memories"},
        {"command": "view", "path": "/memories/notes.md"},
        {"command": "create", "path": "/memories/new.md", "file_text": "new\n"},
        {"command": "str_replace", "path": "/memories/notes.md", "old_str": "plain",
         "new_str": "edited"},
        {"command": "insert", "path": "/memories/notes.md", "insert_line": 0,
         "insert_text": "top"},
        {"command": "rename", "old_path": "/memories/new.md", "new_path": "/memories/d/new.md"},
        {"command": "delete", "path": "/memories/d/inner.md"},
    ]]

    assert snapshot(evil) == before
    assert results[:2] == [
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden "
        "items:\n18B\t/memories\n6B\t/memories/d/\n6B\t/memories/d/inner.md\n"
        "12B\t/memories/notes.md",
        "Here's the content of /memories/notes.md with line numbers:\n     1\tplain notes\n"
        "     2\t",
    ]
    assert (real / "notes.md").read_text() == "top\nedited notes\n"
    assert sorted(os.listdir(real / "d")) == ["new.md"]
    assert (real / "d" / "new.md").read_text() == "new\n"
