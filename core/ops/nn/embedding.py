"""embedding operators (being written)."""
