"""Gathers by index arrays: ``take``, ``pick``, ``gather_nd``/``scatter_nd`` and ``one_hot``.

Index arrays carry no gradient. MXNet passes them as float32 arrays; they are truncated to
integers. The VJPs add into zeros with ``_scatter_add``/``scatter_nd``, so indices that
repeat accumulate their gradients.
"""
from __future__ import annotations

import math

import numpy

from ..dtypes import as_dtype, is_float, is_integer
from .index import check_bounds, scatter_zeros
from .infer import fmt
from .registry import Aval, F, defop
from .shape import axis_of


def _shape(a):
    return tuple(a.shape) if hasattr(a, "shape") else numpy.shape(a)


def _as_int(xp, idx):
    idx = xp.asarray(idx)
    return idx if idx.dtype.kind in "iu" else idx.astype(numpy.int64)


def _check_int_like(name, idx):
    if isinstance(idx, Aval) and not (is_integer(idx.dtype) or is_float(idx.dtype)):
        raise TypeError(f"{name}: indices must be integers (or floats holding integers), got "
                        f"{idx.dtype.name}")


def _fix_mode(xp, idx, n, mode, axis, shape):
    """Indices made valid for an axis of size ``n`` as ``mode`` says ('clip', 'wrap', 'raise')."""
    if idx.size and n == 0:
        raise IndexError(f"cannot index axis {axis} of size 0 (input shape {shape})")
    if mode == "clip":
        return xp.clip(idx, 0, n - 1)
    if mode == "wrap":
        return xp.mod(idx, n)
    if idx.size:
        lo, hi = int(idx.min()), int(idx.max())
        if lo < -n or hi >= n:
            raise IndexError(f"index {lo if lo < -n else hi} is out of bounds for axis {axis} "
                             f"with size {n} (input shape {shape})")
    return idx


def _check_mode(name, mode, allowed=("clip", "wrap", "raise")):
    if mode not in allowed:
        raise ValueError(f"{name}: mode must be one of {allowed}, got {mode!r}")


# ------------------------------------------------------------------ take
def _take_base(shape, axis):
    if axis is None:
        return (math.prod(shape),), 0
    return tuple(shape), axis_of("take", axis, shape)


def _take_infer(a, indices, axis=0, mode="clip"):
    _check_mode("take", mode)
    _check_int_like("take", indices)
    base, ax = _take_base(a.shape, axis)
    return Aval(base[:ax] + _shape(indices) + base[ax + 1:], a.dtype)


def _take_key(xp, shape, indices, axis, mode):
    base, ax = _take_base(shape, axis)
    idx = _fix_mode(xp, _as_int(xp, indices), base[ax], mode, ax, tuple(shape))
    return base, (slice(None),) * ax + (idx,)


def _take_vjp(c, g):
    shape, dtype = c.node.in_meta[0]
    if not is_float(dtype):
        return None, None
    base, key = _take_key(c.node.ctx.xp, shape, c.node.in_data[1], c.attrs["axis"],
                          c.attrs["mode"])
    gx = F._scatter_add(g, key=key, shape=base)
    return (gx if base == shape else F.reshape(gx, newshape=shape, mx_codes=False)), None


@defop("take", infer=_take_infer, inputs=("a", "indices"), attrs={"axis": 0, "mode": "clip"},
       nd=("take",), np=(("take", {"axis": None, "mode": "raise"}),), vjp=_take_vjp)
