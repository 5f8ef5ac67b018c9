"""Storage-type operators and the storage dispatch of ``core.nd``'s functions.

Three registry operators, dense in graphs (a Symbol's values are dense here):

- ``cast_storage(x, stype)``: the identity on values (MXNet's ``cast_storage``); on
  NDArrays ``core.nd.cast_storage`` returns the array in storage ``stype``;
- ``_square_sum(x, axis, keepdims)``: ``sum(x ** 2, axis)`` (MXNet's ``_square_sum``);
- ``_sparse_retain(data, indices)``: the rows ``indices`` of ``data``, others zero.

:func:`nd_overrides` gives ``core.nd`` (and ``core.nd._internal``) the functions MXNet
computes on sparse storage (``dot``, ``elemwise_add``, ``add_n``, ``abs``, ...): with no
sparse array among the arguments they are the generated functions (one scan of the
arguments more), otherwise ``core.sparse.ops`` computes them with MXNet's output storage
types. ``core.sym``'s functions are left as generated (Symbols hold dense values).

Example:
    >>> from core import nd
    >>> nd._square_sum(nd.array([[1, 2], [3, 4]]), axis=1).asnumpy().tolist()
    [5.0, 25.0]
"""
from __future__ import annotations

import numpy

from .infer import fmt
from .namespace import _call_generic, make_function
from .reduce import _axes, _spread, reduced_shape
from .registry import REGISTRY, Aval, F, defop

_STYPES = ("default", "row_sparse", "csr")


def _cast_storage_infer(x, stype="default"):
    if stype not in _STYPES:
        raise ValueError(f"cast_storage: stype must be one of {_STYPES}, got {stype!r} "
                         f"(data: {fmt([x])})")
    if stype == "csr" and x.ndim != 2:
        raise ValueError(f"cast_storage: csr storage needs a 2-D array, got {fmt([x])}")
    return Aval(x.shape, x.dtype)


@defop("cast_storage", infer=_cast_storage_infer, attrs={"stype": "default"}, save=False,
       vjp=lambda c, g: (g,), nd=("cast_storage",))
def _cast_storage(xp, x, stype="default"):
    """The values of ``x`` (a storage cast; graphs hold dense values)."""
    return x.copy()


def _square_sum_infer(x, axis=None, keepdims=False, exclude=False):
    axes = _axes("_square_sum", x, axis, exclude, True)
    return Aval(reduced_shape(x.shape, axes, keepdims), x.dtype)


def _square_sum_vjp(c, g):
    x = c.inputs[0]
    return (F.multiply(_spread(c, g), F.multiply(x, 2.0)),)


@defop("_square_sum", infer=_square_sum_infer, vjp=_square_sum_vjp, save="inputs",
       attrs={"axis": None, "keepdims": False, "exclude": False},
       nd=("_square_sum", "_internal._square_sum"))
def _square_sum_fwd(xp, x, axis=None, keepdims=False, exclude=False):
    """``sum(x ** 2)`` over ``axis`` (MXNet's ``_square_sum``)."""
    axes = _axes("_square_sum", x, axis, exclude, True)
    out = xp.sum(x * x, axis=axes, keepdims=keepdims)
    return xp.asarray(out, dtype=x.dtype) if not isinstance(out, numpy.ndarray) \
        and xp is numpy else out.astype(x.dtype, copy=False)


def _retain_infer(data, indices):
    if data.ndim < 1 or indices.ndim != 1:
        raise ValueError(f"_sparse_retain: data needs at least 1 axis and indices 1 axis "
                         f"(data, indices: {fmt([data, indices])})")
    return Aval(data.shape, data.dtype)


def _retain_mask(xp, data, indices):
    mask = xp.zeros((data.shape[0],) + (1,) * (data.ndim - 1), data.dtype)
    idx = indices.astype(numpy.int64).reshape(-1)
    if idx.shape[0] and (int(idx.min()) < 0 or int(idx.max()) >= data.shape[0]):
        raise ValueError(f"_sparse_retain: row ids must lie in [0, {data.shape[0]}), got "
                         f"{int(idx.min())}..{int(idx.max())}")
    mask[idx] = 1
    return mask


def _retain_vjp(c, g):
    data, indices = c.inputs
    return (F.multiply(g, F._sparse_retain(F.ones_like(data), indices)), None)


@defop("_sparse_retain", infer=_retain_infer, vjp=_retain_vjp, save="inputs",
       inputs=("data", "indices"), nd=("_sparse_retain", "sparse_retain"))
def _sparse_retain_fwd(xp, data, indices):
    """The rows ``indices`` of ``data``; the other rows zero (MXNet's ``_sparse_retain``;
    on a RowSparseNDArray ``core.nd`` returns a row_sparse result)."""
    return data * _retain_mask(xp, data, indices)


