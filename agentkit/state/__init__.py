"""State: stores, checkpoints and memory sources."""
