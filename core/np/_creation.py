"""``core.np``'s creation functions with MXNet 2.0's signatures and default dtypes.

Floating-point results are float32 unless ``npx.set_np(dtype=True)`` asks for NumPy's
float64 (:mod:`core.np._mode`); ``full`` takes its dtype from the fill value as MXNet
2.0 does (bool -> bool, int -> int64, float -> the float default). Each function
places its result on ``device``/``ctx`` (default: the current device).
"""
from __future__ import annotations

import numbers

import numpy as _numpy

from .. import ops as _ops
from ..context import as_context
from ..ndarray import NDArray
from ..ops.dispatch import invoke as _invoke
from ._mode import _flags

_R = _ops.REGISTRY


def _float(dtype):
    if dtype is not None:
        return dtype
    return "float64" if _flags.dtype else "float32"


def _dev(ctx, device):
    return as_context(ctx if ctx is not None else device)


def _order(name, order):
    if order not in ("C", None):
        raise ValueError(f"np.{name}: only order='C' is supported, got {order!r}")


def zeros(shape, dtype=None, order="C", ctx=None, device=None) -> NDArray:
    """An array of zeros (float32 by default, as in MXNet).

    Example:
        >>> from core import np
        >>> np.zeros((2, 3)).dtype
        dtype('float32')
    """
    _order("zeros", order)
    return _invoke(_R["zeros"], (), {"shape": shape, "dtype": _float(dtype)}, _dev(ctx, device))


def ones(shape, dtype=None, order="C", ctx=None, device=None) -> NDArray:
    """An array of ones (float32 by default).

    Example:
        >>> from core import np
        >>> np.ones(2).tolist()
        [1.0, 1.0]
    """
    _order("ones", order)
    return _invoke(_R["ones"], (), {"shape": shape, "dtype": _float(dtype)}, _dev(ctx, device))


def empty(shape, dtype=None, order="C", ctx=None, device=None) -> NDArray:
    """An uninitialized array (float32 by default).

    Example:
        >>> from core import np
        >>> np.empty((2, 2)).shape
        (2, 2)
    """
    _order("empty", order)
    return _invoke(_R["empty"], (), {"shape": shape, "dtype": _float(dtype)}, _dev(ctx, device))


def _fill_dtype(value):
    if isinstance(value, (bool, _numpy.bool_)):
        return "bool"
    if isinstance(value, _numpy.generic):
        return value.dtype.name
    if isinstance(value, numbers.Integral):
        return "int64"
    return None


def full(shape, fill_value, dtype=None, order="C", ctx=None, device=None, out=None) -> NDArray:
    """An array of ``shape`` filled with ``fill_value``.

    Without ``dtype``: a bool fill gives bool, an int int64, a float the float default
    (float32); an array fill is broadcast to ``shape`` (on its own device).

    Example:
        >>> from core import np
        >>> np.full((2,), 7).dtype, np.full((2,), 0.5).dtype
        (dtype('int64'), dtype('float32'))
    """
    _order("full", order)
    if isinstance(fill_value, NDArray):
        res = _ops.F.broadcast_to(fill_value, shape=tuple(
            (shape,) if isinstance(shape, int) else shape))
        if dtype is not None:
            res = res.astype(dtype)
    else:
        dt = _float(dtype if dtype is not None else _fill_dtype(fill_value))
        res = _invoke(_R["full"], (), {"shape": shape, "fill_value": fill_value, "dtype": dt},
                      _dev(ctx, device))
    if out is not None:
        out[...] = res
        return out
    return res


def arange(start, stop=None, step=1, dtype=None, ctx=None, device=None) -> NDArray:
    """``start, start + step, ...`` below ``stop``: float32 by default, as in MXNet
    (with ``npx.set_np(dtype=True)``: NumPy's dtypes, int64 for int arguments).

    Example:
        >>> from core import np
        >>> np.arange(3).tolist()
        [0.0, 1.0, 2.0]
    """
    if dtype is None and _flags.dtype and all(
            isinstance(v, numbers.Integral) for v in (start, stop if stop is not None else 0,
                                                      step)):
        dtype = "int64"
    return _invoke(_R["arange"], (), {"start": start, "stop": stop, "step": step, "repeat": 1,
                                      "dtype": _float(dtype)}, _dev(ctx, device))


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype=None, axis: int = 0, ctx=None, device=None):
    """``num`` evenly spaced values from ``start`` to ``stop`` (float32 by default).

    Returns:
        The values, or ``(values, step)`` with ``retstep=True``.

    Example:
        >>> from core import np
        >>> np.linspace(0, 1, 3).tolist()
        [0.0, 0.5, 1.0]
    """
    if axis != 0:
        raise ValueError(f"np.linspace: only axis=0 is supported, got {axis!r}")
    res = _invoke(_R["linspace"], (), {"start": start, "stop": stop, "num": num,
                                       "endpoint": endpoint, "dtype": _float(dtype)},
                  _dev(ctx, device))
    if retstep:
        div = (num - 1) if endpoint else num
        step = (stop - start) / div if div > 0 else float("nan")
        return res, step
    return res


def eye(N, M=None, k: int = 0, dtype=None, ctx=None, device=None) -> NDArray:
    """A 2-D array with ones on the ``k``-th diagonal (float32 by default).

    Example:
        >>> from core import np
        >>> np.eye(2).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    return _invoke(_R["eye"], (), {"N": N, "M": M, "k": k, "dtype": _float(dtype)},
                   _dev(ctx, device))


def identity(n, dtype=None, ctx=None, device=None) -> NDArray:
    """The ``n x n`` identity matrix (float32 by default).

    Example:
        >>> from core import np
        >>> np.identity(2).shape
        (2, 2)
    """
    return eye(n, dtype=dtype, ctx=ctx, device=device)


def logspace(start, stop, num: int = 50, endpoint: bool = True, base: float = 10.0,
             dtype=None, axis: int = 0, ctx=None, device=None) -> NDArray:
    """``base ** linspace(start, stop, num)`` (float32 by default).

    Example:
        >>> from core import np
        >>> np.logspace(0, 2, 3).tolist()
        [1.0, 10.0, 100.0]
    """
    exps = linspace(start, stop, num, endpoint, dtype="float64", axis=axis, ctx=ctx,
                    device=device)
    return (base ** exps).astype(_float(dtype))


def tri(N, M=None, k: int = 0, dtype=None, ctx=None, device=None) -> NDArray:
    """Ones at and below the ``k``-th diagonal of an ``N x M`` array.

    Example:
        >>> from core import np
        >>> np.tri(2).tolist()
        [[1.0, 0.0], [1.0, 1.0]]
    """
    m = N if M is None else M
    return _ops.F.tril(ones((N, m), dtype=dtype, ctx=ctx, device=device), k=k)
