"""Rows for the convolution family (core/ops/nn/conv.py).

The references are deliberately slow and direct: loops over output (or input)
positions with the padding, stride, dilation and groups applied by hand, in float64.
Every case runs in both layouts: the channels-last sample is the channels-first one
transposed (data to (N, *spatial, C), weights to MXNet's (F, *kernel, C / groups)).
"""
import itertools

import numpy as np

from core import autograd, nd
from core.ops import F

from .op_db import OpSpec, Sample, rand

_TOL = {"rtol": 1e-4, "atol": 1e-5}


# ------------------------------------------------------------------ references
def _tup(v, n, default):
    if v is None or (isinstance(v, (tuple, list)) and len(v) == 0):
        return (default,) * n
    return (v,) * n if isinstance(v, int) else tuple(v)


def _pairs(pad, x, k, s, d):
    n = len(x)
    dk = [di * (ki - 1) + 1 for ki, di in zip(k, d)]
    if pad == "valid":
        return [(0, 0)] * n
    if pad == "same":
        out = []
        for xi, si, dki in zip(x, s, dk):
            total = max((int(np.ceil(xi / si)) - 1) * si + dki - xi, 0)
            out.append((total // 2, total - total // 2))
        return out
    pad = _tup(pad, n, 0)
    return [p if isinstance(p, (tuple, list)) else (p, p) for p in pad]


def _cl(layout):
    return layout is not None and layout[-1] == "C"


def _first(a, cl):
    """Channels-first view of a channels-last array (channels from the last axis)."""
    return np.moveaxis(a, -1, 1) if cl else a


def _last(a, cl):
    return np.moveaxis(a, 1, -1) if cl else a


def _window(o, s, d, k):
    return tuple(slice(oi * si, oi * si + di * (ki - 1) + 1, di)
                 for oi, si, di, ki in zip(o, s, d, k))


def conv_ref(x, w, b=None, kernel=(), stride=(), dilate=(), pad=(), num_filter=0,
             num_group=1, no_bias=False, layout=None):
    dt = np.result_type(x, w)
    cl = _cl(layout)
    x, w = _first(x, cl).astype(np.float64), _first(w, cl).astype(np.float64)
    n, _, *xs = x.shape
    f, cg, *k = w.shape
    nsp, g = len(xs), num_group
    s, d = _tup(stride, nsp, 1), _tup(dilate, nsp, 1)
    p = _pairs(pad, xs, k, s, d)
    xpad = np.pad(x, [(0, 0), (0, 0)] + p)
    o = [(xpad.shape[2 + i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(nsp)]
    fg = f // g
    out = np.zeros((n, f) + tuple(o))
    axes = list(range(1, 2 + nsp))
    for pos in itertools.product(*[range(v) for v in o]):
        for gi in range(g):
            patch = xpad[(slice(None), slice(gi * cg, (gi + 1) * cg)) + _window(pos, s, d, k)]
            out[(slice(None), slice(gi * fg, (gi + 1) * fg)) + pos] = np.tensordot(
                patch, w[gi * fg:(gi + 1) * fg], axes=(axes, axes))
    if b is not None:
        out += b.reshape((f,) + (1,) * nsp)
    return _last(out, cl).astype(np.result_type(dt, b) if b is not None else dt)


def conv_grad_refs(x, w, gy, stride=(), dilate=(), pad=(), num_group=1, layout=None):
    """Gradients wrt the data and the weight of conv_ref given the output gradient gy."""
    cl = _cl(layout)
    x, w, gy = (_first(a, cl).astype(np.float64) for a in (x, w, gy))
    xs = x.shape[2:]
    f, cg, *k = w.shape
    nsp, g = len(xs), num_group
    s, d = _tup(stride, nsp, 1), _tup(dilate, nsp, 1)
    p = _pairs(pad, xs, k, s, d)
    xpad = np.pad(x, [(0, 0), (0, 0)] + p)
    gxpad, gw = np.zeros_like(xpad), np.zeros_like(w)
    fg = f // g
    for pos in itertools.product(*[range(v) for v in gy.shape[2:]]):
        win = _window(pos, s, d, k)
        for gi in range(g):
            cs, fs = slice(gi * cg, (gi + 1) * cg), slice(gi * fg, (gi + 1) * fg)
            gpos = gy[(slice(None), fs) + pos]  # (n, fg)
            gxpad[(slice(None), cs) + win] += np.tensordot(gpos, w[fs], axes=(1, 0))
            gw[fs] += np.tensordot(gpos, xpad[(slice(None), cs) + win], axes=(0, 0))
    crop = tuple(slice(lo, lo + xi) for (lo, _), xi in zip(p, xs))
    return _last(gxpad[(slice(None), slice(None)) + crop], cl), _last(gw, cl)


def deconv_ref(x, w, b=None, kernel=(), stride=(), dilate=(), pad=(), adj=(), target_shape=(),
               num_filter=0, num_group=1, no_bias=True, layout=None):
    """out[n, g*fg + j, i*s + t*d - lo] += x[n, c, i] * w[c, j, t] for c in group g."""
    dt = np.result_type(x, w) if b is None else np.result_type(x, w, b)
    cl = _cl(layout)
    x, w = _first(x, cl).astype(np.float64), _first(w, cl).astype(np.float64)
    n, cin, *xs = x.shape
    _, fg, *k = w.shape
    nsp, g = len(xs), num_group
    cgi = cin // g
    s, d, a = _tup(stride, nsp, 1), _tup(dilate, nsp, 1), _tup(adj, nsp, 0)
    dk = [di * (ki - 1) + 1 for ki, di in zip(k, d)]
    full = [si * (xi - 1) + dki for si, xi, dki in zip(s, xs, dk)]
    if target_shape and any(target_shape):  # MXNet: symmetric pad, the odd pixel as adj
        tot = [fu - t for fu, t in zip(full, target_shape)]
        p, a = [((t + 1) // 2,) * 2 for t in tot], [t % 2 for t in tot]
        size = list(target_shape)
    elif pad == "same":  # Keras: output x * stride
        size = [xi * si for xi, si in zip(xs, s)]
        p = _pairs("same", size, k, s, d)
    elif pad == "valid":  # Keras: output x * stride + max(kernel - stride, 0)
        size = [xi * si + max(dki - si, 0) for xi, si, dki in zip(xs, s, dk)]
        p = [(0, 0)] * nsp
    else:
        p = _pairs(pad, xs, k, s, d)
        size = [fu - lo - hi + ai for fu, (lo, hi), ai in zip(full, p, a)]
    big = np.zeros((n, fg * g) + tuple(max(fu, lo + t) for fu, (lo, _), t in
                                       zip(full, p, size)))
    for pos in itertools.product(*[range(v) for v in xs]):
        win = _window(pos, s, d, k)
        for gi in range(g):
            contrib = np.tensordot(x[(slice(None), slice(gi * cgi, (gi + 1) * cgi)) + pos],
                                   w[gi * cgi:(gi + 1) * cgi], axes=(1, 0))  # (n, fg, *k)
            big[(slice(None), slice(gi * fg, (gi + 1) * fg)) + win] += contrib
    out = big[(slice(None), slice(None)) + tuple(slice(lo, lo + t) for (lo, _), t in
                                                 zip(p, size))]
    if b is not None:
        out = out + b.reshape((-1,) + (1,) * nsp)
    return _last(out, cl).astype(dt)


def im2col_ref(x, kernel=(), stride=(), dilate=(), pad=()):
    n, c, *xs = x.shape
    nsp = len(xs)
    k = _tup(kernel, nsp, 1)
    s, d = _tup(stride, nsp, 1), _tup(dilate, nsp, 1)
    xpad = np.pad(x, [(0, 0), (0, 0)] + _pairs(pad, xs, k, s, d))
    o = [(xpad.shape[2 + i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(nsp)]
    out = np.zeros((n, c * int(np.prod(k)), int(np.prod(o))), x.dtype)
    for j, pos in enumerate(itertools.product(*[range(v) for v in o])):
        out[:, :, j] = xpad[(slice(None), slice(None)) + _window(pos, s, d, k)].reshape(n, -1)
    return out


def col2im_ref(col, output_size=(), kernel=(), stride=(), dilate=(), pad=()):
    xs = _tup(output_size, 1, 0) if isinstance(output_size, int) else tuple(output_size)
    nsp = len(xs)
    k = _tup(kernel, nsp, 1)
    s, d = _tup(stride, nsp, 1), _tup(dilate, nsp, 1)
    p = _pairs(pad, xs, k, s, d)
    n, ck, _ = col.shape
    c = ck // int(np.prod(k))
    buf = np.zeros((n, c) + tuple(xi + lo + hi for xi, (lo, hi) in zip(xs, p)))
    o = [(buf.shape[2 + i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(nsp)]
    for j, pos in enumerate(itertools.product(*[range(v) for v in o])):
        buf[(slice(None), slice(None)) + _window(pos, s, d, k)] += \
            col[:, :, j].reshape((n, c) + tuple(k))
    crop = tuple(slice(lo, lo + xi) for (lo, _), xi in zip(p, xs))
    return buf[(slice(None), slice(None)) + crop].astype(col.dtype)


# ------------------------------------------------------------------ cases
# (data shape, weight shape, bias?, attrs), channels first
_CONV = [
    ((2, 3, 6, 5), (4, 3, 3, 3), True, {"kernel": (3, 3), "num_filter": 4, "pad": (1, 1)}),
    ((2, 2, 7, 8), (3, 2, 2, 3), True, {"stride": (2, 3), "dilate": (2, 1), "pad": (1, 2)}),
    ((1, 4, 5, 5), (6, 2, 3, 3), True, {"num_group": 2, "stride": 2}),
    ((2, 3, 5, 6), (6, 1, 3, 3), False, {"num_group": 3, "pad": 1, "no_bias": True}),
    ((1, 2, 2, 3), (2, 2, 4, 4), True, {"pad": (2, 2)}),  # kernel larger than the input
    ((2, 2, 6, 5), (3, 2, 4, 2), True, {"stride": (1, 2), "pad": "same"}),  # asymmetric same
    ((1, 2, 5, 4), (2, 2, 2, 3), False, {"stride": 2, "dilate": (1, 2), "pad": "same"}),
    ((2, 2, 5, 4), (3, 2, 3, 2), True, {"pad": ((0, 2), (1, 0)), "stride": (2, 1)}),
    ((2, 2, 5, 4), (2, 2, 3, 3), True, {"pad": "valid"}),
    ((2, 3, 9), (4, 3, 3), True, {"stride": 2, "dilate": 2, "pad": 1}),
    ((1, 4, 7), (4, 1, 3), True, {"num_group": 4, "pad": "same", "stride": 2}),
    ((1, 2, 4, 5, 3), (2, 2, 2, 3, 2), True, {"stride": (1, 2, 1), "pad": (1, 0, 1)}),
    ((2, 4, 3, 4, 3), (4, 2, 2, 2, 3), True, {"num_group": 2, "pad": "same", "dilate": (1, 2, 1)}),
    # 4+ channels per group: channels-last builds (N * O, K * C) patches
    ((2, 5, 5, 4), (3, 5, 3, 2), True, {"pad": 1, "stride": (2, 1)}),
    ((1, 8, 4, 5), (4, 4, 3, 3), True, {"num_group": 2, "pad": ((1, 0), (0, 1))}),
    ((2, 4, 6), (3, 4, 3), False, {"dilate": 2, "no_bias": True}),
    ((1, 4, 3, 3, 2), (2, 4, 2, 2, 1), True, {"stride": (2, 1, 1), "pad": "same"}),
]
_CF_LAYOUT = {3: "NCW", 4: "NCHW", 5: "NCDHW"}
_CL_LAYOUT = {3: "NWC", 4: "NHWC", 5: "NDHWC"}


def _conv_samples(rows, bias_size=lambda w, a: w[0]):
    def samples(rng, dt):
        out = []
        for i, (xs, ws, has_b, at) in enumerate(rows):
            x, w = rand(rng, xs, dt), rand(rng, ws, dt)
            b = rand(rng, (bias_size(ws, at),), dt) if has_b else None
            cf_at = dict(at, layout=_CF_LAYOUT[len(xs)]) if i % 2 else dict(at)
            out.append(Sample(x, w, b, **cf_at))
            cl_at = dict(at, layout=_CL_LAYOUT[len(xs)])
            out.append(Sample(np.moveaxis(x, 1, -1).copy(), np.moveaxis(w, 1, -1).copy(), b,
                              **cl_at))
        return out

    return samples


_DECONV = [
    ((2, 3, 4, 3), (3, 2, 3, 3), True, {"stride": 2, "pad": 1, "adj": (1, 0)}),
    ((1, 4, 3, 3), (4, 1, 2, 3), True, {"num_group": 2, "stride": (2, 3), "dilate": (2, 1)}),
    ((2, 2, 3, 4), (2, 3, 3, 2), False, {"stride": 2, "target_shape": (6, 7)}),
    ((1, 2, 3, 4), (2, 2, 4, 3), True, {"stride": (2, 1), "pad": "same"}),
    ((1, 2, 3, 2), (2, 2, 1, 3), True, {"stride": 3, "pad": "same"}),  # kernel < stride
    ((1, 2, 3, 2), (2, 3, 2, 3), True, {"stride": (3, 2), "pad": "valid"}),
    ((2, 2, 3, 3), (2, 2, 3, 3), True, {"pad": ((0, 2), (1, 1)), "stride": 2, "adj": 1}),
    ((2, 3, 5), (3, 2, 3), True, {"stride": 2, "pad": 1, "adj": 1, "dilate": 2}),
    ((1, 2, 2, 3, 2), (2, 2, 2, 2, 3), True, {"stride": (2, 1, 2), "pad": (0, 1, 1)}),
    ((2, 4, 3, 2), (4, 1, 2, 2), True, {"stride": 2, "num_group": 4}),  # depthwise
    ((2, 2, 2, 3), (2, 5, 3, 2), True, {"stride": (1, 2), "pad": 1}),  # 5 filters
]


def _deconv_samples(rng, dt):
    rows = [(xs, ws, b, dict(at, no_bias=not b)) for xs, ws, b, at in _DECONV]
    return _conv_samples(rows, lambda w, a: w[1] * a.get("num_group", 1))(rng, dt)


def _patch_samples(rng, dt):
    def r(*s):
        return rand(rng, s, dt)

    return [Sample(r(2, 3, 5, 4), kernel=(3, 2), pad=1),
            Sample(r(1, 2, 6, 7), kernel=(2, 3), stride=(2, 3), dilate=(2, 1), pad=(1, 0)),
            Sample(r(2, 2, 8), kernel=3, stride=2, dilate=2),
            Sample(r(1, 2, 3, 4, 3), kernel=(2, 2, 2), pad=(1, 0, 1), stride=(1, 2, 1)),
            Sample(r(1, 2, 4, 5), kernel=(3, 3), pad="same", stride=2)]


def _col_samples(rng, dt):
    out = []
    for smp in _patch_samples(rng, dt):
        cols = im2col_ref(smp.args[0], **smp.kwargs)
        out.append(Sample(rand(rng, cols.shape, dt), output_size=smp.args[0].shape[2:],
                          **smp.kwargs))
    return out


# ------------------------------------------------------------------ second order
def _weights(shape):
    return np.cos(np.arange(int(np.prod(shape)), dtype=np.float64) * 0.7).reshape(shape)


def _grad_of(fn, argnum):
    """d/d(arg) of 0.5 * sum(u * fn(args)^2), recorded so the table differentiates it: the
    output gradient u * y then depends on the inputs, which reaches every VJP."""

    def call(*args, **kw):
        xs = list(args)
        if xs[argnum]._node is None:  # the value checks: a fresh leaf
            xs[argnum] = xs[argnum].copy()
            xs[argnum].attach_grad()
        with autograd.record():
            y = fn(*xs, **kw)
            u = nd.array(_weights(y.shape), dtype=y.dtype, ctx=y.context)
            s = F.sum_to(y * y * u, shape=()) * 0.5
        return autograd.grad(s, xs[argnum], create_graph=True)

    return call


def _conv_grad_ref(argnum):
    def ref(x, w, b=None, **at):
        gy = conv_ref(x, w, b, **at).astype(np.float64)
        gy = gy * _weights(gy.shape)
        at = {k: at[k] for k in ("stride", "dilate", "pad", "num_group", "layout") if k in at}
        return conv_grad_refs(x, w, gy, **at)[argnum].astype(x.dtype)

    return ref


def _deconv_grad_ref(argnum):
    def ref(x, w, b=None, **at):
        y = deconv_ref(x, w, b, **at).astype(np.float64)
        u = y * _weights(y.shape)
        # Deconvolution is the data gradient of the convolution of its output with w
        keep = {k: at[k] for k in ("stride", "dilate", "num_group", "layout") if k in at}
        pad = at.get("pad", ())
        if argnum == 0:
            return conv_ref(u, w, pad=pad, **keep).astype(x.dtype)
        return conv_grad_refs(u, w, x, pad=pad, **keep)[1].astype(x.dtype)

    return ref


_GRAD2_CONV = [
    ((2, 4, 4, 5), (4, 2, 3, 2), True, {"num_group": 2, "stride": (2, 1), "pad": "same"}),
    ((1, 2, 5), (3, 2, 2), False, {"dilate": 2, "pad": (1,), "no_bias": True}),
    ((2, 3, 4, 3), (3, 1, 2, 2), True, {"num_group": 3, "pad": 1}),  # depthwise
    ((1, 4, 3, 4), (2, 4, 2, 2), True, {"stride": 2, "pad": "same"}),  # 4 channels
]
_GRAD2_DECONV = [((1, 2, 3, 3), (2, 2, 3, 2), False, {"stride": 2, "pad": (1, 0)})]


def _second_order():
    fl = ("float64",)
    rows = []
    for argnum, what in ((0, "data"), (1, "weight")):
        rows.append(OpSpec("Convolution", _grad_of(nd.Convolution, argnum), _conv_grad_ref(argnum),
                           _conv_samples(_GRAD2_CONV), dtypes=fl,
                           covers=("_conv_grad_data", "_conv_grad_weight"),
                           extra={"id": f"Convolution_grad2_{what}"}, **_TOL))
        rows.append(OpSpec("Deconvolution", _grad_of(nd.Deconvolution, argnum),
                           _deconv_grad_ref(argnum), _conv_samples(_GRAD2_DECONV), dtypes=fl,
                           extra={"id": f"Deconvolution_grad2_{what}"},
                           **_TOL))
    return rows


def _call(fn):
    return lambda *a, **k: fn(*a, **k)


SPECS = [
    OpSpec("Convolution", _call(nd.Convolution), conv_ref, _conv_samples(_CONV), **_TOL),
    OpSpec("Convolution", _call(nd.convolution), conv_ref, _conv_samples(_CONV[:2]),
           dtypes=("float32",), grad=False, extra={"id": "convolution"}, **_TOL),
    OpSpec("Deconvolution", _call(nd.Deconvolution), deconv_ref, _deconv_samples, **_TOL),
    OpSpec("Deconvolution", _call(nd.deconvolution), deconv_ref,
           lambda rng, d: _deconv_samples(rng, d)[:2], dtypes=("float32",), grad=False,
           extra={"id": "deconvolution"}, **_TOL),
    OpSpec("im2col", nd.im2col, im2col_ref, _patch_samples, **_TOL),
    OpSpec("col2im", nd.col2im, col2im_ref, _col_samples, **_TOL),
] + _second_order()
