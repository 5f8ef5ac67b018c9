"""Sequence operators: SequenceMask, SequenceLast, SequenceReverse (MXNet's semantics).

The sequence axis is ``axis`` (0: ``(T, N, ...)``, 1: ``(N, T, ...)``) and the batch
axis is the other of the two. ``sequence_length`` holds one length per batch entry
(integers, or floats holding whole numbers as MXNet passes them); it is read only
when ``use_sequence_length=True`` and never gets a gradient. Lengths are clipped
to ``[0, T]``; ``SequenceLast`` of a length-0 sequence returns its first step.

Each VJP is written with these same operators (the adjoint of a mask is the mask,
of a reversal the reversal, of a gather a masked broadcast), so gradients of every
order work.
"""
from __future__ import annotations

from ...dtypes import is_float, is_integer
from ...ndarray import NDArray
from ..infer import fmt, norm_axis
from ..param_shapes import ParamShapes
from ..registry import Aval, F, defop

_ATTRS = {"use_sequence_length": False, "axis": 0}


def _check(name, data, sequence_length, use_sequence_length, axis):
    """(sequence axis, batch axis) after validating shapes; ValueError naming ``name``."""
    if not isinstance(data, Aval):
        raise TypeError(f"{name}: data must be an array, got {data!r}")
    if data.ndim < 2:
        raise ValueError(f"{name}: data must have at least 2 dimensions (sequence and batch), "
                         f"got shape {data.shape} (inputs: {fmt([data, sequence_length])})")
    ax = norm_axis(name, axis, data.ndim)
    if ax not in (0, 1):
        raise ValueError(f"{name}: axis must be 0 (data (T, N, ...)) or 1 (data (N, T, ...)), "
                         f"got axis={axis} for data of shape {data.shape}")
    batch = 1 - ax
    if use_sequence_length:
        if not isinstance(sequence_length, Aval):
            raise ValueError(f"{name}: use_sequence_length=True needs a sequence_length array "
                             f"of shape ({data.shape[batch]},), got {sequence_length!r}")
        if sequence_length.shape != (data.shape[batch],):
            raise ValueError(f"{name}: sequence_length must have shape ({data.shape[batch]},) "
                             f"(one length per batch entry of data {data.shape} with "
                             f"axis={axis}), got {sequence_length.shape}")
        if not (is_integer(sequence_length.dtype) or is_float(sequence_length.dtype)):
            raise TypeError(f"{name}: sequence_length must hold integers or floats, got "
                            f"{sequence_length.dtype}")
    return ax, batch


def _valid(xp, sequence_length, steps, ax):
    """Boolean ``(T, N)`` (axis 0) or ``(N, T)`` (axis 1): step t is within its length."""
    lens = xp.clip(sequence_length.astype(xp.int64), 0, steps)
    t = xp.arange(steps)
    return t[:, None] < lens[None, :] if ax == 0 else t[None, :] < lens[:, None]


def _trailing(a, ndim):
    return a.reshape(a.shape + (1,) * (ndim - a.ndim))


def _const(like: NDArray, data) -> NDArray:
    return NDArray._make(data, like._ctx, None)


# --------------------------------------------------------------- SequenceMask
def _mask_infer(data, sequence_length=None, use_sequence_length=False, value=0.0, axis=0):
    _check("SequenceMask", data, sequence_length, use_sequence_length, axis)
    return Aval(data.shape, data.dtype)


def _mask_vjp(c, g):
    at = c.attrs
    return (F.SequenceMask(g, c.inputs[1], use_sequence_length=at["use_sequence_length"],
                           value=0.0, axis=at["axis"]), None)


def _length_shape(shape, a, n_in):
    """``sequence_length``'s shape: the batch size (the data's axis 1, or 0 when axis=1)."""
    if shape is None or len(shape) < 2 or not a.get("use_sequence_length"):
        return {}
    return {1: (shape[1] if a.get("axis", 0) == 0 else shape[0],)}


_LENGTH_SHAPE = ParamShapes(_length_shape)
# A Symbol call creates the sequence_length variable when use_sequence_length is set.
_LENGTH_INPUT = {"sequence_length": lambda a: bool(a.get("use_sequence_length"))}


@defop("SequenceMask", infer=_mask_infer, vjp=_mask_vjp, inputs=("data", "sequence_length?"),
       attrs={"use_sequence_length": False, "value": 0.0, "axis": 0}, nd=("SequenceMask",),
       param_shapes=_LENGTH_SHAPE, optional_inputs=_LENGTH_INPUT)
