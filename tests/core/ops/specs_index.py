"""Rows for indexing and gathering (core/ops/index.py, core/ops/gather.py)."""
import numpy as np

from core import nd
from core import np as knp
from core.ops import F

from .op_db import OpSpec, Sample, rand
from .specs_shape import _raises, second_order

_DT = ("float32", "float64", "bfloat16", "int32", "bool")
_I = np.array  # index arrays stay int64 NumPy arrays (never differentiated)


def _keys(rng):
    """(shape, key) pairs: basic, advanced, mixed, boolean masks, negative steps."""
    mask = rng.random((3, 4)) > 0.5
    return [((3, 4), 1), ((3, 4), -1), ((5,), slice(1, 4)),
            ((3, 4), (slice(None), slice(None, None, 2))),
            ((2, 3), (Ellipsis, None)), ((3, 4), _I([0, 2])), ((3, 4), _I([[0, 2], [2, 2]])),
            ((3, 4), mask), ((3, 4, 2), (mask,)), ((6,), slice(None, None, -2)),
            ((3, 4), (slice(None, None, -1), slice(3, 0, -2))),
            ((3, 4, 5), (1, slice(None), _I([0, 4]))), ((3, 4, 5), (_I([0, 1]), slice(None), 1)),
            ((3, 4, 5), (slice(None), _I([0, 1]), _I([[2], [3]]))), ((3, 4), (Ellipsis, 2)),
            ((2, 3), ()), ((3, 4), (None, 1, None)), ((3, 4), (_I([2, 0, 2]), _I([1, 1, 3]))),
            ((4, 3), (rng.random(4) > 0.3, slice(1, None)))]


def _getitem_samples(rng, d):
    return [Sample(np.asarray(rand(rng, s, d)), key=k) for s, k in _keys(rng)]


def _update_samples(rng, d):
    return [Sample(rand(rng, (3, 4), d), rand(rng, (4,), d), key=1),
            Sample(rand(rng, (3, 4), d), rand(rng, (3, 1), d), key=(slice(None), slice(1, 3))),
            Sample(rand(rng, (3, 4), d), rand(rng, (2, 4), d), key=_I([2, 0])),
            Sample(rand(rng, (3, 4), d), rand(rng, (1, 2), d), key=(_I([0, 1]), 3)),
            Sample(rand(rng, (3, 4), d), np.asarray(rand(rng, (), d)), key=(Ellipsis, 0)),
            Sample(rand(rng, (2, 3), d), 2.5 if d != "bool" else True, key=(0, slice(None)),
                   diff=[0]),
            Sample(rand(rng, (4,), d), rand(rng, (3,), d), key=_I([True, False, True, True]))]


def _update_ref(x, v, key):
    out = x.copy()
    out[key] = v
    return out


def _scatter_samples(rng, d):
    return [Sample(rand(rng, (3, 4), d), key=_I([0, 2, 0]), shape=(3, 4)),
            Sample(rand(rng, (2, 2), d), key=(slice(1, 3), _I([3, 3])), shape=(4, 4)),
            Sample(rand(rng, (2, 3), d), key=(Ellipsis, 1), shape=(2, 3, 2)),
            Sample(rand(rng, (5,), d), key=_I([1, 1, 1, 0, 1]), shape=(2,)),
            Sample(rand(rng, (3,), d), key=(_I([1, 0, 1]), _I([2, 0, 2])), shape=(2, 3))]


def _scatter_ref(v, key, shape):
    out = np.zeros(shape, v.dtype)
    np.add.at(out, key, v)
    return out


# ------------------------------------------------------------------ take, pick, gather
def _take_ref(a, idx, axis=0, mode="clip"):
    return np.take(a, np.asarray(idx).astype(np.int64), axis=axis, mode=mode)


def _take_samples(rng, d):
    return [Sample(rand(rng, (5, 3), d), _I([0, 4, 4, 1])),
            Sample(rand(rng, (5, 3), d), _I([[0, 7], [-3, 2]]), axis=0),  # clipped
            Sample(rand(rng, (2, 3, 4), d), _I([1, 1, 0, 3]), axis=-1),
            Sample(rand(rng, (4, 3), d), _I([5, -1, 2]), axis=1, mode="wrap"),
            Sample(rand(rng, (4,), d), np.array([0.0, 3.0, 3.0]), diff=[0]),  # MXNet floats
            Sample(rand(rng, (3, 4), d), _I(2), axis=1)]


def _np_take_samples(rng, d):
    return [Sample(rand(rng, (3, 4), d), _I([0, 11, -1, 5])),
            Sample(rand(rng, (3, 4), d), _I([[2, -3], [0, 0]]), axis=0),
            Sample(rand(rng, (3, 4), d), _I([1, 9]), axis=1, mode="clip")]


