"""egress(): keep tools that fetch URLs away from internal addresses.

A tool declares where its URLs are (``@tool(..., url_arg="url")``, a dotted path such
as ``"request.url"``, or several). Before it runs, each URL must be http(s), name a
host, and the host must not be loopback, private, link-local, reserved, multicast or
otherwise non-global in any spelling an HTTP client would accept: dotted, decimal
(``2130706433``), hex (``0x7f.1``), octal (``0177.0.0.1``), short (``127.1``), IPv6,
IPv4-mapped or -embedded IPv6, or a ``localhost`` name. The host is judged in every form
a client could derive from it (Unicode full stops, fullwidth characters and invisible
code points included; see ``_hosts``). With an allowlist, each kind of client must
reach, for the URL, a host it reaches for a listed name: an entry may be spelled in
Unicode or as ``xn--`` labels, and the URL's host either way.

The check reads the URL text; it does not resolve names (so it cannot see a public
name that a DNS server points at a private address). Pass ``resolve=True`` to also
resolve the host and refuse when any address it resolves to is internal.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from agentkit.core.contracts._quote import cut
from agentkit.core.contracts.errors import EgressRefused
from agentkit.core.contracts.ports import Context
from agentkit.core.contracts.types import ToolRequest
from agentkit.core.policies._hosts import ascii_name, client_hosts, client_readings, spellings

if TYPE_CHECKING:
    pass

__all__ = ["check_url", "egress"]

_HOSTNAME = re.compile(r"^[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*$")
_LOCAL_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_SHOWN = 200  # the most of a URL or host an error message quotes

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _as_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The address an HTTP client would reach for a numeric IPv4 spelling, if it is one."""
    if not re.fullmatch(r"[0-9a-fx.]+", host):
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))  # decimal, hex, octal, short
    except OSError:
        return None


