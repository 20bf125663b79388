"""Tokens and principals: lookup by token, scopes, and the tokens file's errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentkit.serve.access import Access, Principal, load_tokens


def test_a_token_finds_its_principal_and_nothing_else_does() -> None:
    ana, bot = Principal("ana"), Principal("bot", scopes=("org1:dom1",), can_decide=False)
    access = Access({"tok-ana": ana, "tok-bot": bot})
    assert access.principal(b"Bearer tok-ana") is ana
    assert access.principal(b"bearer tok-bot") is bot
    assert access.principal(b"Bearer tok-an") is None
    assert access.principal(b"Basic tok-ana") is None
    assert access.principal(None) is None
    assert (bot.sees("org1:dom1"), bot.sees("org2:dom1"), ana.sees("org2:dom1")) == (
        True, False, True)
    assert Access(None).principal(None) == Principal("local")


def test_a_principal_without_a_name_or_with_scopes_as_a_string_is_refused() -> None:
    with pytest.raises(ValueError) as info:
        Principal("")
    assert str(info.value) == "Principal(name=...) must be a non-empty string, got ''"
    with pytest.raises(ValueError) as info:
        Principal("ana", scopes="org1:dom1")  # type: ignore[arg-type]
    assert str(info.value) == (
        "Principal(scopes=...) of 'ana' must be a tuple of scope keys (\"org7:dom1\") or "
        "None for every scope, got 'org1:dom1'")


def test_a_tokens_file_maps_tokens_to_principals(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps({
        "t1": {"name": "ana"},
        "t2": {"name": "bot", "scopes": ["org1:dom1"], "can_decide": False},
    }))
    assert load_tokens(path) == {
        "t1": Principal("ana"), "t2": Principal("bot", ("org1:dom1",), False)}


@pytest.mark.parametrize(("content", "problem"), [
    ("[1]", ' must hold a non-empty JSON object from token to {"name": ..., "scopes": [...] '
     "or null, \"can_decide\": true or false}"),
    ("{nope", " is not JSON: Expecting property name enclosed in double quotes: line 1 "
     "column 2 (char 1)"),
    ('{"t": {"name": "a", "role": "x"}}', ", entry #1 must be an object with the keys name, "
     'scopes and can_decide, got {"name": "a", "role": "x"}'),
    ('{"t": {"name": "a", "can_decide": "yes"}}', ", entry #1: can_decide must be true or "
     "false, got 'yes'"),
    ('{"t": {"name": ""}}', ", entry #1: Principal(name=...) must be a non-empty string, "
     "got ''"),
    ('{" ": {"name": "a"}}', ", entry #1: the token is empty; set it to a long random secret"),
])
def test_a_bad_tokens_file_names_the_entry_that_is_wrong(
    tmp_path: Path, content: str, problem: str
) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(content)
    with pytest.raises(ValueError) as info:
        load_tokens(path)
    assert str(info.value) == f"the tokens file {path}{problem}"
