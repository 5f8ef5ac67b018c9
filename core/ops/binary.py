"""Binary elementwise operators with NumPy broadcasting, and ``where``.

The ufunc operators a fused elementwise program may contain give the C expression of
the GPU kernel (``c=``, ``fusion=`` of their ``defop``; see ``core.ops.fusible``).
"""
from __future__ import annotations

import numpy

from ..dtypes import is_float
from .broadcast import sum_to
from .fusible import c_by_kind, c_expr, ufunc_fusion
from .infer import broadcast, result_type, ufunc_dtype
from .param_shapes import OPERANDS
from .registry import Aval, F, defop


def _binary_infer(name, ufunc):
    def infer(a, b, **_):
        return Aval(broadcast(name, a, b), ufunc_dtype(name, ufunc, a, b))

    return infer


def _red(c, i, g):
    """Gradient ``g`` reduced to input ``i``'s shape and dtype.

    None for scalars, for integer and boolean inputs, and for inputs that need no
    gradient; ``g`` may be a function computing the gradient, called only if needed.
    """
    m = c.node.in_meta[i]
    if m is None or c.node.parents[i] is None or not is_float(m[1]):
        return None
    return sum_to(g() if callable(g) else g, m[0], m[1])


def _binary(name, ufunc, vjp, nd=None, np=None, save=True, doc="", differentiable=True,
            c=None, kinds="f", recompute=False):
    """Register a binary operator that is a NumPy/CuPy ufunc; ``c`` (a C template or
    ``c_by_kind``) for inputs of dtype ``kinds`` makes it fusable. In a graph, an
    unknown operand takes the other's shape (``param_shapes=OPERANDS``)."""
    uname = ufunc.__name__

    def forward(xp, a, b):
        return getattr(xp, uname)(a, b)

    forward.__doc__ = doc
    defop(name, infer=_binary_infer(name, ufunc), inputs=("x1", "x2"),
          vjp=vjp if differentiable else None, save=save, doc=doc,
          nd=(name,) if nd is None else nd, np=(name,) if np is None else np,
          fusion=None if c is None else ufunc_fusion(uname, c, kinds), param_shapes=OPERANDS,
          recompute=recompute)(forward)


def _mx(name):
    """MXNet's 1.x names for a broadcasting binary operator."""
    return (name, f"broadcast_{name}")


_binary("add", numpy.add, lambda c, g: (_red(c, 0, g), _red(c, 1, g)), save=False,
        nd=("add", "broadcast_add", "broadcast_plus", "elemwise_add", "plus"),
        doc="a + b with broadcasting.", recompute=True,
        c=c_by_kind(f="({a} + {b})", i="({a} + {b})", b="({a} || {b})"), kinds="fiub")
_binary("subtract", numpy.subtract, lambda c, g: (_red(c, 0, g), _red(c, 1, lambda: -g)),
        save=False, nd=("subtract", "broadcast_sub", "broadcast_minus", "elemwise_sub", "minus"),
        doc="a - b with broadcasting.", c="({a} - {b})", kinds="fiu", recompute=True)
_binary("multiply", numpy.multiply,
        lambda c, g: (_red(c, 0, lambda: g * c.inputs[1]), _red(c, 1, lambda: g * c.inputs[0])),
        nd=("multiply", "broadcast_mul", "elemwise_mul"), doc="a * b with broadcasting.",
        recompute=True,
        c=c_by_kind(f="({a} * {b})", i="({a} * {b})", b="({a} && {b})"), kinds="fiub")
_binary("divide", numpy.true_divide,
        lambda c, g: (_red(c, 0, lambda: g / c.inputs[1]),
                      _red(c, 1, lambda: -g * c.out / c.inputs[1])),
        nd=("divide", "broadcast_div", "elemwise_div"), np=("divide", "true_divide"),
        doc="a / b (true division) with broadcasting.", c="({a} / {b})")
