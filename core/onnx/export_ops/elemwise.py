"""Elementwise rules: arithmetic and comparisons (arrays or literal scalars), unary math,
activations written as formulas, ``where``, ``clip``, ``cast`` and the ``*_like`` fills."""
from __future__ import annotations

import math

import numpy

from ..export_emit import ExportError, onnx_dtype


# --------------------------------------------------------------------------- helpers
def operand(b, v, dtype) -> str:
    """Tensor name ``v`` or literal ``v`` as a tensor of ``dtype``."""
    if isinstance(v, str):
        return b.cast(v, dtype)
    if v is None:
        raise ExportError("an empty input where an operand is needed")
    if not numpy.isscalar(v) and not (hasattr(v, "shape") and v.shape == ()):
        raise ExportError(f"the literal input {v!r} is not a scalar")
    return b.const(numpy.asarray(v).astype(dtype), "scalar")


def _operand_dtype(b, ins):
    """The common dtype of two operands (arrays, or an array and a Python scalar)."""
    dts = [b.dtype(v) for v in ins if isinstance(v, str)]
    lits = [v for v in ins if not isinstance(v, str)]
    if not dts:
        raise ExportError("no array operand")
    dt = numpy.result_type(*dts)
    for lit in lits:
        if isinstance(lit, float) and dt.kind in "iub":
            dt = numpy.result_type(dt, numpy.float32)
    return dt


def _unary(op_type):
    def rule(b, n, ins, attrs):
        x = b.cast(ins[0], b.out_dtype()) if b.out_dtype().kind == "f" else ins[0]
        return [b.op(op_type, [x])]

    return rule


def _binary(op_type):
    """Arithmetic: both operands in the output's dtype (ONNX needs one type)."""

    def rule(b, n, ins, attrs):
        dt = b.out_dtype()
        if dt == numpy.bool_:  # NumPy's bool arithmetic: computed in int32, then truth
            work = numpy.dtype(numpy.int32)
            y = b.op(op_type, [operand(b, ins[0], work), operand(b, ins[1], work)],
                     dtype=work)
            return [b.cast(y, dt)]
        return [b.op(op_type, [operand(b, ins[0], dt), operand(b, ins[1], dt)])]

    return rule


def _compare(op_type, negate=False):
    def rule(b, n, ins, attrs):
        dt = _operand_dtype(b, ins[:2])
        y = b.op(op_type, [operand(b, ins[0], dt), operand(b, ins[1], dt)], dtype=numpy.bool_)
        if negate:
            y = b.op("Not", [y], dtype=numpy.bool_)
        return [b.cast(y, b.out_dtype())]

    return rule


def _logical(op_type):
    def rule(b, n, ins, attrs):
        args = [operand(b, v, numpy.bool_) if not isinstance(v, str) else _truth(b, v)
                for v in ins[:len(ins) if op_type == "Not" else 2]]
        y = b.op(op_type, args, dtype=numpy.bool_)
        return [b.cast(y, b.out_dtype())]

    return rule


def _truth(b, t: str) -> str:
    """``t != 0`` as bool."""
    if b.dtype(t) == numpy.bool_:
        return t
    zero = b.const(numpy.zeros((), b.dtype(t)), "zero")
    return b.op("Not", [b.op("Equal", [t, zero])], dtype=numpy.bool_)


def _float_in(b, ins, pos=0):
    dt = b.out_dtype()
    return b.cast(ins[pos], dt)


def scalar(b, value, like) -> str:
    """A scalar constant of tensor ``like``'s dtype."""
    return b.const(numpy.asarray(value, dtype=b.dtype(like)), "k")


# --------------------------------------------------------------------------- arithmetic
def _divide(b, n, ins, attrs):
    dt = b.out_dtype()
    return [b.op("Div", [operand(b, ins[0], dt), operand(b, ins[1], dt)])]


def _floor_divide(b, n, ins, attrs):
    dt = b.out_dtype()
    work = dt if dt.kind == "f" else numpy.dtype(numpy.float64)
    q = b.op("Div", [operand(b, ins[0], work), operand(b, ins[1], work)], dtype=work)
    return [b.cast(b.op("Floor", [q], dtype=work), dt)]


def _mod(b, n, ins, attrs):
    """Python's modulo (the sign of the divisor): ``a - floor(a / b) * b`` for floats."""
    dt = b.out_dtype()
    a, c = operand(b, ins[0], dt), operand(b, ins[1], dt)
    if dt.kind in "iu":
        return [b.op("Mod", [a, c], fmod=0)]
    q = b.op("Floor", [b.op("Div", [a, c])])
    return [b.op("Sub", [a, b.op("Mul", [q, c])])]


def _hypot(b, n, ins, attrs):
    dt = b.out_dtype()
    a, c = operand(b, ins[0], dt), operand(b, ins[1], dt)
    return [b.op("Sqrt", [b.op("Add", [b.op("Mul", [a, a]), b.op("Mul", [c, c])])])]


