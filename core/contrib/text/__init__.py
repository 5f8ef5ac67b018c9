"""MXNet 1.x's ``mx.contrib.text``: token counting, vocabularies and token embeddings.

Example:
    >>> from core.contrib import text
    >>> counter = text.utils.count_tokens_from_str("a b b c c c")
    >>> vocab = text.vocab.Vocabulary(counter)
    >>> vocab.idx_to_token, vocab.to_indices(["c", "zzz"])
    (['<unk>', 'c', 'b', 'a'], [1, 0])
"""
from . import embedding, utils, vocab

__all__ = ["embedding", "utils", "vocab"]
