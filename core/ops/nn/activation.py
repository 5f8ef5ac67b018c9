"""Activations: MXNet's ``Activation`` and ``LeakyReLU``, and one operator per function.

Every activation is a row of one table: a ``forward(xp, x, **params)`` written once
against the array module, computed without overflow (softplus as
``max(x, 0) + log1p(exp(-|x|))``, elu on ``min(x, 0)``), and a ``grad(x, y, g,
**params)`` written with core operators, so second derivatives come from autograd.
``Activation(act_type=...)``, ``LeakyReLU(act_type=...)`` and the standalone operators
(``softplus``, ``elu``, ``selu``, ``gelu``, ``silu``/``swish``, ``hard_sigmoid``,
``hard_swish``, ``relu6``, ``log_sigmoid``, ``mish``) all read the same table. Sigmoid
and softsign are computed by the standalone operators' own functions (``core.ops.elemwise``),
and ``Activation``'s fused forms (``fusion=``) are those of the standalone operators.

``gelu`` is a hot path (transformer MLPs): its gradient is one fused operator,
``_gelu_grad``, with its own VJP (the second derivative), instead of eight.

``rrelu`` draws one slope per element from U(lower_bound, upper_bound) in training and
uses the mean slope otherwise. The training flag is read by the public function
``nd.LeakyReLU`` (registered through ``NAMESPACE_OVERRIDES``); the operators
themselves are pure functions of their inputs and attributes: ``LeakyReLU`` always
computes the inference form, ``_rrelu`` the form its ``training`` attribute says (it
returns the slopes it used as a second output, which its VJP multiplies by). While
tracing (``core.symbol``), ``nd.LeakyReLU(act_type="rrelu")`` emits ``_rrelu`` with
``training=TRAIN``, the executor's mode.
"""
from __future__ import annotations

import math

import numpy

from ... import cuda, tape
from ... import random as _random
from ...dtypes import is_float
from ..abstract import is_tracing
from ..act_grad import act_grad
from ..broadcast import sum_to
from ..dispatch import invoke
from ..elemwise import sigmoid_into, softsign_into
from ..fusible import Fusion, FusionByAttr, c_expr
from ..infer import fmt, require_float
from ..param_shapes import ParamShapes
from ..registry import Aval, F, defop, get

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_C = math.sqrt(2.0 / math.pi)
_TANH_A = 0.044715
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _wide(x):
    """float16/bfloat16 computed in float32 (transcendentals lose too much otherwise)."""
    return x.astype(numpy.float32) if x.dtype.itemsize < 4 else x


def _arrays(fwd):
    """Run ``fwd`` on 0-d inputs as shape (1,): NumPy turns 0-d results into scalars, which
    the in-place steps (``out=``) cannot write to. The result keeps ``x``'s dtype:
    ml_dtypes' bfloat16 times a Python float gives float32 in NumPy."""
    def run(xp, x, *args, **kw):
        if x.ndim == 0:
            y = fwd(xp, x.reshape(1), *[a.reshape(1) if hasattr(a, "reshape") else a
                                        for a in args], **kw).reshape(())
        else:
            y = fwd(xp, x, *args, **kw)
        return y if y.dtype == x.dtype else y.astype(x.dtype)

    run.__name__ = fwd.__name__
    return run


# --------------------------------------------------------------- forwards (xp)
def _relu(xp, x):
    return xp.maximum(x, 0)


def _sigmoid(xp, x):
    return sigmoid_into(xp, xp.empty(x.shape, x.dtype), x)


def _tanh(xp, x):
    return xp.tanh(x)


def _softplus_into(xp, out, x):
    """softplus written into ``out``: ``max(x, 0) + log1p(exp(-|x|))`` in that order (the
    forward and the fused step; it reads ``x`` after writing ``out``)."""
    xp.absolute(x, out=out)
    xp.negative(out, out=out)
    xp.exp(out, out=out)
    xp.log1p(out, out=out)
    xp.add(out, xp.maximum(x, 0), out=out)
    return out


