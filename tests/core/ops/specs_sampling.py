"""Rows for spatial sampling (core/ops/nn/sampling.py): resizing, UpSampling, GridGenerator
and BilinearSampler.

References are direct loops over output cells with the sampling formulas written out.
"""
import itertools
import math

import numpy as np

from core import nd
from core.ops import REGISTRY
from core.ops.namespace import namespace

from .op_db import OpSpec, Sample, rand
from .specs_shape import second_order

_TOL = {"rtol": 1e-5, "atol": 1e-5}


# ------------------------------------------------------------------ references
def _src(d, n_in, n_out, method, mode):
    """Sampling position of output cell ``d`` (see sampling.py's docstring)."""
    if mode == "align_corners":
        s = d * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        return min(math.floor(s + 0.5), n_in - 1) if method == "nearest" else s
    if mode == "half_pixel":
        if method == "nearest":
            return min(math.floor((d + 0.5) * n_in / n_out), n_in - 1)
        return max((d + 0.5) * n_in / n_out - 0.5, 0.0)
    s = d * n_in / n_out
    return min(math.floor(s), n_in - 1) if method == "nearest" else s


def _lerp_1d(n_in, n_out, method, mode):
    """[(i0, i1, w)] per output cell."""
    out = []
    for d in range(n_out):
        s = _src(d, n_in, n_out, method, mode)
        if method == "nearest":
            out.append((s, s, 0.0))
            continue
        i0 = min(math.floor(s), n_in - 1)
        i1 = min(i0 + 1, n_in - 1)
        out.append((i0, i1, s - i0 if i1 > i0 else 0.0))
    return out


def ref_resize_nchw(x, oh, ow, method, mode):
    n, c, h, w = x.shape
    rows, cols = _lerp_1d(h, oh, method, mode), _lerp_1d(w, ow, method, mode)
    out = np.zeros((n, c, oh, ow), x.dtype)
    for i, (r0, r1, a) in enumerate(rows):
        for j, (c0, c1, b) in enumerate(cols):
            top = x[:, :, r0, c0] * (1 - b) + x[:, :, r0, c1] * b
            bottom = x[:, :, r1, c0] * (1 - b) + x[:, :, r1, c1] * b
            out[:, :, i, j] = top * (1 - a) + bottom * a
    return out


def _mode(align_corners=False, half_pixel_centers=True):
    if align_corners:
        return "align_corners"
    return "half_pixel" if half_pixel_centers else "asymmetric"


def ref_image_resize(x, size, method="bilinear", layout="NCHW", align_corners=False,
                     half_pixel_centers=True):
    single = x.ndim == 3
    if single:
        x = x[None]
    if layout == "NHWC":
        x = x.transpose(0, 3, 1, 2)
    out = ref_resize_nchw(x, size[0], size[1], method, _mode(align_corners, half_pixel_centers))
    if layout == "NHWC":
        out = out.transpose(0, 2, 3, 1)
    return out[0] if single else out


def ref_bilinear_resize(x, like=None, height=1, width=1, scale_height=None, scale_width=None,
                        mode="size", align_corners=True):
    h, w = x.shape[2:]

    def size(n, target, scale, like_n):
        if mode == "size":
            return int(n * scale) if scale is not None else target
        if mode == "odd_scale":
            return int(n * scale) if n % 2 == 0 else int((n - 1) * scale) + 1
        if mode == "like":
            return like_n
        even, up = mode.startswith("to_even"), mode.endswith("up")
        if (n % 2 == 0) == even:
            return n
        return n + 1 if up else n - 1

    lh, lw = like.shape[2:] if like is not None else (None, None)
    oh, ow = size(h, height, scale_height, lh), size(w, width, scale_width, lw)
    return ref_resize_nchw(x, oh, ow, "bilinear", "align_corners" if align_corners else
                           "half_pixel")


