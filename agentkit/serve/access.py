"""Who may use a served agent: bearer tokens, each mapped to a :class:`Principal`.

A request carries ``Authorization: Bearer <token>``. The token is looked up by comparing
its SHA-256 digest with every known token's digest in constant time
(:func:`hmac.compare_digest`), all of them every time, so neither the comparison nor
the lookup tells an attacker how much of a guess was right. A principal reads the runs
of its scopes (``scopes=None``: every scope); a run of another scope is answered 404,
as if it did not exist. Only a principal with ``can_decide`` may decide for a run.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentkit.integrations.http_hosts import is_loopback

__all__ = ["Access", "Principal", "check_exposure", "load_tokens", "operator_tokens"]


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a token speaks for."""

    name: str
    """Shown in the audit of every decision this principal makes."""
    scopes: tuple[str, ...] | None = None
    """The scope keys (``"org7:dom1"``) whose runs it sees; None for every scope."""
    can_decide: bool = True
    """Whether it may approve, reject or answer a run's pending calls."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"Principal(name=...) must be a non-empty string, got {self.name!r}")
        if self.scopes is not None and (
            isinstance(self.scopes, str)
            or not all(isinstance(s, str) and s for s in self.scopes)
        ):
            raise ValueError(
                f"Principal(scopes=...) of {self.name!r} must be a tuple of scope keys "
                f"(\"org7:dom1\") or None for every scope, got {self.scopes!r}"
            )

    def sees(self, scope: str) -> bool:
        """Whether runs of ``scope`` are visible to this principal."""
        return self.scopes is None or scope in self.scopes


LOCAL = Principal("local")
"""The principal of a server without tokens (which only listens on loopback)."""


def _digest(token: str | bytes) -> bytes:
    raw = token.encode("utf-8", "surrogatepass") if isinstance(token, str) else token
    return hashlib.sha256(raw).digest()


class Access:
    """The tokens a server accepts, each with its principal; no tokens means everyone
    who can reach the server is :data:`LOCAL`."""

    def __init__(self, tokens: Mapping[str, Principal] | None) -> None:
        entries: list[tuple[bytes, Principal]] = []
        for token, principal in (tokens or {}).items():
            if not isinstance(token, str) or not token.strip():
                raise ValueError("a bearer token is empty; set it to a long random secret")
            if not isinstance(principal, Principal):
                raise TypeError(
                    f"auth maps each token to a Principal(name, scopes, can_decide), got "
                    f"{type(principal).__name__} for token #{len(entries) + 1}"
                )
            entries.append((_digest(token), principal))
        self._entries = tuple(entries)

    @property
    def required(self) -> bool:
        """Whether requests must carry a token."""
        return bool(self._entries)

    def principal(self, authorization: bytes | None) -> Principal | None:
        """The principal of an ``Authorization`` header value, or None when it names none."""
        if not self._entries:
            return LOCAL
        scheme, _, token = (authorization or b"").partition(b" ")
        given = _digest(token.strip())
        found: Principal | None = None
        for digest, principal in self._entries:  # every entry, found or not
            if hmac.compare_digest(digest, given) and scheme.lower() == b"bearer":
                found = principal
        return found


def check_exposure(host: str, access: Access) -> None:
    """Refuse to serve a non-loopback address without tokens; ValueError saying what to do."""
    if not access.required and not is_loopback(host):
        raise ValueError(
            f"refusing to serve {host!r} without tokens: anyone who can reach it could "
            "start runs and approve their tool calls. Give tokens (--token-env NAME or "
            "--tokens FILE, or create_app(..., auth={token: Principal(...)})), or bind "
            "to 127.0.0.1"
        )


def operator_tokens(token: str) -> dict[str, Principal]:
    """The one principal of ``--token-env``: ``operator``, every scope, may decide."""
    return {token: Principal("operator")}


def load_tokens(path: str | Path) -> dict[str, Principal]:
    """The principals of a tokens file: a JSON object from token to ``{"name", "scopes",
    "can_decide"}``. ValueError naming the file and the entry that is wrong."""
    where = str(path)
    try:
        data: Any = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise ValueError(f"cannot read the tokens file {where}: {error.strerror}") from None
    except ValueError as error:
        raise ValueError(f"the tokens file {where} is not JSON: {error}") from None
    if not isinstance(data, dict) or not data:
        raise ValueError(
            f"the tokens file {where} must hold a non-empty JSON object from token to "
            '{"name": ..., "scopes": [...] or null, "can_decide": true or false}'
        )
    tokens: dict[str, Principal] = {}
    for number, (token, entry) in enumerate(data.items(), start=1):
        what = f"the tokens file {where}, entry #{number}"
        if not token.strip():
            raise ValueError(f"{what}: the token is empty; set it to a long random secret")
        if not isinstance(entry, dict) or set(entry) - {"name", "scopes", "can_decide"}:
            raise ValueError(
                f"{what} must be an object with the keys name, scopes and can_decide, got "
                f"{json.dumps(entry)[:80]}"
            )
        scopes = entry.get("scopes")
        can_decide = entry.get("can_decide", True)
        if not isinstance(can_decide, bool):
            raise ValueError(f"{what}: can_decide must be true or false, got {can_decide!r}")
        if scopes is not None and not isinstance(scopes, list):
            raise ValueError(f"{what}: scopes must be a list of scope keys or null, "
                             f"got {scopes!r}")
        try:
            tokens[token] = Principal(
                entry.get("name"),  # type: ignore[arg-type]  # checked by Principal
                None if scopes is None else tuple(scopes),
                can_decide,
            )
        except ValueError as error:
            raise ValueError(f"{what}: {error}") from None
    return tokens
