"""ONNX import rules: shapes and indexing (Reshape, Flatten, Transpose, Squeeze, Slice,
Concat, Split, Gather, Tile, Expand, Pad, Shape, Identity, Dropout)."""
from __future__ import annotations

import numpy

from .. import sym

_BIG = 2 ** 30  # ONNX writes "to the end" as INT_MAX / INT_MIN


def _ints(v) -> tuple:
    return tuple(int(x) for x in numpy.asarray(v).reshape(-1))


def _identity(ctx, node, a):
    return sym.identity(ctx.sym(node.input[0]), name=ctx.node_name(node))


def _dropout(ctx, node, a):
    # MXNet's Dropout, as MXNet's importer: the identity at inference (the mask output,
    # opset 10+, is all true there), active when a Gluon block trains
    x = ctx.sym(node.input[0])
    if ctx.opset >= 12:
        v = ctx.input_const(node, 1, "ratio", required=False)
        ratio = 0.5 if v is None else float(v.reshape(()))
    else:
        ratio = a.get("ratio", 0.5)
    out = sym.Dropout(x, p=ratio, name=ctx.node_name(node))
    mask = sym.cast(sym.ones_like(x), dtype="bool") if len(node.output) > 1 else None
    return [out, mask]


def _reshape(ctx, node, a):
    if ctx.opset < 5 or (ctx.opset < 13 and "shape" in a):
        shape = _ints(a["shape"])
    else:
        value = ctx.input_const(node, 1, "shape", dynamic=True)
        shape = list(_ints(value))
        for j, name, axis in ctx.dynamic_dims(value):
            # a dimension known only at run time stays where it is: MXNet's 0 (copy)
            if j != axis or a.get("allowzero", 0):
                raise ctx.error(node, f"puts dimension {axis} of {name!r}, unknown when "
                                f"the model is imported, at position {j} of its shape")
            shape[j] = 0
        shape = tuple(shape)
    x = ctx.sym(node.input[0])
    if a.get("allowzero", 0) and 0 in shape:
        return sym.reshape(x, shape=shape, mx_codes=False, name=ctx.node_name(node))
    return sym.reshape(x, shape=shape, name=ctx.node_name(node))


def _flatten(ctx, node, a):
    x = ctx.sym(node.input[0])
    axis = a.get("axis", 1)
    if axis < 0:
        axis += ctx.rank(node, 0)
    if axis == 1:
        return sym.Flatten(x, name=ctx.node_name(node))
    if axis == 0:
        return sym.reshape(x, shape=(1, -1), name=ctx.node_name(node))
    for _ in range(axis - 1):
        x = sym.reshape(x, shape=(-3, -2))
    return sym.reshape(x, shape=(0, -1), name=ctx.node_name(node))


def _transpose(ctx, node, a):
    perm = a.get("perm")
    x = ctx.sym(node.input[0])
    if perm is None:
        return sym.transpose(x, name=ctx.node_name(node))
    return sym.transpose(x, axes=tuple(perm), name=ctx.node_name(node))


def _axes(ctx, node, a, since: int, required: bool):
    if ctx.opset >= since:
        v = ctx.input_const(node, 1, "axes", required=False)
        axes = None if v is None else _ints(v)
    else:
        axes = a.get("axes")
    if axes is None and required:
        raise ctx.error(node, "needs axes")
    return None if axes is None else tuple(axes)


def _squeeze(ctx, node, a):
    axes = _axes(ctx, node, a, 13, required=False)
    x = ctx.sym(node.input[0])
    if axes is None:
        return sym.squeeze(x, name=ctx.node_name(node))
    return sym.squeeze(x, axis=axes, name=ctx.node_name(node))


