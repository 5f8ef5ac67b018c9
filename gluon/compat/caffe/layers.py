"""One converter per Caffe layer type: a ``LayerParameter`` to Symbol operators.

A converter is ``fn(builder, layer, bottoms, name) -> [top symbols]``; ``builder``
(:class:`~.convert.Builder`) gives input shapes (``builder.shape(sym)``) and makes the
parameter variables from the layer's blobs (``builder.param(...)``). :data:`CONVERTERS`
maps Caffe's type strings to them. The semantics notes are in docs/caffe.md.
"""
from __future__ import annotations

import itertools
import math

import numpy

from core import sym
from core.ops.nn.batchnorm_cudnn import CUDNN_BN_MIN_EPSILON, cudnn_eps

__all__ = ["CONVERTERS", "CaffeConversionError", "batch_norm"]


class CaffeConversionError(ValueError):
    """A layer that cannot be converted (the message names the layer and its type)."""


def _err(layer, msg: str) -> CaffeConversionError:
    return CaffeConversionError(f"caffe: layer {layer.name!r} ({layer.type}): {msg}")


def _axis(layer, axis: int, ndim: int, what: str = "axis") -> int:
    if not -ndim <= axis < ndim:
        raise _err(layer, f"{what}={axis} is out of range for a {ndim}-D input")
    return axis % ndim


def _spatial(layer, param, n, plural, h, w, default):
    """A per-spatial-axis value from ``plural`` (repeated: 1 or n values) or ``h``/``w``."""
    values = [int(v) for v in getattr(param, plural)] if plural else []
    if param.HasField(h) or param.HasField(w):
        if values:
            raise _err(layer, f"give either {plural} or {h}/{w}, not both")
        if n != 2:
            raise _err(layer, f"{h}/{w} are for 2-D inputs; this input has {n} spatial axes")
        return int(getattr(param, h)), int(getattr(param, w))
    if not values:
        if default is None:
            raise _err(layer, f"{plural} (or {h}/{w}) is required")
        return (default,) * n
    if len(values) == 1:
        return tuple(values) * n
    if len(values) != n:
        raise _err(layer, f"{plural} has {len(values)} values for {n} spatial axes")
    return tuple(values)


# ---------------------------------------------------------------- convolution
def _conv_geometry(layer, param, ndim):
    if param.axis != 1:
        raise _err(layer, f"convolution_param.axis={param.axis} is not supported (channels "
                          "must be axis 1)")
    n = ndim - 2
    if n < 1:
        raise _err(layer, f"needs an (N, C, spatial...) input, got {ndim}-D")
    kernel = _spatial(layer, param, n, "kernel_size", "kernel_h", "kernel_w", None)
    stride = _spatial(layer, param, n, "stride", "stride_h", "stride_w", 1)
    pad = _spatial(layer, param, n, "pad", "pad_h", "pad_w", 0)
    dil = tuple(int(v) for v in param.dilation) or (1,)
    dilate = dil * n if len(dil) == 1 else dil
    if len(dilate) != n:
        raise _err(layer, f"dilation has {len(dil)} values for {n} spatial axes")
    if min(kernel + stride + dilate) < 1:
        raise _err(layer, f"kernel {kernel}, stride {stride} and dilation {dilate} must be "
                          "positive")
    return kernel, stride, pad, dilate


