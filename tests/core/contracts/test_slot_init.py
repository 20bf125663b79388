"""slot_init: a frozen, slotted dataclass built through its slots' descriptors takes the
same arguments, defaults, factories and ``__post_init__`` as dataclass's own, and stays
frozen."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pytest

from agentkit.core.contracts._slot_init import slot_init


def _pair() -> tuple[type, type]:
    def define() -> type:
        @dataclass(frozen=True, slots=True)
        class Order:
            id: str
            lines: int = 1
            tags: tuple[str, ...] = field(default_factory=tuple)
            note: str = field(default="", kw_only=True)
            seen: int = field(init=False, default=0)
            made: list[int] = field(init=False, default_factory=list)

            def __post_init__(self) -> None:
                object.__setattr__(self, "lines", self.lines * 10)

        return Order

    return define(), slot_init(define())


def test_the_same_values_from_the_same_arguments() -> None:
    plain, fast = _pair()
    for args, kwargs in (((("A-1",)), {}), (("A-1", 2, ("x",)), {"note": "n"}),
                         (("A-1",), {"lines": 3, "tags": ("y",)})):
        assert repr(fast(*args, **kwargs)) == repr(plain(*args, **kwargs)).replace(
            plain.__qualname__, fast.__qualname__)


def test_each_value_gets_its_own_factory_default() -> None:
    _, fast = _pair()
    assert fast("A-1").made is not fast("A-2").made


def test_the_same_errors_for_wrong_arguments() -> None:
    plain, fast = _pair()
    for args, kwargs in (((), {}), (("A-1", 2, (), "n"), {}), (("A-1",), {"seen": 1})):
        with pytest.raises(TypeError):
            plain(*args, **kwargs)
        with pytest.raises(TypeError):
            fast(*args, **kwargs)


def test_values_stay_frozen_and_replace_goes_through_the_faster_init() -> None:
    _, fast = _pair()
    order = fast("A-1", 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        order.id = "A-2"
    assert dataclasses.replace(order, id="A-2").lines == 200  # __post_init__ ran again


def test_anything_but_a_frozen_slotted_dataclass_is_refused() -> None:
    @dataclass(slots=True)
    class Mutable:
        x: int

    with pytest.raises(TypeError, match="slot_init takes a frozen, slotted dataclass"):
        slot_init(Mutable)
