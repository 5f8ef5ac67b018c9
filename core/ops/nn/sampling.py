"""Spatial sampling: ``UpSampling``, image resizing (``image_resize``, MXNet's
``contrib.BilinearResize2D``), and the spatial transformer pair ``GridGenerator`` /
``BilinearSampler``.

Resizing is separable: one interpolation along each spatial axis (``_interp_axis``), a
gather of one or two neighbours per output cell. Its adjoint (``transpose=True``) is a
product with the interpolation matrix, and the two are each other's VJP, so gradients of
any order work.

Sampling positions of an output cell ``d`` along an axis of ``n_in`` input cells and
``n_out`` output cells (``mode``):

- ``"align_corners"``: ``d * (n_in - 1) / (n_out - 1)`` (corner cells map to corner cells;
  MXNet's ``BilinearResize2D`` default, TF1's ``align_corners=True``);
- ``"half_pixel"``: ``(d + 0.5) * n_in / n_out - 0.5``, clamped at 0 (cell centres; PyTorch
  ``align_corners=False``, TF2 and JAX ``resize``); nearest neighbour takes
  ``floor((d + 0.5) * n_in / n_out)``;
- ``"asymmetric"``: ``d * n_in / n_out`` (PyTorch's and MXNet's ``nearest``, TF1's default).

Positions past the last cell read the last cell (edge clamping).

``UpSampling(sample_type='bilinear')`` with a weight input is MXNet's: a per-channel transposed
convolution (kernel ``2 * scale - scale % 2``, stride ``scale``, padding
``ceil((scale - 1) / 2)``) with that weight. Without a weight it interpolates directly with
half-pixel centres; that equals MXNet's result with the ``Bilinear``-initialized weight
except in the outermost rows and columns, where the convolution sees zero padding.
"""
from __future__ import annotations

import operator
from functools import lru_cache

import numpy

from ...dtypes import FLOATS, float32
from ..infer import fmt, require_float
from ..matmul import const
from ..registry import Aval, F, defop

_METHODS = ("nearest", "bilinear")
_MODES = ("align_corners", "half_pixel", "asymmetric")


# ------------------------------------------------------------------ one axis
@lru_cache(maxsize=256)
def _taps(n_in, n_out, method, mode):
    """(i0, i1, w): output cell d reads ``x[i0] * (1 - w) + x[i1] * w`` (numpy arrays)."""
    d = numpy.arange(n_out, dtype=numpy.float64)
    if mode == "align_corners":
        src = d * ((n_in - 1) / (n_out - 1)) if n_out > 1 else numpy.zeros(n_out)
    elif mode == "half_pixel":
        src = (d + 0.5) * (n_in / n_out) - (0.5 if method == "bilinear" else 0.0)
    else:
        src = d * (n_in / n_out)
    if method == "nearest":
        i0 = numpy.floor(src + 0.5) if mode == "align_corners" else numpy.floor(src)
        i0 = numpy.clip(i0, 0, n_in - 1).astype(numpy.intp)
        return i0, i0, numpy.zeros(n_out)
    src = numpy.maximum(src, 0.0)
    i0 = numpy.minimum(numpy.floor(src), n_in - 1).astype(numpy.intp)
    i1 = numpy.minimum(i0 + 1, n_in - 1)
    w = numpy.where(i1 > i0, src - i0, 0.0)
    return i0, i1, w


@lru_cache(maxsize=256)
def _matrix(n_in, n_out, method, mode):
    """The (n_out, n_in) interpolation matrix (numpy float64)."""
    i0, i1, w = _taps(n_in, n_out, method, mode)
    m = numpy.zeros((n_out, n_in))
    rows = numpy.arange(n_out)
    numpy.add.at(m, (rows, i0), 1.0 - w)
    numpy.add.at(m, (rows, i1), w)
    return m


def _along(shape, axis, values):
    s = [1] * len(shape)
    s[axis] = -1
    return values.reshape(s)


