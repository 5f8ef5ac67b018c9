"""Elementwise unary operators.

Operators that a fused elementwise program may contain declare how (``fusion=``, see
``core.ops.fusible``): the ufunc their forward is, or the in-place recipe their forward
runs (``sigmoid``, ``softsign``), and the C expression of the GPU kernel.
"""
from __future__ import annotations

import math

import numpy

from .. import cuda
from ..dtypes import is_float
from .act_grad import act_grad
from .fusible import Fusion, c_by_kind, c_expr, ufunc_fusion
from .infer import fmt, ufunc_dtype
from .registry import Aval, F, defop


def _same(x, **_):
    return Aval(x.shape, x.dtype)


def _ufunc_infer(name, ufunc):
    cache = {}

    def infer(x, **_):
        d = cache.get(x.dtype)
        if d is None:
            d = cache[x.dtype] = ufunc_dtype(name, ufunc, x)
        return Aval(x.shape, d)

    return infer


def _ufunc(name, np_ufunc, vjp, nd=None, np=None, save=True, doc="", differentiable=True,
           c=None, kinds="f", recompute=False):
    """Register a unary operator that is a NumPy/CuPy ufunc of the same name; ``c`` (a C
    template or ``c_by_kind``) for inputs of dtype ``kinds`` makes it fusable."""
    uname = np_ufunc.__name__

    def forward(xp, x):
        return getattr(xp, uname)(x)

    forward.__doc__ = doc
    defop(name, infer=_ufunc_infer(name, np_ufunc), vjp=vjp if differentiable else None,
          nd=(name,) if nd is None else nd, np=(name,) if np is None else np, save=save,
          fusion=None if c is None else ufunc_fusion(uname, c, kinds), recompute=recompute,
          doc=doc)(forward)


def _zeros(c, g):
    return (F.zeros_like(g),)


# --------------------------------------------------------------- arithmetic and powers
_ufunc("abs", numpy.absolute, lambda c, g: (g * F.sign(c.inputs[0]),),
       np=("abs", "absolute", "fabs"), doc="Absolute value.",
       c=c_by_kind(f="fabs({a})", i="({a} < 0 ? -{a} : {a})", b="{a}"), kinds="fiub")
_ufunc("sign", numpy.sign, _zeros, doc="Sign (-1, 0 or 1).",
       c=c_by_kind(f="({a} > 0 ? ({T})1 : ({a} < 0 ? ({T})-1 : {a}))",
                   i="({T})(({a} > 0) - ({a} < 0))"), kinds="fiu")
_ufunc("negative", numpy.negative, lambda c, g: (-g,), save=False, doc="Numerical negative.",
       c="(-{a})", kinds="fiu")
_ufunc("reciprocal", numpy.reciprocal, lambda c, g: (-g * c.out * c.out,),
       doc="1 / x (integer inputs divide as integers, like NumPy).", c="(({T})1 / {a})")
_ufunc("square", numpy.square, lambda c, g: (g * c.inputs[0] * 2,), doc="x * x.",
       c="({a} * {a})", kinds="fiu")
_ufunc("sqrt", numpy.sqrt, lambda c, g: (g / (c.out * 2),), doc="Square root.",
       c="sqrt({a})")
_ufunc("cbrt", numpy.cbrt, lambda c, g: (g / (c.out * c.out * 3),), doc="Cube root.",
       c="cbrt({a})")
_ufunc("exp", numpy.exp, lambda c, g: (g * c.out,), doc="e ** x.", c="exp({a})")
_ufunc("expm1", numpy.expm1, lambda c, g: (g * (c.out + 1),), doc="exp(x) - 1, exact near 0.",
       c="expm1({a})")
_ufunc("log", numpy.log, lambda c, g: (g / c.inputs[0],), doc="Natural logarithm.",
       c="log({a})")
_ufunc("log1p", numpy.log1p, lambda c, g: (g / (c.inputs[0] + 1),), doc="log(1 + x).",
       c="log1p({a})")