def _unsqueeze(ctx, node, a):
    axes = _axes(ctx, node, a, 13, required=True)
    x = ctx.sym(node.input[0])
    shape = ctx.shape(node.input[0])
    out_rank = None if shape is None else len(shape) + len(axes)
    if any(ax < 0 for ax in axes):
        if out_rank is None:
            raise ctx.error(node, "has negative axes and its input's rank is unknown")
        axes = tuple(ax + out_rank if ax < 0 else ax for ax in axes)
    for ax in sorted(axes):
        x = sym.expand_dims(x, axis=ax)
    return sym.identity(x, name=ctx.node_name(node))


def _slice(ctx, node, a):
    if ctx.opset < 10:
        starts, ends = _ints(a["starts"]), _ints(a["ends"])
        axes = _ints(a["axes"]) if "axes" in a else tuple(range(len(starts)))
        steps = (1,) * len(starts)
    else:
        starts = _ints(ctx.input_const(node, 1, "starts"))
        ends = _ints(ctx.input_const(node, 2, "ends"))
        v = ctx.input_const(node, 3, "axes", required=False)
        axes = _ints(v) if v is not None else tuple(range(len(starts)))
        v = ctx.input_const(node, 4, "steps", required=False)
        steps = _ints(v) if v is not None else (1,) * len(starts)
    if any(ax < 0 for ax in axes):
        rank = ctx.rank(node, 0)
        axes = tuple(ax + rank if ax < 0 else ax for ax in axes)
    if 0 in steps:
        raise ctx.error(node, f"has a zero step in steps={steps}")
    n = max(axes) + 1 if axes else 0
    begin, end, step = [None] * n, [None] * n, [None] * n
    for ax, s, e, st in zip(axes, starts, ends, steps):
        begin[ax] = None if abs(s) >= _BIG else s
        end[ax] = None if abs(e) >= _BIG else e
        step[ax] = st
    return sym.slice(ctx.sym(node.input[0]), begin=tuple(begin), end=tuple(end),
                     step=tuple(step), name=ctx.node_name(node))


def _concat(ctx, node, a):
    xs = ctx.inputs(node)
    return sym.Concat(*xs, dim=a.get("axis", 1), num_args=len(xs), name=ctx.node_name(node))


