"""Rows for ``core.npx`` (MXNet 2.0's signatures over registry operators): each row runs
an ``npx`` function through the table's value, gradient, non-contiguous and hybridized
checks. The rows name the operator the function is bound onto; their ids start "npx."."""
import numpy as np
from scipy import special as sp

from core import npx
from core.npx._reshape import npx_shape

from .op_db import OpSpec, Sample, away_from, rand
from .specs_conv import conv_ref
from .specs_index import _one_hot_ref, _pick_ref
from .specs_nn_basic import _act_ref, _emb_ref, fc_ref, softmax_ref
from .specs_norm import _ln_ref
from .specs_pool import distinct, ref_pool
from .specs_sequence import _mask_ref
from .specs_sort import _topk_ref

FLOATS = ("float32", "float64")


def _row(name, call, ref, samples, fn_name, **kw):
    return OpSpec(name, call, ref, samples, extra={"id": f"npx.{fn_name}"}, **kw)


# ----------------------------------------------------------------- softmax family
def _sm_call(fn):
    def call(x, length=None, **k):
        return fn(x, length=length, **k)

    return call


def _sm_samples(rng, d):
    return [Sample(rand(rng, (3, 4), d)),
            Sample(rand(rng, (2, 3, 4), d), axis=1, temperature=2.0),
            Sample(rand(rng, (3, 4), d), np.array([1, 4, 2]), use_length=True, diff=[0])]


