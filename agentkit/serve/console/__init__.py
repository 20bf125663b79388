"""The console: agentkit's runs, traces, costs and one approval inbox, in a browser.

``create_app`` mounts it at ``/`` beside the JSON API (``console=False`` leaves it out).
Pages are rendered on the server from :class:`~agentkit.serve.runs.ServedRuns` and the
store's run registry, the same calls the API makes; decisions go through
``ServedRuns.decide``, so a decision in the browser is checked, routed, recorded and
refused exactly as one over HTTP. Pages read with JavaScript off; htmx (vendored, see
``static/htmx.LICENSE``) adds live updates and in-place buttons. See ``docs/console.md``.
"""

from __future__ import annotations

from typing import Any

from agentkit.serve.access import Access
from agentkit.serve.runs import ServedRuns

__all__ = ["console_paths", "console_routes"]

_EXACT = frozenset({"/", "/inbox", "/sessions", "/costs", "/sign-in", "/sign-out"})
_UNDER = ("/runs/", "/inbox/", "/sessions/", "/static/")


def console_paths(path: str) -> bool:
    """Whether ``path`` is the console's: it signs browsers in itself, by cookie."""
    return path in _EXACT or path.startswith(_UNDER)


def console_routes(access: Access, runs: ServedRuns) -> list[Any]:
    """The console's Starlette routes over ``runs``, signing browsers in against
    ``access``."""
    from agentkit.serve.console._routes import routes

    return routes(access, runs)
