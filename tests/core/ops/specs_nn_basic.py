"""Rows for the dense layer, activations, the softmax family, dropout and embedding
(core/ops/nn/fc.py, activation.py, bias_act.py, softmax.py, dropout.py, embedding.py;
core/ops/act_grad.py)."""
import math

import numpy as np
import pytest
import scipy.special as sp

import core
from core import autograd, nd
from core.ops import F

from .op_db import OpSpec, Sample, away_from, rand

FLOATS = ("float32", "float64", "float16", "bfloat16")


def _f64(x):
    return np.asarray(x, np.float64)


# ----------------------------------------------------------------- FullyConnected
def fc_ref(x, w, b=None, num_hidden=None, no_bias=False, flatten=True):
    x2 = x.reshape(x.shape[0], -1) if flatten else x
    out = _f64(x2) @ _f64(w).T
    if b is not None and not no_bias:
        out = out + b
    return out.astype(x.dtype)


def _fc_samples(rng, d):
    return [
        Sample(rand(rng, (4, 5), d), rand(rng, (3, 5), d), rand(rng, (3,), d), num_hidden=3),
        Sample(rand(rng, (2, 3, 4), d), rand(rng, (6, 12), d), rand(rng, (6,), d)),
        Sample(rand(rng, (2, 3, 4), d), rand(rng, (5, 4), d), rand(rng, (5,), d),
               flatten=False),
        Sample(rand(rng, (2, 2, 3, 4), d), rand(rng, (2, 4), d), None, no_bias=True,
               flatten=False),
        Sample(rand(rng, (3, 4), d), rand(rng, (2, 4), d), rand(rng, (2,), d), num_hidden=2,
               no_bias=True, diff=[0, 1]),
        Sample(rand(rng, (1, 7), d), rand(rng, (1, 7), d), rand(rng, (1,), d)),
    ]


# ----------------------------------------------------------------- activations
_SELU_A, _SELU_L = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
_C = math.sqrt(2 / math.pi)


def _elu(x, a):
    return np.where(x > 0, x, a * np.expm1(np.minimum(x, 0)))


