"""Testing helpers with MXNet 1.x's names, signatures and default tolerances.

``mx.test_utils`` under the ``mxnet`` alias. Comparisons (``same``, ``almost_equal``,
``assert_almost_equal`` with MXNet's per-dtype default tolerances), random inputs
(``rand_ndarray``, ``rand_shape_nd``, ``random_arrays``; drawn from NumPy's global
generator, so ``np.random.seed`` makes them reproducible as in MXNet), symbolic checks
(``check_symbolic_forward``/``backward``, ``check_numeric_gradient``,
``check_consistency``, ``check_speed``), statistical checks of random generators
(``verify_generator``), and environment helpers (``environment``, ``discard_stderr``).
Written here for kbackend's arrays; nothing downloads (``download``, ``get_mnist``, ...
use the files MXNet would have downloaded when they are on disk, and raise
:class:`NoNetworkError` naming the path otherwise). Only dense storage:
``stype='default'``. See docs/testing_with_mxnet_names.md.

kbackend's own helpers live here too: :func:`view_of` (non-contiguous inputs),
:func:`tolerances`, and :func:`check_numeric_gradient` also takes a Python function of
NDArrays instead of a Symbol.

Example:
    >>> import numpy as np
    >>> from core import nd
    >>> from core.test_utils import assert_almost_equal, get_rtol, same
    >>> assert_almost_equal(nd.array([1.0, 2.0]), np.array([1.0, 2.00001]))
    >>> get_rtol(dtype=np.dtype(np.float32))
    0.0001
    >>> same(np.arange(3), nd.arange(3).asnumpy())
    True
"""
from __future__ import annotations

import bz2  # the modules MXNet's test_utils exports through ``import *`` are imported too
import contextlib
import errno  # noqa: F401
import functools
import gzip
import json
import logging  # noqa: F401
import numbers
import os
import platform
import struct
import sys
import time
import traceback  # noqa: F401
import zipfile
from collections import OrderedDict  # noqa: F401
from collections.abc import Callable, Sequence
from contextlib import contextmanager  # noqa: F401

import numpy
import numpy as np
import numpy.random as rnd  # noqa: F401
import numpy.testing as npt  # noqa: F401

from . import autograd
from .context import Context, as_context, current_context
from .context import set_default_context as _set_default_context
from .dtypes import is_float
from .ndarray import NDArray
from .np._mode import use_np  # noqa: F401 - mx.test_utils.use_np, as in MXNet
from .ops import F

# --------------------------------------------------------------------------- contexts, dtypes


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


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    """``atol``, or the default absolute tolerance of ``dtype`` (float64: 1e-20)."""
    return _lookup(default_atols(), np.dtype(dtype)) if atol is None else atol


def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
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


# --------------------------------------------------------------------------- random inputs


def random_arrays(*shapes):
    """Standard-normal NumPy arrays (float32) of the given shapes; one array for one shape.

    Example:
        >>> a, b = random_arrays((2, 3), ())
        >>> a.shape, b.shape, a.dtype.name
        ((2, 3), (), 'float32')
    """
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0
              else np.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, low=0.0, high=1.0, dtype=None):
    """Uniform random NumPy arrays in ``[low, high)`` (a list, one per shape)."""
    dtype = default_dtype() if dtype is None else dtype
    return [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def random_sample(population, k: int) -> list:
    """``k`` elements of ``population`` in random order (without replacement)."""
    if not 0 <= k <= len(population):
        raise ValueError(f"random_sample: k={k} is not in [0, {len(population)}]")
    pool = list(population)
    np.random.shuffle(pool)
    return pool[:k]


def rand_shape_2d(dim0: int = 10, dim1: int = 10, allow_zero_size: bool = False) -> tuple:
    """A random 2-d shape, each size in ``[1, dim]`` (``[0, dim]`` with allow_zero_size)."""
    low = 0 if allow_zero_size else 1
    return np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1)


def rand_shape_3d(dim0: int = 10, dim1: int = 10, dim2: int = 10,
                  allow_zero_size: bool = False) -> tuple:
    """A random 3-d shape, each size in ``[1, dim]`` (``[0, dim]`` with allow_zero_size)."""
    low = 0 if allow_zero_size else 1
    return (np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1),
            np.random.randint(low, dim2 + 1))


def rand_shape_nd(num_dim: int, dim: int = 10, allow_zero_size: bool = False) -> tuple:
    """A random ``num_dim``-d shape, each size in ``[1, dim]``.

    Example:
        >>> s = rand_shape_nd(4, dim=3)
        >>> len(s), all(1 <= d <= 3 for d in s)
        (4, True)
    """
    low = 0 if allow_zero_size else 1
    return tuple(int(d) for d in np.random.randint(low, dim + 1, size=num_dim))


def rand_coord_2d(x_low: int, x_high: int, y_low: int, y_high: int) -> tuple:
    """A random integer point with ``x_low <= x < x_high`` and ``y_low <= y < y_high``."""
    return (np.random.randint(x_low, x_high, dtype=np.int64),
            np.random.randint(y_low, y_high, dtype=np.int64))


def _dense_only(where: str, stype) -> None:
    if stype not in (None, "default"):
        raise NotImplementedError(
            f"{where}: stype={stype!r}: kbackend has dense storage only (stype='default')")


def rand_ndarray(shape, stype: str = "default", density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices: bool = False, distribution=None, ctx=None) -> NDArray:
    """A standard-normal random NDArray (MXNet's signature; dense storage only).

    Args:
        shape: the shape.
        stype: ``'default'`` (``'csr'``/``'row_sparse'`` raise NotImplementedError).
        density, modifier_func, shuffle_csr_indices, distribution: sparse-only arguments
            (accepted, unused for dense arrays).
        dtype: the dtype (default float32).
        ctx: the context (default: :func:`default_context`).

    Returns:
        An NDArray.

    Example:
        >>> rand_ndarray((2, 3)).shape
        (2, 3)
    """
    _dense_only("rand_ndarray", stype)
    ctx = as_context(ctx) if ctx is not None else default_context()
    values = random_arrays(tuple(shape))
    return NDArray(values.astype(dtype if dtype is not None else default_dtype()), ctx=ctx)


def rand_sparse_ndarray(shape, stype, *args, **kwargs):
    """MXNet's sparse random arrays: kbackend has dense storage only (raises)."""
    _dense_only("rand_sparse_ndarray", stype)
    return rand_ndarray(shape, stype, dtype=kwargs.get("dtype"), ctx=kwargs.get("ctx"))


def create_sparse_array(shape, stype, *args, **kwargs):
    """MXNet's sparse arrays: kbackend has dense storage only (raises)."""
    return rand_sparse_ndarray(shape, stype, *args, **kwargs)


create_sparse_array_zd = create_sparse_array


def create_2d_tensor(rows: int, columns: int, dtype=np.int64) -> NDArray:
    """A (rows, columns) NDArray whose row ``i`` is all ``i`` (large-tensor tests)."""
    from . import nd

    return nd.broadcast_to(nd.arange(0, rows, dtype=dtype).reshape((rows, 1)),
                           shape=(rows, columns))


def create_vector(size: int, dtype=np.int64) -> NDArray:
    """``arange(size)`` as an NDArray (large-vector tests)."""
    from . import nd

    return nd.arange(0, size, dtype=dtype)


def get_identity_mat(size: int) -> NDArray:
    """The (size, size) identity as a float32 NDArray."""
    return NDArray(np.eye(size, dtype=np.float32), ctx=default_context())


def get_identity_mat_batch(size: int) -> NDArray:
    """Two (size, size) identities stacked: shape (2, size, size)."""
    eye = np.eye(size, dtype=np.float32)
    return NDArray(np.stack([eye, eye]), ctx=default_context())


def assign_each(the_input, function):
    """``function`` applied to every element of a NumPy array (a new array)."""
    out = np.empty_like(the_input)
    for i, v in np.ndenumerate(the_input):
        out[i] = function(v)
    return out


def assign_each2(input1, input2, function):
    """``function(a, b)`` applied to every pair of elements of two same-shape arrays."""
    if np.shape(input1) != np.shape(input2):
        raise ValueError(f"assign_each2: shapes {np.shape(input1)} and {np.shape(input2)} "
                         "differ")
    out = np.empty_like(input1)
    for i, v in np.ndenumerate(input1):
        out[i] = function(v, input2[i])
    return out


def np_reduce(dat, axis, keepdims: bool, numpy_reduce_func):
    """Reduce ``dat`` over ``axis`` (None, an int or several) one axis at a time.

    Example:
        >>> np_reduce(np.ones((2, 3, 4)), (0, 2), True, np.sum).shape
        (1, 3, 1)
    """
    axes = [axis] if isinstance(axis, int) else \
        list(range(dat.ndim)) if axis is None else list(axis)
    axes = [a % dat.ndim for a in axes] if dat.ndim else axes
    ret = dat
    for i in sorted(axes, reverse=True):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        shape = list(dat.shape)
        for i in axes:
            shape[i] = 1
        ret = np.asarray(ret).reshape(tuple(shape))
    return ret


