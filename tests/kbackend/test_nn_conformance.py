"""kbackend nn, what Keras' ops/nn_test.py needs: ctc_decode (greedy and beam search)
against NumPy/brute-force references, dtypes kept by bfloat16 activations and
ctc_loss, grouped-query attention."""
from __future__ import annotations

import itertools
import re

import keras
import ml_dtypes
import numpy as np
import pytest
import scipy.special as sp
from keras import ops
from keras.src.backend.common import dtypes
from keras.src.backend.common import standardize_dtype as sd

from core import autograd, nd
from core import np as cnp
from kbackend.core import convert_to_tensor

n = ops.convert_to_numpy


# ---------------------------------------------------------------- ctc_decode: greedy

def greedy_ref(x, lengths, merge, blank):
    b, t, _ = x.shape
    out = np.full((1, b, t), -1, "int32")
    scores = np.zeros((b, 1), "float32")
    for i in range(b):
        best = x[i, :lengths[i]].argmax(-1)
        scores[i, 0] = -x[i, :lengths[i]].max(-1).sum()
        labels, prev = [], None
        for c in best:
            if c != blank and not (merge and c == prev):
                labels.append(c)
            prev = c
        out[0, i, :len(labels)] = labels
    return out, scores


def test_ctc_decode_greedy():
    rng = np.random.default_rng(0)
    for _trial in range(20):
        b, t, c = rng.integers(1, 5), rng.integers(1, 8), rng.integers(2, 6)
        x = (rng.integers(0, 4, size=(b, t, c)).astype("float32")
             + rng.random((b, t, c)).astype("float32") * 0.1)
        lengths = rng.integers(0, t + 1, size=b)
        blank = int(rng.integers(0, c))
        for merge in (True, False):
            d, s = ops.ctc_decode(x, lengths, strategy="greedy", merge_repeated=merge,
                                  mask_index=blank)
            wd, ws = greedy_ref(x, lengths, merge, blank)
            assert n(d).dtype == np.int32 and n(s).dtype == np.float32, (n(d).dtype,
                                                                          n(s).dtype)
            np.testing.assert_array_equal(n(d), wd)
            np.testing.assert_allclose(n(s), ws, rtol=1e-6, atol=1e-6)
    # mask_index=None is the last class; -1 counts from the end; scores have Keras' dtype.
    x = rng.standard_normal((2, 5, 4))
    d1, s1 = ops.ctc_decode(x, [5, 3], mask_index=None)
    d2, s2 = ops.ctc_decode(x, [5, 3], mask_index=-1)
    np.testing.assert_array_equal(n(d1), n(d2))
    np.testing.assert_array_equal(n(d1), greedy_ref(x, [5, 3], True, 3)[0])
    assert n(s1).dtype == np.dtype(dtypes.result_type("float64", "float32"))


def test_ctc_decode_greedy_symbolic_shapes_and_dtypes():
    kd, ks = ops.ctc_decode(keras.KerasTensor((None, 6, 4)),
                            keras.KerasTensor((None,), "int32"))
    assert kd.shape == (1, None, 6) and ks.shape == (None, 1) and kd.dtype == "int32", (kd,
                                                                                      ks)


# ----------------------------------------------------------- ctc_decode: beam search

def brute_force(logp, length, blank):
    """log P(labelling) for every labelling, by summing over all alignments."""
    total = {}
    for path in itertools.product(range(logp.shape[1]), repeat=length):
        labels, prev = [], None
        for c in path:
            if c != blank and c != prev:
                labels.append(c)
            prev = c
        score = sum(logp[t, c] for t, c in enumerate(path))
        key = tuple(labels)
        total[key] = np.logaddexp(total.get(key, -np.inf), score)
    return total


