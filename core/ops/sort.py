"""sort operators (being written)."""
