"""fc operators (being written)."""
