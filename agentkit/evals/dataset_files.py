"""Reading a dataset from a file: JSON, JSONL or YAML, refused with the line at fault.

JSON and YAML hold ``{"name": ..., "cases": [{"id", "input", "expected", "metadata",
"turns"}, ...]}``; JSONL holds one case object per line (the dataset is named after the
file). Every case is checked before any is used, so a bad file never yields half a
dataset; the error names the file, the line, the case and the field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentkit.core.contracts.errors import AgentkitError

__all__ = ["DatasetError", "read_dataset"]

_CASE_FIELDS = ("id", "input", "expected", "metadata", "turns")
_TOP_FIELDS = ("name", "cases")
_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml")

Lines = dict[str, int]
"""A case's line, under ``""``, and the line of each of its fields."""


class DatasetError(AgentkitError, ValueError):
    """A dataset file that cannot be used: the file, line and field at fault, and why."""

    def __init__(self, path: Path, line: int | None, problem: str) -> None:
        self.path = path
        self.line = line
        self.problem = problem
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {problem}")


def read_dataset(path: Path) -> tuple[str, list[dict[str, Any]]]:
    """The dataset's name and each case's ``Case(...)`` keywords, all checked."""
    suffix = path.suffix.lower()
    if suffix not in _SUFFIXES:
        raise DatasetError(
            path, None, f"unknown dataset format {suffix or '(no suffix)'!r}; accepted: "
            f"{list(_SUFFIXES)}"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(path, None, f"cannot read the file: {exc}") from None
    if suffix == ".jsonl":
        return path.stem, _jsonl(path, text)
    top, top_line, cases = _yaml(path, text) if suffix in (".yaml", ".yml") else _json(path, text)
    if not isinstance(top, Mapping):
        raise DatasetError(
            path, top_line, 'expected an object {"name": ..., "cases": [...]}, got '
            f"{_kind(top)}"
        )
    unknown = sorted(set(top) - set(_TOP_FIELDS))
    if unknown:
        raise DatasetError(
            path, top_line, f"unknown field(s) {unknown}; accepted: {list(_TOP_FIELDS)}"
        )
    name = top.get("name", path.stem)
    if not isinstance(name, str) or not name:
        raise DatasetError(path, top_line, f"field 'name': expected a non-empty string, "
                                           f"got {name!r}")
    raw_cases = top.get("cases")
    if not isinstance(raw_cases, list):
        raise DatasetError(path, top_line, f"field 'cases': expected a list of case objects, "
                                           f"got {_kind(raw_cases)}")
    return name, _checked(path, [(raw, cases[i]) for i, raw in enumerate(raw_cases)])


def _jsonl(path: Path, text: str) -> list[dict[str, Any]]:
    found: list[tuple[Any, Lines]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            found.append((json.loads(line), {"": number}))
        except json.JSONDecodeError as exc:
            raise DatasetError(path, number, f"not valid JSON: {exc.msg} at column "
                                             f"{exc.colno}") from None
    return _checked(path, found)


def _json(path: Path, text: str) -> tuple[Any, int, list[Lines]]:
    try:
        top = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(path, exc.lineno, f"not valid JSON: {exc.msg} at column "
                                             f"{exc.colno}") from None
    return top, 1, _json_case_lines(text)


def _json_case_lines(text: str) -> list[Lines]:
    """The line each element of the top-level ``"cases"`` array starts on (the text is
    valid JSON: the standard decoder keeps no positions, so walk it once more)."""
    decoder = json.JSONDecoder()

    def skip(at: int) -> int:
        while at < len(text) and text[at] in " \t\r\n":
            at += 1
        return at

    def line(at: int) -> int:
        return text.count("\n", 0, at) + 1

    at = skip(0)
    if text[at : at + 1] != "{":
        return []
    at = skip(at + 1)
    while at < len(text) and text[at] == '"':
        key, at = decoder.raw_decode(text, at)
        at = skip(skip(at) + 1)  # past the colon
        if key == "cases" and text[at : at + 1] == "[":
            lines: list[Lines] = []
            at = skip(at + 1)
            while at < len(text) and text[at] != "]":
                lines.append({"": line(at)})
                _, at = decoder.raw_decode(text, at)
                at = skip(at)
                at = skip(at + 1) if text[at : at + 1] == "," else at
            return lines
        _, at = decoder.raw_decode(text, at)
        at = skip(at)
        at = skip(at + 1) if text[at : at + 1] == "," else at
    return []


def _yaml(path: Path, text: str) -> tuple[Any, int, list[Lines]]:
    try:
        import yaml
    except ImportError:
        raise ImportError(
            'reading a YAML dataset needs PyYAML: pip install "agentkit-framework[yaml]"'
        ) from None
    try:
        top = yaml.safe_load(text)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise DatasetError(
            path, None if mark is None else mark.line + 1, f"not valid YAML: {problem}"
        ) from None
    lines: list[Lines] = []
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if key.value == "cases" and isinstance(value, yaml.SequenceNode):
                for item in value.value:
                    fields = {"": item.start_mark.line + 1}
                    if isinstance(item, yaml.MappingNode):
                        fields.update({k.value: k.start_mark.line + 1 for k, _ in item.value})
                    lines.append(fields)
    return top, 1 if node is None else node.start_mark.line + 1, lines


def _checked(path: Path, found: list[tuple[Any, Lines]]) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    first_line: dict[str, int] = {}
    for index, (raw, lines) in enumerate(found, 1):
        kwargs = _case(path, index, raw, lines)
        case_id = kwargs.get("id")
        if case_id is not None:
            if case_id in first_line:
                raise DatasetError(
                    path, lines.get("id", lines[""]),
                    f"case {index} ({case_id!r}): field 'id': {case_id!r} is already the id of "
                    f"the case on line {first_line[case_id]}; ids are unique",
                )
            first_line[case_id] = lines[""]
        cases.append(kwargs)
    return cases


def _case(path: Path, index: int, raw: Any, lines: Lines) -> dict[str, Any]:
    def fail(field: str | None, problem: str) -> DatasetError:
        label = f"case {index}" + (f" ({raw.get('id')!r})" if isinstance(raw, Mapping)
                                    and isinstance(raw.get("id"), str) else "")
        where = f"{label}: field {field!r}: " if field else f"{label}: "
        line = lines.get(field or "", lines[""])
        return DatasetError(path, line, where + problem)

    if not isinstance(raw, Mapping):
        raise fail(None, f"expected a case object {{{', '.join(_CASE_FIELDS)}}}, got "
                         f"{_kind(raw)}")
    unknown = sorted(set(raw) - set(_CASE_FIELDS))
    if unknown:
        raise fail(unknown[0], f"unknown field; accepted: {list(_CASE_FIELDS)}")
    case_id = raw.get("id")
    if case_id is not None and (not isinstance(case_id, str) or not case_id):
        raise fail("id", f"expected a non-empty string, got {case_id!r}")
    has_input, has_turns = raw.get("input") is not None, raw.get("turns") is not None
    if has_input == has_turns:
        raise fail("turns" if has_turns else "input",
                   "give exactly one of 'input' (one run) or 'turns' (a conversation)")
    if has_input and not isinstance(raw["input"], str):
        raise fail("input", f"expected a string, got {_kind(raw['input'])}")
    turns = raw.get("turns")
    if has_turns and (not isinstance(turns, list) or not turns
                      or not all(isinstance(t, str) for t in turns)):
        raise fail("turns", f"expected a non-empty list of strings, got {turns!r}")
    expected = raw.get("expected")
    if isinstance(turns, list) and expected is not None and (
        not isinstance(expected, list) or len(expected) != len(turns)
    ):
        raise fail("expected", f"a multi-turn case expects a list with one entry per turn "
                               f"({len(turns)}), got {expected!r}")
    metadata = raw.get("metadata")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise fail("metadata", f"expected an object, got {_kind(metadata)}")
    return {
        "input": raw.get("input"), "expected": expected, "id": case_id,
        "metadata": metadata, "turns": turns,
    }


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    return f"{type(value).__name__} {value!r}" if isinstance(value, str | int | float) else (
        f"a {type(value).__name__}"
    )