def _softplus(xp, x):
    return _softplus_into(xp, xp.empty(x.shape, x.dtype), x)


_SOFTPLUS_FUSION = Fusion(c_expr("(log1p(exp(-fabs({a}))) + ({a} > ({T})0 ? {a} : ({T})0))"),
                          "f", recipe=_softplus_into, reads_late=True)


def _softsign(xp, x):
    return softsign_into(xp, xp.empty(x.shape, x.dtype), x)


def _log_sigmoid(xp, x):
    y = xp.abs(x)
    xp.negative(y, out=y)
    xp.exp(y, out=y)
    xp.log1p(y, out=y)
    return xp.minimum(x, 0) - y


def _elu(xp, x, alpha=1.0):
    neg = xp.expm1(xp.minimum(x, 0))
    neg *= alpha
    return xp.where(x > 0, x, neg)


def _selu(xp, x):
    y = _elu(xp, x, _SELU_ALPHA)
    y *= _SELU_SCALE
    return y


def _gelu(xp, x, approximate=False):
    w = _wide(x)
    if approximate:
        inner = xp.tanh((w + _TANH_A * w * w * w) * _TANH_C)
    else:
        inner = cuda.special(xp).erf(w * _SQRT_HALF)
    inner += 1
    inner *= w
    inner *= 0.5
    return inner.astype(x.dtype, copy=False)


def _gelu_tanh(xp, x):
    return _gelu(xp, x, True)


def _silu(xp, x, beta=1.0):
    return x * _sigmoid(xp, x * beta if beta != 1 else x)


def _hard_sigmoid(xp, x, alpha=0.2, beta=0.5):
    y = x * alpha
    y += beta
    return xp.clip(y, 0, 1, out=y)


def _hard_swish(xp, x):
    return x * _hard_sigmoid(xp, x, 1.0 / 6.0, 0.5)


def _relu6(xp, x):
    return xp.clip(x, 0, 6)


def _mish(xp, x):
    w = _wide(x)
    return (w * xp.tanh(_softplus(xp, w))).astype(x.dtype, copy=False)


def _leaky(xp, x, slope=0.25):
    return xp.where(x > 0, x, x * slope)


# --------------------------------------------------------------- gradients (core operators)
def _relu_g(x, y, g):
    return act_grad(g, y, "relu")


def _sigmoid_g(x, y, g):
    return act_grad(g, y, "sigmoid")


def _tanh_g(x, y, g):
    return act_grad(g, y, "tanh")


def _softplus_g(x, y, g):
    return g * F.sigmoid(x)


def _softsign_g(x, y, g):
    d = F.abs(x) + 1
    return g / (d * d)


def _log_sigmoid_g(x, y, g):
    return g * F.sigmoid(-x)


def _elu_g(x, y, g, alpha=1.0):
    return F.where(x > 0, g, g * (y + alpha))


def _selu_g(x, y, g):
    return F.where(x > 0, g * _SELU_SCALE, g * (y + _SELU_SCALE * _SELU_ALPHA))


def _gelu_g(x, y, g, approximate=False):
    return F._gelu_grad(x, g, approximate=approximate)


def _gelu_tanh_g(x, y, g):
    return F._gelu_grad(x, g, approximate=True)


def _silu_g(x, y, g, beta=1.0):
    s = F.sigmoid(x * beta if beta != 1 else x)
    return g * s * (1 + (x * beta) * (1 - s))


def _hard_sigmoid_g(x, y, g, alpha=0.2, beta=0.5):
    return g * F.logical_and(y > 0, y < 1) * alpha


def _hard_swish_g(x, y, g):
    inside = F.logical_and(x > -3, x < 3)
    return F.where(inside, g * (x * (1.0 / 3.0) + 0.5), g * (x >= 3))


def _relu6_g(x, y, g):
    return g * F.logical_and(x > 0, x < 6)


def _mish_g(x, y, g):
    t = F.tanh(F.softplus(x))
    return g * (t + x * (1 - t * t) * F.sigmoid(x))


