"""Checkpoints: a run's saved state, for suspend/resume and crash recovery."""

from agentkit.state.checkpoints.store_checkpointer import StoreCheckpointer

__all__ = ["StoreCheckpointer"]