def _pick_ref(data, index, axis=-1, keepdims=False, mode="clip"):
    ax = axis % data.ndim
    n = data.shape[ax]
    idx = np.asarray(index).astype(np.int64)
    idx = np.clip(idx, 0, n - 1) if mode == "clip" else np.mod(idx, n)
    idx = idx.reshape(data.shape[:ax] + (1,) + data.shape[ax + 1:])
    out = np.take_along_axis(data, idx, ax)
    return out if keepdims else np.squeeze(out, ax)


def _pick_samples(rng, d):
    return [Sample(rand(rng, (3, 4), d), _I([0, 3, 3])),
            Sample(rand(rng, (3, 4), d), np.array([1.0, 0.0, 2.0, 2.0]), axis=0, diff=[0]),
            Sample(rand(rng, (2, 3, 4), d), _I([[0, 5, 1, 1], [2, -1, 0, 1]]), axis=1),
            Sample(rand(rng, (2, 3, 4), d), _I([[[0], [1], [3]], [[2], [2], [7]]]),
                   axis=-1, keepdims=True, mode="wrap")]


def _gather_ref(data, idx):
    return data[tuple(np.asarray(idx).astype(np.int64))]


def _gather_samples(rng, d):
    return [Sample(rand(rng, (3, 4), d), _I([[0, 2, 2], [1, 3, 3]])),
            Sample(rand(rng, (3, 4, 2), d), _I([[0, 1, 1]])),
            Sample(rand(rng, (3, 4), d), _I([[[0, 1], [2, 2]], [[3, 3], [0, 1]]])),
            Sample(rand(rng, (3, 4), d), np.array([2.0, 1.0]), diff=[0])]


def _scatter_nd_ref(data, idx, shape):
    out = np.zeros(shape, data.dtype)
    np.add.at(out, tuple(np.asarray(idx).astype(np.int64)), data)
    return out


def _scatter_nd_samples(rng, d):
    return [Sample(rand(rng, (3,), d), _I([[0, 1, 1], [2, 0, 1]]), shape=(2, 3)),
            Sample(rand(rng, (2, 4), d), _I([[1, 0]]), shape=(3, 4)),
            Sample(rand(rng, (2, 2), d), _I([[0, 0], [1, 1]]), shape=(2, 3, 2))]


def _one_hot_ref(indices, depth, on_value=1.0, off_value=0.0, dtype="float32"):
    idx = np.asarray(indices).astype(np.int64)
    return np.where(idx[..., None] == np.arange(depth), on_value, off_value).astype(dtype)


def _one_hot_samples(rng, d):
    return [Sample(_I([0, 2, 1, 5, -1]), 3),
            Sample(np.array([[1.0, 0.0], [3.0, 2.0]]), 4, on_value=2.0, off_value=-1.0,
                   dtype=d)]


# ------------------------------------------------------------------ MXNet slices
def _slice_ref(x, begin, end, step=()):
    step = step or (None,) * len(begin)
    return x[tuple(slice(b, e, s) for b, e, s in zip(begin, end, step))]


def _slice_like_ref(x, like, axes=()):
    axes = [a % x.ndim for a in axes] or range(x.ndim)
    return x[tuple(slice(0, like.shape[i]) if i in axes else slice(None)
                   for i in range(x.ndim))]


def _index_errors(spec, rng, arr):
    x = arr(np.zeros((3, 4)))
    with _raises(IndexError, "(3, 4)", "5"):
        x[5]
    with _raises(IndexError, "(3, 4)", "7"):
        x[arr([0, 7], dtype="int32")]
    with _raises(IndexError, "(3, 4)", "too many"):
        x[0, 0, 0]
    with _raises(IndexError, "boolean index", "(3, 4)"):
        x[arr([True, False], dtype="bool")]
    with _raises(IndexError, "whole numbers"):
        x[arr([0.5, 1.0])]
    with _raises(IndexError, "take", "10", "(4,)"):
        knp.take(arr(np.zeros((4,))), arr([1, 10], dtype="int32"))
    with _raises(ValueError, "take", "axis=2", "(3, 4)"):
        nd.take(x, arr([0]), axis=2)
    with _raises(ValueError, "take", "mode"):
        nd.take(x, arr([0]), mode="nearest")
    with _raises(ValueError, "pick", "axis=2", "(3, 4)"):
        nd.pick(x, arr([0, 1, 2]), axis=2)
    with _raises(ValueError, "pick", "(2,)", "(3, 4)"):
        nd.pick(x, arr([0, 1]), axis=1)
    with _raises(ValueError, "gather_nd", "(3, 2)", "(3, 4)"):
        nd.gather_nd(x, arr([[0, 1], [0, 1], [0, 1]]))
    with _raises(ValueError, "scatter_nd", "(3,)", "(2, 2)"):
        nd.scatter_nd(arr(np.zeros((3,))), arr([[0, 1], [0, 1]]), shape=(2, 2))
    with _raises(ValueError, "slice_axis", "axis=-3", "(3, 4)"):
        nd.slice_axis(x, axis=-3, begin=0, end=1)
    with _raises(ValueError, "slice", "(3, 4)"):
        nd.slice(x, begin=(0, 0, 0), end=(1, 1, 1))
    with _raises(ValueError, "slice_like", "(3, 4)", "(5, 4)"):
        nd.slice_like(x, arr(np.zeros((5, 4))))
    with _raises(ValueError, "__setitem__", "(2,)", "(3, 4)"):
        F._index_update(x, arr(np.zeros((2,))), key=0)