def _leaky_g(x, y, g, slope=0.25):
    return F.where(x > 0, g, g * slope)


# name -> (forward, grad, the grad reads the input x)
_TABLE = {
    "relu": (_relu, _relu_g),
    "sigmoid": (_sigmoid, _sigmoid_g),
    "tanh": (_tanh, _tanh_g),
    "softrelu": (_softplus, _softplus_g),
    "softsign": (_softsign, _softsign_g),
    "log_sigmoid": (_log_sigmoid, _log_sigmoid_g),
    "mish": (_mish, _mish_g),
    "elu": (_elu, _elu_g),
    "selu": (_selu, _selu_g),
    "gelu": (_gelu, _gelu_g),
    "gelu_tanh": (_gelu_tanh, _gelu_tanh_g),
    "silu": (_silu, _silu_g),
    "hard_sigmoid": (_hard_sigmoid, _hard_sigmoid_g),
    "hard_swish": (_hard_swish, _hard_swish_g),
    "relu6": (_relu6, _relu6_g),
    "leaky": (_leaky, _leaky_g),
}


_FWD = {k: _arrays(v[0]) for k, v in _TABLE.items()}


def _float_same(name):
    def infer(x, **_):
        require_float(name, x, what="input")
        return Aval(x.shape, x.dtype)

    return infer


def _standalone(name, act, attrs=None, nd=None, doc="", fusion=None):
    """Register ``name`` as the table's activation ``act`` with keyword ``attrs``."""
    grad = _TABLE[act][1]
    attrs = dict(attrs or {})

    fwd = _FWD[act]

    def forward(xp, x, **params):
        return fwd(xp, x, **params)

    def vjp(c, g):
        return (grad(c.inputs[0], c.out, g, **c.attrs),)

    forward.__doc__ = doc
    defop(name, infer=_float_same(name), vjp=vjp, attrs=attrs, nd=nd or (name,), doc=doc,
          fusion=fusion)(forward)


_standalone("softplus", "softrelu", nd=("softplus", "softrelu"),
            doc="log(1 + exp(x)), computed as max(x, 0) + log1p(exp(-|x|)).",
            fusion=_SOFTPLUS_FUSION)
_standalone("log_sigmoid", "log_sigmoid", doc="log(sigmoid(x)) = -softplus(-x).")
_standalone("elu", "elu", {"alpha": 1.0}, doc="x if x > 0 else alpha * (exp(x) - 1).")
_standalone("selu", "selu",
            doc="Scaled ELU: scale * elu(x, alpha), scale=1.0507..., alpha=1.6732...")
_standalone("gelu", "gelu", {"approximate": False},
            doc="x * Phi(x) (exact, with erf), or its tanh approximation when approximate.")
_standalone("silu", "silu", {"beta": 1.0}, nd=("silu", "swish"),
            doc="x * sigmoid(beta * x) (swish; silu is beta=1).")
_standalone("hard_sigmoid", "hard_sigmoid", {"alpha": 0.2, "beta": 0.5},
            doc="clip(alpha * x + beta, 0, 1) (MXNet's defaults alpha=0.2, beta=0.5).")
_standalone("hard_swish", "hard_swish", nd=("hard_swish", "hard_silu"),
            doc="x * relu6(x + 3) / 6.")
_standalone("relu6", "relu6", doc="min(max(x, 0), 6).")
_standalone("mish", "mish", doc="x * tanh(softplus(x)).")


# --------------------------------------------------------------- gelu's fused gradient
def _gelu_d1(xp, w, approximate):
    """d gelu / dx on a wide array."""
    if approximate:
        x2 = w * w
        t = xp.tanh((w + _TANH_A * x2 * w) * _TANH_C)
        d = (1 - t * t) * (w * _TANH_C) * (1 + 3 * _TANH_A * x2)
        d += 1 + t
        d *= 0.5
        return d
    d = xp.exp(w * w * -0.5)
    d *= w * _INV_SQRT_2PI
    d += 0.5 * (1 + cuda.special(xp).erf(w * _SQRT_HALF))
    return d


