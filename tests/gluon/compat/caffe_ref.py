"""A NumPy forward pass with Caffe's semantics: the reference of the converter's tests.

Written from Caffe's layer definitions (each function's docstring says what it does), in
float64, independently of the converter: :func:`forward` walks a ``caffe.NetParameter``
the way Caffe's ``Net`` does (TEST phase, blobs by name, in-place tops) and runs each
layer on NumPy arrays, taking the weights from ``{layer name: [arrays]}``.
"""
from __future__ import annotations

import math

import numpy as np


def _geom(h, w, param, plural, n=2, default=None):
    if h and param.HasField(h):
        return int(getattr(param, h)), int(getattr(param, w))
    vals = [int(v) for v in getattr(param, plural)] if plural else []
    if not vals:
        return (default,) * n
    return tuple(vals) * n if len(vals) == 1 else tuple(vals)


def conv(x, w, b, stride, pad, dil, group):
    """Caffe's Convolution: cross-correlation, zero padding, groups, dilation."""
    n, _, hh, ww = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    oh = (hh + 2 * pad[0] - (dil[0] * (kh - 1) + 1)) // stride[0] + 1
    ow = (ww + 2 * pad[1] - (dil[1] * (kw - 1) + 1)) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dil[0]:i * dil[0] + stride[0] * (oh - 1) + 1:stride[0],
                           j * dil[1]:j * dil[1] + stride[1] * (ow - 1) + 1:stride[1]]
                out[:, g * og:(g + 1) * og] += np.einsum(
                    "nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


def deconv(x, w, b, stride, pad, dil, group):
    """Caffe's Deconvolution (the adjoint of Convolution); weights (C_in, out/group, kh, kw)."""
    n, c, hh, ww = x.shape
    _, og, kh, kw = w.shape
    cg = c // group
    oh = stride[0] * (hh - 1) + dil[0] * (kh - 1) + 1 - 2 * pad[0]
    ow = stride[1] * (ww - 1) + dil[1] * (kw - 1) + 1 - 2 * pad[1]
    full = np.zeros((n, og * group, oh + 2 * pad[0], ow + 2 * pad[1]))
    for g in range(group):
        for i in range(kh):
            for j in range(kw):
                contrib = np.einsum("nchw,co->nohw", x[:, g * cg:(g + 1) * cg],
                                    w[g * cg:(g + 1) * cg, :, i, j])
                full[:, g * og:(g + 1) * og,
                     i * dil[0]:i * dil[0] + stride[0] * (hh - 1) + 1:stride[0],
                     j * dil[1]:j * dil[1] + stride[1] * (ww - 1) + 1:stride[1]] += contrib
    out = full[:, :, pad[0]:pad[0] + oh, pad[1]:pad[1] + ow]
    if b is not None:
        out = out + b.reshape(1, -1, 1, 1)
    return out


def pool(x, method, kernel, stride, pad, ceil=True):
    """Caffe's Pooling loops (pooling_layer.cpp): output size with ceil (or floor) and the
    clip that the last window starts inside the image; MAX over the in-image cells; AVE
    summing in-image cells divided by the window clipped to the padded image."""
    n, c, hh, ww = x.shape
    rnd = math.ceil if ceil else math.floor
    ph = int(rnd((hh + 2 * pad[0] - kernel[0]) / stride[0])) + 1
    pw = int(rnd((ww + 2 * pad[1] - kernel[1]) / stride[1])) + 1
    if pad[0] or pad[1]:
        if (ph - 1) * stride[0] >= hh + pad[0]:
            ph -= 1
        if (pw - 1) * stride[1] >= ww + pad[1]:
            pw -= 1
    out = np.zeros((n, c, ph, pw))
    for i in range(ph):
        for j in range(pw):
            hs, ws = i * stride[0] - pad[0], j * stride[1] - pad[1]
            he, we = min(hs + kernel[0], hh + pad[0]), min(ws + kernel[1], ww + pad[1])
            size = (he - hs) * (we - ws)
            hs, ws, he, we = max(hs, 0), max(ws, 0), min(he, hh), min(we, ww)
            win = x[:, :, hs:he, ws:we]
            if method == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                out[:, :, i, j] = win.sum(axis=(2, 3)) / size
    return out


def lrn_across(x, size, alpha, beta, k):
    """scale = k + alpha / size * sum of x^2 over ``size`` channels centred (zero-padded)."""
    sq = np.pad(x * x, ((0, 0), (size // 2, size // 2), (0, 0), (0, 0)))
    s = sum(sq[:, i:i + x.shape[1]] for i in range(size))
    return x * (k + alpha / size * s) ** -beta


def lrn_within(x, size, alpha, beta):
    """scale = 1 + alpha / size^2 * sum of x^2 over the size x size spatial window."""
    half = (size - 1) // 2
    sq = np.pad(x * x, ((0, 0), (0, 0), (half, half), (half, half)))
    s = sum(sq[:, :, i:i + x.shape[2], j:j + x.shape[3]] for i in range(size)
            for j in range(size))
    return x * (1 + alpha / size ** 2 * s) ** -beta


def _blob_axis(axis, ndim):
    return axis % ndim


def layer_forward(layer, bottoms, w):
    """One layer on float64 arrays; ``w`` is its list of weight arrays."""
    t = layer.type
    x = bottoms[0] if bottoms else None
    if t in ("Convolution", "Deconvolution"):
        p = layer.convolution_param
        kernel = _geom("kernel_h", "kernel_w", p, "kernel_size")
        stride = _geom("stride_h", "stride_w", p, "stride", default=1)
        pad = _geom("pad_h", "pad_w", p, "pad", default=0)
        dil = _geom(None, None, p, "dilation", default=1)
        wt = w[0].reshape(w[0].shape[:2] + kernel)
        b = w[1] if p.bias_term else None
        fn = conv if t == "Convolution" else deconv
        return [fn(x, wt, b, stride, pad, dil, p.group)]
    if t == "InnerProduct":
        p = layer.inner_product_param
        axis = _blob_axis(p.axis, x.ndim)
        flat = x.reshape(x.shape[:axis] + (-1,))
        wt = w[0].T if p.transpose else w[0]
        y = flat @ wt.T
        return [y + w[1] if p.bias_term else y]
    if t == "Pooling":
        p = layer.pooling_param
        method = {0: "max", 1: "avg"}[p.pool]
        if p.global_pooling:
            return [x.max(axis=(2, 3), keepdims=True) if method == "max"
                    else x.mean(axis=(2, 3), keepdims=True)]
        kernel = (p.kernel_h, p.kernel_w) if p.HasField("kernel_h") else (p.kernel_size,) * 2
        stride = (p.stride_h, p.stride_w) if p.HasField("stride_h") else (p.stride,) * 2
        pad = (p.pad_h, p.pad_w) if p.HasField("pad_h") else (p.pad,) * 2
        return [pool(x, method, kernel, stride, pad, ceil=p.round_mode == 0)]
    if t == "ReLU":
        s = layer.relu_param.negative_slope
        return [np.where(x > 0, x, x * s)]
    if t == "PReLU":
        a = w[0].reshape(1, -1, *([1] * (x.ndim - 2))) if w[0].size > 1 else w[0].reshape(())
        return [np.where(x > 0, x, x * a)]
    if t == "Sigmoid":
        return [1 / (1 + np.exp(-x))]
    if t == "TanH":
        return [np.tanh(x)]
    if t == "LRN":
        p = layer.lrn_param
        if p.norm_region == 0:
            return [lrn_across(x, p.local_size, p.alpha, p.beta, p.k)]
        return [lrn_within(x, p.local_size, p.alpha, p.beta)]
    if t == "Dropout":
        return [x]  # TEST phase: Caffe's dropout is the identity (it scales in training)
    if t == "Concat":
        p = layer.concat_param
        axis = p.axis if p.HasField("axis") or not p.HasField("concat_dim") else p.concat_dim
        return [np.concatenate(bottoms, axis=axis)]
    if t == "Eltwise":
        p = layer.eltwise_param
        if p.operation == 0:
            return [np.prod(bottoms, axis=0)]
        if p.operation == 2:
            return [np.max(bottoms, axis=0)]
        coeff = list(p.coeff) or [1.0] * len(bottoms)
        return [sum(c * b for c, b in zip(coeff, bottoms))]
    if t == "Flatten":
        p = layer.flatten_param
        a, e = _blob_axis(p.axis, x.ndim), _blob_axis(p.end_axis, x.ndim)
        return [x.reshape(x.shape[:a] + (-1,) + x.shape[e + 1:])]
    if t == "Softmax":
        axis = layer.softmax_param.axis
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return [e / e.sum(axis=axis, keepdims=True)]
    if t == "BatchNorm":
        p = layer.batch_norm_param
        f = 0.0 if w[2].reshape(-1)[0] == 0 else 1.0 / w[2].reshape(-1)[0]
        shape = (1, -1) + (1,) * (x.ndim - 2)
        mean, var = (w[0] * f).reshape(shape), (w[1] * f).reshape(shape)
        eps = float(np.float32(p.eps))
        return [(x - mean) / np.sqrt(var + eps)]
    if t == "Scale":
        p = layer.scale_param
        axis = _blob_axis(p.axis, x.ndim)
        scale = bottoms[1] if len(bottoms) == 2 else w[0]
        shape = (1,) * axis + scale.shape + (1,) * (x.ndim - axis - scale.ndim)
        y = x * scale.reshape(shape)
        if p.bias_term:
            y = y + w[-1].reshape(shape)
        return [y]
    if t == "Bias":
        p = layer.bias_param
        axis = _blob_axis(p.axis, x.ndim)
        bias = bottoms[1] if len(bottoms) == 2 else w[0]
        return [x + bias.reshape((1,) * axis + bias.shape + (1,) * (x.ndim - axis - bias.ndim))]
    if t == "ELU":
        return [np.where(x > 0, x, layer.elu_param.alpha * (np.exp(x) - 1))]
    if t == "AbsVal":
        return [np.abs(x)]
    if t == "BNLL":
        return [np.where(x > 0, x + np.log1p(np.exp(-x)), np.log1p(np.exp(x)))]
    if t == "Power":
        p = layer.power_param
        return [(p.shift + p.scale * x) ** p.power]
    if t == "Reshape":
        p = layer.reshape_param
        start = p.axis if p.axis >= 0 else x.ndim + p.axis + 1
        end = x.ndim if p.num_axes == -1 else start + p.num_axes
        mid = [x.shape[start + i] if d == 0 else d for i, d in enumerate(p.shape.dim)]
        return [x.reshape(x.shape[:start] + tuple(mid) + x.shape[end:])]
    if t == "Crop":
        p = layer.crop_param
        ref = bottoms[1]
        axis = _blob_axis(p.axis, x.ndim)
        index = []
        for i in range(x.ndim):
            if i < axis:
                index.append(slice(None))
                continue
            off = p.offset[0] if len(p.offset) == 1 else p.offset[i - axis] if p.offset else 0
            index.append(slice(off, off + ref.shape[i]))
        return [x[tuple(index)]]
    if t == "Slice":
        p = layer.slice_param
        axis = p.axis if p.HasField("axis") or not p.HasField("slice_dim") else p.slice_dim
        points = list(p.slice_point) or [x.shape[axis] // len(layer.top) * i
                                         for i in range(1, len(layer.top))]
        return np.split(x, points, axis=axis)
    if t == "Split":
        return [x] * len(layer.top)
    raise ValueError(f"reference: no layer type {t!r}")


def forward(net, weights: dict, inputs: dict) -> dict:
    """Run ``net`` (a ``caffe.NetParameter``) on ``inputs`` ({blob: array}).

    Returns:
        ``{blob name: array}`` after the last layer (in-place tops hold their last value).
    """
    blobs = {k: np.asarray(v, dtype="float64") for k, v in inputs.items()}
    for layer in net.layer:
        if layer.type == "Input":
            continue
        bottoms = [blobs[b] for b in layer.bottom]
        w = [np.asarray(a, dtype="float64") for a in weights.get(layer.name, [])]
        for top, out in zip(layer.top, layer_forward(layer, bottoms, w)):
            blobs[top] = out
    return blobs