def test_ctc_decode_beam_search_against_brute_force():
    rng = np.random.default_rng(1)
    for _trial in range(12):
        b, t, c = 2, int(rng.integers(1, 5)), int(rng.integers(2, 4))
        x = rng.standard_normal((b, t, c)) * 2
        lengths = rng.integers(1, t + 1, size=b)
        blank = int(rng.integers(0, c))
        top = 3
        # A beam wider than the number of prefixes makes prefix beam search exact.
        d, s = ops.ctc_decode(x, lengths, strategy="beam_search", beam_width=64,
                              top_paths=top, mask_index=blank)
        d, s = n(d), n(s)
        assert d.shape == (top, b, t) and s.shape == (b, top) and d.dtype == np.int32
        for i in range(b):
            logp = sp.log_softmax(x[i], axis=-1)
            want = sorted(brute_force(logp, lengths[i], blank).items(), key=lambda kv: -kv[1])
            for k in range(min(top, len(want))):
                labels, score = want[k]
                np.testing.assert_allclose(s[i, k], score, rtol=1e-6, atol=1e-6)
                got = tuple(int(v) for v in d[k, i] if v != -1)
                if k + 1 < len(want) and abs(want[k + 1][1] - score) < 1e-9:
                    continue  # an exact tie: either order is right
                assert got == labels, (got, labels, s[i], want[:top])
            for k in range(len(want), top):  # fewer labellings than top_paths
                assert s[i, k] == -np.inf and (d[k, i] == -1).all()
    # A narrow beam drops alignments: its scores are lower bounds of the exact ones.
    x = rng.standard_normal((1, 6, 4))
    d, s = ops.ctc_decode(x, [6], strategy="beam_search", beam_width=2, top_paths=2)
    exact = brute_force(sp.log_softmax(x[0], -1), 6, 0)
    for k in range(2):
        labels = tuple(int(v) for v in n(d)[k, 0] if v != -1)
        assert n(s)[0, k] <= exact[labels] + 1e-5, (n(s)[0, k], exact[labels])
    assert n(s)[0, 0] >= n(s)[0, 1]


def test_ctc_decode_beam_search_keras_expected_values():
    # Keras' own expected values (ops/nn_test.py test_ctc_decode).
    inputs = np.array([[[0.1, 0.4, 0.2, 0.4], [0.3, -0.3, 0.4, 0.2], [0.3, 0.2, 0.4, 0.3]],
                       [[0.7, 0.4, 0.3, 0.2], [0.3, 0.3, 0.4, 0.1], [0.6, -0.1, 0.1, 0.5]],
                       [[0.1, 0.4, 0.2, 0.7], [0.3, 0.3, -0.2, 0.7], [0.3, 0.2, 0.4, 0.1]]])
    d, s = ops.ctc_decode(inputs, [3, 3, 1], strategy="beam_search", beam_width=4,
                          top_paths=2)
    np.testing.assert_array_equal(n(d), [[[1, 2, -1], [2, -1, -1], [3, -1, -1]],
                                         [[2, -1, -1], [3, -1, -1], [1, -1, -1]]])
    np.testing.assert_allclose(n(s), [[-2.426537, -2.435596], [-2.127681, -2.182338],
                                      [-1.063386, -1.363386]], rtol=1e-5)


def test_ctc_decode_beam_search_symbolic_shapes():
    kd, ks = ops.ctc_decode(keras.KerasTensor((3, 6, 4)), keras.KerasTensor((3,), "int32"),
                            strategy="beam_search", top_paths=2)
    assert kd.shape == (2, 3, 6) and ks.shape == (3, 2), (kd, ks)


_X = np.zeros((2, 3, 4), "float32")


@pytest.mark.parametrize("call, text", [
    (lambda: ops.ctc_decode(_X, [3, 3], strategy="nope"), "Invalid strategy"),
    (lambda: ops.ctc_decode(_X[0], [3]), "inputs.shape=(3, 4)"),
    (lambda: ops.ctc_decode(_X, [3, 3, 3]), "sequence_lengths.shape=(3,)"),
    (lambda: ops.ctc_decode(_X, [3, 3], mask_index=4), "mask_index=4"),
    (lambda: ops.ctc_decode(_X, [3, 3], strategy="beam_search", beam_width=2, top_paths=3),
     "top_paths=3"),
], ids=["strategy", "inputs-rank", "lengths-shape", "mask-index", "top-paths"])
def test_ctc_decode_bad_input_is_a_clear_error(call, text):
    with pytest.raises(ValueError, match=re.escape(text)):
        call()


# ------------------------------------------------------------- bfloat16 and ctc_loss

@pytest.mark.parametrize("name", ["sigmoid", "relu6", "silu", "hard_sigmoid", "hard_silu",
                                  "glu", "elu", "softplus", "selu", "gelu", "leaky_relu",
                                  "log_sigmoid"])
