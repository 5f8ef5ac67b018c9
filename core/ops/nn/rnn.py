"""rnn operators (being written)."""
