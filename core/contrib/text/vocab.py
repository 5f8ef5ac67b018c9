"""Token indexing (MXNet 1.x's ``mx.contrib.text.vocab``)."""
from __future__ import annotations

import collections

__all__ = ["TextArgumentError", "Vocabulary"]

#: the index of the unknown token
UNKNOWN_IDX = 0


class TextArgumentError(ValueError, AssertionError):
    """A bad argument to a ``contrib.text`` class (MXNet 1.x asserts there, so this is an
    ``AssertionError`` as well as a ``ValueError``)."""


class Vocabulary:
    """Indexes the unknown token (index 0), the reserved tokens, then the counted tokens
    by decreasing frequency (ties in token order).

    Args:
        counter: a ``collections.Counter`` of tokens (or None: only unknown and reserved).
        most_freq_count: index at most this many counted tokens (None: all).
        min_freq: index only tokens counted at least this often (> 0).
        unknown_token: the token for everything not indexed.
        reserved_tokens: tokens indexed right after the unknown one (no duplicates, not
            the unknown token).

    Example:
        >>> import collections
        >>> v = Vocabulary(collections.Counter(["a", "b", "b"]), reserved_tokens=["<pad>"])
        >>> v.idx_to_token, v.to_tokens(2), len(v)
        (['<unk>', '<pad>', 'b', 'a'], 'b', 4)
    """

    def __init__(self, counter=None, most_freq_count=None, min_freq: int = 1,
                 unknown_token="<unk>", reserved_tokens=None):
        if not min_freq > 0:
            raise TextArgumentError(f"Vocabulary: `min_freq` must be set to a positive value, "
                                    f"got {min_freq!r}.")
        if reserved_tokens is not None:
            if unknown_token in set(reserved_tokens):
                raise TextArgumentError("Vocabulary: `reserved_token` cannot contain "
                                        f"`unknown_token` {unknown_token!r}.")
            if len(set(reserved_tokens)) != len(reserved_tokens):
                raise TextArgumentError("Vocabulary: `reserved_tokens` cannot contain "
                                        f"duplicate reserved tokens: {reserved_tokens!r}.")
        self._index_unknown_and_reserved_tokens(unknown_token, reserved_tokens)
        if counter is not None:
            self._index_counter_keys(counter, unknown_token, reserved_tokens, most_freq_count,
                                     min_freq)

    def _index_unknown_and_reserved_tokens(self, unknown_token, reserved_tokens):
        self._unknown_token = unknown_token
        self._idx_to_token = [unknown_token]
        self._reserved_tokens = None if reserved_tokens is None else list(reserved_tokens)
        if reserved_tokens is not None:
            self._idx_to_token.extend(reserved_tokens)
        self._token_to_idx = {t: i for i, t in enumerate(self._idx_to_token)}

    def _index_counter_keys(self, counter, unknown_token, reserved_tokens, most_freq_count,
                            min_freq):
        if not isinstance(counter, collections.Counter):
            raise TextArgumentError("Vocabulary: `counter` must be an instance of "
                                    f"collections.Counter, got {type(counter).__name__}.")
        special = set(reserved_tokens or ()) | {unknown_token}
        freqs = sorted(counter.items(), key=lambda x: x[0])
        freqs.sort(key=lambda x: x[1], reverse=True)
        cap = len(special) + (len(counter) if most_freq_count is None else most_freq_count)
        for token, freq in freqs:
            if freq < min_freq or len(self._idx_to_token) == cap:
                break
            if token not in special:
                self._idx_to_token.append(token)
                self._token_to_idx[token] = len(self._idx_to_token) - 1

    def __len__(self) -> int:
        return len(self.idx_to_token)

    @property
    def token_to_idx(self) -> dict:
        """``{token: index}``."""
        return self._token_to_idx

    @property
    def idx_to_token(self) -> list:
        """The tokens by index."""
        return self._idx_to_token

    @property
    def unknown_token(self):
        """The unknown token (index 0)."""
        return self._unknown_token

    @property
    def reserved_tokens(self):
        """The reserved tokens (or None)."""
        return self._reserved_tokens

    def to_indices(self, tokens):
        """The index of a token, or the list of indices of a list (unknown: 0).

        Args:
            tokens: a token or a list of tokens.
        """
        one = not isinstance(tokens, list)
        idx = [self.token_to_idx.get(t, UNKNOWN_IDX) for t in ([tokens] if one else tokens)]
        return idx[0] if one else idx

    def to_tokens(self, indices):
        """The token of an index, or the list of tokens of a list of indices.

        Args:
            indices: an int or a list of ints, each < ``len(self)``.

        Raises:
            ValueError: an index is not an int or is out of range.
        """
        one = not isinstance(indices, list)
        out = []
        for i in [indices] if one else indices:
            if not isinstance(i, int) or i > len(self.idx_to_token) - 1:
                raise ValueError(f"Token index {i} in the provided `indices` is invalid "
                                 f"(the vocabulary has {len(self.idx_to_token)} tokens).")
            out.append(self.idx_to_token[i])
        return out[0] if one else out
