"""ONNX import rules: convolution, pooling, dense layers and normalization."""
from __future__ import annotations

import math

import numpy

from .. import sym
from ..ops.registry import REGISTRY
from ..symbol.constructors import compose


# ------------------------------------------------------------------ geometry
def _spatial(ctx, node, n: int) -> tuple:
    """The input's spatial sizes (an error when the model does not give them)."""
    s = ctx.shape(node.input[0])
    if s is None or len(s) != n + 2 or None in s[2:]:
        raise ctx.error(node, f"needs its input's spatial sizes (auto_pad or ceil_mode), "
                        f"which the model does not give (shape {s})")
    return tuple(s[2:])


def _pads(ctx, node, a, kernel, stride, dilate) -> tuple[tuple, tuple]:
    """ONNX's pads/auto_pad as (begin, end) per spatial axis."""
    n = len(kernel)
    auto = a.get("auto_pad", "NOTSET")
    if auto in ("NOTSET", ""):
        p = tuple(a.get("pads", (0,) * 2 * n))
        return p[:n], p[n:]
    if auto == "VALID":
        return (0,) * n, (0,) * n
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise ctx.error(node, f"has auto_pad={auto!r}")
    size = _spatial(ctx, node, n)
    begin, end = [], []
    for x, k, s, d in zip(size, kernel, stride, dilate):
        total = max(0, (math.ceil(x / s) - 1) * s + (k - 1) * d + 1 - x)
        small = total // 2
        begin.append(small if auto == "SAME_UPPER" else total - small)
        end.append(total - small if auto == "SAME_UPPER" else small)
    return tuple(begin), tuple(end)


def _pad_spatial(x, begin, end, value=0.0):
    width = ((0, 0), (0, 0)) + tuple(zip(begin, end))
    return sym.pad(x, pad_width=width, mode="constant", constant_values=value)


def _kernel(ctx, node, a, wi: int = 1) -> tuple:
    if "kernel_shape" in a:
        return tuple(a["kernel_shape"])
    w = ctx.shape(node.input[wi])
    if w is None or None in w[2:]:
        raise ctx.error(node, "needs kernel_shape or a weight of known shape")
    return tuple(w[2:])


def _channel_bias(b, rank: int):
    return sym.reshape(b, shape=(1, -1) + (1,) * (rank - 2))


# ------------------------------------------------------------------ convolution
def _conv(ctx, node, a):
    kernel = _kernel(ctx, node, a)
    n = len(kernel)
    stride, dilate = tuple(a.get("strides", (1,) * n)), tuple(a.get("dilations", (1,) * n))
    begin, end = _pads(ctx, node, a, kernel, stride, dilate)
    w = ctx.shape(node.input[1])
    if w is None or w[0] is None:
        raise ctx.error(node, "needs a weight of known shape")
    x = ctx.sym(node.input[0])
    if begin != end:  # asymmetric: an explicit zero Pad, then no padding in the convolution
        x, pad = _pad_spatial(x, begin, end), (0,) * n
    else:
        pad = begin
    args = [x, ctx.sym(node.input[1])] + ([ctx.sym(node.input[2])] if ctx.has(node, 2) else [])
    return sym.Convolution(*args, kernel=kernel, stride=stride, dilate=dilate, pad=pad,
                           num_filter=w[0], num_group=a.get("group", 1),
                           no_bias=not ctx.has(node, 2), name=ctx.node_name(node))


