"""z/OS platform layer (issue 6)."""
