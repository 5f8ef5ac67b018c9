"""sampling operators (being written)."""
