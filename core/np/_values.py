"""``core.np`` functions whose output shape depends on the input's values (``nonzero``,
``unique``, ``bincount``, ...) or that return index arrays and Python values.

These read the data (a sync point, as in MXNet) and compute with NumPy on the host, then
return arrays on the input's device. They are not differentiable (MXNet's are not
either) and cannot be traced into a graph: tracing code that calls them on a traced
array stops with an error that says the values of an array were read (Gluon's
``HybridizationError``), as MXNet's deferred compute refuses dynamic shapes.
"""
from __future__ import annotations

import numpy as _numpy

from ..context import as_context
from ..ndarray import NDArray
from ..ndarray import array as _nd_array


def _host(a) -> _numpy.ndarray:
    return a.asnumpy() if isinstance(a, NDArray) else _numpy.asarray(a)


def _ctx_of(a, ctx=None):
    if ctx is not None:
        return as_context(ctx)
    return a.context if isinstance(a, NDArray) else as_context(None)


def _back(data, like, ctx=None) -> NDArray:
    data = _numpy.asarray(data)
    return _nd_array(data, ctx=_ctx_of(like, ctx), dtype=data.dtype)


def nonzero(a) -> tuple:
    """The indices of the non-zero entries, one int64 array per axis.

    Example:
        >>> from core import np
        >>> [i.tolist() for i in np.nonzero(np.array([[0.0, 2.0], [3.0, 0.0]]))]
        [[0, 1], [1, 0]]
    """
    return tuple(_back(i.astype(_numpy.int64), a) for i in _numpy.nonzero(_host(a)))


def flatnonzero(a) -> NDArray:
    """The indices of the non-zero entries of ``a.ravel()`` (int64).

    Example:
        >>> from core import np
        >>> np.flatnonzero(np.array([0.0, 1.0, 0.0, 2.0])).tolist()
        [1, 3]
    """
    return _back(_numpy.flatnonzero(_host(a)).astype(_numpy.int64), a)


def argwhere(a) -> NDArray:
    """The indices of the non-zero entries, one row each: shape ``(count, a.ndim)``.

    Example:
        >>> from core import np
        >>> np.argwhere(np.array([[0.0, 2.0], [3.0, 0.0]])).tolist()
        [[0, 1], [1, 0]]
    """
    return _back(_numpy.argwhere(_host(a)).astype(_numpy.int64), a)


def count_nonzero(a, axis=None, keepdims: bool = False):
    """How many entries are non-zero (an int64 array; all of them with ``axis=None``).

    Example:
        >>> from core import np
        >>> int(np.count_nonzero(np.array([0.0, 1.0, 2.0])))
        2
    """
    return _back(_numpy.asarray(_numpy.count_nonzero(_host(a), axis=axis, keepdims=keepdims),
                                dtype=_numpy.int64), a)


def unique(ar, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis=None):
    """The sorted unique values of ``ar`` (along ``axis``), and optionally the indices
    of their first occurrences, the inverse indices and the counts (int64 arrays).

    Example:
        >>> from core import np
        >>> vals, counts = np.unique(np.array([3, 1, 3, 2]), return_counts=True)
        >>> vals.tolist(), counts.tolist()
        ([1, 2, 3], [1, 1, 2])
    """
    res = _numpy.unique(_host(ar), return_index=return_index, return_inverse=return_inverse,
                        return_counts=return_counts, axis=axis)
    if not isinstance(res, tuple):
        return _back(res, ar)
    first = _back(res[0], ar)
    return (first,) + tuple(_back(r.astype(_numpy.int64), ar) for r in res[1:])


def bincount(x, weights=None, minlength: int = 0) -> NDArray:
    """How often each non-negative int occurs in ``x`` (weighted sums with ``weights``).

    Example:
        >>> from core import np
        >>> np.bincount(np.array([0, 1, 1, 3])).tolist()
        [1, 2, 0, 1]
    """
    xs = _host(x)
    if xs.dtype.kind not in "iub":
        raise TypeError(f"np.bincount: x must hold non-negative ints, got dtype {xs.dtype}")
    w = None if weights is None else _host(weights)
    out = _numpy.bincount(xs.ravel(), weights=None if w is None else w.ravel(),
                          minlength=minlength)
    return _back(out if w is not None else out.astype(_numpy.int64), x)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """NumPy's ``histogram``: ``(counts, bin_edges)``; the edges are float32 (float64
    for float64 data).

    Example:
        >>> from core import np
        >>> counts, edges = np.histogram(np.array([0.0, 0.5, 1.0, 1.0]), bins=2)
        >>> counts.tolist(), edges.tolist()
        ([1, 3], [0.0, 0.5, 1.0])
    """
    data = _host(a)
    b = _host(bins) if isinstance(bins, NDArray) else bins
    counts, edges = _numpy.histogram(data, bins=b, range=range,
                                     weights=None if weights is None else _host(weights),
                                     density=density)
    edt = _numpy.float64 if data.dtype == _numpy.float64 else _numpy.float32
    if counts.dtype.kind in "iu":
        counts = counts.astype(_numpy.int64)
    return _back(counts, a), _back(edges.astype(edt), a)


