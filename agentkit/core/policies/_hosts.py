"""The ASCII hosts an HTTP client would connect to for a URL's host, however it is spelled.

Clients disagree on how a Unicode host becomes the name they resolve. urllib and the
``socket`` module use the stdlib IDNA 2003 codec (nameprep: NFKC, case folding, soft
hyphens and zero-width characters dropped). httpx uses the ``idna`` package's IDNA 2008,
which keeps ``ß`` (``straße.de`` is ``xn--strae-oqa.de``, where IDNA 2003 gives
``strasse.de``); requests and aiohttp add UTS 46 mapping to it. All of them split labels
at the Unicode full stops ``。．｡``. So ``0x7f。1`` reaches 127.0.0.1 through httpx and
``0x7f\\u00ad.1`` through urllib.

A check that reads one of these forms lets the others through, so :func:`client_hosts`
returns every form a client could derive, and the caller judges each one. An allowlist
compares hosts reading by reading (:func:`client_readings`): a URL's host passes when
each kind of client reaches, for it, a host that same kind of client reaches for a
listed name, whichever spelling (Unicode or ``xn--``) the list uses (:func:`spellings`).
The ``idna`` package is imported only when it is installed; when it is not, neither is
any client that would use it.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["ascii_name", "client_hosts", "client_readings", "spellings"]

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


def client_readings(host: str) -> tuple[str | None, ...]:
    """The ASCII host each kind of client resolves for ``host``, one slot per kind in a
    fixed order; None where that kind cannot map it.

    The slots: the host after NFKC, full-stop and ignorable mapping, when that is ASCII
    (how a numeric spelling disguised with fullwidth digits or invisible characters is
    seen for what it is); the stdlib IDNA 2003 encoding (urllib, ``socket``); IDNA 2008
    (httpx); IDNA 2008 with UTS 46 mapping (requests, aiohttp), or a Punycode encoding
    of the mapped host when ``idna`` is absent. An ASCII host is its own reading in
    every slot.
    """
    if host.isascii():
        return (_clean(host),) * 4
    mapped = _mapped(host)
    readings = [mapped if mapped.isascii() else None, _stdlib_idna(host)]
    if _idna_installed():
        readings += [_idna2008(host, uts46=False), _idna2008(host, uts46=True)]
    else:
        readings += [None, None if mapped.isascii() else _punycode(mapped)]
    return tuple(None if reading is None else _clean(reading) for reading in readings)


def client_hosts(host: str) -> tuple[str, ...]:
    """Every ASCII host a client could resolve for ``host`` (the distinct
    :func:`client_readings`, in order); empty when none could."""
    forms: list[str] = []
    for reading in client_readings(host):
        if reading is not None and reading not in forms:
            forms.append(reading)
    return tuple(forms)


def spellings(name: str) -> tuple[str, ...]:
    """``name`` as written and in its other spelling: the Unicode name its ``xn--``
    labels encode, or the A-label host a Unicode name is resolved as."""
    found = [name]
    other = ascii_name(name)
    if other is not None and other not in found:
        found.append(other)
    decoded = _unicode_labels(other if other is not None else name)
    if decoded is not None and decoded not in found:
        found.append(decoded)
    return tuple(found)


def _unicode_labels(name: str) -> str | None:
    """``name`` with each ``xn--`` label decoded from Punycode; None when it has no such
    label, or one does not decode."""
    labels = name.split(".")
    if not any(label.startswith("xn--") for label in labels):
        return None
    decoded = []
    for label in labels:
        if label.startswith("xn--"):
            try:
                decoded.append(label[4:].encode("ascii").decode("punycode"))
            except UnicodeError:
                return None
        else:
            decoded.append(label)
    return ".".join(decoded)


def ascii_name(name: str) -> str | None:
    """``name`` as the A-label host a current client resolves (IDNA 2008 with UTS 46
    mapping, or IDNA 2003 without the ``idna`` package); None when it is not a name."""
    if name.isascii():
        return _clean(name)
    form = _idna2008(name, uts46=True)
    if form is None:
        form = _stdlib_idna(name)
    return None if form is None else _clean(form)
