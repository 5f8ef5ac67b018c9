"""The operators MXNet 1.x computes on sparse storage, with MXNet's output storage types.

Each function here reads the sparse layouts directly where MXNet has a sparse kernel
and returns the storage type MXNet's storage inference gives (``elemwise_add`` of two
``row_sparse`` arrays is ``row_sparse``, ``dot(csr, dense)`` is dense, ``dot(csr.T,
dense)`` is ``row_sparse``, ...). Any other combination falls back as MXNet does: the
dense values are computed by the registry operator and the result is dense.

While autograd records and an input is part of the graph, the value is computed by the
registry operator (so the tape records it, with the sparse inputs seen as their dense
values) and then stored in the output storage type, keeping its place in the graph.

Example:
    >>> from core import nd
    >>> from core.sparse import ops
    >>> a = nd.array([[1, 0], [0, 0], [2, 3]]).tostype('row_sparse')
    >>> b = nd.array([[0, 0], [4, 0], [1, 1]]).tostype('row_sparse')
    >>> c = ops.elemwise_add(a, b)
    >>> c.stype, c.indices.asnumpy().tolist()
    ('row_sparse', [0, 1, 2])
"""
from __future__ import annotations

import numbers

import numpy

from .. import tape as _tape
from ..ndarray import NDArray
from ..ops.dispatch import MXNetError
from ..ops.dispatch import invoke as _invoke
from ..ops.registry import REGISTRY as _R
from . import storage as _st
from .arrays import BaseSparseNDArray, CSRNDArray, RowSparseNDArray
from .unary_names import ZERO_PRESERVING

__all__ = [
    "ARITHMETIC",
    "add",
    "add_n",
    "compare",
    "divide",
    "dot",
    "elemwise_add",
    "elemwise_div",
    "elemwise_mul",
    "elemwise_sub",
    "getnnz",
    "multiply",
    "retain",
    "slice_rows",
    "square_sum",
    "subtract",
    "take",
    "where",
]


# --------------------------------------------------------------------------- helpers
def stype_of(x) -> str:
    """``'default'``, ``'row_sparse'``, ``'csr'``, or ``'scalar'`` for Python numbers."""
    if isinstance(x, NDArray):
        return x.stype
    if isinstance(x, (numbers.Number, numpy.generic)):
        return "scalar"
    return "default"


def recorded(*xs) -> bool:
    """Whether autograd records and one of ``xs`` is part of the graph."""
    return _tape._state.recording and any(
        isinstance(x, NDArray) and x._node is not None for x in xs)


def dense_view(x):
    """A dense NDArray of ``x``'s values that stands for ``x`` in the graph (its node)."""
    if isinstance(x, BaseSparseNDArray):
        v = NDArray._make(x._get_dense(), x._ctx, x._node)
        v._version = x._version
        return v
    return x


def dense_op(name: str, *inputs, **attrs):
    """Registry operator ``name`` on the dense values of ``inputs`` (recorded by autograd
    as an operator on ``inputs``)."""
    op = _R[name]
    return _invoke(op, [dense_view(x) for x in inputs], dict(op.attrs, **attrs))


def keep_node(out: NDArray, stype: str, rows=None) -> NDArray:
    """The dense result ``out`` stored as ``stype``, keeping ``out``'s place in the graph;
    ``rows``: the row ids a row_sparse result stores (default: the nonzero rows)."""
    if stype == "default":
        return out
    ctx = out._ctx
    d = out._data
    with ctx.device_guard():
        if stype == "row_sparse":
            if rows is None:
                values, idx = _st.dense_to_rsp(ctx.xp, d)
            else:
                idx = rows.astype(_st.AUX_DTYPE)
                values = ctx.xp.ascontiguousarray(d[idx])
            res = RowSparseNDArray._new(ctx, d.shape, values, [idx], out._node)
        else:
            values, ptr, idx = _st.dense_to_csr(ctx.xp, d)
            res = CSRNDArray._new(ctx, d.shape, values, [ptr, idx], out._node)
    return res


def _csr_rows(x: CSRNDArray):
    xp = x._ctx.xp
    ptr = x._aux[0]
    return xp.repeat(xp.arange(x.shape[0], dtype=_st.AUX_DTYPE), xp.diff(ptr))


def _same_ctx(fn, *xs):
    ctxs = {x._ctx for x in xs if isinstance(x, NDArray)}
    if len(ctxs) > 1:
        raise ValueError(f"{fn}: all inputs must be on one context, got "
                         f"{', '.join(sorted(map(str, ctxs)))}")


# --------------------------------------------------------------------------- arithmetic
_UFUNC = {"add": "add", "subtract": "subtract", "multiply": "multiply", "divide": "divide"}


