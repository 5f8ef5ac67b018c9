"""Further rules: ``add_n``, ``broadcast_axis``, ``cumsum``, ``shape_array``/``size_array``,
``pick``, ``smooth_l1``, ``topk``/``sort``/``argsort``."""
from __future__ import annotations

import numpy

from ..export_emit import ExportError


def _add_n(b, n, ins, attrs):
    dt = b.out_dtype()
    data = [b.cast(t, dt) for t in ins if isinstance(t, str)]
    return [b.op("Sum", data) if len(data) > 1 else b.op("Identity", data)]


def _broadcast_axis(b, n, ins, attrs):
    out, dyn = b.out_shape(), b.out_dynamic()
    # Expand's target: the new sizes on the broadcast axes, 1 (keep) elsewhere
    axes = attrs.get("axis", ())
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    axes = {int(a) % len(out) for a in axes}
    shape = [d if i in axes and not dyn[i] else 1 for i, d in enumerate(out)]
    return [b.op("Expand", [ins[0], b.ints(shape, "shape")])]


def _cumsum(b, n, ins, attrs):
    x = b.cast(ins[0], b.out_dtype())
    axis = attrs.get("axis")
    if axis is None:
        x = b.reshape(x, [-1])
        axis = 0
    return [b.op("CumSum", [x, b.const(numpy.int64(axis), "axis")])]


def _shape_array(b, n, ins, attrs):
    return [b.cast(b.shape_of(ins[0]), b.out_dtype())]


def _size_array(b, n, ins, attrs):
    size = b.op("Size", [ins[0]], dtype=numpy.int64)
    return [b.cast(b.reshape(size, [1]), b.out_dtype())]


def _pick(b, n, ins, attrs):
    shape = b.in_shape(0)
    axis = int(attrs.get("axis", -1)) % len(shape)
    idx = b.cast(ins[1], numpy.int64)
    mode = attrs.get("mode", "clip")
    if mode == "clip":
        idx = b.op("Clip", [idx, b.const(numpy.int64(0), "lo"),
                            b.const(numpy.int64(shape[axis] - 1), "hi")])
    else:
        idx = b.op("Mod", [idx, b.const(numpy.int64(shape[axis]), "size")], fmod=0)
    y = b.op("GatherElements", [ins[0], b.unsqueeze(idx, [axis])], axis=axis)
    return [y if attrs.get("keepdims") else b.squeeze(y, [axis])]


def _smooth_l1(b, n, ins, attrs):
    """``0.5 (s x)^2`` where ``|x| < 1 / s^2``, else ``|x| - 0.5 / s^2`` (MXNet's)."""
    x = ins[0]
    s2 = float(attrs.get("scalar", 1.0)) ** 2
    dt = b.dtype(x)

    def k(v):
        return b.const(numpy.asarray(v, dtype=dt), "k")

    ax = b.op("Abs", [x])
    small = b.op("Less", [ax, k(1.0 / s2)], dtype=numpy.bool_)
    quad = b.op("Mul", [b.op("Mul", [x, x]), k(0.5 * s2)])
    lin = b.op("Sub", [ax, k(0.5 / s2)])
    return [b.op("Where", [small, quad, lin])]


def _topk_like(b, x, axis, k, largest):
    vals, idx = b.op("TopK", [x, b.ints([k], "k")], n_out=2, axis=axis, largest=int(largest),
                     sorted=1)
    b.dtypes[idx] = numpy.dtype(numpy.int64)
    return vals, idx


def _topk(b, n, ins, attrs):
    shape = b.in_shape(0)
    axis = attrs.get("axis", -1)
    if axis is None:
        raise ExportError("topk: axis=None")
    axis = int(axis) % len(shape)
    k = int(attrs.get("k", 1))
    k = shape[axis] if k < 1 else k
    vals, idx = _topk_like(b, ins[0], axis, k, not attrs.get("is_ascend"))
    ret = attrs.get("ret_typ", "indices")
    idx_out = b.cast(idx, numpy.dtype(attrs.get("dtype", "float32")))
    if ret == "value":
        return [vals]
    if ret == "indices":
        return [idx_out]
    if ret == "both":
        return [vals, idx_out]
    raise ExportError(f"topk: ret_typ {ret!r}")


def _sort(want_indices):
    def rule(b, n, ins, attrs):
        shape = b.in_shape(0)
        if b.in_dynamic(0)[int(attrs.get("axis", -1)) % len(shape)]:
            raise ExportError("sorting along a dynamic axis")
        axis = int(attrs.get("axis", -1)) % len(shape)
        vals, idx = _topk_like(b, ins[0], axis, shape[axis], not attrs.get("is_ascend", True))
        return [b.cast(idx, b.out_dtype()) if want_indices else vals]

    return rule


RULES = {"add_n": _add_n, "broadcast_axis": _broadcast_axis, "cumsum": _cumsum,
         "shape_array": _shape_array, "size_array": _size_array, "pick": _pick,
         "smooth_l1": _smooth_l1, "topk": _topk, "sort": _sort(False),
         "argsort": _sort(True)}
