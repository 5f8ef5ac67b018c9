"""softmax operators (being written)."""
