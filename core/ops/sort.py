"""Sorting: sort, argsort, topk, and the gather/scatter pair their gradients go through.

Sorts are stable in both directions: equal elements keep their original order,
also when ``is_ascend=False`` (as MXNet's descending sort does). ``axis=None``
sorts the flattened array.
"""
from __future__ import annotations

import math

import numpy

from ..dtypes import as_dtype, is_float, is_integer
from .infer import norm_axis
from .registry import Aval, F, defop

_RET_TYPES = ("indices", "value", "both", "mask")
_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _desc(x) -> str:
    return f"{tuple(x.shape)} {x.dtype.name}"


def _axis(name, x, axis):
    """The sort axis of ``x`` (an Aval or an array), non-negative; None: flattened."""
    if axis is None:
        return None
    if len(x.shape) == 0:
        raise ValueError(f"{name}: axis={axis!r} is out of range for a 0-d array (input: "
                         f"{_desc(x)}); pass axis=None to use the flattened array")
    try:
        return norm_axis(name, axis, len(x.shape))
    except (ValueError, TypeError) as e:
        raise type(e)(f"{e} (input: {_desc(x)})") from None


def _index_dtype(name, dtype):
    dt = as_dtype(dtype, name)
    if not (is_integer(dt) or is_float(dt)):
        raise TypeError(f"{name}: the index dtype must be an integer or floating-point type, "
                        f"got {dt.name}")
    return dt


def _check_kind(name, kind):
    if kind not in _KINDS:
        raise ValueError(f"{name}: kind must be one of {_KINDS}, got {kind!r}")


def _order(xp, x, axis, ascend):
    """Stable argsort of ``x`` along ``axis`` (flattened if None), int64 indices."""
    if axis is None:
        x, axis = x.reshape(-1), 0
    kw = {"kind": "stable"} if xp is numpy else {}  # CuPy's sorts are always stable
    if ascend:
        return xp.argsort(x, axis=axis, **kw)
    # Descending and stable: sort the reversed array, reverse back, map the indices.
    rev = xp.argsort(xp.flip(x, axis), axis=axis, **kw)
    return (x.shape[axis] - 1) - xp.flip(rev, axis)


# --------------------------------------------------------------- sort, argsort
def _sort_infer(x, axis=-1, is_ascend=True, kind=None):
    _check_kind("sort", kind)
    ax = _axis("sort", x, axis)
    return Aval((math.prod(x.shape),) if ax is None else x.shape, x.dtype)


def _sort_vjp(c, g):
    x = c.inputs[0]
    if not is_float(x.dtype):
        return (None,)
    a = c.attrs
    idx = F.argsort(x, axis=a["axis"], is_ascend=a["is_ascend"], dtype="int64")
    return (F._scatter_along_axis(g, idx, axis=a["axis"], shape=c.in_shapes[0]),)


@defop("sort", infer=_sort_infer, vjp=_sort_vjp, nd=("sort",), np=("sort",),
       attrs={"axis": -1, "is_ascend": True, "kind": None})
def _sort(xp, x, axis=-1, is_ascend=True, kind=None):
    """Sorted copy along ``axis`` (ascending unless ``is_ascend=False``)."""
    _check_kind("sort", kind)
    ax = _axis("sort", x, axis)
    if ax is None:
        x, ax = x.reshape(-1), 0
    out = xp.sort(x, axis=ax)
    return out if is_ascend else xp.flip(out, ax)


def _argsort_infer(x, axis=-1, is_ascend=True, dtype="int64", kind=None):
    _check_kind("argsort", kind)
    ax = _axis("argsort", x, axis)
    shape = (math.prod(x.shape),) if ax is None else x.shape
    return Aval(shape, _index_dtype("argsort", dtype))


@defop("argsort", infer=_argsort_infer, nd=(("argsort", {"dtype": "float32"}),),
       np=("argsort",), attrs={"axis": -1, "is_ascend": True, "dtype": "int64", "kind": None})
def _argsort(xp, x, axis=-1, is_ascend=True, dtype="int64", kind=None):
    """Indices that sort along ``axis`` (int64 in NumPy, float32 in MXNet's nd)."""
    _check_kind("argsort", kind)
    dt = _index_dtype("argsort", dtype)
    return _order(xp, x, _axis("argsort", x, axis), is_ascend).astype(dt, copy=False)


# --------------------------------------------------------------- topk
def _topk_k(x, ax, k):
    n = math.prod(x.shape) if ax is None else x.shape[ax]
    if isinstance(k, bool) or not isinstance(k, (int, numpy.integer)):
        raise TypeError(f"topk: k must be an int, got {k!r}")
    if k < 1:  # MXNet: k < 1 selects every element
        return n
    if k > n:
        raise ValueError(f"topk: k={k} is larger than the {n} element(s) along axis {ax} "
                         f"(input: {_desc(x)})")
    return int(k)


def _topk_infer(x, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype="float32"):
    if ret_typ not in _RET_TYPES:
        raise ValueError(f"topk: ret_typ must be one of {_RET_TYPES}, got {ret_typ!r}")
    ax = _axis("topk", x, axis)
    k = _topk_k(x, ax, k)
    dt = _index_dtype("topk", dtype)
    if ret_typ == "mask":
        return Aval(x.shape, x.dtype)
    shape = (k,) if ax is None else x.shape[:ax] + (k,) + x.shape[ax + 1:]
    if ret_typ == "indices":
        return Aval(shape, dt)
    if ret_typ == "value":
        return Aval(shape, x.dtype)
    return Aval(shape, x.dtype), Aval(shape, dt)


