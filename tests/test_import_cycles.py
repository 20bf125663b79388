"""No import circle anywhere in agentkit/: every import counts, type-only and
function-level ones included, since a module that needs either to dodge a cycle is in
the wrong layer (STYLE.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import agentkit

ROOT = Path(agentkit.__file__).parent

KNOWN: dict[frozenset[str], str] = {}
"""Circles that are known and owned, each with why it exists and what removes it. The
test fails on any other circle, and on a listed one that is gone (so the list shrinks)."""


def _modules() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, set[str]]:
    """Each agentkit module to the agentkit modules it imports, anywhere in its body."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    for alias in node.names
                ]
            for target in targets:
                if not target.startswith("agentkit"):
                    continue
                resolved = _resolve(target, modules)
                if resolved is not None and resolved != name:
                    graph[name].add(resolved)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_no_module_of_agentkit_is_part_of_an_unknown_import_circle() -> None:
    found = cycles(import_graph())
    unknown = [sorted(c) for c in found if c not in KNOWN]
    gone = [sorted(c) for c in KNOWN if c not in found]
    assert (unknown, gone) == ([], [])


def test_the_agent_loop_modules_import_one_another_without_a_circle() -> None:
    """The circle of agent.py, run.py, effects.py, conversation.py and the single-call
    cognition (issue 21) stays broken: the loop's modules only import down."""
    graph = import_graph()
    loop = {"agentkit.agents.agent", "agentkit.agents.run", "agentkit.agents.effects",
            "agentkit.agents.conversation", "agentkit.agents.cognition.single_call",
            "agentkit.agents.lifecycle", "agentkit.agents.decisions",
            "agentkit.agents.outcomes", "agentkit.agents.nested"}
    assert [sorted(c) for c in cycles(graph) if c & loop] == []
    assert "agentkit.agents.agent" not in graph["agentkit.agents.run"]


def test_the_cycle_finder_finds_a_type_only_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [frozenset({"a", "b", "c"})]
