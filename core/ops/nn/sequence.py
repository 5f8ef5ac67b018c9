"""sequence operators (being written)."""