def collapse_sum_like(a, shape):
    """Sum NumPy array ``a`` over the axes that broadcasting ``shape`` to ``a.shape`` adds.

    Example:
        >>> collapse_sum_like(np.ones((2, 3, 4)), (3, 1)).tolist()
        [[8.0], [8.0], [8.0]]
    """
    shape = tuple(shape)
    if len(a.shape) < len(shape):
        raise ValueError(f"collapse_sum_like: shape {shape} has more axes than {a.shape}")
    if int(np.prod(shape)) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    lead = len(a.shape) - len(shape)
    axes = list(range(lead))
    for i, s in enumerate(shape):
        if s != a.shape[lead + i]:
            if s != 1:
                raise ValueError(f"collapse_sum_like: {shape} does not broadcast to {a.shape}")
            axes.append(lead + i)
    return np.sum(a, axis=tuple(axes)).reshape(shape)


# --------------------------------------------------------------------------- comparisons


def asnumpy(x) -> numpy.ndarray:
    """``x`` as a NumPy array (NDArrays through ``asnumpy()``)."""
    if hasattr(x, "asnumpy"):
        return x.asnumpy()
    return numpy.asarray(x)


def same(a, b) -> bool:
    """Whether two arrays have the same shape and elements (NDArrays allowed)."""
    return bool(np.array_equal(asnumpy(a), asnumpy(b)))


def checkShapes(a, b) -> None:  # noqa: N802 - MXNet's name
    """Raise AssertionError when ``a`` and ``b`` have different shapes."""
    if np.shape(a) != np.shape(b):
        raise AssertionError(f"a.shape = {np.shape(a)} and b.shape = {np.shape(b)} "
                             "are not equal")


def almost_equal(a, b, rtol=None, atol=None, equal_nan: bool = False,
                 use_broadcast: bool = True) -> bool:
    """Whether ``a`` and ``b`` are element-wise close (``numpy.allclose``; float64 default
    tolerances: rtol 1e-5, atol 1e-20)."""
    a, b = asnumpy(a), asnumpy(b)
    if not use_broadcast:
        checkShapes(a, b)
    return bool(np.allclose(a, b, rtol=get_rtol(rtol), atol=get_atol(atol),
                            equal_nan=equal_nan))


def find_max_violation(a, b, rtol, atol) -> tuple:
    """``(index, violation)`` of the element where ``|a - b| / (atol + rtol |b|)`` is largest
    (equal infinities count as equal)."""
    a = np.asarray(a, np.float64) if np.asarray(a).dtype.kind != "c" else np.asarray(a)
    b = np.asarray(b, np.float64) if np.asarray(b).dtype.kind != "c" else np.asarray(b)
    a, b = np.broadcast_arrays(a, b)
    with np.errstate(invalid="ignore"):
        diff = np.where(np.equal(a, b), 0, np.abs(a - b))
        violation = diff / (atol + rtol * np.abs(b) + 1e-20)
    violation = np.where(np.isnan(violation), np.inf, violation)
    if violation.size == 0:
        return (), 0.0
    loc = int(np.argmax(violation))
    return np.unravel_index(loc, violation.shape), float(np.max(violation))


_find_max_violation = find_max_violation


def locationError(a, b, index, names, maxError: bool = False) -> str:  # noqa: N802
    """``"Location of error: (i, j), a=..., b=..."`` for one mismatching element."""
    kind = "maximum " if maxError else ""
    return f"Location of {kind}error: {tuple(int(i) for i in index)}, " \
           f"{names[0]}={_item(a, index)!r}, {names[1]}={_item(b, index)!r}"


def _item(x, index):
    v = np.asarray(x)[index]
    return v.item() if hasattr(v, "item") else v


def _mismatch_report(a, b, rtol, atol, names, equal_nan, mismatches, where) -> str:
    a64, b64 = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    a64 = a64.astype(np.float64) if a64.dtype.kind not in "cb" else a64
    b64 = b64.astype(np.float64) if b64.dtype.kind not in "cb" else b64
    with np.errstate(invalid="ignore"):
        close = np.isclose(a64, b64, rtol=rtol, atol=atol, equal_nan=equal_nan)
    bad = int(close.size - np.count_nonzero(close))
    index, rel = find_max_violation(a64, b64, rtol, atol)
    lines = [f"{where}: error {rel:f} exceeds tolerance rtol={rtol:e}, atol={atol:e} "
             f"({bad} of {close.size} elements mismatch, "
             f"{100.0 * bad / max(close.size, 1):.2f}%); shapes {names[0]} "
             f"{np.shape(a)}, {names[1]} {np.shape(b)}"]
    if index != ():
        lines.append(locationError(a64, b64, index, names, maxError=True))
    order = np.argwhere(~close)[:max(int(mismatches[0]), 0)]
    for k, idx in enumerate(order, 1):
        idx = tuple(idx)
        lines.append(f"{k:3d}: {locationError(a64, b64, idx, names)}")
    with np.printoptions(threshold=8, edgeitems=2, suppress=True):
        lines.append(f" {names[0]}: {np.asarray(a)!r}")
        lines.append(f" {names[1]}: {np.asarray(b)!r}")
    return "\n".join(lines)


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan: bool = False,
                        use_broadcast: bool = True, mismatches=(10, 10)) -> None:
    """Assert ``a`` and ``b`` (NDArrays, NumPy arrays, numbers) are element-wise close.

    Args:
        a, b: the values; compared in float64 (bool arrays: exactly).
        rtol, atol: a number, a dict dtype -> tolerance, or None for the defaults of the
            two dtypes (float32: rtol 1e-4, atol 1e-3; float64: 1e-5, 1e-20).
        names: the names in the message.
        equal_nan: whether NaN equals NaN.
        use_broadcast: allow shapes that broadcast to each other (False: shapes equal).
        mismatches: (how many mismatching elements the message lists, unused second).

    Raises:
        AssertionError: naming the tolerances, the share of mismatching elements, the
            location and values of the largest error, and the shapes.

    Example:
        >>> import numpy as np
        >>> try:
        ...     assert_almost_equal(np.array([1.0, 2.0]), np.array([1.0, 2.5]), names=("x", "y"))
        ... except AssertionError as e:
        ...     print(str(e).splitlines()[1])
        Location of maximum error: (1,), x=2.0, y=2.5
    """
    rtol, atol = get_tols(a, b, rtol, atol)
    a_, b_ = asnumpy(a), asnumpy(b)
    if not use_broadcast:
        checkShapes(a_, b_)
    if a_.dtype == np.bool_ and b_.dtype == np.bool_:
        np.testing.assert_equal(a_, b_)
        return
    try:
        np.broadcast_shapes(a_.shape, b_.shape)
    except ValueError:
        raise AssertionError(f"assert_almost_equal: shapes {names[0]} {a_.shape} and "
                             f"{names[1]} {b_.shape} do not broadcast") from None
    fa = a_ if a_.dtype.kind == "c" else a_.astype(np.float64)
    fb = b_ if b_.dtype.kind == "c" else b_.astype(np.float64)
    if np.allclose(fa, fb, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    raise AssertionError(_mismatch_report(fa, fb, rtol, atol, names, equal_nan, mismatches,
                                          "assert_almost_equal"))


def assert_allclose(a, b, rtol: float = 1e-07, atol: float = 0, equal_nan: bool = True) -> None:
    """NumPy's defaults (rtol 1e-7, atol 0, NaN equal) through :func:`assert_almost_equal`."""
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(a, b, rtol=None, atol=None, etol=None, names=("a", "b"),
                                 equal_nan: bool = False, mismatches=(10, 10)) -> None:
    """Like :func:`assert_almost_equal`, but pass while at most a share ``etol`` of the
    elements mismatch.

    Example:
        >>> assert_almost_equal_with_err(np.array([1.0, 2.0, 3.0, 9.0]),
        ...                              np.array([1.0, 2.0, 3.0, 4.0]), etol=0.3)
    """
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, names=names, equal_nan=equal_nan)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    fa, fb = asnumpy(a).astype(np.float64), asnumpy(b).astype(np.float64)
    close = np.isclose(fa, fb, rtol=rtol, atol=atol, equal_nan=equal_nan)
    err = 1 - np.count_nonzero(close) / max(close.size, 1)
    if err > etol:
        raise AssertionError(_mismatch_report(fa, fb, rtol, atol, names, equal_nan, mismatches,
                                              f"assert_almost_equal_with_err (etol={etol})"))


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=("a", "b")) -> None:
    """:func:`assert_almost_equal` after zeroing the elements where either side is NaN."""
    a, b = np.array(asnumpy(a)), np.array(asnumpy(b))
    mask = np.logical_or(np.isnan(a), np.isnan(b))
    a[mask] = 0
    b[mask] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def assert_exception(f: Callable, exception_type, *args, **kwargs) -> None:
    """Assert that ``f(*args, **kwargs)`` raises ``exception_type``.

    Example:
        >>> assert_exception(int, ValueError, "x")
    """
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"assert_exception: {getattr(f, '__name__', f)!r} did not raise "
                         f"{getattr(exception_type, '__name__', exception_type)}")