def _gelu(x, approximate=False):
    if approximate:
        return 0.5 * x * (1 + np.tanh(_C * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + sp.erf(x / math.sqrt(2)))


ACT_REFS = {
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": sp.expit,
    "tanh": np.tanh,
    "softrelu": lambda x: np.logaddexp(0, x),
    "softsign": lambda x: x / (1 + np.abs(x)),
    "log_sigmoid": lambda x: -np.logaddexp(0, -x),
    "mish": lambda x: x * np.tanh(np.logaddexp(0, x)),
}


def _act_ref(x, act_type="relu"):
    return ACT_REFS[act_type](_f64(x)).astype(x.dtype)


def _leaky_ref(x, gamma=None, act_type="leaky", slope=0.25, lower_bound=0.125,
               upper_bound=0.334):
    w = _f64(x)
    if act_type == "leaky":
        out = np.where(w > 0, w, slope * w)
    elif act_type == "rrelu":
        out = np.where(w > 0, w, (lower_bound + upper_bound) / 2 * w)
    elif act_type == "prelu":
        g = gamma.reshape((1, -1) + (1,) * (x.ndim - 2)) if x.ndim > 1 else gamma
        out = np.where(w > 0, w, g * w)
    elif act_type == "elu":
        out = _elu(w, slope)
    elif act_type == "selu":
        out = _SELU_L * _elu(w, _SELU_A)
    else:
        out = _gelu(w, act_type == "gelu_tanh")
    return out.astype(x.dtype)


def _kinked(points=(0.0,), low=-2.0, high=2.0, gap=0.1):
    return lambda rng, s, d: away_from(rng, s, d, points=points, gap=gap, low=low, high=high)


def _unary_row(name, ref, gen=None, kwargs_list=({},), shapes=((), (5,), (3, 4), (2, 3, 4)),
               **kw):
    gen = gen or _kinked()
    fn = getattr(nd, name) if hasattr(nd, name) else getattr(F, name)

    def samples(rng, d):
        return [Sample(gen(rng, s, d), **k) for s in shapes for k in kwargs_list]

    return OpSpec(name, lambda x, **k: fn(x, **k),
                  lambda x, **k: ref(_f64(x), **k).astype(x.dtype), samples, dtypes=FLOATS, **kw)


def _activation_samples(rng, d):
    out = []
    for t in ACT_REFS:
        for s in ((3, 4), (2, 3, 2)):
            out.append(Sample(away_from(rng, s, d), act_type=t))
    return out


def _leaky_samples(rng, d):
    x = away_from
    return [
        Sample(x(rng, (3, 4), d), act_type="leaky", slope=0.1),
        Sample(x(rng, (2, 3, 4), d), act_type="leaky"),
        Sample(x(rng, (2, 3, 4), d), rand(rng, (3,), d, 0.1, 0.5), act_type="prelu"),
        Sample(x(rng, (2, 3), d), rand(rng, (1,), d, 0.1, 0.5), act_type="prelu"),
        Sample(x(rng, (5,), d), rand(rng, (5,), d, 0.1, 0.5), act_type="prelu"),
        Sample(x(rng, (3, 4), d), act_type="elu", slope=0.7),
        Sample(x(rng, (3, 4), d), act_type="selu"),
        Sample(x(rng, (3, 4), d), act_type="gelu"),
        Sample(x(rng, (3, 4), d), act_type="gelu_erf"),
        Sample(x(rng, (3, 4), d), act_type="gelu_tanh"),
        Sample(x(rng, (3, 4), d), act_type="rrelu"),  # inference: the mean slope
    ]


def _leaky_inference(*a, **k):
    # gradient checks record in training mode, where rrelu draws random slopes
    with autograd.predict_mode():
        return nd.LeakyReLU(*a, **k)


def _gelu_d1(x, approximate=False):
    if approximate:
        t = np.tanh(_C * (x + 0.044715 * x ** 3))
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _C * (1 + 3 * 0.044715 * x * x)
    return 0.5 * (1 + sp.erf(x / math.sqrt(2))) + x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)


def _gelu_grad_samples(rng, d):
    return [Sample(rand(rng, s, d, -3, 3), rand(rng, s, d), approximate=a)
            for s in ((5,), (3, 4)) for a in (False, True)]


# ----------------------------------------------------------------- fused bias + activation
_ACT_D1 = {  # act'(x) from y = act(x)
    "relu": lambda y: (y > 0).astype(np.float64),
    "sigmoid": lambda y: y * (1 - y),
    "tanh": lambda y: 1 - y * y,
}
_Y_RANGE = {"relu": (-1.0, 2.0), "sigmoid": (0.05, 0.95), "tanh": (-0.95, 0.95)}


def _act_grad_ref(g, y, act_type="relu"):
    return (_f64(g) * _ACT_D1[act_type](_f64(y))).astype(np.result_type(g, y))


def _act_grad_samples(rng, d):
    out = []
    for t, (lo, hi) in _Y_RANGE.items():
        for s in ((5,), (3, 4), (2, 3, 2)):
            y = away_from(rng, s, d, low=lo, high=hi) if t == "relu" else rand(rng, s, d, lo, hi)
            out.append(Sample(rand(rng, s, d), y, act_type=t))
    return out


def _bias_act_ref(x, b, act_type="relu", axis=-1):
    ax = axis % x.ndim
    z = _f64(x) + _f64(b).reshape(tuple(-1 if i == ax else 1 for i in range(x.ndim)))
    return ACT_REFS[act_type](z).astype(np.result_type(x, b))


def _bias_act_samples(rng, d):
    out = []
    for t in ("relu", "sigmoid", "tanh"):
        for shape, axis in (((4, 5), -1), ((2, 3, 4, 4), 1), ((2, 4, 4, 3), -1), ((6,), 0),
                            ((2, 3, 5), 1)):
            n = shape[axis]
            # |x| >= 0.1 and |b| < 0.05: x + b stays clear of relu's kink
            out.append(Sample(away_from(rng, shape, d), rand(rng, (n,), d, -0.05, 0.05),
                              act_type=t, axis=axis))
    return out


