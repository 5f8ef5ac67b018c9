"""Building sparse arrays: MXNet 1.x's ``nd.sparse.csr_matrix``, ``row_sparse_array``,
``zeros``, ``empty``, ``array`` and ``cast_storage`` (``python/mxnet/ndarray/sparse.py``).

Example:
    >>> from core.sparse import create
    >>> a = create.csr_matrix(([1, 2], [1, 0], [0, 1, 2]), shape=(2, 2))
    >>> a.asnumpy().tolist(), a.dtype.name
    ([[0.0, 1.0], [2.0, 0.0]], 'float32')
    >>> create.zeros('row_sparse', (3, 2)).data.shape
    (0, 2)
"""
from __future__ import annotations

import numbers

import numpy

from ..context import as_context, current_context
from ..dtypes import as_dtype
from ..ndarray import NDArray
from ..ndarray import array as _dense_array
from . import storage as _st
from .arrays import STYPES, BaseSparseNDArray, CSRNDArray, RowSparseNDArray

__all__ = ["array", "cast_storage", "csr_matrix", "empty", "row_sparse_array", "zeros"]

_F32 = numpy.dtype(numpy.float32)


def _check_stype(fn: str, stype) -> str:
    if stype not in STYPES:
        raise ValueError(f"{fn}: unknown storage type {stype!r}; expected one of "
                         f"{', '.join(map(repr, STYPES))}")
    return stype


def _shape_tuple(fn: str, shape) -> tuple:
    if isinstance(shape, numbers.Integral):
        return (int(shape),)
    try:
        return tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"{fn}: shape must be an int or a tuple of ints, got {shape!r}") \
            from None


def _default_dtype(src, dtype):
    """MXNet's ``_prepare_default_dtype``: the source's dtype for arrays, else float32."""
    if dtype is not None:
        return as_dtype(dtype)
    if isinstance(src, (NDArray, numpy.ndarray)) or _is_scipy(src):
        return numpy.dtype(src.dtype)
    return _F32


def _is_scipy(x) -> bool:
    return type(x).__module__.startswith("scipy.sparse") and hasattr(x, "tocsr")


def _raw(xp, x, dtype, fn: str, what: str):
    if isinstance(x, NDArray):
        x = x.asnumpy()
    try:
        a = numpy.asarray(x, dtype=dtype)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{fn}: {what} must be array-like ({e})") from None
    return xp.array(a, copy=True)


def zeros(stype: str, shape, ctx=None, dtype=None, **kwargs) -> NDArray:
    """An all-zero array of storage ``stype`` (no stored values).

    Args:
        stype: ``'row_sparse'``, ``'csr'`` or ``'default'`` (a dense array).
        shape: an int or a tuple (csr: 2-D).
        ctx: the context (default: the current one).
        dtype: the dtype (default float32).

    Returns:
        A RowSparseNDArray, CSRNDArray or NDArray.
    """
    _check_stype("zeros", stype)
    shape = _shape_tuple("zeros", shape)
    dtype = _F32 if dtype is None else as_dtype(dtype, "zeros")
    out = kwargs.pop("out", None)
    ctx = as_context(ctx) if ctx is not None else current_context()
    if stype == "default":
        from ..nd import legacy

        return legacy.zeros(shape, ctx=ctx, dtype=dtype, out=out, **kwargs)
    xp = ctx.xp
    with ctx.device_guard():
        if stype == "row_sparse":
            if not shape:
                raise ValueError("zeros: a row_sparse array needs at least 1 dimension")
            res = RowSparseNDArray._new(ctx, shape, xp.zeros((0,) + shape[1:], dtype),
                                        [xp.zeros((0,), _st.AUX_DTYPE)])
        else:
            if len(shape) != 2:
                raise ValueError(f"zeros: a csr array must be 2-D, got shape {shape}")
            res = CSRNDArray._new(ctx, shape, xp.zeros((0,), dtype),
                                  [xp.zeros((shape[0] + 1,), _st.AUX_DTYPE),
                                   xp.zeros((0,), _st.AUX_DTYPE)])
    if out is not None:
        res.copyto(out)
        return out
    return res


def empty(stype: str, shape, ctx=None, dtype=None) -> NDArray:
    """MXNet's ``sparse.empty``: for sparse storage the same as :func:`zeros`."""
    _check_stype("empty", stype)
    if stype == "default":
        from ..nd import legacy

        return legacy.empty(shape, ctx=ctx, dtype=dtype)
    return zeros(stype, shape, ctx=ctx, dtype=dtype)


