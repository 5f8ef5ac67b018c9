"""kbackend nn, what Keras' ops/nn_test.py needs: ctc_decode (greedy and beam search)
against NumPy/brute-force references, dtypes kept by bfloat16 activations and
ctc_loss, grouped-query attention (one subprocess per test)."""
from __future__ import annotations

from .conftest import check, run_python

CTC_GREEDY = r'''
import numpy as np, keras
from keras import ops
n = ops.convert_to_numpy
rng = np.random.default_rng(0)

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

for trial in range(20):
    b, t, c = rng.integers(1, 5), rng.integers(1, 8), rng.integers(2, 6)
    x = rng.integers(0, 4, size=(b, t, c)).astype("float32") + rng.random((b, t, c)).astype("float32") * 0.1
    lengths = rng.integers(0, t + 1, size=b)
    blank = int(rng.integers(0, c))
    for merge in (True, False):
        d, s = ops.ctc_decode(x, lengths, strategy="greedy", merge_repeated=merge,
                              mask_index=blank)
        wd, ws = greedy_ref(x, lengths, merge, blank)
        assert n(d).dtype == np.int32 and n(s).dtype == np.float32, (n(d).dtype, n(s).dtype)
        np.testing.assert_array_equal(n(d), wd)
        np.testing.assert_allclose(n(s), ws, rtol=1e-6, atol=1e-6)
# mask_index=None is the last class; -1 counts from the end; scores have Keras' dtype.
x = rng.standard_normal((2, 5, 4))
d1, s1 = ops.ctc_decode(x, [5, 3], mask_index=None)
d2, s2 = ops.ctc_decode(x, [5, 3], mask_index=-1)
np.testing.assert_array_equal(n(d1), n(d2))
np.testing.assert_array_equal(n(d1), greedy_ref(x, [5, 3], True, 3)[0])
from keras.src.backend.common import dtypes
assert n(s1).dtype == np.dtype(dtypes.result_type("float64", "float32"))
# Symbolic: shapes and dtypes only.
kd, ks = ops.ctc_decode(keras.KerasTensor((None, 6, 4)), keras.KerasTensor((None,), "int32"))
assert kd.shape == (1, None, 6) and ks.shape == (None, 1) and kd.dtype == "int32", (kd, ks)
print("ok")
'''

CTC_BEAM = r'''
import itertools
import numpy as np, keras
from keras import ops
import scipy.special as sp
n = ops.convert_to_numpy
rng = np.random.default_rng(1)

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

for trial in range(12):
    b, t, c = 2, int(rng.integers(1, 5)), int(rng.integers(2, 4))
    x = rng.standard_normal((b, t, c)) * 2
    lengths = rng.integers(1, t + 1, size=b)
    blank = int(rng.integers(0, c))
    top = 3
    # A beam wider than the number of prefixes makes prefix beam search exact.
    d, s = ops.ctc_decode(x, lengths, strategy="beam_search", beam_width=64, top_paths=top,
                          mask_index=blank)
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
# Keras' own expected values (ops/nn_test.py test_ctc_decode).
inputs = np.array([[[0.1, 0.4, 0.2, 0.4], [0.3, -0.3, 0.4, 0.2], [0.3, 0.2, 0.4, 0.3]],
                   [[0.7, 0.4, 0.3, 0.2], [0.3, 0.3, 0.4, 0.1], [0.6, -0.1, 0.1, 0.5]],
                   [[0.1, 0.4, 0.2, 0.7], [0.3, 0.3, -0.2, 0.7], [0.3, 0.2, 0.4, 0.1]]])
d, s = ops.ctc_decode(inputs, [3, 3, 1], strategy="beam_search", beam_width=4, top_paths=2)
np.testing.assert_array_equal(n(d), [[[1, 2, -1], [2, -1, -1], [3, -1, -1]],
                                     [[2, -1, -1], [3, -1, -1], [1, -1, -1]]])
np.testing.assert_allclose(n(s), [[-2.426537, -2.435596], [-2.127681, -2.182338],
                                  [-1.063386, -1.363386]], rtol=1e-5)
kd, ks = ops.ctc_decode(keras.KerasTensor((3, 6, 4)), keras.KerasTensor((3,), "int32"),
                        strategy="beam_search", top_paths=2)
assert kd.shape == (2, 3, 6) and ks.shape == (3, 2), (kd, ks)
# Bad input: clear errors.
def raises(fn, text):
    try:
        fn()
    except ValueError as e:
        assert text in str(e), str(e)
    else:
        raise AssertionError("no error: " + text)
x = np.zeros((2, 3, 4), "float32")
raises(lambda: ops.ctc_decode(x, [3, 3], strategy="nope"), "Invalid strategy")
raises(lambda: ops.ctc_decode(x[0], [3]), "inputs.shape=(3, 4)")
raises(lambda: ops.ctc_decode(x, [3, 3, 3]), "sequence_lengths.shape=(3,)")
raises(lambda: ops.ctc_decode(x, [3, 3], mask_index=4), "mask_index=4")
raises(lambda: ops.ctc_decode(x, [3, 3], strategy="beam_search", beam_width=2,
                              top_paths=3), "top_paths=3")
print("ok")
'''