def _rsp_union(name, a: RowSparseNDArray, b: RowSparseNDArray) -> RowSparseNDArray:
    xp = a._ctx.xp
    ia, ib = a._aux[0], b._aux[0]
    idx = xp.union1d(ia, ib).astype(_st.AUX_DTYPE)
    dt = numpy.result_type(a.dtype, b.dtype)
    rest = a.shape[1:]
    va = xp.zeros((idx.shape[0],) + rest, dt)
    vb = xp.zeros((idx.shape[0],) + rest, dt)
    va[xp.searchsorted(idx, ia)] = a._values
    vb[xp.searchsorted(idx, ib)] = b._values
    values = getattr(xp, _UFUNC[name])(va, vb).astype(dt, copy=False)
    return RowSparseNDArray._new(a._ctx, a.shape, values, [idx])


def _out_stype(name: str, ls: str, rs: str, same_shape: bool) -> str:
    """MXNet's storage inference for the elementwise binary operators."""
    if rs == "scalar":
        return ls if name in ("multiply", "divide") else "default"
    if ls == "scalar":
        return rs if name == "multiply" else "default"
    if not same_shape:  # broadcast_mul/div keep csr on the left with a dense right side
        return "csr" if name in ("multiply", "divide") and ls == "csr" and rs == "default" \
            else "default"
    if name in ("add", "subtract"):
        return ls if ls == rs and ls != "default" else "default"
    if name == "multiply":
        if ls == rs:
            return ls
        if "default" in (ls, rs):
            return ls if ls != "default" else rs
        return "default"
    return "default"  # elemwise_div of sparse arrays: a dense result (MXNet's DR rule)


def _binary(name: str, lhs, rhs):
    _same_ctx(name, lhs, rhs)
    ls, rs = stype_of(lhs), stype_of(rhs)
    same = not (isinstance(lhs, NDArray) and isinstance(rhs, NDArray)) or \
        tuple(lhs.shape) == tuple(rhs.shape)
    out = _out_stype(name, ls, rs, same)
    if out == "default" or recorded(lhs, rhs):
        return keep_node(dense_op(name, lhs, rhs), out)
    if rs == "scalar" or ls == "scalar":  # multiply/divide by a scalar: values only
        x, s = (lhs, rhs) if rs == "scalar" else (rhs, lhs)
        xp = x._ctx.xp
        values = getattr(xp, _UFUNC[name])(x._values, s).astype(x.dtype, copy=False)
        return type(x)._new(x._ctx, x.shape, values, [a.copy() for a in x._aux])
    if ls == rs == "row_sparse" and name in ("add", "subtract", "multiply"):
        return _rsp_union(name, lhs, rhs)
    if out == "row_sparse":  # row_sparse * dense (either side): the stored rows only
        x, d = (lhs, rhs) if ls == "row_sparse" else (rhs, lhs)
        idx = x._aux[0]
        values = x._values * d._data[idx]
        return RowSparseNDArray._new(x._ctx, x.shape, values, [idx.copy()])
    if out == "csr" and (ls != rs):  # csr * or / dense: the stored entries only
        x, d = (lhs, rhs) if ls == "csr" else (rhs, lhs)
        xp = x._ctx.xp
        full = xp.broadcast_to(d._data, x.shape)
        other = full[_csr_rows(x), x._aux[1]]
        values = x._values * other if name == "multiply" else x._values / other
        return CSRNDArray._new(x._ctx, x.shape, values.astype(
            numpy.result_type(x.dtype, d.dtype), copy=False), [a.copy() for a in x._aux])
    return keep_node(dense_op(name, lhs, rhs), out)


def add(lhs, rhs, out=None, **kwargs) -> NDArray:
    """``lhs + rhs`` with MXNet's storage rules (``row_sparse + row_sparse`` and
    ``csr + csr`` stay sparse; with a scalar or a dense array the result is dense)."""
    return _write(_binary("add", lhs, rhs), out)


def subtract(lhs, rhs, out=None, **kwargs) -> NDArray:
    """``lhs - rhs`` with MXNet's storage rules (as :func:`add`)."""
    return _write(_binary("subtract", lhs, rhs), out)


def multiply(lhs, rhs, out=None, **kwargs) -> NDArray:
    """``lhs * rhs`` with MXNet's storage rules: a sparse operand's storage type is kept
    with a scalar, a dense array of its shape, or (csr) a broadcast dense array."""
    return _write(_binary("multiply", lhs, rhs), out)


