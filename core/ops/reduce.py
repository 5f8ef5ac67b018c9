"""reduce operators (being written)."""
