"""Reading a remote agent's card: where it is, which interface to call, how to sign in.

The client speaks A2A 1.0's JSON-RPC binding with a bearer token or no credentials, so a
card is usable when it lists a ``JSONRPC`` interface of protocol 1.x (a card of the 0.3
form, ``url`` plus ``preferredTransport``, is read as such an interface only when its
``protocolVersion`` says 1.x) and asks for no security, or lets a bearer token satisfy
one of its requirements. Every URL, the card's and the interface's, passes the egress
check before it is fetched or called.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from agentkit.core.policies.egress import check_url
from agentkit.integrations.a2a.errors import A2ACardError
from agentkit.integrations.a2a.protocol import CARD_PATH

__all__ = ["Egress", "RemoteCard", "card_location", "egress_of", "read_card"]


@dataclass(frozen=True, slots=True)
class Egress:
    """The URL checks every outbound request of the client passes."""

    allow_hosts: tuple[str, ...] | None = None
    """Only these hosts (as ``egress(allow_hosts=...)``), or None for any public host."""
    private_hosts: tuple[str, ...] = ()
    """Internal hosts admitted by name (as ``egress(private_hosts=...)``)."""

    def check(self, url: str, what: str, card: str | None = None) -> None:
        """Raise :class:`A2ACardError` when ``url`` (named in the card at ``card``, if
        it is not the card's own) may not be called."""
        why = check_url(url, self.allow_hosts, private_hosts=self.private_hosts)
        if why is not None:
            shown = "" if card is None else f" {url}"
            raise A2ACardError(card or url, f"the {what} URL{shown} is refused by the egress "
                               f"check: {why}"
                               " (a peer on an internal host is admitted by name with "
                               "A2AAgent(..., private_hosts=[...]))")


@dataclass(frozen=True, slots=True)
class RemoteCard:
    """What the client uses of a card."""

    name: str
    """The agent's name."""
    description: str
    """What it does, for the model choosing the tool."""
    endpoint: str
    """The JSON-RPC URL."""
    streaming: bool
    """Whether it streams (``SendStreamingMessage``)."""
    bearer: bool
    """Whether every request needs the bearer token."""


def card_location(url: str) -> str:
    """The card's URL for ``url``: the agent's base URL, or the card URL itself."""
    path = urlsplit(url).path
    if path.endswith(".json"):
        return url
    return url.rstrip("/") + CARD_PATH


def _major(version: Any) -> int | None:
    text = str(version or "").strip()
    head = text.split(".", 1)[0]
    return int(head) if head.isdigit() else None


def _interfaces(card: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    listed = card.get("supportedInterfaces")
    if isinstance(listed, list):
        return [i for i in listed if isinstance(i, Mapping)]
    if isinstance(card.get("url"), str):  # the 0.3 form: one main interface
        return [{"url": card["url"], "protocolBinding": card.get("preferredTransport",
                                                                 "JSONRPC"),
                 "protocolVersion": card.get("protocolVersion", "0.3")}]
    return []


def _endpoint(card: Mapping[str, Any], where: str) -> str:
    interfaces = _interfaces(card)
    for interface in interfaces:
        version = _major(interface.get("protocolVersion"))
        if interface.get("protocolBinding") == "JSONRPC" and version in (1, None) and \
                isinstance(interface.get("url"), str):
            return str(interface["url"])
    offered = [(i.get("protocolBinding"), i.get("protocolVersion")) for i in interfaces]
    raise A2ACardError(where, f"it offers no transport this client speaks (JSONRPC, "
                       f"protocol 1.x); it offers {offered}")


def _bearer(card: Mapping[str, Any], where: str, token: str | None) -> bool:
    """Whether requests carry the token; A2ACardError when the card's security cannot be
    satisfied by a bearer token (or by none, without one)."""
    schemes = card.get("securitySchemes") or {}
    requirements = card.get("securityRequirements") or []
    if not isinstance(schemes, Mapping) or not isinstance(requirements, list):
        raise A2ACardError(where, "its securitySchemes must be an object and its "
                           "securityRequirements a list")
    if not requirements:
        return token is not None
    bearer_names = {name for name, scheme in schemes.items() if _is_bearer(scheme)}
    for requirement in requirements:
        named = requirement.get("schemes") if isinstance(requirement, Mapping) else None
        if isinstance(named, Mapping) and named and set(named) <= bearer_names:
            if token is None:
                raise A2ACardError(where, f"the agent requires a bearer token (security "
                                   f"scheme {sorted(named)}): pass A2AAgent(..., token=...)")
            return True
    kinds = sorted({next(iter(s), "?") if isinstance(s, Mapping) else "?"
                    for s in schemes.values()})
    raise A2ACardError(where, f"its security schemes {kinds} cannot be satisfied: this "
                       "client signs in with an HTTP bearer token only")


def _is_bearer(scheme: Any) -> bool:
    if not isinstance(scheme, Mapping):
        return False
    http = scheme.get("httpAuthSecurityScheme")
    if not isinstance(http, Mapping) and scheme.get("type") == "http":  # the 0.3 form
        http = scheme
    return isinstance(http, Mapping) and str(http.get("scheme", "")).lower() == "bearer"


def read_card(data: Any, where: str, token: str | None, egress: Egress,
              name: str | None = None) -> RemoteCard:
    """The usable parts of the card ``data`` fetched from ``where``."""
    if not isinstance(data, Mapping):
        raise A2ACardError(where, f"the card is not a JSON object (got {type(data).__name__})")
    endpoint = _endpoint(data, where)
    egress.check(endpoint, "card's interface", where)
    bearer = _bearer(data, where, token)
    card_name = data.get("name")
    if name is None and not (isinstance(card_name, str) and card_name):
        raise A2ACardError(where, "the card has no name; pass A2AAgent(..., name=...)")
    capabilities = data.get("capabilities")
    streaming = isinstance(capabilities, Mapping) and capabilities.get("streaming") is True
    description = data.get("description")
    return RemoteCard(name=name or str(card_name), endpoint=endpoint, streaming=streaming,
                      bearer=bearer,
                      description=description if isinstance(description, str) and description
                      else f"The remote A2A agent {name or card_name!r}.")


def egress_of(allow_hosts: Iterable[str] | None, private_hosts: Iterable[str]) -> Egress:
    """The client's egress checks, their entries validated at once."""
    made = Egress(None if allow_hosts is None else tuple(allow_hosts), tuple(private_hosts))
    check_url("https://example.com/", made.allow_hosts, private_hosts=made.private_hosts)
    return made
