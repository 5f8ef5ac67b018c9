"""Neural-network rules: Convolution, Deconvolution, FullyConnected, Pooling, activations,
softmax forms, Dropout (inference: identity), Embedding/take."""
from __future__ import annotations

import numpy

from ...ops.nn import conv_geometry as G
from ...ops.nn import pool as P
from ..export_emit import ExportError
from . import elemwise as E


def _to_cf(b, x: str, nd: int) -> str:
    return b.transpose(x, [0, nd - 1] + list(range(1, nd - 1)))


def _to_cl(b, x: str, nd: int) -> str:
    return b.transpose(x, [0] + list(range(2, nd)) + [1])


def _channels_last(layout, nd) -> bool:
    return G.layout_of(layout, nd)[-1] == "C"


def _bias(b, ins, no_bias):
    return ins[2] if len(ins) > 2 and isinstance(ins[2], str) and not no_bias else None


def _convolution(b, n, ins, attrs):
    ds, ws = b.in_shape(0), b.in_shape(1)
    geo = G.conv_geom(ds, ws, attrs.get("kernel"), attrs.get("stride"), attrs.get("dilate"),
                      attrs.get("pad"), attrs.get("num_filter", 0), attrs.get("num_group", 1),
                      attrs.get("layout"))
    nd = len(ds)
    x, w = ins[0], ins[1]
    if geo.cl:
        x, w = _to_cf(b, x, nd), _to_cf(b, w, nd)
    bias = _bias(b, ins, attrs.get("no_bias"))
    y = b.op("Conv", [x, w] + ([bias] if bias else []), kernel_shape=list(geo.k),
             strides=list(geo.s), dilations=list(geo.d), group=int(geo.g),
             pads=[p[0] for p in geo.p] + [p[1] for p in geo.p])
    return [_to_cl(b, y, nd) if geo.cl else y]


def _deconvolution(b, n, ins, attrs):
    ds, ws = b.in_shape(0), b.in_shape(1)
    geo = G.deconv_geom(ds, ws, attrs.get("kernel"), attrs.get("stride"), attrs.get("dilate"),
                        attrs.get("pad"), attrs.get("adj"), attrs.get("target_shape"),
                        attrs.get("num_filter", 0), attrs.get("num_group", 1),
                        attrs.get("layout"))
    nd = len(ds)
    x, w = ins[0], ins[1]
    if geo.cl:
        x, w = _to_cf(b, x, nd), _to_cf(b, w, nd)
    xin = geo.o
    full = [s * (xi - 1) + d * (k - 1) + 1 for s, xi, d, k in zip(geo.s, xin, geo.d, geo.k)]
    out_pad = [t - (fu - lo - hi) for t, fu, (lo, hi) in zip(geo.x, full, geo.p)]
    bias = _bias(b, ins, attrs.get("no_bias", True))
    y = b.op("ConvTranspose", [x, w] + ([bias] if bias else []), kernel_shape=list(geo.k),
             strides=list(geo.s), dilations=list(geo.d), group=int(geo.g),
             pads=[p[0] for p in geo.p] + [p[1] for p in geo.p],
             output_padding=out_pad if any(out_pad) else None)
    return [_to_cl(b, y, nd) if geo.cl else y]


def _fully_connected(b, n, ins, attrs):
    x, w = ins[0], ins[1]
    bias = _bias(b, ins, attrs.get("no_bias"))
    nd = len(b.in_shape(0))
    flatten = attrs.get("flatten", True)
    if flatten and nd != 2 or nd == 2:
        if nd != 2:
            x = b.op("Flatten", [x], axis=1)
        return [b.op("Gemm", [x, w] + ([bias] if bias else []), transB=1)]
    y = b.op("MatMul", [x, b.transpose(w, [1, 0])])
    return [b.op("Add", [y, bias]) if bias else y]