def _power(b, n, ins, attrs):
    dt = b.out_dtype()
    return [b.op("Pow", [operand(b, ins[0], dt), operand(b, ins[1], dt)])]


# --------------------------------------------------------------------------- unary formulas
def _rsqrt(b, n, ins, attrs):
    return [b.op("Reciprocal", [b.op("Sqrt", [_float_in(b, ins)])])]


def _square(b, n, ins, attrs):
    x = b.cast(ins[0], b.out_dtype())
    return [b.op("Mul", [x, x])]


def _cbrt(b, n, ins, attrs):
    x = _float_in(b, ins)
    root = b.op("Pow", [b.op("Abs", [x]), scalar(b, 1.0 / 3.0, x)])
    return [b.op("Mul", [b.op("Sign", [x]), root])]


def _expm1(b, n, ins, attrs):
    x = _float_in(b, ins)
    return [b.op("Sub", [b.op("Exp", [x]), scalar(b, 1.0, x)])]


def _log1p(b, n, ins, attrs):
    x = _float_in(b, ins)
    return [b.op("Log", [b.op("Add", [x, scalar(b, 1.0, x)])])]


def _log_base(base):
    def rule(b, n, ins, attrs):
        x = _float_in(b, ins)
        return [b.op("Div", [b.op("Log", [x]), scalar(b, math.log(base), x)])]

    return rule


def _scale(k):
    def rule(b, n, ins, attrs):
        x = _float_in(b, ins)
        return [b.op("Mul", [x, scalar(b, k, x)])]

    return rule


def _trunc(b, n, ins, attrs):
    x = ins[0]
    if b.dtype(x).kind != "f":
        return [b.op("Identity", [x])]
    return [b.op("Mul", [b.op("Sign", [x]), b.op("Floor", [b.op("Abs", [x])])])]


def _rint(b, n, ins, attrs):
    if b.dtype(ins[0]).kind != "f":
        return [b.op("Identity", [ins[0]])]
    return [b.op("Round", [ins[0]])]


def _round(b, n, ins, attrs):
    if attrs.get("decimals", 0):
        k = 10.0 ** attrs["decimals"]
        x = ins[0]
        y = b.op("Round", [b.op("Mul", [x, scalar(b, k, x)])])
        return [b.op("Div", [y, scalar(b, k, x)])]
    return _rint(b, n, ins, attrs)


def _identity(b, n, ins, attrs):
    return [ins[0]]


def _softplus(b, n, ins, attrs):
    return [b.op("Softplus", [_float_in(b, ins)])]


def _log_sigmoid(b, n, ins, attrs):
    x = _float_in(b, ins)
    return [b.op("Neg", [b.op("Softplus", [b.op("Neg", [x])])])]


def _mish(b, n, ins, attrs):
    x = _float_in(b, ins)
    return [b.op("Mul", [x, b.op("Tanh", [b.op("Softplus", [x])])])]


def _silu(b, n, ins, attrs):
    x = _float_in(b, ins)
    beta = attrs.get("beta", 1.0)
    arg = x if beta == 1.0 else b.op("Mul", [x, scalar(b, beta, x)])
    return [b.op("Mul", [x, b.op("Sigmoid", [arg])])]


def gelu(b, x: str, approximate: bool) -> str:
    """``x * Phi(x)`` (erf), or the tanh approximation."""
    half = scalar(b, 0.5, x)
    one = scalar(b, 1.0, x)
    if approximate:
        cube = b.op("Mul", [b.op("Mul", [x, x]), x])
        inner = b.op("Add", [x, b.op("Mul", [cube, scalar(b, 0.044715, x)])])
        t = b.op("Tanh", [b.op("Mul", [inner, scalar(b, math.sqrt(2.0 / math.pi), x)])])
    else:
        t = b.op("Erf", [b.op("Mul", [x, scalar(b, math.sqrt(0.5), x)])])
    return b.op("Mul", [b.op("Mul", [x, half]), b.op("Add", [t, one])])


def _gelu(b, n, ins, attrs):
    return [gelu(b, _float_in(b, ins), bool(attrs.get("approximate")))]


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _selu(b, n, ins, attrs):
    return [b.op("Selu", [_float_in(b, ins)], alpha=SELU_ALPHA, gamma=SELU_SCALE)]


def _elu(b, n, ins, attrs):
    return [b.op("Elu", [_float_in(b, ins)], alpha=float(attrs.get("alpha", 1.0)))]


def _relu6(b, n, ins, attrs):
    x = ins[0]
    return [b.op("Clip", [x, scalar(b, 0, x), scalar(b, 6, x)])]


def _hard_sigmoid(b, n, ins, attrs):
    return [b.op("HardSigmoid", [_float_in(b, ins)], alpha=float(attrs.get("alpha", 0.2)),
                 beta=float(attrs.get("beta", 0.5)))]


def _hard_swish(b, n, ins, attrs):
    x = _float_in(b, ins)
    return [b.op("Mul", [x, b.op("HardSigmoid", [x], alpha=1.0 / 6.0, beta=0.5)])]


