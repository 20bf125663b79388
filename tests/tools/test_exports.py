"""What the tool packages export, and that every ``__all__`` is sorted and importable."""

import importlib
import inspect
import re
import typing
from collections.abc import Mapping
from typing import Any

import pytest

import agentkit.tools
from agentkit.core.contracts.errors import ToolDefinitionError as _ContractsDefinitionError
from agentkit.tools import (
    FrozenDict,
    FunctionTool,
    Tool,
    ToolArgumentError,
    ToolDefinitionError,
    ToolNotFoundError,
    ToolRegistry,
    ToolShapeError,
    tool,
)

PACKAGES = [
    "agentkit.tools",
    "agentkit.core.policies",
    "agentkit.core.testing",
    "agentkit.core.runtime",
    "agentkit.state.stores",
    "agentkit.tools.declarations",
    "agentkit.tools.files",
    "agentkit.state.memory",
    "agentkit.evals",
]


def test_tools_package_exports_the_tool_contract() -> None:
    exported = set(agentkit.tools.__all__)

    assert {
        "tool",
        "FunctionTool",
        "ToolRegistry",
        "Tool",
        "ToolDefinitionError",
        "ToolArgumentError",
        "ToolShapeError",
        "FrozenDict",
        "ToolNotFoundError",
    } <= exported


def test_tools_package_exports_file_tool_and_its_backends() -> None:
    from agentkit.tools import files

    assert {"FileTool", "FileToolError", "Files", "InMemoryFiles", "LocalFiles", "SQLiteFiles"} <= (
        set(agentkit.tools.__all__)
    )
    assert agentkit.tools.SQLiteFiles is files.SQLiteFiles
    assert agentkit.tools.PostgresFiles is files.PostgresFiles
    assert "PostgresFiles" in agentkit.tools.__all__
    assert typing.Protocol in agentkit.tools.Files.__bases__
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        agentkit.tools.Nope  # noqa: B018


def test_exported_names_are_the_objects_they_claim_to_be() -> None:
    assert callable(tool)
    assert callable(FunctionTool.from_callable)
    assert isinstance(ToolRegistry(), ToolRegistry)
    assert typing.Protocol in Tool.__bases__
    assert issubclass(FrozenDict, dict)
    assert ToolDefinitionError is _ContractsDefinitionError
    for error in (ToolDefinitionError, ToolArgumentError, ToolShapeError, ToolNotFoundError):
        assert issubclass(error, Exception)


def test_definition_error_is_a_value_error() -> None:
    assert issubclass(ToolDefinitionError, ValueError)


def test_tool_shape_error_is_not_output_coercion_error() -> None:
    from agentkit.core.contracts.errors import OutputCoercionError

    assert not issubclass(ToolShapeError, OutputCoercionError)
    assert not issubclass(OutputCoercionError, ToolShapeError)


def test_tool_run_takes_the_widest_useful_mapping() -> None:
    annotation = inspect.signature(Tool.run).parameters["args"].annotation

    assert annotation in ("Mapping[str, Any]", Mapping[str, Any])
    assert inspect.iscoroutinefunction(Tool.run)


def test_min_description_len_lives_in_the_schema_module_and_is_thirty() -> None:
    from agentkit.tools.declarations.schema import _MIN_DESCRIPTION_LEN

    assert _MIN_DESCRIPTION_LEN == 30


def test_schema_module_holds_the_description_rules() -> None:
    from agentkit.tools.declarations import schema

    assert schema.describe_tool("lookup", "Look up a city by its official name.") == (
        "Look up a city by its official name."
    )
    with pytest.raises(ToolDefinitionError):
        schema.describe_tool("lookup", "Look it up.")


def isort_style(name: str) -> tuple[int, list[Any]]:
    """The order ruff's RUF022 keeps ``__all__`` in: CONSTANTS, then Classes, then the rest,
    each group in natural order (``x2`` before ``x10``)."""
    if len(name) > 1 and name.isupper():
        group = 0
    elif name[:1].isupper():
        group = 1
    else:
        group = 2
    return group, [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def test_isort_style_order_is_constants_then_classes_then_the_rest() -> None:
    names = ["tool", "Tool", "LLM", "x10", "DEFAULT_PRICES", "x2", "AuditRecord"]

    assert sorted(names, key=isort_style) == [
        "DEFAULT_PRICES",
        "LLM",
        "AuditRecord",
        "Tool",
        "tool",
        "x2",
        "x10",
    ]


@pytest.mark.parametrize("package", PACKAGES)
def test_package_all_is_sorted(package: str) -> None:
    names = list(importlib.import_module(package).__all__)

    assert names == sorted(names, key=isort_style)
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_name_in_package_all_is_importable(package: str) -> None:
    module = importlib.import_module(package)

    for name in module.__all__:
        assert getattr(module, name) is not None, f"{package}.{name}"
        namespace: dict[str, object] = {}
        exec(f"from {package} import {name}", namespace)
        assert namespace[name] is getattr(module, name)
