"""PII(): checksummed cards and IBANs, shaped phones, SSNs, emails; block and redact."""

from __future__ import annotations

import pytest

from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.guardrails import PII, Tripwire, iban_valid, luhn_valid


@pytest.mark.parametrize(("number", "valid"), [
    ("4111111111111111", True),
    ("5555555555554444", True),
    ("378282246310005", True),
    ("4111111111111112", False),
    ("1234567812345678", False),
])
def test_luhn(number: str, valid: bool) -> None:
    assert luhn_valid(number) is valid


@pytest.mark.parametrize(("iban", "valid"), [
    ("GB82 WEST 1234 5698 7654 32", True),
    ("DE89370400440532013000", True),
    ("DE89370400440532013001", False),
    ("GB82 WEST 1234 5698 7654 33", False),
])
def test_iban_mod_97(iban: str, valid: bool) -> None:
    assert iban_valid(iban) is valid


def test_a_card_number_that_passes_luhn_is_blocked_and_one_that_fails_is_not() -> None:
    check = PII(kinds=("card",))
    assert check("pay with 4111 1111 1111 1111 please") == Tripwire(
        "personal data found: card", {"found": {"card": 1}}
    )
    assert check("order 4111 1111 1111 1112 shipped") is None
    assert check("invoice 1234567812345678") is None


def test_an_iban_is_found_only_when_its_check_digits_hold() -> None:
    check = PII(kinds=("iban",))
    assert check("IBAN: DE89 3704 0044 0532 0130 00") == Tripwire(
        "personal data found: iban", {"found": {"iban": 1}}
    )
    assert check("ref DE89 3704 0044 0532 0130 01") is None


def test_phones_need_a_country_code_or_separators() -> None:
    check = PII(kinds=("phone",))
    assert isinstance(check("call +44 20 7946 0958"), Tripwire)
    assert isinstance(check("call (555) 123-4567"), Tripwire)
    assert isinstance(check("call 555.123.4567"), Tripwire)
    assert check("order 5551234567 is late") is None
    assert check("version 1.2.3, 2024-05-01") is None


def test_ssn_skips_numbers_never_issued() -> None:
    check = PII(kinds=("ssn",))
    assert isinstance(check("SSN 123-45-6789"), Tripwire)
    for never in ("000-12-3456", "666-12-3456", "912-34-5678", "123-00-4567", "123-45-0000"):
        assert check(never) is None, never


def test_block_counts_each_kind_in_every_string_of_the_value() -> None:
    value = FrozenDict({"to": "ann@example.com", "cc": ["bob@example.org"],
                        "body": "card 4111-1111-1111-1111, ssn 123-45-6789"})
    assert PII()(value) == Tripwire(
        "personal data found: email, card, ssn",
        {"found": {"email": 2, "card": 1, "ssn": 1}},
    )
    assert PII()("nothing personal, order 42 of 1000") is None


def test_redact_keeps_the_shape_and_the_rest_of_the_text() -> None:
    value = FrozenDict({"note": "mail ann@example.com or +1 415 555 0100", "n": 3,
                        "rows": ("IBAN GB82 WEST 1234 5698 7654 32", "ok")})
    redacted = PII(mode="redact")(value)
    assert redacted == {"note": "mail [REDACTED:email] or [REDACTED:phone]", "n": 3,
                        "rows": ("IBAN [REDACTED:iban]", "ok")}
    assert isinstance(redacted, FrozenDict)
    assert PII(mode="redact")("nothing to hide") is None


def test_bad_arguments_say_what_is_accepted() -> None:
    with pytest.raises(ValueError) as mode:
        PII(mode="mask")  # type: ignore[arg-type]
    assert str(mode.value) == "PII(mode=...) takes 'block' or 'redact', got 'mask'"
    with pytest.raises(ValueError) as kinds:
        PII(kinds=("email", "name"))  # type: ignore[arg-type]
    assert str(kinds.value) == (
        "PII(kinds=...) takes some of ['email', 'phone', 'card', 'iban', 'ssn'], "
        "got ['email', 'name']"
    )
