"""The softmax family: ``softmax``, ``log_softmax`` (primitives), ``softmin`` and
``SoftmaxActivation``.

Both primitives shift by the maximum along ``axis`` before exponentiating, so they
never overflow, and differentiate from their output alone:
``softmax``: ``y * (g - sum(g * y))``, ``log_softmax``: ``g - exp(y) * sum(g)`` (divided
by ``temperature`` when one is given). float16/bfloat16 inputs are computed in float32.

``use_length=True`` takes a second input ``length`` (the data's shape without
``axis``): positions at or beyond ``length`` along ``axis`` get probability 0, and, as
in MXNet, ``log_softmax`` writes 0 there too; their gradient is 0. A length of 0 gives
a slice of zeros.
"""
from __future__ import annotations

import numpy

from ...dtypes import as_dtype, is_float
from ..infer import fmt, norm_axis, require_float
from ..namespace import with_out
from ..registry import Aval, F, defop

_F32 = numpy.dtype(numpy.float32)


def compute_dtype(dt):
    """The dtype softmax computes in: float32 for the 1- and 2-byte floats."""
    return _F32 if dt.itemsize < 4 else dt


def length_mask(xp, shape, length, axis):
    """Boolean mask of ``shape``: True where the index along ``axis`` is below ``length``."""
    n = shape[axis]
    pos = xp.arange(n).reshape((n,) + (1,) * (len(shape) - 1 - axis))
    lim = xp.expand_dims(xp.asarray(length), axis)
    if is_float(lim.dtype):
        lim = lim.astype(numpy.int64)
    return pos < lim


def softmax_raw(xp, x, axis, temperature=None, mask=None, log=False, dtype=None):
    """(log-)softmax of a raw array along ``axis`` in ``dtype`` (default: x's)."""
    out_dt = numpy.dtype(dtype) if dtype is not None else x.dtype
    w = x.astype(compute_dtype(out_dt), copy=False)
    if temperature is not None and temperature != 1:
        w = w / temperature
    if mask is not None:
        w = xp.where(mask, w, -numpy.inf)
    m = xp.max(w, axis=axis, keepdims=True)
    if mask is not None or not bool(xp.isfinite(m).all()):
        m = xp.where(xp.isfinite(m), m, 0)  # an all -inf (or +inf) slice: no shift
    e = w - m
    if log:
        s = xp.exp(e).sum(axis=axis, keepdims=True)
        if mask is not None:
            s[s == 0] = 1  # length 0: zeros, not log(0)
        e -= xp.log(s)
        if mask is not None:
            e = xp.where(mask, e, 0)
    else:
        xp.exp(e, out=e)
        s = e.sum(axis=axis, keepdims=True)
        if mask is not None:
            s[s == 0] = 1  # length 0: zeros, not 0/0
        e /= s
    return e.astype(out_dt, copy=False)


def _sm_infer_for(name):
    def infer(data, length=None, axis=-1, temperature=None, dtype=None, use_length=False):
        if dtype is None:
            require_float(name, data, what="input",
                          fix="cast with .astype('float32') or pass dtype=")
        if data.ndim == 0:
            raise ValueError(f"{name}: data must have at least 1 dimension, got {fmt([data])}")
        ax = norm_axis(name, axis, data.ndim)
        if use_length:
            want = data.shape[:ax] + data.shape[ax + 1:]
            if length is None:
                raise ValueError(f"{name}: use_length=True needs the length input, of shape "
                                 f"{want} (data: {fmt([data])})")
            if tuple(length.shape) != want:
                raise ValueError(f"{name}: length must have shape {want} (data's shape without "
                                 f"axis {ax}), got {fmt([data, length])}")
        out = as_dtype(dtype, name) if dtype is not None else data.dtype
        if not is_float(out):
            raise TypeError(f"{name}: dtype must be a floating-point type, got {dtype!r}")
        return Aval(data.shape, out)

    return infer


def _forward(log):
    def forward(xp, data, length=None, axis=-1, temperature=None, dtype=None,
                use_length=False):
        ax = axis if 0 <= axis < data.ndim else norm_axis("softmax", axis, data.ndim)
        mask = None
        if use_length:
            if length is None:
                raise ValueError("length")  # infer explains
            mask = length_mask(xp, data.shape, length, ax)
        return softmax_raw(xp, data, ax, temperature, mask, log,
                           as_dtype(dtype) if dtype is not None else None)

    return forward


_FWD_SOFTMAX = _forward(False)
_FWD_LOG_SOFTMAX = _forward(True)


def _back(c, gx):
    """Scale by 1/temperature, cast to the data's dtype; None for the length input."""
    t = c.attrs["temperature"]
    if t is not None and t != 1:
        gx = gx * (1.0 / t)
    dt = c.in_dtypes[0]
    if not is_float(dt):
        return None, None
    if gx.dtype != dt:
        gx = F.cast(gx, dtype=dt)
    return gx, None