def _gelu_grad_infer(x, g, approximate=False):
    if x.shape != g.shape or not is_float(x.dtype):
        raise ValueError(f"_gelu_grad: x and g must be floating-point arrays of one shape, got "
                         f"{fmt([x, g])}")
    return Aval(x.shape, numpy.result_type(x.dtype, g.dtype))


def _gelu_grad_vjp(c, h):
    x, g = c.inputs
    approximate = c.attrs["approximate"]
    if approximate:
        u1 = (x * x * (3 * _TANH_A) + 1) * _TANH_C
        t = F.tanh((x + x * x * x * _TANH_A) * _TANH_C)
        d2 = (1 - t * t) * (u1 - x * t * u1 * u1 + x * x * (3 * _TANH_A * _TANH_C))
    else:
        d2 = F.exp(x * x * -0.5) * (2 - x * x) * _INV_SQRT_2PI
    return h * g * d2, F._gelu_grad(x, h, approximate=approximate)


@defop("_gelu_grad", infer=_gelu_grad_infer, vjp=_gelu_grad_vjp, inputs=("x", "g"),
       attrs={"approximate": False})
def _gelu_grad(xp, x, g, approximate=False):
    """g * gelu'(x): the gradient of gelu in one operator."""
    shape = x.shape
    if x.ndim == 0:
        x, g = x.reshape(1), g.reshape(1)
    d = _gelu_d1(xp, _wide(x), approximate)
    d *= g
    return d.astype(numpy.result_type(x.dtype, g.dtype), copy=False).reshape(shape)


# --------------------------------------------------------------- Activation
_ACTIVATION_TYPES = ("relu", "sigmoid", "tanh", "softrelu", "softsign", "log_sigmoid", "mish")


def _activation_infer(x, act_type="relu"):
    if act_type not in _ACTIVATION_TYPES:
        raise ValueError(f"Activation: act_type must be one of {_ACTIVATION_TYPES}, got "
                         f"{act_type!r}")
    return _float_same("Activation")(x)


@defop("Activation", infer=_activation_infer, attrs={"act_type": "relu"}, nd=("Activation",),
       vjp=lambda c, g: (_TABLE[c.attrs["act_type"]][1](c.inputs[0], c.out, g),),
       fusion=FusionByAttr("act_type", {
           "relu": get("relu").fusion, "sigmoid": get("sigmoid").fusion,
           "tanh": get("tanh").fusion, "softrelu": _SOFTPLUS_FUSION,
           "softsign": get("softsign").fusion}), recompute=True)
def _activation(xp, x, act_type="relu"):
    """MXNet's Activation: relu, sigmoid, tanh, softrelu (softplus), softsign, log_sigmoid,
    mish, chosen by ``act_type``.

    Example:
        >>> from core import nd
        >>> nd.Activation(nd.array([-1.0, 2.0]), act_type="relu").asnumpy().tolist()
        [0.0, 2.0]
    """
    if act_type not in _ACTIVATION_TYPES:
        raise ValueError("act_type")  # infer explains
    return _FWD[act_type](xp, x)


# --------------------------------------------------------------- LeakyReLU
_LEAKY_TYPES = ("leaky", "prelu", "elu", "selu", "gelu", "gelu_erf", "gelu_tanh", "rrelu")
_LEAKY_ATTRS = {"act_type": "leaky", "slope": 0.25, "lower_bound": 0.125, "upper_bound": 0.334}


def _gamma_shape(shape):
    """gamma broadcast against data: over axis 1 (axis 0 for 1-D data)."""
    ax = 1 if len(shape) >= 2 else 0
    return ax, tuple(-1 if i == ax else 1 for i in range(len(shape)))


