"""Rows for the reductions and cumulative operators (core/ops/reduce.py)."""
import numpy as np
import pytest
import scipy.special as sp

from core import autograd, nd
from core import np as knp
from core.ops import F

from .op_db import OpSpec, Sample, away_from, np_dtype, rand

_FLOATS = ("float32", "float64", "float16", "bfloat16")
_ALL = _FLOATS + ("int32", "uint8", "bool")
_FLOAT_DTYPES = [np_dtype(d) for d in _FLOATS]

# (shape, kwargs) pairs: axis None / int / negative / tuple, keepdims, 0-d and 1-d inputs.
_CASES = [((), {}), ((5,), {}), ((3, 4), {"axis": 1}), ((3, 4), {"axis": -1, "keepdims": True}),
          ((2, 3, 4), {"axis": (0, 2)}), ((2, 3, 4), {"axis": (-1, 0), "keepdims": True}),
          ((2, 3, 4), {"keepdims": True}), ((2, 3, 4), {"axis": 0})]
# MXNet's extras, for the nd names: exclude=True and axis=() meaning every axis.
_MX_CASES = [((3, 4), {"axis": 1, "exclude": True}),
             ((2, 3, 4), {"axis": (0, 2), "exclude": True, "keepdims": True}),
             ((2, 3, 4), {"axis": ()}), ((3, 4), {"axis": (), "keepdims": True})]


def _distinct(rng, shape, dtype):
    """Values at least 4/n apart (no ties: max/min/sort are differentiable there)."""
    n = int(np.prod(shape))
    v = rng.permutation(n) * (4.0 / max(n, 1)) - 2.0 + rng.uniform(0.0, 0.05)
    a = v.reshape(shape)
    return rand(rng, shape, dtype) if np.dtype(np_dtype(dtype)).kind in "iub" else \
        a.astype(np_dtype(dtype))


def _gen(gen, cases, dtype_kw=(), extra_kw=None):
    def samples(rng, d):
        out = [Sample(gen(rng, s, d), **k, **(extra_kw or {})) for s, k in cases]
        out += [Sample(gen(rng, (3, 4), d), axis=0, **dict(k)) for k in dtype_kw]
        return out

    return samples


def _mx_axes(x, axis=None, exclude=False):
    if axis is None or axis == ():
        axis = tuple(range(x.ndim))
    axis = (axis,) if isinstance(axis, int) else tuple(a % x.ndim for a in axis)
    if exclude:
        axis = tuple(i for i in range(x.ndim) if i not in axis)
    return axis


def _ref(fn, upcast=True):
    """NumPy's ``fn``; bfloat16 computed in float32 (NumPy would accumulate in bfloat16)."""

    def ref(x, axis=None, exclude=False, **k):
        if exclude or axis == ():
            axis = _mx_axes(x, axis, exclude)
        if upcast and x.dtype == np_dtype("bfloat16"):
            out = np.asarray(fn(x.astype(np.float32), axis=axis, **k))
            return out.astype(k.get("dtype") or x.dtype)
        return fn(x, axis=axis, **k)

    return ref


def _row(name, ref, gen=rand, dtypes=_FLOATS, cases=_CASES, call=None, dtype_kw=(),
         suffix="", extra_kw=None, **kw):
    fn = call or getattr(knp, name)
    extra = {"id": name + suffix} if suffix else {}
    return OpSpec(name, lambda x, **k: fn(x, **k), ref, _gen(gen, cases, dtype_kw, extra_kw),
                  dtypes=dtypes, extra=extra, **kw)


def _nd_row(name, ref, gen=rand, dtypes=("float32", "float64"), **kw):
    return _row(name, ref, gen, dtypes, _MX_CASES, getattr(nd, name), suffix="_nd", **kw)


