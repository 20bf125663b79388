"""docs/errors.md lists every public error, each with an import line that works."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import agentkit

PAGE = Path(__file__).resolve().parents[2] / "docs" / "errors.md"
_ROW = re.compile(r"^\| `(?P<name>\w+)` \| `(?P<statement>from [\w.]+ import \w+)` \| .+ \|$")


def _rows() -> dict[str, str]:
    """Each listed import line by itself: two integrations may each define an error of
    the same name (``RemoteError`` of Temporal and of A2A), told apart by their import."""
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    rows = [m for line in lines if (m := _ROW.match(line))]
    assert len(rows) == len({m["statement"] for m in rows}), "an error is listed twice"
    return {m["statement"]: m["name"] for m in rows}


def _imported(statement: str, name: str) -> object:
    namespace: dict[str, object] = {}
    exec(statement, namespace)
    return namespace[name]


def _public_errors() -> set[type[BaseException]]:
    """Every exception class agentkit defines that a public module exports, plus every
    class of the core errors module."""
    modules = [agentkit, *(
        importlib.import_module(info.name)
        for info in pkgutil.walk_packages(agentkit.__path__, "agentkit.")
        if "._" not in info.name and not info.name.endswith("__main__")
    )]
    found: set[type[BaseException]] = set()
    for module in modules:
        names = getattr(module, "__all__", ())
        if module.__name__ in (
            "agentkit.core.contracts.errors", "agentkit.core.contracts.state_errors"
        ):
            names = [n for n in vars(module) if not n.startswith("_")]
        for name in names:
            value = getattr(module, name, None)
            if (isinstance(value, type) and issubclass(value, BaseException)
                    and value.__module__.startswith("agentkit")):
                found.add(value)
    return found


def test_every_listed_import_line_imports_that_error() -> None:
    for statement, name in _rows().items():
        value = _imported(statement, name)
        assert isinstance(value, type) and issubclass(value, BaseException), statement


def test_every_public_error_is_listed() -> None:
    listed = {_imported(statement, name) for statement, name in _rows().items()}
    assert sorted(f"{e.__module__}.{e.__name__}" for e in _public_errors()
                  if e not in listed) == []
    assert len(_public_errors()) == len(listed)
