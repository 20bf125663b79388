"""The console's HTML: the page shell, escaping, and the words and figures every page uses.

Pages are built as strings from small functions. Every value a model, a tool or a user
produced goes through :func:`e` (``html.escape`` with quotes) on its way in, so a tool
result ``<script>alert(1)</script>`` is text on the page, never markup. The shell loads
only this package's own CSS and htmx, from ``/static/``; the Content-Security-Policy it
is sent with (see :data:`POLICY`) lets the browser load nothing from anywhere else and
run no inline script.
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Iterable
from typing import Any

from starlette.responses import HTMLResponse

__all__ = [
    "POLICY", "STATUS_WORDS", "duration", "e", "money", "page", "pretty", "status_badge",
    "when",
]

POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
"""Everything from this server, nothing inline, nothing from elsewhere."""

STATUS_WORDS = {
    "complete": "complete",
    "suspended": "suspended",
    "running": "running",
    "error": "failed",
    "cancelled": "cancelled",
    "max_iterations": "stopped: too many steps",
    "budget_exceeded": "stopped: over budget",
}
"""A run's status as the console says it (a failed run's status is ``error``)."""

_HTMX_CONFIG = json.dumps({
    # Without eval, and without the <style> htmx would add inline (the policy refuses
    # both); a 4xx answer is swapped in where the form was, so the reason is shown there.
    "allowEval": False, "includeIndicatorStyles": False, "allowScriptTags": False,
    "responseHandling": [
        {"code": "204", "swap": False},
        {"code": "[23]..", "swap": True},
        {"code": "4..", "swap": True, "error": False},
        {"code": "5..", "swap": False, "error": True},
    ],
})


def e(value: Any) -> str:
    """``value`` as text safe inside an element or a quoted attribute."""
    return html.escape("" if value is None else str(value), quote=True)


def pretty(value: Any) -> str:
    """A JSON-ish value as indented text (escaped)."""
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return e(text)


def when(stamp: float | None) -> str:
    """A time in UTC, to the second."""
    if not stamp:
        return "—"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(stamp)) + " UTC"


def duration(seconds: float | None) -> str:
    """A duration for people: ms under a second, s under a minute, then m s."""
    if seconds is None:
        return "open"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} m {rest} s"


def money(usd: float | None) -> str:
    """US dollars, to a hundredth of a cent."""
    return "—" if usd is None else f"${usd:.4f}"


def status_badge(status: str) -> str:
    """The status in words, in a badge styled by its kind."""
    return f'<span class="status s-{e(status)}">{e(STATUS_WORDS.get(status, status))}</span>'


def _nav(current: str, signed: str | None, csrf: str) -> str:
    links = "".join(
        f'<a href="{href}"{" aria-current=page" if name == current else ""}>{name}</a>'
        for name, href in (("Runs", "/"), ("Inbox", "/inbox"), ("Sessions", "/sessions"),
                           ("Costs", "/costs"))
    )
    who = ""
    if signed is not None:
        who = (f'<form method="post" action="/sign-out" class="who">'
               f'<input type="hidden" name="csrf_token" value="{e(csrf)}">'
               f'<span>signed in as {e(signed)}</span> <button>Sign out</button></form>')
    return f'<nav><strong class="brand">agentkit</strong>{links}{who}</nav>'


def page(title: str, body: str, *, current: str = "", signed: str | None = None,
         csrf: str = "", status: int = 200) -> HTMLResponse:
    """A whole page: the shell, the navigation (``current`` marked) and ``body``."""
    text = (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width, initial-scale=1">'
        f"<title>{e(title)} · agentkit</title>"
        f'<meta name="htmx-config" content="{e(_HTMX_CONFIG)}">'
        '<link rel=stylesheet href="/static/console.css">'
        '<script src="/static/htmx.min.js" defer></script>'
        f'</head><body hx-headers=\'{{"X-CSRF-Token": "{e(csrf)}"}}\'>'
        f"{_nav(current, signed, csrf)}<main>{body}</main></body></html>"
    )
    return fragment(text, status=status)


def fragment(text: str, *, status: int = 200) -> HTMLResponse:
    """Part of a page, for htmx to swap in (or a whole page, from :func:`page`)."""
    return HTMLResponse(text, status, headers={
        "content-security-policy": POLICY, "cache-control": "no-store",
        "x-content-type-options": "nosniff", "referrer-policy": "same-origin",
    })


def table(head: Iterable[str], rows: Iterable[str], *, body_attrs: str = "",
          empty: str = "nothing here") -> str:
    """A table of already-rendered ``<tr>`` rows (``empty`` when there are none)."""
    cells = "".join(f"<th>{e(h)}</th>" for h in head)
    rendered = "".join(rows)
    if not rendered:
        rendered = f'<tr><td colspan="99" class="empty">{e(empty)}</td></tr>'
    return f"<table><thead><tr>{cells}</tr></thead><tbody {body_attrs}>{rendered}</tbody></table>"