def interp_raw(xp, x, axis, n_out, method, mode):
    """``x`` resampled to ``n_out`` cells along ``axis`` (raw arrays)."""
    n_in = x.shape[axis]
    if n_in == n_out:  # every mode maps cell d to cell d
        return x
    i0, i1, w = _taps(n_in, n_out, method, mode)
    x0 = xp.take(x, xp.asarray(i0), axis=axis)
    if method == "nearest" or not w.any():
        return x0
    x1 = xp.take(x, xp.asarray(i1), axis=axis)
    wt = xp.asarray(_along(x.shape, axis, w), dtype=x.dtype)
    return x0 * (1 - wt) + x1 * wt


def interp_adjoint_raw(xp, g, axis, n_in, method, mode):
    """The adjoint of :func:`interp_raw`: ``g`` (``n_out`` cells along ``axis``) mapped back."""
    n_out = g.shape[axis]
    if n_in == n_out:
        return g
    m = _matrix(n_in, n_out, method, mode)
    work = g.dtype if g.dtype in (numpy.dtype("float32"), numpy.dtype("float64")) else float32
    mx = xp.asarray(m, dtype=work)
    out = xp.matmul(xp.moveaxis(g.astype(work, copy=False), axis, -1), mx)
    return xp.ascontiguousarray(xp.moveaxis(out, -1, axis)).astype(g.dtype, copy=False)


def _check_interp(name, method, mode):
    if method not in _METHODS:
        raise ValueError(f"{name}: unknown method {method!r}; use one of "
                         f"{', '.join(map(repr, _METHODS))}")
    if mode not in _MODES:
        raise ValueError(f"{name}: unknown coordinate mode {mode!r}; use one of "
                         f"{', '.join(map(repr, _MODES))}")


def _interp_infer(x, axis=-1, n_in=1, n_out=1, method="bilinear", mode="half_pixel",
                  transpose=False):
    _check_interp("_interp_axis", method, mode)
    if not -len(x.shape) <= axis < len(x.shape):
        raise ValueError(f"_interp_axis: axis={axis} is out of range for {fmt([x])}")
    have, want = (n_out, n_in) if transpose else (n_in, n_out)
    if x.shape[axis] != have:
        raise ValueError(f"_interp_axis: expected {have} cells along axis {axis}, got "
                         f"{fmt([x])}")
    shape = list(x.shape)
    shape[axis] = want
    return Aval(tuple(shape), x.dtype)


def _interp_vjp(c, g):
    a = c.attrs
    return (F._interp_axis(g, **dict(a, transpose=not a["transpose"])),)


@defop("_interp_axis", infer=_interp_infer, vjp=_interp_vjp, save=False,
       attrs={"axis": -1, "n_in": 1, "n_out": 1, "method": "bilinear", "mode": "half_pixel",
              "transpose": False})
def _interp_axis(xp, x, axis=-1, n_in=1, n_out=1, method="bilinear", mode="half_pixel",
                 transpose=False):
    """Linear or nearest resampling from ``n_in`` to ``n_out`` cells along ``axis`` (its
    adjoint, from ``n_out`` back to ``n_in``, with ``transpose=True``)."""
    if x.shape[axis] != (n_out if transpose else n_in):
        raise ValueError("wrong size")  # infer explains
    out = interp_adjoint_raw(xp, x, axis, n_in, method, mode) if transpose else \
        interp_raw(xp, x, axis, n_out, method, mode)
    return out.copy() if out is x else out


def _resize_raw(xp, x, axes, sizes, method, mode):
    out = x
    for a, n in zip(axes, sizes):
        out = interp_raw(xp, out, a, n, method, mode)
    return out.copy() if out is x else out


def _resize_vjp_with(plan):
    """A VJP for a resize whose ``plan(in_shape, attrs) -> (axes, sizes, method, mode)``."""
    def vjp(c, g):
        shape = c.in_shapes[0]
        axes, sizes, method, mode = plan(shape, c.attrs)
        for a, n in reversed(list(zip(axes, sizes))):
            g = F._interp_axis(g, axis=a, n_in=shape[a], n_out=n, method=method, mode=mode,
                               transpose=True)
        return (g,) + (None,) * (len(c.in_shapes) - 1)

    return vjp


