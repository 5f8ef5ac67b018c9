"""ONNX import rules: elementwise math, activations, softmax, reductions, comparisons."""
from __future__ import annotations

import numpy

from .. import sym
from ..ops.registry import REGISTRY
from ..symbol.constructors import compose

_BINARY = {"Add": "broadcast_add", "Sub": "broadcast_sub", "Mul": "broadcast_mul",
           "Div": "broadcast_div", "Pow": "broadcast_power", "Equal": "broadcast_equal",
           "Greater": "broadcast_greater", "Less": "broadcast_lesser",
           "GreaterOrEqual": "broadcast_greater_equal", "LessOrEqual": "broadcast_lesser_equal",
           "And": "broadcast_logical_and", "Or": "broadcast_logical_or",
           "Xor": "broadcast_logical_xor"}
# Python operators of Symbol for a scalar right operand (the constant stays in the graph)
_SCALAR = {"Add": lambda a, c: a + c, "Sub": lambda a, c: a - c, "Mul": lambda a, c: a * c,
           "Div": lambda a, c: a / c, "Pow": lambda a, c: a ** c}
_UNARY = {"Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Exp": "exp", "Log": "log",
          "Sqrt": "sqrt", "Abs": "abs", "Neg": "negative", "Reciprocal": "reciprocal",
          "Floor": "floor", "Ceil": "ceil", "Erf": "erf", "Sin": "sin", "Cos": "cos",
          "Tan": "tan", "Asin": "arcsin", "Acos": "arccos", "Atan": "arctan", "Sinh": "sinh",
          "Cosh": "cosh", "Asinh": "arcsinh", "Acosh": "arccosh", "Atanh": "arctanh",
          "Sign": "sign", "Round": "rint", "Softsign": "softsign", "Not": "logical_not",
          "IsNaN": "isnan", "HardSwish": "hard_swish", "Mish": "mish"}


def _scalar(ctx, node, i: int, other: int):
    """Input ``i`` as a Python float when it is a one-element float constant that does not
    widen the other operand's rank; otherwise ``None``."""
    v = ctx.const(node.input[i])
    if v is None or v.size != 1 or v.dtype.kind != "f":
        return None
    shape = ctx.shape(node.input[other])
    if v.ndim and (shape is None or v.ndim > len(shape)):
        return None
    return float(v.reshape(()))


def _binary(ctx, node, a):
    name = ctx.node_name(node)
    c = _scalar(ctx, node, 1, 0) if node.op_type in _SCALAR else None
    if c is not None:
        return _SCALAR[node.op_type](ctx.sym(node.input[0]), c)
    x, y = ctx.inputs(node)
    return getattr(sym, _BINARY[node.op_type])(x, y, name=name)


def _unary(ctx, node, a):
    return getattr(sym, _UNARY[node.op_type])(ctx.sym(node.input[0]), name=ctx.node_name(node))


def _variadic(ctx, node, a):
    op = {"Sum": "broadcast_add", "Mean": "broadcast_add", "Max": "broadcast_maximum",
          "Min": "broadcast_minimum"}[node.op_type]
    xs = ctx.inputs(node)
    out = xs[0]
    for x in xs[1:]:
        out = getattr(sym, op)(out, x)
    if node.op_type == "Mean" and len(xs) > 1:
        out = out / float(len(xs))
    return out


def _leaky(ctx, node, a):
    return sym.LeakyReLU(ctx.sym(node.input[0]), act_type="leaky", slope=a.get("alpha", 0.01),
                         name=ctx.node_name(node))


def _prelu(ctx, node, a):
    # x for x > 0, slope * x otherwise, with ONNX's broadcasting of slope to x
    x, slope = ctx.inputs(node)
    return sym.broadcast_add(sym.relu(x), sym.broadcast_mul(sym.broadcast_minimum(x * 0.0, x),
                                                            slope), name=ctx.node_name(node))


def _elu(ctx, node, a):
    return sym.LeakyReLU(ctx.sym(node.input[0]), act_type="elu", slope=a.get("alpha", 1.0),
                         name=ctx.node_name(node))