def _check_rrelu(spec, rng, arr):
    x = away_from(rng, (200, 50), "float64")
    lo, hi = 0.1, 0.4
    core.random.seed(3)
    a = arr(x, dtype="float64")
    a.attach_grad()
    with autograd.record():  # training mode: random slopes
        y = nd.LeakyReLU(a, act_type="rrelu", lower_bound=lo, upper_bound=hi)
    y.backward(nd.ones(y.shape, dtype="float64"))
    yv, gv = y.asnumpy(), a.grad.asnumpy()
    neg = x < 0
    slopes = yv[neg] / x[neg]
    assert np.allclose(yv[~neg], x[~neg])
    assert slopes.min() >= lo and slopes.max() <= hi
    assert abs(slopes.mean() - (lo + hi) / 2) < 0.01
    assert slopes.std() > 0.05  # one slope per element, not one per call
    # the gradient reuses the drawn slopes
    np.testing.assert_allclose(gv[neg], slopes)
    np.testing.assert_allclose(gv[~neg], 1.0)
    core.random.seed(3)
    with autograd.train_mode():
        again = nd.LeakyReLU(nd.array(x, dtype="float64"), act_type="rrelu", lower_bound=lo,
                             upper_bound=hi)
    np.testing.assert_array_equal(again.asnumpy(), yv)  # arr's array against a contiguous one
    out, slopes_out = F._rrelu(arr(x[:3, :4]), lower_bound=lo, upper_bound=hi)
    assert out.shape == slopes_out.shape == (3, 4)
    with pytest.raises(ValueError, match="LeakyReLU"):
        F._rrelu(nd.array(x[:3]), lower_bound=0.5, upper_bound=0.1)


# ----------------------------------------------------------------- softmax family
def _mask(shape, length, axis):
    n = shape[axis]
    pos = np.arange(n).reshape((n,) + (1,) * (len(shape) - 1 - axis % len(shape)))
    return pos < np.expand_dims(np.asarray(length).astype(np.int64), axis)


