"""MXNet 1.x operators that ``core.nd`` had only as hand-written functions, so that
``core.sym`` (and Symbol's fluent methods) has them too.

- ``shape_array`` / ``size_array``: the input's shape (int64, one entry per axis) and
  its number of elements (int64, shape ``(1,)``); no gradient;
- ``broadcast_axis`` (``broadcast_axes``): length-1 axes ``axis`` broadcast to
  ``size``; the gradient sums over them;
- ``batch_take``: ``out[i] = a[i, indices[i]]`` for a 2-D ``a`` (indices clipped to
  the row); MXNet registers no gradient for it, so differentiating through it raises
  ``MXNetError`` (when an Executor is bound, as in MXNet; ``stop_gradient`` first);
- composites on the operators above (``NAMESPACE_OVERRIDES``): ``argmax_channel``
  (float32 argmax along axis 1), ``rcbrt`` (``1 / cbrt``) and ``nanprod`` (the
  product with NaNs counted as 1).

``core.nd`` keeps its own functions of these names (``core.nd.legacy``); these are
what ``core.sym`` composes.
"""
from __future__ import annotations

import numpy

from .dispatch import MXNetError
from .infer import fmt
from .registry import Aval, F, defop


def _shape_array_infer(data):
    return Aval((len(data.shape),), numpy.dtype("int64"))


@defop("shape_array", infer=_shape_array_infer, inputs=("data",), nd=("shape_array",),
       differentiable=False, save=False)
def _shape_array(xp, data):
    """The shape of ``data`` as an int64 array."""
    return xp.asarray(data.shape, dtype=numpy.int64).reshape(len(data.shape))


@defop("size_array", infer=lambda data: Aval((1,), numpy.dtype("int64")), inputs=("data",),
       nd=("size_array",), differentiable=False, save=False)
def _size_array(xp, data):
    """The number of elements of ``data`` as an int64 array of shape (1,)."""
    return xp.asarray([data.size], dtype=numpy.int64)


def _bax_plan(shape, axis, size):
    axes = (axis,) if isinstance(axis, int) else tuple(int(a) for a in axis)
    sizes = (size,) if isinstance(size, int) else tuple(int(s) for s in size)
    if len(axes) != len(sizes):
        raise ValueError(f"broadcast_axis: {len(axes)} axes but {len(sizes)} sizes "
                         f"(axis={axis}, size={size}, input shape {tuple(shape)})")
    out = list(shape)
    norm = []
    for a, n in zip(axes, sizes):
        if not -len(out) <= a < len(out) or out[a % len(out)] != 1:
            raise ValueError(f"broadcast_axis: axis {a} must be a length-1 axis of the input "
                             f"shape {tuple(shape)}")
        out[a % len(out)] = n
        norm.append(a % len(out))
    return tuple(out), tuple(norm)


def _bax_infer(data, axis=(), size=()):
    return Aval(_bax_plan(data.shape, axis, size)[0], data.dtype)


def _bax_vjp(c, g):
    _, axes = _bax_plan(c.in_shapes[0], c.attrs["axis"], c.attrs["size"])
    return (F.sum(g, axis=axes, keepdims=True) if axes else g,)


@defop("broadcast_axis", infer=_bax_infer, vjp=_bax_vjp, inputs=("data",),
       attrs={"axis": (), "size": ()}, nd=("broadcast_axis",), save=False)
def _broadcast_axis(xp, data, axis=(), size=()):
    """Broadcast the length-1 axes ``axis`` of ``data`` to ``size``."""
    return xp.broadcast_to(data, _bax_plan(data.shape, axis, size)[0]).copy()


def _batch_take_infer(a, indices):
    if len(a.shape) != 2 or len(indices.shape) != 1 or indices.shape[0] != a.shape[0]:
        raise ValueError(f"batch_take: expects a of shape (N, M) and indices of shape (N,), "
                         f"got {fmt([a, indices])}")
    return Aval((a.shape[0],), a.dtype)


def _no_gradient(c, g):
    raise MXNetError(f"{c.node.op.name}: the operator has no gradient (MXNet registers "
                     "none); stop the gradient before it (stop_gradient / BlockGrad) or bind "
                     "with grad_req='null' for the arguments before it")


_no_gradient.no_gradient = True  # read by Executor at bind (core.symbol.executor_info)


@defop("batch_take", infer=_batch_take_infer, vjp=_no_gradient, inputs=("a", "indices"),
       nd=("batch_take",), save=False)
def _batch_take(xp, a, indices):
    """``out[i] = a[i, indices[i]]``, indices clipped to ``[0, M)`` (MXNet's batch_take)."""
    idx = xp.clip(indices.astype(numpy.int64), 0, a.shape[1] - 1)
    return a[xp.arange(a.shape[0]), idx]


def argmax_channel(data, out=None):
    """MXNet's ``argmax_channel``: the float32 argmax along axis 1."""
    res = F.argmax(data, axis=1, dtype="float32")
    return res if out is None else _write("argmax_channel", out, res)


def broadcast_axes(data, axis=(), size=(), out=None):
    """MXNet's ``broadcast_axes``: ``broadcast_axis`` under its alias (a node of this name)."""
    res = F.broadcast_axis(data, axis=axis, size=size)
    return res if out is None else _write("broadcast_axes", out, res)


def rcbrt(data, out=None):
    """MXNet's ``rcbrt``: ``1 / cbrt(data)``."""
    res = F.reciprocal(F.cbrt(data))
    return res if out is None else _write("rcbrt", out, res)


def nanprod(data, axis=None, keepdims: bool = False, exclude: bool = False, out=None):
    """MXNet's ``nanprod``: the product with NaNs counted as 1."""
    clean = F.where(F.isnan(data), F.ones_like(data), data)
    res = F.prod(clean, axis=axis, keepdims=keepdims, exclude=exclude)
    return res if out is None else _write("nanprod", out, res)


def _write(name, out, res):
    from .namespace import write_out

    return write_out(name, out, res)


# Only core.sym composes these; core.nd has core.nd.legacy's functions of the same names.
NAMESPACE_OVERRIDES = {
    "nd": {"argmax_channel": argmax_channel, "broadcast_axes": broadcast_axes, "rcbrt": rcbrt,
           "nanprod": nanprod},
    "np": {},
}