def _softmax_vjp(c, g):
    y = c.out
    gy = g * y
    gx = gy - y * F.sum(gy, axis=c.attrs["axis"], keepdims=True)
    return _back(c, gx)


def _log_softmax_vjp(c, g):
    y = c.out
    axis = c.attrs["axis"]
    if c.attrs["use_length"]:
        mask = F._length_mask(c.inputs[0], c.inputs[1], axis=axis, dtype=g.dtype)
        g = g * mask
        p = F.exp(y) * mask
    else:
        p = F.exp(y)
    return _back(c, g - p * F.sum(g, axis=axis, keepdims=True))


_SM_ATTRS = {"axis": -1, "temperature": None, "dtype": None, "use_length": False}


# A Symbol call creates the length variable when use_length is set.
_LENGTH_INPUT = {"length": lambda a: bool(a.get("use_length"))}


@defop("softmax", infer=_sm_infer_for("softmax"), vjp=_softmax_vjp, inputs=("data", "length?"),
       attrs=_SM_ATTRS, nd=("softmax",), optional_inputs=_LENGTH_INPUT)
def _softmax(xp, data, length=None, **attrs):
    """exp(x) / sum(exp(x)) along ``axis`` (``x / temperature`` when given); with
    ``use_length``, only the first ``length`` positions along ``axis`` take part.

    Example:
        >>> from core import nd
        >>> nd.softmax(nd.array([[0.0, 0.0]])).asnumpy().tolist()
        [[0.5, 0.5]]
    """
    return _FWD_SOFTMAX(xp, data, length, **attrs)


@defop("log_softmax", infer=_sm_infer_for("log_softmax"), vjp=_log_softmax_vjp,
       inputs=("data", "length?"), attrs=_SM_ATTRS, nd=("log_softmax",),
       optional_inputs=_LENGTH_INPUT)
def _log_softmax(xp, data, length=None, **attrs):
    """log(softmax(x)) along ``axis``, computed as x - max - log(sum(exp(x - max))).

    Example:
        >>> from core import nd
        >>> round(float(nd.log_softmax(nd.array([0.0, 0.0]))[0].asscalar()), 4)
        -0.6931
    """
    return _FWD_LOG_SOFTMAX(xp, data, length, **attrs)


def _mask_infer(data, length, axis=-1, dtype="float32"):
    ax = norm_axis("_length_mask", axis, data.ndim)
    want = data.shape[:ax] + data.shape[ax + 1:]
    if tuple(length.shape) != want:
        raise ValueError(f"_length_mask: length must have shape {want}, got {fmt([data, length])}")
    return Aval(data.shape, as_dtype(dtype, "_length_mask"))


@defop("_length_mask", infer=_mask_infer, inputs=("data", "length"),
       attrs={"axis": -1, "dtype": "float32"}, differentiable=False)
def _length_mask(xp, data, length, axis=-1, dtype="float32"):
    """1 where the position along ``axis`` is below ``length``, else 0 (data's shape)."""
    ax = norm_axis("_length_mask", axis, data.ndim)
    return length_mask(xp, data.shape, length, ax).astype(as_dtype(dtype))


# --------------------------------------------------------------- public functions
def softmin(data, length=None, axis=-1, temperature=None, dtype=None, use_length=False,
            out=None):
    """MXNet's ``softmin``: softmax of ``-data`` along ``axis`` (into ``out`` when given).

    Example:
        >>> from core import nd
        >>> nd.softmin(nd.array([0.0, 0.0])).asnumpy().tolist()
        [0.5, 0.5]
    """
    return with_out("softmin", F.softmax(-data, length, axis=axis, temperature=temperature,
                                         dtype=dtype, use_length=use_length), out)


def SoftmaxActivation(data, mode="instance", out=None):
    """MXNet's ``SoftmaxActivation``: softmax over every axis but the first
    (``mode='instance'``) or over axis 1 (``mode='channel'``); into ``out`` when given.

    Example:
        >>> from core import nd
        >>> nd.SoftmaxActivation(nd.zeros((1, 2, 2))).asnumpy().tolist()
        [[[0.25, 0.25], [0.25, 0.25]]]
    """
    if mode not in ("channel", "instance"):
        raise ValueError(f"SoftmaxActivation: mode must be 'instance' or 'channel', got {mode!r}")
    if mode == "channel" or data.ndim == 2:
        return with_out("SoftmaxActivation", F.softmax(data, axis=1), out)
    flat = F.reshape(data, newshape=(data.shape[0], -1), mx_codes=False)
    res = F.reshape(F.softmax(flat, axis=1), newshape=data.shape, mx_codes=False)
    return with_out("SoftmaxActivation", res, out)


NAMESPACE_OVERRIDES = {"nd": {"softmin": softmin, "SoftmaxActivation": SoftmaxActivation}}