def _conv_transpose(ctx, node, a):
    kernel = _kernel(ctx, node, a)
    n = len(kernel)
    stride, dilate = tuple(a.get("strides", (1,) * n)), tuple(a.get("dilations", (1,) * n))
    group = a.get("group", 1)
    w = ctx.shape(node.input[1])
    if w is None or None in w[:2]:
        raise ctx.error(node, "needs a weight of known shape")
    out_pad = tuple(a.get("output_padding", (0,) * n))
    auto = a.get("auto_pad", "NOTSET")
    if "output_shape" in a or auto in ("SAME_UPPER", "SAME_LOWER"):
        size = _spatial(ctx, node, n)
        target = tuple(a["output_shape"])[-n:] if "output_shape" in a else \
            tuple(x * s for x, s in zip(size, stride))
        begin, end = [], []
        for x, k, s, d, op, t in zip(size, kernel, stride, dilate, out_pad, target):
            total = s * (x - 1) + op + (k - 1) * d + 1 - t
            if auto == "SAME_UPPER":
                begin.append(total // 2)
                end.append(total - total // 2)
            else:
                begin.append(total - total // 2)
                end.append(total // 2)
    elif auto == "VALID":
        begin = end = (0,) * n
    else:
        p = tuple(a.get("pads", (0,) * 2 * n))
        begin, end = p[:n], p[n:]
    if min(begin) < 0 or min(end) < 0:
        raise ctx.error(node, f"asks for negative padding {begin}, {end} (output_shape "
                        f"{a.get('output_shape')})")
    x, weight = ctx.sym(node.input[0]), ctx.sym(node.input[1])
    common = {"kernel": kernel, "stride": stride, "dilate": dilate, "num_filter": w[1] * group,
                  "num_group": group}
    name = ctx.node_name(node)
    if tuple(begin) == tuple(end) and all(op < s for op, s in zip(out_pad, stride)):
        args = [x, weight] + ([ctx.sym(node.input[2])] if ctx.has(node, 2) else [])
        return sym.Deconvolution(*args, pad=tuple(begin), adj=out_pad,
                                 no_bias=not ctx.has(node, 2), name=name, **common)
    # the full transposed convolution, then ONNX's crop (pads) and growth (output_padding)
    y = sym.Deconvolution(x, weight, pad=(0,) * n, no_bias=True, **common)
    grow = tuple(max(0, op - e) for op, e in zip(out_pad, end))
    if any(grow):
        y = _pad_spatial(y, (0,) * n, grow)
    stop = tuple(None if op >= e else op - e for op, e in zip(out_pad, end))
    y = sym.slice(y, begin=(None, None) + tuple(begin), end=(None, None) + stop)
    if ctx.has(node, 2):
        y = sym.broadcast_add(y, _channel_bias(ctx.sym(node.input[2]), n + 2))
    return sym.identity(y, name=name)


# ------------------------------------------------------------------ pooling
def _out_size(x, k, s, b, e, ceil):
    span = x + b + e - k
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= x + b:  # the last window must start inside the data
        out -= 1
    return out


def _pool(ctx, node, a):
    kind = "max" if node.op_type == "MaxPool" else "avg"
    if len(node.output) > 1 and node.output[1]:
        raise ctx.error(node, "asks for the Indices output, which is not translated")
    kernel = tuple(a["kernel_shape"])
    n = len(kernel)
    stride = tuple(a.get("strides", (1,) * n))
    dilate = tuple(a.get("dilations", (1,) * n))
    if any(d != 1 for d in dilate):
        raise ctx.error(node, f"has dilations={dilate}; pooling is translated without dilation")
    begin, end = _pads(ctx, node, a, kernel, stride, dilate)
    ceil = bool(a.get("ceil_mode", 0))
    include = bool(a.get("count_include_pad", 0))
    x = ctx.sym(node.input[0])
    name = ctx.node_name(node)
    if begin == end and not ceil:
        return sym.Pooling(x, kernel=kernel, stride=stride, pad=begin, pool_type=kind,
                           pooling_convention="valid", count_include_pad=include, name=name)
    extra = (0,) * n
    if ceil:
        size = _spatial(ctx, node, n)
        outs = [_out_size(*t, True) for t in zip(size, kernel, stride, begin, end)]
        extra = tuple(max(0, (o - 1) * s + k - (xs + b + e))
                      for o, s, k, xs, b, e in zip(outs, stride, kernel, size, begin, end))
    full_end = tuple(e + x_ for e, x_ in zip(end, extra))
    window = {"kernel": kernel, "stride": stride, "pooling_convention": "valid"}
    if kind == "max":
        padded = _pad_spatial(x, begin, full_end, -numpy.inf)
        return sym.Pooling(padded, pool_type="max", name=name, **window)
    # an average over the cells ONNX counts: a sum divided by the count of counted cells
    total = sym.Pooling(_pad_spatial(x, begin, full_end), pool_type="sum", **window)
    ones = _pad_spatial(sym.ones_like(x), begin, end, 1.0 if include else 0.0)
    if any(extra):
        ones = _pad_spatial(ones, (0,) * n, extra)
    count = sym.Pooling(ones, pool_type="sum", **window)
    return sym.broadcast_div(total, count, name=name)


def _global_pool(ctx, node, a):
    kind = "max" if node.op_type == "GlobalMaxPool" else "avg"
    rank = ctx.rank(node, 0)
    return sym.Pooling(ctx.sym(node.input[0]), kernel=(1,) * (rank - 2), global_pool=True,
                       pool_type=kind, name=ctx.node_name(node))


# ------------------------------------------------------------------ dense
def _matmul(a, b, name=None, ta=False, tb=False):
    return compose(REGISTRY["matmul"], [a, b], {"transpose_a": ta, "transpose_b": tb},
                   name=name)


def _gemm(ctx, node, a):
    alpha, beta = a.get("alpha", 1.0), a.get("beta", 1.0)
    ta, tb = bool(a.get("transA", 0)), bool(a.get("transB", 0))
    name = ctx.node_name(node)
    has_c = ctx.has(node, 2)
    bs = ctx.shape(node.input[1])
    cs = ctx.shape(node.input[2]) if has_c else None
    if tb and not ta and alpha == 1.0 and (not has_c or beta == 1.0 and cs is not None and
                                           len(cs) == 1 and bs is not None and
                                           cs[0] == bs[0] and bs[0] is not None):
        if bs is None or bs[0] is None:
            raise ctx.error(node, "needs B of known shape")
        args = [ctx.sym(node.input[0]), ctx.sym(node.input[1])]
        if has_c:
            args.append(ctx.sym(node.input[2]))
        return sym.FullyConnected(*args, num_hidden=bs[0], no_bias=not has_c, name=name)
    y = _matmul(ctx.sym(node.input[0]), ctx.sym(node.input[1]), ta=ta, tb=tb)
    if alpha != 1.0:
        y = y * alpha
    if has_c:
        c = ctx.sym(node.input[2])
        y = sym.broadcast_add(y, c * beta if beta != 1.0 else c)
    return sym.identity(y, name=name)


def _matmul_rule(ctx, node, a):
    return _matmul(*ctx.inputs(node), name=ctx.node_name(node))


# ------------------------------------------------------------------ normalization
def _batch_norm(ctx, node, a):
    if ctx.opset < 9 and not a.get("spatial", 1):
        raise ctx.error(node, "has spatial=0 (per-activation statistics); only spatial=1 "
                        "is translated")
    if a.get("training_mode", 0) or any(o for o in node.output[1:]):
        raise ctx.error(node, "is in training mode (or asks for the running statistics "
                        "as outputs); only inference BatchNormalization is translated")
    for i, what in ((3, "the running mean"), (4, "the running variance")):
        if ctx.const(node.input[i]) is None:
            raise ctx.error(node, f"reads {what} {node.input[i]!r} from the graph; it must be "
                            "an initializer (an auxiliary state)")
    return sym.BatchNorm(*ctx.inputs(node)[:5], eps=a.get("epsilon", 1e-5),
                         momentum=a.get("momentum", 0.9), fix_gamma=False,
                         use_global_stats=False, name=ctx.node_name(node))


def _layer_norm(ctx, node, a):
    if any(o for o in node.output[1:]):
        raise ctx.error(node, "asks for Mean/InvStdDev outputs, which are not translated")
    x, gamma = ctx.sym(node.input[0]), ctx.sym(node.input[1])
    beta = ctx.sym(node.input[2]) if ctx.has(node, 2) else sym.zeros_like(gamma)
    axis, eps = a.get("axis", -1), a.get("epsilon", 1e-5)
    name = ctx.node_name(node)
    rank = ctx.rank(node, 0)
    axis = axis + rank if axis < 0 else axis
    if axis == rank - 1:
        return sym.LayerNorm(x, gamma, beta, axis=-1, eps=eps, name=name)
    flat = sym.reshape(x, shape=(0,) * axis + (-1,))
    y = sym.LayerNorm(flat, sym.reshape(gamma, shape=(-1,)), sym.reshape(beta, shape=(-1,)),
                      axis=-1, eps=eps)
    return sym.reshape_like(y, x, name=name)


def _instance_norm(ctx, node, a):
    x, gamma, beta = ctx.inputs(node)
    return sym.InstanceNorm(x, gamma, beta, eps=a.get("epsilon", 1e-5), name=ctx.node_name(node))


def _lrn(ctx, node, a):
    return sym.LRN(ctx.sym(node.input[0]), alpha=a.get("alpha", 1e-4), beta=a.get("beta", 0.75),
                   knorm=a.get("bias", 1.0), nsize=a["size"], name=ctx.node_name(node))


RULES = {"Conv": _conv, "ConvTranspose": _conv_transpose, "MaxPool": _pool,
         "AveragePool": _pool, "GlobalAveragePool": _global_pool,
         "GlobalMaxPool": _global_pool, "Gemm": _gemm, "MatMul": _matmul_rule,
         "BatchNormalization": _batch_norm, "LayerNormalization": _layer_norm,
         "InstanceNormalization": _instance_norm, "LRN": _lrn}


# ------------------------------------------------------------------ resizing
def _resize_target(ctx, node, a):
    """(input shape, output shape) of Resize (opset 10+) or Upsample (7-9)."""
    shape = ctx.shape(node.input[0])
    if shape is None or None in shape:
        raise ctx.error(node, f"needs its input's static shape (got {shape})")
    sizes = scales = None
    if node.op_type == "Upsample" and ctx.opset < 9:
        scales = tuple(a["scales"])
    elif node.op_type == "Upsample" or ctx.opset == 10:
        scales = tuple(float(v) for v in ctx.input_const(node, 1, "scales").reshape(-1))
    else:
        v = ctx.input_const(node, 2, "scales", required=False)
        if v is not None and v.size:
            scales = tuple(float(s) for s in v.reshape(-1))
        v = ctx.input_const(node, 3, "sizes", required=False)
        if v is not None and v.size:
            sizes = tuple(int(s) for s in v.reshape(-1))
    if a.get("axes") is not None or a.get("keep_aspect_ratio_policy", "stretch") != "stretch":
        raise ctx.error(node, "has axes or keep_aspect_ratio_policy; not translated")
    if sizes is None:
        if scales is None or len(scales) != len(shape):
            raise ctx.error(node, f"has scales {scales} for an input of shape {shape}")
        sizes = tuple(math.floor(d * s) for d, s in zip(shape, scales))
    if len(shape) != 4 or tuple(sizes[:2]) != tuple(shape[:2]):
        raise ctx.error(node, f"resizes {shape} to {sizes}; only the two spatial axes of "
                        "4-d NCHW data are translated")
    return tuple(shape), tuple(sizes)


def _resize(ctx, node, a):
    shape, out = _resize_target(ctx, node, a)
    mode = a.get("mode", "nearest")
    if node.op_type == "Upsample" or ctx.opset == 10:
        ctm, nearest = "asymmetric", "floor"
    else:
        ctm = a.get("coordinate_transformation_mode", "half_pixel")
        nearest = a.get("nearest_mode", "round_prefer_floor")
    x = ctx.sym(node.input[0])
    name = ctx.node_name(node)
    if mode == "nearest":
        factors = [o // i if i and o % i == 0 else None for i, o in zip(shape[2:], out[2:])]
        exact = (ctm == "asymmetric" and nearest == "floor") or (
            ctm in ("half_pixel", "pytorch_half_pixel") and
            nearest in ("round_prefer_floor", "round_prefer_ceil"))
        if None in factors or not exact:
            raise ctx.error(node, f"is a nearest resize {shape} -> {out} with "
                            f"coordinate_transformation_mode={ctm!r}, nearest_mode={nearest!r}; "
                            "translated: integer scale factors with asymmetric+floor or "
                            "half_pixel+round_prefer_floor/ceil")
        for axis, k in zip((2, 3), factors):
            if k != 1:
                x = sym.repeat(x, repeats=k, axis=axis)
        return sym.identity(x, name=name)
    if mode in ("linear", "bilinear") and ctm in ("align_corners", "half_pixel",
                                                  "pytorch_half_pixel"):
        return sym.BilinearResize2D(x, height=out[2], width=out[3],
                                    align_corners=ctm == "align_corners", name=name)
    raise ctx.error(node, f"has mode={mode!r} with coordinate_transformation_mode={ctm!r}; "
                    "translated: nearest (integer scales), linear with align_corners or "
                    "half_pixel")


RULES.update({"Resize": _resize, "Upsample": _resize})