def divide(lhs, rhs, out=None, **kwargs) -> NDArray:
    """``lhs / rhs`` with MXNet's storage rules: a sparse array divided by a scalar (or,
    csr, by a broadcast dense array) keeps its storage type; otherwise dense."""
    return _write(_binary("divide", lhs, rhs), out)


_COMPARE = {"equal": numpy.equal, "not_equal": numpy.not_equal, "greater": numpy.greater,
            "greater_equal": numpy.greater_equal, "less": numpy.less,
            "less_equal": numpy.less_equal}


def compare(name: str, lhs, rhs) -> NDArray:
    """Comparison ``name`` (``'equal'``, ``'greater'``, ...) with MXNet's storage rule:
    a sparse array compared with a scalar keeps its storage type when the comparison
    is false at zero (``x == 1``), else the result is dense (``x == 0``); comparisons
    of two arrays are dense. The result holds 1/0 in the sparse array's dtype."""
    _same_ctx(name, lhs, rhs)
    ls, rs = stype_of(lhs), stype_of(rhs)
    sparse_scalar = (ls in ("row_sparse", "csr") and rs == "scalar") or (
        rs in ("row_sparse", "csr") and ls == "scalar")
    if sparse_scalar:
        x, s = (lhs, rhs) if rs == "scalar" else (rhs, lhs)
        fn = _COMPARE[name]
        at_zero = fn(0, s) if x is lhs else fn(s, 0)
        if not at_zero and not recorded(x):
            xp = x._ctx.xp
            v = getattr(xp, fn.__name__)(x._values, s) if x is lhs else \
                getattr(xp, fn.__name__)(s, x._values)
            return type(x)._new(x._ctx, x.shape, v.astype(x.dtype),
                                [a.copy() for a in x._aux])
    return dense_op(name, lhs, rhs)


ARITHMETIC = {"add": add, "subtract": subtract, "multiply": multiply, "divide": divide}


def _elemwise(name, fn):
    def f(lhs, rhs, out=None, **kwargs):
        if isinstance(lhs, NDArray) and isinstance(rhs, NDArray) and lhs.shape != rhs.shape:
            raise ValueError(f"elemwise_{fn}: the shapes must be equal, got "
                             f"{tuple(lhs.shape)} and {tuple(rhs.shape)}")
        res = _binary(name, lhs, rhs)
        return _write(res, out)

    f.__name__ = f.__qualname__ = f"elemwise_{fn}"
    f.__doc__ = (f"MXNet's ``elemwise_{fn}`` (equal shapes) with its storage rules.\n\n"
                 "Args:\n    lhs: an array.\n    rhs: an array of the same shape.\n"
                 "    out: an array to write the result into.\n")
    return f


def _write(res, out):
    if out is None:
        return res
    if not isinstance(out, NDArray):
        raise TypeError(f"out= must be an NDArray, got {type(out).__name__}")
    res.copyto(out) if out.stype != "default" or res.stype != "default" else \
        out.__setitem__(Ellipsis, res)
    return out


elemwise_add = _elemwise("add", "add")
elemwise_sub = _elemwise("subtract", "sub")
elemwise_mul = _elemwise("multiply", "mul")
elemwise_div = _elemwise("divide", "div")


# --------------------------------------------------------------------------- dot
def _dot_stype(ls, rs, ta, tb, forward_stype):
    if forward_stype is not None:
        return forward_stype
    if ls == "csr" and rs in ("default", "row_sparse") and not tb:
        return "row_sparse" if ta else "default"
    if ls == "default" and rs == "csr" and not ta:
        return "csr" if not tb else "default"
    return "default"


def dot(lhs, rhs, transpose_a: bool = False, transpose_b: bool = False,
        forward_stype=None, out=None, **kwargs) -> NDArray:
    """MXNet's ``dot`` with sparse inputs.

    ``dot(csr, dense)`` and ``dot(csr, row_sparse)`` are dense, ``dot(csr.T, dense)``
    is ``row_sparse`` (the rows are the csr's column ids), ``dot(dense, csr)`` is csr;
    ``forward_stype`` sets the output storage type. Other inputs fall back to dense.

    Example:
        >>> from core import nd
        >>> x = nd.array([[1, 0], [0, 2]]).tostype('csr')
        >>> y = nd.dot(x, nd.ones((2, 3)), transpose_a=True)
        >>> y.stype, y.asnumpy().tolist()
        ('row_sparse', [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]])
    """
    _same_ctx("dot", lhs, rhs)
    ls, rs = stype_of(lhs), stype_of(rhs)
    ostype = _dot_stype(ls, rs, transpose_a, transpose_b, forward_stype)
    if forward_stype not in (None, "default", "row_sparse", "csr"):
        raise ValueError(f"dot: forward_stype must be None, 'default', 'row_sparse' or "
                         f"'csr', got {forward_stype!r}")
    attrs = {"transpose_a": transpose_a, "transpose_b": transpose_b}
    if ls == "csr" and rs != "csr" and not transpose_b and not recorded(lhs, rhs) \
            and lhs._ctx.xp is numpy and isinstance(rhs, NDArray) and rhs.ndim == 2:
        res = _csr_dot(lhs, rhs, transpose_a, ostype)
    else:
        rows = None
        if ostype == "row_sparse" and ls == "csr" and transpose_a:
            rows = lhs._ctx.xp.unique(lhs._aux[1])
        res = keep_node(dense_op("dot", lhs, rhs, **attrs), ostype, rows)
    return _write(res, out)


