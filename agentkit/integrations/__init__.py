"""Integrations with other systems, each behind an optional extra."""
