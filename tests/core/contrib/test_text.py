"""core.contrib.text (mx.contrib.text): counting, Vocabulary, token embeddings."""
import collections
import os

import numpy as np
import pytest

from core import nd
from core.contrib.text import embedding, utils, vocab
from core.testing.data import NoNetworkError


def _counter():
    return utils.count_tokens_from_str("a b b c c c\nsome words Some", to_lower=True)


def test_count_tokens_and_update():
    c = _counter()
    assert c["c"] == 3 and c["some"] == 2
    c2 = utils.count_tokens_from_str("x,y;y", token_delim=",", seq_delim=";",
                                     counter_to_update=collections.Counter({"x": 1}))
    assert c2 == collections.Counter({"x": 2, "y": 2})


def test_vocabulary_order_caps_and_lookups():
    v = vocab.Vocabulary(_counter(), reserved_tokens=["<pad>"])
    assert v.idx_to_token == ["<unk>", "<pad>", "c", "b", "some", "a", "words"]
    assert v.to_indices(["b", "nope"]) == [3, 0] and v.to_indices("c") == 2
    assert v.to_tokens([2, 0]) == ["c", "<unk>"]
    assert vocab.Vocabulary(_counter(), most_freq_count=2).idx_to_token == ["<unk>", "c", "b"]
    assert vocab.Vocabulary(_counter(), min_freq=2).idx_to_token == ["<unk>", "c", "b", "some"]
    with pytest.raises(ValueError, match="Token index 99"):
        v.to_tokens(99)


@pytest.mark.parametrize("kwargs,match", [
    ({"min_freq": 0}, "min_freq"),
    ({"reserved_tokens": ["<unk>"]}, "cannot contain `unknown_token`"),
    ({"reserved_tokens": ["x", "x"]}, "duplicate"),
])
def test_vocabulary_errors_are_assertion_errors_too(kwargs, match):
    with pytest.raises(AssertionError, match=match):
        vocab.Vocabulary(_counter(), **kwargs)
    with pytest.raises(ValueError, match=match):
        vocab.Vocabulary(_counter(), **kwargs)


def _vec_file(tmp_path, text, name="v.txt"):
    path = os.path.join(tmp_path, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def test_custom_embedding_reads_vectors_and_the_unknown_one(tmp_path):
    path = _vec_file(tmp_path, "a 0.1 0.2 0.3\nb 0.4 0.5 0.6\n<unk> 9 9 9\nb 7 7 7\n")
    with pytest.warns(UserWarning, match="duplicate"):
        e = embedding.CustomEmbedding(path, " ")
    assert e.idx_to_token == ["<unk>", "a", "b"] and e.vec_len == 3
    np.testing.assert_allclose(e.idx_to_vec.asnumpy(),
                               [[9, 9, 9], [0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], rtol=1e-6)
    np.testing.assert_allclose(e.get_vecs_by_tokens(["A", "zz"], lower_case_backup=True)
                               .asnumpy(), [[0.1, 0.2, 0.3], [9, 9, 9]], rtol=1e-6)
    e.update_token_vectors("a", nd.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(e.get_vecs_by_tokens("a").asnumpy(), [1, 2, 3])
    with pytest.raises(ValueError, match="Token zz is unknown"):
        e.update_token_vectors("zz", nd.ones((3,)))


def test_custom_embedding_with_vocabulary_and_errors(tmp_path):
    path = _vec_file(tmp_path, "a,1,2\nc,3,4\n")
    v = vocab.Vocabulary(_counter(), most_freq_count=3)
    e = embedding.CustomEmbedding(path, ",", init_unknown_vec=nd.ones, vocabulary=v)
    assert e.idx_to_token == v.idx_to_token
    np.testing.assert_allclose(e.idx_to_vec.asnumpy(), [[1, 1], [3, 4], [1, 1], [1, 1]])
    bad = _vec_file(tmp_path, "a 1 2\nb 3\nc 4 5 6\n", "bad.txt")
    with pytest.raises(AssertionError, match="dimension of token c is 3 but"), \
            pytest.warns(UserWarning, match="token b with 1-dimensional vector"):
        embedding.CustomEmbedding(bad)
    with pytest.raises(ValueError, match="valid path"):
        embedding.CustomEmbedding(os.path.join(tmp_path, "missing.txt"))


def test_composite_embedding_concatenates(tmp_path):
    one = embedding.CustomEmbedding(_vec_file(tmp_path, "a 1 1\nb 2 2\n", "1.txt"))
    two = embedding.CustomEmbedding(_vec_file(tmp_path, "b 5 6 7\nc 8 9 10\n", "2.txt"))
    v = vocab.Vocabulary(collections.Counter(["a", "b", "b", "c"]))
    ce = embedding.CompositeEmbedding(v, [one, two])
    assert ce.vec_len == 5 and ce.idx_to_token == ["<unk>", "b", "a", "c"]
    np.testing.assert_allclose(ce.idx_to_vec.asnumpy(),
                               [[0, 0, 0, 0, 0], [2, 2, 5, 6, 7], [1, 1, 0, 0, 0],
                                [0, 0, 8, 9, 10]])


def test_registry_and_pretrained_files_are_local_only(tmp_path):
    assert {"glove", "fasttext"} <= set(embedding.get_pretrained_file_names())
    with pytest.raises(KeyError, match="unknown"):
        embedding.get_pretrained_file_names("unknown$$")
    with pytest.raises(NoNetworkError, match="does not download anything"):
        embedding.create("glove", pretrained_file_name="glove.6B.50d.txt",
                         embedding_root=str(tmp_path))
    os.makedirs(tmp_path / "glove")
    _vec_file(tmp_path / "glove", "x 1 2\n", "glove.6B.50d.txt")
    g = embedding.create("GloVe", pretrained_file_name="glove.6B.50d.txt",
                         embedding_root=str(tmp_path))
    assert g.idx_to_token == ["<unk>", "x"]
