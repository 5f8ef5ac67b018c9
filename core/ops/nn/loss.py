"""loss operators (being written)."""
