"""The dense layer: MXNet's ``FullyConnected``.

``weight`` has shape ``(num_hidden, in_units)`` as in MXNet. With ``flatten=True``
(the default) every axis after the first is collapsed into ``in_units``; with
``flatten=False`` the product applies to the last axis and the leading axes are kept.

This is the MLP hot path: the forward is one BLAS call on transposed views (``x @ W.T``
without copying ``W``) plus the bias added in place; the VJP is two products and a sum,
each a single operator call, and it skips the products whose inputs want no gradient
(the data of the first layer).
"""
from __future__ import annotations

import math

import numpy

from ...dtypes import is_float
from ..infer import fmt
from ..param_shapes import ParamShapes
from ..registry import Aval, F, defop


def _in_shape(shape, flatten):
    """The 2-D shape the product sees: (rows, in_units)."""
    if flatten:
        return (shape[0], math.prod(shape[1:]))
    return (math.prod(shape[:-1]), shape[-1])


def _out_shape(shape, flatten, num_hidden):
    if flatten:
        return (shape[0], num_hidden)
    return tuple(shape[:-1]) + (num_hidden,)


def _fc_infer(data, weight, bias=None, num_hidden=None, no_bias=False, flatten=True):
    avals = [data, weight] + ([bias] if bias is not None else [])
    for a in avals:
        if not is_float(a.dtype):
            raise TypeError(f"FullyConnected: expects floating-point inputs, got {fmt(avals)}; "
                            "cast with .astype('float32')")
    if data.ndim < 1:
        raise ValueError(f"FullyConnected: data must have at least 1 dimension, got "
                         f"{fmt(avals)}")
    in_units = _in_shape(data.shape, flatten)[1]
    nh = weight.shape[0] if weight.ndim == 2 else None
    if num_hidden is not None and nh is not None and int(num_hidden) != nh:
        raise ValueError(f"FullyConnected: weight has {nh} rows but num_hidden={num_hidden} "
                         f"(data, weight{', bias' if bias is not None else ''}: {fmt(avals)})")
    if weight.ndim != 2 or weight.shape[1] != in_units:
        raise ValueError(
            f"FullyConnected: weight must have shape (num_hidden, {in_units}) for data of shape "
            f"{data.shape} with flatten={flatten}, got {weight.shape} (data, weight"
            f"{', bias' if bias is not None else ''}: {fmt(avals)})")
    if bias is not None and not no_bias and bias.shape != (nh,):
        raise ValueError(f"FullyConnected: bias must have shape ({nh},), got {bias.shape} "
                         f"(data, weight, bias: {fmt(avals)})")
    dt = numpy.result_type(*[a.dtype for a in (avals if not no_bias else avals[:2])])
    return Aval(_out_shape(data.shape, flatten, nh), dt)


def _wanted(node):
    """The input dtypes that want a gradient (float inputs attached to the graph), else None."""
    return [m[1] if p is not None and m is not None and is_float(m[1]) else None
            for p, m in zip(node.parents, node.in_meta)]


def _fc_vjp(c, g):
    node = c.node
    data, weight = c.inputs[0], c.inputs[1]
    dts = _wanted(node)
    at = node.attrs
    shape = node.in_meta[0][0]
    rows, in_units = _in_shape(shape, at["flatten"])
    nh = node.in_meta[1][0][0]
    g2 = g if g.ndim == 2 else F.reshape(g, newshape=(rows, nh), mx_codes=False)
    gx = gw = gb = None
    if dts[0] is not None:
        gx = F.dot(g2, weight)
        if tuple(shape) != (rows, in_units):
            gx = F.reshape(gx, newshape=shape, mx_codes=False)
        if gx.dtype != dts[0]:
            gx = F.cast(gx, dtype=dts[0])
    if dts[1] is not None:
        x2 = data if data.ndim == 2 else F.reshape(data, newshape=(rows, in_units),
                                                     mx_codes=False)
        gw = F.dot(g2, x2, transpose_a=True)
        if gw.dtype != dts[1]:
            gw = F.cast(gw, dtype=dts[1])
    if len(dts) > 2 and dts[2] is not None and not at["no_bias"]:
        gb = F.sum(g2, axis=0)
        if gb.dtype != dts[2]:
            gb = F.cast(gb, dtype=dts[2])
    return (gx, gw) + ((gb,) if len(dts) > 2 else ())


def _fc_params(shape, a, n_in):
    """weight (num_hidden, in_units) and bias (num_hidden,) from the data's shape."""
    nh = a.get("num_hidden")
    if nh is None or shape == ():
        return {}
    if shape is None:
        units = None
    elif a.get("flatten", True):
        rest = shape[1:]
        units = math.prod(rest) if all(d is not None for d in rest) else None
    else:
        units = shape[-1]
    out = {1: (int(nh), units)}
    if not a.get("no_bias"):
        out[2] = (int(nh),)
    return out


@defop("FullyConnected", save="inputs",
       infer=_fc_infer, vjp=_fc_vjp, inputs=("data", "weight", "bias?"),
       attrs={"num_hidden": None, "no_bias": False, "flatten": True},
       nd=("FullyConnected",), param_shapes=ParamShapes(_fc_params, (1, 2)),
       optional_inputs={"bias": lambda a: not a.get("no_bias")})
def _fully_connected(xp, data, weight, bias=None, num_hidden=None, no_bias=False, flatten=True):
    """``data @ weight.T + bias`` (MXNet's FullyConnected; ``weight`` is (num_hidden, in_units)).

    Example:
        >>> from core import nd
        >>> x = nd.ones((2, 3)); w = nd.ones((4, 3)); b = nd.arange(4)
        >>> nd.FullyConnected(x, w, b, num_hidden=4).asnumpy().tolist()
        [[3.0, 4.0, 5.0, 6.0], [3.0, 4.0, 5.0, 6.0]]
    """
    if not (is_float(data.dtype) and is_float(weight.dtype)):
        raise TypeError("dtype")  # infer explains
    x = data if data.ndim == 2 else data.reshape(_in_shape(data.shape, flatten))
    if num_hidden is not None and int(num_hidden) != weight.shape[0]:
        raise ValueError("num_hidden")  # infer explains
    out = xp.dot(x, weight.T)  # BLAS reads the transposed view; no copy of the weight
    if bias is not None and not no_bias:
        if bias.shape != (weight.shape[0],):
            raise ValueError("bias")  # infer explains
        if out.dtype != bias.dtype and numpy.result_type(out.dtype, bias.dtype) != out.dtype:
            out = out.astype(numpy.result_type(out.dtype, bias.dtype))
        out += bias
    if data.ndim != 2:
        out = out.reshape(_out_shape(data.shape, flatten, weight.shape[0]))
    return out
