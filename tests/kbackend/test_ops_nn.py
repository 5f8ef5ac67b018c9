"""kbackend nn: activations, losses, normalization, convolutions and pooling through
keras.ops, against NumPy/SciPy references.

The random inputs of each group come from one seeded generator, drawn in a fixed order
by a cached helper (``_*_inputs``), so that every case sees the same values whichever
tests run."""
from __future__ import annotations

import functools
import itertools

import keras
import numpy as np
import pytest
import scipy.special as sp
from keras import ops
from keras.src.backend.common.backend_utils import (
    compute_conv_transpose_padding_args_for_jax,
)

n = ops.convert_to_numpy


def close(g, w, tol):
    np.testing.assert_allclose(n(g), w, rtol=tol, atol=tol)
    assert n(g).dtype == np.asarray(w).dtype, (n(g).dtype, np.asarray(w).dtype)


def cf(x):
    return np.moveaxis(x, -1, 1)


# ------------------------------------------------ activations, losses, normalization

@functools.cache
def _act_inputs():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 5)).astype("float32") * 3
    tb = (rng.random((2, 5)) > 0.5).astype("float32")
    x = rng.standard_normal((4, 3, 2)).astype("float32")
    return a, tb, x


def test_activations():
    a, _, _ = _act_inputs()

    def c(g, w, tol=1e-5):
        close(g, w, tol)

    c(ops.relu6(a), np.clip(a, 0, 6))
    c(ops.tanh(a), np.tanh(a))
    c(ops.softplus(a), np.logaddexp(a, 0).astype("float32"))
    c(ops.softsign(a), a / (1 + np.abs(a)))
    c(ops.silu(a), a * sp.expit(a))
    c(ops.log_sigmoid(a), -np.logaddexp(-a, 0).astype("float32"))
    c(ops.leaky_relu(a), np.maximum(a, 0.2 * a))
    c(ops.hard_sigmoid(a), np.clip(a / 6 + 0.5, 0, 1))
    c(ops.hard_silu(a), a * np.clip(a / 6 + 0.5, 0, 1))
    c(ops.elu(a, 0.5), np.where(a >= 0, a, 0.5 * np.expm1(a)))
    c(ops.selu(a), (1.0507009873554805
                    * np.where(a >= 0, a, 1.6732632423543772 * np.expm1(a))).astype("float32"))
    c(ops.gelu(a, approximate=False), (a * (1 + sp.erf(a / np.sqrt(2))) / 2).astype("float32"))
    k = np.sqrt(2 / np.pi)
    c(ops.gelu(a), (0.5 * a * (1 + np.tanh(k * (a + 0.044715 * a ** 3)))).astype("float32"))
    c(ops.celu(a), (np.maximum(a, 0) + np.expm1(np.minimum(a, 0))).astype("float32"))
    c(ops.hard_tanh(a), np.clip(a, -1, 1))
    c(ops.glu(np.concatenate([a, a], 1)), a * sp.expit(a))
    c(ops.log_softmax(a), (a - sp.logsumexp(a, axis=-1, keepdims=True)).astype("float32"))


def test_one_hot_and_multi_hot():
    i = np.array([[0, 2], [1, -1]])
    oh = np.zeros((2, 2, 3), "float32")
    oh[0, 0, 0] = oh[0, 1, 2] = oh[1, 0, 1] = 1
    close(ops.one_hot(i, 3), oh, 1e-5)
    close(ops.one_hot(i, 3, axis=0), np.moveaxis(oh, -1, 0), 1e-5)
    close(ops.multi_hot(np.array([[0, 2], [1, 1]]), 3),
          np.array([[1, 0, 1], [0, 1, 0]], "float32"), 1e-5)


def bce(t, o, eps=1e-7):
    o = np.clip(o, eps, 1 - eps)
    return -(t * np.log(o) + (1 - t) * np.log(1 - o))


