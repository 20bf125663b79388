"""The ASCII hosts an HTTP client would connect to for a URL's host, however it is spelled.

Clients disagree on how a Unicode host becomes the name they resolve. urllib and the
``socket`` module use the stdlib IDNA 2003 codec (nameprep: NFKC, case folding, soft
hyphens and zero-width characters dropped). httpx uses the ``idna`` package's IDNA 2008,
which keeps ``ß`` (``straße.de`` is ``xn--strae-oqa.de``, where IDNA 2003 gives
``strasse.de``); requests and aiohttp add UTS 46 mapping to it. All of them split labels
at the Unicode full stops ``。．｡``. So ``0x7f。1`` reaches 127.0.0.1 through httpx and
``0x7f\\u00ad.1`` through urllib.

A check that reads one of these forms lets the others through, so :func:`client_hosts`
returns every form a client could derive, and the caller judges each one. The ``idna``
package is imported only when it is installed; when it is not, neither is any client
that would use it.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["ascii_name", "client_hosts"]

_DOTS = re.compile("[\u3002\uff0e\uff61]")
# Unicode's Default_Ignorable_Code_Point set: invisible, and dropped by IDNA mappings.
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)


def _mapped(host: str) -> str:
    """NFKC, Unicode full stops as ".", ignorable code points removed, lower case."""
    text = _DOTS.sub(".", unicodedata.normalize("NFKC", host))
    return _IGNORABLE.sub("", text).lower()


def _stdlib_idna(host: str) -> str | None:
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return None


def _idna_installed() -> bool:
    try:
        import idna  # noqa: F401
    except ImportError:
        return False
    return True


def _idna2008(host: str, *, uts46: bool) -> str | None:
    try:
        import idna
    except ImportError:
        return None
    try:
        encoded: bytes = idna.encode(host if uts46 else host.lower(), uts46=uts46)
    except (idna.IDNAError, UnicodeError, ValueError):
        return None
    return encoded.decode("ascii")


def _punycode(host: str) -> str | None:
    labels = []
    for label in host.split("."):
        if label.isascii():
            labels.append(label)
        else:
            try:
                labels.append("xn--" + label.encode("punycode").decode("ascii"))
            except UnicodeError:
                return None
    return ".".join(labels)


def _clean(form: str) -> str:
    return form.rstrip(".").lower()


def client_hosts(host: str) -> tuple[str, ...]:
    """Every ASCII host a client could resolve for ``host``; empty when none could.

    An ASCII host is its own only form. For any other the forms are: the host after
    NFKC, full-stop and ignorable mapping, when that is ASCII (it is how a numeric
    spelling disguised with fullwidth digits or invisible characters is seen for what
    it is); the stdlib IDNA 2003 encoding; and the IDNA 2008 encodings with and without
    UTS 46 mapping (a Punycode encoding of the mapped host when ``idna`` is absent).
    """
    if host.isascii():
        return (_clean(host),)
    forms: list[str] = []
    mapped = _mapped(host)
    candidates = [mapped if mapped.isascii() else None, _stdlib_idna(host)]
    if _idna_installed():
        candidates += [_idna2008(host, uts46=False), _idna2008(host, uts46=True)]
    elif not mapped.isascii():
        candidates.append(_punycode(mapped))
    for candidate in candidates:
        if candidate is not None and _clean(candidate) not in forms:
            forms.append(_clean(candidate))
    return tuple(forms)


def ascii_name(name: str) -> str | None:
    """``name`` as the A-label host a current client resolves (IDNA 2008 with UTS 46
    mapping, or IDNA 2003 without the ``idna`` package); None when it is not a name."""
    if name.isascii():
        return _clean(name)
    form = _idna2008(name, uts46=True)
    if form is None:
        form = _stdlib_idna(name)
    return None if form is None else _clean(form)
