"""Shape rules: reshape (MXNet's codes resolved from the inferred shapes), flatten,
transpose, expand_dims/squeeze, slicing, concat/stack/split, pad, tile/repeat,
broadcasting and the ``*_like`` shape operators."""
from __future__ import annotations

import itertools

import numpy

from ..export_emit import INT64_MAX, INT64_MIN, ExportError


def target_shape(b, out_pos: int = 0, in_pos: int = 0) -> list:
    """ONNX Reshape codes for the current node's output ``out_pos``: fixed sizes, 0 where a
    dynamic dimension is the input's at the same position, at most one -1."""
    out, dyn = b.out_shape(out_pos), b.out_dynamic(out_pos)
    if not any(dyn):
        return list(out)
    ishape, idyn = b.in_shape(in_pos), b.in_dynamic(in_pos)
    codes, free = [], 0
    for k, (d, v) in enumerate(zip(out, dyn)):
        if not v:
            codes.append(d)
        elif k < len(ishape) and idyn[k] and ishape[k] == d:
            codes.append(0)
        else:
            codes.append(-1)
            free += 1
    if free > 1:
        raise ExportError(f"the output shape {tuple(out)} has {free} dimensions that vary "
                          f"with the dynamic input dimensions (input {tuple(ishape)}); ONNX's "
                          "Reshape can infer only one (export with fixed shapes)")
    if 0 in out and -1 in codes:
        raise ExportError(f"an empty output shape {tuple(out)} with a dynamic dimension")
    return codes


def _reshape(b, n, ins, attrs):
    return [b.reshape(ins[0], target_shape(b))]


def _flatten(b, n, ins, attrs):
    if len(b.in_shape(0)) < 2:
        return [b.reshape(ins[0], target_shape(b))]
    return [b.op("Flatten", [ins[0]], axis=1)]


def _transpose(b, n, ins, attrs):
    nd = len(b.in_shape(0))
    axes = attrs.get("axes")
    perm = list(reversed(range(nd))) if axes is None or len(axes) == 0 else \
        [int(a) % nd for a in axes]
    return [b.op("Transpose", [ins[0]], perm=perm)]


def _swapaxes(b, n, ins, attrs):
    nd = len(b.in_shape(0))
    d1 = attrs.get("dim1") if attrs.get("dim1") is not None else attrs.get("axis1", 0)
    d2 = attrs.get("dim2") if attrs.get("dim2") is not None else attrs.get("axis2", 0)
    perm = list(range(nd))
    perm[d1 % nd], perm[d2 % nd] = perm[d2 % nd], perm[d1 % nd]
    return [b.op("Transpose", [ins[0]], perm=perm)]