def _take(xp, a, indices, axis=0, mode="clip"):
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened array when None)."""
    _check_mode("take", mode)
    base, key = _take_key(xp, a.shape, indices, axis, mode)
    return a.reshape(base)[key]


# ------------------------------------------------------------------ pick
def _pick_shapes(shape, ishape, axis, keepdims):
    ax = axis_of("pick", axis, shape)
    kshape = shape[:ax] + (1,) + shape[ax + 1:]
    dropped = shape[:ax] + shape[ax + 1:]
    if tuple(ishape) not in (kshape, dropped):
        raise ValueError(f"pick: index of shape {tuple(ishape)} does not fit data of shape "
                         f"{tuple(shape)} along axis {ax}; expected {dropped} or {kshape}")
    return ax, kshape, (kshape if keepdims else dropped)


def _pick_infer(data, index, axis=-1, keepdims=False, mode="clip"):
    _check_mode("pick", mode, ("clip", "wrap"))
    _check_int_like("pick", index)
    return Aval(_pick_shapes(data.shape, _shape(index), axis, keepdims)[2], data.dtype)


def _pick_index(xp, shape, index, axis, keepdims, mode):
    ax, kshape, oshape = _pick_shapes(shape, _shape(index), axis, keepdims)
    idx = _as_int(xp, index).reshape(kshape)
    return ax, kshape, oshape, _fix_mode(xp, idx, shape[ax], mode, ax, shape)


def _pick_vjp(c, g):
    shape, dtype = c.node.in_meta[0]
    if not is_float(dtype):
        return None, None
    xp = c.node.ctx.xp
    a = c.attrs
    ax, kshape, _, idx = _pick_index(xp, shape, c.node.in_data[1], a["axis"], a["keepdims"],
                                     a["mode"])
    key = tuple(idx if i == ax else xp.arange(s).reshape((1,) * i + (s,) + (1,) * (
        len(shape) - i - 1)) for i, s in enumerate(kshape))
    g = F.reshape(g, newshape=kshape, mx_codes=False)
    return F._scatter_add(g, key=key, shape=shape), None


@defop("pick", infer=_pick_infer, inputs=("data", "index"),
       attrs={"axis": -1, "keepdims": False, "mode": "clip"}, nd=("pick",), vjp=_pick_vjp)
def _pick(xp, data, index, axis=-1, keepdims=False, mode="clip"):
    """One element per position along ``axis``, chosen by ``index`` (MXNet's pick)."""
    _check_mode("pick", mode, ("clip", "wrap"))
    ax, _, oshape, idx = _pick_index(xp, data.shape, index, axis, keepdims, mode)
    return xp.take_along_axis(data, idx, ax).reshape(oshape)


# ------------------------------------------------------------------ gather_nd, scatter_nd
def _nd_key(xp, indices, shape):
    idx = _as_int(xp, indices)
    key = tuple(idx[i] for i in range(idx.shape[0]))
    check_bounds(shape, key)
    return key


def _nd_check(name, data_shape, ishape):
    if len(ishape) == 0 or not 1 <= ishape[0] <= len(data_shape):
        raise ValueError(f"{name}: indices of shape {tuple(ishape)} must have a first axis M "
                         f"in 1..{len(data_shape)}, the number of axes of the array of shape "
                         f"{tuple(data_shape)} they index")
    return ishape[0]


def _gather_nd_infer(data, indices):
    _check_int_like("gather_nd", indices)
    ishape = _shape(indices)
    m = _nd_check("gather_nd", data.shape, ishape)
    return Aval(tuple(ishape[1:]) + data.shape[m:], data.dtype)


@defop("gather_nd", infer=_gather_nd_infer, inputs=("data", "indices"), nd=("gather_nd",),
       vjp=lambda c, g: (F.scatter_nd(g, c.inputs[1], shape=c.in_shapes[0])
                         if is_float(c.in_dtypes[0]) else None, None))
def _gather_nd(xp, data, indices):
    """``data[indices[0], ..., indices[M-1]]``: indices of shape (M, ...) index M axes."""
    return data[_nd_key(xp, indices, data.shape)]


def _scatter_nd_infer(data, indices, shape=()):
    _check_int_like("scatter_nd", indices)
    shape = tuple(int(s) for s in shape)
    ishape = _shape(indices)
    m = _nd_check("scatter_nd", shape, ishape)
    want = tuple(ishape[1:]) + shape[m:]
    if tuple(data.shape) != want:
        raise ValueError(f"scatter_nd: data of shape {data.shape} does not fit indices of "
                         f"shape {tuple(ishape)} into shape {shape}; expected data shape {want}")
    return Aval(shape, data.dtype)


@defop("scatter_nd", infer=_scatter_nd_infer, inputs=("data", "indices"), attrs={"shape": ()},
       nd=("scatter_nd",),
       vjp=lambda c, g: (F.gather_nd(g, c.inputs[1]) if is_float(c.in_dtypes[0]) else None,
                         None))
def _scatter_nd(xp, data, indices, shape=()):
    """Zeros of ``shape`` with ``data`` added at ``indices`` (repeats add up)."""
    shape = tuple(int(s) for s in shape)
    return scatter_zeros(xp, shape, _nd_key(xp, indices, shape), data)


# ------------------------------------------------------------------ one_hot
def _one_hot_infer(indices, depth=1, on_value=1.0, off_value=0.0, dtype="float32"):
    _check_int_like("one_hot", indices)
    if int(depth) < 0:
        raise ValueError(f"one_hot: depth must be non-negative, got {depth} "
                         f"(indices: {fmt([indices])})")
    return Aval(_shape(indices) + (int(depth),), as_dtype(dtype, "one_hot"))


@defop("one_hot", infer=_one_hot_infer, inputs=("indices",),
       attrs={"depth": 1, "on_value": 1.0, "off_value": 0.0, "dtype": "float32"},
       nd=("one_hot",), differentiable=False)
def _one_hot(xp, indices, depth=1, on_value=1.0, off_value=0.0, dtype="float32"):
    """``on_value`` at each index along a new last axis of size ``depth``, else ``off_value``."""
    hit = _as_int(xp, indices)[..., None] == xp.arange(int(depth))
    return xp.where(hit, on_value, off_value).astype(as_dtype(dtype, "one_hot"))