_SELU_ALPHA, _SELU_GAMMA = 1.67326319217681884765625, 1.05070102214813232421875


def _selu(ctx, node, a):
    x = ctx.sym(node.input[0])
    alpha, gamma = a.get("alpha", _SELU_ALPHA), a.get("gamma", _SELU_GAMMA)
    if numpy.isclose(alpha, _SELU_ALPHA) and numpy.isclose(gamma, _SELU_GAMMA):
        return sym.LeakyReLU(x, act_type="selu", name=ctx.node_name(node))
    neg = (sym.exp(sym.broadcast_minimum(x * 0.0, x)) - 1.0) * alpha
    return (sym.relu(x) + neg) * gamma


def _celu(ctx, node, a):
    # max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    x, alpha = ctx.sym(node.input[0]), a.get("alpha", 1.0)
    neg = (sym.exp(sym.broadcast_minimum(x * 0.0, x) / alpha) - 1.0) * alpha
    return sym.broadcast_add(sym.relu(x), neg, name=ctx.node_name(node))


def _thresholded_relu(ctx, node, a):
    x = ctx.sym(node.input[0])
    keep = sym.cast(x > a.get("alpha", 1.0), dtype="float32")
    return sym.broadcast_mul(x, keep, name=ctx.node_name(node))


def _hard_sigmoid(ctx, node, a):
    return sym.hard_sigmoid(ctx.sym(node.input[0]), alpha=a.get("alpha", 0.2),
                            beta=a.get("beta", 0.5), name=ctx.node_name(node))


def _softplus(ctx, node, a):
    return sym.Activation(ctx.sym(node.input[0]), act_type="softrelu", name=ctx.node_name(node))


def _gelu(ctx, node, a):
    approx = a.get("approximate", "none")
    if approx not in ("none", "tanh"):
        raise ctx.error(node, f"has approximate={approx!r}; ONNX allows 'none' or 'tanh'")
    return sym.gelu(ctx.sym(node.input[0]), approximate=approx == "tanh",
                    name=ctx.node_name(node))


def _clip(ctx, node, a):
    x = ctx.sym(node.input[0])
    if ctx.opset < 11:
        lo, hi = a.get("min"), a.get("max")
    else:
        lo = hi = None
        for i, slot in ((1, "min"), (2, "max")):
            if not ctx.has(node, i):
                continue
            v = ctx.const(node.input[i])
            if v is None:  # a computed bound: clip with broadcast ops
                b = ctx.sym(node.input[i])
                x = sym.broadcast_maximum(x, b) if slot == "min" else sym.broadcast_minimum(x, b)
            elif slot == "min":
                lo = float(v.reshape(()))
            else:
                hi = float(v.reshape(()))
    if lo is None and hi is None:
        return sym.identity(x, name=ctx.node_name(node))
    return sym.clip(x, a_min=-numpy.inf if lo is None else lo,
                    a_max=numpy.inf if hi is None else hi, name=ctx.node_name(node))


def _coerce_2d(x, axis: int):
    """ONNX's opset < 13 softmax input: dimensions [:axis] and [axis:] each made one."""
    if axis == 0:
        return sym.reshape(x, shape=(1, -1))
    for _ in range(axis - 1):
        x = sym.reshape(x, shape=(-3, -2))
    return sym.reshape(x, shape=(0, -1))


def _softmax(ctx, node, a):
    fn = {"Softmax": sym.softmax, "LogSoftmax": sym.log_softmax}[node.op_type]
    x = ctx.sym(node.input[0])
    name = ctx.node_name(node)
    if ctx.opset >= 13:
        return fn(x, axis=a.get("axis", -1), name=name)
    rank = ctx.rank(node, 0)
    axis = a.get("axis", 1)
    axis = axis + rank if axis < 0 else axis
    if axis == rank - 1:
        return fn(x, axis=-1, name=name)
    return sym.reshape_like(fn(_coerce_2d(x, axis), axis=-1), x, name=name)


