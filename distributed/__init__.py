"""Distributed (Linux/UNIX/Windows) platform layer (issue 5)."""