def _float_only(*arrays):
    """In forwards: non-float inputs fail (their infer rule explains)."""
    for a in arrays:
        if a is not None and a.dtype not in FLOATS:
            raise TypeError("not floating-point")


def _positive_size(name, what, v):
    try:
        n = operator.index(v)
    except TypeError:
        raise TypeError(f"{name}: {what} must be an int, got {v!r}") from None
    if n < 1:
        raise ValueError(f"{name}: {what} must be positive, got {n}")
    return n


# ------------------------------------------------------------------ image_resize
def _image_plan(shape, attrs):
    name = "image_resize"
    layout = attrs["layout"]
    if layout not in ("NCHW", "NHWC"):
        raise ValueError(f"{name}: layout must be 'NCHW' or 'NHWC', got {layout!r}")
    if len(shape) not in (3, 4):
        raise ValueError(f"{name}: images must be 4-D ({layout}) or 3-D (one image), got "
                         f"shape {tuple(shape)}")
    size = attrs["size"]
    if not hasattr(size, "__len__") or len(size) != 2:
        raise ValueError(f"{name}: size must be (height, width), got {size!r}")
    sizes = tuple(_positive_size(name, "size", s) for s in size)
    method = attrs["method"]
    if attrs["align_corners"]:
        mode = "align_corners"
    else:
        mode = "half_pixel" if attrs["half_pixel_centers"] else "asymmetric"
    _check_interp(name, method, mode)
    n = len(shape)
    axes = (n - 2, n - 1) if layout == "NCHW" else (n - 3, n - 2)
    return axes, sizes, method, mode


def _out_shape(shape, axes, sizes):
    out = list(shape)
    for a, s in zip(axes, sizes):
        out[a] = s
    return tuple(out)


def _image_infer(x, **attrs):
    axes, sizes, _, _ = _image_plan(x.shape, attrs)
    require_float("image_resize", x)
    return Aval(_out_shape(x.shape, axes, sizes), x.dtype)


_IMAGE_ATTRS = {"size": (1, 1), "method": "bilinear", "layout": "NCHW",
                "align_corners": False, "half_pixel_centers": True}


@defop("image_resize", infer=_image_infer, vjp=_resize_vjp_with(_image_plan), save=False,
       attrs=_IMAGE_ATTRS)
def _image_resize(xp, x, **attrs):
    """Resize images (NCHW or NHWC, batched or one) to ``size`` with nearest or bilinear
    sampling; half-pixel centres by default (TF2/JAX/Keras), or ``align_corners``."""
    _float_only(x)
    axes, sizes, method, mode = _image_plan(x.shape, attrs)
    return _resize_raw(xp, x, axes, sizes, method, mode)


# ------------------------------------------------------------------ BilinearResize2D (MXNet)
_BR_MODES = ("size", "odd_scale", "like", "to_even_down", "to_even_up", "to_odd_down",
             "to_odd_up")


def _br_size(name, n, target, scale, mode, like_n):
    if mode == "size":
        if scale is not None:
            return int(n * scale)
        return _positive_size(name, "height/width", target)
    if mode == "odd_scale":
        if scale is None:
            raise ValueError(f"{name}: mode='odd_scale' needs scale_height and scale_width")
        return int(n * scale) if n % 2 == 0 else int((n - 1) * scale) + 1
    if mode == "like":
        return like_n
    if mode == "to_even_down":
        return n if n % 2 == 0 else n - 1
    if mode == "to_even_up":
        return n if n % 2 == 0 else n + 1
    if mode == "to_odd_down":
        return n if n % 2 == 1 else n - 1
    return n if n % 2 == 1 else n + 1


