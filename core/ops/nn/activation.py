"""activation operators (being written)."""
