"""conv operators (being written)."""
