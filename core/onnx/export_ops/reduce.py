"""Reductions: sum/mean/max/min/prod (MXNet's ``exclude``), norm, argmax/argmin."""
from __future__ import annotations

import numpy

from ..export_emit import ExportError


def axes_of(attrs, ndim: int, mx_empty_all: bool = True):
    """The reduced axes (sorted, non-negative), None for all of them."""
    axis = attrs.get("axis")
    exclude = bool(attrs.get("exclude"))
    if axis is None:
        return None
    if isinstance(axis, (int, numpy.integer)):
        axis = (int(axis),)
    axis = tuple(int(a) for a in axis)
    if not axis:
        if exclude:
            return ()
        return None if mx_empty_all else ()
    for a in axis:
        if not -ndim <= a < ndim:
            raise ExportError(f"axis {a} is out of range for a {ndim}-D input")
    axis = tuple(sorted({a % ndim for a in axis}))
    if exclude:
        axis = tuple(a for a in range(ndim) if a not in axis)
    return axis


def _reduce(op_type):
    def rule(b, n, ins, attrs):
        x = ins[0]
        ndim = len(b.in_shape(0))
        axes = axes_of(attrs, ndim, mx_empty_all=bool(attrs.get("_mx")))
        dt = b.out_dtype()
        if op_type in ("ReduceSum", "ReduceMean", "ReduceProd") or dt.kind == "f":
            x = b.cast(x, dt)
        if axes == ():
            return [b.op("Identity", [x])]
        if ndim == 0:
            return [b.op("Identity", [x])]
        y = b.reduce(op_type, x, axes, attrs.get("keepdims", False))
        if axes is None and not attrs.get("keepdims") and b.out_shape() == (1,):
            y = b.reshape(y, [1])  # MXNet's full reductions give shape (1,)
        return [b.cast(y, dt)]

    return rule


def _norm(b, n, ins, attrs):
    ord_ = attrs.get("ord", 2)
    if ord_ not in (1, 2):
        raise ExportError(f"norm: ord={ord_!r} (ONNX has the 1- and 2-norms)")
    x = b.cast(ins[0], b.out_dtype()) if b.out_dtype().kind == "f" else ins[0]
    axes = axes_of(attrs, len(b.in_shape(0)))
    y = b.reduce("ReduceL2" if ord_ == 2 else "ReduceL1", x, axes, attrs.get("keepdims", False))
    if len(b.out_shape()) != len(b.in_shape(0)) and axes is None and b.out_shape() == (1,):
        y = b.reshape(y, [1])
    return [b.cast(y, b.out_dtype())]


def _arg(op_type):
    def rule(b, n, ins, attrs):
        x = ins[0]
        axis = attrs.get("axis")
        keep = int(bool(attrs.get("keepdims")))
        if axis is None:
            y = b.op(op_type, [b.reshape(x, [-1])], axis=0, keepdims=keep)
            if b.out_shape() != ():
                y = b.reshape(y, list(b.out_shape()))
        else:
            y = b.op(op_type, [x], axis=int(axis), keepdims=keep)
        b.dtypes[y] = numpy.dtype(numpy.int64)
        return [b.cast(y, b.out_dtype())]

    return rule


def _logsumexp(b, n, ins, attrs):
    x = b.cast(ins[0], b.out_dtype())
    axes = axes_of(attrs, len(b.in_shape(0)), mx_empty_all=False)
    if axes == ():
        return [b.op("Identity", [x])]
    return [b.reduce("ReduceLogSumExp", x, axes, attrs.get("keepdims", False))]


RULES = {
    "sum": _reduce("ReduceSum"), "mean": _reduce("ReduceMean"), "max": _reduce("ReduceMax"),
    "min": _reduce("ReduceMin"), "prod": _reduce("ReduceProd"), "norm": _norm,
    "argmax": _arg("ArgMax"), "argmin": _arg("ArgMin"), "logsumexp": _logsumexp,
}
