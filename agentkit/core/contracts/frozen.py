"""Deeply frozen argument values.

The arguments a model authored are the arguments that get authorised, audited and
executed. Freezing them at the seam keeps those three the same object: nothing between
approval and execution, the tool body included, can change what was approved.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
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
_DEEP = 100  # levels freeze() recurses through before it continues with an explicit stack


def freeze(value: Any, _depth: int = 0) -> Any:
    """Return ``value`` with every dict, list and set inside it replaced by a frozen form.

    Mappings become :class:`FrozenDict`, lists and tuples become tuples, sets become
    frozensets; anything else is returned as it is. Any depth ``json.loads`` accepts is
    handled: past a hundred levels the walk uses an explicit stack, not recursion
    (``_depth`` counts the levels; it is not for callers).
    """
    if isinstance(value, _FROZEN_SCALARS):
        return value
    if _depth > _DEEP:
        return _rebuild(value, _FROZEN_FORMS)
    depth = _depth + 1
    if isinstance(value, Mapping):
        if type(value) is FrozenDict and _all_frozen(value.values()):
            return value
        return FrozenDict({k: freeze(v, depth) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple([freeze(v, depth) for v in value])
    if isinstance(value, set | frozenset):
        return frozenset([freeze(v, depth) for v in value])
    return value


def thaw(value: Any) -> Any:
    """Plain dicts and lists from frozen ones, for libraries that want JSON-shaped input.

    Sets are left as they are. Like :func:`freeze`, any nesting depth is handled.
    """
    return _thaw(value, 0)


def _thaw(value: Any, depth: int) -> Any:
    if depth > _DEEP:
        return _rebuild(value, _PLAIN_FORMS)
    if isinstance(value, Mapping):
        return {k: _thaw(v, depth + 1) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_thaw(v, depth + 1) for v in value]
    return value


_Forms = tuple[Callable[[Any], Any], Callable[[Any], Any], Callable[[Any], Any] | None]
_FROZEN_FORMS: _Forms = (FrozenDict, tuple, frozenset)
_PLAIN_FORMS: _Forms = (dict, list, None)  # thaw() leaves sets alone
_END: Any = object()


def _rebuild(value: Any, forms: _Forms) -> Any:
    """``value`` with its mappings, sequences and sets rebuilt by ``forms``, without
    recursion, so no nesting depth can exhaust the stack."""
    mapping, sequence, collection = forms
    # Each frame: the container being rebuilt, an iterator over its items, the items
    # rebuilt so far, and (for a mapping) the key whose value is being rebuilt.
    frames: list[list[Any]] = []
    node = value
    while True:
        if isinstance(node, Mapping):
            frames.append([mapping, iter(node.items()), [], None])
        elif isinstance(node, list | tuple):
            frames.append([sequence, iter(node), [], _END])
        elif collection is not None and isinstance(node, set | frozenset):
            frames.append([collection, iter(node), [], _END])
        else:
            if not frames:
                return node
            frame = frames[-1]
            frame[2].append(node if frame[3] is _END else (frame[3], node))
        while True:
            frame = frames[-1]
            item = next(frame[1], _END)
            if item is not _END:
                if frame[3] is not _END:
                    frame[3], node = item
                else:
                    node = item
                break
            frames.pop()
            built = frame[0](frame[2])
            if not frames:
                return built
            parent = frames[-1]
            parent[2].append(built if parent[3] is _END else (parent[3], built))


def _all_frozen(values: Iterable[Any], depth: int = 0) -> bool:
    if depth > _DEEP:
        return False  # too deep to confirm without recursion: rebuild instead
    for v in values:
        if isinstance(v, _FROZEN_SCALARS):
            continue
        if type(v) is FrozenDict and _all_frozen(v.values(), depth + 1):
            continue
        if type(v) is tuple and _all_frozen(v, depth + 1):
            continue
        return False
    return True


def freeze_arguments(arguments: Mapping[str, Any]) -> FrozenDict[str, Any]:
    """Freeze a tool call's argument object (a JSON object) all the way down."""
    if type(arguments) is FrozenDict and _all_frozen(arguments.values()):
        return arguments  # frozen already: a call's arguments handed on to its request
    frozen = freeze(arguments)
    assert isinstance(frozen, FrozenDict)
    return frozen