def _as_tuple(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


def _moveaxis(b, n, ins, attrs):
    nd = len(b.in_shape(0))
    src = [int(a) % nd for a in _as_tuple(attrs.get("source", 0))]
    dst = [int(a) % nd for a in _as_tuple(attrs.get("destination", 0))]
    order = [a for a in range(nd) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return [b.op("Transpose", [ins[0]], perm=order)]


def _expand_dims(b, n, ins, attrs):
    nd = len(b.out_shape())
    axes = sorted(int(a) % nd for a in _as_tuple(attrs.get("axis", 0)))
    return [b.unsqueeze(ins[0], axes)]


def _squeeze(b, n, ins, attrs):
    shape, dyn = b.in_shape(0), b.in_dynamic(0)
    axis = attrs.get("axis")
    if axis is None:
        axes = [i for i, (d, v) in enumerate(zip(shape, dyn)) if d == 1 and not v]
    else:
        axes = sorted(int(a) % len(shape) for a in _as_tuple(axis))
    if not axes:
        return [b.op("Identity", [ins[0]])]
    return [b.squeeze(ins[0], axes)]


def _bounds(start, stop, step):
    step = 1 if step is None else int(step)
    if step == 0:
        raise ExportError("a slice step of 0")
    if start is None:
        start = 0 if step > 0 else INT64_MAX
    if stop is None:
        stop = INT64_MAX if step > 0 else INT64_MIN
    return int(start), int(stop), step


def slice_(b, x: str, axes, starts, ends, steps) -> str:
    """ONNX Slice over ``axes`` (an Identity when it selects everything)."""
    keep = [(a, s, e, t) for a, s, e, t in zip(axes, starts, ends, steps)
            if not (s == 0 and e == INT64_MAX and t == 1)]
    if not keep:
        return b.op("Identity", [x])
    a, s, e, t = zip(*keep)
    return b.op("Slice", [x, b.ints(s, "starts"), b.ints(e, "ends"), b.ints(a, "axes"),
                          b.ints(t, "steps")])


def _slice(b, n, ins, attrs):
    begin, end, step = attrs.get("begin", ()), attrs.get("end", ()), attrs.get("step", ())
    step = tuple(step or ())
    axes, starts, ends, steps = [], [], [], []
    for i, s in enumerate(begin):
        e = end[i] if i < len(end) else None
        t = step[i] if i < len(step) else None
        s, e, t = _bounds(s, e, t)
        axes.append(i), starts.append(s), ends.append(e), steps.append(t)
    return [slice_(b, ins[0], axes, starts, ends, steps)]


def _slice_axis(b, n, ins, attrs):
    nd = len(b.in_shape(0))
    s, e, t = _bounds(attrs.get("begin", 0), attrs.get("end"), 1)
    return [slice_(b, ins[0], [int(attrs.get("axis", 0)) % nd], [s], [e], [t])]


def _slice_like(b, n, ins, attrs):
    nd, like_nd = len(b.in_shape(0)), len(b.in_shape(1))
    axes = attrs.get("axes") or ()
    axes = [int(a) % nd for a in axes] if axes else list(range(min(nd, like_nd)))
    ends = b.op("Gather", [b.shape_of(ins[1]), b.ints(axes, "axes")], axis=0)
    zeros = b.ints([0] * len(axes), "starts")
    return [b.op("Slice", [ins[0], zeros, ends, b.ints(axes, "axes")])]


def _getitem(b, n, ins, attrs):
    """Basic indexing: ints, slices, ``...`` and None (new axes)."""
    key = attrs.get("key")
    key = key if isinstance(key, tuple) else (key,)
    nd = len(b.in_shape(0))
    for k in key:
        if not (k is Ellipsis or k is None or isinstance(k, (int, numpy.integer, slice))) \
                or isinstance(k, bool):
            raise ExportError(f"_getitem: the key {key!r} (only ints, slices, ... and None "
                              "index arrays in ONNX export; use take for array indices)")
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if sum(k is Ellipsis for k in key) > 1:
        raise ExportError(f"_getitem: the key {key!r} has more than one Ellipsis")
    full = []
    for k in key:
        if k is Ellipsis:
            full.extend([slice(None)] * (nd - used))
        else:
            full.append(k)
    axes, starts, ends, steps, drop, new = [], [], [], [], [], []
    axis = 0
    out_axis = 0
    for k in full:
        if k is None:
            new.append(out_axis)
            out_axis += 1
            continue
        if isinstance(k, slice):
            s, e, t = _bounds(k.start, k.stop, k.step)
            out_axis += 1
        else:
            k = int(k)
            s, e, t = k, (k + 1 if k != -1 else INT64_MAX), 1
            drop.append(axis)
        axes.append(axis), starts.append(s), ends.append(e), steps.append(t)
        axis += 1
    y = slice_(b, ins[0], axes, starts, ends, steps)
    y = b.squeeze(y, drop)
    if new:
        y = b.unsqueeze(y, new)
    return [y]


def _concat(b, n, ins, attrs):
    axis = attrs.get("dim") if attrs.get("dim") is not None else attrs.get("axis", 0)
    dt = b.out_dtype()
    data = [b.cast(t, dt) for t in ins if t is not None]
    if axis is None:
        data = [b.reshape(t, [-1]) for t in data]
        axis = 0
    nd = len(b.out_shape())
    return [b.op("Concat", data, axis=int(axis) % nd)]


def _stack(b, n, ins, attrs):
    nd = len(b.out_shape())
    axis = int(attrs.get("axis", 0)) % nd
    dt = b.out_dtype()
    data = [b.unsqueeze(b.cast(t, dt), [axis]) for t in ins if t is not None]
    return [b.op("Concat", data, axis=axis)]


def _split(b, n, ins, attrs):
    shape = b.in_shape(0)
    axis = int(attrs.get("axis", 1)) % len(shape)
    if b.in_dynamic(0)[axis]:
        raise ExportError(f"split: the split axis {axis} has a dynamic size")
    size = shape[axis]
    k = attrs.get("indices_or_sections")
    if k is None:
        k = attrs.get("num_outputs")
    if isinstance(k, (int, numpy.integer)):
        sizes = [size // int(k)] * int(k)
    else:
        bounds = [0] + [min(int(i), size) for i in k] + [size]
        sizes = [max(e - s, 0) for s, e in itertools.pairwise(bounds)]
    outs = b.op("Split", [ins[0], b.ints(sizes, "split")], n_out=len(sizes), axis=axis)
    outs = outs if isinstance(outs, list) else [outs]
    if attrs.get("squeeze_axis"):
        outs = [b.squeeze(o, [axis]) for o in outs]
    return outs


def _pad_pairs(pw, nd):
    if isinstance(pw, (int, numpy.integer)):
        return [(int(pw), int(pw))] * nd
    pw = tuple(pw)
    if pw and all(isinstance(v, (int, numpy.integer)) for v in pw):
        if len(pw) == 2 * nd:  # MXNet: (before0, after0, before1, after1, ...)
            return [(int(pw[2 * i]), int(pw[2 * i + 1])) for i in range(nd)]
        if len(pw) == 2:
            return [(int(pw[0]), int(pw[1]))] * nd
        if len(pw) == 1:
            return [(int(pw[0]), int(pw[0]))] * nd
    if len(pw) == 1 and len(pw[0]) == 2:
        return [tuple(int(v) for v in pw[0])] * nd
    if len(pw) == nd:
        return [tuple(int(v) for v in p) if isinstance(p, (tuple, list)) else (int(p), int(p))
                for p in pw]
    raise ExportError(f"pad: pad_width {pw!r} for a {nd}-D input")


def _pad(b, n, ins, attrs):
    nd = len(b.in_shape(0))
    pairs = _pad_pairs(attrs.get("pad_width"), nd)
    mode = attrs.get("mode", "constant")
    if mode not in ("constant", "edge", "reflect"):
        raise ExportError(f"pad: mode {mode!r} (ONNX has constant, edge and reflect)")
    cv = attrs.get("constant_value")
    cv = attrs.get("constant_values", 0) if cv is None else cv
    pads = b.ints([p[0] for p in pairs] + [p[1] for p in pairs], "pads")
    x = ins[0]
    inputs = [x, pads]
    if mode == "constant":
        inputs.append(b.const(numpy.asarray(cv, dtype=b.dtype(x)), "value"))
    return [b.op("Pad", inputs, mode=mode)]


def _tile(b, n, ins, attrs):
    reps = _as_tuple(attrs.get("reps", 1))
    nd = len(b.in_shape(0))
    x = ins[0]
    if len(reps) > nd:
        x = b.unsqueeze(x, list(range(len(reps) - nd)))
        nd = len(reps)
    reps = (1,) * (nd - len(reps)) + tuple(int(r) for r in reps)
    return [b.op("Tile", [x, b.ints(reps, "reps")])]


def _repeat(b, n, ins, attrs):
    r = attrs.get("repeats", 1)
    if not isinstance(r, (int, numpy.integer)):
        raise ExportError(f"repeat: repeats={r!r} (only one count for every element)")
    axis = attrs.get("axis")
    x = ins[0]
    shape = b.in_shape(0)
    if axis is None:
        x = b.reshape(x, [-1])
        shape, axis = (int(numpy.prod(shape)),), 0
    nd = len(shape)
    axis = int(axis) % nd
    t = b.unsqueeze(x, [axis + 1])
    reps = [1] * (nd + 1)
    reps[axis + 1] = int(r)
    t = b.op("Tile", [t, b.ints(reps, "reps")])
    return [b.reshape(t, target_shape(b))]


def _broadcast_to(b, n, ins, attrs):
    shape = [1 if int(d) == 0 else int(d) for d in attrs.get("shape", ())]
    out, dyn = b.out_shape(), b.out_dynamic()
    shape = [1 if v else d for d, v in zip(out, dyn)] if any(dyn) else shape
    return [b.op("Expand", [ins[0], b.ints(shape, "shape")])]


def _broadcast_like(b, n, ins, attrs):
    lhs, rhs = attrs.get("lhs_axes"), attrs.get("rhs_axes")
    like = b.shape_of(ins[1])
    if lhs is None or rhs is None:
        return [b.op("Expand", [ins[0], like])]
    nd, rnd = len(b.in_shape(0)), len(b.in_shape(1))
    lhs = [int(a) % nd for a in _as_tuple(lhs)]
    rhs = [int(a) % rnd for a in _as_tuple(rhs)]
    pieces = []
    for i in range(nd):
        if i in lhs:
            j = rhs[lhs.index(i)]
            pieces.append(b.op("Gather", [like, b.ints([j], "axis")], axis=0))
        else:
            pieces.append(b.ints([1], "one"))
    return [b.op("Expand", [ins[0], b.op("Concat", pieces, axis=0)])]


def _reshape_like(b, n, ins, attrs):
    if any(attrs.get(k) is not None for k in ("lhs_begin", "lhs_end", "rhs_begin", "rhs_end")):
        return [b.reshape(ins[0], target_shape(b))]
    return [b.op("Reshape", [ins[0], b.shape_of(ins[1])])]


def _flip(b, n, ins, attrs):
    nd = len(b.in_shape(0))
    axis = attrs.get("axis")
    axes = list(range(nd)) if axis is None else [int(a) % nd for a in _as_tuple(axis)]
    return [slice_(b, ins[0], axes, [-1] * len(axes), [INT64_MIN] * len(axes),
                   [-1] * len(axes))]


RULES = {
    "reshape": _reshape, "flatten": _flatten, "transpose": _transpose,
    "swapaxes": _swapaxes, "moveaxis": _moveaxis, "expand_dims": _expand_dims,
    "squeeze": _squeeze, "slice": _slice, "slice_axis": _slice_axis,
    "slice_like": _slice_like, "_getitem": _getitem, "concatenate": _concat,
    "stack": _stack, "split": _split, "pad": _pad, "tile": _tile, "repeat": _repeat,
    "broadcast_to": _broadcast_to, "broadcast_like": _broadcast_like,
    "reshape_like": _reshape_like, "flip": _flip,
}
