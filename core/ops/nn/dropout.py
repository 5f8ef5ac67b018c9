"""dropout operators (being written)."""