def _split(ctx, node, a):
    axis = a.get("axis", 0)
    n = len(node.output)
    if ctx.opset >= 13:
        v = ctx.input_const(node, 1, "split", required=False)
        sizes = None if v is None else _ints(v)
    else:
        sizes = tuple(a["split"]) if "split" in a else None
    x = ctx.sym(node.input[0])
    shape = ctx.shape(node.input[0])
    dim = None if shape is None else shape[axis]
    if sizes is None and "num_outputs" in a and dim is not None and dim % n:
        per = -(-dim // n)  # opset 18: the last part is smaller
        sizes = tuple(min(per, dim - per * i) for i in range(n))
    if sizes is None or len(set(sizes)) == 1 and (dim is None or sum(sizes) == dim):
        parts = sym.split(x, num_outputs=n, axis=axis, name=ctx.node_name(node))
        return [parts[i] for i in range(n)] if n > 1 else [parts]
    outs, start = [], 0
    for size in sizes:
        outs.append(sym.slice_axis(x, axis=axis, begin=start, end=start + size))
        start += size
    return outs


def _gather(ctx, node, a):
    data, idx = ctx.inputs(node)
    return sym.take(data, idx, axis=a.get("axis", 0), mode="wrap", name=ctx.node_name(node))


def _gather_elements(ctx, node, a):
    from ..ops.registry import REGISTRY
    from ..symbol.constructors import compose

    data, idx = ctx.inputs(node)
    axis = a.get("axis", 0)
    if axis < 0:
        axis += ctx.rank(node, 0)
    ds, is_ = ctx.shape(node.input[0]), ctx.shape(node.input[1])
    if ds is not None and is_ is not None and len(ds) == len(is_):
        # ONNX lets the indices be shorter than the data off the axis: the output is theirs
        ends = [None if j == axis or d is None or i is None or i >= d else i
                for j, (d, i) in enumerate(zip(ds, is_))]
        if any(e is not None for e in ends):
            data = sym.slice(data, begin=(None,) * len(ends), end=tuple(ends))
    return compose(REGISTRY["_gather_along_axis"], [data, idx], {"axis": axis},
                   name=ctx.node_name(node))


def _cumsum(ctx, node, a):
    if a.get("exclusive", 0) or a.get("reverse", 0):
        raise ctx.error(node, "has exclusive=1 or reverse=1; only the plain inclusive "
                        "forward sum is translated")
    axis = int(ctx.input_const(node, 1, "axis").reshape(()))
    return sym.cumsum(ctx.sym(node.input[0]), axis=axis, name=ctx.node_name(node))


def _topk(ctx, node, a):
    k = a["k"] if ctx.opset < 10 else int(ctx.input_const(node, 1, "K").reshape(-1)[0])
    if not a.get("sorted", 1):
        raise ctx.error(node, "has sorted=0; only sorted results are translated")
    out = sym.topk(ctx.sym(node.input[0]), k=k, axis=a.get("axis", -1), ret_typ="both",
                   is_ascend=not a.get("largest", 1), dtype="int64",
                   name=ctx.node_name(node))
    return [out[0], out[1]]


def _depth_to_space(ctx, node, a):
    b = a["blocksize"]
    s = ctx.shape(node.input[0])
    if s is None or len(s) != 4 or None in s[1:]:
        raise ctx.error(node, f"needs 4-d input with known C, H, W (got {s})")
    _, c, h, w = s
    x = ctx.sym(node.input[0])
    if node.op_type == "SpaceToDepth":
        x = sym.reshape(x, shape=(0, c, h // b, b, w // b, b))
        x = sym.transpose(x, axes=(0, 3, 5, 1, 2, 4))
        return sym.reshape(x, shape=(0, c * b * b, h // b, w // b), name=ctx.node_name(node))
    if a.get("mode", "DCR") == "DCR":
        x = sym.transpose(sym.reshape(x, shape=(0, b, b, c // (b * b), h, w)),
                          axes=(0, 3, 4, 1, 5, 2))
    else:  # CRD
        x = sym.transpose(sym.reshape(x, shape=(0, c // (b * b), b, b, h, w)),
                          axes=(0, 1, 4, 2, 5, 3))
    return sym.reshape(x, shape=(0, c // (b * b), h * b, w * b), name=ctx.node_name(node))


def _tile(ctx, node, a):
    reps = _ints(ctx.input_const(node, 1, "repeats"))
    return sym.tile(ctx.sym(node.input[0]), reps=reps, name=ctx.node_name(node))


def _expand(ctx, node, a):
    value = ctx.input_const(node, 1, "shape", dynamic=True)
    dyn = {j: (name, axis) for j, name, axis in ctx.dynamic_dims(value)}
    shape = _ints(value)
    x = ctx.sym(node.input[0])
    xs = ctx.shape(node.input[0])
    if xs is None:
        raise ctx.error(node, "needs its input's rank (the model does not give it)")
    rank = max(len(xs), len(shape))
    lead_x, lead_s = rank - len(xs), rank - len(shape)
    xs = (1,) * lead_x + tuple(xs)
    dyn = {j + lead_s: v for j, v in dyn.items()}
    shape = (1,) * lead_s + shape
    for _ in range(lead_x):
        x = sym.expand_dims(x, axis=0)
    target, later = [], []
    for j, (d, s) in enumerate(zip(xs, shape)):
        if j in dyn or d is None:  # known at run time only: keep x's (0), widen below
            target.append(0)
            if j in dyn and d == 1:
                later.append((j, *dyn[j]))
            elif d is None and j not in dyn and s != 1:
                raise ctx.error(node, f"expands dimension {j} of {node.input[0]!r}, unknown "
                                f"at import, to {s}")
        else:
            target.append(max(d, s) if 1 in (d, s) else d)
    out = sym.broadcast_to(x, shape=tuple(target))
    for j, name, axis in later:  # a dimension of 1 widened to another tensor's run-time one
        out = sym.broadcast_like(out, ctx.sym(name), lhs_axes=(j,), rhs_axes=(axis,))
    return sym.identity(out, name=ctx.node_name(node))


def _pad(ctx, node, a):
    mode = a.get("mode", "constant")
    if mode not in ("constant", "reflect", "edge"):
        raise ctx.error(node, f"has mode={mode!r}; translated: constant, reflect, edge")
    rank = ctx.rank(node, 0)
    if ctx.opset < 11:
        pads, value, axes = _ints(a["pads"]), float(a.get("value", 0.0)), None
    else:
        pads = _ints(ctx.input_const(node, 1, "pads"))
        v = ctx.input_const(node, 2, "constant_value", required=False)
        value = 0.0 if v is None or v.size == 0 else float(v.reshape(()))
        v = ctx.input_const(node, 3, "axes", required=False)
        axes = None if v is None else _ints(v)
    axes = tuple(range(rank)) if axes is None else tuple(x + rank if x < 0 else x for x in axes)
    k = len(axes)
    if len(pads) != 2 * k:
        raise ctx.error(node, f"has {len(pads)} pads for {k} axes (input rank {rank})")
    width = [(0, 0)] * rank
    for j, ax in enumerate(axes):
        if pads[j] < 0 or pads[j + k] < 0:
            raise ctx.error(node, f"has negative pads {pads} (cropping is not translated)")
        width[ax] = (pads[j], pads[j + k])
    kw = {"constant_values": value} if mode == "constant" else {}
    return sym.pad(ctx.sym(node.input[0]), pad_width=tuple(width), mode=mode, name=ctx.node_name(node),
                   **kw)


def _shape(ctx, node, a):
    start, end = a.get("start", 0), a.get("end")
    return ctx.shape_value(node.input[0])[start:end]


def _size(ctx, node, a):
    s = ctx.shape(node.input[0])
    if s is None or None in s:
        raise ctx.error(node, f"reads the size of {node.input[0]!r}, which is not static")
    return numpy.asarray(int(numpy.prod(s)), dtype=numpy.int64)


def _constant_of_shape(ctx, node, a):
    from onnx import numpy_helper

    value = ctx.input_const(node, 0, "shape", dynamic=True)
    fill = numpy_helper.to_array(a["value"]) if "value" in a else numpy.zeros(1, numpy.float32)
    fill = fill.reshape(-1)[0]
    dyn = ctx.dynamic_dims(value)
    if not dyn:
        return numpy.full(_ints(value), fill, dtype=fill.dtype)
    # the known dimensions as a constant, the run-time ones taken from their tensors
    static = tuple(1 if j in {d[0] for d in dyn} else v for j, v in enumerate(_ints(value)))
    out = sym.full(shape=static, fill_value=fill.item(), dtype=str(fill.dtype))
    by_source: dict = {}
    for j, name, axis in dyn:
        by_source.setdefault(name, []).append((j, axis))
    for name, pairs in by_source.items():
        out = sym.broadcast_like(out, ctx.sym(name), lhs_axes=tuple(j for j, _ in pairs),
                                 rhs_axes=tuple(axis for _, axis in pairs))
    return sym.identity(out, name=ctx.node_name(node))


RULES = {"Identity": _identity, "Dropout": _dropout, "Reshape": _reshape, "Flatten": _flatten,
         "Transpose": _transpose, "Squeeze": _squeeze, "Unsqueeze": _unsqueeze,
         "Slice": _slice, "Concat": _concat, "Split": _split, "Gather": _gather,
         "GatherElements": _gather_elements, "CumSum": _cumsum, "TopK": _topk,
         "DepthToSpace": _depth_to_space, "SpaceToDepth": _depth_to_space,
         "Tile": _tile, "Expand": _expand, "Pad": _pad, "Shape": _shape, "Size": _size,
         "ConstantOfShape": _constant_of_shape}
