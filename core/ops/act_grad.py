"""``_act_grad``: an activation's gradient ``g * act'(x)`` in one pass, read from its output.

``_act_grad(g, y, act_type)`` for relu (``y > 0``), sigmoid (``y (1 - y)``) and tanh
(``1 - y^2``); internal (``F._act_grad``, no MXNet name). The VJPs of ``relu``,
``sigmoid``, ``tanh``, ``Activation`` and ``_bias_act`` call :func:`act_grad`, which uses
it for float32/float64 outside graph tracing: where the core-operator formula took two or
three NumPy passes and temporaries (ReLU's ``g * (y > 0)`` is a comparison, a bool array
and a product), the compiled CPU kernel makes one pass. While tracing, the formula stays
(the executor fuses it with its neighbours); other dtypes keep their own rounding rules.
Its own VJP gives the second derivatives.

The kernels compute the twin's operations in the twin's order in the data's dtype
(constants passed as that dtype's scalars: numba would widen a Python ``1`` to float64),
so their results equal the twin's bit for bit; that is why they may run only once numba is
up for other reasons (:func:`kernels_apply`).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy

from .. import cpu_kernels
from ..cpu_kernels import prange
from ..dtypes import is_float
from ..ndarray import NDArray
from .abstract import is_tracing
from .infer import fmt
from .registry import Aval, F, defop

ACT_TYPES = ("relu", "sigmoid", "tanh")
_FAST = (numpy.dtype(numpy.float32), numpy.dtype(numpy.float64))


def check_act(name: str, act_type: str) -> None:
    """Raise ValueError naming operator ``name`` unless ``act_type`` is in ACT_TYPES."""
    if act_type not in ACT_TYPES:
        raise ValueError(f"{name}: act_type must be one of {ACT_TYPES}, got {act_type!r}")


def kernels_apply(*arrays) -> bool:
    """Whether the bit-exact kernels run on these NumPy arrays: one float32/float64 dtype,
    not empty, and numba already up (:func:`core.cpu_kernels.up`: these kernels never
    start numba themselves; a one-pass gradient is not worth numba's 0.5 s start in a
    process whose other work needs no kernel)."""
    dt = arrays[0].dtype
    return (dt in _FAST and all(a.dtype == dt for a in arrays) and arrays[0].size > 0
            and cpu_kernels.up())


# --------------------------------------------------------------------------- kernels
@cpu_kernels.kernel(parallel=True)
def _relu_grad(g, y, zero, one, out):
    """out[i] = g[i] * (y[i] > 0), NaN where y[i] is NaN (MXNet's relu_grad)."""
    for i in prange(g.size):
        v = y[i]
        out[i] = g[i] * (one if v > zero else (v if math.isnan(v) else zero))


@cpu_kernels.kernel(parallel=True)
def _sigmoid_grad(g, y, one, out):
    """out[i] = g[i] * y[i] * (1 - y[i])."""
    for i in prange(g.size):
        out[i] = g[i] * y[i] * (one - y[i])


@cpu_kernels.kernel(parallel=True)
def _tanh_grad(g, y, one, out):
    """out[i] = g[i] * (1 - y[i] * y[i])."""
    for i in prange(g.size):
        out[i] = g[i] * (one - y[i] * y[i])


def _act_grad_kernel(xp, g, y, act_type="relu"):
    """The compiled path (``cpu=``), or None where it does not apply."""
    if g.shape != y.shape or not kernels_apply(g, y):
        return None
    t = g.dtype.type
    gf = numpy.ascontiguousarray(g).reshape(-1)
    yf = numpy.ascontiguousarray(y).reshape(-1)
    out = numpy.empty(gf.shape, g.dtype)
    if act_type == "relu":
        _relu_grad(gf, yf, t(0), t(1), out)
    elif act_type == "sigmoid":
        _sigmoid_grad(gf, yf, t(1), out)
    elif act_type == "tanh":
        _tanh_grad(gf, yf, t(1), out)
    else:
        return None  # the twin explains
    return out.reshape(g.shape)


# --------------------------------------------------------------------------- the operator
def _act_grad_infer(g, y, act_type="relu"):
    check_act("_act_grad", act_type)
    if g.shape != y.shape or not (is_float(g.dtype) and is_float(y.dtype)):
        raise ValueError(f"_act_grad: g and y must be floating-point arrays of one shape, got "
                         f"{fmt([g, y])}")
    return Aval(g.shape, numpy.result_type(g.dtype, y.dtype))


def _act_grad_vjp(c, h):
    g, y = c.inputs
    act = c.attrs["act_type"]
    hg = F._act_grad(h, y, act_type=act)
    if act == "relu":
        return hg, None  # relu'' is zero (almost everywhere)
    if act == "sigmoid":
        return hg, h * g * (1 - 2 * y)
    return hg, h * g * y * -2


@defop("_act_grad", infer=_act_grad_infer, vjp=_act_grad_vjp, inputs=("g", "y"),
       attrs={"act_type": "relu"}, cpu=_act_grad_kernel)
def _act_grad(xp, g, y, act_type="relu"):
    """``g * act'(x)`` for relu, sigmoid or tanh, read from the output ``y = act(x)``.

    Example:
        >>> from core import nd
        >>> from core.ops import F
        >>> F._act_grad(nd.array([2.0, 2.0]), nd.array([0.0, 3.0])).asnumpy().tolist()
        [0.0, 2.0]
    """
    check_act("_act_grad", act_type)
    if g.shape != y.shape or not (is_float(g.dtype) and is_float(y.dtype)):
        raise ValueError("bad input")  # infer explains
    return FORMULAS[act_type](g, y)


def _relu_d(y):
    """relu's derivative from its output: 1 where y > 0, NaN where y is NaN (MXNet's
    relu_grad propagates NaN), else 0; in y's dtype, on raw arrays or NDArrays."""
    if isinstance(y, NDArray):
        return F.where(y > 0, F.ones_like(y), F.where(F.isnan(y), y, F.zeros_like(y)))
    xp = y.__array_namespace__() if hasattr(y, "__array_namespace__") else numpy
    return xp.where(y > 0, y.dtype.type(1), xp.where(xp.isnan(y), y, y.dtype.type(0)))


FORMULAS: dict[str, Callable] = {
    "relu": lambda g, y: g * _relu_d(y),
    "sigmoid": lambda g, y: g * y * (1 - y),
    "tanh": lambda g, y: g * (1 - y * y),
}
"""The gradients as array expressions: the operator's NumPy twin on raw arrays, and
the core-operator formula on NDArrays (traced graphs, other dtypes)."""


def act_grad(g, y, act_type: str):
    """The gradient ``g * act'(x)`` for a VJP rule, from the activation's output ``y``.

    One ``_act_grad`` call for float32/float64 outside graph tracing, else the
    core-operator formula (:data:`FORMULAS`).

    Args:
        g: the output gradient (an NDArray).
        y: the activation's output (an NDArray of ``g``'s shape).
        act_type: relu, sigmoid or tanh.

    Returns:
        The input gradient.
    """
    if is_tracing() or g.dtype not in _FAST or y.dtype != g.dtype or g.shape != y.shape:
        return FORMULAS[act_type](g, y)
    return F._act_grad(g, y, act_type=act_type)