_ufunc("log2", numpy.log2, lambda c, g: (g / (c.inputs[0] * math.log(2)),), doc="Base-2 log.",
       c="log2({a})")
_ufunc("log10", numpy.log10, lambda c, g: (g / (c.inputs[0] * math.log(10)),),
       doc="Base-10 logarithm.", c="log10({a})")

# --------------------------------------------------------------- trigonometric, hyperbolic
_ufunc("sin", numpy.sin, lambda c, g: (g * F.cos(c.inputs[0]),), doc="Sine.", c="sin({a})")
_ufunc("cos", numpy.cos, lambda c, g: (-g * F.sin(c.inputs[0]),), doc="Cosine.", c="cos({a})")
_ufunc("tan", numpy.tan, lambda c, g: (g * (c.out * c.out + 1),), doc="Tangent.", c="tan({a})")
_ufunc("arcsin", numpy.arcsin,
       lambda c, g: (g * F.rsqrt(1 - c.inputs[0] * c.inputs[0]),), np=("arcsin", "asin"),
       doc="Inverse sine.", c="asin({a})")
_ufunc("arccos", numpy.arccos,
       lambda c, g: (-g * F.rsqrt(1 - c.inputs[0] * c.inputs[0]),), np=("arccos", "acos"),
       doc="Inverse cosine.", c="acos({a})")
_ufunc("arctan", numpy.arctan, lambda c, g: (g / (c.inputs[0] * c.inputs[0] + 1),),
       np=("arctan", "atan"), doc="Inverse tangent.", c="atan({a})")
_ufunc("sinh", numpy.sinh, lambda c, g: (g * F.cosh(c.inputs[0]),),
       doc="Hyperbolic sine.", c="sinh({a})")
_ufunc("cosh", numpy.cosh, lambda c, g: (g * F.sinh(c.inputs[0]),),
       doc="Hyperbolic cosine.", c="cosh({a})")
_ufunc("tanh", numpy.tanh, lambda c, g: (act_grad(g, c.out, "tanh"),),
       doc="Hyperbolic tangent.", c="tanh({a})", recompute=True)
_ufunc("arcsinh", numpy.arcsinh,
       lambda c, g: (g * F.rsqrt(c.inputs[0] * c.inputs[0] + 1),), np=("arcsinh", "asinh"),
       doc="Inverse hyperbolic sine.", c="asinh({a})")
_ufunc("arccosh", numpy.arccosh,
       lambda c, g: (g * F.rsqrt(c.inputs[0] * c.inputs[0] - 1),), np=("arccosh", "acosh"),
       doc="Inverse hyperbolic cosine.", c="acosh({a})")
_ufunc("arctanh", numpy.arctanh, lambda c, g: (g / (1 - c.inputs[0] * c.inputs[0]),),
       np=("arctanh", "atanh"), doc="Inverse hyperbolic tangent.", c="atanh({a})")
_ufunc("degrees", numpy.degrees, lambda c, g: (g * (180.0 / math.pi),), np=("degrees", "rad2deg"),
       save=False, doc="Radians to degrees.",
       c=f"({{a}} * ({{T}}){180.0 / math.pi!r})")
_ufunc("radians", numpy.radians, lambda c, g: (g * (math.pi / 180.0),), np=("radians", "deg2rad"),
       save=False, doc="Degrees to radians.",
       c=f"({{a}} * ({{T}}){math.pi / 180.0!r})")

# --------------------------------------------------------------- rounding (zero gradient)
_ufunc("floor", numpy.floor, _zeros, save=False, doc="Round down.", c="floor({a})")
_ufunc("ceil", numpy.ceil, _zeros, save=False, doc="Round up.", c="ceil({a})")
_ufunc("rint", numpy.rint, _zeros, save=False,
       doc="Round to the nearest integer (half to even).", c="rint({a})")
