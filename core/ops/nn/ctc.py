"""ctc operators (being written)."""
