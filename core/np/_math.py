"""``core.np``'s numeric functions that NumPy has and the registry composes: each is
built from registry operators (so differentiable and traceable), except the
comparisons that return Python values (``allclose``, ``array_equal``)."""
from __future__ import annotations

import math

import ml_dtypes as _ml_dtypes
import numpy as _numpy

from .. import ops as _ops
from ..dtypes import is_float
from ..ndarray import NDArray
from ._shaping import _arr

_F = _ops.F


def _flat(a):
    return _F.reshape(a, newshape=(-1,), mx_codes=False)


def _into(res, out):
    """``res``, or ``res`` written into ``out`` (then ``out``) when ``out`` is given."""
    if out is None:
        return res
    out[...] = res
    return out


def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None, out=None):
    """The sum along the ``offset`` diagonal.

    Example:
        >>> from core import np
        >>> float(np.trace(np.arange(4.0).reshape(2, 2)))
        3.0
    """
    return _into(_F.sum(_F.diag(a, k=offset, axis1=axis1, axis2=axis2), axis=-1, dtype=dtype),
                 out)


def vdot(a, b):
    """The dot product of the flattened arrays.

    Example:
        >>> from core import np
        >>> float(np.vdot(np.ones((2, 2)), np.ones((2, 2))))
        4.0
    """
    return _F.sum(_F.multiply(_flat(a), _flat(b)))


def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis=None):
    """The cross product of 3-vectors (2-vectors: the z component) along the given axes.

    Example:
        >>> from core import np
        >>> np.cross(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])).tolist()
        [0.0, 0.0, 1.0]
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a = _F.moveaxis(_arr(a), source=axisa, destination=-1)
    b = _F.moveaxis(_arr(b), source=axisb, destination=-1)
    na, nb = a.shape[-1], b.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(f"np.cross: vectors must have 2 or 3 components, got {na} and {nb}")
    ax = [a[..., i] for i in range(na)]
    bx = [b[..., i] for i in range(nb)]
    if na == 2 and nb == 2:
        return ax[0] * bx[1] - ax[1] * bx[0]
    a2 = ax[2] if na == 3 else 0.0
    b2 = bx[2] if nb == 3 else 0.0
    c = _F.stack(ax[1] * b2 - a2 * bx[1], a2 * bx[0] - ax[0] * b2, ax[0] * bx[1] - ax[1] * bx[0],
                 axis=-1)
    return _F.moveaxis(c, source=-1, destination=axisc)


def kron(a, b):
    """The Kronecker product.

    Example:
        >>> from core import np
        >>> np.kron(np.eye(2), np.ones((1, 2))).tolist()
        [[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]]
    """
    a, b = _arr(a), _arr(b, a)
    n = max(a.ndim, b.ndim)
    sa = (1,) * (n - a.ndim) + tuple(a.shape)
    sb = (1,) * (n - b.ndim) + tuple(b.shape)
    ea = _F.reshape(a, newshape=tuple(d for s in sa for d in (s, 1)), mx_codes=False)
    eb = _F.reshape(b, newshape=tuple(d for s in sb for d in (1, s)), mx_codes=False)
    return _F.reshape(ea * eb, newshape=tuple(x * y for x, y in zip(sa, sb)), mx_codes=False)


def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis``.

    Example:
        >>> from core import np
        >>> np.diff(np.array([1.0, 4.0, 9.0])).tolist()
        [3.0, 5.0]
    """
    a = _arr(a)
    axis %= a.ndim
    def edge(extra):
        e = _arr(extra, a)
        if e.ndim == 0:
            shape = list(a.shape)
            shape[axis] = 1
            e = _F.broadcast_to(e, shape=tuple(shape))
        return e

    parts = ([edge(prepend)] if prepend is not None else []) + [a] + (
        [edge(append)] if append is not None else [])
    if len(parts) > 1:
        a = _F.concatenate(*parts, axis=axis)
    for _ in range(n):
        m = a.shape[axis]
        hi = tuple(slice(1, None) if i == axis else slice(None) for i in range(a.ndim))
        lo = tuple(slice(None, m - 1) if i == axis else slice(None) for i in range(a.ndim))
        a = a[hi] - a[lo]
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """The differences of consecutive entries of the flattened array.

    Example:
        >>> from core import np
        >>> np.ediff1d(np.array([1.0, 2.0, 4.0]), to_begin=0.0).tolist()
        [0.0, 1.0, 2.0]
    """
    flat = _flat(_arr(ary))
    d = flat[1:] - flat[:-1]
    parts = []
    if to_begin is not None:
        parts.append(_flat(_arr(to_begin, flat)).astype(d.dtype))
    parts.append(d)
    if to_end is not None:
        parts.append(_flat(_arr(to_end, flat)).astype(d.dtype))
    return _F.concatenate(*parts, axis=0) if len(parts) > 1 else d