def _internal(address: IPAddress) -> str | None:
    """Why ``address`` is internal, or None when it is a public unicast address."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is None and address.teredo is not None:
            embedded = address.teredo[1]
        if embedded is not None:
            why = _internal(embedded)
            if why is not None:
                return f"{why} (embedded in {address})"
    for label, flagged in (
        ("loopback", address.is_loopback),
        ("private", address.is_private),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("unspecified", address.is_unspecified),
        ("reserved", address.is_reserved),
    ):
        if flagged:
            return f"{address} is a {label} address"
    if not address.is_global:
        return f"{address} is not a public address"
    return None


def _allowed(host: str, allow: Iterable[str]) -> bool:
    for entry in allow:
        if entry.startswith("*."):
            if host.endswith(entry[1:]) and host != entry[2:]:
                return True
        elif host == entry:
            return True
    return False


@dataclass(frozen=True, slots=True)
class _Allowlist:
    """Allowlist entries as each kind of client resolves them."""

    shown: tuple[str, ...]
    """The entries as A-label hosts, for messages."""
    by_reading: tuple[tuple[str, ...], ...]
    """Per slot of ``client_readings``: the hosts (``*.`` patterns kept) that kind of
    client reaches for an entry, in either of its spellings."""


def _allow_entries(allow_hosts: Iterable[str], what: str = "allow_hosts") -> _Allowlist:
    """The allowlist, checked: each entry must be a host name or an IP address."""
    shown: list[str] = []
    by_reading: list[list[str]] = [[] for _ in client_readings("a")]
    for raw in allow_hosts:
        text = str(raw).strip()
        wildcard = text.startswith("*.")
        written = text[2:] if wildcard else text
        name = ascii_name(written)
        if not name or not (_HOSTNAME.match(name) or (not wildcard and _is_address(name))):
            raise ValueError(
                f"egress(): {what} entry {_shown(text)} is not a host name; give names "
                "such as 'api.example.com' or '*.example.com'"
            )
        prefix = "*." if wildcard else ""
        shown.append(prefix + name)
        for spelling in spellings(written):
            for slot, reading in enumerate(client_readings(spelling)):
                if reading is not None and prefix + reading not in by_reading[slot]:
                    by_reading[slot].append(prefix + reading)
    return _Allowlist(tuple(shown), tuple(tuple(hosts) for hosts in by_reading))


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _shown(text: str) -> str:
    """``repr(text)``, cut to a length an error message can carry."""
    return repr(cut(text, _SHOWN))


def _name_problem(host: str, raw: str) -> str | None:
    """Why the ASCII host ``host`` (spelled ``raw`` in the URL) is not fetchable."""
    address: IPAddress | None
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = _as_ipv4(host)
    if address is not None:
        return _internal(address)
    if not _HOSTNAME.match(host):
        return f"host {_shown(raw)} is not a valid name"
    if host in _LOCAL_NAMES or host.endswith(".localhost") or host.endswith(".local"):
        return f"{_cut(host)} names this machine or the local network"
    if re.fullmatch(r"[0-9.]+", host):
        return f"host {_shown(raw)} is not a valid address"
    return None


def _vet(
    url: Any, allow: _Allowlist | None, private: _Allowlist | None = None
) -> tuple[str | None, tuple[str, ...]]:
    """Why ``url`` may not be fetched (or None), and the hosts a client would resolve
    (none for a host named in ``private``, which is not judged further)."""
    if not isinstance(url, str):
        return f"expected a URL string, got {type(url).__name__}", ()
    if any(c in url for c in "\\\x00\t\r\n ") or any(ord(c) < 32 for c in url):
        return "the URL contains whitespace, control characters or backslashes", ()
    try:
        parts = urlsplit(url)
        raw_host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError as exc:
        return f"the URL does not parse: {_cut(str(exc))}", ()
    if parts.scheme not in ("http", "https"):
        return f"scheme {_shown(parts.scheme)} is not allowed; only http and https are", ()
    if not raw_host:
        return "the URL names no host", ()
    host = raw_host
    if "%" in host and ":" in host:
        host = host.split("%", 1)[0]  # an IPv6 zone id
    forms = client_hosts(host)
    if not forms:
        return (
            f"host {_shown(raw_host)} is not a valid name: no HTTP client can map it to an "
            "ASCII host of letters, digits and hyphens"
        ), ()
    if private is not None and _off_list(host, raw_host, private) is None:
        # Named on purpose as a peer inside the network: admitted, whatever its address.
        return None, ()
    for form in forms:
        why = _name_problem(form, raw_host)
        if why is not None:
            return why, forms
    if allow is not None:
        return _off_list(host, raw_host, allow), forms
    return None, forms


def _off_list(host: str, raw_host: str, allow: _Allowlist) -> str | None:
    """Why ``host`` is not on ``allow`` for some kind of client, or None when it is."""
    listed = list(allow.shown)
    for reading, hosts in zip(client_readings(host), allow.by_reading, strict=True):
        if reading is not None and not _allowed(reading, hosts):
            if reading == raw_host.rstrip(".").lower():
                return f"host {_shown(reading)} is not on the allowlist {listed}"
            return (
                f"host {_shown(raw_host)} resolves as {_shown(reading)}, which is not on "
                f"the allowlist {listed}"
            )
    return None


def _cut(text: str) -> str:
    return cut(text, _SHOWN)


def check_url(
    url: Any, allow_hosts: Iterable[str] | None = None, *, private_hosts: Iterable[str] = ()
) -> str | None:
    """Why ``url`` may not be fetched, or None when it may. Reads the text only.

    The host is judged in every form an HTTP client could resolve it as (see
    :mod:`agentkit.core.policies._hosts`); with ``allow_hosts``, each kind of client
    must reach a host it reaches for a listed name (in its Unicode or ``xn--``
    spelling). ``private_hosts`` names hosts admitted although they are loopback,
    private or local (peers inside a company network: ``"agents.corp.internal"``,
    ``"10.0.0.7"``, ``"127.0.0.1"``), judged as an allowlist is; a host named there
    passes the allowlist too.
    """
    allow = None if allow_hosts is None else _allow_entries(allow_hosts)
    return _vet(url, allow, _private_entries(private_hosts))[0]


def _private_entries(private_hosts: Iterable[str]) -> _Allowlist | None:
    if isinstance(private_hosts, str):
        raise ValueError(f"egress(): private_hosts must be a list of host names, got the "
                         f"string {_shown(private_hosts)}; write [{_shown(private_hosts)}]")
    entries = list(private_hosts)
    return _allow_entries(entries, what="private_hosts") if entries else None


async def _resolved_problem(forms: tuple[str, ...]) -> str | None:
    for host in forms:
        try:
            infos = await asyncio.to_thread(socket.getaddrinfo, host, None)
        except OSError as exc:
            return f"host {_shown(host)} does not resolve: {exc}"
        for info in infos:
            raw = str(info[4][0]).split("%", 1)[0]
            why = _internal(ipaddress.ip_address(raw))
            if why is not None:
                return f"{_cut(host)} resolves to {why}"
    return None


def egress(
    allow_hosts: Iterable[str] | None = None, *, resolve: bool = False,
    private_hosts: Iterable[str] = (),
) -> _Egress:
    """Refuse, before the tool runs, a URL argument that points anywhere internal, or
    (with ``allow_hosts``; ``*.example.com`` matches subdomains) anywhere not listed.
    ``private_hosts`` admits the hosts it names although they are internal (see
    :func:`check_url`); nothing else internal is admitted.

    Applies to tools whose traits name URL arguments (``url_paths``, from ``url_arg``:
    one argument, a dotted path into a structured argument, or several). The refusal is an
    :class:`~agentkit.core.contracts.errors.EgressRefused`, which the agent loop hands
    back to the model as a tool error; it is never retried. Raises ValueError for an
    allowlist entry that is not a host name.
    """
    allow = None if allow_hosts is None else _allow_entries(allow_hosts)
    return _Egress(allow, resolve, _private_entries(private_hosts))


_ABSENT: Any = object()


def _field(value: Any, key: str) -> Any:
    """``value[key]`` for a JSON object, the field ``key`` of a structured value passed
    as an instance, or _ABSENT."""
    if isinstance(value, Mapping):
        return value.get(key, _ABSENT)
    if isinstance(value, str | int | float | tuple | list):
        return _ABSENT
    found = getattr(value, key, _ABSENT)
    if found is _ABSENT:  # a Pydantic model instance, addressed by a field's alias
        for name, info in (getattr(type(value), "model_fields", None) or {}).items():
            if getattr(info, "alias", None) == key:
                return getattr(value, name, _ABSENT)
    return found


def _urls_at(value: Any, path: tuple[str, ...]) -> list[Any]:
    """The URL values at ``path``: none where it is absent or null (the tool's own
    argument check reports a missing required one); an array on the way, or at the
    end, gives each of its items."""
    found: list[Any] = []
    pending = [(value, 0)]
    while pending:
        value, step = pending.pop()
        if isinstance(value, tuple | list):
            pending.extend((item, step) for item in reversed(value))
        elif step == len(path):
            if value is not None:
                found.append(value)
        else:
            value = _field(value, path[step])
            if value is not _ABSENT and value is not None:
                pending.append((value, step + 1))
    return found


class _Egress:
    __slots__ = ("_allow", "_private", "_resolve")

    def __init__(self, allow: _Allowlist | None, resolve: bool,
                 private: _Allowlist | None = None) -> None:
        self._allow = allow
        self._resolve = resolve
        self._private = private

    async def __call__(self, request: Any, ctx: Context, call_next: Any) -> Any:
        if not isinstance(request, ToolRequest):
            return await call_next(request, ctx)
        for path in request.traits.url_paths:
            for url in _urls_at(request.arguments, path):
                why, forms = _vet(url, self._allow, self._private)
                if why is None and self._resolve and forms:
                    why = await _resolved_problem(forms)
                if why is not None:
                    request.meta["egress"] = "refused"
                    raise EgressRefused(request.name, ".".join(path), str(url), why)
        return await call_next(request, ctx)

    def __repr__(self) -> str:
        shown = None if self._allow is None else self._allow.shown
        private = () if self._private is None else self._private.shown
        return f"egress(allow_hosts={shown!r}, resolve={self._resolve}, private_hosts={private!r})"
