"""More of NumPy's names in ``core.np``, beyond MXNet 2.0's list: NaN-ignoring
reductions, ``ptp``, ``cov``/``corrcoef``, ``exp2``, ``float_power``, ``heaviside``,
``signbit``, ``broadcast_arrays`` (composed of registry operators: differentiable and
traceable) and NumPy's dtype and shape helpers, which act on metadata only."""
from __future__ import annotations

import numpy as _numpy

from .. import ops as _ops
from ..dtypes import is_float
from ..ndarray import NDArray
from ._shaping import _arr

_F = _ops.F


def _nan_fill(a, value):
    a = _arr(a)
    if not is_float(a.dtype):
        return a
    return _F.where(_F.isnan(a), value, a).astype(a.dtype, copy=False)


def _nan_reduce(reduce, fill, a, axis, keepdims):
    """``reduce`` with NaN entries replaced by ``fill``; NaN where a slice is all NaN."""
    res = reduce(_nan_fill(a, fill), axis=axis, keepdims=keepdims)
    if not is_float(res.dtype):
        return res
    allnan = _F.all(_F.isnan(_arr(a)), axis=axis, keepdims=keepdims)
    return _F.where(allnan, _numpy.nan, res).astype(res.dtype, copy=False)


def nanmax(a, axis=None, keepdims: bool = False):
    """The maximum ignoring NaN (NaN where a slice is all NaN).

    Example:
        >>> from core import np
        >>> float(np.nanmax(np.array([1.0, np.nan, 3.0])))
        3.0
    """
    return _nan_reduce(_F.max, -_numpy.inf, a, axis, keepdims)


def nanmin(a, axis=None, keepdims: bool = False):
    """The minimum ignoring NaN (NaN where a slice is all NaN).

    Example:
        >>> from core import np
        >>> float(np.nanmin(np.array([1.0, np.nan, 3.0])))
        1.0
    """
    return _nan_reduce(_F.min, _numpy.inf, a, axis, keepdims)


def ptp(a, axis=None, keepdims: bool = False):
    """The range ``max - min`` along ``axis``.

    Example:
        >>> from core import np
        >>> float(np.ptp(np.array([4.0, -1.0, 2.0])))
        5.0
    """
    return _F.max(a, axis=axis, keepdims=keepdims) - _F.min(a, axis=axis, keepdims=keepdims)


def cov(m, y=None, rowvar: bool = True, bias: bool = False, ddof=None):
    """The covariance matrix of the variables in the rows (``rowvar=False``: columns).

    Example:
        >>> from core import np
        >>> np.cov(np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
        [[1.0, -1.0], [-1.0, 1.0]]
    """
    x = _arr(m)
    if x.ndim == 1:
        x = _F.reshape(x, newshape=(1, -1), mx_codes=False)
    if not rowvar and x.shape[0] != 1:
        x = _F.transpose(x)
    if y is not None:
        yy = _arr(y, x)
        if yy.ndim == 1:
            yy = _F.reshape(yy, newshape=(1, -1), mx_codes=False)
        if not rowvar and yy.shape[0] != 1:
            yy = _F.transpose(yy)
        x = _F.concatenate(x, yy, axis=0)
    n = x.shape[1]
    d = (0 if bias else 1) if ddof is None else ddof
    xc = x - _F.mean(x, axis=1, keepdims=True)
    c = _F.matmul(xc, xc, transpose_b=True) / float(n - d)
    return _F.reshape(c, newshape=(), mx_codes=False) if c.shape == (1, 1) else c


def corrcoef(x, y=None, rowvar: bool = True):
    """Pearson correlation coefficients of the variables (see :func:`cov`).

    Example:
        >>> from core import np
        >>> np.corrcoef(np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
        [[1.0, -1.0], [-1.0, 1.0]]
    """
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return c / c
    d = _F.sqrt(_F.diag(c))
    return _F.clip(c / _F.expand_dims(d, axis=1) / _F.expand_dims(d, axis=0), a_min=-1.0,
                   a_max=1.0)


def exp2(x):
    """``2 ** x``.

    Example:
        >>> from core import np
        >>> np.exp2(np.array([3.0])).tolist()
        [8.0]
    """
    return _F.power(2.0, x)


def float_power(x1, x2):
    """``x1 ** x2`` computed in float64 (NumPy's ``float_power``)."""
    return _F.power(_arr(x1).astype("float64"), _arr(x2, x1).astype("float64")
                    if isinstance(x2, (NDArray, list, tuple, _numpy.ndarray)) else x2)


def heaviside(x1, x2):
    """0 where ``x1 < 0``, ``x2`` where ``x1 == 0``, 1 where ``x1 > 0``.

    Example:
        >>> from core import np
        >>> np.heaviside(np.array([-1.0, 0.0, 2.0]), 0.5).tolist()
        [0.0, 0.5, 1.0]
    """
    x1 = _arr(x1)
    one = _F.ones_like(x1)
    res = _F.where(x1 > 0, one, _F.where(x1 < 0, one * 0, x2))
    return res.astype(x1.dtype, copy=False)


def signbit(x):
    """Whether the sign bit is set (true for negative numbers and -0.0).

    Example:
        >>> from core import np
        >>> np.signbit(np.array([-1.0, 0.0, -0.0, 2.0])).tolist()
        [True, False, True, False]
    """
    x = _arr(x)
    if not is_float(x.dtype):
        return _F.less(x, 0)
    return _F.less(_F.copysign(_F.ones_like(x), x), 0)


def broadcast_arrays(*args):
    """The arrays broadcast to one shape (a list).

    Example:
        >>> from core import np
        >>> [a.shape for a in np.broadcast_arrays(np.ones((2, 1)), np.ones(3))]
        [(2, 3), (2, 3)]
    """
    arrs = [_arr(a) for a in args]
    shape = _numpy.broadcast_shapes(*[tuple(a.shape) for a in arrs])
    return [a if tuple(a.shape) == shape else _F.broadcast_to(a, shape=shape) for a in arrs]


def ndim(a) -> int:
    """The number of axes of ``a``."""
    return len(a.shape) if hasattr(a, "shape") else _numpy.ndim(a)


def size(a, axis=None) -> int:
    """The number of elements of ``a`` (along ``axis``)."""
    shape = tuple(a.shape) if hasattr(a, "shape") else _numpy.shape(a)
    if axis is not None:
        return int(shape[axis])
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _dt(x):
    return x.dtype if isinstance(x, NDArray) else x


def result_type(*arrays_and_dtypes):
    """NumPy's ``result_type`` (arrays are read for their dtype only)."""
    return _numpy.result_type(*[_dt(x) for x in arrays_and_dtypes])


def can_cast(from_, to, casting: str = "safe") -> bool:
    """NumPy's ``can_cast`` (an array is read for its dtype only)."""
    return bool(_numpy.can_cast(_dt(from_), to, casting=casting))


promote_types = _numpy.promote_types


def isscalar(element) -> bool:
    """Whether ``element`` is a Python or NumPy scalar (arrays, even 0-d, are not)."""
    return not isinstance(element, NDArray) and bool(_numpy.isscalar(element))


def asanyarray(a, dtype=None, ctx=None, device=None) -> NDArray:
    """``a`` itself when it is an array of ``dtype``, else ``np.array(a, ...)``."""
    if isinstance(a, NDArray) and (dtype is None or _numpy.dtype(dtype) == a.dtype) \
            and ctx is None and device is None:
        return a
    from . import array

    return array(a, dtype=dtype, ctx=ctx, device=device)


ascontiguousarray = asanyarray
