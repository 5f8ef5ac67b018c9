"""Text data for RNN language models: ``encode_sentences`` and ``BucketSentenceIter``
(MXNet 1.x's ``mx.rnn.io``)."""
from __future__ import annotations

import bisect
import logging
import random

import numpy

from .. import nd
from ..io import DataBatch, DataDesc, DataIter

__all__ = ["BucketSentenceIter", "encode_sentences"]

_LOG = logging.getLogger(__name__)


def encode_sentences(sentences, vocab: dict | None = None, invalid_label: int = -1,
                     invalid_key: str = "\n", start_label: int = 0,
                     unknown_token: str | None = None):
    """Sentences of tokens as lists of integer ids, building the vocabulary as needed.

    Args:
        sentences: a list of sentences, each a list of string tokens.
        vocab: ``{token: id}`` to use (and extend); None starts one holding only
            ``{invalid_key: invalid_label}``.
        invalid_label: the id of ``invalid_key`` (never given to another token).
        invalid_key: the token of ``invalid_label`` (end of sentence, by default ``'\\n'``).
        start_label: the first id given to a new token.
        unknown_token: with a given ``vocab``, tokens not in it are encoded as this token
            (added to ``vocab`` on first use); None: they are an error.

    Returns:
        ``(encoded sentences, vocab)``.

    Raises:
        KeyError: a token not in a given ``vocab`` and no ``unknown_token``.

    Example:
        >>> from core.rnn import encode_sentences
        >>> encode_sentences([["a", "b", "c"], ["b", "c", "d"]], vocab={"a": 1, "b": 2, "c": 3},
        ...                  unknown_token="UNK")
        ([[1, 2, 3], [2, 3, 0]], {'a': 1, 'b': 2, 'c': 3, 'UNK': 0})
    """
    idx = start_label
    new_vocab = vocab is None
    if new_vocab:
        vocab = {invalid_key: invalid_label}
    res = []
    for sent in sentences:
        coded = []
        for word in sent:
            if word not in vocab:
                if not (new_vocab or unknown_token):
                    raise KeyError(f"encode_sentences: unknown token {word!r} (not in the "
                                   "vocab given); pass unknown_token= to encode such tokens")
                if unknown_token:
                    word = unknown_token
                if word not in vocab:
                    if idx == invalid_label:
                        idx += 1
                    vocab[word] = idx
                    idx += 1
            coded.append(vocab[word])
        res.append(coded)
    return res, vocab


class BucketSentenceIter(DataIter):
    """Batches of encoded sentences grouped by length (buckets) for a language model:
    the label of each step is the next token (``invalid_label`` after the last).

    Sentences are padded with ``invalid_label`` to their bucket's length; longer ones
    than the largest bucket are dropped. Each batch's ``bucket_key`` is its bucket
    length (a ``BucketingModule`` key).

    Args:
        sentences: encoded sentences (lists of ints).
        batch_size: sentences per batch.
        buckets: the bucket lengths; None: every length with at least ``batch_size``
            sentences.
        invalid_label: the padding id.
        data_name, label_name: the names of the data and label inputs.
        dtype: the arrays' dtype.
        layout: ``'NT'`` (batch, time) or ``'TN'``.

    Raises:
        ValueError: a layout other than ``'NT'``/``'TN'``, or no usable bucket.

    Example:
        >>> from core.rnn import BucketSentenceIter
        >>> it = BucketSentenceIter([[1, 2, 3], [4, 5], [6, 7, 8], [9]], batch_size=2,
        ...                         buckets=[3])
        >>> batch = next(iter(it))
        >>> batch.bucket_key, batch.data[0].shape
        (3, (2, 3))
    """

    def __init__(self, sentences, batch_size: int, buckets=None, invalid_label: int = -1,
                 data_name: str = "data", label_name: str = "softmax_label",
                 dtype="float32", layout: str = "NT"):
        super().__init__()
        if layout not in ("NT", "TN"):
            raise ValueError(f"BucketSentenceIter: invalid layout {layout!r}: must be NT "
                             "(batch major) or TN (time major)")
        if not buckets:
            counts = numpy.bincount([len(s) for s in sentences])
            buckets = [i for i, j in enumerate(counts) if j >= batch_size]
        buckets = sorted(buckets)
        if not buckets:
            raise ValueError(f"BucketSentenceIter: no bucket: no sentence length occurs "
                             f"batch_size={batch_size} times; give buckets=")
        ndiscard = 0
        data = [[] for _ in buckets]
        for sent in sentences:
            buck = bisect.bisect_left(buckets, len(sent))
            if buck == len(buckets):
                ndiscard += 1
                continue
            buff = numpy.full((buckets[buck],), invalid_label, dtype=dtype)
            buff[:len(sent)] = sent
            data[buck].append(buff)
        if ndiscard:
            _LOG.warning("BucketSentenceIter: discarded %d sentences longer than the largest "
                         "bucket.", ndiscard)
        self.buckets = [b for b, d in zip(buckets, data) if d]
        self.data = [numpy.asarray(d, dtype=dtype) for d in data if d]
        self.batch_size = batch_size
        self.data_name = data_name
        self.label_name = label_name
        self.dtype = dtype
        self.invalid_label = invalid_label
        self.nddata: list = []
        self.ndlabel: list = []
        self.major_axis = layout.find("N")
        self.layout = layout
        self.default_bucket_key = max(self.buckets)
        shape = (batch_size, self.default_bucket_key) if self.major_axis == 0 else \
            (self.default_bucket_key, batch_size)
        self.provide_data = [DataDesc(name=data_name, shape=shape, layout=layout)]
        self.provide_label = [DataDesc(name=label_name, shape=shape, layout=layout)]
        self.idx = []
        for i, buck in enumerate(self.data):
            self.idx.extend((i, j) for j in range(0, len(buck) - batch_size + 1, batch_size))
        self.curr_idx = 0
        self.reset()

    def reset(self) -> None:
        """Start over, shuffling the batches and the sentences in each bucket."""
        self.curr_idx = 0
        random.shuffle(self.idx)
        for buck in self.data:
            numpy.random.shuffle(buck)
        self.nddata, self.ndlabel = [], []
        for buck in self.data:
            label = numpy.empty_like(buck)
            label[:, :-1] = buck[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(nd.array(buck, dtype=self.dtype))
            self.ndlabel.append(nd.array(label, dtype=self.dtype))

    def next(self) -> DataBatch:
        """The next batch (``StopIteration`` at the end)."""
        if self.curr_idx == len(self.idx):
            raise StopIteration
        i, j = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[i][j:j + self.batch_size]
        label = self.ndlabel[i][j:j + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        return DataBatch([data], [label], pad=0, bucket_key=self.buckets[i],
                         provide_data=[DataDesc(name=self.data_name, shape=data.shape,
                                                layout=self.layout)],
                         provide_label=[DataDesc(name=self.label_name, shape=label.shape,
                                                 layout=self.layout)])