def _csr_from_definition(data, indices, indptr, shape, ctx, dtype) -> CSRNDArray:
    fn = "csr_matrix"
    ctx = as_context(ctx) if ctx is not None else current_context()
    dtype = _default_dtype(data, dtype)
    xp = ctx.xp
    with ctx.device_guard():
        values = _raw(xp, data, dtype, fn, "data")
        idx = _raw(xp, indices, _st.AUX_DTYPE, fn, "indices")
        ptr = _raw(xp, indptr, _st.AUX_DTYPE, fn, "indptr")
    if values.ndim != 1 or idx.ndim != 1 or ptr.ndim != 1 or ptr.shape[0] == 0:
        raise ValueError(f"{fn}: data, indices and indptr must be 1-D (indptr not empty), "
                         f"got shapes {tuple(values.shape)}, {tuple(idx.shape)}, "
                         f"{tuple(ptr.shape)}")
    if values.shape != idx.shape:
        raise ValueError(f"{fn}: data has {values.shape[0]} values but indices has "
                         f"{idx.shape[0]}")
    if shape is None:
        if idx.shape[0] == 0:
            raise ValueError(f"{fn}: invalid shape: give shape= for a matrix with no values")
        shape = (ptr.shape[0] - 1, int(idx.max()) + 1)
    shape = _shape_tuple(fn, shape)
    if len(shape) != 2:
        raise ValueError(f"{fn}: a csr array must be 2-D, got shape {shape}")
    if ptr.shape[0] != shape[0] + 1:
        raise ValueError(f"{fn}: indptr has {ptr.shape[0]} entries but shape {shape} needs "
                         f"{shape[0] + 1}")
    return CSRNDArray._new(ctx, shape, values, [ptr, idx])


def _from_scipy(src, ctx, dtype) -> CSRNDArray:
    csr = src.tocsr().sorted_indices()
    csr.sum_duplicates()
    return _csr_from_definition(csr.data, csr.indices, csr.indptr, csr.shape, ctx,
                                _default_dtype(src, dtype))


def _check_shape(fn, s1, s2):
    if s1 and s2 and tuple(s1) != tuple(s2):
        raise ValueError(f"{fn}: shape mismatch: {tuple(s1)} vs {tuple(s2)}")


def _from_dense(fn, src, stype, shape, ctx, dtype):
    dtype = _default_dtype(src, dtype)
    dns = _dense_array(src, ctx=ctx, dtype=dtype) if not isinstance(src, NDArray) else \
        src.astype(dtype, copy=False)
    if ctx is not None and dns.context != as_context(ctx):
        dns = dns.as_in_context(as_context(ctx))
    _check_shape(fn, dns.shape, shape)
    return cast_storage(dns, stype)


def csr_matrix(arg1, shape=None, ctx=None, dtype=None) -> CSRNDArray:
    """A :class:`CSRNDArray` (MXNet's ``nd.sparse.csr_matrix``).

    Args:
        arg1: ``(data, indices, indptr)``; ``(data, (row, col))`` (COO); a shape
            ``(M, N)`` (all zeros); a scipy sparse matrix; a CSRNDArray; or dense data
            (an NDArray, NumPy array or nested list).
        shape: the shape (inferred when left out).
        ctx: the context (default: the current one, or the source's).
        dtype: the dtype (default: the source's for arrays, else float32).

    Example:
        >>> from core.nd import sparse
        >>> sparse.csr_matrix(([5.0], ([1], [2])), shape=(2, 3)).asnumpy().tolist()
        [[0.0, 0.0, 0.0], [0.0, 0.0, 5.0]]
    """
    fn = "csr_matrix"
    if isinstance(arg1, tuple):
        if len(arg1) == 2:
            if isinstance(arg1[1], tuple) and len(arg1[1]) == 2:
                import scipy.sparse as spsp

                data, (row, col) = arg1
                conv = (lambda a: a.asnumpy() if isinstance(a, NDArray) else numpy.asarray(a))
                coo = spsp.coo_matrix((conv(data), (conv(row), conv(col))), shape=shape)
                _check_shape(fn, coo.shape, shape)
                return _from_scipy(coo, ctx, dtype if dtype is not None else
                                   _default_dtype(data, None) if isinstance(
                                       data, (NDArray, numpy.ndarray)) else None)
            _check_shape(fn, arg1, shape)
            return empty("csr", arg1, ctx=ctx, dtype=dtype)
        if len(arg1) == 3:
            return _csr_from_definition(arg1[0], arg1[1], arg1[2], shape, ctx, dtype)
        raise ValueError(f"{fn}: unexpected length of input tuple: {len(arg1)}")
    if isinstance(arg1, CSRNDArray) or _is_scipy(arg1):
        _check_shape(fn, arg1.shape, shape)
        return array(arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, RowSparseNDArray):
        raise ValueError(f"{fn}: unexpected input type: RowSparseNDArray")  # noqa: TRY004
    return _from_dense(fn, arg1, "csr", shape, ctx, dtype)


