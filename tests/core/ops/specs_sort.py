"""Rows for sort, argsort, topk and their gather/scatter helpers (core/ops/sort.py)."""
import numpy as np
import pytest

from core import autograd, nd
from core import np as knp
from core.ops import F

from .op_db import OpSpec, Sample, np_dtype, rand

_FLOATS = ("float32", "float64", "float16", "bfloat16")
_ALL = _FLOATS + ("int32", "uint8", "bool")
# (shape, kwargs): the default last axis, axis 0, a negative and a middle axis, flattened.
_CASES = [((5,), {}), ((3, 4), {}), ((3, 4), {"axis": 0}), ((2, 3, 4), {"axis": -2}),
          ((2, 3, 4), {"axis": 1}), ((2, 3), {"axis": None}), ((1, 4), {"axis": -1})]


def _distinct(rng, shape, dtype):
    """Values at least 4/n apart (no ties), or small random integers/booleans."""
    dt = np_dtype(dtype)
    if dtype in ("bool",) or dt.kind in "iu":
        return rand(rng, shape, dtype, 0, 9) if dtype != "bool" else rng.random(shape) > 0.5
    n = int(np.prod(shape))
    return (rng.permutation(n) * (4.0 / n) - 2.0 + rng.uniform(0, 0.05)).reshape(shape) \
        .astype(dt)


def _ties(rng, shape, dtype):
    """Few distinct values: many ties, which stable sorts keep in their original order."""
    return rand(rng, shape, "int32", 0, 3).astype(np_dtype(dtype))


def _gen(gen, cases, **extra):
    def samples(rng, d):
        return [Sample(gen(rng, s, d), **dict(k, **extra)) for s, k in cases]

    return samples


def _flat(x, axis):
    return (x.reshape(-1), -1) if axis is None else (x, axis)


def _order_ref(x, axis, ascend):
    """Stable order: ties keep their original order in both directions."""
    key = x.astype(np.float64)
    return np.argsort(key if ascend else -key, axis=axis, kind="stable")


def _sort_ref(x, axis=-1, is_ascend=True):
    x, axis = _flat(x, axis)
    out = np.sort(x, axis=axis)
    return out if is_ascend else np.flip(out, axis)


def _argsort_ref(x, axis=-1, is_ascend=True, dtype="int64"):
    x, axis = _flat(x, axis)
    return _order_ref(x, axis, is_ascend).astype(np_dtype(dtype))


def _topk_ref(x, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype="float32"):
    shape = x.shape
    x, axis = _flat(x, axis)
    n = x.shape[axis]
    idx = np.take(_order_ref(x, axis, is_ascend), np.arange(n if k < 1 else k), axis=axis)
    if ret_typ == "mask":
        m = np.zeros_like(x)
        np.put_along_axis(m, idx, 1, axis)
        return m.reshape(shape)
    vals = np.take_along_axis(x, idx, axis)
    ind = idx.astype(np_dtype(dtype))
    return {"indices": ind, "value": vals, "both": (vals, ind)}[ret_typ]


def _perm_indices(rng, shape, axis, k):
    """Indices distinct along ``axis`` (k of the shape[axis] positions)."""
    idx = np.argsort(rng.random(shape), axis=axis)
    return np.take(idx, np.arange(k), axis=axis)


def _gather_ref(x, indices, axis=-1):
    indices = indices.astype(np.intp)
    if axis is None:
        return x.reshape(-1)[indices]
    return np.take_along_axis(x, indices, axis)


def _scatter_ref(g, indices, axis=-1, shape=()):
    indices = indices.astype(np.intp)
    out = np.zeros(int(np.prod(shape)) if axis is None else shape, g.dtype)
    if axis is None:
        out[indices.reshape(-1)] = g.reshape(-1)
        return out.reshape(shape)
    np.put_along_axis(out, indices, g, axis)
    return out


def _gather_samples(rng, d):
    return [Sample(rand(rng, (3, 5), d), _perm_indices(rng, (3, 5), 1, 2), axis=1),
            Sample(rand(rng, (4, 3), d), _perm_indices(rng, (4, 3), 0, 4), axis=0),
            Sample(rand(rng, (2, 3, 4), d), _perm_indices(rng, (2, 3, 4), 1, 3), axis=-2),
            Sample(rand(rng, (2, 3), d), rng.permutation(6)[:4].reshape(2, 2), axis=None),
            Sample(rand(rng, (3, 4), d), _perm_indices(rng, (3, 4), 1, 3).astype(np.float32),
                   axis=1, diff=[0])]


def _scatter_samples(rng, d):
    return [Sample(rand(rng, (3, 2), d), _perm_indices(rng, (3, 5), 1, 2), axis=1,
                   shape=(3, 5)),
            Sample(rand(rng, (2, 3, 4), d), _perm_indices(rng, (2, 3, 4), 1, 3), axis=-2,
                   shape=(2, 3, 4)),
            Sample(rand(rng, (2, 2), d), rng.permutation(6)[:4].reshape(2, 2), axis=None,
                   shape=(2, 3)),
            Sample(rand(rng, (3, 3), d), _perm_indices(rng, (3, 4), 1, 3).astype(np.float32),
                   axis=1, shape=(3, 4), diff=[0])]