def _br_plan(shape, attrs, like_shape=None):
    name = "BilinearResize2D"
    mode = attrs["mode"]
    if mode not in _BR_MODES:
        raise ValueError(f"{name}: unknown mode {mode!r}; use one of "
                         f"{', '.join(map(repr, _BR_MODES))}")
    if len(shape) != 4:
        raise ValueError(f"{name}: data must be 4-D (N, C, H, W), got shape {tuple(shape)}")
    if mode == "like" and (like_shape is None or len(like_shape) != 4):
        raise ValueError(f"{name}: mode='like' needs a 4-D second input 'like', got "
                         f"{like_shape}")
    like_shape = like_shape or (None,) * 4
    sizes = (_br_size(name, shape[2], attrs["height"], attrs["scale_height"], mode,
                      like_shape[2]),
             _br_size(name, shape[3], attrs["width"], attrs["scale_width"], mode,
                      like_shape[3]))
    if min(sizes) < 1:
        raise ValueError(f"{name}: the output size {sizes} must be positive (input shape "
                         f"{tuple(shape)}, mode {mode!r})")
    return (2, 3), sizes, "bilinear", "align_corners" if attrs["align_corners"] else \
        "half_pixel"


def _br_infer(x, like=None, **attrs):
    if like is not None and not isinstance(like, Aval):
        raise TypeError(f"BilinearResize2D: the second input 'like' must be an array, got "
                        f"{like!r}; pass height= and width= by keyword")
    plan = _br_plan(x.shape, attrs, like.shape if isinstance(like, Aval) else None)
    require_float("BilinearResize2D", x)
    return Aval(_out_shape(x.shape, plan[0], plan[1]), x.dtype)


def _br_vjp(c, g):
    like_shape = c.in_shapes[1] if len(c.in_shapes) > 1 else None
    return _resize_vjp_with(lambda s, a: _br_plan(s, a, like_shape))(c, g)


@defop("BilinearResize2D", infer=_br_infer, vjp=_br_vjp, save=False, inputs=("data", "like?"),
       attrs={"height": 1, "width": 1, "scale_height": None, "scale_width": None,
              "mode": "size", "align_corners": True},
       nd=("contrib.BilinearResize2D", "BilinearResize2D"),
       optional_inputs={"like": lambda a: a.get("mode") == "like"})
def _bilinear_resize(xp, x, like=None, **attrs):
    """Bilinear resize of NCHW images (MXNet's contrib.BilinearResize2D; align_corners by
    default, half-pixel centres with ``align_corners=False``)."""
    _float_only(x)
    plan = _br_plan(x.shape, attrs, None if like is None else like.shape)
    return _resize_raw(xp, x, plan[0], plan[1], plan[2], plan[3])


# ------------------------------------------------------------------ UpSampling (MXNet)
_UP_ATTRS = {"scale": 1, "num_filter": 0, "sample_type": "nearest",
             "multi_input_mode": "concat", "num_args": 1, "workspace": 512}