def test_bfloat16_activation_stays_bfloat16(name):
    # NumPy promotes ml_dtypes' bfloat16 * Python float to float32.
    xb = ops.ones((4,), "bfloat16")
    out = getattr(ops, name)(xb)
    assert sd(out.dtype) == "bfloat16", (name, out.dtype)


def test_bfloat16_sigmoid_value():
    xb = ops.ones((4,), "bfloat16")
    np.testing.assert_allclose(n(ops.sigmoid(xb)).astype("float32"), sp.expit(1.0), rtol=1e-2)


@pytest.mark.parametrize("shape", [(), (3,)])
def test_core_table_activations_keep_bfloat16_with_gradients(shape):
    # core's table activations themselves (0-d too), with their gradients.
    xc = cnp.array(np.full(shape, 0.5, dtype=ml_dtypes.bfloat16))
    for name in ("relu6", "silu", "hard_sigmoid", "hard_swish", "mish", "elu", "selu"):
        y = getattr(nd, name)(xc)
        assert y.dtype == ml_dtypes.bfloat16 and y.shape == shape, (name, shape, y.dtype)
    xc.attach_grad()
    with autograd.record():
        y = nd.silu(xc)
    y.backward()
    assert xc.grad.dtype == ml_dtypes.bfloat16
    np.testing.assert_allclose(xc.grad.asnumpy().astype("float32"),
                               sp.expit(0.5) * (1 + 0.5 * (1 - sp.expit(0.5))), rtol=2e-2)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_ctc_loss_of_half_precision_is_float32(dt):
    labels = np.array([[1, 2, 1]], "int32")
    logits = np.array([[[0.4, 0.8, 0.4], [0.2, 0.8, 0.3], [0.9, 0.4, 0.5]]])
    want = n(ops.ctc_loss(labels, logits.astype("float32"), [3], [3]))
    out = ops.ctc_loss(labels, logits.astype(dt), [3], [3])
    assert sd(out.dtype) == "float32", (dt, out.dtype)
    np.testing.assert_allclose(n(out), want, rtol=1e-2)


# --------------------------------------------------------- grouped-query attention

def _gqa_inputs():
    """4 query heads sharing 2 key/value heads, and a mask."""
    rng = np.random.default_rng(0)
    q = rng.standard_normal((2, 5, 4, 8)).astype("float32")
    k = rng.standard_normal((2, 6, 2, 8)).astype("float32")
    v = rng.standard_normal((2, 6, 2, 8)).astype("float32")
    mask = rng.random((2, 4, 5, 6)) > 0.3
    mask[..., 0] = True
    return q, k, v, mask


def gqa_ref(q, k, v, mask):
    k = np.repeat(k, 2, axis=2)
    v = np.repeat(v, 2, axis=2)
    logits = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(8)
    logits = np.where(mask, logits, -np.inf)
    return np.einsum("bnts,bsnh->btnh", sp.softmax(logits, axis=-1), v)


def test_grouped_query_attention():
    q, k, v, mask = _gqa_inputs()
    out = ops.dot_product_attention(q, k, v, mask=mask)
    np.testing.assert_allclose(n(out), gqa_ref(q, k, v, mask), rtol=1e-5, atol=1e-5)


def test_grouped_query_attention_gradients_reach_shared_heads():
    q, k, v, mask = _gqa_inputs()
    tq, tk, tv = (convert_to_tensor(a) for a in (q, k, v))
    for t in (tq, tk, tv):
        t.attach_grad()
    with autograd.record():
        y = ops.dot_product_attention(tq, tk, tv, mask=mask)
        loss = (y * y).sum()
    loss.backward()
    eps = 1e-3
    kp = k.copy()
    kp[1, 2, 1, 3] += eps
    km = k.copy()
    km[1, 2, 1, 3] -= eps
    fd = ((gqa_ref(q, kp, v, mask) ** 2).sum()
          - (gqa_ref(q, km, v, mask) ** 2).sum()) / (2 * eps)
    np.testing.assert_allclose(tk.grad.asnumpy()[1, 2, 1, 3], fd, rtol=1e-2, atol=1e-3)


def test_grouped_query_attention_heads_must_divide():
    q, k, v, _ = _gqa_inputs()
    with pytest.raises(ValueError, match="multiple of the number of key/value heads"):
        ops.dot_product_attention(q, k[:, :, :1].repeat(3, axis=2),
                                  v[:, :, :1].repeat(3, axis=2))