def average(a, axis=None, weights=None, returned: bool = False, keepdims: bool = False):
    """The (weighted) mean along ``axis``; with ``returned`` also the sum of weights.

    Example:
        >>> from core import np
        >>> float(np.average(np.array([1.0, 3.0]), weights=np.array([3.0, 1.0])))
        1.5
    """
    a = _arr(a)
    if weights is None:
        avg = _F.mean(a, axis=axis, keepdims=keepdims)
        if not returned:
            return avg
        count = a.size if axis is None else math.prod(
            a.shape[i] for i in ((axis,) if isinstance(axis, int) else axis))
        return avg, _F.full_like(avg, fill_value=float(count))
    w = _arr(weights, a)
    if w.shape != a.shape:
        if axis is None or w.ndim != 1 or not isinstance(axis, int):
            raise ValueError(f"np.average: weights of shape {tuple(w.shape)} do not fit data "
                             f"of shape {tuple(a.shape)} along axis {axis}")
        shape = [1] * a.ndim
        shape[axis] = w.shape[0]
        w = _F.reshape(w, newshape=tuple(shape), mx_codes=False)
    wsum = _F.sum(_F.broadcast_to(w, shape=tuple(a.shape)), axis=axis, keepdims=keepdims)
    avg = _F.sum(a * w, axis=axis, keepdims=keepdims) / wsum
    return (avg, wsum) if returned else avg


def _quantile(name, a, q, axis, method, keepdims):
    """Linear-interpolation quantiles through sort (differentiable in ``a``)."""
    if method not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise ValueError(f"np.{name}: method must be 'linear', 'lower', 'higher', "
                         f"'midpoint' or 'nearest', got {method!r}")
    a = _arr(a)
    if axis is None:
        a, ax = _flat(a), 0
    else:
        ax = axis % a.ndim
    qs = _numpy.asarray(q.asnumpy() if isinstance(q, NDArray) else q, dtype=_numpy.float64)
    if _numpy.any((qs < 0) | (qs > 1)):
        raise ValueError(f"np.{name}: quantiles must lie in [0, 1] (percentiles in [0, 100])")
    s = _F.sort(a, axis=ax)
    n = a.shape[ax]
    pos = qs * (n - 1)
    lo = _numpy.floor(pos).astype(_numpy.int64)
    hi = _numpy.minimum(lo + 1, n - 1)
    frac = pos - lo
    if method == "lower":
        hi, frac = lo, frac * 0
    elif method == "higher":
        lo, frac = _numpy.ceil(pos).astype(_numpy.int64), frac * 0
    elif method == "nearest":
        lo, frac = _numpy.round(pos).astype(_numpy.int64), frac * 0
    elif method == "midpoint":
        frac = _numpy.where(frac > 0, 0.5, 0.0)
    from ..ndarray import array as _nd_array

    def at(idx):
        return _F.take(s, _nd_array(idx.ravel(), ctx=s.context, dtype="int64"), axis=ax)

    vlo, vhi = at(lo), at(hi)
    shape = [1] * s.ndim
    shape[ax] = lo.size
    f = _nd_array(frac.ravel().reshape(shape), ctx=s.context, dtype=s.dtype)
    res = vlo + (vhi - vlo) * f
    res = _F.moveaxis(res, source=ax, destination=0)
    res = _F.reshape(res, newshape=qs.shape + tuple(res.shape[1:]), mx_codes=False)
    if keepdims:
        axes = range(a.ndim) if axis is None else [ax]
        for i in sorted(axes):
            res = _F.expand_dims(res, axis=qs.ndim + i)
    return res


def quantile(a, q, axis=None, out=None, overwrite_input=None, interpolation="linear",
             keepdims: bool = False):
    """The ``q``-th quantiles (``q`` in [0, 1]) along ``axis`` (NumPy's methods
    ``'linear'``, ``'lower'``, ``'higher'``, ``'midpoint'``, ``'nearest'``).

    Example:
        >>> from core import np
        >>> float(np.quantile(np.array([1.0, 2.0, 3.0, 4.0]), 0.5))
        2.5
    """
    return _into(_quantile("quantile", a, q, axis, interpolation, keepdims), out)


def percentile(a, q, axis=None, out=None, overwrite_input=None, interpolation="linear",
               keepdims: bool = False):
    """The ``q``-th percentiles (``q`` in [0, 100]); see :func:`quantile`.

    Example:
        >>> from core import np
        >>> float(np.percentile(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), 25))
        2.0
    """
    qs = _numpy.asarray(q.asnumpy() if isinstance(q, NDArray) else q, dtype=_numpy.float64)
    return quantile(a, qs / 100.0, axis, out, overwrite_input, interpolation, keepdims)


