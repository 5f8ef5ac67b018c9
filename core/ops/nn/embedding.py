"""Embedding lookup: MXNet's ``Embedding`` and its scatter-add gradient.

The forward takes rows of ``weight`` (one ``xp.take``). The gradient with respect to the
weight is a dense ``(input_dim, output_dim)`` array in which rows of repeated ids
accumulate; it is computed by ``_embedding_grad``, never through a one-hot product.
On NumPy it multiplies by a sparse (input_dim, n) selection matrix (SciPy's compiled
CSC product: several times faster than ``numpy.add.at``); on other array modules it
scatter-adds with ``add.at``. ``_embedding_grad`` is linear in ``g``; its VJP is the
lookup again, so second-order gradients work.

``sparse_grad=True`` is accepted for MXNet compatibility; the gradient is dense (core
has no row-sparse storage). Unlike MXNet, which clips ids silently, ids outside
``[0, input_dim)`` raise IndexError.
"""
from __future__ import annotations

import numpy

from ...dtypes import is_float, is_integer
from ..index import scatter_zeros
from ..infer import fmt
from ..param_shapes import ParamShapes
from ..registry import Aval, F, defop

_F32 = numpy.dtype(numpy.float32)
_SPARSE_MIN = 4096  # below this many gradient elements add.at is faster than building CSC


def _ids(xp, data, n):
    idx = xp.asarray(data)
    if idx.dtype.kind not in "iu":
        idx = idx.astype(numpy.int64)
    if idx.size:
        lo, hi = int(idx.min()), int(idx.max())
        if lo < 0 or hi >= n:
            raise IndexError(f"id {lo if lo < 0 else hi} is out of range for an embedding of "
                             f"{n} rows (valid ids: 0..{n - 1})")
    return idx


def scatter_rows(xp, idx, g2, n):
    """A (n, D) array whose row i is the sum of the rows of ``g2`` where ``idx == i``."""
    d = g2.shape[1]
    if xp is numpy and g2.size >= _SPARSE_MIN:
        import scipy.sparse

        work = g2 if g2.dtype.itemsize >= 4 else g2.astype(_F32)
        k = idx.shape[0]
        sel = scipy.sparse.csc_matrix((numpy.ones(k, work.dtype), idx, numpy.arange(k + 1)),
                                      shape=(n, k))
        return numpy.asarray(sel @ work).astype(g2.dtype, copy=False)
    return scatter_zeros(xp, (n, d), idx, g2)


def _emb_infer(data, weight, input_dim=None, output_dim=None, dtype="float32",
               sparse_grad=False):
    avals = [data, weight]
    if not (is_integer(data.dtype) or is_float(data.dtype)):
        raise TypeError(f"Embedding: ids must be integers or floats holding integers, got "
                        f"{fmt(avals)}")
    if weight.ndim != 2:
        raise ValueError(f"Embedding: weight must be 2-D (input_dim, output_dim), got "
                         f"{fmt(avals)}")
    for what, want, have in (("input_dim", input_dim, weight.shape[0]),
                             ("output_dim", output_dim, weight.shape[1])):
        if want is not None and int(want) != have:
            raise ValueError(f"Embedding: {what}={want} does not match the weight's shape "
                             f"{weight.shape} (data, weight: {fmt(avals)})")
    return Aval(tuple(data.shape) + (weight.shape[1],), weight.dtype)


def _emb_vjp(c, g):
    if c.node.parents[1] is None or not is_float(c.in_dtypes[1]):
        return None, None
    gw = F._embedding_grad(c.inputs[0], g, input_dim=c.in_shapes[1][0])
    if gw.dtype != c.in_dtypes[1]:
        gw = F.cast(gw, dtype=c.in_dtypes[1])
    return None, gw


def _emb_params(shape, a, n_in):
    """The table (input_dim, output_dim)."""
    i, o = a.get("input_dim"), a.get("output_dim")
    if i is None or o is None:
        return {}
    return {1: (int(i), int(o))}


@defop("Embedding", infer=_emb_infer, vjp=_emb_vjp, inputs=("data", "weight"),
       attrs={"input_dim": None, "output_dim": None, "dtype": "float32", "sparse_grad": False},
       nd=("Embedding",),
       param_shapes=ParamShapes(_emb_params, (1,),  # the table's dtype: the attribute's
                                dtype=lambda data_dtype, a: a.get("dtype") or "float32"))
def _embedding(xp, data, weight, input_dim=None, output_dim=None, dtype="float32",
               sparse_grad=False):
    """Rows of ``weight`` at the ids in ``data``: shape ``data.shape + (output_dim,)``.

    Example:
        >>> from core import nd
        >>> w = nd.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
        >>> nd.Embedding(nd.array([2, 0]), w, input_dim=3, output_dim=2).asnumpy().tolist()
        [[4.0, 5.0], [0.0, 1.0]]
    """
    if weight.ndim != 2:
        raise ValueError("weight")  # infer explains
    idx = _ids(xp, data, weight.shape[0])
    return xp.take(weight, idx, axis=0)


def _eg_infer(data, g, input_dim=1):
    if tuple(g.shape[:-1]) != tuple(data.shape) or g.ndim < 1:
        raise ValueError(f"_embedding_grad: g must have shape ids.shape + (output_dim,), got "
                         f"{fmt([data, g])}")
    return Aval((int(input_dim), g.shape[-1]), g.dtype)


@defop("_embedding_grad", infer=_eg_infer, inputs=("data", "g"), attrs={"input_dim": 1},
       vjp=lambda c, h: (None, F.Embedding(c.inputs[0], h)))
def _embedding_grad(xp, data, g, input_dim=1):
    """Embedding's weight gradient: rows of ``g`` summed into their ids' rows."""
    n = int(input_dim)
    idx = _ids(xp, data, n).reshape(-1)
    return scatter_rows(xp, idx, g.reshape(-1, g.shape[-1]), n)