_ufunc("trunc", numpy.trunc, _zeros, save=False, doc="Round toward zero.", c="trunc({a})")
_ufunc("fix", numpy.trunc, _zeros, save=False,
       doc="Round toward zero (NumPy's fix).", c="trunc({a})")


@defop("round", infer=_same, vjp=_zeros, attrs={"decimals": 0}, nd=("round",),
       np=("round", "around"), save=False)
def _round(xp, x, decimals=0):
    """Round half to even, to ``decimals`` decimals (NumPy's round)."""
    return xp.round(x, decimals)


# --------------------------------------------------------------- predicates (no gradient)
_ufunc("isnan", numpy.isnan, None, differentiable=False, doc="True where NaN.", c="isnan({a})")
_ufunc("isinf", numpy.isinf, None, differentiable=False, doc="True where +-inf.", c="isinf({a})")
_ufunc("isfinite", numpy.isfinite, None, differentiable=False,
       doc="True where finite.", c="isfinite({a})")
_ufunc("logical_not", numpy.logical_not, None, differentiable=False, doc="Logical NOT.", c="(!{a})",
       kinds="fiub")
_ufunc("bitwise_not", numpy.invert, None, differentiable=False, np=("bitwise_not", "invert"),
       doc="Bitwise NOT (logical NOT for booleans).",
       c=c_by_kind(i="(~{a})", b="(!{a})"), kinds="iub")


# --------------------------------------------------------------- composites with their own VJP
def _float_infer(name):
    def infer(x, **_):
        return Aval(x.shape, ufunc_dtype(name, numpy.sqrt, x))

    return infer


@defop("rsqrt", infer=_float_infer("rsqrt"), nd=("rsqrt",),
       vjp=lambda c, g: (g * c.out * c.out * c.out * -0.5,))
def _rsqrt(xp, x):
    """1 / sqrt(x)."""
    return xp.reciprocal(xp.sqrt(x))


def _float_out(xp, x):
    """The result buffer of a float function of ``x`` (NumPy gives float64 for others)."""
    return xp.empty(x.shape, x.dtype if is_float(x.dtype) else numpy.float64)


def sigmoid_into(xp, out, x):
    """Logistic sigmoid 1 / (1 + exp(-x)) written into ``out``, as tanh(x / 2) / 2 + 1 / 2
    (never overflows). ``sigmoid``'s forward, its fused step and ``Activation``'s."""
    # A scalar of x's own dtype: bfloat16 * Python float would promote to float32.
    half = x.dtype.type(0.5) if is_float(x.dtype) else 0.5
    xp.multiply(x, half, out=out)
    xp.tanh(out, out=out)
    xp.multiply(out, half, out=out)
    xp.add(out, half, out=out)
    return out


@defop("sigmoid", infer=_float_infer("sigmoid"), nd=("sigmoid",),
       vjp=lambda c, g: (act_grad(g, c.out, "sigmoid"),),
       fusion=Fusion(c_expr("(tanh({a} * ({T})0.5) * ({T})0.5 + ({T})0.5)"), "f",
                     recipe=sigmoid_into), recompute=True)
def _sigmoid(xp, x):
    """Logistic sigmoid 1 / (1 + exp(-x)), computed without overflow."""
    return sigmoid_into(xp, _float_out(xp, x), x)


@defop("relu", infer=_same, nd=("relu",),
       vjp=lambda c, g: (act_grad(g, c.out, "relu"),),
       fusion=Fusion(c_by_kind(f="((isnan({a}) || {a} > ({T})0) ? {a} : ({T})0)",
                               i="({a} > 0 ? {a} : ({T})0)"), "fiu", "maximum", (0,)),
       recompute=True)
def _relu(xp, x):
    """max(x, 0)."""
    return xp.maximum(x, 0)


def _softsign_vjp(c, g):
    d = F.abs(c.inputs[0]) + 1
    return (g / (d * d),)


def softsign_into(xp, out, x):
    """x / (1 + |x|) written into ``out`` (``softsign``'s forward and fused step)."""
    d = xp.absolute(x, out=xp.empty(x.shape, x.dtype))  # an array even when 0-d
    xp.add(d, 1, out=d)
    return xp.divide(x, d, out=out)


