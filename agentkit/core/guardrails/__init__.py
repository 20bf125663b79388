"""Guardrails: checks that stop a run (:class:`Tripwire`) or rewrite a value.

The prebuilt checks use only the standard library; each module says what it catches
and what it misses.
"""

from agentkit.core.guardrails.injection import PromptInjection
from agentkit.core.guardrails.pii import PII, PIIKind, iban_valid, luhn_valid
from agentkit.core.guardrails.text_checks import Denylist, MaxLength
from agentkit.core.guardrails.tripwire import Tripwire, rewrite_texts, texts_of

__all__ = [
    "PII",
    "Denylist",
    "MaxLength",
    "PIIKind",
    "PromptInjection",
    "Tripwire",
    "iban_valid",
    "luhn_valid",
    "rewrite_texts",
    "texts_of",
]
