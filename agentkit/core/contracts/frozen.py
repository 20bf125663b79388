"""Deeply frozen argument values.

The arguments a model authored are the arguments that get authorised, audited and
executed. Freezing them at the seam keeps those three the same object: nothing between
approval and execution, the tool body included, can change what was approved.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NoReturn, TypeVar

_K = TypeVar("_K")
_V = TypeVar("_V")


def _refuse(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(
        f"{type(self).__name__} is read-only: the arguments that were authorised are the "
        "arguments that run. Copy with dict(args) to get a mutable shallow copy."
    )


class FrozenDict(dict[_K, _V]):
    """A ``dict`` that refuses mutation; ``dict(frozen)`` is a mutable shallow copy."""

    __slots__ = ()

    __setitem__ = _refuse
    __delitem__ = _refuse
    __ior__ = _refuse
    clear = _refuse
    pop = _refuse
    popitem = _refuse
    setdefault = _refuse
    update = _refuse

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (dict(self),))

    def __copy__(self) -> FrozenDict[_K, _V]:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict[_K, _V]:
        return self


_FROZEN_SCALARS = (str, int, float, bool, bytes, type(None))


def freeze(value: Any) -> Any:
    """Return ``value`` with every dict, list and set inside it replaced by a frozen form.

    Mappings become :class:`FrozenDict`, lists and tuples become tuples, sets become
    frozensets; anything else is returned as it is.
    """
    if isinstance(value, _FROZEN_SCALARS):
        return value
    if isinstance(value, Mapping):
        if type(value) is FrozenDict and _all_frozen(value.values()):
            return value
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    if isinstance(value, set | frozenset):
        return frozenset(freeze(v) for v in value)
    return value


def _all_frozen(values: Iterable[Any]) -> bool:
    for v in values:
        if isinstance(v, _FROZEN_SCALARS):
            continue
        if type(v) is FrozenDict and _all_frozen(v.values()):
            continue
        if type(v) is tuple and _all_frozen(v):
            continue
        return False
    return True


def freeze_arguments(arguments: Mapping[str, Any]) -> FrozenDict[str, Any]:
    """Freeze a tool call's argument object (a JSON object) all the way down."""
    frozen = freeze(arguments)
    assert isinstance(frozen, FrozenDict)
    return frozen