def _csr_dot(lhs: CSRNDArray, rhs: NDArray, transpose_a: bool, ostype: str):
    m, k = lhs.shape
    want = m if transpose_a else k
    if rhs.shape[0] != want:
        raise ValueError(f"dot: shapes {lhs.shape}{'.T' if transpose_a else ''} and "
                         f"{tuple(rhs.shape)} do not match ({want} != {rhs.shape[0]})")
    r = rhs._data
    rows, cols = _csr_rows(lhs), lhs._aux[1]
    dt = numpy.result_type(lhs.dtype, r.dtype)
    vals = lhs._values.astype(dt, copy=False)[:, None]
    if not transpose_a:
        out = numpy.zeros((m, r.shape[1]), dt)
        numpy.add.at(out, rows, vals * r[cols])
    else:
        out = numpy.zeros((k, r.shape[1]), dt)
        numpy.add.at(out, cols, vals * r[rows])
    res = NDArray._make(out, lhs._ctx, None)
    rows_kept = numpy.unique(cols) if transpose_a and ostype == "row_sparse" else None
    return keep_node(res, ostype, rows_kept)


# --------------------------------------------------------------------------- others
def retain(data, indices=None, **kwargs) -> RowSparseNDArray:
    """The rows of a row_sparse ``data`` whose ids are in ``indices`` (MXNet's
    ``sparse.retain``); the others become zero.

    Args:
        data: a RowSparseNDArray.
        indices: row ids (an NDArray, array or list; any order, whole numbers).

    Example:
        >>> from core import nd
        >>> x = nd.array([[1, 1], [2, 2], [3, 3]]).tostype('row_sparse')
        >>> nd.sparse.retain(x, nd.array([2, 0])).indices.asnumpy().tolist()
        [0, 2]
    """
    if kwargs:
        raise MXNetError(f"retain: unexpected argument(s) {sorted(kwargs)}; accepted: data, "
                         "indices")
    if not isinstance(data, RowSparseNDArray):
        raise MXNetError(f"retain: data must be a RowSparseNDArray, got "
                         f"{stype_of(data)} storage ({type(data).__name__})")
    if indices is None:
        raise TypeError("retain: indices are required")
    xp = data._ctx.xp
    want = indices.asnumpy() if isinstance(indices, NDArray) else numpy.asarray(indices)
    want = xp.asarray(want.astype(numpy.int64).reshape(-1))
    have = data._aux[0]
    keep = xp.isin(have, want)
    if recorded(data):
        rows = have[keep]
        dense = dense_op("multiply", data, NDArray._make(
            _rows_mask(xp, data, rows), data._ctx, None))
        return keep_node(dense, "row_sparse", rows)
    return RowSparseNDArray._new(data._ctx, data.shape, xp.ascontiguousarray(
        data._values[keep]), [have[keep].copy()])


def _rows_mask(xp, data, rows):
    m = xp.zeros((data.shape[0],) + (1,) * (data.ndim - 1), data.dtype)
    m[rows] = 1
    return m