def ref_upsampling(*data, scale=1, sample_type="nearest", multi_input_mode="concat",
                   num_filter=0):
    x = data[0]
    n, c, h, w = x.shape
    oh, ow = h * scale, w * scale
    if sample_type == "bilinear":
        if len(data) == 1:
            return ref_resize_nchw(x, oh, ow, "bilinear", "half_pixel")
        weight = data[1]
        k = 2 * scale - scale % 2
        p = math.ceil((scale - 1) / 2)
        full = np.zeros((n, c, (h - 1) * scale + k, (w - 1) * scale + k), x.dtype)
        for i, j, a, b in itertools.product(range(h), range(w), range(k), range(k)):
            full[:, :, i * scale + a, j * scale + b] += x[:, :, i, j] * weight[:, 0, a, b]
        return full[:, :, p:p + oh, p:p + ow]
    outs = []
    for d in data:
        s = oh // d.shape[2]
        o = np.zeros(d.shape[:2] + (oh, ow), d.dtype)
        for i, j in itertools.product(range(oh), range(ow)):
            o[:, :, i, j] = d[:, :, i // s, j // s]
        outs.append(o)
    if multi_input_mode == "sum":
        return sum(outs[1:], outs[0])
    return np.concatenate(outs, axis=1)


def ref_grid_generator(x, transform_type="affine", target_shape=(0, 0)):
    if transform_type == "affine":
        h, w = target_shape
        out = np.zeros((x.shape[0], 2, h, w), x.dtype)
        theta = x.reshape(-1, 2, 3)
        for i, j in itertools.product(range(h), range(w)):
            src = np.array([-1 + 2 * j / (w - 1), -1 + 2 * i / (h - 1), 1.0])
            out[:, :, i, j] = theta @ src
        return out
    h, w = x.shape[2:]
    out = np.zeros_like(x)
    for i, j in itertools.product(range(h), range(w)):
        out[:, 0, i, j] = (x[:, 0, i, j] + j) * 2 / (w - 1) - 1
        out[:, 1, i, j] = (x[:, 1, i, j] + i) * 2 / (h - 1) - 1
    return out


def ref_bilinear_sampler(data, grid):
    n, c, h, w = data.shape
    oh, ow = grid.shape[2:]
    out = np.zeros((n, c, oh, ow), data.dtype)
    for b, i, j in itertools.product(range(n), range(oh), range(ow)):
        xr = (float(grid[b, 0, i, j]) + 1) * (w - 1) / 2
        yr = (float(grid[b, 1, i, j]) + 1) * (h - 1) / 2
        x0, y0 = math.floor(xr), math.floor(yr)
        for yy, xx in itertools.product((y0, y0 + 1), (x0, x0 + 1)):
            if 0 <= yy < h and 0 <= xx < w:
                wt = (1 - abs(xr - xx)) * (1 - abs(yr - yy))
                out[b, :, i, j] += data[b, :, yy, xx] * wt
    return out


# ------------------------------------------------------------------ samples
_RESIZE_CASES = [
    ((2, 3, 4, 5), {"size": (7, 3)}),
    ((2, 3, 4, 5), {"size": (8, 10), "align_corners": True}),
    ((1, 2, 5, 4), {"size": (3, 9), "half_pixel_centers": False}),
    ((2, 4, 5, 3), {"size": (9, 2), "layout": "NHWC"}),
    ((3, 4, 2), {"size": (5, 7), "layout": "NHWC", "align_corners": True}),
    ((2, 4, 5), {"size": (1, 3)}),
    ((2, 3, 4, 5), {"size": (8, 10), "method": "nearest"}),
    ((1, 2, 5, 6), {"size": (3, 4), "method": "nearest", "half_pixel_centers": False}),
    ((1, 2, 5, 6), {"size": (9, 4), "method": "nearest", "align_corners": True}),
    ((2, 5, 6, 3), {"size": (4, 11), "method": "nearest", "layout": "NHWC"}),
]


def _one(cases, gen=rand):
    def samples(rng, d):
        return [Sample(gen(rng, s, d), **k) for s, k in cases]

    return samples


def _br_samples(rng, d):
    x = rand(rng, (2, 3, 4, 5), d)
    y = rand(rng, (1, 2, 5, 6), d)
    return [Sample(x, height=7, width=3), Sample(x, height=3, width=9, align_corners=False),
            Sample(x, scale_height=1.5, scale_width=2.0), Sample(y, mode="to_even_down"),
            Sample(y, mode="to_odd_up"), Sample(y, mode="to_even_up"),
            Sample(y, mode="to_odd_down"),
            Sample(y, mode="odd_scale", scale_height=2.0, scale_width=1.5),
            Sample(x, rand(rng, (1, 1, 6, 2), d), mode="like", diff=[0])]


def _up_samples(rng, d):
    x = rand(rng, (2, 3, 3, 4), d)
    return [Sample(x, scale=2), Sample(rand(rng, (1, 2, 2, 3), d), scale=3),
            Sample(rand(rng, (2, 3, 2, 2), d), rand(rng, (2, 2, 3, 3), d),
                   rand(rng, (2, 1, 6, 6), d), scale=3, num_args=3, name="concat, 3 scales"),
            Sample(rand(rng, (1, 2, 2, 2), d), rand(rng, (1, 2, 4, 4), d), scale=2,
                   multi_input_mode="sum", num_args=2),
            Sample(x, scale=2, sample_type="bilinear"),
            Sample(rand(rng, (1, 2, 3, 2), d), scale=3, sample_type="bilinear"),
            Sample(x, rand(rng, (3, 1, 4, 4), d), scale=2, sample_type="bilinear",
                   num_filter=3, num_args=2),
            Sample(rand(rng, (1, 2, 3, 2), d), rand(rng, (2, 1, 5, 5), d), scale=3,
                   sample_type="bilinear", num_filter=2, num_args=2)]


def _up_call(*data, **k):
    return nd.UpSampling(*data, **k)


def _up_ref(*data, num_args=1, **k):
    return ref_upsampling(*data, **k)


def _gg_samples(rng, d):
    return [Sample(rand(rng, (2, 6), d), transform_type="affine", target_shape=(3, 4)),
            Sample(rand(rng, (1, 6), d), target_shape=(5, 2)),
            Sample(rand(rng, (2, 2, 3, 4), d), transform_type="warp")]


def _grid(rng, shape, d):
    """Sampling grids whose points fall inside, on and outside the border (never exactly on
    a cell, where the gradient has a kink)."""
    return rng.uniform(-1.25, 1.25, size=shape).astype(d)


def _bs_samples(rng, d):
    return [Sample(rand(rng, (2, 3, 4, 5), d), _grid(rng, (2, 2, 3, 6), d)),
            Sample(rand(rng, (1, 2, 5, 3), d), _grid(rng, (1, 2, 4, 4), d))]


def _names(spec, rng, arr):
    contrib = namespace("nd", "contrib")
    assert contrib["BilinearResize2D"].op is REGISTRY["BilinearResize2D"]
    x = rand(rng, (1, 2, 3, 4), "float32")
    out = nd.BilinearResize2D(arr(x), height=5, width=6)
    np.testing.assert_allclose(out.asnumpy(), ref_bilinear_resize(x, height=5, width=6),
                               rtol=1e-5, atol=1e-6)


def _bs_pair(rng):
    return [[_grid(rng, (1, 2, 3, 4), "float64"), rand(rng, (1, 2, 4, 5), "float64")]]


def _grad2(name, fn, cases, suffix, covers=()):
    spec = second_order(name, fn, cases, suffix=suffix)
    spec.covers = covers
    return spec


def _resize_fn(**k):
    return lambda x: REGISTRY["image_resize"](x, **k)


SPECS = [
    OpSpec("image_resize", lambda x, **k: REGISTRY["image_resize"](x, **k), ref_image_resize,
           _one(_RESIZE_CASES), dtypes=("float32", "float64", "float16"), covers=(),
           **_TOL),
    OpSpec("BilinearResize2D", nd.BilinearResize2D, ref_bilinear_resize, _br_samples, **_TOL),
    OpSpec("BilinearResize2D", None, None, None, check=_names,
           extra={"id": "BilinearResize2D:names"}),
    OpSpec("UpSampling", _up_call, _up_ref, _up_samples, **_TOL),
    OpSpec("GridGenerator", nd.GridGenerator, ref_grid_generator, _gg_samples, **_TOL),
    OpSpec("BilinearSampler", nd.BilinearSampler, ref_bilinear_sampler, _bs_samples, **_TOL),
    _grad2("image_resize", _resize_fn(size=(5, 3)),
           lambda rng: [[rand(rng, (1, 2, 3, 4), "float64")]], "grad2", ("_interp_axis",)),
    _grad2("image_resize", _resize_fn(size=(2, 7), method="nearest", layout="NHWC"),
           lambda rng: [[rand(rng, (1, 3, 4, 2), "float64")]], "grad2-nearest",
           ("_interp_axis",)),
    _grad2("UpSampling", lambda x, w: nd.UpSampling(x, w, scale=2, sample_type="bilinear",
                                                    num_filter=2, num_args=2),
           lambda rng: [[rand(rng, (1, 2, 2, 3), "float64"), rand(rng, (2, 1, 4, 4),
                                                                  "float64")]], "grad2"),
    _grad2("UpSampling", lambda w, x: nd.UpSampling(x, w, scale=2, sample_type="bilinear",
                                                    num_filter=2, num_args=2),
           lambda rng: [[rand(rng, (2, 1, 4, 4), "float64"), rand(rng, (1, 2, 2, 3),
                                                                  "float64")]],
           "grad2-weight"),
    _grad2("GridGenerator", lambda t: nd.GridGenerator(t, target_shape=(3, 2)),
           lambda rng: [[rand(rng, (2, 6), "float64")]], "grad2"),
    _grad2("BilinearSampler", lambda g, x: nd.BilinearSampler(x, g), _bs_pair, "grad2-grid"),
    _grad2("BilinearSampler", lambda x, g: nd.BilinearSampler(x, g),
           lambda rng: [list(reversed(_bs_pair(rng)[0]))], "grad2-data"),
    _grad2("BilinearSampler",
           lambda t, x: nd.BilinearSampler(x, nd.GridGenerator(t, target_shape=(3, 3))),
           lambda rng: [[rand(rng, (1, 6), "float64", -0.8, 0.8),
                         rand(rng, (1, 2, 4, 5), "float64")]], "grad2-affine"),
]
