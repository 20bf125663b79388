"""Imports point down the layers: no module of agentkit imports one of a higher layer.

Every import counts, wherever it is written: at module level, inside a function, and
under ``if TYPE_CHECKING:``, since a type-only import upwards is still a dependency a
reader has to follow. The layers, lowest first, are those ``docs/architecture.md`` draws.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "agentkit"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

# Lowest first. A module belongs to the layer of its longest matching prefix.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", ("agentkit.core", "agentkit._examples")),
    ("stores", ("agentkit.state.stores", "agentkit.state.codec", "agentkit.state.owners")),
    ("tools", ("agentkit.tools",)),
    ("state", ("agentkit.state",)),
    ("agents", ("agentkit.agents",)),
    ("providers", ("agentkit.providers",)),
    ("integrations", ("agentkit.integrations",)),
    ("faces", ("agentkit", "agentkit.cli", "agentkit.demo", "agentkit.__main__")),
)

# The package root is loaded by every import of agentkit; the one name it defines
# itself may be read from any layer. Its lazy re-exports may not.
_ANYWHERE = {("agentkit", "__version__")}


@dataclass(frozen=True)
class Upward:
    """One import that runs up the layers."""

    module: str
    line: int
    imported: str
    source_layer: str
    target_layer: str

    def __str__(self) -> str:
        return (
            f"{self.module}:{self.line} imports {self.imported} "
            f"({self.source_layer} -> {self.target_layer})"
        )


def layer_of(module: str) -> tuple[int, str]:
    """The layer's rank and name for ``module``."""
    best: tuple[int, int, str] | None = None
    for rank, (name, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (
                best is None or len(prefix) > best[0]
            ):
                best = (len(prefix), rank, name)
    assert best is not None, f"{module} is in no layer: add it to LAYERS"
    return best[1], best[2]


def _module_name(package: Path, path: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(package: Path, name: str) -> bool:
    base = package.parent.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _imports(package: Path, path: Path, module: str) -> list[tuple[int, str, str | None]]:
    """Every ``(line, module, name)`` imported from agentkit by the file at ``path``."""
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, a.name, None) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                # The package the file is in, then up one more for each extra dot.
                here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                kept = here[: len(here) - node.level + 1]
                base = ".".join([*kept, node.module or ""]).strip(".")
            else:
                base = node.module or ""
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if _is_module(package, sub):
                    found.append((node.lineno, sub, None))
                else:
                    found.append((node.lineno, base, alias.name))
    return [entry for entry in found if entry[1].split(".")[0] == package.name]


def upward_imports(package: Path) -> list[Upward]:
    """Every import under ``package`` whose target is in a higher layer than its module."""
    upward = []
    for path in sorted(package.rglob("*.py")):
        module = _module_name(package, path)
        rank, name = layer_of(module)
        for line, target, attribute in _imports(package, path, module):
            if (target, attribute) in _ANYWHERE:
                continue
            target_rank, target_name = layer_of(target)
            if target_rank > rank:
                shown = target if attribute is None else f"{target}.{attribute}"
                upward.append(Upward(module, line, shown, name, target_name))
    return sorted(upward, key=lambda u: (u.module, u.line, u.imported))


def test_no_module_imports_from_a_higher_layer() -> None:
    assert [str(u) for u in upward_imports(PACKAGE)] == []


def test_the_architecture_page_draws_these_layers_top_down() -> None:
    page = ARCHITECTURE.read_text(encoding="utf-8")
    drawing = re.search(r"## Layers\n.*?```text\n(?P<lines>.*?)```", page, re.DOTALL)
    assert drawing is not None, "docs/architecture.md has no ```text drawing under ## Layers"
    names = [line.split()[0] for line in drawing["lines"].splitlines() if line[:1].strip()]
    assert names == [name for name, _ in reversed(LAYERS)]


def test_an_upward_import_is_found_wherever_it_is_written(tmp_path: Path) -> None:
    package = tmp_path / "agentkit"
    for folder in ("core/contracts", "agents", "state", "tools"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "__init__.py").write_text('__version__ = "0"\n')
    (package / "agents" / "agent.py").write_text("class Agent: ...\n")
    (package / "state" / "sessions.py").write_text("class SessionRecord: ...\n")
    (package / "tools" / "fine.py").write_text(
        "from agentkit.core.contracts import probe\nfrom agentkit import __version__\n"
    )
    (package / "core" / "contracts" / "probe.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from agentkit.agents.agent import Agent\n"
        "if TYPE_CHECKING:\n"
        "    from agentkit.state.sessions import SessionRecord\n"
        "def late():\n"
        "    from ...tools import fine\n"
        "    import agentkit.agents\n"
        "    from agentkit import Agent\n"
    )
    assert [str(u) for u in upward_imports(package)] == [
        "agentkit.core.contracts.probe:2 imports agentkit.agents.agent.Agent (core -> agents)",
        "agentkit.core.contracts.probe:4 imports agentkit.state.sessions.SessionRecord "
        "(core -> state)",
        "agentkit.core.contracts.probe:6 imports agentkit.tools.fine (core -> tools)",
        "agentkit.core.contracts.probe:7 imports agentkit.agents (core -> agents)",
        "agentkit.core.contracts.probe:8 imports agentkit.Agent (core -> faces)",
    ]
