"""Comparing arrays with MXNet's default tolerances and readable failure messages.

Part of ``core.test_utils`` (MXNet's ``mx.test_utils``); import from there.
"""
from __future__ import annotations

import functools
import json
from collections.abc import Callable

import numpy
import numpy as np

from .tolerance import default_context, get_atol, get_etol, get_rtol, get_tols

__all__ = [
    "almost_equal",
    "asnumpy",
    "assert_allclose",
    "assert_almost_equal",
    "assert_almost_equal_ignore_nan",
    "assert_almost_equal_with_err",
    "assert_exception",
    "checkShapes",
    "compare_ndarray_tuple",
    "compare_optimizer",
    "find_max_violation",
    "locationError",
    "retry",
    "same",
    "same_array",
    "same_symbol_structure",
]


def asnumpy(x) -> numpy.ndarray:
    """``x`` as a NumPy array (NDArrays through ``asnumpy()``)."""
    if hasattr(x, "asnumpy"):
        return x.asnumpy()
    return numpy.asarray(x)


def same(a, b) -> bool:
    """Whether two arrays have the same shape and elements (NDArrays allowed)."""
    return bool(np.array_equal(asnumpy(a), asnumpy(b)))


def checkShapes(a, b) -> None:
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


def locationError(a, b, index, names, maxError: bool = False) -> str:
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
    lines = [(f"{where}: error {rel:f} exceeds tolerance rtol={rtol:e}, atol={atol:e} "
              f"({bad} of {close.size} elements mismatch, "
              f"{100.0 * bad / max(close.size, 1):.2f}%); shapes {names[0]} "
              f"{np.shape(a)}, {names[1]} {np.shape(b)}")]
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
    a, b = np.asarray(asnumpy(a)), np.asarray(asnumpy(b))
    mask = np.logical_or(np.isnan(a), np.isnan(b))
    assert_almost_equal(np.where(mask, 0, a), np.where(mask, 0, b), rtol, atol, names)


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
    random weight and gradient (a list of shapes: ``opt2`` updates them together).

    As MXNet 1.9.1's: with ``w_stype``/``g_stype`` ``'row_sparse'`` or ``'csr'``,
    ``opt2`` gets a random sparse weight (every row stored) or gradient (some rows) and
    ``opt1`` (typically a dense reference) their dense copies.
    """
    from .. import random as _random

    ctx = default_context()
    if not isinstance(shape, list):
        if ntensors != 1:
            raise ValueError(f"compare_optimizer: ntensors={ntensors} needs a list of shapes")
        w1, w2 = _optimizer_input(_random, shape, dtype, w_stype, ctx, density=1)
        g1, g2 = _optimizer_input(_random, shape, dtype, g_stype, ctx)
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


def _optimizer_input(_random, shape, dtype, stype: str, ctx, density=None):
    """``(dense copy, array)`` of a random optimizer input of storage type ``stype``."""
    if stype == "default":
        a = _random.uniform(shape=shape, ctx=ctx, dtype=dtype)
        return a.copyto(ctx), a
    if stype in ("row_sparse", "csr"):
        from .inputs import rand_ndarray

        a = rand_ndarray(shape, stype, density=density, dtype=dtype, ctx=ctx)
        return a.copyto(ctx).tostype("default"), a
    raise ValueError(f"compare_optimizer: stype must be 'default', 'row_sparse' or 'csr', "
                     f"got {stype!r}")


def _waitall() -> None:
    from ..engine import wait_all

    wait_all()
