"""Rows for the losses (core/ops/nn/loss.py) and the CTC loss (core/ops/nn/ctc.py)."""
import itertools

import numpy as np

from core import nd
from core.dtypes import is_float
from core.ops import F

from .op_db import OpSpec, Sample, away_from, rand

FLOATS = ("float32", "float64", "float16", "bfloat16")


def _f64(x):
    return np.asarray(x, np.float64)


def _log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def _onehot_along(label, classes, axis, ndim):
    """one-hot of integer ``label`` (the data's shape without ``axis``) along ``axis``."""
    oh = np.asarray(label).astype(np.int64)[..., None] == np.arange(classes)
    return np.moveaxis(oh, -1, axis % ndim)


# ----------------------------------------------------------------- softmax cross-entropy
def ce_ref(x, label, axis=-1, sparse=True, ignore_label=None):
    logp = _log_softmax(_f64(x), axis)
    if not sparse:
        return (-(label * logp).sum(axis=axis)).astype(x.dtype)
    ax = axis % x.ndim
    lab = np.asarray(label).reshape(x.shape[:ax] + x.shape[ax + 1:]).astype(np.int64)
    keep = np.ones(lab.shape, bool) if ignore_label is None else lab != ignore_label
    safe = np.where(keep, lab, 0)
    picked = np.take_along_axis(logp, np.expand_dims(safe, ax), ax).squeeze(ax)
    return np.where(keep, -picked, 0).astype(x.dtype)


def ce_grad_ref(x, label, g, axis=-1, sparse=True, ignore_label=None):
    ax = axis % x.ndim
    p = np.exp(_log_softmax(_f64(x), ax))
    ge = np.expand_dims(g, ax)
    if not sparse:
        return ((p * label.sum(axis=ax, keepdims=True) - label) * ge).astype(x.dtype)
    lab = np.asarray(label).reshape(x.shape[:ax] + x.shape[ax + 1:]).astype(np.int64)
    keep = np.ones(lab.shape, bool) if ignore_label is None else lab != ignore_label
    grad = p - _onehot_along(np.where(keep, lab, 0), x.shape[ax], ax, x.ndim)
    return (grad * np.expand_dims(keep, ax) * ge).astype(x.dtype)


def _dist(rng, shape):
    z = rng.random(shape) + 0.1
    return z / z.sum(axis=-1, keepdims=True)


def _ce_samples(rng, d):
    return [
        Sample(rand(rng, (4, 5), d), rng.integers(0, 5, size=(4,))),
        Sample(rand(rng, (2, 5, 3), d), rng.integers(0, 5, size=(2, 3)), axis=1),
        Sample(rand(rng, (3, 4), d), rng.integers(0, 4, size=(3, 1))),
        Sample(rand(rng, (6, 3), d), np.array([0, -1, 2, 1, -1, 2]), ignore_label=-1),
        Sample(rand(rng, (4, 3), d), rng.integers(0, 3, size=(4,)).astype(d), diff=[0]),
        Sample(rand(rng, (3, 4), d), _dist(rng, (3, 4)).astype(d), sparse=False),
        Sample(rand(rng, (3, 4), d, -40, 40), rng.integers(0, 4, size=(3,))),
    ]


def _ce_grad_samples(rng, d):
    return [
        Sample(rand(rng, (4, 5), d), rng.integers(0, 5, size=(4,)), rand(rng, (4,), d)),
        Sample(rand(rng, (2, 5, 3), d), rng.integers(0, 5, size=(2, 3)), rand(rng, (2, 3), d),
               axis=1),
        Sample(rand(rng, (5, 3), d), np.array([0, -1, 2, 1, -1]), rand(rng, (5,), d),
               ignore_label=-1),
        Sample(rand(rng, (3, 4), d), _dist(rng, (3, 4)).astype(d), rand(rng, (3,), d),
               sparse=False),
    ]


def _sce_ref(x, label):
    return np.array([ce_ref(x, label).astype(np.float64).sum()]).astype(x.dtype)


# ----------------------------------------------------------------- SoftmaxOutput
def _so_rows(x, multi_output, preserve_shape, prob):
    """(rows, classes) view of x as SoftmaxOutput sees it, and how to undo it."""
    if multi_output:
        moved = np.moveaxis(x, 1, -1)
        return moved.reshape(-1, x.shape[1]), lambda r: np.moveaxis(r.reshape(moved.shape), -1, 1)
    if preserve_shape:
        return x.reshape(-1, x.shape[-1]), lambda r: r.reshape(x.shape)
    return x.reshape(x.shape[0], -1), lambda r: r.reshape(x.shape)


def softmax_output_ref(x, label, multi_output=False, preserve_shape=False, **_):
    rows, back = _so_rows(_f64(x), multi_output, preserve_shape, False)
    return back(np.exp(_log_softmax(rows))).astype(x.dtype)