# --------------------------------------------------------------------------- dispatch
def _storage_aware(name: str, sparse_fn):
    """``core.nd.<name>``: the generated function, or ``sparse_fn`` when an argument is
    a sparse array (``core.sparse``). The dense path costs one ``isinstance`` per
    argument more than the generated function."""
    from ..ndarray import NDArray as dense_cls
    from ..sparse.arrays import BaseSparseNDArray as sparse_cls

    op, defaults = None, None
    for o in REGISTRY.values():
        for entry in o.nd:
            full, d = (entry, None) if isinstance(entry, str) else entry
            if full == name:
                op, defaults = o, d
    generic = make_function(op, name, defaults, lenient=not op.attrs)
    lenient = not op.attrs
    seqs = (list, tuple)

    def f(*args, **kwargs):
        for a in args:
            if type(a) is dense_cls:  # the common case: one identity test
                continue
            if isinstance(a, sparse_cls) or (type(a) in seqs and any(
                    isinstance(v, sparse_cls) for v in a)):
                return sparse_fn(*args, **kwargs)
        if kwargs:
            for a in kwargs.values():
                if isinstance(a, sparse_cls):
                    return sparse_fn(*args, **kwargs)
            if defaults:
                return generic(*args, **kwargs)
        elif defaults:
            return generic(*args)
        return _call_generic(op, args, kwargs, lenient)

    f.__name__ = f.__qualname__ = name.rpartition(".")[2]
    f.__doc__ = generic.__doc__ + "\n\nSparse inputs: see ``core.sparse.ops``."
    f.op = op
    return f


def _sparse(fn_name):
    def call(*args, **kwargs):
        from ..sparse import ops

        return getattr(ops, fn_name)(*args, **kwargs)

    return call


def _unary(name):
    def call(data=None, out=None, **kwargs):
        from ..sparse import ops

        if data is None:
            data = kwargs.pop("x")
        res = ops.unary(name, data, **kwargs)
        return ops._write(res, out)

    return call


def _cast(data, stype="default", out=None, **kwargs):
    from ..sparse.create import cast_storage

    res = cast_storage(data, stype)
    if out is not None:
        res.copyto(out)
        return out
    return res


def _slice(data, begin=(), end=(), step=(), out=None, **kwargs):
    from ..sparse.arrays import CSRNDArray
    from ..sparse.ops import _write, dense_op, slice_rows

    as_tuple = (lambda v: tuple(v) if isinstance(v, (list, tuple)) else (v,))
    b, e, st = as_tuple(begin), as_tuple(end), as_tuple(step) if step != () else ()
    if isinstance(data, CSRNDArray) and all(s in (None, 1) for s in st):
        n, m = data.shape
        whole_cols = len(b) < 2 or (b[1] in (None, 0) and (len(e) < 2 or e[1] in (None, m)))
        if whole_cols:
            lo = 0 if not b or b[0] is None else int(b[0])
            hi = n if not e or e[0] is None else int(e[0])
            res = slice_rows(data, lo + n if lo < 0 else lo, hi + n if hi < 0 else hi)
            return _write(res, out)
    return _write(dense_op("slice", data, begin=b, end=e, step=st), out)


def nd_overrides(prefix: str = "") -> dict:
    """``{name: function}``: the storage-aware ``core.nd`` functions under ``prefix``
    (``''`` or ``'_internal'``)."""
    table = {
        "dot": _sparse("dot"),
        "elemwise_add": _sparse("elemwise_add"),
        "elemwise_sub": _sparse("elemwise_sub"),
        "elemwise_mul": _sparse("elemwise_mul"),
        "elemwise_div": _sparse("elemwise_div"),
        "broadcast_mul": _sparse("multiply"),
        "broadcast_div": _sparse("divide"),
        "broadcast_add": _sparse("add"),
        "broadcast_plus": _sparse("add"),
        "broadcast_sub": _sparse("subtract"),
        "broadcast_minus": _sparse("subtract"),
        "add_n": _sparse("add_n"),
        "ElementWiseSum": _sparse("add_n"),
        "elemwise_sum": _sparse("add_n"),
        "where": _sparse("where"),
        "zeros_like": _sparse("zeros_like"),
        "_square_sum": _sparse("square_sum"),
        "_internal._square_sum": _sparse("square_sum"),
        "cast_storage": _cast,
        "_sparse_retain": _sparse("retain"),
        "sparse_retain": _sparse("retain"),
        "take": _sparse("take"),
        "slice": _slice,
        "crop": _slice,
    }
    from ..sparse.unary_names import ZERO_PRESERVING

    for name in ZERO_PRESERVING:
        table.setdefault(name, _unary(name))
    out = {}
    for name, fn in table.items():
        head, _, tail = name.rpartition(".")
        if head == prefix:
            out[tail] = _storage_aware(name, fn)
    return out
