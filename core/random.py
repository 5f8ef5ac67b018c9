"""Per-context random number generators and seeding (being written)."""