def _pooling(b, n, ins, attrs):
    shape = b.in_shape(0)
    nd = len(shape)
    name = f"Pooling {n.name!r}"
    g = P.geometry(name, shape, **{k: attrs.get(k, v) for k, v in P.POOL_ATTRS.items()})
    x = ins[0]
    if g.channels_last:
        x = _to_cf(b, x, nd)
    pool_type = g.pool_type
    if pool_type == "lp" and float(g.p) != int(g.p):
        raise ExportError(f"{name}: p_value={g.p} (ONNX's LpPool takes an integer p)")
    nsp = nd - 2
    dyn = b.in_dynamic(0)
    spatial_dyn = any(dyn[a] for a in g.axes)
    if attrs.get("global_pool"):
        if pool_type == "max":
            y = b.op("GlobalMaxPool", [x])
        elif pool_type == "avg":
            y = b.op("GlobalAveragePool", [x])
        elif pool_type == "sum":
            y = b.reduce("ReduceSum", x, list(range(2, nd)), True)
        else:
            y = b.op("GlobalLpPool", [x], p=int(g.p))
        return [_to_cl(b, y, nd) if g.channels_last else y]
    extra = [max(e - (bf + s + af), 0)
             for e, bf, s, af in zip(g.extent, g.before, g.size, g.after)]
    if spatial_dyn and (any(extra) or attrs.get("pooling_convention", "valid") != "valid"):
        raise ExportError(f"{name}: pooling_convention "
                          f"{attrs.get('pooling_convention')!r} over dynamic spatial sizes")
    common = {"kernel_shape": list(g.kernel), "strides": list(g.stride)}
    before, after = list(g.before), [a + e for a, e in zip(g.after, extra)]
    if pool_type == "max":
        too_big = any(p >= k for p, k in zip(before + after, g.kernel * 2))
        if too_big:
            dt = b.dtype(x)  # MXNet's (and ONNX's) padding: the lowest finite value
            fill = numpy.finfo(dt).min if dt.kind == "f" else numpy.iinfo(dt).min
            x = _pad(b, x, before, after, fill)
            before, after = [0] * nsp, [0] * nsp
        y = b.op("MaxPool", [x], pads=before + after, **common)
    elif pool_type in ("avg", "sum"):
        fits = all(p < k for p, k in zip(before + after, g.kernel * 2))
        if not any(extra) and fits and (pool_type == "avg" or not any(before + after)):
            y = b.op("AveragePool", [x], pads=before + after,
                     count_include_pad=int(g.include_pad), **common)
            if pool_type == "sum":
                y = b.op("Mul", [y, b.const(numpy.asarray(numpy.prod(g.kernel),
                                                          b.dtype(x)), "k")])
        else:
            # Window sums over the zero-padded input, divided by MXNet's count per window:
            # the cells inside the padded input (count_include_pad) or the real ones only
            # (a window of padding alone gives 0, as MXNet).
            xp = _pad(b, x, before, after, 0)
            y = b.op("AveragePool", [xp], pads=[0] * (2 * nsp), **common)
            k = float(numpy.prod(g.kernel))
            if pool_type == "sum":
                factor = numpy.full((1, 1) + tuple(g.out), k)
            else:
                count = _counts(g, real_only=not g.include_pad)
                factor = numpy.where(count > 0, k / numpy.maximum(count, 1), 0.0)
            y = b.op("Mul", [y, b.const(factor.astype(b.dtype(x)), "factor")])
    else:
        if any(extra):
            x = _pad(b, x, [0] * nsp, extra, 0)
        y = b.op("LpPool", [x], p=int(g.p), pads=list(g.before) + list(g.after), **common)
    return [_to_cl(b, y, nd) if g.channels_last else y]


def _counts(g, real_only: bool):
    """Cells of each window inside the padded input (or inside the input itself when
    ``real_only``), shape ``(1, 1, *out)``."""
    per_axis = []
    for o, s, k, bf, sz, af in zip(g.out, g.stride, g.kernel, g.before, g.size, g.after):
        lo, hi = (bf, bf + sz) if real_only else (0, bf + sz + af)
        starts = numpy.arange(o) * s
        per_axis.append(numpy.maximum(numpy.minimum(starts + k, hi) - numpy.maximum(starts, lo),
                                      0))
    c = per_axis[0]
    for a in per_axis[1:]:
        c = numpy.multiply.outer(c, a)
    return c.reshape((1, 1) + tuple(g.out)).astype(numpy.float64)


def _pad(b, x, before, after, value):
    nsp = len(before)
    pads = [0, 0] + list(before) + [0, 0] + list(after)
    v = b.const(numpy.asarray(value, dtype=b.dtype(x)), "padvalue")
    return b.op("Pad", [x, b.ints(pads, "pads"), v], mode="constant", dtype=b.dtype(x)) \
        if nsp else x


_ACT = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "softrelu": "Softplus",
        "softsign": "Softsign"}


def _activation(b, n, ins, attrs):
    act = attrs.get("act_type", "relu")
    if act in _ACT:
        return [b.op(_ACT[act], [ins[0]])]
    if act == "log_sigmoid":
        return E._log_sigmoid(b, n, ins, attrs)
    if act == "mish":
        return E._mish(b, n, ins, attrs)
    raise ExportError(f"Activation: act_type {act!r}")


def _leaky_relu(b, n, ins, attrs):
    act = attrs.get("act_type", "leaky")
    x = ins[0]
    if act == "leaky":
        return [b.op("LeakyRelu", [x], alpha=float(attrs.get("slope", 0.25)))]
    if act == "rrelu":
        slope = (attrs.get("lower_bound", 0.125) + attrs.get("upper_bound", 0.334)) / 2.0
        return [b.op("LeakyRelu", [x], alpha=float(slope))]
    if act == "elu":
        return [b.op("Elu", [x], alpha=float(attrs.get("slope", 0.25)))]
    if act == "selu":
        return [b.op("Selu", [x], alpha=E.SELU_ALPHA, gamma=E.SELU_SCALE)]
    if act in ("gelu", "gelu_erf", "gelu_tanh"):
        return [E.gelu(b, x, act == "gelu_tanh")]
    if act == "prelu":
        shape = b.in_shape(0)
        gamma = ins[1]
        gs = b.in_shape(1)
        if len(shape) > 1 and not (len(gs) == 1 and gs[0] == 1):
            gamma = b.reshape(gamma, [-1] + [1] * (len(shape) - 2))
        return [b.op("PRelu", [x, gamma])]
    raise ExportError(f"LeakyReLU: act_type {act!r}")


