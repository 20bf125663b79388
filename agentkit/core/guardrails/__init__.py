"""Guardrails: checks that stop a run (:class:`Tripwire`) or rewrite a value.

The prebuilt checks use only the standard library; each module says what it catches
and what it misses.
"""

from agentkit.core.guardrails.injection import PromptInjection
from agentkit.core.guardrails.pii import PII, PIIKind, iban_valid, luhn_valid
from agentkit.core.guardrails.running import (
    Guardrail,
    GuardrailMisplaced,
    GuardrailTrip,
    as_guardrail,
    check,
    check_alongside,
    input_guardrail,
)
from agentkit.core.guardrails.text_checks import Denylist, MaxLength
from agentkit.core.guardrails.tripped import GuardrailRecord, GuardrailTripped
from agentkit.core.guardrails.tripwire import Tripwire, rewrite_texts, texts_of

__all__ = [
    "PII",
    "Denylist",
    "Guardrail",
    "GuardrailMisplaced",
    "GuardrailRecord",
    "GuardrailTrip",
    "GuardrailTripped",
    "MaxLength",
    "PIIKind",
    "PromptInjection",
    "Tripwire",
    "as_guardrail",
    "check",
    "check_alongside",
    "iban_valid",
    "input_guardrail",
    "luhn_valid",
    "rewrite_texts",
    "texts_of",
]