@defop("softsign", infer=_float_infer("softsign"), nd=("softsign",), vjp=_softsign_vjp,
       fusion=Fusion(c_expr("({a} / (fabs({a}) + ({T})1))"), "f", recipe=softsign_into))
def _softsign(xp, x):
    """x / (1 + |x|)."""
    return softsign_into(xp, _float_out(xp, x), x)


# --------------------------------------------------------------- special functions
def _special_infer(name):
    def infer(x, **_):
        if x.dtype.kind not in "fiub" and not is_float(x.dtype):
            raise TypeError(f"{name}: not supported for inputs {fmt([x])}")
        return Aval(x.shape, x.dtype if is_float(x.dtype) else numpy.float64)

    return infer


def _special(name, sp_name, vjp, doc):
    def forward(xp, x):
        fn = getattr(cuda.special(xp), sp_name)
        if not is_float(x.dtype):
            return fn(x.astype(numpy.float64))
        if x.dtype.itemsize < 4:  # float16/bfloat16: compute in float32
            return fn(x.astype(numpy.float32)).astype(x.dtype)
        return fn(x)

    forward.__doc__ = doc
    defop(name, infer=_special_infer(name), vjp=vjp, nd=(name,), doc=doc)(forward)


_SQRT_PI = math.sqrt(math.pi)
_special("erf", "erf", lambda c, g: (g * (2 / _SQRT_PI) * F.exp(-c.inputs[0] * c.inputs[0]),),
         "Gauss error function.")
_special("erfinv", "erfinv", lambda c, g: (g * (_SQRT_PI / 2) * F.exp(c.out * c.out),),
         "Inverse error function.")
_special("gamma", "gamma", lambda c, g: (g * c.out * F.digamma(c.inputs[0]),),
         "Gamma function.")
_special("gammaln", "gammaln", lambda c, g: (g * F.digamma(c.inputs[0]),),
         "Log of the absolute value of the gamma function.")
_special("digamma", "digamma", lambda c, g: (g * F.polygamma(c.inputs[0], n=1),),
         "Digamma (psi), the derivative of gammaln.")


@defop("polygamma", infer=_special_infer("polygamma"), attrs={"n": 1}, nd=("polygamma",),
       vjp=lambda c, g: (g * F.polygamma(c.inputs[0], n=c.attrs["n"] + 1),))
def _polygamma(xp, x, n=1):
    """The n-th derivative of digamma."""
    out = cuda.special(xp).polygamma(n, x.astype(numpy.float64) if not is_float(x.dtype)
                                     else x.astype(numpy.float32) if x.dtype.itemsize < 4
                                     else x)
    return out.astype(x.dtype) if is_float(x.dtype) else out


# --------------------------------------------------------------- clip
def _clip_vjp(c, g):
    x = c.inputs[0]
    lo, hi = c.attrs["a_min"], c.attrs["a_max"]
    if lo is None:
        mask = x <= hi
    elif hi is None:
        mask = x >= lo
    else:
        mask = F.logical_and(x >= lo, x <= hi)
    return (g * mask,)


def _clip_infer(x, a_min=None, a_max=None):
    if a_min is None and a_max is None:
        raise ValueError(f"clip: at least one of a_min and a_max must be given ({fmt([x])})")
    return Aval(x.shape, x.dtype)


@defop("clip", infer=_clip_infer, attrs={"a_min": None, "a_max": None}, nd=("clip",),
       np=("clip",), vjp=_clip_vjp, recompute=True)
def _clip(xp, x, a_min=None, a_max=None):
    """Limit values to [a_min, a_max]; the gradient passes where x is inside."""
    if a_min is None and a_max is None:
        raise ValueError("clip: at least one of a_min and a_max must be given")
    out = xp.clip(x, a_min, a_max)
    return out.astype(x.dtype, copy=False)