def _convolution(b, layer, bottoms, name, deconv=False):
    param = layer.convolution_param
    shape = b.shape(bottoms[0], layer)
    kernel, stride, pad, dilate = _conv_geometry(layer, param, len(shape))
    group, num_out, channels = int(param.group), int(param.num_output), shape[1]
    if not param.HasField("num_output") or num_out < 1:
        raise _err(layer, "convolution_param.num_output is required")
    if channels % group or num_out % group:
        raise _err(layer, f"group={group} must divide the input channels ({channels}) and "
                          f"num_output ({num_out}); input shape {shape}")
    wshape = (channels, num_out // group) if deconv else (num_out, channels // group)
    weight = b.param(layer, 0, f"{name}_weight", wshape + kernel)
    bias = b.param(layer, 1, f"{name}_bias", (num_out,)) if param.bias_term else None
    op = sym.Deconvolution if deconv else sym.Convolution
    kwargs = {"bias": bias} if bias is not None else {}
    return [op(data=bottoms[0], weight=weight, kernel=kernel, stride=stride, pad=pad,
               dilate=dilate, num_filter=num_out, num_group=group, no_bias=bias is None,
               name=name, **kwargs)]


def _deconvolution(b, layer, bottoms, name):
    return _convolution(b, layer, bottoms, name, deconv=True)


def _inner_product(b, layer, bottoms, name):
    param = layer.inner_product_param
    shape = b.shape(bottoms[0], layer)
    axis = _axis(layer, param.axis, len(shape))
    k, num_out = math.prod(shape[axis:]), int(param.num_output)
    if not param.HasField("num_output") or num_out < 1:
        raise _err(layer, "inner_product_param.num_output is required")
    transform = numpy.transpose if param.transpose else None
    stored = (k, num_out) if param.transpose else (num_out, k)
    weight = b.param(layer, 0, f"{name}_weight", stored, transform=transform)
    bias = b.param(layer, 1, f"{name}_bias", (num_out,)) if param.bias_term else None
    kwargs = {"bias": bias} if bias is not None else {}
    data = bottoms[0]
    if axis != 1:
        data = sym.reshape(data, shape=(0,) * axis + (-1,), name=f"{name}_reshape")
    return [sym.FullyConnected(data=data, weight=weight, num_hidden=num_out,
                               no_bias=bias is None, flatten=axis == 1, name=name, **kwargs)]


# ---------------------------------------------------------------- pooling
def _pooling(b, layer, bottoms, name):
    param = layer.pooling_param
    shape = b.shape(bottoms[0], layer)
    if len(shape) != 4:
        raise _err(layer, f"Caffe pools 4-D (N, C, H, W) inputs, got shape {shape}")
    methods = {0: "max", 1: "avg"}
    if param.pool not in methods:
        raise _err(layer, "STOCHASTIC pooling is not supported (use MAX or AVE)")
    pool_type = methods[param.pool]
    if param.global_pooling:
        if param.HasField("kernel_size") or param.HasField("kernel_h"):
            raise _err(layer, "global_pooling takes no kernel size")
        return [sym.Pooling(bottoms[0], kernel=(1, 1), global_pool=True, pool_type=pool_type,
                            name=name)]
    kernel = _pair(layer, param, "kernel_size", "kernel_h", "kernel_w", None)
    stride = _pair(layer, param, "stride", "stride_h", "stride_w", 1)
    pad = _pair(layer, param, "pad", "pad_h", "pad_w", 0)
    if min(kernel + stride) < 1:
        raise _err(layer, f"kernel {kernel} and stride {stride} must be positive")
    ceil = param.round_mode == 0
    caffe_out, full_out = [], []
    for size, k, s, p in zip(shape[2:], kernel, stride, pad):
        if p >= k:
            raise _err(layer, f"pad {pad} must be smaller than the kernel {kernel}")
        span = size + 2 * p - k
        if span < 0:
            raise _err(layer, f"the kernel {kernel} is larger than the padded input (input "
                              f"shape {shape}, pad {pad})")
        out = (-(-span // s) if ceil else span // s) + 1
        full_out.append(out)
        # Caffe: the last window must start inside the image (or its left/top padding)
        if p and (out - 1) * s >= size + p:
            out -= 1
        caffe_out.append(out)
    out = sym.Pooling(bottoms[0], kernel=kernel, stride=stride, pad=pad, pool_type=pool_type,
                      pooling_convention="full" if ceil else "valid",
                      **({"count_include_pad": True} if pool_type == "avg" else {}),
                      name=name if caffe_out == full_out else f"{name}_full")
    for axis, (want, got) in enumerate(zip(caffe_out, full_out), start=2):
        if want != got:
            last = axis == 3 or caffe_out[1] == full_out[1]
            out = sym.slice_axis(out, axis=axis, begin=0, end=want,
                                 name=name if last else f"{name}_clip{axis}")
    return [out]


def _pair(layer, param, single, h, w, default):
    if param.HasField(h) or param.HasField(w):
        if param.HasField(single):
            raise _err(layer, f"give either {single} or {h}/{w}, not both")
        if not (param.HasField(h) and param.HasField(w)):
            raise _err(layer, f"{h} and {w} go together (Caffe requires both)")
        return int(getattr(param, h)), int(getattr(param, w))
    if not param.HasField(single) and default is None:
        raise _err(layer, f"{single} (or {h}/{w}) is required")
    v = int(getattr(param, single)) if param.HasField(single) else default
    return v, v


# ---------------------------------------------------------------- activations
def _relu(b, layer, bottoms, name):
    slope = float(layer.relu_param.negative_slope)
    if slope:
        return [sym.LeakyReLU(bottoms[0], act_type="leaky", slope=slope, name=name)]
    return [sym.Activation(bottoms[0], act_type="relu", name=name)]


def _prelu(b, layer, bottoms, name):
    shape = b.shape(bottoms[0], layer)
    if len(shape) < 2:
        raise _err(layer, f"needs an (N, C, ...) input, got shape {shape}")
    gshape = (1,) if layer.prelu_param.channel_shared else (shape[1],)
    gamma = b.param(layer, 0, f"{name}_gamma", gshape)
    return [sym.LeakyReLU(bottoms[0], gamma=gamma, act_type="prelu", name=name)]


def _activation(act_type):
    def convert(b, layer, bottoms, name):
        return [sym.Activation(bottoms[0], act_type=act_type, name=name)]
    return convert


def _lrn(b, layer, bottoms, name):
    param = layer.lrn_param
    size = int(param.local_size)
    if size % 2 == 0:
        raise _err(layer, f"local_size must be odd, got {size}")
    alpha, beta = float(param.alpha), float(param.beta)
    if param.norm_region == 0:  # ACROSS_CHANNELS: k + alpha / size * sum over channels
        return [sym.LRN(bottoms[0], alpha=alpha, beta=beta, knorm=float(param.k), nsize=size,
                        name=name)]
    # WITHIN_CHANNEL: x * (1 + alpha * mean of x^2 over the size x size window) ^ -beta,
    # the window zero-padded (the average divides by size * size everywhere)
    x = bottoms[0]
    half = (size - 1) // 2
    avg = sym.Pooling(sym.square(x, name=f"{name}_square"), kernel=(size, size),
                      stride=(1, 1), pad=(half, half), pool_type="avg",
                      count_include_pad=True, name=f"{name}_pool")
    scale = (avg * alpha + 1.0) ** (-beta)
    return [sym.elemwise_mul(x, scale, name=name)]


# ---------------------------------------------------------------- structure
def _dropout(b, layer, bottoms, name):
    return [sym.Dropout(bottoms[0], p=float(layer.dropout_param.dropout_ratio), name=name)]


def _concat(b, layer, bottoms, name):
    param = layer.concat_param
    axis = param.axis if param.HasField("axis") or not param.HasField("concat_dim") \
        else param.concat_dim
    ndim = len(b.shape(bottoms[0], layer))
    axis = _axis(layer, axis, ndim)
    return [sym.Concat(*bottoms, dim=axis, num_args=len(bottoms), name=name)]


def _eltwise(b, layer, bottoms, name):
    param = layer.eltwise_param
    coeff = [float(c) for c in param.coeff]
    if len(bottoms) < 2:
        raise _err(layer, f"needs at least 2 bottoms, got {len(bottoms)}")
    if coeff and param.operation != 1:
        raise _err(layer, "coeff is only for operation SUM")
    if coeff and len(coeff) != len(bottoms):
        raise _err(layer, f"{len(coeff)} coeff values for {len(bottoms)} bottoms")
    terms = bottoms
    if param.operation == 1:  # SUM, each bottom times its coeff
        terms = [x if c == 1.0 else x * c
                 for x, c in zip(bottoms, coeff or [1.0] * len(bottoms))]
    op = {0: sym.elemwise_mul, 1: sym.elemwise_add, 2: sym.broadcast_maximum}[param.operation]
    out = terms[0]
    for i, x in enumerate(terms[1:], start=1):
        out = op(out, x, name=name if i == len(terms) - 1 else f"{name}_{i}")
    return [out]


def _flatten(b, layer, bottoms, name):
    param = layer.flatten_param
    shape = b.shape(bottoms[0], layer)
    axis = _axis(layer, param.axis, len(shape))
    end = _axis(layer, param.end_axis, len(shape), "end_axis")
    if end < axis:
        raise _err(layer, f"end_axis={param.end_axis} comes before axis={param.axis} "
                          f"(input shape {shape})")
    if axis == 1 and end == len(shape) - 1:
        return [sym.Flatten(bottoms[0], name=name)]
    target = (0,) * axis + (-1,) + tuple(shape[end + 1:])
    return [sym.reshape(bottoms[0], shape=target, name=name)]


def _softmax(b, layer, bottoms, name):
    ndim = len(b.shape(bottoms[0], layer))
    axis = _axis(layer, layer.softmax_param.axis, ndim)
    return [sym.softmax(bottoms[0], axis=axis, name=name)]


def _slice(b, layer, bottoms, name):
    p = layer.slice_param
    shape = b.shape(bottoms[0], layer)
    axis = p.axis if p.HasField("axis") or not p.HasField("slice_dim") else p.slice_dim
    axis = _axis(layer, axis, len(shape))
    tops, size = len(layer.top), shape[axis]
    points = [int(v) for v in p.slice_point]
    if points:
        if len(points) != tops - 1:
            raise _err(layer, f"{len(points)} slice_point values for {tops} tops (needs "
                              f"{tops - 1})")
        bounds = [0, *points, size]
        if any(lo >= hi for lo, hi in itertools.pairwise(bounds)):
            raise _err(layer, f"slice_point {points} must increase inside (0, {size}) "
                              f"(axis {axis} of {shape})")
    else:
        if size % tops:
            raise _err(layer, f"axis {axis} of {shape} ({size}) does not split into {tops} "
                              "equal parts")
        bounds = [i * size // tops for i in range(tops + 1)]
    return [sym.slice_axis(bottoms[0], axis=axis, begin=lo, end=hi, name=f"{name}_{i}")
            for i, (lo, hi) in enumerate(itertools.pairwise(bounds))]


def _split(b, layer, bottoms, name):
    return [bottoms[0]] * len(layer.top)


# ---------------------------------------------------------------- normalization
def batch_norm(b, layer, bottoms, name, scale_layer=None):
    """BatchNorm, with a following Scale layer (``scale_layer``) folded into gamma/beta.

    Caffe's blobs are the running mean and variance sums and their scale factor
    (``blobs[2]``); they are divided by it (a factor of 0 gives zeros). An ``eps`` below
    cuDNN's 1e-5 is raised to 1e-5 with the variance shifted by the difference, so
    ``var + eps`` is unchanged (:func:`core.ops.nn.batchnorm_cudnn.cudnn_eps`).
    """
    param = layer.batch_norm_param
    shape = b.shape(bottoms[0], layer)
    if len(shape) < 2:
        raise _err(layer, f"needs an (N, C, ...) input, got shape {shape}")
    c = shape[1]
    eps = float(param.eps)
    eps_out = max(eps, CUDNN_BN_MIN_EPSILON)

    def stats(arrays):
        mean, var, factor = arrays
        f = float(factor.reshape(-1)[0]) if factor.size else 1.0
        f = 0.0 if f == 0 else 1.0 / f
        var = (var.astype("float64") * f).astype("float32")
        return (mean * f).astype("float32"), cudnn_eps(var, eps)[0]

    mean, var = b.params_from(layer, (0, 1, 2), ((c,), (c,), (1,)), stats,
                              (f"{name}_moving_mean", f"{name}_moving_var"), aux=True)
    if scale_layer is not None:
        gamma = b.param(scale_layer, 0, f"{name}_gamma", (c,))
        beta = b.param(scale_layer, 1, f"{name}_beta", (c,)) \
            if scale_layer.scale_param.bias_term else b.constant(f"{name}_beta", (c,), 0.0)
    else:
        gamma = b.constant(f"{name}_gamma", (c,), 1.0)
        beta = b.constant(f"{name}_beta", (c,), 0.0)
    global_stats = param.use_global_stats if param.HasField("use_global_stats") else True
    return [sym.BatchNorm(bottoms[0], gamma=gamma, beta=beta, moving_mean=mean,
                          moving_var=var, eps=eps_out,
                          momentum=float(param.moving_average_fraction),
                          fix_gamma=scale_layer is None, use_global_stats=bool(global_stats),
                          name=name)]


def foldable_scale(layer) -> bool:
    """Whether a Scale layer can become a preceding BatchNorm's gamma/beta."""
    p = layer.scale_param
    return layer.type == "Scale" and len(layer.bottom) == 1 and p.axis in (1, -3) \
        and p.num_axes == 1


def _operand_shape(layer, shape: tuple, axis: int, num: int) -> tuple:
    """The shape of a Scale/Bias layer's own blob: ``num_axes`` axes of the input from
    ``axis`` (-1: all the rest; 0: a scalar, ``(1,)``)."""
    if num < -1:
        raise _err(layer, f"num_axes={num} must be -1 or more")
    return tuple(shape[axis:] if num == -1 else shape[axis:axis + num]) or (1,)


def _broadcast_shape(layer, what: str, shape: tuple, axis: int, oshape: tuple) -> tuple:
    """``oshape`` (a Scale/Bias operand) padded with ones to broadcast against ``shape``
    from ``axis``; a scalar ``(1,)`` broadcasts everywhere."""
    if oshape == (1,):
        return (1,) * len(shape)
    if tuple(shape[axis:axis + len(oshape)]) != tuple(oshape):
        raise _err(layer, f"the {what}'s shape {oshape} does not match the input's {shape} "
                          f"from axis {axis}")
    return (1,) * axis + tuple(oshape) + (1,) * (len(shape) - axis - len(oshape))


def _scale(b, layer, bottoms, name):
    param = layer.scale_param
    x = bottoms[0]
    shape = b.shape(x, layer)
    axis = _axis(layer, param.axis, len(shape))
    if len(bottoms) == 2:
        factor, sshape = bottoms[1], b.shape(bottoms[1], layer)
        bias_index = 0
    else:
        sshape = _operand_shape(layer, shape, axis, param.num_axes)
        factor = b.param(layer, 0, f"{name}_weight", sshape)
        bias_index = 1
    bshape = _broadcast_shape(layer, "scale", shape, axis, sshape)
    out = sym.broadcast_mul(x, sym.reshape(factor, shape=bshape, name=f"{name}_wshape"),
                            name=name if not param.bias_term else f"{name}_mul")
    if param.bias_term:
        bias = b.param(layer, bias_index, f"{name}_bias", sshape)
        out = sym.broadcast_add(out, sym.reshape(bias, shape=bshape, name=f"{name}_bshape"),
                                name=name)
    return [out]


def _bias(b, layer, bottoms, name):
    param = layer.bias_param
    x = bottoms[0]
    shape = b.shape(x, layer)
    axis = _axis(layer, param.axis, len(shape))
    if len(bottoms) == 2:
        bias, bshape = bottoms[1], b.shape(bottoms[1], layer)
    else:
        bshape = _operand_shape(layer, shape, axis, param.num_axes)
        bias = b.param(layer, 0, f"{name}_bias", bshape)
    full = _broadcast_shape(layer, "bias", shape, axis, bshape)
    return [sym.broadcast_add(x, sym.reshape(bias, shape=full, name=f"{name}_bshape"),
                              name=name)]


def _elu(b, layer, bottoms, name):
    return [sym.LeakyReLU(bottoms[0], act_type="elu", slope=float(layer.elu_param.alpha),
                          name=name)]


def _absval(b, layer, bottoms, name):
    return [sym.abs(bottoms[0], name=name)]


def _bnll(b, layer, bottoms, name):
    return [sym.Activation(bottoms[0], act_type="softrelu", name=name)]


def _power(b, layer, bottoms, name):
    """``(shift + scale * x) ** power``."""
    p = layer.power_param
    y = bottoms[0]
    if p.scale != 1.0:
        y = y * float(p.scale)
    if p.shift != 0.0:
        y = y + float(p.shift)
    if p.power != 1.0:
        y = y ** float(p.power)
    return [y if y is not bottoms[0] else sym.identity(y, name=name)]


def _reshape(b, layer, bottoms, name):
    p = layer.reshape_param
    shape = b.shape(bottoms[0], layer)
    ndim = len(shape)
    start = p.axis if p.axis >= 0 else ndim + p.axis + 1
    if not 0 <= start <= ndim:
        raise _err(layer, f"axis={p.axis} is out of range for the input shape {shape}")
    end = ndim if p.num_axes == -1 else start + p.num_axes
    if p.num_axes < -1 or end > ndim:
        raise _err(layer, f"num_axes={p.num_axes} is out of range for the input shape "
                          f"{shape} from axis {start}")
    dims = [int(d) for d in p.shape.dim]
    if dims.count(-1) > 1:
        raise _err(layer, f"at most one -1 in reshape_param.shape, got {dims}")
    mid = []
    for i, d in enumerate(dims):
        if d == 0:
            if start + i >= ndim:
                raise _err(layer, f"shape dim {i} copies input axis {start + i}, which the "
                                  f"input shape {shape} lacks")
            d = shape[start + i]
        mid.append(d)
    target = list(shape[:start]) + mid + list(shape[end:])
    if -1 in target:
        known = math.prod(d for d in target if d != -1)
        total = math.prod(shape)
        if known == 0 or total % known:
            raise _err(layer, f"cannot reshape {shape} to {tuple(dims)} (axis {start})")
        target[target.index(-1)] = total // known
    if math.prod(target) != math.prod(shape):
        raise _err(layer, f"cannot reshape {shape} ({math.prod(shape)} values) to "
                          f"{tuple(target)}")
    keeps_batch = start > 0 or (dims and dims[0] == 0)
    out_shape = ((0,) + tuple(target[1:])) if keeps_batch else tuple(target)
    return [sym.reshape(bottoms[0], shape=out_shape, name=name)]


def _crop(b, layer, bottoms, name):
    if len(bottoms) != 2:
        raise _err(layer, f"needs 2 bottoms (the blob and the reference), got {len(bottoms)}")
    p = layer.crop_param
    sa, sb = b.shape(bottoms[0], layer), b.shape(bottoms[1], layer)
    if len(sa) != len(sb):
        raise _err(layer, f"the bottoms have shapes {sa} and {sb} of different ranks")
    axis = _axis(layer, p.axis, len(sa))
    offsets = [int(o) for o in p.offset]
    if len(offsets) not in (0, 1, len(sa) - axis):
        raise _err(layer, f"{len(offsets)} offsets for the {len(sa) - axis} axes from "
                          f"axis {axis}")
    out = bottoms[0]
    cropped = list(range(axis, len(sa)))
    for i in cropped:
        off = offsets[0] if len(offsets) == 1 else offsets[i - axis] if offsets else 0
        if off + sb[i] > sa[i]:
            raise _err(layer, f"axis {i}: offset {off} + size {sb[i]} exceeds {sa[i]} "
                              f"(shapes {sa} and {sb})")
        out = sym.slice_axis(out, axis=i, begin=off, end=off + sb[i],
                             name=name if i == cropped[-1] else f"{name}_axis{i}")
    return [out]


def _batch_norm(b, layer, bottoms, name):
    return batch_norm(b, layer, bottoms, name)


CONVERTERS = {
    "Convolution": _convolution, "Deconvolution": _deconvolution,
    "InnerProduct": _inner_product, "Pooling": _pooling, "ReLU": _relu, "PReLU": _prelu,
    "Sigmoid": _activation("sigmoid"), "TanH": _activation("tanh"), "LRN": _lrn,
    "Dropout": _dropout, "Concat": _concat, "Eltwise": _eltwise, "Flatten": _flatten,
    "Softmax": _softmax, "BatchNorm": _batch_norm, "Scale": _scale, "Split": _split,
    "Bias": _bias, "ELU": _elu, "AbsVal": _absval, "BNLL": _bnll, "Power": _power,
    "Reshape": _reshape, "Crop": _crop, "Slice": _slice,
}
"""Caffe layer type -> converter (see the module docstring)."""
