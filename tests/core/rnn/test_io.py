"""core.rnn.io: encode_sentences and BucketSentenceIter."""
from __future__ import annotations

import random

import numpy
import pytest

from core.rnn import BucketSentenceIter, encode_sentences


def test_encode_with_a_given_vocab_and_unknown_token():
    result, vocab = encode_sentences([["a", "b", "c"], ["b", "c", "d"]],
                                     vocab={"a": 1, "b": 2, "c": 3}, invalid_label=-1,
                                     invalid_key="\n", start_label=0, unknown_token="UNK")
    assert vocab == {"a": 1, "b": 2, "c": 3, "UNK": 0}
    assert result == [[1, 2, 3], [2, 3, 0]]


def test_encode_builds_a_vocab_skipping_the_invalid_label():
    result, vocab = encode_sentences([["x", "y"], ["y", "z", "\n"]], invalid_label=1,
                                     start_label=0)
    assert vocab == {"\n": 1, "x": 0, "y": 2, "z": 3}
    assert result == [[0, 2], [2, 3, 1]]


def test_encode_refuses_unknown_tokens_without_unknown_token():
    with pytest.raises(KeyError, match="unknown token 'q'"):
        encode_sentences([["q"]], vocab={"a": 0})


def test_bucket_iterator_pads_shifts_labels_and_keys_batches():
    random.seed(0)
    numpy.random.seed(0)
    sents = [[1, 2, 3], [4, 5, 6], [7, 8], [9], [1, 2, 3, 4, 5], [6, 7, 8, 9, 1, 2, 3]]
    it = BucketSentenceIter(sents, batch_size=2, buckets=[3, 5], invalid_label=0)
    assert it.default_bucket_key == 5
    assert it.provide_data[0].shape == (2, 5) and it.provide_label[0].name == "softmax_label"
    batches = list(it)
    assert sorted(b.bucket_key for b in batches) == [3, 3]  # bucket 5 has one sentence
    for b in batches:
        d, lab = b.data[0].asnumpy(), b.label[0].asnumpy()
        assert d.shape == (2, 3) and b.provide_data[0].shape == (2, 3)
        numpy.testing.assert_array_equal(lab[:, :-1], d[:, 1:])
        assert (lab[:, -1] == 0).all()
    rows = sorted(tuple(r) for b in batches for r in b.data[0].asnumpy().tolist())
    assert rows == [(1, 2, 3), (4, 5, 6), (7, 8, 0), (9, 0, 0)]
    it.reset()
    assert len(list(it)) == 2


def test_time_major_layout_and_automatic_buckets():
    it = BucketSentenceIter([[1, 2]] * 4 + [[3]], batch_size=2, layout="TN")
    assert it.buckets == [2] and it.provide_data[0].shape == (2, 2)
    batch = next(iter(it))
    assert batch.data[0].shape == (2, 2)  # (time, batch): each column is a sentence
    assert {tuple(c) for c in batch.data[0].asnumpy().T.tolist()} <= {(1, 2), (3, -1)}
    with pytest.raises(ValueError, match="invalid layout 'NTC'"):
        BucketSentenceIter([[1]], 1, layout="NTC")