def _leaky_infer(x, gamma=None, act_type="leaky", slope=0.25, lower_bound=0.125,
                 upper_bound=0.334):
    if act_type not in _LEAKY_TYPES:
        raise ValueError(f"LeakyReLU: act_type must be one of {_LEAKY_TYPES}, got {act_type!r}")
    if act_type == "prelu":
        if gamma is None:
            raise ValueError(f"LeakyReLU: act_type='prelu' needs the gamma input (data: "
                             f"{fmt([x])})")
        ax, _ = _gamma_shape(x.shape)
        c = x.shape[ax] if x.ndim else 1
        if gamma.ndim != 1 or gamma.shape[0] not in (1, c):
            raise ValueError(f"LeakyReLU: prelu's gamma must have shape (1,) or ({c},) (the "
                             f"size of data axis {ax}), got {fmt([x, gamma])}")
    if act_type == "rrelu" and not lower_bound <= upper_bound:
        raise ValueError(f"LeakyReLU: rrelu needs lower_bound <= upper_bound, got "
                         f"{lower_bound} > {upper_bound}")
    return _float_same("LeakyReLU")(x)


def _gamma_b(xp_or_f, gamma, shape, reshape):
    _, bshape = _gamma_shape(shape)
    return reshape(gamma, bshape) if len(shape) > 1 else gamma


def _leaky_forward(xp, x, gamma, act_type, slope, lower_bound, upper_bound):
    if act_type == "leaky":
        return _leaky(xp, x, slope)
    if act_type == "prelu":
        gb = _gamma_b(xp, gamma, x.shape, lambda a, s: a.reshape(s))
        return xp.where(x > 0, x, x * gb).astype(x.dtype, copy=False)
    if act_type == "rrelu":  # inference form: the mean slope
        if not lower_bound <= upper_bound:
            raise ValueError("bounds")  # infer explains
        return _leaky(xp, x, (lower_bound + upper_bound) / 2.0)
    if act_type == "elu":
        return _elu(xp, x, slope)
    if act_type == "selu":
        return _selu(xp, x)
    if act_type in ("gelu", "gelu_erf"):
        return _gelu(xp, x, False)
    if act_type == "gelu_tanh":
        return _gelu(xp, x, True)
    raise ValueError("act_type")  # infer explains


def _leaky_vjp(c, g):
    x, gamma = c.inputs[0], c.inputs[1]
    at = c.attrs
    t = at["act_type"]
    y = c.out
    ggamma = None
    if t == "leaky":
        gx = _leaky_g(x, y, g, at["slope"])
    elif t == "rrelu":
        gx = _leaky_g(x, y, g, (at["lower_bound"] + at["upper_bound"]) / 2.0)
    elif t == "prelu":
        shape = c.in_shapes[0]
        gb = _gamma_b(F, gamma, shape,
                      lambda a, s: F.reshape(a, newshape=s, mx_codes=False))
        pos = x > 0
        gx = F.where(pos, g, g * gb)
        if c.node.parents[1] is not None:
            _, bshape = _gamma_shape(shape)
            gfull = F.where(pos, F.zeros_like(g), g * x)
            if len(shape) > 1:
                red = sum_to(gfull, tuple(abs(s) if s == 1 else shape[1] for s in bshape))
                ggamma = F.reshape(red, newshape=(-1,), mx_codes=False)
            else:
                ggamma = gfull
            ggamma = sum_to(ggamma, c.in_shapes[1], c.in_dtypes[1])
    elif t == "elu":
        gx = _elu_g(x, y, g, at["slope"])
    elif t == "selu":
        gx = _selu_g(x, y, g)
    else:
        gx = F._gelu_grad(x, g, approximate=t == "gelu_tanh")
    return gx, ggamma


_LEAKY_FWD = _arrays(_leaky_forward)


def _prelu_params(shape, a, n_in):
    """prelu's gamma: one slope per channel (axis 1; axis 0 for 1-D data)."""
    if a.get("act_type") != "prelu" or not shape:  # None or ()
        return {}
    return {1: (shape[1] if len(shape) >= 2 else shape[0],)}


@defop("LeakyReLU", infer=_leaky_infer, vjp=_leaky_vjp, inputs=("data", "gamma?"),
       attrs=_LEAKY_ATTRS, param_shapes=ParamShapes(_prelu_params, (1,)), recompute=True,
       optional_inputs={"gamma": lambda a: a.get("act_type") == "prelu"})
