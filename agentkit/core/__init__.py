"""The core: value types, seams, runtime and policies. Standard library only."""