def retry(n: int):
    """Decorator: rerun a stochastic test up to ``n`` times while it raises AssertionError."""
    if n <= 0:
        raise ValueError(f"retry: n must be positive, got {n}")

    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            for i in range(n):
                try:
                    f(*args, **kwargs)
                    return
                except AssertionError:
                    if i == n - 1:
                        raise
                    _waitall()
        return wrapper
    return decorate


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None) -> None:
    """Assert two (nested tuples of) arrays are close; None on either side skips."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def same_array(array1, array2) -> bool:
    """Whether two NDArrays share memory (a write through one shows in the other)."""
    array1[:] += 1
    shared = same(array1.asnumpy(), array2.asnumpy())
    array1[:] -= 1
    return shared and same(array1.asnumpy(), array2.asnumpy())


def same_symbol_structure(sym1, sym2) -> bool:
    """Whether two Symbols have the same operator at every node (by their JSON)."""
    nodes1 = json.loads(sym1.tojson())["nodes"]
    nodes2 = json.loads(sym2.tojson())["nodes"]
    return all(n1["op"] == n2["op"] for n1, n2 in zip(nodes1, nodes2))


def compare_optimizer(opt1, opt2, shape, dtype, w_stype: str = "default",
                      g_stype: str = "default", rtol: float = 1e-4, atol: float = 1e-5,
                      compare_states: bool = True, ntensors: int = 1) -> None:
    """Assert two optimizers make the same update (states and weights) from the same
    random weight and gradient (a list of shapes: ``opt2`` updates them together)."""
    from . import random as _random

    _dense_only("compare_optimizer", w_stype)
    _dense_only("compare_optimizer", g_stype)
    ctx = default_context()
    if not isinstance(shape, list):
        w2 = _random.uniform(shape=shape, ctx=ctx, dtype=dtype)
        w1 = w2.copyto(ctx)
        g2 = _random.uniform(shape=shape, ctx=ctx, dtype=dtype)
        g1 = g2.copyto(ctx)
        state1 = opt1.create_state_multi_precision(0, w1)
        state2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(0, w1, g1, state1)
        opt2.update_multi_precision(0, w2, g2, state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    w1 = tuple(_random.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    g1 = tuple(_random.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    w2 = tuple(w.copyto(ctx) for w in w1)
    g2 = tuple(g.copyto(ctx) for g in g1)
    state2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, state2)
    for i in range(ntensors):
        state1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], state1)
        if compare_states:
            compare_ndarray_tuple(state1, state2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)


# --------------------------------------------------------------------------- symbolic checks


def _waitall() -> None:
    from .engine import wait_all

    wait_all()


def _is_symbol(x) -> bool:
    return hasattr(x, "list_arguments") and hasattr(x, "bind")


def _nd(values, ctx, dtype) -> NDArray:
    arr = asnumpy(values)
    if dtype != "asnumpy" and dtype is not None:
        arr = arr.astype(dtype)
    return NDArray(np.ascontiguousarray(arr), ctx=ctx)


def _parse_location(sym, location, ctx, dtype=default_dtype()) -> dict:
    """``{argument name: NDArray}`` from a list (in ``list_arguments`` order) or a dict."""
    names = sym.list_arguments()
    if isinstance(location, dict):
        if set(location) != set(names):
            raise ValueError(f"location: the symbol's arguments are {sorted(names)}, the "
                             f"location gives {sorted(location)}")
    else:
        if len(location) != len(names):
            raise ValueError(f"location: the symbol has {len(names)} arguments {names}, the "
                             f"location gives {len(location)} arrays")
        location = dict(zip(names, location))
    return {k: _nd(v, ctx, dtype) for k, v in location.items()}


def _parse_aux_states(sym, aux_states, ctx, dtype=default_dtype()):
    """``{aux name: NDArray}`` from a list or dict, or None."""
    if aux_states is None:
        return None
    names = sym.list_auxiliary_states()
    if isinstance(aux_states, dict):
        if set(aux_states) != set(names):
            raise ValueError(f"aux_states: the symbol's auxiliary states are {sorted(names)}, "
                             f"got {sorted(aux_states)}")
    else:
        if len(aux_states) != len(names):
            raise ValueError(f"aux_states: the symbol has {len(names)} auxiliary states "
                             f"{names}, got {len(aux_states)} arrays")
        aux_states = dict(zip(names, aux_states))
    return {k: _nd(v, ctx, dtype) for k, v in aux_states.items()}


def simple_forward(sym, ctx=None, is_train: bool = False, **inputs):
    """Run ``sym`` once on NumPy inputs (by argument name); NumPy output(s).

    Example:
        >>> from core import sym as S
        >>> simple_forward(S.var("x") * 2, x=np.array([1.0, 2.0])).tolist()
        [2.0, 4.0]
    """
    ctx = as_context(ctx) if ctx is not None else default_context()
    exe = sym.bind(ctx, args={k: _nd(v, ctx, None) for k, v in inputs.items()})
    exe.forward(is_train=is_train)
    outputs = [x.asnumpy() for x in exe.outputs]
    return outputs[0] if len(outputs) == 1 else outputs


def _set(arr: NDArray, values) -> None:
    if arr.ndim == 0:
        arr[()] = np.asarray(values)
    else:
        arr[:] = np.asarray(values)


def numeric_grad(executor, location: dict, aux_states=None, eps: float = 1e-4,
                 use_forward_train: bool = True, dtype=default_dtype()) -> dict:
    """Central finite differences of ``sum(executor.outputs[0])`` in every float argument.

    Args:
        executor: a bound executor; its ``arg_dict`` arrays are changed and restored.
        location: ``{argument name: NumPy array}``, every argument.
        aux_states: ``{aux name: NumPy array}`` reset before each forward, or None.
        eps: the step (the difference is taken at ``x +- eps / 2``).
        use_forward_train: run the forwards with ``is_train=True``.
        dtype: the dtype the values are written in.

    Returns:
        ``{argument name: NumPy gradient}``.
    """
    grads = {k: np.zeros(np.shape(v), dtype=dtype) for k, v in location.items()}
    location = {k: np.array(v, order="C") for k, v in location.items()}
    for k, v in location.items():
        _set(executor.arg_dict[k], v.astype(dtype))

    def run():
        if aux_states is not None:
            for key, val in aux_states.items():
                _set(executor.aux_dict[key], val)
        executor.forward(is_train=use_forward_train)
        return executor.outputs[0].asnumpy().astype(np.float64).sum()

    for k, v in location.items():
        if v.dtype.kind != "f":
            continue
        flat, old = v.reshape(-1), v.copy()
        for i in range(flat.size):
            flat[i] = old.reshape(-1)[i] + eps / 2.0
            _set(executor.arg_dict[k], v.astype(dtype))
            f_plus = run()
            flat[i] = old.reshape(-1)[i] - eps / 2.0
            _set(executor.arg_dict[k], v.astype(dtype))
            f_minus = run()
            grads[k].reshape(-1)[i] = (f_plus - f_minus) / eps
            flat[i] = old.reshape(-1)[i]
        _set(executor.arg_dict[k], old.astype(dtype))
    return grads


def _grad_reqs(sym, grad_nodes) -> dict:
    if grad_nodes is None:
        return {k: "write" for k in sym.list_arguments()}
    if isinstance(grad_nodes, dict):
        return dict(grad_nodes)
    if isinstance(grad_nodes, (list, tuple)):
        return {k: "write" for k in grad_nodes}
    raise ValueError(f"grad_nodes: expected None, a list of names or a dict name -> "
                     f"grad_req, got {type(grad_nodes).__name__}")


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train: bool = True,
                           ctx=None, grad_stype_dict=None, dtype=default_dtype(),
                           **kwargs) -> None:
    """Check a Symbol's backward pass (or a function's autograd) by finite differences.

    With a Symbol (MXNet's form): the gradient of ``sum(sym * proj)`` for a random
    projection ``proj`` is computed by the executor's backward and by central
    differences (:func:`numeric_grad`), and compared per argument of ``grad_nodes``
    (``'write'``: equal; ``'add'``: added to the initial gradient; ``'null'``: untouched).

    With a Python function of NDArrays (kbackend's form, for operator tests):
    ``check_numeric_gradient(fn, inputs, diff=None, eps=1e-6, rtol=1e-4, atol=1e-6,
    directions=2, seed=0, ctx=None, as_nd=None)`` compares random directional
    derivatives in float64 (see :func:`check_function_gradient`).

    Args:
        sym: a Symbol (or a function, see above).
        location: the argument values: a list in ``list_arguments()`` order or a dict.
        aux_states: auxiliary-state values (list or dict), or None.
        numeric_eps: the finite-difference step (default per dtype: float32 2**-9).
        rtol, atol: tolerances (default: MXNet's per dtype).
        grad_nodes: names to check (list), or a dict name -> grad_req; default all.
        use_forward_train: the finite differences run forward with ``is_train=True``.
        ctx: the context (default: :func:`default_context`).
        grad_stype_dict: storage types of the gradients (dense only).
        dtype: the dtype of the arrays (float16/32/64).

    Raises:
        AssertionError: a gradient differs, naming ``NUMERICAL_<arg>``/``BACKWARD_<arg>``.

    Example:
        >>> from core import sym as S
        >>> x = S.var("x")
        >>> check_numeric_gradient(x * x, [np.array([1.0, 2.0, 3.0])], dtype=np.float64)
    """
    if not _is_symbol(sym):
        extra = dict(kwargs)
        if aux_states is not None or grad_nodes is not None:
            raise TypeError("check_numeric_gradient(fn, inputs, ...): pass the function "
                            "form's options by keyword (diff=, eps=, rtol=, atol=, ...)")
        for k, v in (("eps", numeric_eps), ("rtol", rtol), ("atol", atol), ("ctx", ctx)):
            if v is not None:
                extra.setdefault(k, v)
        return check_function_gradient(sym, location, **extra)
    if kwargs:
        raise TypeError(f"check_numeric_gradient: unexpected arguments {sorted(kwargs)}")
    if grad_stype_dict:
        for v in grad_stype_dict.values():
            _dense_only("check_numeric_gradient", v)
    if dtype not in (np.float16, np.float32, np.float64):
        raise ValueError(f"check_numeric_gradient: dtype must be float16/32/64, got {dtype}")
    ctx = as_context(ctx) if ctx is not None else default_context()
    location = _parse_location(sym, location, ctx, dtype)
    location_npy = {k: v.asnumpy() for k, v in location.items()}
    aux = _parse_aux_states(sym, aux_states, ctx, dtype)
    aux_npy = None if aux is None else {k: v.asnumpy() for k, v in aux.items()}
    grad_req = _grad_reqs(sym, grad_nodes)
    _, out_shapes, _ = sym.infer_shape(**{k: v.shape for k, v in location.items()})
    if len(out_shapes) != 1:
        raise ValueError(f"check_numeric_gradient: the symbol must have one output, it has "
                         f"{len(out_shapes)} ({sym.list_outputs()})")
    proj_np = np.random.rand(*out_shapes[0]) + 0.1
    proj = _nd(proj_np, ctx, dtype)
    grads_np = {k: np.random.normal(0, 0.01, size=location[k].shape) for k in grad_req}
    args_grad = {k: _nd(v, ctx, dtype) for k, v in grads_np.items()}
    exe = sym.bind(ctx, args=location, args_grad=args_grad, grad_req=grad_req,
                   aux_states=aux)
    exe.forward(is_train=True)
    eps = get_tolerance(exe.outputs[0], numeric_eps, default_numeric_eps())
    if dtype in (np.float32, np.float16) and eps < 1e-5:
        raise ValueError(f"check_numeric_gradient: numeric_eps={eps} is too small for {dtype}")
    exe.backward([proj])
    symbolic = {k: (None if v is None else v.asnumpy()) for k, v in exe.grad_dict.items()}

    # The finite differences of sum(out * proj), on a second executor without gradients.
    weighted = _ProjectedExecutor(sym.bind(ctx, args={k: v.copy() for k, v in
                                                      location.items()},
                                           grad_req="null", aux_states=aux), proj_np)
    numeric = numeric_grad(weighted, location_npy, aux_npy, eps=eps,
                           use_forward_train=use_forward_train, dtype=dtype)
    for name, req in grad_req.items():
        fd, orig, got = numeric[name], grads_np[name], symbolic.get(name)
        labels = (f"NUMERICAL_{name}", f"BACKWARD_{name}")
        if req == "write":
            assert_almost_equal(fd, got, rtol, atol, labels)
        elif req == "add":
            assert_almost_equal(fd, got - orig.astype(got.dtype), rtol, atol, labels)
        elif req == "null":
            assert_almost_equal(orig, orig if got is None else got, rtol, atol, labels)
        else:
            raise ValueError(f"check_numeric_gradient: invalid grad_req {req!r} for {name!r}")


class _ProjectedExecutor:
    """An executor whose single output is ``outputs[0] * proj`` (for numeric_grad)."""

    def __init__(self, exe, proj):
        self._exe, self._proj = exe, proj
        self.arg_dict, self.aux_dict = exe.arg_dict, exe.aux_dict
        self.outputs: list = []

    def forward(self, is_train=False):
        out = self._exe.forward(is_train=is_train)[0]
        self.outputs = [_Values(out.asnumpy().astype(np.float64) * self._proj)]
        return self.outputs


class _Values:
    def __init__(self, values):
        self._values = values

    def asnumpy(self):
        return self._values


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None,
                           ctx=None, equal_nan: bool = False, dtype=default_dtype()):
    """Assert a Symbol's forward outputs (inference mode) equal ``expected``.

    Args:
        sym: the Symbol.
        location: argument values (list in ``list_arguments()`` order, or dict).
        expected: the outputs (list in output order, or dict by output name).
        rtol, atol: tolerances (default: MXNet's per dtype).
        aux_states: auxiliary-state values (list or dict).
        ctx: the context.
        equal_nan: NaN equals NaN.
        dtype: the arrays' dtype, or ``"asnumpy"`` to keep each input's own.

    Returns:
        The executor's outputs (NDArrays).

    Example:
        >>> from core import sym as S
        >>> a, b = S.var("lhs"), S.var("rhs")
        >>> _ = check_symbolic_forward(S.dot(a, b), [np.array([[1, 2], [3, 4]]),
        ...                            np.array([[5, 6], [7, 8]])], [np.array([[19, 22],
        ...                            [43, 50]])])
    """
    ctx = as_context(ctx) if ctx is not None else default_context()
    location = _parse_location(sym, location, ctx, dtype)
    aux = _parse_aux_states(sym, aux_states, ctx, dtype)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    exe = sym.bind(ctx, args=location, aux_states=aux, grad_req="null")
    exe.forward(is_train=False)
    outputs = exe.outputs
    if len(expected) != len(outputs):
        raise AssertionError(f"check_symbolic_forward: {len(outputs)} outputs "
                             f"{sym.list_outputs()}, {len(expected)} expected")
    for name, want, got in zip(sym.list_outputs(), expected, outputs):
        assert_almost_equal(want, got, rtol, atol, (f"EXPECTED_{name}", f"FORWARD_{name}"),
                            equal_nan=equal_nan)
    return outputs


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req="write", ctx=None, grad_stypes=None,
                            equal_nan: bool = False, dtype=default_dtype()):
    """Assert a Symbol's input gradients for the given output gradients equal ``expected``.

    Args:
        sym: the Symbol.
        location: argument values (list or dict).
        out_grads: the output gradients (list or dict by output name); None for ones.
        expected: the gradients (list in ``list_arguments()`` order, or dict by name).
        rtol, atol: tolerances.
        aux_states: auxiliary-state values.
        grad_req: ``'write'``, ``'add'``, ``'null'``, a list or dict per argument.
        ctx: the context.
        grad_stypes: gradient storage types (dense only).
        equal_nan: NaN equals NaN.
        dtype: the arrays' dtype, or ``"asnumpy"``.

    Returns:
        ``{argument name: NumPy gradient}`` as the executor computed them.

    Example:
        >>> from core import sym as S
        >>> x = S.var("x")
        >>> g = check_symbolic_backward(x * 3, [np.ones(2)], [np.ones(2)], [np.full(2, 3.0)])
        >>> g["x"].tolist()
        [3.0, 3.0]
    """
    if grad_stypes:
        for v in grad_stypes.values():
            _dense_only("check_symbolic_backward", v)
    ctx = as_context(ctx) if ctx is not None else default_context()
    location = _parse_location(sym, location, ctx, dtype)
    aux = _parse_aux_states(sym, aux_states, ctx, dtype)
    names = sym.list_arguments()
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(names, expected))
    grads_np = {k: np.random.normal(size=v.shape) for k, v in location.items()}
    args_grad = {k: _nd(v, ctx, dtype if dtype != "asnumpy" else location[k].dtype)
                 for k, v in grads_np.items()}
    if isinstance(grad_req, str):
        grad_req = {k: grad_req for k in names}
    elif isinstance(grad_req, (list, tuple)):
        grad_req = dict(zip(names, grad_req))
    exe = sym.bind(ctx, args=location, args_grad=args_grad, grad_req=grad_req, aux_states=aux)
    exe.forward(is_train=True)
    if isinstance(out_grads, dict):
        out_grads = [out_grads[k] for k in sym.list_outputs()]
    if out_grads is not None:
        out_grads = [_nd(g, ctx, None if dtype == "asnumpy" else dtype) for g in out_grads]
    exe.backward(out_grads)
    got = {k: (None if v is None else v.asnumpy()) for k, v in exe.grad_dict.items()}
    for name, want in expected.items():
        req = grad_req.get(name, "null")
        labels = (f"EXPECTED_{name}", f"BACKWARD_{name}")
        if req == "write":
            assert_almost_equal(want, got[name], rtol, atol, labels, equal_nan=equal_nan)
        elif req == "add":
            assert_almost_equal(want, got[name] - grads_np[name], rtol, atol, labels,
                                equal_nan=equal_nan)
        elif req == "null":
            have = got.get(name)
            assert_almost_equal(grads_np[name], grads_np[name] if have is None else have,
                                rtol, atol, labels, equal_nan=equal_nan)
        else:
            raise ValueError(f"check_symbolic_backward: invalid grad_req {req!r} for {name!r}")
    return got


def check_speed(sym, location=None, ctx=None, N: int = 20, grad_req=None, typ: str = "whole",
                **kwargs) -> float:
    """Seconds per run of a Symbol: forward + backward (``typ='whole'``) or forward only.

    Args:
        sym: the Symbol.
        location: ``{name: NumPy array}`` inputs, or None for random ones of the shapes in
            ``kwargs``.
        ctx: the context.
        N: the number of timed runs (after one warm-up).
        grad_req: gradient requirement (default ``'write'``).
        typ: ``'whole'`` or ``'forward'``.

    Returns:
        The mean time of a run in seconds.
    """
    if typ not in ("whole", "forward"):
        raise ValueError(f"check_speed: typ can only be 'whole' or 'forward', got {typ!r}")
    ctx = as_context(ctx) if ctx is not None else default_context()
    grad_req = "write" if grad_req is None else grad_req
    if location is None:
        exe = sym.simple_bind(ctx, grad_req=grad_req, **kwargs)
        location = {k: np.random.normal(size=a.shape) for k, a in exe.arg_dict.items()}
    else:
        if not isinstance(location, dict):
            raise TypeError(f"check_speed: location must be a dict, got "
                            f"{type(location).__name__}")
        exe = sym.simple_bind(ctx, grad_req=grad_req,
                              **{k: v.shape for k, v in location.items()})
    for name, values in location.items():
        _set(exe.arg_dict[name], np.asarray(values).astype(exe.arg_dict[name].dtype))
    train = typ == "whole"

    def step():
        exe.forward(is_train=train)
        if train:
            exe.backward(out_grads=exe.outputs)

    step()
    for out in exe.outputs:
        out.wait_to_read()
    tic = time.time()
    for _ in range(N):
        step()
    _waitall()
    return (time.time() - tic) / N


def check_consistency(sym, ctx_list, scale: float = 1.0, grad_req="write", arg_params=None,
                      aux_params=None, rtol=None, atol=None, raise_on_err: bool = True,
                      ground_truth=None, equal_nan: bool = False, use_uniform: bool = False,
                      rand_type=np.float64):
    """Assert a Symbol (or one Symbol per entry) gives the same outputs and gradients on
    every context/dtype of ``ctx_list``.

    Args:
        sym: a Symbol, or a list with one Symbol per entry of ``ctx_list``.
        ctx_list: dicts of ``simple_bind`` arguments: ``{'ctx': cpu(0), 'data': (2, 3),
            'type_dict': {'data': np.float32}}``.
        scale: the scale of the random inputs.
        grad_req: gradient requirement.
        arg_params, aux_params: input values by name (random normal / 0 where missing).
        rtol, atol: tolerances (default: MXNet's, for the less precise dtype).
        raise_on_err: raise on a mismatch (False: print it).
        ground_truth: expected outputs/gradients by name (default: the most precise run).
        equal_nan: NaN equals NaN.
        use_uniform: uniform random inputs instead of normal.
        rand_type: the dtype the random inputs are drawn in.

    Returns:
        The ground truth: ``{output or argument name: NDArray}``.

    Example:
        >>> from core import sym as S, cpu
        >>> s = S.var("x") * 2
        >>> _ = check_consistency(s, [{"ctx": cpu(0), "x": (2, 3), "type_dict": {"x": np.float64}},
        ...                           {"ctx": cpu(0), "x": (2, 3), "type_dict": {"x": np.float32}}])
    """
    if len(ctx_list) < 2:
        raise ValueError("check_consistency: ctx_list needs at least two entries")
    syms = [sym] * len(ctx_list) if _is_symbol(sym) else list(sym)
    if len(syms) != len(ctx_list):
        raise ValueError(f"check_consistency: {len(syms)} symbols for {len(ctx_list)} contexts")
    output_names, arg_names = syms[0].list_outputs(), syms[0].list_arguments()
    exes = []
    for s, spec in zip(syms, ctx_list):
        if s.list_arguments() != arg_names or s.list_outputs() != output_names:
            raise ValueError("check_consistency: the symbols' arguments or outputs differ")
        spec = dict(spec)
        ctx = spec.pop("ctx", None) or default_context()
        exes.append(s.simple_bind(ctx, grad_req=grad_req, **spec))
    arg_params = {} if arg_params is None else dict(arg_params)
    aux_params = {} if aux_params is None else dict(aux_params)
    for n, arr in sorted(exes[0].arg_dict.items()):
        if n not in arg_params:
            arg_params[n] = (np.random.uniform(-0.92 * scale, 0.92 * scale, size=arr.shape)
                             if use_uniform else
                             np.random.normal(size=arr.shape, scale=scale)).astype(rand_type)
    for n in exes[0].aux_dict:
        aux_params.setdefault(n, 0)
    for exe in exes:
        for name, arr in exe.arg_dict.items():
            _set(arr, np.broadcast_to(np.asarray(arg_params[name]), arr.shape)
                 .astype(arr.dtype))
        for name, arr in exe.aux_dict.items():
            _set(arr, np.broadcast_to(np.asarray(aux_params[name]), arr.shape)
                 .astype(arr.dtype))
        if grad_req == "add":
            for arr in exe.grad_arrays:
                if arr is not None:
                    _set(arr, np.zeros(arr.shape, arr.dtype))
    for exe in exes:
        exe.forward(is_train=False)
    dtypes = [np.dtype(exe.outputs[0].dtype) for exe in exes]
    gt_idx = int(np.argmax([d.itemsize for d in dtypes]))

    def check(arr, want, what, i):
        try:
            assert_almost_equal(arr, want, rtol=rtol, atol=atol, equal_nan=equal_nan,
                                names=(f"ctx{i}_{what}", f"ctx{gt_idx}_{what}"))
        except AssertionError as e:
            print(f"check_consistency: {what}: entry {i} ({ctx_list[i]}) differs from entry "
                  f"{gt_idx}", file=sys.stderr)
            if raise_on_err:
                raise
            print(str(e), file=sys.stderr)

    gt = dict(ground_truth) if ground_truth is not None else \
        {k: v.copy() for k, v in exes[gt_idx].output_dict.items()}
    for i, exe in enumerate(exes):
        if i != gt_idx or ground_truth is not None:
            for name, arr in zip(output_names, exe.outputs):
                check(arr, gt[name], name, i)
    if grad_req != "null":
        for exe in exes:
            exe.forward(is_train=True)
        # every executor gets the same output gradient: the first one's outputs, in the
        # least precise dtype of all
        small = []
        for k, out in enumerate(exes[0].outputs):
            dts = [np.dtype(e.outputs[k].dtype) for e in exes]
            small.append(min(dts, key=lambda d: d.itemsize))
        golden = [out.asnumpy().astype(dt) for out, dt in zip(exes[0].outputs, small)]
        for exe in exes:
            exe.backward([NDArray(g.astype(out.dtype), ctx=exe.ctx)
                          for g, out in zip(golden, exe.outputs)])
        if ground_truth is None:
            gt.update({k: (None if v is None else v.copy())
                       for k, v in exes[gt_idx].grad_dict.items()})
            gt.update({k: v.copy() for k, v in exes[gt_idx].output_dict.items()})
        for i, exe in enumerate(exes):
            if i == gt_idx and ground_truth is None:
                continue
            for name, arr in zip(output_names + arg_names, exe.outputs + exe.grad_arrays):
                want = gt.get(name)
                if want is None or arr is None:
                    continue
                check(arr, want, name, i)
    return gt


def check_gluon_hybridize_consistency(net_builder: Callable, data_l, numpy_func=None,
                                      test_grad: bool = True, rtol: float = 1e-4,
                                      atol: float = 1e-4) -> None:
    """Assert a Gluon block gives the same outputs (and input gradients) imperatively and
    hybridized, and matches ``numpy_func`` when given.

    Args:
        net_builder: a function returning a new, initialized block.
        data_l: the input arrays.
        numpy_func: a NumPy reference of the forward, or None.
        test_grad: also compare the input gradients.
        rtol, atol: tolerances.
    """
    saved = None
    results = []
    for hybridize in (False, True):
        net = net_builder()
        if saved is None:
            saved = {k: v.data().copy() for k, v in net.collect_params().items()}
        else:
            for k, v in net.collect_params().items():
                v.set_data(saved[k])
        if hybridize:
            net.hybridize()
        inputs = [x.copy() for x in data_l]
        for x in inputs:
            x.attach_grad()
        with autograd.record():
            out = net(*inputs)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        if test_grad:
            autograd.backward(outs)
        results.append(([o.asnumpy() for o in outs],
                        [x.grad.asnumpy() for x in inputs] if test_grad else []))
    for a, b in zip(results[0][0], results[1][0]):
        assert_almost_equal(a, b, rtol=rtol, atol=atol, names=("imperative", "hybridized"))
    for a, b in zip(results[0][1], results[1][1]):
        assert_almost_equal(a, b, rtol=rtol, atol=atol,
                            names=("imperative_grad", "hybridized_grad"))
    if numpy_func is not None:
        want = numpy_func(*[x.asnumpy() for x in data_l])
        want = list(want) if isinstance(want, (list, tuple)) else [want]
        for a, b in zip(results[0][0], want):
            assert_almost_equal(a, b, rtol=rtol, atol=atol, names=("output", "numpy"))


# --------------------------------------------------------------------------- kbackend's checks


def check_function_gradient(fn: Callable, inputs: Sequence, diff: Sequence[int] | None = None,
                            eps: float = 1e-6, rtol: float = 1e-4, atol: float = 1e-6,
                            directions: int = 2, seed: int = 0, ctx=None,
                            as_nd: Callable | None = None) -> None:
    """Check ``fn``'s autograd gradients against central finite differences.

    ``fn`` maps NDArrays (and other values) to an NDArray or a tuple of them. The check
    uses a random projection of the outputs, and per input ``directions`` random
    directional derivatives: <grad, d> against (L(x + eps d) - L(x - eps d)) / (2 eps),
    all in float64. (``check_numeric_gradient(fn, inputs, ...)`` calls this.)

    Args:
        fn: the function under test.
        inputs: NumPy arrays (converted to float64 NDArrays) or other values passed as is.
        diff: indices of the inputs to differentiate (default: every float array).
        eps: the finite-difference step.
        rtol, atol: tolerances on the directional derivatives.
        directions: random directions per input.
        seed: seed of the projection and the directions.
        ctx: the context.
        as_nd: ``as_nd(values) -> NDArray`` makes the NDArray of each NumPy input (e.g.
            ``view_of`` for non-contiguous inputs); default ``NDArray(values, ctx=ctx)``.

    Example:
        >>> check_function_gradient(lambda x: x * x, [np.array([1.0, 2.0])])
    """
    ctx = as_context(ctx)
    rng = numpy.random.default_rng(seed)
    arrays = [numpy.asarray(x, numpy.float64) if _is_float_array(x) else x for x in inputs]
    if diff is None:
        diff = [i for i, x in enumerate(arrays) if _is_float_array(x)]

    make = as_nd if as_nd is not None else (lambda v: NDArray(v, ctx=ctx))

    def to_nd(vals):
        return [make(v) if isinstance(v, numpy.ndarray) else v for v in vals]

    def outputs(vals):
        with autograd.pause():
            out = fn(*to_nd(vals))
        return list(out if isinstance(out, (tuple, list)) else (out,))

    outs0 = outputs(arrays)
    weights = [rng.standard_normal(o.shape) if is_float(o.dtype) else None for o in outs0]

    def loss(vals):
        return sum(float(numpy.sum(o.asnumpy() * w)) for o, w in zip(outputs(vals), weights)
                   if w is not None)

    xs = to_nd(arrays)
    for i in diff:
        xs[i].attach_grad()
    with autograd.record():
        out = fn(*xs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        terms = [F.sum_to(o * NDArray(w, ctx=ctx), shape=()) for o, w in zip(outs, weights)
                 if w is not None]
        total = terms[0]
        for t in terms[1:]:
            total = total + t
    total.backward()
    for i in diff:
        g = xs[i].grad.asnumpy()
        for _ in range(directions):
            d = rng.standard_normal(numpy.shape(arrays[i]))
            plus = list(arrays)
            minus = list(arrays)
            plus[i] = numpy.asarray(arrays[i] + eps * d)
            minus[i] = numpy.asarray(arrays[i] - eps * d)
            numeric = (loss(plus) - loss(minus)) / (2 * eps)
            analytic = float(numpy.sum(g * d))
            if not abs(numeric - analytic) <= atol + rtol * max(abs(numeric), abs(analytic)):
                raise AssertionError(
                    f"gradient of input {i} (shape {numpy.shape(arrays[i])}): directional "
                    f"derivative {analytic!r} by autograd, {numeric!r} by finite differences")


def _is_float_array(x) -> bool:
    return isinstance(x, numpy.ndarray) and is_float(x.dtype)


LAYOUTS = ("strided", "reversed", "fortran")


def view_of(a: numpy.ndarray, ctx=None, layout: str = "strided") -> NDArray:
    """An NDArray wrapping a non-contiguous view with the values of ``a``.

    Args:
        a: the values.
        ctx: the context (default: the current one).
        layout: how the view is laid out in its buffer: ``"strided"`` (every other
            element of the last axis), ``"reversed"`` (negative strides on every axis),
            ``"fortran"`` (column-major; 1-d arrays, where that is C order, are strided
            instead) or ``"offset"`` (C-contiguous, but starting one element into a
            bigger buffer, as parameters packed into one buffer are).
            Arrays of 0 or 1 element are plain copies (no strides to vary).

    Returns:
        An NDArray whose raw array is a view of a bigger or differently ordered buffer.

    Example:
        >>> import numpy
        >>> v = view_of(numpy.arange(6.0).reshape(2, 3), layout="reversed")
        >>> v.asnumpy().tolist()
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    """
    if layout not in LAYOUTS + ("offset",):
        raise ValueError(f"view_of: layout must be one of {LAYOUTS + ('offset',)}, "
                         f"got {layout!r}")
    ctx = as_context(ctx)
    a = numpy.asarray(a)
    if a.ndim == 0 or a.size <= 1:
        return NDArray._make(ctx.xp.array(a), ctx, None)
    if layout == "fortran" and a.ndim == 1:
        layout = "strided"
    if layout == "reversed":
        flip = (slice(None, None, -1),) * a.ndim
        data = ctx.xp.asarray(numpy.ascontiguousarray(a[flip]))[flip]
    elif layout == "fortran":
        data = ctx.xp.asfortranarray(ctx.xp.asarray(a))
    elif layout == "offset":
        big = numpy.zeros(a.size + 1, a.dtype)
        big[1:] = a.ravel()
        data = ctx.xp.asarray(big)[1:].reshape(a.shape)
    else:
        big = numpy.zeros(a.shape[:-1] + (a.shape[-1] * 2,), a.dtype)
        big[..., ::2] = a
        data = ctx.xp.asarray(big)[..., ::2]
    return NDArray._make(data, ctx, None)


# --------------------------------------------------------------------------- random generators


def gen_buckets_probs_with_ppf(ppf: Callable, nbuckets: int) -> tuple:
    """``nbuckets`` equal-probability buckets ``[(lo, hi), ...]`` from a quantile function,
    and their probabilities."""
    if nbuckets <= 0:
        raise ValueError(f"gen_buckets_probs_with_ppf: nbuckets must be positive, got {nbuckets}")
    probs = [1.0 / nbuckets] * nbuckets
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets)))
               for i in range(nbuckets)]
    return buckets, probs


def mean_check(generator: Callable, mu: float, sigma: float, nsamples: int = 1000000) -> bool:
    """Whether the mean of ``generator(nsamples)`` is within 3 sigma / sqrt(n) of ``mu``."""
    mean = np.asarray(asnumpy(generator(nsamples)), np.float64).mean()
    half = 3 * sigma / np.sqrt(nsamples)
    return bool(mu - half < mean < mu + half)


def var_check(generator: Callable, sigma: float, nsamples: int = 1000000) -> bool:
    """Whether the sample variance of ``generator(nsamples)`` is within 3 standard errors
    of ``sigma ** 2`` (normal approximation)."""
    samples = np.asarray(asnumpy(generator(nsamples)), np.float64)
    var = samples.var(ddof=1)
    half = 3 * np.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return bool(sigma ** 2 - half < var < sigma ** 2 + half)


def chi_square_check(generator: Callable, buckets: list, probs, nsamples: int = 1000000):
    """Pearson's chi-square test of ``generator(nsamples)`` against bucket probabilities.

    Args:
        generator: ``generator(n)`` returns ``n`` i.i.d. samples.
        buckets: ascending, disjoint ``(lo, hi)`` ranges (continuous), or the possible
            values (discrete).
        probs: the probability of each bucket.
        nsamples: the number of samples.

    Returns:
        ``(p value, observed counts, expected counts)``.
    """
    from scipy import stats  # the test's reference distribution; scipy is a test dependency

    if not isinstance(buckets, list):
        raise TypeError("chi_square_check: buckets must be a list")
    if len(probs) != len(buckets):
        raise ValueError(f"chi_square_check: {len(probs)} probs for {len(buckets)} buckets")
    samples = np.asarray(asnumpy(generator(nsamples))).reshape(-1)
    expected = (nsamples * np.array(probs, dtype=np.float32)).astype(np.int64)
    observed = np.zeros(len(buckets), dtype=np.int64)
    if isinstance(buckets[0], (list, tuple)):
        edges = np.zeros(len(buckets) * 2, dtype=np.float32)
        for i, (lo, hi) in enumerate(buckets):
            if lo > hi or (i + 1 < len(buckets) and hi > buckets[i + 1][0]):
                raise ValueError(f"chi_square_check: buckets must be ascending and disjoint, "
                                 f"bucket {i} is {buckets[i]}")
            edges[2 * i], edges[2 * i + 1] = lo, hi
        ids = np.searchsorted(edges, samples, side="right") // 2
        for i in range(len(buckets)):
            observed[i] = int((ids == i).sum())
    else:
        for i, v in enumerate(buckets):
            observed[i] = int((samples == v).sum())
    # scipy wants equal totals: compare the observed share with the expected one
    scale = observed.sum() / max(expected.sum(), 1)
    _, p = stats.chisquare(f_obs=observed, f_exp=expected * scale)
    return p, observed, expected


def verify_generator(generator: Callable, buckets: list, probs, nsamples: int = 1000000,
                     nrepeat: int = 5, success_rate: float = 0.2, alpha: float = 0.05) -> list:
    """Repeat :func:`chi_square_check` ``nrepeat`` times; assert that at least
    ``success_rate`` of the runs have p > ``alpha``. Returns the p values."""
    ps, obs, exp = [], [], []
    for _ in range(nrepeat):
        p, o, e = chi_square_check(generator, buckets, probs, nsamples)
        ps.append(p)
        obs.append(o)
        exp.append(e)
    if (np.array(ps) > alpha).sum() < nrepeat * success_rate:
        raise AssertionError(f"verify_generator: chi-square p={ps}, obs_freq={obs}, "
                             f"expected_freq={exp}\nbuckets={buckets}, probs={probs}")
    return ps


# --------------------------------------------------------------------------- environment


@contextlib.contextmanager
def environment(*args):
    """Set environment variables for the ``with`` body and restore them afterwards.

    Args:
        *args: ``name, value`` or one dict ``{name: value}``; a value of None unsets.

    Example:
        >>> with environment("KBACKEND_TEST_UTILS_DEMO", "1"):
        ...     os.environ["KBACKEND_TEST_UTILS_DEMO"]
        '1'
        >>> "KBACKEND_TEST_UTILS_DEMO" in os.environ
        False
    """
    if len(args) == 1 and isinstance(args[0], dict):
        env_vars = args[0]
    elif len(args) == 2:
        env_vars = {args[0]: args[1]}
    else:
        raise TypeError("environment: expected one dict or two arguments (name, value)")

    def apply(values):
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = str(v)

    snapshot = {k: os.environ.get(k) for k in env_vars}
    apply(env_vars)
    try:
        yield
    finally:
        _waitall()
        apply(snapshot)


def set_env_var(key: str, val: str, default_val: str = "") -> str:
    """Set environment variable ``key`` to ``val``; returns its previous value (or
    ``default_val`` when it was unset)."""
    prev = os.environ.get(key, default_val)
    os.environ[key] = val
    return prev


@contextlib.contextmanager
def discard_stderr():
    """Send standard error to /dev/null for the ``with`` body: file descriptor 2 (so
    native libraries' output too) and ``sys.stderr``."""
    with open(os.devnull, "w") as sink:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        saved = os.dup(2)
        old = sys.stderr
        try:
            os.dup2(sink.fileno(), 2)
            sys.stderr = sink
            yield
        finally:
            sys.stderr = old
            os.dup2(saved, 2)
            os.close(saved)


def is_cd_run() -> bool:
    """Whether the tests run as part of a continuous-delivery job (``CD_JOB=1``)."""
    return os.environ.get("CD_JOB", "0") == "1"


def is_aarch64_run() -> bool:
    """Whether this machine is aarch64."""
    return platform.machine() == "aarch64"


def has_tvm_ops() -> bool:
    """Whether operators generated by TVM are built in: never in kbackend (False)."""
    return False


def is_op_runnable() -> bool:
    """Whether the operators of the current context run (always, in kbackend)."""
    return True


def list_gpus() -> range:
    """``range(number of GPUs)``."""
    from .context import num_gpus

    return range(num_gpus())


# --------------------------------------------------------------------------- data (no network)


class NoNetworkError(RuntimeError):
    """A helper would have downloaded a file that is not on disk: kbackend never uses the
    network. The message names the path where the file is looked for."""


def _no_network(what: str, local: str):
    raise NoNetworkError(f"{what}: kbackend does not download anything (no network at run "
                         f"time); {local}")


def download(url: str, fname=None, dirname=None, overwrite: bool = False,
             retries: int = 5) -> str:
    """The local file MXNet would download ``url`` to (its path rules), if it exists.

    Args:
        url: the URL (its last part is the default file name).
        fname: the file name (default: from ``url``).
        dirname: the folder (default: ``fname``'s).
        overwrite: MXNet downloads again; here it is an error (nothing downloads).
        retries: accepted for MXNet compatibility.

    Returns:
        The path, when the file exists.

    Raises:
        NoNetworkError: the file is not there (or ``overwrite``); the message names the
            path to put it at.

    Example:
        >>> try:
        ...     download("http://example.com/data/x.bin", dirname="/nonexistent")
        ... except NoNetworkError as e:
        ...     print(str(e).split("; ")[1])
        put the file at /nonexistent/x.bin
    """
    if fname is None:
        fname = url.split("/")[-1]
    if dirname is not None:
        fname = os.path.join(dirname, fname)
    if not overwrite and os.path.exists(fname):
        return fname
    _no_network(f"download({url!r})", f"put the file at {fname}")


def download_model(model_name: str, dst_dir: str = "./", meta_info=None):
    """Raises :class:`NoNetworkError`: put the model's ``-symbol.json``/``.params`` files
    in ``dst_dir`` and load them with ``mx.model.load_checkpoint``."""
    _no_network(f"download_model({model_name!r})",
                f"put {model_name}-symbol.json and {model_name}-0000.params in {dst_dir!r} and "
                "load them with mx.model.load_checkpoint or SymbolBlock.imports")


_MNIST_HINT = ("or read MNIST from a folder of your own with gluon.data.vision.MNIST(root=...) "
               "or mx.io.MNISTIter(image=..., label=...)")


def _idx_gz(path: str, images: bool):
    with gzip.open(path, "rb") as f:
        head = f.read(16 if images else 8)
        if images:
            magic, n, rows, cols = struct.unpack(">IIII", head)
        else:
            magic, n = struct.unpack(">II", head)
        data = np.frombuffer(f.read(), dtype=np.uint8 if images else np.int8)
    expected = 2051 if images else 2049
    if magic != expected or data.size != (n * rows * cols if images else n):
        raise ValueError(f"get_mnist: {path} is not an MNIST idx file (magic {magic}, "
                         f"expected {expected}, or a truncated body)")
    if images:
        return data.reshape(n, 1, rows, cols).astype(np.float32) / 255
    return data


def get_mnist() -> dict:
    """MNIST from the four ``*-idx?-ubyte.gz`` files in the current folder (the names
    MXNet downloads them under), as MXNet's dict of float32 images and int8 labels.

    Raises:
        NoNetworkError: a file is missing (its path is named).
    """
    path = "http://data.mxnet.io/data/mnist/"
    try:
        out = {}
        for part, prefix in (("train", "train"), ("test", "t10k")):
            lbl = download(path + f"{prefix}-labels-idx1-ubyte.gz")
            img = download(path + f"{prefix}-images-idx3-ubyte.gz")
            out[f"{part}_label"] = _idx_gz(lbl, False)
            out[f"{part}_data"] = _idx_gz(img, True)
    except NoNetworkError as e:
        raise NoNetworkError(f"get_mnist(): {e} ({_MNIST_HINT})") from None
    return {k: out[k] for k in ("train_data", "train_label", "test_data", "test_label")}


def _extract_if_needed(what: str, wanted: list, url: str) -> None:
    if all(os.path.exists(p) for p in wanted):
        return
    missing = [p for p in wanted if not os.path.exists(p)]
    try:
        archive = download(url, dirname="data")
    except NoNetworkError:
        raise NoNetworkError(
            f"{what}: kbackend does not download anything (no network at run time); "
            f"{', '.join(missing)} not found: put the files there, or "
            f"{os.path.join('data', url.split('/')[-1])} to extract them from") from None
    with zipfile.ZipFile(archive) as zf:
        zf.extractall("data")


def get_mnist_pkl() -> None:
    """Check that ``data/mnist.pkl.gz`` exists (MXNet downloads it there).

    Raises:
        NoNetworkError: it does not.
    """
    if not os.path.exists("data/mnist.pkl.gz"):
        _no_network("get_mnist_pkl()", f"put mnist.pkl.gz in data/ ({_MNIST_HINT})")


def get_mnist_ubyte() -> None:
    """Make sure the four MNIST idx files are in ``data/`` (extracting ``data/mnist.zip``
    when only that is there), as MXNet does before reading them with ``MNISTIter``.

    Raises:
        NoNetworkError: neither the files nor the archive are there.
    """
    names = ["train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
             "t10k-labels-idx1-ubyte"]
    _extract_if_needed("get_mnist_ubyte()", [os.path.join("data", n) for n in names],
                       "http://data.mxnet.io/mxnet/data/mnist.zip")


def get_mnist_iterator(batch_size, input_shape, num_parts=1, part_index=0):
    """Training and validation ``MNISTIter`` on the idx files in ``data/``
    (:func:`get_mnist_ubyte` checks them)."""
    from .io import MNISTIter

    get_mnist_ubyte()
    flat = len(input_shape) != 3
    common = dict(input_shape=input_shape, batch_size=batch_size, flat=flat,
                  num_parts=num_parts, part_index=part_index)
    train = MNISTIter(image="data/train-images-idx3-ubyte",
                      label="data/train-labels-idx1-ubyte", shuffle=True, **common)
    val = MNISTIter(image="data/t10k-images-idx3-ubyte", label="data/t10k-labels-idx1-ubyte",
                    **common)
    return train, val


def get_cifar10() -> None:
    """Make sure CIFAR-10's ``.rec``/``.lst`` files are in ``data/cifar`` (extracting
    ``data/cifar10.zip`` when only that is there), as MXNet does.

    Raises:
        NoNetworkError: neither the files nor the archive are there.
    """
    names = ["train.rec", "test.rec", "train.lst", "test.lst"]
    _extract_if_needed("get_cifar10()", [os.path.join("data", "cifar", n) for n in names],
                       "http://data.mxnet.io/mxnet/data/cifar10.zip")


def get_zip_data(data_dir, url, data_origin_name) -> None:
    """Extract ``data_dir/data_origin_name`` into ``data_dir`` unless it is there already
    (MXNet downloads the archive first; here it must be on disk).

    Raises:
        NoNetworkError: the archive is not there.
    """
    archive = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(archive):
        _no_network(f"get_zip_data({url!r})", f"put the archive at {archive}")
        return
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(path=data_dir)


def get_bz2_data(data_dir, data_name, url, data_origin_name) -> None:
    """Decompress ``data_dir/data_origin_name`` to ``data_dir/data_name`` unless the latter
    exists (the ``.bz2`` archive must be on disk; MXNet downloads it).

    Raises:
        NoNetworkError: neither file is there.
    """
    target = os.path.join(data_dir, data_name)
    if os.path.exists(target):
        return
    archive = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(archive):
        _no_network(f"get_bz2_data({url!r})", f"put {target} or the archive {archive} there")
    tmp = f"{target}.tmp{os.getpid()}"
    with bz2.BZ2File(archive, "rb") as src, open(tmp, "wb") as dst:
        for chunk in iter(lambda: src.read(1 << 20), b""):
            dst.write(chunk)
    os.replace(tmp, target)


def get_im2rec_path(home_env: str = "MXNET_HOME") -> str:
    """The im2rec tool: kbackend's is the module ``gluon.data.im2rec``
    (``python -m gluon.data.im2rec``); its file path is returned."""
    import importlib.util

    spec = importlib.util.find_spec("gluon.data.im2rec")
    if spec is None or not spec.origin:
        raise FileNotFoundError("get_im2rec_path: gluon.data.im2rec is not installed")
    return spec.origin


def new_matrix_with_real_eigvals_2d(n: int):
    """A random (n, n) matrix with real eigenvalues (a random similarity transform of a
    diagonal matrix)."""
    shape = (n, n)
    q = np.random.uniform(-1.0, 1.0, shape)
    while np.abs(np.linalg.det(q)) < 1e-3:
        q = np.random.uniform(-1.0, 1.0, shape)
    d = np.diag(np.random.uniform(-1.0, 1.0, n))
    return q @ d @ np.linalg.inv(q)


def new_matrix_with_real_eigvals_nd(shape):
    """A batch of matrices with real eigenvalues: ``shape[:-2]`` of (n, n)."""
    n = int(np.prod(shape[:-2]))
    return np.array([new_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]) \
        .reshape(shape)


def new_orthonormal_matrix_2d(n: int):
    """A random (n, n) orthonormal matrix."""
    q, _ = np.linalg.qr(np.random.uniform(-1.0, 1.0, (n, n)))
    return q


def new_sym_matrix_with_real_eigvals_2d(n: int):
    """A random symmetric (n, n) matrix."""
    q = new_orthonormal_matrix_2d(n)
    return q @ np.diag(np.random.uniform(-1.0, 1.0, n)) @ q.T


def new_sym_matrix_with_real_eigvals_nd(shape):
    """A batch of random symmetric matrices."""
    n = int(np.prod(shape[:-2]))
    return np.array([new_sym_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]) \
        .reshape(shape)


def array(source_array, ctx=None, dtype=None) -> NDArray:
    """``nd.array``: an NDArray from array-like values (MXNet's test_utils imports it)."""
    from . import nd

    return nd.array(source_array, ctx=ctx, dtype=dtype)


def getenv(name: str):
    """The value of environment variable ``name``, or None."""
    return os.environ.get(name)


def setenv(name: str, value) -> None:
    """Set (a str) or unset (None) environment variable ``name``."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)


def __getattr__(name: str):
    # Made on first use, so that core.io, core.symbol and scipy load only then: DummyIter
    # subclasses mx.io.DataIter; ``ss`` is scipy.stats (None without scipy), as in MXNet;
    # ``mx`` is whatever ``mxnet`` is imported (the alias), looked up each time.
    if name == "DummyIter":
        value = _make_dummy_iter()
    elif name == "Symbol":
        from .symbol import Symbol as value
    elif name == "__all__":  # computed: ``mx`` is exported only while ``mxnet`` is imported
        return _ALL + (["mx"] if "mxnet" in sys.modules else [])
    elif name == "mx":  # MXNet's test_utils does ``import mxnet as mx``; tests use it
        value = sys.modules.get("mxnet")
        if value is None:
            raise AttributeError("core.test_utils.mx: no 'mxnet' module is imported "
                                 "(gluon.compat.mxnet.install() provides one)")
        return value
    elif name == "ss":
        try:
            import scipy.stats as value
        except ImportError:
            value = None
    else:
        raise AttributeError(f"module 'core.test_utils' has no attribute {name!r}")
    globals()[name] = value
    return value


def _make_dummy_iter():
    from .io import DataIter

    class DummyIter(DataIter):
        """An iterator that returns the first batch of ``real_iter`` forever (for timing).

        Args:
            real_iter: a DataIter; its first batch is taken at construction.
        """

        def __init__(self, real_iter):
            super().__init__(getattr(real_iter, "batch_size", 0))
            self.real_iter = real_iter
            self.provide_data = real_iter.provide_data
            self.provide_label = real_iter.provide_label
            self.batch_size = real_iter.batch_size
            self.the_batch = next(real_iter)

        def __iter__(self):
            return self

        def reset(self):
            pass

        def next(self):
            return self.the_batch

        __next__ = next

    DummyIter.__module__ = __name__
    return DummyIter


# ``from mxnet.test_utils import *`` gives, in MXNet, every public name of the module,
# the modules it imports included (MXNet's tests use ``sys``, ``np``, ``rnd``, ... from it).
_PRIVATE = {"annotations", "Callable", "Sequence", "numpy", "autograd", "as_context",
            "is_float", "F"}
_ALL = sorted(n for n in list(globals()) if not n.startswith("_") and n not in _PRIVATE) \
    + ["DummyIter", "Symbol", "ss"]