_binary("floor_divide", numpy.floor_divide,
        lambda c, g: (_red(c, 0, F.zeros_like(g)), _red(c, 1, F.zeros_like(g))), save=False,
        nd=("floor_divide",), doc="Floor of a / b.")
_binary("mod", numpy.remainder,
        lambda c, g: (_red(c, 0, g),
                      _red(c, 1, -g * F.floor_divide(c.inputs[0], c.inputs[1]))),
        nd=("mod", "broadcast_mod"), np=("mod", "remainder"),
        doc="Remainder of a / b with the sign of b (Python's %).")


def _power_vjp(c, g):
    a, b = c.inputs
    ga = _red(c, 0, g * b * F.power(a, b - 1)) if c.node.in_meta[0] is not None else None
    gb = None
    if c.node.in_meta[1] is not None:
        safe = F.where(a > 0, a, 1) if hasattr(a, "shape") else (a if a > 0 else 1)
        gb = _red(c, 1, g * c.out * F.log(safe))
    return ga, gb


_binary("power", numpy.power, _power_vjp, nd=("power", "broadcast_power"),
        doc="a ** b; the gradient for b uses log(a) where a > 0 and 0 elsewhere.",
        c="pow({a}, {b})")


def _max_vjp(c, g):
    a, b = c.inputs
    m = a >= b
    return _red(c, 0, lambda: g * m), _red(c, 1, lambda: g * F.logical_not(m))


def _min_vjp(c, g):
    a, b = c.inputs
    m = a <= b
    return _red(c, 0, lambda: g * m), _red(c, 1, lambda: g * F.logical_not(m))


_binary("maximum", numpy.maximum, _max_vjp, nd=_mx("maximum"),
        doc="Elementwise maximum; on ties the gradient goes to the first input.",
        c=c_by_kind(f="((isnan({a}) || {a} > {b}) ? {a} : {b})", i="({a} > {b} ? {a} : {b})",
                    b="({a} || {b})"), kinds="fiub")
_binary("minimum", numpy.minimum, _min_vjp, nd=_mx("minimum"),
        doc="Elementwise minimum; on ties the gradient goes to the first input.",
        c=c_by_kind(f="((isnan({a}) || {a} < {b}) ? {a} : {b})", i="({a} < {b} ? {a} : {b})",
                    b="({a} && {b})"), kinds="fiub")
_binary("hypot", numpy.hypot,
        lambda c, g: (_red(c, 0, g * c.inputs[0] / c.out), _red(c, 1, g * c.inputs[1] / c.out)),
        nd=_mx("hypot"), doc="sqrt(a**2 + b**2) without overflow.", c="hypot({a}, {b})")


def _atan2_vjp(c, g):
    a, b = c.inputs
    d = a * a + b * b
    return _red(c, 0, g * b / d), _red(c, 1, -g * a / d)


_binary("arctan2", numpy.arctan2, _atan2_vjp, nd=("arctan2",), np=("arctan2", "atan2"),
        doc="Angle of the point (b, a): arctan(a / b) in the right quadrant.",
        c="atan2({a}, {b})")
_binary("logaddexp", numpy.logaddexp,
        lambda c, g: (_red(c, 0, g * F.exp(c.inputs[0] - c.out)),
                      _red(c, 1, g * F.exp(c.inputs[1] - c.out))),
        doc="log(exp(a) + exp(b)) without overflow.",
        # NumPy's npy_logaddexp: equal inputs give a + log(2) (so inf + inf stays inf).
        c=c_expr("(({a} == {b}) ? {a} + ({T})0.6931471805599453 : (({a} > {b}) ? "
                 "{a} + log1p(exp({b} - {a})) : (({a} < {b}) ? {b} + log1p(exp({a} - {b})) "
                 ": {a} - {b})))"))
_binary("copysign", numpy.copysign,
        lambda c, g: (_red(c, 0, g * F.sign(c.inputs[0]) * F.sign(c.out)),
                      _red(c, 1, F.zeros_like(g))),
        doc="|a| with the sign of b.", c="copysign({a}, {b})")

