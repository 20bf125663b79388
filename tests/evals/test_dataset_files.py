"""Dataset.from_file: JSON, JSONL and YAML, and malformed files refused with the line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentkit.evals import Contains, Dataset, DatasetError

JSON = """{
  "name": "support",
  "cases": [
    {"id": "refund", "input": "Refund A-1", "expected": "refunded",
     "metadata": {"tier": "gold"}},
    {"id": "chat", "turns": ["I am Ada.", "Who am I?"], "expected": ["Ada", "Ada"]}
  ]
}
"""

YAML = """name: support
cases:
  - id: refund
    input: Refund A-1
    expected: refunded
    metadata: {tier: gold}
  - id: chat
    turns: [I am Ada., "Who am I?"]
    expected: [Ada, Ada]
"""


def shape(dataset: Dataset) -> list[tuple[object, ...]]:
    return [(c.id, c.input, c.turns, c.expected, dict(c.metadata)) for c in dataset.cases]


EXPECTED = [
    ("refund", "Refund A-1", None, "refunded", {"tier": "gold"}),
    ("chat", None, ("I am Ada.", "Who am I?"), ["Ada", "Ada"], {}),
]


@pytest.mark.parametrize(("suffix", "text"), [(".json", JSON), (".yaml", YAML), (".yml", YAML)])
def test_json_and_yaml_hold_the_same_layout(tmp_path: Path, suffix: str, text: str) -> None:
    path = tmp_path / f"cases{suffix}"
    path.write_text(text)
    dataset = Dataset.from_file(path, evaluators=[Contains()])
    assert (dataset.name, len(dataset.evaluators)) == ("support", 1)
    assert shape(dataset) == EXPECTED


def test_jsonl_holds_one_case_per_line_named_after_the_file(tmp_path: Path) -> None:
    path = tmp_path / "smoke.jsonl"
    path.write_text('{"id": "refund", "input": "Refund A-1", "expected": "refunded", '
                    '"metadata": {"tier": "gold"}}\n\n'
                    '{"id": "chat", "turns": ["I am Ada.", "Who am I?"], '
                    '"expected": ["Ada", "Ada"]}\n')
    dataset = Dataset.from_file(path)
    assert dataset.name == "smoke"
    assert shape(dataset) == EXPECTED


def refusal(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(DatasetError) as exc:
        Dataset.from_file(path)
    assert exc.value.path == path
    return str(exc.value).replace(str(tmp_path) + "/", "")


def test_malformed_files_are_refused_with_the_line_and_field(tmp_path: Path) -> None:
    assert refusal(tmp_path, "a.jsonl", '{"input": "a"}\n{"input": "b",}\n') == (
        "a.jsonl:2: not valid JSON: Expecting property name enclosed in double quotes at "
        "column 15"
    )
    assert refusal(tmp_path, "b.jsonl", '{"input": "a"}\n{"id": "x", "turns": "hello"}\n') == (
        "b.jsonl:2: case 2 ('x'): field 'turns': expected a non-empty list of strings, got "
        "'hello'"
    )
    assert refusal(tmp_path, "c.json", '{"cases": [\n  {"input": "a"},\n  {"input": "b",\n'
                                        '   "expeted": 1}\n]}') == (
        "c.json:3: case 2: field 'expeted': unknown field; accepted: ['id', 'input', "
        "'expected', 'metadata', 'turns']"
    )
    assert refusal(tmp_path, "d.yaml", "cases:\n  - input: a\n  - id: b\n    metadata: [1]\n"
                                        "    input: c\n") == (
        "d.yaml:4: case 2 ('b'): field 'metadata': expected an object, got a list"
    )
    assert refusal(tmp_path, "e.yaml", "cases:\n  - input: [a\n") == (
        "e.yaml:3: not valid YAML: expected ',' or ']', but got '<stream end>'"
    )
    assert refusal(tmp_path, "f.json", '{"cases": [{"id": "x", "input": "a"}, '
                                        '{"id": "x", "input": "b"}]}') == (
        "f.json:1: case 2 ('x'): field 'id': 'x' is already the id of the case on line 1; "
        "ids are unique"
    )
    assert refusal(tmp_path, "g.json", '{"cases": [{"expected": "a"}]}') == (
        "g.json:1: case 1: field 'input': give exactly one of 'input' (one run) or 'turns' "
        "(a conversation)"
    )
    assert refusal(tmp_path, "h.json", '{"name": "x", "case": []}') == (
        "h.json:1: unknown field(s) ['case']; accepted: ['name', 'cases']"
    )
    assert refusal(tmp_path, "i.csv", "input\na\n") == (
        "i.csv: unknown dataset format '.csv'; accepted: ['.json', '.jsonl', '.yaml', '.yml']"
    )


def test_a_yaml_dataset_without_pyyaml_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(YAML)
    monkeypatch.setitem(sys.modules, "yaml", None)  # as if PyYAML were not installed
    with pytest.raises(ImportError) as exc:
        Dataset.from_file(path)
    assert str(exc.value) == (
        'reading a YAML dataset needs PyYAML: pip install "agentkit-framework[yaml]"'
    )