def test_losses():
    a, tb, _ = _act_inputs()
    eps = 1e-7
    t = np.eye(5, dtype="float32")[[1, 3]]
    p = sp.softmax(a, axis=-1).astype("float32")
    close(ops.categorical_crossentropy(t, a, from_logits=True),
          -(t * sp.log_softmax(a, -1)).sum(-1).astype("float32"), 1e-5)
    pp = p / p.sum(-1, keepdims=True)
    close(ops.categorical_crossentropy(t, p),
          -(t * np.log(np.clip(pp, eps, 1 - eps))).sum(-1), 1e-5)
    close(ops.sparse_categorical_crossentropy(np.array([1, 3]), a, from_logits=True),
          -(t * sp.log_softmax(a, -1)).sum(-1).astype("float32"), 1e-5)
    close(ops.sparse_categorical_crossentropy(np.array([[1], [3]]), p),
          -(t * np.log(np.clip(pp, eps, 1 - eps))).sum(-1), 1e-5)
    close(ops.binary_crossentropy(tb, sp.expit(a).astype("float32")),
          bce(tb, sp.expit(a)).astype("float32"), 1e-4)
    close(ops.binary_crossentropy(tb, a, from_logits=True),
          bce(tb, sp.expit(a)).astype("float32"), 1e-4)


def test_moments_and_batch_normalization():
    _, _, x = _act_inputs()
    m, v = ops.moments(x, axes=[0, 1])
    close(m, x.mean((0, 1)), 1e-5)
    close(v, x.var((0, 1)), 1e-4)
    m, v = ops.moments(x, axes=[0], keepdims=True)
    close(m, x.mean(0, keepdims=True), 1e-5)
    mu = x.mean((0, 1))
    var = x.var((0, 1))
    g = np.array([1.5, .5], "float32")
    b = np.array([.1, .2], "float32")
    close(ops.batch_normalization(x, mu, var, axis=-1, offset=b, scale=g),
          ((x - mu) / np.sqrt(var + 1e-3) * g + b).astype("float32"), 1e-4)


# ----------------------------------------------------------- convolutions, pooling

