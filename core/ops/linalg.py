"""linalg operators (being written)."""