# ----------------------------------------------------------------- sample generators
def _prod_gen(rng, shape, dtype):
    """Magnitudes in [0.6, 1.4] with random signs; some lines hold one or two zeros."""
    if np.dtype(np_dtype(dtype)).kind in "iub":
        return rand(rng, shape, dtype, -2, 2)
    a = rng.uniform(0.6, 1.4, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    if a.ndim >= 1 and a.size > 2:
        flat = a.reshape(-1)
        flat[1] = 0.0  # a single zero
        flat[-1] = flat[-2] = 0.0  # two zeros in the last line
    return a.astype(np_dtype(dtype))


def _nan_gen(rng, shape, dtype):
    """NaN at every fifth position: no line along any axis of the test shapes is all NaN."""
    a = rand(rng, shape, "float64")
    a.reshape(-1)[np.arange(a.size) % 5 == 2] = np.nan
    return a.astype(np_dtype(dtype))


def _big(rng, shape, dtype):
    """Values near 500: exp overflows unless logsumexp shifts by the maximum."""
    return (rand(rng, shape, "float64") + (500 if np_dtype(dtype).itemsize >= 4 else 5)
            ).astype(np_dtype(dtype))


def _with_ties(rng, shape, dtype):
    return np.round(rand(rng, shape, "float64")).astype(np_dtype(dtype))


def _bools(rng, shape, dtype):
    return (rng.random(shape) > 0.3).astype(np_dtype(dtype))


# ----------------------------------------------------------------- checks
def _check_ties(spec, rng, arr):
    """max/min share the gradient among ties; argmax picks the first."""
    x = arr([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = (nd.max(x, axis=1) * nd.array([1.0, 6.0], dtype="float64")).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [[0, 0.5, 0.5], [2, 2, 2]])
    with autograd.record():
        y = nd.min(x)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [[1, 0, 0], [0, 0, 0]])
    assert nd.argmax(x, axis=1).asnumpy().tolist() == [1.0, 0.0]
    assert knp.argmax(x, axis=1).dtype == np.int64 and nd.argmax(x).dtype == np.float32
    assert x.argmax(axis=1).dtype == np.int64


def _check_norm_zero(spec, rng, arr):
    x = arr(np.zeros((2, 3)), dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = nd.norm(x, axis=1).sum() + nd.std(x)
    y.backward()
    assert np.array_equal(x.grad.asnumpy(), np.zeros((2, 3)))


def _second_order(fn, x, w, arr, eps=1e-5):
    """Hessian-vector product of scalar ``fn`` by autograd against differences of its grad."""
    def grad_at(v, create):
        a = arr(v, dtype="float64")
        a.attach_grad()
        with autograd.record():
            y = fn(a)
        g = autograd.grad(y, a, create_graph=create)
        return a, g

    a, g = grad_at(x, True)
    with autograd.record():
        z = (g * nd.array(w, dtype="float64")).sum()
    z.backward()
    d = np.random.default_rng(3).standard_normal(x.shape)
    numeric = (np.sum(grad_at(x + eps * d, False)[1].asnumpy() * w) -
               np.sum(grad_at(x - eps * d, False)[1].asnumpy() * w)) / (2 * eps)
    analytic = np.sum(a.grad.asnumpy() * d)
    assert abs(numeric - analytic) <= 1e-5 + 1e-4 * abs(numeric), (numeric, analytic)


def _check_second_order(spec, rng, arr):
    x = _distinct(rng, (3, 4), "float64")
    w = rng.standard_normal((3, 4))
    v = nd.array(rng.standard_normal(3), dtype="float64")
    for fn in (lambda a: (nd.prod(a, axis=1) * v).sum(),
               lambda a: (nd.std(a, axis=1) * v).sum(),
               lambda a: (nd.var(a, axis=0, ddof=1) ** 2).sum(),
               lambda a: (nd.logsumexp(a, axis=1) * v).sum(),
               lambda a: (nd.max(a, axis=1) * nd.max(a, axis=1)).sum(),
               lambda a: (nd.norm(a, axis=1) ** 3).sum(),
               lambda a: (nd.cumsum(a, axis=1) ** 2).sum(),
               lambda a: (nd.cumprod(a, axis=1) * nd.array(w, dtype="float64")).sum(),
               lambda a: (nd.nanmean(a, axis=0) ** 2).sum(),
               lambda a: (nd.mean(a) * nd.sum(a, axis=(), exclude=True)).sum()):
        _second_order(fn, x, w, arr=arr)
    # prod and cumprod with one zero in a line: mixed second derivatives stay exact
    x[1, 2] = 0.0
    _second_order(lambda a: (nd.prod(a, axis=1) * v).sum(), x, w, arr=arr)
    _second_order(lambda a: (nd.cumprod(a, axis=1) * nd.array(w, dtype="float64")).sum(), x, w,
                  arr=arr)


def _check_errors(spec, rng, arr):
    x = arr(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"sum: axis=2 is out of range .*\(2, 3\) float32"):
        nd.sum(x, axis=2)
    with pytest.raises(ValueError, match=r"mean: .*axis=-3 .*\(2, 3\) float32"):
        knp.mean(x, axis=(0, -3))
    with pytest.raises(ValueError, match=r"max: repeated axis"):
        knp.max(x, axis=(1, -1))
    with pytest.raises(ValueError, match=r"max: cannot reduce over axis 0, which has size 0"):
        knp.max(nd.ones((0, 3)), axis=0)
    with pytest.raises(ValueError, match=r"argmax: attempt to get argmax of an empty"):
        knp.argmax(nd.ones((0,)))
    with pytest.raises(TypeError, match=r"argmin: axis must be None or an int"):
        knp.argmin(x, axis=(0, 1))
    with pytest.raises(ValueError, match=r"cumsum: axis=3 is out of range .*\(2, 3\) float32"):
        knp.cumsum(x, axis=3)
    with pytest.raises(TypeError, match=r"norm: expects floating-point inputs"):
        nd.norm(nd.ones((2,), dtype="int32"))
    with pytest.raises(ValueError, match=r"norm: ord must be 1 or 2"):
        nd.norm(x, ord=3)
    with pytest.raises(TypeError, match=r"sum: unsupported dtype 'complex64'"):
        knp.sum(x, dtype="complex64")
    with pytest.raises(ValueError, match=r"std: axis=0 is out of range .*0 dimension"):
        knp.std(nd.ones(()), axis=0)
    # methods bind to the operators; MXNet's nd.sum reduces every axis for axis=()
    assert x.sum(axis=()).shape == (2, 3) and nd.sum(x, axis=()).shape == ()
    assert x.max(axis=1, keepdims=True).shape == (2, 1)


def _check_unreduce_copy(spec, rng, arr):
    """Gradients of reductions are writable arrays of their own."""
    x = arr(np.ones((2, 3)))
    x.attach_grad()
    with autograd.record():
        y = x.sum()
    g = autograd.grad(y, x)
    g += 1
    assert np.array_equal(g.asnumpy(), np.full((2, 3), 2.0))


def _unreduce_ref(g, shape, axes, keepdims):
    kd = tuple(1 if i in axes else s for i, s in enumerate(shape))
    return np.broadcast_to(g.reshape(kd), shape)


def _scan_ref(h, axis=None, reverse=False, shape=None):
    if axis is None:
        h, axis = h.reshape(-1), 0
    out = np.flip(np.cumsum(np.flip(h, axis), axis), axis) if reverse else np.cumsum(h, axis)
    return out if shape is None else out.reshape(shape)


def _lse_ref(x, axis=None, keepdims=False, exclude=False):
    if exclude or axis == ():
        axis = _mx_axes(x, axis, exclude)
    out = sp.logsumexp(x.astype(np.float64), axis=axis, keepdims=keepdims)
    return np.asarray(out).astype(x.dtype if x.dtype in _FLOAT_DTYPES else np.float64)


def _norm_ref(x, ord=2, axis=None, keepdims=False, out_dtype=None):
    xa = x.astype(np.float64)
    r = np.sum(np.abs(xa), axis=axis, keepdims=keepdims) if ord == 1 else \
        np.sqrt(np.sum(xa * xa, axis=axis, keepdims=keepdims))
    return np.asarray(r).astype(out_dtype or x.dtype)


SPECS = [
    _row("sum", _ref(np.sum), dtypes=_ALL, dtype_kw=({"dtype": "float64"},)),
    _nd_row("sum", _ref(np.sum), dtypes=("float32", "int32")),
    _row("mean", _ref(np.mean), dtypes=_ALL, dtype_kw=({"dtype": "float64"},),
         cases=_CASES + [((), {"axis": ()})]),
    _nd_row("mean", _ref(np.mean)),
    _row("prod", _ref(np.prod), gen=_prod_gen, dtypes=_FLOATS + ("int32",),
         dtype_kw=({"dtype": "float64"},)),
    _nd_row("prod", _ref(np.prod), gen=_prod_gen),
    _row("max", _ref(np.max, False), gen=_distinct, dtypes=_ALL),
    _nd_row("max", _ref(np.max, False), gen=_distinct),
    _row("min", _ref(np.min, False), gen=_distinct, dtypes=_ALL),
    _nd_row("min", _ref(np.min, False), gen=_distinct),
    OpSpec("max", None, None, None, check=_check_ties, extra={"id": "max_ties"}),
    _row("all", _ref(np.all), gen=_bools, dtypes=("bool", "float32", "int32"), grad=False),
    _row("any", _ref(np.any), gen=lambda r, s, d: _bools(r, s, d) * (r.random(s) > 0.6),
         dtypes=("bool", "float32", "int32"), grad=False),
    _nd_row("any", _ref(np.any), gen=_bools, grad=False),
    _row("nansum", _ref(np.nansum), gen=_nan_gen, dtypes=_FLOATS),
    _row("nansum", _ref(np.nansum), dtypes=("int32", "bool"), suffix="_int"),
    _row("nanmean", _ref(np.nanmean), gen=_nan_gen, dtypes=_FLOATS,
         cases=_CASES + [((), {"axis": -1})]),
    _nd_row("nanmean", _ref(np.nanmean), gen=_nan_gen),
    _row("logsumexp", _lse_ref, call=nd.logsumexp, dtypes=_FLOATS + ("int32",)),
    _row("logsumexp", _lse_ref, gen=_big, call=nd.logsumexp, suffix="_big", dtypes=_FLOATS,
         grad_rtol=1e-3),
    _nd_row("logsumexp", _lse_ref),
    OpSpec("std", None, None, None, check=_check_norm_zero, extra={"id": "std_zero"}),
    OpSpec("prod", None, None, None, check=_check_second_order, extra={"id": "second_order"}),
    OpSpec("sum", None, None, None, check=_check_errors, extra={"id": "reduce_errors"}),
    OpSpec("_unreduce", lambda g, **k: F._unreduce(g, **k), _unreduce_ref,
           lambda rng, d: [Sample(rand(rng, (3,), d), shape=(3, 4), axes=(1,), keepdims=False),
                           Sample(rand(rng, (2, 1, 1), d), shape=(2, 3, 4), axes=(1, 2),
                                  keepdims=True),
                           Sample(rand(rng, (), d), shape=(2, 3), axes=(0, 1), keepdims=False),
                           Sample(rand(rng, (2, 3), d), shape=(2, 3), axes=(), keepdims=False),
                           Sample(rand(rng, (), d), shape=(), axes=(), keepdims=True)]),
    OpSpec("_unreduce", None, None, None, check=_check_unreduce_copy,
           extra={"id": "_unreduce_copy"}),
]

for _name, _fn in (("argmax", np.argmax), ("argmin", np.argmin)):
    _cases = [((), {}), ((5,), {}), ((3, 4), {"axis": 1}), ((3, 4), {"axis": -2}),
              ((2, 3, 4), {"axis": 0, "keepdims": True}), ((2, 3, 4), {"keepdims": True}),
              ((), {"axis": 0})]
    SPECS.append(_row(_name, _fn, gen=_with_ties, dtypes=_ALL, cases=_cases, grad=False))
    SPECS.append(_row(_name, lambda x, __f=_fn, **k: __f(x, **k).astype(np.float32),
                      gen=_with_ties, cases=_cases, call=getattr(nd, _name), grad=False,
                      suffix="_nd"))

for _name, _fn in (("var", np.var), ("std", np.std)):
    _cases = _CASES + [((4, 5), {"axis": 1, "ddof": 1}), ((2, 3, 4), {"axis": (0, 1), "ddof": 2})]
    SPECS.append(_row(_name, _ref(_fn), dtypes=_FLOATS + ("int32", "bool"), cases=_cases,
                      dtype_kw=({"dtype": "float64"},), rtol=1e-4))

_NORM_CASES = [((5,), {}), ((3, 4), {"axis": 1}), ((3, 4), {"axis": -2, "keepdims": True}),
               ((2, 3, 4), {"axis": (1, 2)}), ((2, 3), {"out_dtype": "float64"}), ((), {})]
for _ord in (1, 2):
    SPECS.append(_row("norm", _norm_ref, gen=away_from, cases=_NORM_CASES, call=nd.norm,
                      suffix=f"_ord{_ord}", extra_kw={"ord": _ord}))


def _cum_ref(fn):
    def ref(x, **k):
        if x.dtype == np_dtype("bfloat16"):
            return fn(x.astype(np.float32), **k).astype(k.get("dtype") or x.dtype)
        return fn(x, **k)

    return ref


# cumulative operators: axis None / int / negative, 0-d, dtype=
_CUM = [((), {}), ((5,), {}), ((3, 4), {}), ((3, 4), {"axis": 1}), ((2, 3, 4), {"axis": -2}),
        ((2, 3, 4), {"axis": 0}), ((), {"axis": 0}), ((3, 4), {"axis": 0, "dtype": "float64"})]
SPECS += [
    _row("cumsum", _cum_ref(np.cumsum), dtypes=_ALL, cases=_CUM, call=nd.cumsum, rtol=1e-4),
    _row("cumprod", _cum_ref(np.cumprod), gen=_prod_gen, dtypes=_FLOATS + ("int32",),
         cases=_CUM),
    OpSpec("_scan", lambda h, **k: F._scan(h, **k), _scan_ref,
           lambda rng, d: [Sample(rand(rng, (3, 4), d), axis=1),
                           Sample(rand(rng, (3, 4), d), axis=0, reverse=True),
                           Sample(rand(rng, (2, 3, 4), d), axis=None, reverse=True,
                                  shape=(4, 3, 2)),
                           Sample(rand(rng, (12,), d), axis=None, shape=(3, 4)),
                           Sample(rand(rng, (2, 3), d), axis=-1, reverse=True, shape=(2, 3))],
           dtypes=("float32", "float64", "bool", "int32")),
]