def softmax_ref(x, length=None, axis=-1, temperature=None, dtype=None, use_length=False,
                log=False):
    w = _f64(x) / (temperature or 1.0)
    mask = _mask(x.shape, length, axis) if use_length else np.ones(x.shape, bool)
    w = np.where(mask, w, -np.inf)
    m = np.max(w, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(w - m)
    s = e.sum(axis=axis, keepdims=True)
    s = np.where(s == 0, 1, s)
    out = (w - m - np.log(s)) if log else e / s
    out = np.where(mask, out, 0)
    return out.astype(dtype or x.dtype)


def _sm_samples(rng, d):
    return [
        Sample(rand(rng, (3, 4), d)),
        Sample(rand(rng, (5,), d)),
        Sample(rand(rng, (2, 3, 4), d), axis=1),
        Sample(rand(rng, (2, 3, 4), d), axis=0),
        Sample(rand(rng, (3, 4), d), temperature=2.5),
        Sample(rand(rng, (3, 4), d, -50, 50)),  # needs the max shift in float32
        Sample(rand(rng, (3, 4), d), np.array([1, 4, 2]), use_length=True),
        Sample(rand(rng, (2, 3, 4), d), np.array([[1, 3, 0, 2], [2, 2, 3, 1]]), axis=1,
               use_length=True),
        Sample(rand(rng, (2, 3), d), dtype="float64"),
    ]


def _length_mask_ref(x, length, axis=-1, dtype="float32"):
    return _mask(x.shape, length, axis).astype(dtype)


# ----------------------------------------------------------------- Dropout
def _check_dropout(spec, rng, arr):
    x = rand(rng, (400, 300), "float32") + 3.0  # no zeros in the input
    a = arr(x)
    # outside training: the input itself, no draw
    assert nd.Dropout(a, p=0.5) is a
    with autograd.train_mode():
        assert nd.Dropout(a, p=0.0) is a
        core.random.seed(11)
        y = nd.Dropout(a, p=0.3).asnumpy()
    kept = y != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(y[kept], x[kept] / 0.7, rtol=1e-6)
    # reproducible after seeding; mode='always' drops outside training too
    core.random.seed(11)
    y2 = nd.Dropout(a, p=0.3, mode="always").asnumpy()
    np.testing.assert_array_equal(y, y2)
    # arr's array (a view in test_noncontiguous) drops as a contiguous copy does, and
    # out= may be the input itself
    core.random.seed(11)
    np.testing.assert_array_equal(nd.Dropout(nd.array(x), p=0.3, mode="always").asnumpy(), y)
    c = arr(x)
    core.random.seed(11)
    assert nd.Dropout(c, p=0.3, mode="always", out=c) is c
    np.testing.assert_array_equal(c.asnumpy(), y)
    # the operator itself: (out, mask), mask reused by the gradient
    for d in FLOATS:
        b = arr(x[:20, :10], dtype=d)
        b.attach_grad()
        with autograd.record():
            out, mask = F.Dropout(b, p=0.4)
        assert out.dtype == mask.dtype == np.dtype(d)
        head = rng.standard_normal(out.shape).astype(d)
        out.backward(nd.array(head, dtype=d))
        np.testing.assert_allclose(b.grad.asnumpy(), head * mask.asnumpy(), rtol=1e-6)
        np.testing.assert_allclose(out.asnumpy(), x[:20, :10].astype(d) * mask.asnumpy(),
                                   rtol=1e-6)
    # spatial dropout: one draw per (n, c), shared along axes 2 and 3
    with autograd.train_mode():
        z = nd.Dropout(nd.ones((8, 16, 3, 5)), p=0.5, axes=(2, 3)).asnumpy()
    per_map = z.reshape(8, 16, -1)
    assert (per_map == per_map[:, :, :1]).all()
    assert 0 < (per_map[:, :, 0] == 0).mean() < 1
    out, mask = F.Dropout(nd.ones((4, 6)), p=0.5, axes=(0,))
    assert mask.shape == (1, 6)
    # the training attribute: a copy and a mask of ones when off
    out, mask = F.Dropout(a, p=0.5, training=False)
    assert out is not a and np.array_equal(out.asnumpy(), x) and (mask.asnumpy() == 1).all()
    with pytest.raises(ValueError, match="Dropout"):
        F.Dropout(a, p=1.5)
    with pytest.raises(ValueError, match="Dropout"):
        nd.Dropout(a, p=0.5, mode="sometimes")


# ----------------------------------------------------------------- Embedding
def _emb_samples(rng, d):
    return [
        Sample(rng.integers(0, 5, size=(3, 4)), rand(rng, (5, 3), d)),
        Sample(rng.integers(0, 4, size=(6,)).astype(d), rand(rng, (4, 2), d), input_dim=4,
               output_dim=2, diff=[1]),  # MXNet passes float ids
        Sample(rng.integers(0, 50, size=(64, 16)), rand(rng, (50, 8), d)),  # the CSC path
        Sample(np.array(2), rand(rng, (3, 4), d)),
    ]


def _emb_ref(ids, w, **_):
    return w[np.asarray(ids).astype(np.int64)]


def _emb_grad_ref(ids, g, input_dim=1):
    out = np.zeros((input_dim, g.shape[-1]), np.float64)
    np.add.at(out, np.asarray(ids).astype(np.int64).ravel(), g.reshape(-1, g.shape[-1]))
    return out.astype(g.dtype)


def _emb_grad_samples(rng, d):
    return [
        Sample(rng.integers(0, 5, size=(3, 4)), rand(rng, (3, 4, 3), d), input_dim=5),
        Sample(rng.integers(0, 50, size=(64, 16)), rand(rng, (64, 16, 8), d), input_dim=50),
        Sample(np.array([1, 1, 1]), rand(rng, (3, 2), d), input_dim=2),
    ]


SPECS = [
    OpSpec("FullyConnected", lambda *a, **k: nd.FullyConnected(*a, **k), fc_ref, _fc_samples,
           dtypes=FLOATS, rtol=1e-5),
    OpSpec("Activation", lambda x, **k: nd.Activation(x, **k), _act_ref, _activation_samples,
           dtypes=FLOATS),
    OpSpec("_act_grad", lambda g, y, **k: F._act_grad(g, y, **k), _act_grad_ref,
           _act_grad_samples, dtypes=FLOATS),
    OpSpec("_bias_act", lambda x, b, **k: F._bias_act(x, b, **k), _bias_act_ref,
           _bias_act_samples, dtypes=FLOATS),
    OpSpec("LeakyReLU", _leaky_inference, _leaky_ref, _leaky_samples, dtypes=FLOATS),
    OpSpec("_rrelu", None, None, None, check=_check_rrelu),
    _unary_row("softplus", lambda x: np.logaddexp(0, x),
               gen=lambda r, s, d: rand(r, s, d, -30, 30)),
    _unary_row("log_sigmoid", lambda x: -np.logaddexp(0, -x),
               gen=lambda r, s, d: rand(r, s, d, -30, 30)),
    _unary_row("elu", lambda x, alpha=1.0: _elu(x, alpha), kwargs_list=({}, {"alpha": 0.5})),
    _unary_row("selu", lambda x: _SELU_L * _elu(x, _SELU_A)),
    _unary_row("gelu", _gelu, kwargs_list=({}, {"approximate": True}),
               gen=lambda r, s, d: rand(r, s, d, -4, 4)),
    OpSpec("_gelu_grad", lambda x, g, **k: F._gelu_grad(x, g, **k),
           lambda x, g, approximate=False: (_gelu_d1(_f64(x), approximate) * g).astype(x.dtype),
           _gelu_grad_samples, dtypes=FLOATS, rtol=1e-5),
    _unary_row("silu", lambda x, beta=1.0: x * sp.expit(beta * x),
               kwargs_list=({}, {"beta": 1.7}), gen=lambda r, s, d: rand(r, s, d, -6, 6)),
    _unary_row("hard_sigmoid", lambda x, alpha=0.2, beta=0.5: np.clip(alpha * x + beta, 0, 1),
               gen=_kinked((-2.5, 2.5), -4, 4), kwargs_list=({}, {"alpha": 0.5, "beta": 0.25})),
    _unary_row("hard_swish", lambda x: x * np.clip(x / 6 + 0.5, 0, 1),
               gen=_kinked((-3.0, 3.0), -5, 5)),
    _unary_row("relu6", lambda x: np.clip(x, 0, 6), gen=_kinked((0.0, 6.0), -2, 8)),
    _unary_row("mish", lambda x: x * np.tanh(np.logaddexp(0, x)),
               gen=lambda r, s, d: rand(r, s, d, -5, 5)),
    OpSpec("softmax", lambda *a, **k: nd.softmax(*a, **k), softmax_ref, _sm_samples,
           dtypes=FLOATS),
    OpSpec("log_softmax", lambda *a, **k: nd.log_softmax(*a, **k),
           lambda *a, **k: softmax_ref(*a, log=True, **k), _sm_samples, dtypes=FLOATS),
    OpSpec("_length_mask", lambda x, n, **k: F._length_mask(x, n, **k), _length_mask_ref,
           lambda rng, d: [Sample(rand(rng, (3, 4), d), np.array([0, 4, 2])),
                           Sample(rand(rng, (2, 3, 4), d), np.array([[1, 3, 0, 2], [2, 2, 3, 1]]),
                                  axis=1, dtype="float64")],
           dtypes=FLOATS, grad=False),
    OpSpec("Dropout", None, None, None, check=_check_dropout),
    OpSpec("Embedding", lambda *a, **k: nd.Embedding(*a, **k), _emb_ref, _emb_samples,
           dtypes=FLOATS),
    OpSpec("_embedding_grad", lambda i, g, **k: F._embedding_grad(i, g, **k), _emb_grad_ref,
           _emb_grad_samples, dtypes=FLOATS),
]
