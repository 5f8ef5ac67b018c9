"""Token counting (MXNet 1.x's ``mx.contrib.text.utils``)."""
from __future__ import annotations

import collections
import re

__all__ = ["count_tokens_from_str"]


def count_tokens_from_str(source_str: str, token_delim: str = " ", seq_delim: str = "\n",
                          to_lower: bool = False, counter_to_update=None):
    """Count the tokens of ``source_str``, split at ``token_delim`` and ``seq_delim``.

    Args:
        source_str: the text.
        token_delim: the token separator (a regular expression, as in MXNet).
        seq_delim: the sequence separator (a regular expression).
        to_lower: count lower-cased tokens.
        counter_to_update: a ``collections.Counter`` to add the counts to (returned).

    Returns:
        A ``collections.Counter`` of the tokens (empty tokens are skipped).

    Example:
        >>> sorted(count_tokens_from_str("Life is great!\\nlife is good.", to_lower=True).items())
        [('good.', 1), ('great!', 1), ('is', 2), ('life', 2)]
    """
    tokens = [t for t in re.split(token_delim + "|" + seq_delim, source_str) if t]
    if to_lower:
        tokens = [t.lower() for t in tokens]
    if counter_to_update is None:
        return collections.Counter(tokens)
    counter_to_update.update(tokens)
    return counter_to_update