def _reduce_axes(ctx, node, a, first_input_opset: int):
    if ctx.opset >= first_input_opset:
        axes = ctx.input_const(node, 1, "axes", required=False)
        axes = None if axes is None else tuple(int(v) for v in axes.reshape(-1))
    else:
        axes = a.get("axes")
    if not axes:
        return None if not a.get("noop_with_empty_axes", 0) else ()
    return tuple(axes)


_REDUCE = {"ReduceSum": ("sum", 13), "ReduceMean": ("mean", 18), "ReduceMax": ("max", 18),
           "ReduceMin": ("min", 18), "ReduceProd": ("prod", 18),
           "ReduceL2": ("norm", 18), "ReduceLogSumExp": ("logsumexp", 18),
           "ReduceL1": ("l1", 18), "ReduceSumSquare": ("sumsq", 18)}


def _reduce(ctx, node, a):
    op, since = _REDUCE[node.op_type]
    x = ctx.sym(node.input[0])
    axes = _reduce_axes(ctx, node, a, since)
    if axes == ():
        return sym.identity(x, name=ctx.node_name(node))
    keep = bool(a.get("keepdims", 1))
    if op == "norm":
        return sym.sqrt(sym.sum(sym.square(x), axis=axes, keepdims=keep), name=ctx.node_name(node))
    if op == "l1":
        return sym.sum(sym.abs(x), axis=axes, keepdims=keep, name=ctx.node_name(node))
    if op == "sumsq":
        return sym.sum(sym.square(x), axis=axes, keepdims=keep, name=ctx.node_name(node))
    if op == "logsumexp":
        return sym.log(sym.sum(sym.exp(x), axis=axes, keepdims=keep), name=ctx.node_name(node))
    return getattr(sym, op)(x, axis=axes, keepdims=keep, name=ctx.node_name(node))


def _arg(ctx, node, a):
    if a.get("select_last_index", 0):
        raise ctx.error(node, "has select_last_index=1; only the first index of ties "
                        "(select_last_index=0) is translated")
    fn = sym.argmax if node.op_type == "ArgMax" else sym.argmin
    return sym.cast(fn(ctx.sym(node.input[0]), axis=a.get("axis", 0),
                       keepdims=bool(a.get("keepdims", 1))), dtype="int64",
                    name=ctx.node_name(node))


def _cast(ctx, node, a):
    from onnx import helper

    to = a.get("to")
    try:
        dtype = numpy.dtype(helper.tensor_dtype_to_np_dtype(to))
    except Exception as e:
        raise ctx.error(node, f"casts to ONNX type {to}, which has no array dtype here") from e
    return sym.cast(ctx.sym(node.input[0]), dtype=str(dtype), name=ctx.node_name(node))


def _einsum(ctx, node, a):
    eq = a["equation"].replace(" ", "")
    return compose(REGISTRY["einsum"], ctx.inputs(node), {"subscripts": eq, "optimize": False},
                   name=ctx.node_name(node))


def _mod(ctx, node, a):
    if a.get("fmod", 0):
        raise ctx.error(node, "has fmod=1 (C's fmod, the dividend's sign); only fmod=0 "
                        "(the divisor's sign, Python's %) is translated")
    return compose(REGISTRY["mod"], ctx.inputs(node), {}, name=ctx.node_name(node))


def _where(ctx, node, a):
    c, x, y = ctx.inputs(node)
    return sym.where(c, x, y, name=ctx.node_name(node))


RULES = {**{k: _binary for k in _BINARY}, **{k: _unary for k in _UNARY},
         **{k: _variadic for k in ("Sum", "Mean", "Max", "Min")},
         **{k: _reduce for k in _REDUCE},
         "Celu": _celu, "ThresholdedRelu": _thresholded_relu, "LeakyRelu": _leaky, "PRelu": _prelu, "Elu": _elu, "Selu": _selu,
         "HardSigmoid": _hard_sigmoid, "Softplus": _softplus, "Gelu": _gelu, "Clip": _clip,
         "Softmax": _softmax, "LogSoftmax": _softmax, "ArgMax": _arg, "ArgMin": _arg,
         "Cast": _cast, "Where": _where, "Einsum": _einsum, "Mod": _mod}
