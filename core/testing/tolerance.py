"""Default contexts, dtypes and MXNet's per-dtype tolerances.

Part of ``core.test_utils`` (MXNet's ``mx.test_utils``); import from there.
"""
from __future__ import annotations

import numbers

import numpy
import numpy as np

from ..context import Context, current_context
from ..context import set_default_context as _set_default_context

__all__ = [
    "default_atols",
    "default_context",
    "default_dtype",
    "default_numeric_eps",
    "default_rtols",
    "effective_dtype",
    "get_atol",
    "get_etol",
    "get_rtol",
    "get_tolerance",
    "get_tols",
    "set_default_context",
    "tolerances",
]


def default_context() -> Context:
    """The context tests run on: the current default context.

    Returns:
        A Context (``cpu(0)`` unless :func:`set_default_context` changed it).

    Example:
        >>> default_context().device_type
        'cpu'
    """
    return current_context()


def set_default_context(ctx) -> None:
    """Make ``ctx`` the default context (what arrays are created on when none is given).

    Args:
        ctx: a Context or its name (``'cpu(1)'``).

    Example:
        >>> from core import cpu
        >>> set_default_context(cpu(1)); str(default_context())
        'cpu(1)'
        >>> set_default_context(cpu(0))
    """
    _set_default_context(ctx)


def default_dtype():
    """The default data type of test arrays: ``numpy.float32``."""
    return np.float32


def _dtype_table(floats: dict) -> dict:
    table = {np.dtype(k): v for k, v in floats.items()}
    for t in (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
              np.int64, np.uint64):
        table[np.dtype(t)] = 0
    return table


def default_rtols() -> dict:
    """MXNet's default relative tolerance per dtype (float16 1e-2, float32 1e-4, float64
    1e-5, integers and bool 0)."""
    return _dtype_table({np.float16: 1e-2, np.float32: 1e-4, np.float64: 1e-5})


def default_atols() -> dict:
    """MXNet's default absolute tolerance per dtype (float16 1e-1, float32 1e-3, float64
    1e-20, integers and bool 0)."""
    return _dtype_table({np.float16: 1e-1, np.float32: 1e-3, np.float64: 1e-20})


def default_numeric_eps() -> dict:
    """The default finite-difference step per float dtype (powers of two)."""
    return {np.dtype(np.float16): 1.0 / 2 ** 6, np.dtype(np.float32): 1.0 / 2 ** 9,
            np.dtype(np.float64): 1.0 / 2 ** 14}


def effective_dtype(dat) -> np.dtype:
    """The dtype that decides the tolerances for ``dat`` (its own: kbackend does not run
    float32 matrix products in TF32, which is what makes MXNet answer float16 on A100s)."""
    return np.dtype(getattr(dat, "dtype", np.asarray(dat).dtype))


def _lookup(table: dict, dtype: np.dtype):
    if dtype in table:
        return table[dtype]
    if dtype.kind == "f" or dtype.name == "bfloat16":  # bfloat16 (ml_dtypes) and others
        return table[np.dtype(np.float16)] if dtype.itemsize <= 2 else \
            table[np.dtype(np.float64)] if dtype.itemsize >= 8 else table[np.dtype(np.float32)]
    if dtype.kind == "c":
        return table[np.dtype(np.float64 if dtype.itemsize >= 16 else np.float32)]
    return 0


def get_tolerance(dat, tol, default_tol: dict):
    """The tolerance for comparisons of ``dat``: ``tol`` when a number, else ``tol``'s entry
    (a dict dtype -> tolerance) for ``dat``'s dtype, else ``default_tol``'s."""
    if isinstance(tol, numbers.Number):
        return tol
    dtype = effective_dtype(dat)
    tol = {} if tol is None else {np.dtype(k): v for k, v in tol.items()}
    return tol[dtype] if dtype in tol else _lookup(default_tol, dtype)


def get_tols(x, y, rtol, atol) -> tuple:
    """``(rtol, atol)`` for comparing ``x`` and ``y``: the larger default of the two dtypes
    where a tolerance is None (or a dict)."""
    x = np.array(x) if isinstance(x, numbers.Number) else x
    y = np.array(y) if isinstance(y, numbers.Number) else y
    return (max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols())),
            max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols())))


_FLOAT64 = np.dtype(np.float64)


def get_atol(atol=None, dtype=_FLOAT64):
    """``atol``, or the default absolute tolerance of ``dtype`` (float64: 1e-20)."""
    return _lookup(default_atols(), np.dtype(dtype)) if atol is None else atol


def get_rtol(rtol=None, dtype=_FLOAT64):
    """``rtol``, or the default relative tolerance of ``dtype`` (float64: 1e-5)."""
    return _lookup(default_rtols(), np.dtype(dtype)) if rtol is None else rtol


def get_etol(etol=None):
    """``etol``, or the default error-rate tolerance (0)."""
    return 0 if etol is None else etol


def tolerances(dtype, rtol: float = 1e-5, atol: float = 1e-6) -> tuple:
    """(rtol, atol) for a dtype: the given ones, raised for float16/bfloat16 to 1e-2/3e-2.

    Example:
        >>> tolerances("float16")
        (0.01, 0.01)
    """
    name = numpy.dtype(dtype).name
    low = {"float16": (1e-2, 1e-2), "bfloat16": (3e-2, 3e-2)}
    if name in low:
        return max(rtol, low[name][0]), max(atol, low[name][1])
    return rtol, atol