def _topk_vjp(c, g):
    a = c.attrs
    # integer arrays get their gradient too (it only moves values), as in MXNet
    if a["ret_typ"] not in ("value", "both") or not (is_float(c.in_dtypes[0])
                                                      or is_integer(c.in_dtypes[0])):
        return (None,)
    if a["ret_typ"] == "both":
        g, idx = g[0], c.outputs[1]
    else:
        idx = F.topk(c.inputs[0], axis=a["axis"], k=a["k"], ret_typ="indices",
                     is_ascend=a["is_ascend"], dtype="int64")
    return (F._scatter_along_axis(g, idx, axis=a["axis"], shape=c.in_shapes[0]),)


@defop("topk", infer=_topk_infer, vjp=_topk_vjp, nd=("topk",),
       attrs={"axis": -1, "k": 1, "ret_typ": "indices", "is_ascend": False,
              "dtype": "float32"})
def _topk(xp, x, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype="float32"):
    """The ``k`` largest (smallest if ``is_ascend``) elements along ``axis``: their
    indices, values, both, or a 0/1 mask of the input's shape (``ret_typ``)."""
    _topk_infer(Aval(x.shape, x.dtype), axis, k, ret_typ, is_ascend, dtype)
    shape = x.shape
    ax = _axis("topk", x, axis)
    k = _topk_k(x, ax, k)
    if ax is None:
        x, ax = x.reshape(-1), 0
    idx = _order(xp, x, ax, is_ascend)
    idx = idx[(slice(None),) * ax + (slice(0, k),)]
    dt = _index_dtype("topk", dtype)
    if ret_typ == "indices":
        return idx.astype(dt)
    if ret_typ == "mask":
        mask = xp.zeros(x.shape, x.dtype)
        mask[_full_index(xp, idx, ax)] = 1
        return mask.reshape(shape)
    vals = xp.take_along_axis(x, idx, axis=ax)
    return vals if ret_typ == "value" else (vals, idx.astype(dt))


# --------------------------------------------------------------- gather / scatter along an axis
def _full_index(xp, idx, axis):
    """An advanced index selecting ``idx`` along ``axis`` and everything elsewhere."""
    out = []
    for d in range(idx.ndim):
        if d == axis:
            out.append(idx)
        else:
            s = [1] * idx.ndim
            s[d] = idx.shape[d]
            out.append(xp.arange(idx.shape[d]).reshape(s))
    return tuple(out)


def _gather_infer(x, indices, axis=-1):
    if not (is_integer(indices.dtype) or is_float(indices.dtype)):
        raise TypeError(f"_gather_along_axis: indices must be integers, got {_desc(indices)}")
    if axis is not None:
        _axis("_gather_along_axis", x, axis)
        if len(indices.shape) != len(x.shape):
            raise ValueError(f"_gather_along_axis: indices {_desc(indices)} must have as many "
                             f"dimensions as the input {_desc(x)}")
    return Aval(indices.shape, x.dtype)


@defop("_gather_along_axis", infer=_gather_infer, inputs=("x", "indices"), attrs={"axis": -1},
       vjp=lambda c, g: (F._scatter_along_axis(g, c.inputs[1], axis=c.attrs["axis"],
                                               shape=c.in_shapes[0]), None))
def _gather_along_axis(xp, x, indices, axis=-1):
    """``x`` at ``indices`` along ``axis`` (take_along_axis; flattened if None)."""
    indices = indices.astype(numpy.intp, copy=False)
    if axis is None:
        return x.reshape(-1)[indices]
    return xp.take_along_axis(x, indices, axis=axis)


def _scatter_infer(g, indices, axis=-1, shape=()):
    if not (is_integer(indices.dtype) or is_float(indices.dtype)):
        raise TypeError(f"_scatter_along_axis: indices must be integers, got {_desc(indices)}")
    if tuple(indices.shape) != tuple(g.shape):
        raise ValueError(f"_scatter_along_axis: values {_desc(g)} and indices "
                         f"{_desc(indices)} must have one shape")
    return Aval(tuple(shape), g.dtype)


@defop("_scatter_along_axis", infer=_scatter_infer, inputs=("g", "indices"),
       attrs={"axis": -1, "shape": ()},
       vjp=lambda c, g: (F._gather_along_axis(g, c.inputs[1], axis=c.attrs["axis"]), None))
def _scatter_along_axis(xp, g, indices, axis=-1, shape=()):
    """Zeros of ``shape`` with ``g`` written at ``indices`` along ``axis`` (flattened if
    None); the adjoint of ``_gather_along_axis`` when indices are distinct along the axis."""
    indices = indices.astype(numpy.intp, copy=False)
    shape = tuple(shape)
    if axis is None:
        out = xp.zeros(math.prod(shape), g.dtype)
        out[indices.reshape(-1)] = g.reshape(-1)
        return out.reshape(shape)
    out = xp.zeros(shape, g.dtype)
    out[_full_index(xp, indices, axis % len(shape))] = g
    return out