def softmax_output_grad_ref(out, label, g, grad_scale=1.0, ignore_label=-1.0,
                            multi_output=False, use_ignore=False, preserve_shape=False,
                            normalization="null", out_grad=False, smooth_alpha=0.0):
    prob = label.shape == out.shape
    rows, back = _so_rows(_f64(out), multi_output, preserve_shape, prob)
    if prob:
        grad = rows - _so_rows(_f64(label), multi_output, preserve_shape, prob)[0]
        grad = grad * grad_scale
    else:
        n, k = rows.shape
        lab = np.asarray(label).reshape(-1).astype(np.int64)
        target = np.zeros((n, k))
        for i, c in enumerate(lab):
            if use_ignore and c == ignore_label:
                continue
            if smooth_alpha:
                target[i] = smooth_alpha / (k - 1)
                target[i, c] = 1 - smooth_alpha
            else:
                target[i, c] = 1
        grad = rows - target
        if use_ignore:
            grad[lab == ignore_label] = 0
        spatial = n // out.shape[0] if multi_output else 1  # MXNet 1.9's multi_output rule
        count = {"null": spatial, "batch": n,
                 "valid": max(int((lab != ignore_label).sum()), 1)}[normalization]
        grad = grad * grad_scale / count
    if out_grad:
        grad = grad * _so_rows(_f64(g), multi_output, preserve_shape, prob)[0]
    return back(grad).astype(out.dtype)


def _softmax_rows(rng, shape, d, axis):
    x = rng.uniform(-2, 2, size=shape)
    return np.exp(_log_softmax(x, axis)).astype(d)


def _so_samples(rng, d):
    return [
        Sample(rand(rng, (4, 5), d), rng.integers(0, 5, size=(4,))),
        Sample(rand(rng, (2, 3, 4), d), rng.integers(0, 3, size=(2, 4)), multi_output=True),
        Sample(rand(rng, (2, 3, 4), d), rng.integers(0, 4, size=(2, 3)), preserve_shape=True),
        Sample(rand(rng, (2, 3, 2), d), rng.integers(0, 6, size=(2,)).astype(d)),  # flattened
        Sample(rand(rng, (3, 4), d), np.array([1, -1, 3]), use_ignore=True),
        Sample(rand(rng, (3, 4), d), _softmax_rows(rng, (3, 4), d, -1)),  # probabilities
    ]


def _sog_samples(rng, d):
    p = _softmax_rows
    return [
        Sample(p(rng, (4, 5), d, 1), rng.integers(0, 5, size=(4,)), rand(rng, (4, 5), d),
               grad_scale=2.0),
        Sample(p(rng, (4, 5), d, 1), np.array([1, -1, 4, -1]), rand(rng, (4, 5), d),
               use_ignore=True, normalization="valid"),
        Sample(p(rng, (4, 5), d, 1), np.array([1, -1, 4, -1]), rand(rng, (4, 5), d),
               normalization="valid"),
        Sample(p(rng, (4, 5), d, 1), rng.integers(0, 5, size=(4,)), rand(rng, (4, 5), d),
               normalization="batch", smooth_alpha=0.1),
        Sample(p(rng, (2, 3, 4), d, 1), rng.integers(0, 3, size=(2, 4)), rand(rng, (2, 3, 4), d),
               multi_output=True, normalization="batch", use_ignore=True, ignore_label=2),
        Sample(p(rng, (2, 3, 4), d, -1), rng.integers(0, 4, size=(2, 3)),
               rand(rng, (2, 3, 4), d), preserve_shape=True, out_grad=True),
        Sample(p(rng, (3, 4), d, 1), p(rng, (3, 4), d, 1), rand(rng, (3, 4), d),
               grad_scale=0.5),
    ]


# ----------------------------------------------------------------- binary cross-entropy
def bce_ref(x, z, pos_weight=None, from_logits=True):
    dt = np.result_type(*[a.dtype for a in (x, z, pos_weight)
                          if isinstance(a, np.ndarray) and is_float(a.dtype)])
    x, z = _f64(x), _f64(z)
    w = 1.0 if pos_weight is None else _f64(pos_weight)
    if from_logits:
        p_log, q_log = -np.logaddexp(0, -x), -np.logaddexp(0, x)
        return (-(w * z * p_log + (1 - z) * q_log)).astype(dt)
    eps = 1e-12
    return (-(w * z * np.log(x + eps) + (1 - z) * np.log(1 - x + eps))).astype(dt)


def _bce_samples(rng, d):
    lab = lambda s: rng.integers(0, 2, size=s).astype(d)
    return [
        Sample(rand(rng, (3, 4), d), lab((3, 4))),
        Sample(rand(rng, (3, 4), d, -60, 60), rng.random((3, 4)).astype(d)),  # soft labels
        Sample(rand(rng, (3, 4), d), lab((3, 4)), rand(rng, (4,), d, 0.5, 3.0)),
        Sample(rand(rng, (2, 3), d), rng.integers(0, 2, size=(2, 3))),  # integer labels
        Sample(rand(rng, (3, 4), d, 0.05, 0.95), lab((3, 4)), from_logits=False),
        Sample(rand(rng, (3, 4), d, 0.05, 0.95), lab((3, 4)), rand(rng, (3, 4), d, 0.5, 3.0),
               from_logits=False),
    ]


