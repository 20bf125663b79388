"""MaxLength(), Denylist() and Tripwire values."""

from __future__ import annotations

import re

import pytest

from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.guardrails import Denylist, MaxLength, Tripwire


def test_max_length_counts_every_string_of_the_value() -> None:
    check = MaxLength(10)
    assert check("0123456789") is None
    assert check({"a": "012345", "b": ["6789", "x"]}) == Tripwire(
        "11 characters, more than the 10 allowed", {"length": 11, "limit": 10}
    )


def test_denylist_matches_words_case_insensitively_and_patterns_as_given() -> None:
    check = Denylist(["drop table", re.compile(r"rm -rf\s+/")])
    assert check("please DROP TABLE users") == Tripwire(
        "denied pattern(s) found: ['drop table']", {"matched": ["drop table"]}
    )
    assert check("run rm -rf  / now") == Tripwire(
        "denied pattern(s) found: ['rm -rf\\\\s+/']", {"matched": [r"rm -rf\s+/"]}
    )
    assert check("droptable and backdrop tables") is None


def test_tripwire_info_is_frozen_and_reason_required() -> None:
    trip = Tripwire("why", {"found": {"a": 1}})
    assert isinstance(trip.info, FrozenDict)
    with pytest.raises(ValueError) as empty:
        Tripwire("")
    assert str(empty.value) == "Tripwire.reason must be a non-empty string, got ''"


def test_bad_arguments_say_what_is_accepted() -> None:
    with pytest.raises(ValueError) as length:
        MaxLength(0)
    assert str(length.value) == "MaxLength(chars) takes a positive int, got 0"
    with pytest.raises(ValueError) as patterns:
        Denylist([""])
    assert str(patterns.value) == (
        "Denylist(patterns) takes non-empty strings or compiled re.Pattern objects, got ['']"
    )
