"""agentkit: a framework for AI agents whose tools say exactly what they do.

The top-level package stays tiny so ``import agentkit`` is cheap; import what you use
from its subpackages (``agentkit.tools``, ``agentkit.agents``, ``agentkit.core``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["__version__", "make_ctx"]

if TYPE_CHECKING:
    from agentkit.core.assembly import make_ctx


def __getattr__(name: str) -> Any:
    if name == "make_ctx":
        from agentkit.core.assembly import make_ctx

        return make_ctx
    raise AttributeError(f"module 'agentkit' has no attribute {name!r}")