def median(a, axis=None, out=None, overwrite_input=None, keepdims: bool = False):
    """The median along ``axis`` (the mean of the two middle values for even counts).

    Example:
        >>> from core import np
        >>> float(np.median(np.array([3.0, 1.0, 2.0])))
        2.0
    """
    return quantile(a, 0.5, axis, out, overwrite_input, "linear", keepdims)


def polyval(p, x):
    """The polynomial with coefficients ``p`` (highest power first) at ``x`` (Horner).

    Example:
        >>> from core import np
        >>> np.polyval(np.array([1.0, 0.0, 2.0]), np.array([3.0])).tolist()
        [11.0]
    """
    p = _arr(p)
    x = _arr(x, p)
    res = _F.zeros_like(x) + p[0]
    for i in range(1, p.shape[0]):
        res = res * x + p[i]
    return res


def nan_to_num(x, copy: bool = True, nan: float = 0.0, posinf=None, neginf=None):
    """``x`` with NaN replaced by ``nan`` and infinities by ``posinf``/``neginf`` (default:
    the dtype's largest/lowest finite values).

    Example:
        >>> from core import np
        >>> np.nan_to_num(np.array([np.nan, 1.0]), nan=-1.0).tolist()
        [-1.0, 1.0]
    """
    x = _arr(x)
    if not is_float(x.dtype):
        return _F.copy(x) if copy else x
    info = _ml_dtypes.finfo(x.dtype)  # NumPy's finfo has no bfloat16/float8
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    res = _F.where(_F.isnan(x), nan, x)
    res = _F.where(_F.isinf(res), _F.where(res > 0, hi, lo), res).astype(x.dtype, copy=False)
    return _into(res, None if copy else x)


def fmod(x1, x2):
    """The remainder of division with the sign of the dividend (C's ``fmod``).

    Example:
        >>> from core import np
        >>> np.fmod(np.array([-3.0, 3.0]), 2.0).tolist()
        [-1.0, 1.0]
    """
    q = x1 / x2
    return x1 - _F.trunc(q) * x2


def fmax(x1, x2):
    """The elementwise maximum, ignoring NaN (NaN only where both are NaN).

    Example:
        >>> from core import np
        >>> np.fmax(np.array([np.nan, 1.0]), np.array([2.0, np.nan])).tolist()
        [2.0, 1.0]
    """
    m = _F.maximum(x1, x2)
    return _F.where(_F.isnan(x1), x2, _F.where(_F.isnan(x2), x1, m))


def fmin(x1, x2):
    """The elementwise minimum, ignoring NaN (NaN only where both are NaN)."""
    m = _F.minimum(x1, x2)
    return _F.where(_F.isnan(x1), x2, _F.where(_F.isnan(x2), x1, m))


def ldexp(x1, x2):
    """``x1 * 2 ** x2``.

    Example:
        >>> from core import np
        >>> np.ldexp(np.array([1.5]), np.array([2.0])).tolist()
        [6.0]
    """
    return x1 * _F.power(2.0, x2)


def positive(x):
    """``+x`` (a copy).

    Example:
        >>> from core import np
        >>> np.positive(np.array([-1.0])).tolist()
        [-1.0]
    """
    return _F.copy(x)


def isposinf(x):
    """Whether each entry is ``+inf``.

    Example:
        >>> from core import np
        >>> np.isposinf(np.array([np.inf, -np.inf])).tolist()
        [True, False]
    """
    return _F.logical_and(_F.isinf(x), x > 0)


def isneginf(x):
    """Whether each entry is ``-inf``."""
    return _F.logical_and(_F.isinf(x), x < 0)


def isclose(a, b, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False):
    """``|a - b| <= atol + rtol * |b|`` elementwise (infinities equal when equal).

    Example:
        >>> from core import np
        >>> np.isclose(np.array([1.0, 2.0]), np.array([1.0 + 1e-9, 2.1])).tolist()
        [True, False]
    """
    close = _F.less_equal(_F.abs(a - b), atol + rtol * _F.abs(_arr(b, a)))
    close = _F.logical_or(close, _F.equal(a, b))
    if equal_nan:
        close = _F.logical_or(close, _F.logical_and(_F.isnan(a), _F.isnan(b)))
    return close


