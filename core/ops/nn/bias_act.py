"""``_bias_act``: bias + activation in one pass.

``_bias_act(data, bias, act_type, axis)`` is ``act(data + bias)`` with ``bias`` along
``axis`` (the last axis for ``FullyConnected`` and channels-last convolutions, 1 for
NCHW), for relu, sigmoid and tanh; internal (``F._bias_act``, no MXNet name). Gluon's
``Dense`` and convolution layers with such an ``activation=`` call their operator without
bias and then this when they run imperatively; while tracing a graph they keep
``FullyConnected``/``Convolution`` + ``Activation``, so exported graphs hold only MXNet's
operators (and the executor fuses elementwise chains itself).

ReLU runs as one compiled pass that reads the product and writes the activation, where
the unfused layer made two (the in-place bias add, then the activation); its result
equals the twin's bit for bit (the same add, then NumPy's ``maximum`` with NaN kept).
Sigmoid and tanh keep NumPy's SIMD transcendentals (numba's scalar ``exp``/``tanh`` are
several times slower) and run in place after the add. The VJP is one ``_act_grad`` pass
(``core.ops.act_grad``) and one sum over the other axes (``reduce_kernels`` on CPU), where
the unfused layer made a comparison, a product and the sum.
"""
from __future__ import annotations

import math

import numpy

from ... import cpu_kernels
from ...cpu_kernels import prange
from ...dtypes import is_float
from ..act_grad import act_grad, check_act, kernels_apply
from ..elemwise import sigmoid_into
from ..infer import fmt
from ..registry import Aval, F, defop


def _axis(data_shape, axis):
    return axis + len(data_shape) if axis < 0 else axis


@cpu_kernels.kernel(parallel=True)
def _bias_relu_acb(d, b, zero, out):
    """out[a, c, k] = max(d[a, c, k] + b[c], 0) (NaN kept, as NumPy's maximum)."""
    a_n, c_n, k_n = d.shape
    for a in prange(a_n):
        for c in range(c_n):
            bc = b[c]
            for k in range(k_n):
                v = d[a, c, k] + bc
                out[a, c, k] = v if (v > zero or v != v) else zero


def _bias_act_kernel(xp, data, bias, act_type="relu", axis=-1):
    """The compiled path (``cpu=``) for relu, or None where it does not apply."""
    if act_type != "relu" or not kernels_apply(data, bias):
        return None
    shape = data.shape
    ax = _axis(shape, axis)
    if not 0 <= ax < len(shape) or bias.shape != (shape[ax],):
        return None  # the twin explains
    acb = (math.prod(shape[:ax]), shape[ax], math.prod(shape[ax + 1:]))
    out = numpy.empty(acb, data.dtype)
    _bias_relu_acb(numpy.ascontiguousarray(data).reshape(acb), numpy.ascontiguousarray(bias),
                   data.dtype.type(0), out)
    return out.reshape(shape)


def _bias_act_infer(data, bias, act_type="relu", axis=-1):
    check_act("_bias_act", act_type)
    avals = [data, bias]
    if not (is_float(data.dtype) and is_float(bias.dtype)):
        raise TypeError(f"_bias_act: expects floating-point data and bias, got {fmt(avals)}")
    ax = _axis(data.shape, axis)
    if not 0 <= ax < data.ndim:
        raise ValueError(f"_bias_act: axis {axis} is out of range for data of {data.ndim} "
                         f"dimension(s) ({fmt(avals)})")
    if bias.shape != (data.shape[ax],):
        raise ValueError(f"_bias_act: bias must have shape ({data.shape[ax]},) (data axis "
                         f"{axis}), got {fmt(avals)}")
    return Aval(data.shape, numpy.result_type(data.dtype, bias.dtype))


def _bias_act_vjp(c, g):
    y = c.out
    ax = _axis(y.shape, c.attrs["axis"])
    gz = act_grad(g, y, c.attrs["act_type"])
    d_dt, b_dt = c.in_dtypes
    gx = gz if gz.dtype == d_dt else F.cast(gz, dtype=d_dt)
    others = tuple(i for i in range(y.ndim) if i != ax)
    gb = F.sum(gz, axis=others) if others else gz
    return gx, gb if gb.dtype == b_dt else F.cast(gb, dtype=b_dt)


@defop("_bias_act", infer=_bias_act_infer, vjp=_bias_act_vjp, inputs=("data", "bias"),
       attrs={"act_type": "relu", "axis": -1}, cpu=_bias_act_kernel)
def _bias_act(xp, data, bias, act_type="relu", axis=-1):
    """``act(data + bias)``, ``bias`` broadcast along ``axis`` (relu, sigmoid or tanh).

    Example:
        >>> from core import nd
        >>> from core.ops import F
        >>> F._bias_act(nd.array([[-1.0, 2.0]]), nd.array([0.5, 3.0])).asnumpy().tolist()
        [[0.0, 5.0]]
    """
    check_act("_bias_act", act_type)
    ax = _axis(data.shape, axis)
    if not (is_float(data.dtype) and is_float(bias.dtype)) or not 0 <= ax < data.ndim \
            or bias.shape != (data.shape[ax],):
        raise ValueError("bad input")  # infer explains
    z = data + bias.reshape(tuple(-1 if i == ax else 1 for i in range(data.ndim)))
    if act_type == "relu":
        return xp.maximum(z, 0, out=z)
    if act_type == "sigmoid":
        return sigmoid_into(xp, z, z)
    return xp.tanh(z, out=z)