def same_pads(sizes, k, s, d):
    out = []
    for N, K, S, D in zip(sizes, k, s, d):
        ke = (K - 1) * D + 1
        tot = max((-(-N // S) - 1) * S + ke - N, 0)
        out.append((tot // 2, tot - tot // 2))
    return out


def ref_conv(x, w, s, padding, d):
    # x (N, *sp, C) ; w (*k, C/g, O)
    nsp = x.ndim - 2
    k = w.shape[:nsp]
    pads = same_pads(x.shape[1:-1], k, s, d) if padding == "same" else [(0, 0)] * nsp
    x = np.pad(x, [(0, 0)] + pads + [(0, 0)])
    C = x.shape[-1]
    cg = w.shape[-2]
    g = C // cg
    O = w.shape[-1]  # noqa: E741
    og = O // g
    outsp = [(x.shape[1 + i] - ((k[i] - 1) * d[i] + 1)) // s[i] + 1 for i in range(nsp)]
    out = np.zeros((x.shape[0], *outsp, O), np.float64)
    for pos in itertools.product(*[range(o) for o in outsp]):
        for off in itertools.product(*[range(kk) for kk in k]):
            idx = tuple(p * s[i] + off[i] * d[i] for i, p in enumerate(pos))
            patch = x[(slice(None),) + idx]  # (N, C)
            for gi in range(g):
                out[(slice(None),) + pos + (slice(gi * og, (gi + 1) * og),)] += (
                    patch[:, gi * cg:(gi + 1) * cg] @ w[off][:, gi * og:(gi + 1) * og])
    return out.astype("float32")


def ref_pool(x, k, s, padding, kind):
    nsp = x.ndim - 2
    pads = same_pads(x.shape[1:-1], k, s, (1,) * nsp) if padding == "same" else [(0, 0)] * nsp
    xp = np.pad(x.astype("float64"), [(0, 0)] + pads + [(0, 0)], constant_values=np.nan)
    outsp = [(xp.shape[1 + i] - k[i]) // s[i] + 1 for i in range(nsp)]
    out = np.zeros((x.shape[0], *outsp, x.shape[-1]))
    for pos in itertools.product(*[range(o) for o in outsp]):
        win = xp[(slice(None),) + tuple(slice(p * s[i], p * s[i] + k[i])
                                        for i, p in enumerate(pos))]
        win = win.reshape(x.shape[0], -1, x.shape[-1])
        out[(slice(None),) + pos] = np.nanmax(win, 1) if kind == "max" else np.nanmean(win, 1)
    return out.astype("float32")


CONV_CASES = [  # shape, kernel, strides, dilation, padding, input channels per group
    ((2, 7, 6, 3), (3, 2), (1, 1), (1, 1), "valid", 3),
    ((2, 7, 6, 4), (3, 3), (2, 2), (1, 1), "same", 2),
    ((1, 8, 8, 2), (3, 3), (1, 1), (2, 2), "same", 2),
    ((2, 9, 4), (3,), (2,), (1,), "same", 4),
    ((1, 5, 4, 4, 2), (2, 2, 2), (1, 1, 1), (1, 1, 1), "valid", 2),
]
POOL_CASES = [  # shape, pool size, strides, padding
    ((2, 6, 6, 3), (2, 2), None, "valid"),
    ((2, 7, 5, 3), (3, 3), (2, 2), "same"),
    ((2, 7, 3), (2,), (1,), "same"),
]


@functools.cache
def _conv_pool_inputs():
    rng = np.random.default_rng(0)
    conv = [(rng.standard_normal(shape).astype("float32"),
             rng.standard_normal(k + (cin_g, 4)).astype("float32"))
            for shape, k, _, _, _, cin_g in CONV_CASES]
    depthwise = (rng.standard_normal((2, 6, 6, 3)).astype("float32"),
                 rng.standard_normal((3, 3, 3, 2)).astype("float32"))
    pool = [rng.standard_normal(shape).astype("float32") for shape, *_ in POOL_CASES]
    cnn = rng.standard_normal((5, 8, 8, 1)).astype("float32")
    return conv, depthwise, pool, cnn


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_conv(case):
    _, k, s, d, pad, _ = CONV_CASES[case]
    x, w = _conv_pool_inputs()[0][case]
    want = ref_conv(x, w, s, pad, d)
    close(ops.conv(x, w, strides=s, padding=pad, dilation_rate=d), want, 1e-4)
    close(ops.conv(cf(x), w, strides=s, padding=pad, dilation_rate=d,
                   data_format="channels_first"), cf(want), 1e-4)


def test_depthwise_conv():
    # depthwise: kernel (*k, C, mult)
    x, w = _conv_pool_inputs()[1]
    want = ref_conv(x, w.reshape(3, 3, 1, 6), (1, 1), "same", (1, 1))
    close(ops.depthwise_conv(x, w, padding="same"), want, 1e-4)
    close(ops.depthwise_conv(cf(x), w, padding="same", data_format="channels_first"),
          cf(want), 1e-4)


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("case", range(len(POOL_CASES)))
def test_pool(case, kind):
    _, k, s, pad = POOL_CASES[case]
    x = _conv_pool_inputs()[2][case]
    f = {"max": ops.max_pool, "avg": ops.average_pool}[kind]
    want = ref_pool(x, k, s or k, pad, kind)
    close(f(x, k, s, pad), want, 1e-4)
    close(f(cf(x), k, s, pad, data_format="channels_first"), cf(want), 1e-4)


def test_keras_cnn_forward():
    xb = _conv_pool_inputs()[3]
    model = keras.Sequential([
        keras.Input((8, 8, 1)), keras.layers.Conv2D(4, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(), keras.layers.Flatten(),
        keras.layers.Dense(3, activation="softmax")])
    y = model.predict(xb, verbose=0)
    assert y.shape == (5, 3) and np.allclose(y.sum(-1), 1, atol=1e-5)
    W, B = model.layers[0].get_weights()
    D, DB = model.layers[-1].get_weights()
    h = np.maximum(ref_conv(xb, W, (1, 1), "same", (1, 1)) + B, 0)
    h = ref_pool(h, (2, 2), (2, 2), "valid", "max").reshape(5, -1) @ D + DB
    e = np.exp(h - h.max(-1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(-1, keepdims=True), atol=1e-5)


# ------------------------------------------------------------ conv_transpose, ctc

def ref_conv_transpose(x, w, s, padding, op, d):
    # x (N, *sp, C); w (*k, F, C); reference: scatter into the full output, then Keras crop
    nsp = x.ndim - 2
    k = w.shape[:nsp]
    pads = compute_conv_transpose_padding_args_for_jax(x.shape, w.shape, s, padding, op, d)
    ke = [(k[i] - 1) * d[i] + 1 for i in range(nsp)]
    full_sp = [(x.shape[1 + i] - 1) * s[i] + ke[i] for i in range(nsp)]
    full = np.zeros((x.shape[0], *full_sp, w.shape[-2]))
    for pos in itertools.product(*[range(m) for m in x.shape[1:-1]]):
        for off in itertools.product(*[range(kk) for kk in k]):
            idx = tuple(p * s[i] + off[i] * d[i] for i, p in enumerate(pos))
            full[(slice(None),) + idx] += x[(slice(None),) + pos] @ w[off].T
    for i, (lo, hi) in enumerate(pads):
        full = np.pad(full, [(0, 0)] * (1 + i) + [(0, max(hi - (ke[i] - 1), 0))]
                      + [(0, 0)] * (nsp - i))
        full = np.take(full, range(ke[i] - 1 - lo,
                                   ke[i] - 1 - lo + (x.shape[1 + i] - 1) * s[i] + 1 + lo + hi
                                   - ke[i] + 1), axis=1 + i)
    return full.astype("float32")


CONV_TRANSPOSE_CASES = [  # shape, kernel, strides, dilation, padding, output_padding
    ((2, 4, 5, 3), (3, 3), (2, 2), (1, 1), "same", None),
    ((2, 4, 5, 3), (3, 2), (2, 1), (1, 1), "valid", None),
    ((1, 5, 3), (4,), (3,), (1,), "valid", None),
    ((1, 5, 3), (3,), (2,), (1,), "same", 1),
    ((1, 4, 4, 2), (3, 3), (1, 1), (2, 2), "same", None),
]


@functools.cache
def _conv_transpose_inputs():
    rng = np.random.default_rng(0)
    return [(rng.standard_normal(shape).astype("float32"),
             rng.standard_normal(k + (4, shape[-1])).astype("float32"))
            for shape, k, *_ in CONV_TRANSPOSE_CASES]


@pytest.mark.parametrize("case", range(len(CONV_TRANSPOSE_CASES)))
def test_conv_transpose(case):
    _, _, s, d, pad, op = CONV_TRANSPOSE_CASES[case]
    x, w = _conv_transpose_inputs()[case]
    want = ref_conv_transpose(x, w, s, pad, op, d)
    got = ops.conv_transpose(x, w, strides=s, padding=pad, output_padding=op, dilation_rate=d)
    close(got, want, 1e-4)
    close(ops.conv_transpose(cf(x), w, strides=s, padding=pad, output_padding=op,
                             dilation_rate=d, data_format="channels_first"), cf(want), 1e-4)


def test_conv2d_transpose_layer_shape():
    m = keras.Sequential([keras.Input((4, 4, 2)),
                          keras.layers.Conv2DTranspose(3, 3, strides=2, padding="same")])
    assert m.predict(np.ones((1, 4, 4, 2), "float32"), verbose=0).shape == (1, 8, 8, 3)


def ref_ctc(logits, label, blank):
    lp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    T, C = lp.shape
    total = 0.0
    for path in itertools.product(range(C), repeat=T):
        col = [p for i, p in enumerate(path) if i == 0 or p != path[i - 1]]
        if [p for p in col if p != blank] == list(label):
            total += np.exp(sum(lp[t, p] for t, p in enumerate(path)))
    return -np.log(total)


@pytest.mark.parametrize("mask, tgt", [
    (0, [[1, 2, 0], [3, 3, 1]]), (3, [[1, 2, 0], [0, 0, 2]]), (2, [[1, 3, 0], [0, 3, 1]]),
])
def test_ctc_loss(mask, tgt):
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((2, 5, 4)).astype("float64")
    tgt = np.array(tgt)
    tl = np.array([2, 2])
    ol = np.array([5, 4])
    want = [ref_ctc(logits[b, :ol[b]], tgt[b, :tl[b]], mask) for b in range(2)]
    got = ops.ctc_loss(tgt, logits.astype("float32"), tl, ol, mask_index=mask)
    np.testing.assert_allclose(n(got), want, rtol=1e-4)
    assert n(got).dtype == np.float32


# ------------------------------------------ sparsemax, depth/space, attention, fit

@functools.cache
def _extra_inputs():
    rng = np.random.default_rng(0)
    z = rng.standard_normal((3, 5)).astype("float32")
    x = rng.standard_normal((2, 4, 6, 8)).astype("float32")
    q = rng.standard_normal((2, 3, 2, 4)).astype("float32")
    k = rng.standard_normal((2, 5, 2, 4)).astype("float32")
    v = rng.standard_normal((2, 5, 2, 4)).astype("float32")
    m = rng.random((2, 2, 3, 5)) > 0.3
    m[..., 0] = True
    return z, x, q, k, v, m


def ref_sparsemax(z):
    # Keras' formula (the same in its jax/numpy/torch backends)
    s = -np.sort(-z, -1)
    cs = np.cumsum(s, -1)
    r = np.arange(1, z.shape[-1] + 1)
    sup = s - (cs - 1) / r > 0
    k = sup.sum(-1, keepdims=True)
    tau = (np.where(sup, cs, 0).sum(-1, keepdims=True) - 1) / k
    return np.maximum(z - tau, 0).astype("float32")


def test_sparsemax():
    z = _extra_inputs()[0]
    close(ops.sparsemax(z), ref_sparsemax(z), 1e-5)


def test_depth_to_space_and_space_to_depth():
    x = _extra_inputs()[1]
    d2s = ops.depth_to_space(x, 2)
    assert n(d2s).shape == (2, 8, 12, 2)
    close(ops.space_to_depth(d2s, 2), x, 1e-5)
    close(ops.depth_to_space(x[:, :, :4, :4].transpose(0, 3, 1, 2), 2,
                             data_format="channels_first"),
          np.transpose(n(ops.depth_to_space(x[:, :, :4, :4], 2)), (0, 3, 1, 2)), 1e-5)


def ref_attention(q, k, v, mask=None, causal=False):
    lg = np.einsum("BTNH,BSNH->BNTS", q, k) / np.sqrt(q.shape[-1])
    keep = np.ones(lg.shape, bool)
    if mask is not None:
        keep &= mask
    if causal:
        keep &= np.tril(np.ones(lg.shape[-2:], bool))
    lg = np.where(keep, lg, -1e30)
    return np.einsum("BNTS,BSNH->BTNH", sp.softmax(lg, -1), v).astype("float32")


def test_dot_product_attention():
    _, _, q, k, v, m = _extra_inputs()
    close(ops.dot_product_attention(q, k, v), ref_attention(q, k, v), 1e-5)
    close(ops.dot_product_attention(q, k, v, mask=m), ref_attention(q, k, v, m), 1e-5)
    close(ops.dot_product_attention(q, k[:, :3], v[:, :3], is_causal=True),
          ref_attention(q, k[:, :3], v[:, :3], causal=True), 1e-5)


def test_keras_cnn_fit():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 8, 8, 1)).astype("float32")
    y = (x.mean((1, 2, 3)) > 0).astype("int32")
    model = keras.Sequential([
        keras.Input((8, 8, 1)), keras.layers.Conv2D(4, 3, padding="same", activation="gelu"),
        keras.layers.BatchNormalization(), keras.layers.MaxPooling2D(),
        keras.layers.Conv2DTranspose(2, 3, strides=2, padding="same"),
        keras.layers.AveragePooling2D(2), keras.layers.Flatten(), keras.layers.Dense(2)])
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    h = model.fit(x, y, epochs=5, batch_size=16, verbose=0)
    loss = h.history["loss"]
    assert loss[-1] < loss[0], loss


# --------------------------------------------------------------- adaptive pooling

def ref_adaptive(x, out, fn):
    # channels_last, torch-style bins
    sizes = x.shape[1:-1]
    res = np.zeros((x.shape[0], *out, x.shape[-1]), "float32")
    for pos in itertools.product(*[range(o) for o in out]):
        sl = tuple(slice((p * L) // o, -((-(p + 1) * L) // o))
                   for p, L, o in zip(pos, sizes, out))
        win = x[(slice(None),) + sl].reshape(x.shape[0], -1, x.shape[-1])
        res[(slice(None),) + pos] = fn(win, axis=1)
    return res


ADAPTIVE_CASES = [((2, 7, 3), (3,)), ((2, 7, 5, 3), (3, 2)), ((1, 5, 4, 6, 2), (2, 3, 4))]


@functools.cache
def _adaptive_inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape).astype("float32") for shape, _ in ADAPTIVE_CASES]


@pytest.mark.parametrize("kind", ["average", "max"])
@pytest.mark.parametrize("case", range(len(ADAPTIVE_CASES)))
def test_adaptive_pooling(case, kind):
    out = ADAPTIVE_CASES[case][1]
    x = _adaptive_inputs()[case]
    f, ref = {"average": (ops.adaptive_average_pool, np.mean),
              "max": (ops.adaptive_max_pool, np.max)}[kind]
    want = ref_adaptive(x, out, ref)
    np.testing.assert_allclose(n(f(x, out)), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(n(f(np.moveaxis(x, -1, 1), out, data_format="channels_first")),
                               np.moveaxis(want, -1, 1), rtol=1e-5, atol=1e-6)
