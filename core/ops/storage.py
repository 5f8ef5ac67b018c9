"""Storage-type operators and the storage dispatch of ``core.nd``'s functions.

Two registry operators, dense in graphs (a Symbol's values are dense here):

- ``cast_storage(x, stype)``: the identity on values (MXNet's ``cast_storage``); on
  NDArrays ``core.nd.cast_storage`` returns the array in storage ``stype``;
- ``_square_sum(x, axis, keepdims)``: ``sum(x ** 2, axis)`` (MXNet's ``_square_sum``).

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


def _slice(data, begin=(), end=(), step=(), **kwargs):
    from ..sparse.arrays import CSRNDArray
    from ..sparse.ops import dense_op, slice_rows

    if isinstance(data, CSRNDArray) and not any(s not in (None, 1) for s in (step or ())):
        b = begin[0] if begin and begin[0] is not None else 0
        e = end[0] if end and end[0] is not None else data.shape[0]
        if len(begin) <= 1 or (begin[1] in (None, 0) and end[1] in (None, data.shape[1])):
            n = data.shape[0]
            return slice_rows(data, b + n if b < 0 else b, e + n if e < 0 else e)
    return dense_op("slice", data, begin=begin, end=end, step=step)


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