def _masked_ref(x, mask, axis=-1, temperature=1.0, log=False, **_):
    w = np.where(mask, x.astype(np.float64) / temperature, -np.inf)
    m = np.max(w, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.where(mask, np.exp(w - m), 0)
    s = e.sum(axis=axis, keepdims=True)
    if log:
        return np.where(mask, w - m - np.log(np.where(s == 0, 1, s)), -np.inf).astype(x.dtype)
    return (e / np.where(s == 0, 1, s)).astype(x.dtype)


def _masked_samples(rng, d):
    mask = rng.random((3, 5)) > 0.4
    mask[1] = False  # a row masked entirely gives zeros
    mask[:, 0] = True
    return [Sample(rand(rng, (3, 5), d), mask, diff=[0]),
            Sample(rand(rng, (3, 5), d), (rng.random((1, 5)) > 0.3), axis=-1,
                   temperature=0.5, diff=[0]),
            Sample(rand(rng, (4, 3), d), np.array([[1], [0], [1], [1]], bool), axis=0,
                   diff=[0])]


def _log_masked_samples(rng, d):
    mask = rng.random((3, 5)) > 0.4
    mask[:, 0] = True
    return [Sample(rand(rng, (3, 5), d), mask, diff=[0])]


# ----------------------------------------------------------------- layers
def _fc_samples(rng, d):
    return [Sample(rand(rng, (4, 5), d), rand(rng, (3, 5), d), rand(rng, (3,), d),
                   num_hidden=3),
            Sample(rand(rng, (2, 3, 4), d), rand(rng, (5, 4), d), None, flatten=False),
            Sample(rand(rng, (2, 3, 2), d), rand(rng, (2, 6), d))]


def _fc_ref(x, w, b=None, **k):
    return fc_ref(x, w, b, no_bias=b is None, **{n: v for n, v in k.items() if n != "no_bias"})


def _conv_call(x, w, b=None, **k):
    return npx.convolution(x, w, b, **k)


def _conv_ref(x, w, b=None, kernel=None, stride=None, pad=None, num_group=1, layout=None,
              **_):
    return conv_ref(x, w, b, stride=stride or (), pad=pad or (), num_group=num_group,
                    layout=layout)


def _conv_samples(rng, d):
    return [Sample(rand(rng, (2, 3, 5, 5), d), rand(rng, (4, 3, 3, 3), d), rand(rng, (4,), d),
                   kernel=(3, 3), num_filter=4, pad=(1, 1)),
            Sample(rand(rng, (1, 4, 6), d), rand(rng, (2, 2, 3), d), None, stride=2,
                   num_group=2),
            Sample(rand(rng, (1, 5, 5, 2), d), rand(rng, (3, 2, 2, 2), d), None,
                   layout="NHWC")]


def _pool_samples(rng, d):
    return [Sample(distinct(rng, (2, 3, 4, 4), d), kernel=(2, 2), stride=(2, 2)),
            Sample(rand(rng, (1, 2, 5), d), kernel=3, pool_type="avg", pad=1, stride=1),
            Sample(rand(rng, (1, 2, 3, 3), d), pool_type="avg", global_pool=True)]


def _pool_ref(x, kernel=None, stride=None, pad=None, **k):
    def t(v):
        return () if v is None else ((v,) if isinstance(v, int) else v)

    return ref_pool(x, kernel=t(kernel), stride=t(stride), pad=t(pad), **k)


def _ln_samples(rng, d):
    return [Sample(rand(rng, (3, 4), d), rand(rng, (4,), d), rand(rng, (4,), d)),
            Sample(rand(rng, (2, 3, 4), d), rand(rng, (3,), d), rand(rng, (3,), d), axis=1,
                   eps=1e-3)]


def _emb_samples(rng, d):
    ids = np.array([[0, 2], [3, 1]], dtype=d)
    return [Sample(ids, rand(rng, (4, 3), d), diff=[1]),
            Sample(np.array([1, 1, 0], dtype=d), rand(rng, (2, 5), d), 2, 5, diff=[1])]


# ----------------------------------------------------------------- array functions
def _I(v):
    return np.array(v, dtype=np.int64)


def _pick_samples(rng, d):
    return [Sample(rand(rng, (3, 4), d), _I([0, 3, 1])),
            Sample(rand(rng, (3, 4), d), np.array([1.0, 0.0, 2.0, 5.0]), 0, "wrap", diff=[0]),
            Sample(rand(rng, (2, 3), d), _I([[2], [0]]), keepdims=True)]


def _pick_call(x, idx, axis=-1, mode="clip", keepdims=False):
    return npx.pick(x, idx, axis, mode, keepdims)


def _pick_ref2(x, idx, axis=-1, mode="clip", keepdims=False):
    return _pick_ref(x, np.squeeze(idx, axis) if keepdims else idx, axis, keepdims, mode)


def _topk_samples(rng, d):
    x = np.array([[0.3, 0.2, 0.4, 0.9], [0.1, 0.3, 0.2, -1.0], [2.0, 1.5, -0.5, 0.7]], d)
    return [Sample(x, k=2, ret_typ="value", diff=[0]),
            Sample(x, axis=0, k=2, ret_typ="both", dtype="int32"),
            Sample(x, k=3, is_ascend=True)]


def _seq_samples(rng, d):
    return [Sample(rand(rng, (4, 3, 2), d), np.array([1, 4, 2], d), use_sequence_length=True,
                   diff=[0]),
            Sample(rand(rng, (3, 5), d), np.array([2, 0, 5], d), use_sequence_length=True,
                   value=-1.0, axis=1, diff=[0]),
            Sample(rand(rng, (3, 2), d))]


def _bdot_ref(a, b, transpose_a=False, transpose_b=False):
    a = np.swapaxes(a, -1, -2) if transpose_a else a
    b = np.swapaxes(b, -1, -2) if transpose_b else b
    return np.matmul(a.astype(np.float64), b).astype(np.result_type(a, b))


def _bdot_samples(rng, d):
    return [Sample(rand(rng, (2, 3, 4), d), rand(rng, (2, 4, 5), d)),
            Sample(rand(rng, (3, 4, 2), d), rand(rng, (3, 5, 4), d), transpose_a=True,
                   transpose_b=True)]


_RESHAPES = [((2, 3, 8), (-2, -2, 2, -1), False), ((8, 3, 3, 3, 4, 4), (-6, 2, -1, -4), False),
             ((8, 3, 3, 3, 4, 4), (-5, -4), False), ((8, 1, 1, 1, 3), (-2, -3, -3, -3, -2), False),
             ((8, 3, 3, 3, 3, 8), (-4, -5), True), ((8, 3, 2, 4, 8), (-4, -1, 2, -6), True),
             ((2, 3), -1, False), ((2, 6), (3, 4), False)]


def _reshape_samples(rng, d):
    return [Sample(rand(rng, s, d), n, reverse=r) for s, n, r in _RESHAPES]


def _reshape_ref(x, newshape, reverse=False):
    return x.reshape(npx_shape(x.shape, newshape, reverse))


def _gamma_samples(rng, d):
    return [Sample(rand(rng, (3, 4), d, 0.5, 4.0)), Sample(away_from(rng, (5,), d,
                                                                     points=(-1.0,), low=-1.8,
                                                                     high=-0.2))]


SPECS = [
    _row("softmax", _sm_call(npx.softmax), softmax_ref, _sm_samples, "softmax", dtypes=FLOATS),
    _row("log_softmax", _sm_call(npx.log_softmax),
         lambda *a, **k: softmax_ref(*a, log=True, **k), _sm_samples, "log_softmax",
         dtypes=FLOATS),
    _row("softmax", npx.masked_softmax, _masked_ref, _masked_samples, "masked_softmax",
         dtypes=FLOATS, covers=("where",)),
    _row("log_softmax", npx.masked_log_softmax,
         lambda *a, **k: _masked_ref(*a, log=True, **k), _log_masked_samples,
         "masked_log_softmax", dtypes=FLOATS, grad=False),
    _row("Activation", lambda x, **k: npx.activation(x, **k), _act_ref,
         lambda rng, d: [Sample(away_from(rng, (3, 4), d)), Sample(rand(rng, (5,), d),
                                                                   act_type="softsign")],
         "activation", dtypes=FLOATS),
    _row("relu", npx.relu, lambda x: np.maximum(x, 0),
         lambda rng, d: [Sample(away_from(rng, (3, 4), d))], "relu", dtypes=FLOATS),
    _row("sigmoid", npx.sigmoid, lambda x: sp.expit(x).astype(x.dtype),
         lambda rng, d: [Sample(rand(rng, (3, 4), d))], "sigmoid", dtypes=FLOATS),
    _row("FullyConnected", npx.fully_connected, _fc_ref, _fc_samples, "fully_connected",
         dtypes=FLOATS, rtol=1e-5, atol=1e-5),
    _row("Convolution", _conv_call, _conv_ref, _conv_samples, "convolution", dtypes=FLOATS,
         rtol=1e-4, atol=1e-5),
    _row("Pooling", lambda x, **k: npx.pooling(x, **k), _pool_ref, _pool_samples, "pooling",
         dtypes=FLOATS),
    _row("_layer_norm", npx.layer_norm, _ln_ref, _ln_samples, "layer_norm", dtypes=FLOATS,
         rtol=1e-4, atol=1e-5),
    _row("Embedding", npx.embedding, lambda i, w, *a, **k: _emb_ref(i, w), _emb_samples,
         "embedding", dtypes=FLOATS),
    _row("pick", _pick_call, _pick_ref2, _pick_samples, "pick", dtypes=FLOATS),
    _row("one_hot", npx.one_hot, _one_hot_ref,
         lambda rng, d: [Sample(_I([[1, 0], [3, 2]]), 4),
                         Sample(_I([2, 0]), 3, 5.0, -1.0, dtype=d)],
         "one_hot", dtypes=FLOATS, grad=False),
    _row("topk", lambda x, **k: npx.topk(x, **k), _topk_ref, _topk_samples, "topk",
         dtypes=FLOATS),
    _row("SequenceMask", npx.sequence_mask, _mask_ref, _seq_samples, "sequence_mask",
         dtypes=FLOATS),
    _row("batch_dot", npx.batch_dot, _bdot_ref, _bdot_samples, "batch_dot", dtypes=FLOATS,
         rtol=1e-5, atol=1e-5),
    _row("flatten", npx.batch_flatten, lambda x: x.reshape(x.shape[0], -1),
         lambda rng, d: [Sample(rand(rng, (2, 3, 4), d)), Sample(rand(rng, (3,), d))],
         "batch_flatten", dtypes=FLOATS),
    _row("reshape", npx.reshape, _reshape_ref, _reshape_samples, "reshape", dtypes=FLOATS),
    _row("gamma", npx.gamma, lambda x: sp.gamma(x).astype(x.dtype), _gamma_samples, "gamma",
         dtypes=FLOATS, rtol=1e-4),
    _row("gammaln", npx.gammaln, lambda x: sp.gammaln(x).astype(x.dtype), _gamma_samples,
         "gammaln", dtypes=FLOATS, rtol=1e-4),
]