DTYPES_ATTENTION = r'''
import numpy as np, keras, ml_dtypes
from keras import ops
import scipy.special as sp
from keras.src.backend.common import standardize_dtype as sd
n = ops.convert_to_numpy
# bfloat16 stays bfloat16 (NumPy promotes ml_dtypes' bfloat16 * Python float to float32).
xb = ops.ones((4,), "bfloat16")
for name in ("sigmoid", "relu6", "silu", "hard_sigmoid", "hard_silu", "glu", "elu",
             "softplus", "selu", "gelu", "leaky_relu", "log_sigmoid"):
    out = getattr(ops, name)(xb)
    assert sd(out.dtype) == "bfloat16", (name, out.dtype)
np.testing.assert_allclose(n(ops.sigmoid(xb)).astype("float32"), sp.expit(1.0), rtol=1e-2)
# core's table activations themselves (0-d too), with their gradients.
from core import autograd, nd
from core import np as cnp
for shape in ((), (3,)):
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
# ctc_loss: half precision inputs give float32 losses.
labels = np.array([[1, 2, 1]], "int32")
logits = np.array([[[0.4, 0.8, 0.4], [0.2, 0.8, 0.3], [0.9, 0.4, 0.5]]])
want = n(ops.ctc_loss(labels, logits.astype("float32"), [3], [3]))
for dt in ("float16", "bfloat16"):
    out = ops.ctc_loss(labels, logits.astype(dt), [3], [3])
    assert sd(out.dtype) == "float32", (dt, out.dtype)
    np.testing.assert_allclose(n(out), want, rtol=1e-2)

# Grouped-query attention: 4 query heads share 2 key/value heads.
rng = np.random.default_rng(0)
q = rng.standard_normal((2, 5, 4, 8)).astype("float32")
k = rng.standard_normal((2, 6, 2, 8)).astype("float32")
v = rng.standard_normal((2, 6, 2, 8)).astype("float32")
mask = rng.random((2, 4, 5, 6)) > 0.3
mask[..., 0] = True
def ref(q, k, v, mask):
    k = np.repeat(k, 2, axis=2); v = np.repeat(v, 2, axis=2)
    logits = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(8)
    logits = np.where(mask, logits, -np.inf)
    return np.einsum("bnts,bsnh->btnh", sp.softmax(logits, axis=-1), v)
out = ops.dot_product_attention(q, k, v, mask=mask)
np.testing.assert_allclose(n(out), ref(q, k, v, mask), rtol=1e-5, atol=1e-5)
# Gradients reach the shared key/value heads.
from kbackend.core import convert_to_tensor
tq, tk, tv = (convert_to_tensor(a) for a in (q, k, v))
for t in (tq, tk, tv):
    t.attach_grad()
with autograd.record():
    y = ops.dot_product_attention(tq, tk, tv, mask=mask)
    loss = (y * y).sum()
loss.backward()
eps = 1e-3
kp = k.copy(); kp[1, 2, 1, 3] += eps
km = k.copy(); km[1, 2, 1, 3] -= eps
fd = ((ref(q, kp, v, mask) ** 2).sum() - (ref(q, km, v, mask) ** 2).sum()) / (2 * eps)
np.testing.assert_allclose(tk.grad.asnumpy()[1, 2, 1, 3], fd, rtol=1e-2, atol=1e-3)
try:
    ops.dot_product_attention(q, k[:, :, :1].repeat(3, axis=2), v[:, :, :1].repeat(3, axis=2))
except ValueError as e:
    assert "multiple of the number of key/value heads" in str(e), str(e)
else:
    raise AssertionError("no error for 4 query heads over 3 key/value heads")
print("ok")
'''


def test_ctc_decode_greedy(hook_installed):
    assert check(run_python(CTC_GREEDY, "kbackend")).strip().endswith("ok")


def test_ctc_decode_beam_search(hook_installed):
    assert check(run_python(CTC_BEAM, "kbackend", timeout=300)).strip().endswith("ok")


def test_bfloat16_activations_ctc_loss_dtype_and_gqa(hook_installed):
    assert check(run_python(DTYPES_ATTENTION, "kbackend")).strip().endswith("ok")