def _g2(*args):
    return lambda rng: [[rand(rng, args[0], "float64")] + list(args[1:])]


SPECS = [
    OpSpec("_getitem", lambda x, key: x[key], lambda x, key: x[key], _getitem_samples,
           dtypes=_DT, extra={"hybrid_skip": "boolean-mask keys: the output's length is the "
                              "number of True values, so it cannot be traced"}),
    OpSpec("_getitem", None, None, None, check=_index_errors, extra={"id": "index:errors"}),
    OpSpec("_index_update", lambda x, v, key: F._index_update(x, v, key=key), _update_ref,
           _update_samples, dtypes=_DT),
    OpSpec("_scatter_add", lambda v, **k: F._scatter_add(v, **k), _scatter_ref,
           _scatter_samples, dtypes=("float32", "float64", "int32")),
    OpSpec("take", nd.take, _take_ref, _take_samples, dtypes=_DT),
    OpSpec("take", knp.take, lambda a, i, **k: np.take(a, i, **k), _np_take_samples,
           dtypes=_DT, extra={"id": "take:np"}),
    OpSpec("pick", nd.pick, _pick_ref, _pick_samples, dtypes=_DT),
    OpSpec("gather_nd", nd.gather_nd, _gather_ref, _gather_samples, dtypes=_DT),
    OpSpec("scatter_nd", nd.scatter_nd, _scatter_nd_ref, _scatter_nd_samples,
           dtypes=("float32", "float64", "int32")),
    OpSpec("one_hot", nd.one_hot, _one_hot_ref, _one_hot_samples,
           dtypes=("float32", "float64", "int32"), grad=False),
    OpSpec("slice", lambda x, **k: nd.slice(x, **k), _slice_ref,
           lambda rng, d: [Sample(rand(rng, (3, 4), d), begin=(0, 1), end=(2, 3)),
                           Sample(rand(rng, (3, 4, 2), d), begin=(None, -3), end=(None, None)),
                           Sample(rand(rng, (5, 4), d), begin=(4, None), end=(None, 0),
                                  step=(-2, -1)),
                           Sample(rand(rng, (6,), d), begin=(1,), end=(6,), step=(2,))],
           dtypes=_DT),
    OpSpec("slice_axis", lambda x, **k: nd.slice_axis(x, **k),
           lambda x, axis, begin, end: np.moveaxis(np.moveaxis(x, axis, 0)[begin:end], 0, axis),
           lambda rng, d: [Sample(rand(rng, (3, 4), d), axis=1, begin=1, end=3),
                           Sample(rand(rng, (5, 2), d), axis=0, begin=-3, end=None),
                           Sample(rand(rng, (2, 3, 4), d), axis=-1, begin=0, end=-1)],
           dtypes=_DT),
    OpSpec("slice_like", lambda x, y, **k: nd.slice_like(x, y, **k), _slice_like_ref,
           lambda rng, d: [Sample(rand(rng, (3, 4), d), rand(rng, (2, 2), d), diff=[0]),
                           Sample(rand(rng, (3, 4, 5), d), rand(rng, (1, 3, 9), d),
                                  axes=(0, -2), diff=[0]),
                           Sample(rand(rng, (3, 4), d), rand(rng, (3,), d), axes=(0,),
                                  diff=[0])],
           dtypes=_DT),
    second_order("_getitem", lambda x: x[_I([0, 2, 0]), 1:], _g2((3, 4))),
    second_order("_index_update", lambda x, v: F._index_update(x * 1, v * x[0], key=_I([2, 1])),
                 _g2((3, 4), nd.ones((4,), dtype="float64"))),
    second_order("take", lambda x, i: nd.take(x, i, axis=1), _g2((3, 4), _I([3, 0, 3]))),
    second_order("pick", lambda x, i: nd.pick(x, i), _g2((3, 4), _I([3, 0, 3]))),
    second_order("gather_nd", lambda x, i: nd.gather_nd(x, i), _g2((3, 4), _I([[0, 0], [1, 1]]))),
    second_order("scatter_nd", lambda x, i: nd.scatter_nd(x, i, shape=(3, 4)),
                 _g2((2,), _I([[0, 0], [1, 1]]))),
    second_order("slice_like", lambda x: nd.slice_like(x, nd.zeros((2, 3))), _g2((3, 4))),
]
