"""random operators (being written)."""
