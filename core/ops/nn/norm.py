"""norm operators (being written)."""
