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


# --------------------------------------------------------------------------- sequences
def _time_steps(b, x: str, axis: int) -> str:
    """``[0, 1, ..., T - 1]`` (int64) for the time axis of ``x``."""
    size = b.op("Gather", [b.shape_of(x), b.ints([axis], "axis")], axis=0, dtype=numpy.int64)
    size = b.squeeze(size, [0])
    return b.op("Range", [b.const(numpy.int64(0), "zero"), size, b.const(numpy.int64(1), "one")],
                dtype=numpy.int64)


def _seq_axis(b, attrs) -> int:
    axis = int(attrs.get("axis", 0))
    if axis not in (0, 1):
        raise ExportError(f"axis={axis} (MXNet's sequence operators take 0 or 1)")
    return axis


def _lengths(b, ins, attrs):
    if not attrs.get("use_sequence_length"):
        return None
    if len(ins) < 2 or not isinstance(ins[1], str):
        raise ExportError("use_sequence_length=True without a sequence_length input")
    return b.cast(ins[1], numpy.int64)


def _sequence_mask(b, n, ins, attrs):
    x, axis = ins[0], _seq_axis(b, attrs)
    lengths = _lengths(b, ins, attrs)
    if lengths is None:
        return [b.op("Identity", [x])]
    t = _time_steps(b, x, axis)
    if axis == 0:  # (T, N): t[:, None] < len[None, :]
        mask = b.op("Less", [b.unsqueeze(t, [1]), b.unsqueeze(lengths, [0])])
    else:          # (N, T)
        mask = b.op("Less", [b.unsqueeze(t, [0]), b.unsqueeze(lengths, [1])])
    nd = len(b.in_shape(0))
    if nd > 2:
        mask = b.unsqueeze(mask, list(range(2, nd)))
    value = b.const(numpy.asarray(attrs.get("value", 0.0), dtype=b.dtype(x)), "value")
    return [b.op("Where", [mask, x, value])]


def _sequence_last(b, n, ins, attrs):
    x, axis = ins[0], _seq_axis(b, attrs)
    lengths = _lengths(b, ins, attrs)
    if lengths is None:
        return [b.op("Gather", [x, b.const(numpy.int64(-1), "last")], axis=axis)]
    if axis == 0:
        nd = len(b.in_shape(0))
        x = b.transpose(x, [1, 0] + list(range(2, nd)))
    last = b.op("Sub", [lengths, b.const(numpy.int64(1), "one")], dtype=numpy.int64)
    return [b.op("GatherND", [x, b.unsqueeze(last, [1])], batch_dims=1)]


def _sequence_reverse(b, n, ins, attrs):
    from .shape import slice_

    x, axis = ins[0], _seq_axis(b, attrs)
    lengths = _lengths(b, ins, attrs)
    if lengths is None:
        return [slice_(b, x, [axis], [-1], [numpy.iinfo(numpy.int64).min], [-1])]
    return [b.op("ReverseSequence", [x, lengths], batch_axis=1 - axis, time_axis=axis)]


# --------------------------------------------------------------------------- statistics
def _moment(root: bool):
    def rule(b, n, ins, attrs):
        from .reduce import axes_of

        x = b.cast(ins[0], b.out_dtype())
        shape = b.in_shape(0)
        axes = axes_of({"axis": attrs.get("axis")}, len(shape), mx_empty_all=False)
        axes = list(range(len(shape))) if axes is None else list(axes)
        count = int(numpy.prod([shape[a] for a in axes])) if axes else 1
        if any(b.in_dynamic(0)[a] for a in axes):
            raise ExportError("var/std over a dynamic axis")
        mean = b.reduce("ReduceMean", x, axes, True)
        d = b.op("Sub", [x, mean])
        var = b.reduce("ReduceMean", b.op("Mul", [d, d]), axes, bool(attrs.get("keepdims")))
        ddof = int(attrs.get("ddof", 0))
        if ddof:
            k = count / max(count - ddof, 0) if count > ddof else numpy.nan
            var = b.op("Mul", [var, b.const(numpy.asarray(k, dtype=b.dtype(x)), "ddof")])
        return [b.op("Sqrt", [var]) if root else var]

    return rule


def _ravel(b, n, ins, attrs):
    return [b.reshape(ins[0], [-1])]


def _gather_nd(b, n, ins, attrs):
    """MXNet's gather_nd indexes with the first axis of ``indices``; ONNX with the last."""
    idx = b.cast(ins[1], numpy.int64)
    k = len(b.in_shape(1))
    idx = b.transpose(idx, list(range(1, k)) + [0])
    return [b.op("GatherND", [ins[0], idx])]


RULES.update({"SequenceMask": _sequence_mask, "SequenceLast": _sequence_last,
              "SequenceReverse": _sequence_reverse, "var": _moment(False),
              "std": _moment(True), "ravel": _ravel, "gather_nd": _gather_nd})
