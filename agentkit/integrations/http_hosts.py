"""Who may address a server agentkit runs over HTTP: loopback binds, Host and Origin.

Shared by the faces that listen (``agentkit mcp serve``, ``agentkit serve``), so both
judge an address and a request the same way:

* a server bound off loopback refuses to start without authentication (each face words
  the refusal, naming its own flags);
* DNS-rebinding protection: the ``Host`` header must be one of the allowed hosts and a
  browser's ``Origin`` one of the allowed origins. They default to the bound address (a
  loopback bind also accepts its other loopback spellings, ``localhost``, ``127.0.0.1``
  and ``[::1]``, on the same port). A wildcard bind (``0.0.0.0``, ``::``) has no address
  of its own for clients to name, so it needs explicit allowed hosts.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

__all__ = [
    "allowed_hosts", "allowed_origins", "host_refusal", "is_loopback", "is_wildcard",
    "origin_refusal",
]

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP addresses."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    """True for an address that listens on every interface (``0.0.0.0``, ``::``)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def _host_header(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


def allowed_hosts(
    host: str, port: int, given: Sequence[str] | None, *, flag: str, example: str
) -> list[str]:
    """The ``Host`` values a server bound to ``host:port`` accepts: ``given``, or the
    bound address (with its loopback spellings). ValueError for a wildcard bind without
    ``given``, naming ``flag``, the option that gives them, with ``example`` a host."""
    if given is None:
        if is_wildcard(host):
            raise ValueError(
                f"{host!r} listens on every address, so there is no one Host value to "
                f"accept: name the host names clients use, e.g. {flag} "
                f"{example}:{port} (allowed_hosts=[...])"
            )
        names = _LOOPBACK_NAMES if is_loopback(host) else (host,)
        given = [_host_header(name, port) for name in names]
    return list(dict.fromkeys(given))


def allowed_origins(hosts: Sequence[str], given: Sequence[str] | None) -> list[str]:
    """The ``Origin`` values accepted: ``given``, or http and https on each allowed host."""
    if given is None:
        given = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return list(dict.fromkeys(given))


def host_refusal(host: str | None, hosts: Sequence[str]) -> str | None:
    """Why a request with this ``Host`` header is refused (421), or None."""
    if host is None or host not in hosts:
        return f"Host header {host!r} is not one this server answers to: {list(hosts)}"
    return None


def origin_refusal(origin: str | None, origins: Sequence[str]) -> str | None:
    """Why a browser request from this ``Origin`` is refused (403), or None."""
    if origin is not None and origin not in origins:
        return f"Origin {origin!r} may not call this server; allowed origins: {list(origins)}"
    return None