def allclose(a, b, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> bool:
    """Whether :func:`isclose` holds everywhere (a Python bool).

    Example:
        >>> from core import np
        >>> np.allclose(np.ones(3), np.ones(3) + 1e-9)
        True
    """
    return bool(_F.all(isclose(a, b, rtol, atol, equal_nan)).item())


def array_equal(a1, a2, equal_nan: bool = False) -> bool:
    """Whether the arrays have the same shape and values (a Python bool).

    Example:
        >>> from core import np
        >>> np.array_equal(np.ones(2), np.ones(2)), np.array_equal(np.ones(2), np.ones(3))
        (True, False)
    """
    a1, a2 = _arr(a1), _arr(a2)
    if tuple(a1.shape) != tuple(a2.shape):
        return False
    eq = _F.equal(a1, a2)
    if equal_nan:
        eq = _F.logical_or(eq, _F.logical_and(_F.isnan(a1), _F.isnan(a2)))
    return bool(_F.all(eq).item())


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points ``(xp, fp)`` at ``x`` (``xp``
    increasing); differentiable in ``fp``.

    Example:
        >>> from core import np
        >>> np.interp(np.array([0.5, 3.0]), np.array([0.0, 1.0]), np.array([0.0, 2.0])).tolist()
        [1.0, 2.0]
    """
    if period is not None:
        raise ValueError("np.interp: period is not supported")
    from ..ndarray import array as _nd_array

    fp = _arr(fp)
    xs = _numpy.asarray(x.asnumpy() if isinstance(x, NDArray) else x, dtype=_numpy.float64)
    xps = _numpy.asarray(xp.asnumpy() if isinstance(xp, NDArray) else xp, dtype=_numpy.float64)
    n = xps.shape[0]
    hi = _numpy.clip(_numpy.searchsorted(xps, xs, side="right"), 1, n - 1)
    lo = hi - 1
    span = xps[hi] - xps[lo]
    t = _numpy.clip((xs - xps[lo]) / _numpy.where(span == 0, 1, span), 0.0, 1.0)
    ctx = fp.context
    flo = _F.take(fp, _nd_array(lo.ravel(), ctx=ctx, dtype="int64"), axis=0)
    fhi = _F.take(fp, _nd_array(hi.ravel(), ctx=ctx, dtype="int64"), axis=0)
    res = flo + (fhi - flo) * _nd_array(t.ravel(), ctx=ctx, dtype=fp.dtype)
    fl = fp[0] if left is None else left
    fr = fp[n - 1] if right is None else right
    below = _nd_array((xs < xps[0]).ravel(), ctx=ctx)
    above = _nd_array((xs > xps[-1]).ravel(), ctx=ctx)
    res = _F.where(below, fl, _F.where(above, fr, res))
    return _F.reshape(res, newshape=xs.shape, mx_codes=False)


def _window(m, fn, dtype, ctx, device):
    from ._creation import _dev, _float

    dev = _dev(ctx, device)
    from ..ndarray import array as _nd_array

    return _nd_array(fn(int(m)), ctx=dev, dtype=_float(dtype))


def hanning(M, dtype=None, ctx=None, device=None):
    """The Hann window of ``M`` points (float32 by default)."""
    return _window(M, _numpy.hanning, dtype, ctx, device)


def hamming(M, dtype=None, ctx=None, device=None):
    """The Hamming window of ``M`` points (float32 by default)."""
    return _window(M, _numpy.hamming, dtype, ctx, device)


def blackman(M, dtype=None, ctx=None, device=None):
    """The Blackman window of ``M`` points (float32 by default)."""
    return _window(M, _numpy.blackman, dtype, ctx, device)


def _int_op(name, fn, x1, x2):
    from ..ndarray import array as _nd_array

    a = x1.asnumpy() if isinstance(x1, NDArray) else _numpy.asarray(x1)
    b = x2.asnumpy() if isinstance(x2, NDArray) else _numpy.asarray(x2)
    if a.dtype.kind not in "iub" or b.dtype.kind not in "iub":
        raise TypeError(f"np.{name}: expects integer arrays, got {a.dtype} and {b.dtype}")
    like = x1 if isinstance(x1, NDArray) else x2
    res = fn(a, b)
    return _nd_array(res, ctx=like.context if isinstance(like, NDArray) else None,
                     dtype=res.dtype)


def gcd(x1, x2):
    """The elementwise greatest common divisor of integer arrays.

    Example:
        >>> from core import np
        >>> np.gcd(np.array([12, 9]), np.array([8, 6])).tolist()
        [4, 3]
    """
    return _int_op("gcd", _numpy.gcd, x1, x2)


def lcm(x1, x2):
    """The elementwise least common multiple of integer arrays."""
    return _int_op("lcm", _numpy.lcm, x1, x2)


def bitwise_left_shift(x1, x2):
    """``x1 << x2`` for integer arrays."""
    return _int_op("bitwise_left_shift", _numpy.left_shift, x1, x2)


def bitwise_right_shift(x1, x2):
    """``x1 >> x2`` for integer arrays."""
    return _int_op("bitwise_right_shift", _numpy.right_shift, x1, x2)