def _up_scales(name, shapes, scale, sample_type, multi_input_mode):
    """(per-input integer scales, output shape) of UpSampling."""
    scale = _positive_size(name, "scale", scale)
    if sample_type not in ("nearest", "bilinear"):
        raise ValueError(f"{name}: sample_type must be 'nearest' or 'bilinear', got "
                         f"{sample_type!r}")
    if not shapes:
        raise ValueError(f"{name}: needs at least one input")
    for s in shapes[:1] if sample_type == "bilinear" else shapes:
        if len(s) != 4:
            raise ValueError(f"{name}: inputs must be 4-D (N, C, H, W), got shapes "
                             f"{', '.join(map(str, shapes))}")
    n, _, h, w = shapes[0]
    oh, ow = h * scale, w * scale
    if sample_type == "bilinear":
        if len(shapes) > 2:
            raise ValueError(f"{name}: sample_type='bilinear' takes data and an optional "
                             f"weight, got {len(shapes)} inputs")
        c = shapes[0][1]
        if len(shapes) == 2:
            k = 2 * scale - scale % 2
            if tuple(shapes[1]) != (c, 1, k, k):
                raise ValueError(f"{name}: the bilinear weight must have shape {(c, 1, k, k)} "
                                 f"(channels, 1, 2*scale - scale%2, ...) for data of shape "
                                 f"{shapes[0]} and scale={scale}, got {shapes[1]}")
        return (scale,), (n, c, oh, ow)
    if multi_input_mode not in ("concat", "sum"):
        raise ValueError(f"{name}: multi_input_mode must be 'concat' or 'sum', got "
                         f"{multi_input_mode!r}")
    scales, channels = [], []
    for s in shapes:
        if s[0] != n or oh % s[2] or ow % s[3] or oh // s[2] != ow // s[3]:
            raise ValueError(f"{name}: every input must upsample by one integer factor to "
                             f"the output size {(oh, ow)} (the first input's size times "
                             f"scale={scale}), got shapes {', '.join(map(str, shapes))}")
        scales.append(oh // s[2])
        channels.append(s[1])
    if multi_input_mode == "sum":
        if len(set(channels)) != 1:
            raise ValueError(f"{name}: multi_input_mode='sum' needs one channel count, got "
                             f"shapes {', '.join(map(str, shapes))}")
        c = channels[0]
    else:
        c = sum(channels)
    return tuple(scales), (n, c, oh, ow)


def _up_infer(*data, **attrs):
    name = "UpSampling"
    require_float(name, *data)
    _, shape = _up_scales(name, [d.shape for d in data], attrs["scale"], attrs["sample_type"],
                          attrs["multi_input_mode"])
    return Aval(shape, data[0].dtype)


def _nearest_raw(xp, x, s):
    if s == 1:
        return x
    n, c, h, w = x.shape
    return xp.broadcast_to(x[:, :, :, None, :, None], (n, c, h, s, w, s)).reshape(
        n, c, h * s, w * s)


def _deconv_geometry(scale, h, w):
    k = 2 * scale - scale % 2
    p = scale // 2  # ceil((scale - 1) / 2)
    keys = [(slice(None), slice(None), slice(i, i + scale * (h - 1) + 1, scale),
             slice(j, j + scale * (w - 1) + 1, scale)) for i in range(k) for j in range(k)]
    return k, p, keys


def _bilinear_deconv_raw(xp, x, weight, scale):
    """MXNet's bilinear UpSampling: a per-channel transposed convolution with ``weight``."""
    n, c, h, w = x.shape
    k, p, keys = _deconv_geometry(scale, h, w)
    full = xp.zeros((n, c, (h - 1) * scale + k, (w - 1) * scale + k), x.dtype)
    wf = weight.reshape(c, k * k)
    for i, key in enumerate(keys):
        view = full[key]
        view += x * wf[:, i].reshape(1, c, 1, 1)
    return full[:, :, p:p + h * scale, p:p + w * scale].copy()


def _up_vjp(c, g):
    a = c.attrs
    shapes = list(c.in_shapes)
    scales, _ = _up_scales("UpSampling", shapes, a["scale"], a["sample_type"],
                           a["multi_input_mode"])
    if a["sample_type"] == "bilinear":
        if len(shapes) == 1:
            h, w = shapes[0][2:]
            for ax, size in ((3, w), (2, h)):
                g = F._interp_axis(g, axis=ax, n_in=size, n_out=size * scales[0],
                                   method="bilinear", mode="half_pixel", transpose=True)
            return (g,)
        x, weight = c.inputs
        n, ch, h, w = shapes[0]
        k, p, keys = _deconv_geometry(scales[0], h, w)
        gp = F.pad(g, pad_width=((0, 0), (0, 0), (p, p), (p, p)))
        views = F.stack(*[F._getitem(gp, key=key) for key in keys], axis=2)
        wf = F.reshape(weight, newshape=(ch, k * k), mx_codes=False)
        gx = F.einsum(views, wf, subscripts="nckhw,ck->nchw")
        gw = F.einsum(views, x, subscripts="nckhw,nchw->ck")
        return gx, F.reshape(gw, newshape=shapes[1], mx_codes=False)
    grads, start = [], 0
    for shape, s in zip(shapes, scales):
        n, ch, h, w = shape
        gi = g
        if a["multi_input_mode"] == "concat" and len(shapes) > 1:
            gi = F.slice_axis(g, axis=1, begin=start, end=start + ch)
            start += ch
        if s > 1:
            gi = F.sum(F.reshape(gi, newshape=(n, ch, h, s, w, s), mx_codes=False),
                       axis=(3, 5))
        grads.append(gi)
    return tuple(grads)


@defop("UpSampling", infer=_up_infer, vjp=_up_vjp, inputs=("data",), variadic=True,
       attrs=_UP_ATTRS, nd=("UpSampling",))
def _upsampling(xp, *data, scale=1, num_filter=0, sample_type="nearest",
                multi_input_mode="concat", num_args=1, workspace=512):
    """Upsample NCHW inputs by an integer ``scale`` (MXNet's UpSampling): nearest neighbour
    (several inputs concatenated or summed), or bilinear."""
    _float_only(*data)
    scales, _ = _up_scales("UpSampling", [d.shape for d in data], scale, sample_type,
                           multi_input_mode)
    if sample_type == "bilinear":
        x = data[0]
        if len(data) == 2:
            return _bilinear_deconv_raw(xp, x, data[1], scales[0])
        h, w = x.shape[2:]
        return _resize_raw(xp, x, (2, 3), (h * scales[0], w * scales[0]), "bilinear",
                           "half_pixel")
    outs = [_nearest_raw(xp, x, s) for x, s in zip(data, scales)]
    if len(outs) == 1:
        return outs[0] if outs[0] is not data[0] else outs[0].copy()
    if multi_input_mode == "sum":
        out = outs[0].copy()
        for o in outs[1:]:
            out += o
        return out
    return xp.concatenate(outs, axis=1)


# ------------------------------------------------------------------ GridGenerator
@lru_cache(maxsize=64)
def _base_grid(h, w):
    """(3, h*w): normalized x, y in [-1, 1] (row-major over the target) and ones."""
    ys, xs = numpy.meshgrid(numpy.linspace(-1.0, 1.0, h), numpy.linspace(-1.0, 1.0, w),
                            indexing="ij")
    return numpy.stack([xs.reshape(-1), ys.reshape(-1), numpy.ones(h * w)])


def _warp_scale(h, w):
    return numpy.array([2.0 / (w - 1) if w > 1 else 0.0,
                        2.0 / (h - 1) if h > 1 else 0.0]).reshape(1, 2, 1, 1)


def _gg_plan(name, x, transform_type, target_shape):
    if transform_type == "affine":
        if len(x.shape) != 2 or x.shape[1] != 6:
            raise ValueError(f"{name}: transform_type='affine' needs data of shape (N, 6) "
                             f"(the 2x3 affine matrices, row-major), got {fmt([x])}")
        try:
            h, w = (operator.index(t) for t in target_shape)
        except (TypeError, ValueError):
            raise ValueError(f"{name}: target_shape must be (height, width), got "
                             f"{target_shape!r}") from None
        if h < 1 or w < 1:
            raise ValueError(f"{name}: transform_type='affine' needs a positive "
                             f"target_shape (height, width), got {tuple(target_shape)}")
        return (x.shape[0], 2, h, w)
    if transform_type == "warp":
        if len(x.shape) != 4 or x.shape[1] != 2:
            raise ValueError(f"{name}: transform_type='warp' needs a flow field of shape "
                             f"(N, 2, H, W), got {fmt([x])}")
        return tuple(x.shape)
    raise ValueError(f"{name}: transform_type must be 'affine' or 'warp', got "
                     f"{transform_type!r}")


def _gg_infer(x, transform_type="affine", target_shape=(0, 0)):
    require_float("GridGenerator", x)
    return Aval(_gg_plan("GridGenerator", x, transform_type, target_shape), x.dtype)


def _gg_vjp(c, g):
    shape = _gg_plan("GridGenerator", Aval(c.in_shapes[0], c.in_dtypes[0]),
                     c.attrs["transform_type"], c.attrs["target_shape"])
    n, _, h, w = shape
    if c.attrs["transform_type"] == "warp":
        return (g * const(g, _warp_scale(h, w).astype(g.dtype)),)
    base_t = const(g, _base_grid(h, w).T.astype(g.dtype))
    gt = F.matmul(F.reshape(g, newshape=(n, 2, h * w), mx_codes=False), base_t)
    return (F.reshape(gt, newshape=(n, 6), mx_codes=False),)


@defop("GridGenerator", infer=_gg_infer, vjp=_gg_vjp, save=False,
       attrs={"transform_type": "affine", "target_shape": (0, 0)}, nd=("GridGenerator",))
def _grid_generator(xp, x, transform_type="affine", target_shape=(0, 0)):
    """Sampling grids for BilinearSampler (MXNet's GridGenerator): from (N, 6) affine
    matrices over a ``target_shape`` grid, or from an (N, 2, H, W) pixel flow ('warp')."""
    _float_only(x)
    n, _, h, w = _gg_plan("GridGenerator", x, transform_type, target_shape)
    if transform_type == "affine":
        base = xp.asarray(_base_grid(h, w), dtype=x.dtype)
        return xp.matmul(x.reshape(n, 2, 3), base).reshape(n, 2, h, w)
    pix = numpy.stack(numpy.meshgrid(numpy.arange(w), numpy.arange(h), indexing="xy"))
    scale = _warp_scale(h, w)
    return (x + xp.asarray(pix[None], dtype=x.dtype)) * xp.asarray(scale, dtype=x.dtype) - 1


# ------------------------------------------------------------------ BilinearSampler
def _bs_infer(data, grid, cudnn_off=None):
    name = "BilinearSampler"
    require_float(name, data, grid)
    if len(data.shape) != 4:
        raise ValueError(f"{name}: data must be 4-D (N, C, H, W), got data {fmt([data])}, "
                         f"grid {fmt([grid])}")
    if len(grid.shape) != 4 or grid.shape[1] != 2 or grid.shape[0] != data.shape[0]:
        raise ValueError(f"{name}: grid must have shape (N, 2, H_out, W_out) with "
                         f"N={data.shape[0]} (x, y in [-1, 1]), got grid {fmt([grid])} for "
                         f"data {fmt([data])}")
    if data.dtype != grid.dtype:
        raise TypeError(f"{name}: data and grid must have one dtype, got {fmt([data, grid])}")
    n, c = data.shape[:2]
    return Aval((n, c) + tuple(grid.shape[2:]), data.dtype)


def _corners(xp, grid_raw, h, w):
    """Per corner: (flat index into (H*W), in-bounds mask) and the fractional parts and
    floors of the sampling positions (raw arrays)."""
    gx = (grid_raw[:, 0].astype(numpy.float64) + 1) * ((w - 1) / 2)
    gy = (grid_raw[:, 1].astype(numpy.float64) + 1) * ((h - 1) / 2)
    x0 = xp.floor(gx)
    y0 = xp.floor(gy)
    out = []
    for dy in (0, 1):
        for dx in (0, 1):
            xx, yy = x0 + dx, y0 + dy
            ok = (xx >= 0) & (xx <= w - 1) & (yy >= 0) & (yy <= h - 1)
            flat = (xp.clip(yy, 0, h - 1) * w + xp.clip(xx, 0, w - 1)).astype(numpy.intp)
            out.append((flat, ok))
    return out, x0, y0


def _gather_flat(xp, data, flat):
    """data (N, C, H, W) at flat positions (N, Ho, Wo) -> (N, C, Ho, Wo)."""
    n, c = data.shape[:2]
    d = data.reshape(n, c, -1)
    idx = flat.reshape(n, 1, -1)
    return xp.take_along_axis(d, idx, axis=2).reshape((n, c) + flat.shape[1:])


def _bs_vjp(c, g):
    data, grid = c.inputs
    n, ch, h, w = c.in_shapes[0]
    xp = g._ctx.xp
    corners, x0, y0 = _corners(xp, grid._data, h, w)
    dt = g.dtype
    sx, sy = (w - 1) / 2, (h - 1) / 2
    gxr = (F._getitem(grid, key=(slice(None), 0)) + 1) * sx  # differentiable in grid
    gyr = (F._getitem(grid, key=(slice(None), 1)) + 1) * sy
    wx = gxr - const(g, x0.astype(dt))
    wy = gyr - const(g, y0.astype(dt))
    oks = [const(g, ok.astype(dt)) for _, ok in corners]
    # flat indices into data viewed as (N * C * H * W,)
    base = xp.arange(n * ch).reshape(n, ch, 1, 1) * (h * w)
    keys = [base + flat[:, None] for flat, _ in corners]
    flat_data = F.reshape(data, newshape=(-1,), mx_codes=False)
    vals = [F._getitem(flat_data, key=k) * F.expand_dims(ok, axis=1)
            for k, ok in zip(keys, oks)]
    w_list = [(1 - wy) * (1 - wx), (1 - wy) * wx, wy * (1 - wx), wy * wx]
    gd = None
    if c.in_dtypes[0] in FLOATS:
        contrib = [g * F.expand_dims(wt * ok, axis=1) for wt, ok in zip(w_list, oks)]
        key = xp.concatenate([k.reshape(-1) for k in keys])
        flat_g = F.concatenate(*[F.reshape(t, newshape=(-1,), mx_codes=False)
                                 for t in contrib], axis=0)
        gd = F.reshape(F._scatter_add(flat_g, key=(key,), shape=(n * ch * h * w,)),
                       newshape=(n, ch, h, w), mx_codes=False)
    v00, v01, v10, v11 = vals
    wx1, wy1 = F.expand_dims(wx, axis=1), F.expand_dims(wy, axis=1)
    d_x = F.sum(g * ((1 - wy1) * (v01 - v00) + wy1 * (v11 - v10)), axis=1) * sx
    d_y = F.sum(g * ((1 - wx1) * (v10 - v00) + wx1 * (v11 - v01)), axis=1) * sy
    return gd, F.stack(d_x, d_y, axis=1)


@defop("BilinearSampler", infer=_bs_infer, inputs=("data", "grid"),
       attrs={"cudnn_off": None}, nd=("BilinearSampler",),
       vjp=_bs_vjp)
def _bilinear_sampler(xp, data, grid, cudnn_off=None):
    """Sample ``data`` (N, C, H, W) bilinearly at ``grid`` (N, 2, Ho, Wo; x then y,
    normalized to [-1, 1] over the corner cells); zero outside (MXNet's BilinearSampler)."""
    if data.ndim != 4 or grid.ndim != 4 or grid.shape[1] != 2 or grid.shape[0] != data.shape[0]:
        raise ValueError("BilinearSampler: bad shapes")  # infer explains
    _float_only(data, grid)
    if data.dtype != grid.dtype:
        raise TypeError("dtypes differ")
    n, c, h, w = data.shape
    corners, x0, y0 = _corners(xp, grid, h, w)
    wx = (grid[:, 0].astype(numpy.float64) + 1) * ((w - 1) / 2) - x0
    wy = (grid[:, 1].astype(numpy.float64) + 1) * ((h - 1) / 2) - y0
    weights = ((1 - wy) * (1 - wx), (1 - wy) * wx, wy * (1 - wx), wy * wx)
    out = xp.zeros((n, c) + grid.shape[2:], data.dtype)
    for (flat, ok), wt in zip(corners, weights):
        wt = (wt * ok).astype(data.dtype)[:, None]
        out += _gather_flat(xp, data, flat) * wt
    return out
