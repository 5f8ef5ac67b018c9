"""Normalization rules (inference): BatchNorm with the moving statistics, LayerNorm,
InstanceNorm, GroupNorm, L2Normalization, LRN."""
from __future__ import annotations

import numpy

from ..export_emit import ExportError


def _ones_like_param(b, t: str) -> str:
    v = b.value(t)
    if v is not None:
        return b.const(numpy.ones_like(v), "ones")
    return b.op("Add", [b.op("Mul", [t, b.const(numpy.zeros((), b.dtype(t)), "zero")]),
                        b.const(numpy.ones((), b.dtype(t)), "one")])


def _batch_norm(b, n, ins, attrs):
    if attrs.get("training") is True and not attrs.get("use_global_stats"):
        raise ExportError("BatchNorm with training fixed to True (batch statistics)")
    x, gamma, beta, mean, var = ins[:5]
    nd = len(b.in_shape(0))
    axis = int(attrs.get("axis", 1)) % nd
    if attrs.get("fix_gamma", True):
        gamma = _ones_like_param(b, gamma)
    dt = b.dtype(x)
    gamma, beta, mean, var = (b.cast(t, dt) for t in (gamma, beta, mean, var))
    if nd == 1:
        raise ExportError("BatchNorm of a 1-D input")
    if axis != 1:
        perm = list(range(nd))
        perm.pop(axis)
        perm.insert(1, axis)
        x = b.transpose(x, perm)
    y = b.op("BatchNormalization", [x, gamma, beta, mean, var],
             epsilon=float(attrs.get("eps", 1e-3)), momentum=float(attrs.get("momentum", 0.9)))
    if axis != 1:
        y = b.transpose(y, list(numpy.argsort(perm)))
    return [y, ins[3], ins[4], None, None][:n.num_outputs]


def _moments(b, x, axes):
    mean = b.reduce("ReduceMean", x, axes, True)
    d = b.op("Sub", [x, mean])
    var = b.reduce("ReduceMean", b.op("Mul", [d, d]), axes, True)
    return d, mean, var


def _normalize(b, x, axes, eps):
    d, mean, var = _moments(b, x, axes)
    e = b.const(numpy.asarray(eps, dtype=b.dtype(x)), "eps")
    std = b.op("Sqrt", [b.op("Add", [var, e])])
    return b.op("Div", [d, std]), mean, std


def _layer_norm(b, n, ins, attrs):
    x, gamma, beta = ins[:3]
    nd = len(b.in_shape(0))
    axis = int(attrs.get("axis", -1)) % nd
    eps = float(attrs.get("eps", 1e-5))
    if axis == nd - 1 and b.opset >= 17:
        y = b.op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=eps)
        return [y] + [None] * (n.num_outputs - 1)
    y, mean, std = _normalize(b, x, [axis], eps)
    shape = [1] * nd
    shape[axis] = -1
    y = b.op("Add", [b.op("Mul", [y, b.reshape(gamma, shape)]), b.reshape(beta, shape)])
    return [y, mean, std][:n.num_outputs]


def _instance_norm(b, n, ins, attrs):
    x, gamma, beta = ins[:3]
    return [b.op("InstanceNormalization", [x, gamma, beta],
                 epsilon=float(attrs.get("eps", 1e-3)))] + [None] * (n.num_outputs - 1)


def _group_norm(b, n, ins, attrs):
    x, gamma, beta = ins[:3]
    shape = b.in_shape(0)
    nd = len(shape)
    g = int(attrs.get("num_groups", 1))
    grouped = b.reshape(x, [0, g, -1])
    y, _, _ = _normalize(b, grouped, [2], float(attrs.get("eps", 1e-5)))
    y = b.op("Reshape", [y, b.shape_of(x)])
    bshape = [1, -1] + [1] * (nd - 2)
    y = b.op("Add", [b.op("Mul", [y, b.reshape(gamma, bshape)]), b.reshape(beta, bshape)])
    return [y] + [None] * (n.num_outputs - 1)


def _l2_normalization(b, n, ins, attrs):
    x = ins[0]
    nd = len(b.in_shape(0))
    mode = attrs.get("mode", "instance")
    axes = {"instance": list(range(1, nd)), "channel": [1],
            "spatial": list(range(2, nd))}.get(mode)
    if axes is None:
        raise ExportError(f"L2Normalization: mode {mode!r}")
    ss = b.reduce("ReduceSum", b.op("Mul", [x, x]), axes, True)
    e = b.const(numpy.asarray(attrs.get("eps", 1e-10), dtype=b.dtype(x)), "eps")
    return [b.op("Div", [x, b.op("Sqrt", [b.op("Add", [ss, e])])])]


def _lrn(b, n, ins, attrs):
    return [b.op("LRN", [ins[0]], alpha=float(attrs.get("alpha", 1e-4)),
                 beta=float(attrs.get("beta", 0.75)), bias=float(attrs.get("knorm", 2.0)),
                 size=int(attrs["nsize"]))] + [None] * (n.num_outputs - 1)


RULES = {"BatchNorm": _batch_norm, "_layer_norm": _layer_norm,
         "_instance_norm": _instance_norm, "_group_norm": _group_norm,
         "L2Normalization": _l2_normalization, "LRN": _lrn}