def _leaky_relu(xp, x, gamma=None, act_type="leaky", slope=0.25, lower_bound=0.125,
                upper_bound=0.334):
    """MXNet's LeakyReLU (leaky, prelu, elu, selu, gelu, gelu_tanh; rrelu's inference form)."""
    return _LEAKY_FWD(xp, x, gamma, act_type, slope, lower_bound, upper_bound)


def _rrelu_infer(x, lower_bound=0.125, upper_bound=0.334, training=True):
    a = _leaky_infer(x, None, "rrelu", lower_bound=lower_bound, upper_bound=upper_bound)
    return a, a


def _rrelu_vjp(c, g):
    x = c.inputs[0]
    return (F.where(x > 0, g[0], g[0] * c.outputs[1]),)


@defop("_rrelu", infer=_rrelu_infer, vjp=_rrelu_vjp,
       attrs={"lower_bound": 0.125, "upper_bound": 0.334, "training": True},
       needs_ctx=True, random=True, visible_outputs=1)
def _rrelu(xp, x, lower_bound=0.125, upper_bound=0.334, training=True, ctx=None):
    """rrelu: in training slopes drawn per element from U(lower_bound, upper_bound),
    otherwise (``training=False``) their mean, exactly as ``LeakyReLU``'s inference form.

    Returns ``(out, slopes)``; the VJP multiplies by the same slopes.
    """
    if not lower_bound <= upper_bound:
        raise ValueError("bounds")  # infer explains
    if not training:
        out = _LEAKY_FWD(xp, x, None, "rrelu", 0.25, lower_bound, upper_bound)
        return out, xp.full(x.shape, (lower_bound + upper_bound) / 2.0, dtype=x.dtype)
    gen = _random.get_generator(ctx)
    u = gen.random(x.shape, dtype=numpy.float64 if x.dtype == numpy.float64 else numpy.float32)
    slopes = (u * (upper_bound - lower_bound) + lower_bound).astype(x.dtype, copy=False)
    return xp.where(x > 0, x, x * slopes), slopes


def LeakyReLU(data=None, gamma=None, act_type="leaky", slope=0.25, lower_bound=0.125,
              upper_bound=0.334, **kwargs):
    """MXNet's ``LeakyReLU``: leaky, prelu (learnable ``gamma`` over axis 1), elu, selu,
    gelu (erf), gelu_tanh, rrelu.

    ``rrelu`` draws one slope per element from U(lower_bound, upper_bound) while
    ``autograd.is_training()`` and uses their mean otherwise (while tracing a graph,
    in the executor's mode); the other types do not depend on the mode.

    Example:
        >>> from core import nd
        >>> nd.LeakyReLU(nd.array([-2.0, 3.0]), slope=0.1).asnumpy().tolist()
        [-0.2, 3.0]
    """
    kwargs.pop("name", None)
    out = kwargs.pop("out", None)
    if kwargs:
        raise TypeError(f"LeakyReLU: unexpected keyword argument(s) {sorted(kwargs)}; accepted: "
                        "data, gamma, act_type, slope, lower_bound, upper_bound, out")
    if act_type == "rrelu" and is_tracing():
        from ...symbol.graph import TRAIN

        res, _ = invoke(_rrelu, [data], {"lower_bound": lower_bound, "upper_bound": upper_bound,
                                         "training": TRAIN})
    elif act_type == "rrelu" and tape.is_training():
        res, _ = invoke(_rrelu, [data], {"lower_bound": lower_bound, "upper_bound": upper_bound,
                                         "training": True})
    else:
        res = invoke(_leaky_relu, [data, gamma],
                     {"act_type": act_type, "slope": slope, "lower_bound": lower_bound,
                      "upper_bound": upper_bound})
    if out is not None:
        out[...] = res
        return out
    return res


NAMESPACE_OVERRIDES = {"nd": {"LeakyReLU": LeakyReLU}}