def _softsign(b, n, ins, attrs):
    return [b.op("Softsign", [_float_in(b, ins)])]


def _sign(b, n, ins, attrs):
    return [b.op("Sign", [ins[0]])]


def _abs(b, n, ins, attrs):
    return [b.op("Abs", [ins[0]])]


def _negative(b, n, ins, attrs):
    return [b.op("Neg", [ins[0]])]


def _isfinite(b, n, ins, attrs):
    x = ins[0]
    bad = b.op("Or", [b.op("IsNaN", [x]), b.op("IsInf", [x])], dtype=numpy.bool_)
    return [b.cast(b.op("Not", [bad], dtype=numpy.bool_), b.out_dtype())]


def _is(op_type):
    def rule(b, n, ins, attrs):
        return [b.cast(b.op(op_type, [ins[0]], dtype=numpy.bool_), b.out_dtype())]

    return rule


# --------------------------------------------------------------------------- selection
def _where(b, n, ins, attrs):
    cond = _truth(b, ins[0]) if isinstance(ins[0], str) else operand(b, bool(ins[0]),
                                                                      numpy.bool_)
    if attrs.get("mx_rows") and isinstance(ins[0], str):
        rank = len(b.out_shape())
        if len(b.in_shape(0)) == 1 and rank > 1:
            cond = b.unsqueeze(cond, list(range(1, rank)))
    dt = b.out_dtype()
    return [b.op("Where", [cond, operand(b, ins[1], dt), operand(b, ins[2], dt)])]


def _clip(b, n, ins, attrs):
    x = ins[0]
    lo, hi = attrs.get("a_min"), attrs.get("a_max")
    lo_t = "" if lo is None else scalar(b, lo, x)
    hi_t = "" if hi is None else scalar(b, hi, x)
    return [b.op("Clip", [x, lo_t, hi_t])]


def _cast(b, n, ins, attrs):
    dt = b.out_dtype()
    return [b.op("Cast", [ins[0]], to=onnx_dtype(dt))]


def _fill_like(value):
    def rule(b, n, ins, attrs):
        dt = b.out_dtype()
        from onnx import numpy_helper

        tensor = numpy_helper.from_array(numpy.full((1,), value, dtype=dt), "value")
        return [b.op("ConstantOfShape", [b.shape_of(ins[0])], value=tensor)]

    return rule


def _copy(b, n, ins, attrs):
    return [b.op("Identity", [ins[0]])]


RULES = {
    "add": _binary("Add"), "subtract": _binary("Sub"), "multiply": _binary("Mul"),
    "divide": _divide, "floor_divide": _floor_divide, "mod": _mod, "power": _power,
    "maximum": _binary("Max"), "minimum": _binary("Min"), "hypot": _hypot,
    "equal": _compare("Equal"), "not_equal": _compare("Equal", negate=True),
    "greater": _compare("Greater"), "greater_equal": _compare("GreaterOrEqual"),
    "less": _compare("Less"), "less_equal": _compare("LessOrEqual"),
    "logical_and": _logical("And"), "logical_or": _logical("Or"),
    "logical_xor": _logical("Xor"), "logical_not": _logical("Not"),
    "abs": _abs, "negative": _negative, "sign": _sign,
    "exp": _unary("Exp"), "log": _unary("Log"), "sqrt": _unary("Sqrt"),
    "reciprocal": _unary("Reciprocal"), "sin": _unary("Sin"), "cos": _unary("Cos"),
    "tan": _unary("Tan"), "arcsin": _unary("Asin"), "arccos": _unary("Acos"),
    "arctan": _unary("Atan"), "sinh": _unary("Sinh"), "cosh": _unary("Cosh"),
    "tanh": _unary("Tanh"), "arcsinh": _unary("Asinh"), "arccosh": _unary("Acosh"),
    "arctanh": _unary("Atanh"), "sigmoid": _unary("Sigmoid"), "relu": _unary("Relu"),
    "erf": _unary("Erf"), "floor": _unary("Floor"), "ceil": _unary("Ceil"),
    "rsqrt": _rsqrt, "square": _square, "cbrt": _cbrt, "expm1": _expm1, "log1p": _log1p,
    "log2": _log_base(2.0), "log10": _log_base(10.0),
    "degrees": _scale(180.0 / math.pi), "radians": _scale(math.pi / 180.0),
    "trunc": _trunc, "fix": _trunc, "rint": _rint, "round": _round,
    "softplus": _softplus, "log_sigmoid": _log_sigmoid, "mish": _mish, "silu": _silu,
    "gelu": _gelu, "selu": _selu, "elu": _elu, "relu6": _relu6,
    "hard_sigmoid": _hard_sigmoid, "hard_swish": _hard_swish, "softsign": _softsign,
    "isnan": _is("IsNaN"), "isinf": _is("IsInf"), "isfinite": _isfinite,
    "where": _where, "clip": _clip, "cast": _cast,
    "zeros_like": _fill_like(0), "ones_like": _fill_like(1),
    "copy": _copy, "BlockGrad": _identity,
}