def _rrelu(b, n, ins, attrs):
    slope = (attrs.get("lower_bound", 0.125) + attrs.get("upper_bound", 0.334)) / 2.0
    return [b.op("LeakyRelu", [ins[0]], alpha=float(slope)), None]


def _softmax_like(op_type):
    def rule(b, n, ins, attrs):
        if attrs.get("use_length"):
            raise ExportError(f"{n.op.name}: use_length=True")
        x = ins[0]
        dt = b.out_dtype()
        x = b.cast(x, dt)
        t = attrs.get("temperature")
        if t is not None and float(t) != 1.0:
            x = b.op("Div", [x, b.const(numpy.asarray(t, dtype=dt), "temperature")])
        nd = len(b.in_shape(0))
        return [b.op(op_type, [x], axis=int(attrs.get("axis", -1)) % max(nd, 1))]

    return rule


def _softmax_output(b, n, ins, attrs):
    """Inference of MXNet's SoftmaxOutput: the softmax (the label is not used)."""
    x = ins[0]
    shape = b.in_shape(0)
    if attrs.get("multi_output"):
        return [b.op("Softmax", [x], axis=1)]
    if attrs.get("preserve_shape") or len(shape) <= 2:
        return [b.op("Softmax", [x], axis=len(shape) - 1)]
    y = b.op("Softmax", [b.op("Flatten", [x], axis=1)], axis=1)
    return [b.op("Reshape", [y, b.shape_of(x)])]


def _dropout(b, n, ins, attrs):
    if attrs.get("training") is True and attrs.get("p", 0.5) > 0:
        raise ExportError("Dropout with training fixed to True (random at inference)")
    return [ins[0], None]


def _embedding(b, n, ins, attrs):
    idx = b.cast(ins[0], numpy.int64)
    return [b.op("Gather", [ins[1], idx], axis=0)]


def _take(b, n, ins, attrs):
    shape = b.in_shape(0)
    axis = int(attrs.get("axis", 0)) % len(shape)
    mode = attrs.get("mode", "clip")
    idx = b.cast(ins[1], numpy.int64)
    if b.in_dynamic(0)[axis] and mode in ("clip", "wrap"):
        raise ExportError(f"take: mode {mode!r} along the dynamic axis {axis}")
    size = shape[axis]
    if mode == "clip":
        idx = b.op("Clip", [idx, b.const(numpy.int64(0), "lo"),
                            b.const(numpy.int64(size - 1), "hi")])
    elif mode == "wrap":
        idx = b.op("Mod", [idx, b.const(numpy.int64(size), "size")], fmod=0)
    return [b.op("Gather", [ins[0], idx], axis=axis)]


def _one_hot(b, n, ins, attrs):
    depth = int(attrs.get("depth", 1))
    dt = b.out_dtype()
    values = b.const(numpy.asarray([attrs.get("off_value", 0.0), attrs.get("on_value", 1.0)],
                                   dtype=dt), "values")
    idx = b.cast(ins[0], numpy.int64)
    return [b.op("OneHot", [idx, b.const(numpy.asarray([depth], numpy.int64), "depth"), values],
                 axis=-1)]


def _bias_act(b, n, ins, attrs):
    nd = len(b.in_shape(0))
    axis = int(attrs.get("axis", -1)) % nd
    bias = b.reshape(ins[1], [1] * axis + [-1] + [1] * (nd - axis - 1))
    y = b.op("Add", [ins[0], bias])
    return _activation(b, n, [y], {"act_type": attrs.get("act_type", "relu")})


def _upsampling(b, n, ins, attrs):
    if attrs.get("sample_type", "nearest") != "nearest" or len([i for i in ins if i]) != 1:
        raise ExportError("UpSampling: only nearest with one input")
    s = float(attrs.get("scale", 1))
    scales = b.const(numpy.asarray([1.0, 1.0, s, s], dtype=numpy.float32), "scales")
    return [b.op("Resize", [ins[0], "", scales], mode="nearest",
                 nearest_mode="floor", coordinate_transformation_mode="asymmetric")]


RULES = {
    "Convolution": _convolution, "Deconvolution": _deconvolution,
    "FullyConnected": _fully_connected, "Pooling": _pooling, "Activation": _activation,
    "LeakyReLU": _leaky_relu, "_rrelu": _rrelu, "softmax": _softmax_like("Softmax"),
    "log_softmax": _softmax_like("LogSoftmax"), "SoftmaxOutput": _softmax_output,
    "Dropout": _dropout, "Embedding": _embedding, "take": _take, "one_hot": _one_hot,
    "_bias_act": _bias_act, "UpSampling": _upsampling,
}