def _rsp_from_definition(data, indices, shape, ctx, dtype) -> RowSparseNDArray:
    fn = "row_sparse_array"
    ctx = as_context(ctx) if ctx is not None else current_context()
    dtype = _default_dtype(data, dtype)
    xp = ctx.xp
    with ctx.device_guard():
        values = _raw(xp, data, dtype, fn, "data")
        idx = _raw(xp, indices, _st.AUX_DTYPE, fn, "indices")
    if idx.ndim != 1:
        raise ValueError(f"{fn}: indices must be 1-D, got shape {tuple(idx.shape)}")
    if values.ndim == 0 or values.shape[0] != idx.shape[0]:
        raise ValueError(f"{fn}: data has shape {tuple(values.shape)} but there are "
                         f"{idx.shape[0]} indices (one row of data per index)")
    if shape is None:
        if idx.shape[0] == 0:
            raise ValueError(f"{fn}: invalid shape: give shape= for an array with no rows")
        shape = (int(idx[-1]) + 1,) + tuple(values.shape[1:])
    shape = _shape_tuple(fn, shape)
    if len(shape) != values.ndim or tuple(shape[1:]) != tuple(values.shape[1:]) or \
            int(numpy.prod(shape[1:])) == 0:
        raise ValueError(f"{fn}: invalid shape {shape} for data of shape "
                         f"{tuple(values.shape)}")
    return RowSparseNDArray._new(ctx, shape, values, [idx])


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None) -> RowSparseNDArray:
    """A :class:`RowSparseNDArray` (MXNet's ``nd.sparse.row_sparse_array``).

    Args:
        arg1: ``(data, indices)``; a shape ``(D0, D1, ...)`` (all zeros); a
            RowSparseNDArray; or dense data (an NDArray, NumPy array or nested list).
        shape: the shape (inferred from the last index when left out).
        ctx: the context (default: the current one).
        dtype: the dtype (default: the source's for arrays, else float32).

    Example:
        >>> from core.nd import sparse
        >>> sparse.row_sparse_array(([[1, 2], [3, 4]], [1, 3]), shape=(4, 2)).asnumpy()[3]
        array([3., 4.], dtype=float32)
    """
    fn = "row_sparse_array"
    if isinstance(arg1, tuple):
        if len(arg1) < 2:
            raise ValueError(f"{fn}: unexpected length of input tuple: {len(arg1)}")
        if len(arg1) > 2 or all(isinstance(a, numbers.Integral) for a in arg1):
            _check_shape(fn, arg1, shape)
            return empty("row_sparse", arg1, ctx=ctx, dtype=dtype)
        return _rsp_from_definition(arg1[0], arg1[1], shape, ctx, dtype)
    if isinstance(arg1, RowSparseNDArray):
        _check_shape(fn, arg1.shape, shape)
        return array(arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, CSRNDArray):
        raise ValueError(f"{fn}: unexpected input type: CSRNDArray")  # noqa: TRY004 - MXNet's ValueError
    return _from_dense(fn, arg1, "row_sparse", shape, ctx, dtype)


def array(source_array, ctx=None, dtype=None) -> BaseSparseNDArray:
    """A sparse copy of a sparse array or a scipy sparse matrix (MXNet's ``sparse.array``).

    Raises:
        ValueError: for dense sources (use ``nd.array`` and ``tostype``).
    """
    if isinstance(source_array, BaseSparseNDArray):
        dtype = _default_dtype(source_array, dtype)
        res = source_array.astype(dtype)
        if ctx is not None:
            res = res.as_in_context(as_context(ctx))
        return res
    if isinstance(source_array, NDArray):
        raise ValueError("sparse.array: use `tostype` to create a RowSparseNDArray or "  # noqa: TRY004
                         "CSRNDArray from an NDArray")
    if _is_scipy(source_array):
        return _from_scipy(source_array, ctx, dtype)
    if isinstance(source_array, (numpy.ndarray, numpy.generic)):
        raise ValueError("sparse.array: use nd.array to create an NDArray from a "  # noqa: TRY004
                         f"{type(source_array).__name__}")
    raise ValueError(f"sparse.array: unexpected source_array type "
                     f"{type(source_array).__name__}")


def cast_storage(data: NDArray, stype: str) -> NDArray:
    """A copy of ``data`` in storage ``stype`` (MXNet's ``cast_storage``; ``tostype``).

    Dense to ``row_sparse`` keeps the rows holding a nonzero, dense to ``csr`` the
    nonzeros; ``row_sparse``/``csr`` to ``default`` scatters into zeros. ``csr`` and
    ``row_sparse`` do not cast into each other (as in MXNet). The gradient flows
    through the cast (dense).

    Example:
        >>> from core import nd
        >>> nd.array([[0, 1], [0, 0]]).tostype('csr').indices.asnumpy().tolist()
        [1]
    """
    from .ops import keep_node, recorded

    _check_stype("cast_storage", stype)
    if not isinstance(data, NDArray):
        raise TypeError(f"cast_storage: data must be an NDArray, got {type(data).__name__}")
    src = data.stype
    if {src, stype} == {"row_sparse", "csr"}:
        raise ValueError(f"cast_storage from {src} to {stype} is not supported")
    if recorded(data):
        from .ops import dense_op

        return keep_node(dense_op("copy", data), stype)
    if stype == "default":
        if src == "default":
            return data.copy()
        return NDArray._make(data._get_dense().copy(), data._ctx, None)
    if src == stype:
        return data.copy()
    dense = data._data
    ctx = data._ctx
    with ctx.device_guard():
        values, *aux = (_st.dense_to_rsp if stype == "row_sparse" else _st.dense_to_csr)(
            ctx.xp, dense)
    cls = RowSparseNDArray if stype == "row_sparse" else CSRNDArray
    return cls._new(ctx, dense.shape, values, aux)