def smooth_l1_ref(x, scalar=1.0):
    s2 = scalar * scalar
    w = _f64(x)
    return np.where(np.abs(w) < 1 / s2, 0.5 * s2 * w * w, np.abs(w) - 0.5 / s2).astype(x.dtype)


# ----------------------------------------------------------------- CTC
def ctc_brute(x, label, data_lengths=None, label_lengths=None, use_data_lengths=False,
              use_label_lengths=False, blank_label="first"):
    """-log p(label | x) by summing the probability of every alignment."""
    t_max, n, c = x.shape
    blank, pad = (0, 0) if blank_label == "first" else (c - 1, -1)
    out = []
    for i in range(n):
        t_n = int(data_lengths[i]) if use_data_lengths else t_max
        lab = [int(v) for v in np.asarray(label[i])]
        if use_label_lengths:
            lab = lab[:int(label_lengths[i])]
        elif pad in lab:
            lab = lab[:lab.index(pad)]
        y = np.exp(_log_softmax(_f64(x[:t_n, i]), -1))
        total = 0.0
        for path in itertools.product(range(c), repeat=t_n):
            merged = [k for j, k in enumerate(path) if j == 0 or k != path[j - 1]]
            if [k for k in merged if k != blank] == lab:
                total += np.prod(y[np.arange(t_n), list(path)])
        out.append(-np.log(total) if total > 0 else np.inf)
    return np.array(out).astype(x.dtype)


def _ctc_samples(rng, d):
    return [
        Sample(rand(rng, (5, 3, 4), d), np.array([[1, 2], [3, 3], [2, 0]])),
        Sample(rand(rng, (4, 2, 3), d), np.array([[0, 1, -1], [1, -1, -1]]),
               blank_label="last"),
        Sample(rand(rng, (5, 3, 3), d), np.array([[1, 2, 1], [2, 2, 2], [1, 1, 2]]), None,
               np.array([2, 0, 3]), use_label_lengths=True),
        Sample(rand(rng, (5, 3, 3), d), np.array([[1, 2], [2, 0], [1, 1]]),
               np.array([5, 3, 4]), use_data_lengths=True),
        Sample(rand(rng, (4, 2, 3), d), np.array([[1.0, 2.0], [2.0, 0.0]]).astype(d), diff=[0]),
    ]


SPECS = [
    OpSpec("softmax_cross_entropy_with_logits",
           lambda *a, **k: nd.softmax_cross_entropy_with_logits(*a, **k), ce_ref, _ce_samples,
           dtypes=FLOATS, rtol=1e-5, atol=1e-5),
    OpSpec("_softmax_ce_grad", lambda *a, **k: F._softmax_ce_grad(*a, **k), ce_grad_ref,
           _ce_grad_samples, dtypes=FLOATS),
    OpSpec("softmax_cross_entropy", lambda *a: nd.softmax_cross_entropy(*a), _sce_ref,
           lambda rng, d: [Sample(rand(rng, (4, 5), d), rng.integers(0, 5, size=(4,))),
                           Sample(rand(rng, (1, 3), d), np.array([2.0]).astype(d), diff=[0])],
           dtypes=FLOATS, atol=1e-5),
    # its gradient ignores the head gradient (a loss layer): checked in test_nn_basic.py
    OpSpec("SoftmaxOutput", lambda *a, **k: nd.SoftmaxOutput(*a, **k), softmax_output_ref,
           _so_samples, dtypes=FLOATS, grad=False),
    OpSpec("_softmax_output_grad", lambda *a, **k: F._softmax_output_grad(*a, **k),
           softmax_output_grad_ref, _sog_samples, dtypes=FLOATS, grad=False),
    OpSpec("sigmoid_binary_cross_entropy",
           lambda *a, **k: nd.sigmoid_binary_cross_entropy(*a, **k), bce_ref, _bce_samples,
           dtypes=FLOATS, atol=1e-5),
    OpSpec("smooth_l1", lambda x, **k: nd.smooth_l1(x, **k), smooth_l1_ref,
           lambda rng, d: [Sample(away_from(rng, (3, 4), d, points=(-1, 1))),
                           Sample(away_from(rng, (5,), d, points=(-0.25, 0.25), gap=0.05),
                                  scalar=2.0),
                           Sample(away_from(rng, (2, 3), d, points=(-4, 4), low=-6, high=6),
                                  scalar=0.5)],
           dtypes=FLOATS),
    OpSpec("CTCLoss", lambda *a, **k: nd.CTCLoss(*a, **k), ctc_brute, _ctc_samples,
           dtypes=FLOATS, rtol=1e-4, covers=("_ctc_loss_grad",)),
]
