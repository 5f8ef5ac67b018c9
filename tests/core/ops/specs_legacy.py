"""Rows for MXNet 1.x's legacy operators: the loss heads (core/ops/nn/loss_heads.py).

The loss heads' gradients are rules, not the VJP of their forward, so their forward rows
run without the finite-difference check (``grad=False``); the gradient rules are checked
as values through their own operators' rows, and end to end through autograd and
``core.sym`` graphs (with a head gradient the heads must ignore) in
``tests/core/nd/test_loss_heads.py``.
"""
import numpy as np

from core import nd
from core.ops import F

from .op_db import OpSpec, Sample, rand

FLOATS = ("float32", "float64", "float16", "bfloat16")


def _f64(x):
    return np.asarray(x, np.float64)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def reg_forward_ref(kind):
    def ref(data, label, grad_scale=1.0):
        x = _f64(data)
        return (_sigmoid(x) if kind == "logistic" else x).astype(data.dtype)

    return ref


def reg_grad_ref(out, label, kind="linear", grad_scale=1.0):
    diff = _f64(out) - _f64(label).reshape(out.shape)
    if kind == "mae":
        diff = np.where(diff > 0, 1.0, -1.0)
    num_output = label.size // label.shape[0]
    return (diff * float(np.float32(grad_scale) / np.float32(num_output))).astype(out.dtype)


def make_loss_grad_ref(data, grad_scale=1.0, valid_thresh=0.0, normalization="null"):
    if normalization == "batch":
        scale = grad_scale / data.shape[0]
    elif normalization == "valid":
        scale = grad_scale / max(1, int((_f64(data) > valid_thresh).sum()))
    else:
        scale = grad_scale
    return np.full(data.shape, scale).astype(data.dtype)


def _reg_samples(rng, d):
    return [Sample(rand(rng, (4, 3), d), rand(rng, (4, 3), d)),
            Sample(rand(rng, (5, 1), d), rand(rng, (5,), d), grad_scale=2.0),
            Sample(rand(rng, (2, 3, 2), d), rand(rng, (2, 6), d), grad_scale=0.5)]


def _reg_grad_samples(rng, d):
    out = []
    for kind in ("linear", "logistic", "mae"):
        for s in _reg_samples(rng, d):
            out.append(Sample(*s.args, kind=kind, **s.kwargs))
    tie = rand(rng, (3, 2), d)
    out.append(Sample(tie, tie.copy(), kind="mae", name="ties give -1"))
    return out


def _ml_samples(rng, d):
    return [Sample(rand(rng, (4, 3), d)),
            Sample(rand(rng, (4, 3), d), grad_scale=3.0, normalization="batch"),
            Sample(rand(rng, (2, 5), d), normalization="valid", valid_thresh=0.5),
            Sample(rand(rng, (2, 5), d, -2, -1), normalization="valid", name="none valid")]


SPECS = [
    OpSpec("LinearRegressionOutput", lambda *a, **k: nd.LinearRegressionOutput(*a, **k),
           reg_forward_ref("linear"), _reg_samples, dtypes=FLOATS, grad=False),
    OpSpec("LogisticRegressionOutput", lambda *a, **k: nd.LogisticRegressionOutput(*a, **k),
           reg_forward_ref("logistic"), _reg_samples, dtypes=FLOATS, grad=False),
    OpSpec("MAERegressionOutput", lambda *a, **k: nd.MAERegressionOutput(*a, **k),
           reg_forward_ref("mae"), _reg_samples, dtypes=FLOATS, grad=False),
    OpSpec("_regression_output_grad", lambda *a, **k: F._regression_output_grad(*a, **k),
           reg_grad_ref, _reg_grad_samples, dtypes=FLOATS, grad=False),
    OpSpec("MakeLoss", lambda x, **k: nd.MakeLoss(x, **k), lambda x, **k: x, _ml_samples,
           dtypes=FLOATS, grad=False),
    OpSpec("_make_loss_grad", lambda x, **k: F._make_loss_grad(x, **k), make_loss_grad_ref,
           _ml_samples, dtypes=FLOATS, grad=False),
]
