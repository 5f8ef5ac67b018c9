"""MXNet 1.x's legacy NDArray operators: ``add_n`` (``ElementWiseSum``),
``choose_element_0index`` and ``fill_element_0index``.

- ``add_n(*arrays)``: the elementwise sum of arrays of one shape (MXNet's
  ``ElementWiseSum``; no broadcasting);
- ``choose_element_0index(lhs, rhs)``: ``lhs[i, rhs[i]]`` for a 2-D ``lhs`` and one
  index per row (``pick`` along axis 1);
- ``fill_element_0index(lhs, mhs, rhs)``: ``lhs`` with ``lhs[i, rhs[i]] = mhs[i]``.

Indices may be integers or floats holding integers (MXNet passes float32); an index
outside ``[0, lhs.shape[1])`` raises ValueError naming the operator.
"""
from __future__ import annotations

import numpy

from ..dtypes import is_float, is_integer
from .infer import fmt
from .registry import Aval, F, defop


# ------------------------------------------------------------------ add_n
def _add_n_infer(*xs):
    if not xs:
        raise ValueError("add_n: needs at least one array")
    if any(x.shape != xs[0].shape for x in xs):
        raise ValueError(f"add_n: all arrays must have the same shape (no broadcasting), got "
                         f"{fmt(list(xs))}")
    return Aval(xs[0].shape, numpy.result_type(*[x.dtype for x in xs]))


def _add_n_vjp(c, g):
    return tuple(g if d == g.dtype else F.cast(g, dtype=d) for d in c.in_dtypes)


@defop("add_n", infer=_add_n_infer, inputs=("args",), variadic=True, save=False,
       vjp=_add_n_vjp, nd=("add_n", "ElementWiseSum", "elemwise_sum"))
def _add_n(xp, *xs):
    """The elementwise sum of arrays of one shape (MXNet's ``add_n``/``ElementWiseSum``).

    Example:
        >>> from core import nd
        >>> nd.add_n(nd.ones(2), nd.ones(2) * 2, nd.ones(2) * 4).asnumpy().tolist()
        [7.0, 7.0]
    """
    if any(x.shape != xs[0].shape for x in xs):
        raise ValueError("shape")  # infer explains
    dt = numpy.result_type(*[x.dtype for x in xs])
    out = xp.array(xs[0], dtype=dt, copy=True)
    for x in xs[1:]:
        out += x
    return out


# ------------------------------------------------------------------ element 0-index
def _index_check(name, lhs, rhs, avals):
    if lhs.ndim != 2:
        raise ValueError(f"{name}: lhs must be 2-D (rows, columns), got {fmt(avals)}")
    if rhs.shape != (lhs.shape[0],):
        raise ValueError(f"{name}: rhs must hold one index per row, shape ({lhs.shape[0]},), "
                         f"got {fmt(avals)}")
    if not (is_integer(rhs.dtype) or is_float(rhs.dtype)):
        raise TypeError(f"{name}: rhs must hold integer indices, got {fmt(avals)}")


def _indices(xp, rhs, columns):
    """Integer indices (the dispatcher names the operator and the inputs in errors)."""
    idx = rhs if rhs.dtype.kind in "iu" else rhs.astype(numpy.int64)
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= columns):
        bad = idx[(idx < 0) | (idx >= columns)]
        raise ValueError(f"index {int(bad[0])} is out of range for {columns} columns")
    return idx


def _choose_infer(lhs, rhs):
    _index_check("choose_element_0index", lhs, rhs, [lhs, rhs])
    return Aval((lhs.shape[0],), lhs.dtype)


def _choose_vjp(c, g):
    rhs = c.inputs[1]
    oh = F.one_hot(rhs, depth=c.in_shapes[0][1], dtype=c.in_dtypes[0])
    return oh * F.expand_dims(g, axis=1), None


@defop("choose_element_0index", infer=_choose_infer, vjp=_choose_vjp, inputs=("lhs", "rhs"),
       save="inputs", nd=("choose_element_0index",))
def _choose_element_0index(xp, lhs, rhs):
    """``lhs[i, rhs[i]]`` for every row ``i`` of the 2-D ``lhs``.

    Example:
        >>> from core import nd
        >>> x = nd.array([[1, 2, 3], [4, 5, 6]])
        >>> nd.choose_element_0index(x, nd.array([2, 0])).asnumpy().tolist()
        [3.0, 4.0]
    """
    if lhs.ndim != 2 or rhs.shape != (lhs.shape[0],):
        raise ValueError("shape")  # infer explains
    idx = _indices(xp, rhs, lhs.shape[1])
    return lhs[xp.arange(lhs.shape[0]), idx]


def _fill_infer(lhs, mhs, rhs):
    avals = [lhs, mhs, rhs]
    _index_check("fill_element_0index", lhs, rhs, avals)
    if mhs.shape != (lhs.shape[0],):
        raise ValueError(f"fill_element_0index: mhs must hold one value per row, shape "
                         f"({lhs.shape[0]},), got {fmt(avals)}")
    return Aval(lhs.shape, lhs.dtype)


def _fill_vjp(c, g):
    rhs = c.inputs[2]
    oh = F.one_hot(rhs, depth=c.in_shapes[0][1], dtype=g.dtype)
    g_mhs = F.sum(g * oh, axis=1)
    if g_mhs.dtype != c.in_dtypes[1]:
        g_mhs = F.cast(g_mhs, dtype=c.in_dtypes[1])
    return g * (1 - oh), g_mhs, None


@defop("fill_element_0index", infer=_fill_infer, vjp=_fill_vjp, inputs=("lhs", "mhs", "rhs"),
       save="inputs", nd=("fill_element_0index",))
def _fill_element_0index(xp, lhs, mhs, rhs):
    """``lhs`` with ``lhs[i, rhs[i]]`` replaced by ``mhs[i]`` for every row ``i``.

    Example:
        >>> from core import nd
        >>> x = nd.zeros((2, 3))
        >>> nd.fill_element_0index(x, nd.array([7, 8]), nd.array([1, 2])).asnumpy().tolist()
        [[0.0, 7.0, 0.0], [0.0, 0.0, 8.0]]
    """
    if lhs.ndim != 2 or rhs.shape != (lhs.shape[0],) or mhs.shape != (lhs.shape[0],):
        raise ValueError("shape")  # infer explains
    idx = _indices(xp, rhs, lhs.shape[1])
    out = lhs.copy()
    out[xp.arange(lhs.shape[0]), idx] = mhs.astype(lhs.dtype, copy=False)
    return out
