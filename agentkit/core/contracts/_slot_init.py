"""A faster ``__init__`` for frozen, slotted dataclasses: the same signature, defaults,
factories and ``__post_init__``, each field set through its slot's descriptor.

``@dataclass(frozen=True, slots=True)`` generates an ``__init__`` that sets every field
with ``object.__setattr__(self, name, value)``, since the class's own ``__setattr__``
refuses. That generic path (find the attribute on the type, then set it) made a value
of eight fields five times dearer to build than the same class unfrozen, and a run
builds about twenty-five such values. A slot's member descriptor sets the field
directly and is just as blind to the frozen ``__setattr__``; :func:`slot_init` compiles
an ``__init__`` that calls those descriptors, once per class, after ``dataclass`` made
it. The value stays frozen: only ``__init__`` changes.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

__all__ = ["slot_init"]

T = TypeVar("T")


class _Factory:
    def __repr__(self) -> str:
        return "<factory>"  # as dataclass's own signature shows a field with a factory


_FACTORY: Any = _Factory()


def slot_init(cls: T) -> T:
    """``cls`` (a frozen, slotted dataclass) with the faster ``__init__``; a class with
    an ``InitVar`` or that is not frozen and slotted is refused (``TypeError``)."""
    kind: Any = cls
    params = getattr(kind, "__dataclass_params__", None)
    fields = dataclasses.fields(kind) if params is not None else ()
    if (
        params is None
        or not params.frozen
        or "__slots__" not in vars(kind)
        or len(fields) != len(kind.__dataclass_fields__)  # an InitVar or a ClassVar
    ):
        raise TypeError(f"slot_init takes a frozen, slotted dataclass without InitVar: {cls!r}")
    scope: dict[str, Any] = {"_FACTORY": _FACTORY}
    positional: list[str] = []
    keywords: list[str] = []
    body: list[str] = []
    for index, field in enumerate(fields):
        name = field.name
        scope[f"_set{index}"] = getattr(kind, name).__set__
        has_default = field.default is not dataclasses.MISSING
        factory = field.default_factory
        if has_default:
            scope[f"_default{index}"] = field.default
        if factory is not dataclasses.MISSING:
            scope[f"_factory{index}"] = factory
        if not field.init:
            if has_default:
                body.append(f"_set{index}(self, _default{index})")
            elif factory is not dataclasses.MISSING:
                body.append(f"_set{index}(self, _factory{index}())")
            continue
        if has_default:
            parameter = f"{name}=_default{index}"
        elif factory is not dataclasses.MISSING:
            parameter = f"{name}=_FACTORY"
            body.append(f"if {name} is _FACTORY: {name} = _factory{index}()")
        else:
            parameter = name
        (keywords if field.kw_only else positional).append(parameter)
        body.append(f"_set{index}(self, {name})")
    if hasattr(kind, "__post_init__"):
        body.append("self.__post_init__()")
    signature = ", ".join(["self", *positional, *(["*", *keywords] if keywords else [])])
    source = f"def __init__({signature}) -> None:\n    " + "\n    ".join(body or ["pass"])
    exec(source, scope)
    init = scope["__init__"]
    init.__qualname__ = f"{kind.__qualname__}.__init__"
    init.__module__ = kind.__module__
    init.__doc__ = kind.__init__.__doc__
    kind.__init__ = init
    return cls