for _name, _uf, _mxn, _c in (
        ("equal", numpy.equal, "broadcast_equal", "({a} == {b})"),
        ("not_equal", numpy.not_equal, "broadcast_not_equal", "({a} != {b})"),
        ("less", numpy.less, "broadcast_lesser", "({a} < {b})"),
        ("less_equal", numpy.less_equal, "broadcast_lesser_equal", "({a} <= {b})"),
        ("greater", numpy.greater, "broadcast_greater", "({a} > {b})"),
        ("greater_equal", numpy.greater_equal, "broadcast_greater_equal", "({a} >= {b})"),
        ("logical_and", numpy.logical_and, "broadcast_logical_and",
         "(({a} != 0) && ({b} != 0))"),
        ("logical_or", numpy.logical_or, "broadcast_logical_or", "(({a} != 0) || ({b} != 0))"),
        ("logical_xor", numpy.logical_xor, "broadcast_logical_xor",
         "(({a} != 0) != ({b} != 0))")):
    _binary(_name, _uf, None, nd=(_name, _mxn), differentiable=False,
            doc=f"Elementwise {_name.replace('_', ' ')} (boolean result, no gradient).",
            c=_c, kinds="fiub")

for _name, _uf, _c in (("bitwise_and", numpy.bitwise_and, "({a} & {b})"),
                       ("bitwise_or", numpy.bitwise_or, "({a} | {b})"),
                       ("bitwise_xor", numpy.bitwise_xor, "({a} ^ {b})")):
    _binary(_name, _uf, None, differentiable=False,
            doc=f"Elementwise {_name.replace('_', ' ')} of integers or booleans.",
            c=_c, kinds="iub")


# --------------------------------------------------------------- where
def _where_cond_shape(cond, x, mx_rows):
    """MXNet's ``where`` (``mx_rows``, core.nd's and core.sym's): a 1-D condition whose
    size is ``x``'s first dimension picks whole rows, i.e. is read as shape
    ``(n, 1, ..., 1)``; otherwise the condition broadcasts (NumPy's rule)."""
    cs, xs = tuple(getattr(cond, "shape", ())), tuple(getattr(x, "shape", ()))
    if mx_rows and len(cs) == 1 and len(xs) > 1 and cs[0] == xs[0] and cs != xs:
        return (xs[0],) + (1,) * (len(xs) - 1)
    return cs


def _where_infer(cond, x, y, mx_rows=False):
    c = Aval(_where_cond_shape(cond, x, mx_rows), cond.dtype)
    return Aval(broadcast("where", c, x, y), result_type("where", x, y))


def _where_vjp(c, g):
    cond = c.inputs[0]
    rows = c.attrs.get("mx_rows", False)
    zero = F.zeros_like(g)
    return (None, _red(c, 1, lambda: F.where(cond, g, zero, mx_rows=rows)),
            _red(c, 2, lambda: F.where(cond, zero, g, mx_rows=rows)))


@defop("where", infer=_where_infer, inputs=("condition", "x", "y"), attrs={"mx_rows": False},
       nd=(("where", {"mx_rows": True}),), np=("where",), vjp=_where_vjp)
def _where(xp, cond, x, y, mx_rows=False):
    """Elements of ``x`` where ``condition`` is true, else of ``y`` (broadcasting); in
    ``core.nd``, a 1-D condition of ``x``'s first-dimension size picks rows, as MXNet's.

    Example:
        >>> from core import nd
        >>> nd.where(nd.array([1, 0]), nd.ones((2, 2)), nd.zeros((2, 2))).asnumpy().tolist()
        [[1.0, 1.0], [0.0, 0.0]]
    """
    cond = xp.asarray(cond)
    if cond.dtype != bool:
        cond = cond != 0
    shape = _where_cond_shape(cond, x, mx_rows)
    if shape != cond.shape:
        cond = cond.reshape(shape)
    return xp.where(cond, x, y)
