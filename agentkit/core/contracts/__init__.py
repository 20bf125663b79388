"""Value types, seams (Protocols) and errors shared by every layer."""