def unravel_index(indices, shape, order: str = "C") -> tuple:
    """The coordinates in an array of ``shape`` of the flat ``indices`` (int64 arrays).

    Example:
        >>> from core import np
        >>> [i.tolist() for i in np.unravel_index(np.array([5, 1]), (2, 3))]
        [[1, 0], [2, 1]]
    """
    res = _numpy.unravel_index(_host(indices).astype(_numpy.int64), shape, order=order)
    return tuple(_back(_numpy.asarray(r, _numpy.int64), indices) for r in res)


def _tri_indices(fn, n, k, m, ctx, device) -> tuple:
    dev = as_context(ctx if ctx is not None else device)
    return tuple(_back(i.astype(_numpy.int64), None, dev) for i in fn(n, k, m))


def tril_indices(n: int, k: int = 0, m=None, ctx=None, device=None) -> tuple:
    """The row and column indices of the lower triangle of an ``n x m`` array.

    Example:
        >>> from core import np
        >>> [i.tolist() for i in np.tril_indices(2)]
        [[0, 1, 1], [0, 0, 1]]
    """
    return _tri_indices(_numpy.tril_indices, n, k, m, ctx, device)


def triu_indices(n: int, k: int = 0, m=None, ctx=None, device=None) -> tuple:
    """The row and column indices of the upper triangle (see :func:`tril_indices`)."""
    return _tri_indices(_numpy.triu_indices, n, k, m, ctx, device)


def triu_indices_from(arr, k: int = 0) -> tuple:
    """:func:`triu_indices` for the shape of the 2-D ``arr``."""
    if len(arr.shape) != 2:
        raise ValueError(f"np.triu_indices_from: arr must be 2-D, got shape {arr.shape}")
    return triu_indices(arr.shape[0], k, arr.shape[1], ctx=_ctx_of(arr))


def tril_indices_from(arr, k: int = 0) -> tuple:
    """:func:`tril_indices` for the shape of the 2-D ``arr``."""
    if len(arr.shape) != 2:
        raise ValueError(f"np.tril_indices_from: arr must be 2-D, got shape {arr.shape}")
    return tril_indices(arr.shape[0], k, arr.shape[1], ctx=_ctx_of(arr))


def diag_indices_from(arr) -> tuple:
    """The indices of the main diagonal of ``arr`` (all axes of equal length).

    Example:
        >>> from core import np
        >>> [i.tolist() for i in np.diag_indices_from(np.zeros((2, 2)))]
        [[0, 1], [0, 1]]
    """
    return tuple(_back(i.astype(_numpy.int64), arr)
                 for i in _numpy.diag_indices_from(_numpy.empty(arr.shape, _numpy.int8)))


def indices(dimensions, dtype="int64", ctx=None, device=None) -> NDArray:
    """A grid of indices: shape ``(len(dimensions), *dimensions)``.

    Example:
        >>> from core import np
        >>> np.indices((2, 2)).tolist()
        [[[0, 0], [1, 1]], [[0, 1], [0, 1]]]
    """
    dev = as_context(ctx if ctx is not None else device)
    return _back(_numpy.indices(tuple(dimensions), dtype=_numpy.dtype(dtype)), None, dev)


def shape(a) -> tuple:
    """The shape of ``a`` (an array, or anything ``numpy.shape`` takes)."""
    return tuple(a.shape) if hasattr(a, "shape") else _numpy.shape(a)


def may_share_memory(a, b, max_work=None) -> bool:
    """Whether ``a`` and ``b`` might share memory (the same device buffer).

    Example:
        >>> from core import np
        >>> x = np.zeros(3)
        >>> np.may_share_memory(x, x), np.may_share_memory(x, np.zeros(3))
        (True, False)
    """
    if not (isinstance(a, NDArray) and isinstance(b, NDArray)):
        return False
    if a.context != b.context:
        return False
    xp = a.context.xp  # DLPack views: the buffers themselves, no copy
    return bool(xp.may_share_memory(xp.from_dlpack(a), xp.from_dlpack(b)))


shares_memory = may_share_memory


def genfromtxt(fname, dtype=float, *args, ctx=None, device=None, **kwargs) -> NDArray:
    """Load a text table with ``numpy.genfromtxt`` and return it as an array (a float
    ``dtype`` becomes the float default, float32).

    Example:
        >>> import io
        >>> from core import np
        >>> np.genfromtxt(io.StringIO("1\\t2\\n3\\t4"), delimiter="\\t").tolist()
        [[1.0, 2.0], [3.0, 4.0]]
    """
    from ._creation import _float

    data = _numpy.genfromtxt(fname, *args, dtype=dtype, **kwargs)
    dt = _float(None) if data.dtype.kind == "f" and dtype in (float, None) else data.dtype
    return _nd_array(data, ctx=as_context(ctx if ctx is not None else device), dtype=dt)
