"""Broadcasting: ``broadcast_to``, ``broadcast_like`` and the gradient's ``sum_to``."""
from __future__ import annotations

import numpy

from ..dtypes import ML_FLOATS
from . import reduce_kernels
from .dispatch import MXNetError
from .infer import fmt
from .registry import Aval, F, defop


def _bt_infer(x, shape=()):
    shape = tuple(int(s) for s in shape)
    try:
        out = numpy.broadcast_shapes(x.shape, shape)
    except ValueError:
        out = None
    if out != shape:
        raise ValueError(f"broadcast_to: cannot broadcast an array of shape {x.shape} to "
                         f"{shape} (input: {fmt([x])}); sizes must match or be 1")
    return Aval(shape, x.dtype)


def _mx_target(x_shape, shape):
    # MXNet's broadcast_to accepts 0 for "keep this dimension".
    if len(shape) == len(x_shape) and 0 in shape:
        return tuple(xs if s == 0 else s for xs, s in zip(x_shape, shape))
    return tuple(shape)


@defop("broadcast_to", infer=lambda x, shape=(): _bt_infer(x, _mx_target(x.shape, shape)),
       attrs={"shape": ()}, nd=("broadcast_to",), np=("broadcast_to",), save=False,
       vjp=lambda c, g: (sum_to(g, c.in_shapes[0]),))
def _broadcast_to(xp, x, shape=()):
    """Broadcast to ``shape`` (a new, writable array, as in MXNet)."""
    return xp.broadcast_to(x, _mx_target(x.shape, tuple(shape))).copy()


def _bl_infer(x, like, lhs_axes=None, rhs_axes=None):
    return _bt_infer(x, _like_shape(x.shape, like.shape, lhs_axes, rhs_axes))


class AxesError(ValueError, MXNetError):
    """Bad ``lhs_axes``/``rhs_axes``: a ``ValueError``, and the ``MXNetError`` MXNet raises."""


def _like_shape(xs, ls, lhs_axes, rhs_axes):
    if lhs_axes is None and rhs_axes is None:
        return tuple(ls)
    lhs_axes, rhs_axes = tuple(lhs_axes or ()), tuple(rhs_axes or ())
    if not lhs_axes or len(lhs_axes) != len(rhs_axes):
        raise AxesError(f"broadcast_like: lhs_axes {lhs_axes} and rhs_axes {rhs_axes} must be "
                        f"non-empty and of the same length (lhs {tuple(xs)}, rhs {tuple(ls)})")
    out = list(xs)
    for a, b in zip(lhs_axes, rhs_axes):
        out[a] = ls[b]
    return tuple(out)


@defop("broadcast_like", infer=_bl_infer, inputs=("x", "like"),
       attrs={"lhs_axes": None, "rhs_axes": None}, nd=("broadcast_like",), save=False,
       vjp=lambda c, g: (sum_to(g, c.in_shapes[0]), None))
def _broadcast_like(xp, x, like, lhs_axes=None, rhs_axes=None):
    """Broadcast ``x`` to the shape of ``like`` (or of its ``rhs_axes``)."""
    return xp.broadcast_to(x, _like_shape(x.shape, like.shape, lhs_axes, rhs_axes)).copy()


def _sum_axes(in_shape, shape):
    lead = len(in_shape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and in_shape[lead + i] != 1)
    return lead, axes


def _sum_to_infer(x, shape=()):
    shape = tuple(shape)
    try:
        ok = numpy.broadcast_shapes(shape, x.shape) == x.shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"sum_to: cannot reduce an array of shape {x.shape} to {shape}")
    return Aval(shape, x.dtype)


@defop("sum_to", infer=_sum_to_infer, attrs={"shape": ()}, save=False,
       vjp=lambda c, g: (F.broadcast_to(g, shape=c.in_shapes[0]),))
def _sum_to(xp, x, shape=()):
    """Sum ``x`` down to ``shape`` (the adjoint of broadcasting; bfloat16 and float8
    accumulate in float32, see ``core.dtypes.ML_FLOATS``)."""
    lead, axes = _sum_axes(x.shape, tuple(shape))
    fast = reduce_kernels.sum_around(xp, x, axes, x.dtype) if axes else None
    if fast is not None:  # a conv bias's gradient: one threaded pass (reduce_kernels.py)
        return fast.reshape(tuple(shape))
    wide = numpy.float32 if x.dtype in ML_FLOATS else None
    out = x.sum(axis=axes, keepdims=True, dtype=wide) if axes else x
    if lead:
        out = out.reshape(out.shape[lead:])
    return out.astype(x.dtype, copy=False)


def sum_to(g, shape, dtype=None):
    """``g`` summed down to ``shape`` (and cast to ``dtype``); for VJP rules."""
    if shape is None:
        return None
    if tuple(g.shape) != tuple(shape):
        g = F.sum_to(g, shape=tuple(shape))
    if dtype is not None and g.dtype != dtype:
        g = F.cast(g, dtype=dtype)
    return g
