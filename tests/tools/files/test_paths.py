"""parse_path and MemoryPath: what counts as a plain path inside /memories."""

from __future__ import annotations

import pytest

from agentkit.tools.files import ROOT, MemoryPath, PathRefused, parse_path
from agentkit.tools.files.paths import MAX_DEPTH


@pytest.mark.parametrize(
    ("raw", "parts"),
    [
        ("/memories", ()),
        ("/memories/", ()),
        ("/memories/notes.md", ("notes.md",)),
        ("/memories/a/b/c.md", ("a", "b", "c.md")),
        ("/memories//a///b/", ("a", "b")),
        ("/memories/my notes (v2).md", ("my notes (v2).md",)),
        ("/memories/100% done.md", ("100% done.md",)),
        ("/memories/a..b", ("a..b",)),
        ("/memories/x~", ("x~",)),
        ("/memories/naïve/日本", ("naïve", "日本")),
        ("/memories/cafe\u0301", ("café",)),
    ],
)
def test_plain_paths_are_accepted(raw: str, parts: tuple[str, ...]) -> None:
    assert parse_path(raw) == MemoryPath(parts)


def test_a_memory_path_knows_its_shape() -> None:
    path = parse_path("/memories/a/b.md")

    assert str(path) == "/memories/a/b.md"
    assert repr(path) == "MemoryPath('/memories/a/b.md')"
    assert (path.name, path.key, path.is_root) == ("b.md", "a/b.md", False)
    assert path.parent == parse_path("/memories/a")
    assert path.parent.parent == ROOT == ROOT.parent
    assert str(ROOT) == "/memories" and ROOT.is_root
    assert path.is_within(ROOT) and path.is_within(path.parent) and path.is_within(path)
    assert not parse_path("/memories/ab").is_within(parse_path("/memories/a"))
    assert ROOT.child("x.md") == parse_path("/memories/x.md")


def test_a_child_name_is_checked_like_a_path() -> None:
    with pytest.raises(PathRefused):
        ROOT.child("..")
    with pytest.raises(PathRefused):
        ROOT.child("a/b")


def test_paths_as_deep_as_the_limit_are_accepted_and_deeper_refused() -> None:
    assert len(parse_path("/memories" + "/d" * MAX_DEPTH).parts) == MAX_DEPTH

    with pytest.raises(PathRefused, match=f"17 levels deep, over the limit of {MAX_DEPTH}"):
        parse_path("/memories" + "/d" * (MAX_DEPTH + 1))


def test_names_up_to_255_bytes_are_accepted() -> None:
    assert parse_path("/memories/" + "é" * 127).parts == ("é" * 127,)

    with pytest.raises(PathRefused, match="a name is 256 bytes long, over the limit of 255"):
        parse_path("/memories/" + "é" * 128)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("/memories/a/../b", "'..' is not allowed: a path may not climb out of a directory"),
        ("/memories/./b", "'.' components are not allowed; write the path without them"),
        ("/memories/.env", "names starting with '.' are reserved ('.env')"),
        ("/memories/ a", "the name ' a' starts or ends with whitespace"),
        ("/memories/a\\b", "backslashes are not path separators here; use '/'"),
        ("/memories/\u202e", "it contains U+202E (RIGHT-TO-LEFT OVERRIDE), a control or "
         "invisible character"),
        ("/memories/\udc2e", "it contains U+DC2E, a control or invisible character"),
        ("/memories/a\u2215b", "it contains U+2215 (DIVISION SLASH), which can stand in for "
         "'.', '/', '\\' or '%'; use plain ASCII punctuation"),
        ("memories", "paths must start with /memories/ (or be /memories itself), e.g. "
         "/memories/notes.md"),
    ],
)
def test_refusals_say_why(raw: str, reason: str) -> None:
    with pytest.raises(PathRefused) as caught:
        parse_path(raw)

    assert caught.value.reason == reason
    assert caught.value.raw == raw
    assert str(caught.value).endswith(f"is refused: {reason}")