# ----------------------------------------------------------------- checks
def _check_sort_api(spec, rng, arr):
    x = arr([[3.0, 1.0, 2.0, 1.0], [0.0, 5.0, 5.0, 4.0]])
    assert x.sort().asnumpy().tolist() == [[1, 1, 2, 3], [0, 4, 5, 5]]
    assert nd.sort(x, axis=0, is_ascend=False).asnumpy().tolist() == [[3, 5, 5, 4],
                                                                       [0, 1, 2, 1]]
    assert knp.argsort(x).dtype == np.int64 and nd.argsort(x).dtype == np.float32
    assert nd.argsort(x, is_ascend=False).asnumpy().tolist() == [[0, 2, 1, 3], [1, 2, 3, 0]]
    assert x.topk(k=2).asnumpy().tolist() == [[0, 2], [1, 2]]
    v, i = nd.topk(x, k=-1, ret_typ="both", is_ascend=True, dtype="int32")
    assert v.shape == (2, 4) and i.dtype == np.int32
    assert nd.topk(x, axis=None, k=3).asnumpy().tolist() == [5, 6, 7]
    assert knp.sort(x, kind="stable").shape == (2, 4)
    with pytest.raises(ValueError, match=r"sort: axis=2 is out of range .*\(2, 4\) float32"):
        nd.sort(x, axis=2)
    with pytest.raises(ValueError, match=r"argsort: axis=-1 is out of range for a 0-d array"):
        knp.argsort(nd.array(1.0))
    with pytest.raises(ValueError, match=r"topk: k=5 is larger than the 4 element"):
        nd.topk(x, k=5)
    with pytest.raises(ValueError, match=r"topk: ret_typ must be one of"):
        nd.topk(x, ret_typ="values")
    with pytest.raises(TypeError, match=r"argsort: unsupported dtype"):
        nd.argsort(x, dtype="complex64")
    with pytest.raises(TypeError, match=r"topk: the index dtype must be"):
        nd.topk(x, dtype="bool")


def _check_second_order(spec, rng, arr):
    """Gradients through sort/topk are recorded: second derivatives of (sort(x)**2 * w)."""
    x = _distinct(rng, (3, 4), "float64")
    w = rng.standard_normal((3, 2))
    first2 = nd.array(np.tile([[0, 1]], (3, 1)), dtype="int64")
    for fn in (lambda a: nd.topk(a, k=2, ret_typ="value") ** 2,
               lambda a: nd.topk(a, k=2, ret_typ="both")[0] ** 2,
               lambda a: F._gather_along_axis(nd.sort(a, axis=1, is_ascend=False) ** 2, first2,
                                              axis=1)):
        a = arr(x, dtype="float64")
        a.attach_grad()
        with autograd.record():
            y = (fn(a) * nd.array(w, dtype="float64")).sum()
            g = autograd.grad(y, a, create_graph=True)
            z = g.sum()
        z.backward()
        # d/dx of sum(2 * x_sel * w) is 2 * w at the selected (top-2) positions
        top = np.argsort(-x, axis=1, kind="stable")[:, :2]
        expected = np.zeros_like(x)
        np.put_along_axis(expected, top, 2 * w, 1)
        np.testing.assert_allclose(a.grad.asnumpy(), expected, rtol=1e-12)


SPECS = [
    OpSpec("sort", lambda x, **k: knp.sort(x, **k), _sort_ref, _gen(_distinct, _CASES),
           dtypes=_ALL),
    OpSpec("sort", lambda x, **k: nd.sort(x, **k), _sort_ref,
           _gen(_distinct, _CASES, is_ascend=False), dtypes=_ALL, extra={"id": "sort_desc"}),
    OpSpec("argsort", lambda x, **k: knp.argsort(x, **k), _argsort_ref, _gen(_ties, _CASES),
           dtypes=_ALL, grad=False),
    OpSpec("argsort", lambda x, **k: nd.argsort(x, **k),
           lambda x, **k: _argsort_ref(x, dtype="float32", **k),
           _gen(_ties, _CASES, is_ascend=False), dtypes=("float32", "int32", "bool"),
           grad=False, extra={"id": "argsort_nd"}),
    OpSpec("sort", None, None, None, check=_check_sort_api, extra={"id": "sort_api"}),
    OpSpec("topk", None, None, None, check=_check_second_order,
           extra={"id": "topk_second_order"}),
    OpSpec("_gather_along_axis", F._gather_along_axis, _gather_ref, _gather_samples,
           dtypes=_FLOATS + ("int32",)),
    OpSpec("_scatter_along_axis", F._scatter_along_axis, _scatter_ref, _scatter_samples,
           dtypes=_FLOATS + ("int32",)),
]

_TOPK_CASES = [((5,), {"k": 2}), ((3, 4), {"k": 3}), ((3, 4), {"axis": 0, "k": 2}),
               ((2, 3, 4), {"axis": -2, "k": 1}), ((2, 3), {"axis": None, "k": 4}),
               ((3, 4), {"k": 0}), ((2, 5), {"k": 2, "is_ascend": True})]
for _ret in ("indices", "value", "both", "mask"):
    SPECS.append(OpSpec(
        "topk", lambda x, **k: nd.topk(x, **k), _topk_ref,
        _gen(_distinct, _TOPK_CASES, ret_typ=_ret), dtypes=("float32", "float64", "float16",
                                                            "int32"),
        extra={"id": f"topk_{_ret}"}))
SPECS.append(OpSpec("topk", lambda x, **k: nd.topk(x, **k), _topk_ref,
                    _gen(_ties, [((3, 6), {"k": 4, "ret_typ": "both", "dtype": "int64"}),
                                 ((4, 3), {"axis": 0, "k": 3, "is_ascend": True})]),
                    dtypes=("float32", "int32"), grad=False, extra={"id": "topk_ties"}))