def _sequence_mask(xp, data, sequence_length=None, use_sequence_length=False, value=0.0,
                   axis=0):
    """Set the steps beyond each sequence's length to ``value``."""
    ax, _ = _check("SequenceMask", Aval(data.shape, data.dtype),
                   None if sequence_length is None else
                   Aval(sequence_length.shape, sequence_length.dtype),
                   use_sequence_length, axis)
    if not use_sequence_length:
        return data.copy()
    keep = _trailing(_valid(xp, sequence_length, data.shape[ax], ax), data.ndim)
    out = xp.where(keep, data, xp.asarray(value, dtype=data.dtype))
    return out if out.dtype == data.dtype else out.astype(data.dtype)


# --------------------------------------------------------------- SequenceLast
def _last_infer(data, sequence_length=None, use_sequence_length=False, axis=0):
    ax, _ = _check("SequenceLast", data, sequence_length, use_sequence_length, axis)
    return Aval(data.shape[:ax] + data.shape[ax + 1:], data.dtype)


def _last_index(xp, sequence_length, steps):
    return xp.clip(sequence_length.astype(xp.int64) - 1, 0, steps - 1)


def _last_vjp(c, g):
    at = c.attrs
    data_shape = c.in_shapes[0]
    ax = at["axis"] % len(data_shape)
    steps = data_shape[ax]
    ge = F.expand_dims(g, axis=ax)
    xp = g._ctx.xp
    if at["use_sequence_length"]:
        idx = _last_index(xp, c.inputs[1]._data, steps)
        t = xp.arange(steps)
        hit = t[:, None] == idx[None, :] if ax == 0 else t[None, :] == idx[:, None]
    else:
        shape = (steps, 1) if ax == 0 else (1, steps)
        hit = (xp.arange(steps) == steps - 1).reshape(shape)
    hit = _trailing(hit, len(data_shape)).astype(g.dtype)
    return (ge * _const(g, hit), None)


@defop("SequenceLast", infer=_last_infer, vjp=_last_vjp, inputs=("data", "sequence_length?"),
       attrs=dict(_ATTRS), nd=("SequenceLast",), param_shapes=_LENGTH_SHAPE,
       optional_inputs=_LENGTH_INPUT)
def _sequence_last(xp, data, sequence_length=None, use_sequence_length=False, axis=0):
    """The last step of each sequence (step ``length - 1``, or the final step)."""
    ax, _ = _check("SequenceLast", Aval(data.shape, data.dtype),
                   None if sequence_length is None else
                   Aval(sequence_length.shape, sequence_length.dtype),
                   use_sequence_length, axis)
    steps = data.shape[ax]
    if not use_sequence_length:
        return data[steps - 1].copy() if ax == 0 else data[:, steps - 1].copy()
    idx = _last_index(xp, sequence_length, steps)
    batch = xp.arange(idx.shape[0])
    return data[idx, batch] if ax == 0 else data[batch, idx]


# --------------------------------------------------------------- SequenceReverse
def _reverse_infer(data, sequence_length=None, use_sequence_length=False, axis=0):
    _check("SequenceReverse", data, sequence_length, use_sequence_length, axis)
    return Aval(data.shape, data.dtype)


def _reverse_vjp(c, g):
    # reversing the first ``length`` steps is its own inverse (and its own adjoint)
    at = c.attrs
    return (F.SequenceReverse(g, c.inputs[1], use_sequence_length=at["use_sequence_length"],
                              axis=at["axis"]), None)


@defop("SequenceReverse", infer=_reverse_infer, vjp=_reverse_vjp,
       inputs=("data", "sequence_length?"), attrs=dict(_ATTRS), nd=("SequenceReverse",),
       param_shapes=_LENGTH_SHAPE, optional_inputs=_LENGTH_INPUT)
def _sequence_reverse(xp, data, sequence_length=None, use_sequence_length=False, axis=0):
    """Reverse the first ``length`` steps of each sequence; later steps stay in place."""
    ax, _ = _check("SequenceReverse", Aval(data.shape, data.dtype),
                   None if sequence_length is None else
                   Aval(sequence_length.shape, sequence_length.dtype),
                   use_sequence_length, axis)
    steps = data.shape[ax]
    if not use_sequence_length:
        return xp.flip(data, axis=ax).copy()
    lens = xp.clip(sequence_length.astype(xp.int64), 0, steps)
    t = xp.arange(steps)[:, None]
    src = xp.where(t < lens[None, :], lens[None, :] - 1 - t, t)  # (T, N)
    batch = xp.arange(lens.shape[0])
    return data[src, batch[None, :]] if ax == 0 else data[batch[:, None], src.T]