def add_n(*args, out=None, **kwargs) -> NDArray:
    """The sum of the arrays (MXNet's ``add_n``/``ElementWiseSum``): row_sparse when all
    are row_sparse, else dense."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    if not args:
        raise ValueError("add_n: needs at least one array")
    if all(isinstance(a, RowSparseNDArray) for a in args) and not recorded(*args):
        res = args[0].copy()
        for a in args[1:]:
            res = _rsp_union("add", res, a)
        return _write(res, out)
    op = _R["add_n"]
    res = _invoke(op, [[dense_view(a) for a in args]], op.attrs) if op.variadic else \
        _invoke(op, [dense_view(a) for a in args], op.attrs)
    return _write(res, out)


def where(condition, x, y) -> NDArray:
    """MXNet's ``where`` with a csr ``condition``: ``x`` where it is nonzero, else ``y``
    (dense output, as in MXNet)."""
    return dense_op("where", condition, x, y)


def square_sum(data, axis=None, keepdims: bool = False, exclude: bool = False) -> NDArray:
    """MXNet's ``_square_sum``: ``sum(data ** 2, axis)``. For a row_sparse ``data``
    summed over ``axis=1`` with ``keepdims`` the result is row_sparse (the same rows).

    Example:
        >>> from core import nd
        >>> x = nd.array([[0, 0], [1, 2]]).tostype('row_sparse')
        >>> r = nd.sparse.square_sum(x, axis=1, keepdims=True)
        >>> r.stype, r.asnumpy().tolist()
        ('row_sparse', [[0.0], [5.0]])
    """
    res = _invoke(_R["_square_sum"], [dense_view(data)],
                  {"axis": axis, "keepdims": keepdims, "exclude": exclude})
    ax = axis if not isinstance(axis, (tuple, list)) or len(axis) != 1 else axis[0]
    if isinstance(data, RowSparseNDArray) and ax in (1, -1) and keepdims and data.ndim == 2:
        return keep_node(res, "row_sparse", data._aux[0])
    return res


def take(a, indices, axis: int = 0, mode: str = "clip", out=None, **kwargs) -> NDArray:
    """MXNet's ``take``; on a csr ``a`` along axis 0 the result is csr (the rows)."""
    res = dense_op("take", a, indices, axis=axis, mode=mode)
    if isinstance(a, CSRNDArray) and axis == 0:
        res = keep_node(res, "csr")
    return _write(res, out)


def getnnz(data, axis=None, **kwargs) -> NDArray:
    """MXNet's ``contrib.getnnz``: the number of stored values of a csr array (int64),
    in all (``axis=None``, shape ``(1,)``), per column (``axis=0``) or per row (``1``).

    Example:
        >>> from core import nd
        >>> x = nd.array([[0, 1, 2], [0, 0, 3]]).tostype('csr')
        >>> nd.contrib.getnnz(x, axis=1).asnumpy().tolist()
        [2, 1]
    """
    if not isinstance(data, CSRNDArray):
        raise MXNetError(f"getnnz: data must be a CSRNDArray, got {stype_of(data)} storage")
    xp = data._ctx.xp
    if axis is None:
        res = xp.asarray([data._values.shape[0]], dtype=numpy.int64)
    elif axis in (1, -1):
        res = xp.diff(data._aux[0]).astype(numpy.int64)
    elif axis in (0, -2):
        res = xp.bincount(data._aux[1], minlength=data.shape[1]).astype(numpy.int64)
    else:
        raise ValueError(f"getnnz: axis must be None, 0 or 1 for a 2-D csr array, got {axis}")
    return NDArray._make(res, data._ctx, None)


def slice_rows(x: CSRNDArray, begin: int, end: int) -> CSRNDArray:
    """Rows ``begin:end`` of a csr matrix (MXNet's ``slice`` on csr), as a csr matrix."""
    n = x.shape[0]
    begin, end = max(0, min(begin, n)), max(0, min(end, n))
    end = max(begin, end)
    ptr = x._aux[0]
    lo, hi = int(ptr[begin]), int(ptr[end])
    new_ptr = ptr[begin:end + 1] - lo
    return CSRNDArray._new(x._ctx, (end - begin, x.shape[1]), x._values[lo:hi].copy(),
                           [new_ptr.copy(), x._aux[1][lo:hi].copy()])


# --------------------------------------------------------------------------- unary
def unary(name: str, data, **attrs) -> NDArray:
    """Unary operator ``name`` with MXNet's storage rules: zero-preserving operators
    (:data:`ZERO_PRESERVING`) keep a sparse input's storage type (applied to the stored
    values), others give a dense result."""
    st = stype_of(data)
    if st in ("default", "scalar") or name not in ZERO_PRESERVING:
        return dense_op(name, data, **attrs)
    if recorded(data):
        rows = data._aux[0] if st == "row_sparse" else None
        return keep_node(dense_op(name, data, **attrs), st, rows)
    op = _R[name]
    values = op.forward(data._ctx.xp, data._values, **dict(op.attrs, **attrs))
    return type(data)._new(data._ctx, data.shape, values, [a.copy() for a in data._aux])


def zeros_like(data, **kwargs) -> NDArray:
    """Zeros of ``data``'s shape, dtype and storage type."""
    from .create import zeros

    if isinstance(data, BaseSparseNDArray):
        return zeros(data.stype, data.shape, ctx=data.context,
                     dtype=kwargs.get("dtype") or data.dtype)
    return dense_op("zeros_like", data, **kwargs)
