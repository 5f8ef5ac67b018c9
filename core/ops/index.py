"""index operators (being written)."""
