"""Convolution operators: ``Convolution``, ``Deconvolution``, ``im2col``, ``col2im``.

Layouts and weights:

- channels first (MXNet's default; ``layout`` None, ``'NCW'``, ``'NCHW'``, ``'NCDHW'``):
  data ``(N, C, *spatial)``; ``Convolution`` weight ``(num_filter, C / num_group,
  *kernel)``; ``Deconvolution`` weight ``(C, num_filter / num_group, *kernel)``.
- channels last (Keras's default; ``'NWC'``, ``'NHWC'``, ``'NDHWC'``): data ``(N,
  *spatial, C)``; ``Convolution`` weight ``(num_filter, *kernel, C / num_group)``
  (MXNet's NHWC weight layout; a Keras kernel ``(*kernel, C / groups, filters)`` is
  ``moveaxis(kernel, -1, 0)``); ``Deconvolution`` weight ``(C, *kernel, num_filter /
  num_group)``.

Padding (``pad``): MXNet's symmetric ints, ``(before, after)`` pairs per spatial axis
(asymmetric), or the Keras modes ``'valid'`` and ``'same'`` (output ``ceil(x /
stride)``, the odd pixel of padding after, as TensorFlow). ``kernel`` and
``num_filter`` may be left out: the weight gives them (given, they must agree).

The gradients are operators too: ``_conv_grad_data`` (a transposed convolution) and
``_conv_grad_weight``; their VJPs are written with ``Convolution`` and each other, so
gradients of every order work. ``Deconvolution`` is ``_conv_grad_data`` plus a bias.
The array kernels are in ``patches.py``, the shape rules in ``conv_geometry.py``.
"""
from __future__ import annotations

import numbers

import numpy

from ..broadcast import sum_to
from ..infer import require_float
from ..matmul import ones, wanted
from ..param_shapes import ParamShapes
from ..registry import Aval, F, defop
from . import conv_geometry as G
from . import patches as P
from .conv_geometry import GeomError

_CONV_ATTRS = {"kernel": (), "stride": (), "dilate": (), "pad": (), "num_filter": 0,
               "num_group": 1, "workspace": 1024, "no_bias": False, "cudnn_tune": None,
               "cudnn_off": False, "layout": None}
_DECONV_ATTRS = {"kernel": (), "stride": (), "dilate": (), "pad": (), "adj": (),
                 "target_shape": (), "num_filter": 0, "num_group": 1, "workspace": 512,
                 "no_bias": True, "cudnn_tune": None, "cudnn_off": False, "layout": None}
_GEOM_KEYS = ("kernel", "stride", "dilate", "pad", "num_group", "layout")
_INNER_ATTRS = {"kernel": (), "stride": (), "dilate": (), "pad": (), "num_group": 1,
                "layout": None}


def _shown(attrs, keys):
    return ", ".join(f"{k}={attrs[k]!r}" for k in keys if k in attrs)


def _fail(name, e, names, avals, attrs, keys):
    parts = ", ".join(f"{n}: {a.shape} {a.dtype.name}" for n, a in zip(names, avals)
                      if isinstance(a, Aval))
    return ValueError(f"{name}: {e} ({parts}; {_shown(attrs, keys)})")


def _float_dtype(name, names, *avals):
    """The result dtype of the first two inputs (a bias is cast to it); floats only."""
    arrs = [a for a in avals if isinstance(a, Aval)]
    for n, a in zip(names, avals):
        require_float(name, a, what=n, shown=arrs)
    return numpy.result_type(*[a.dtype for a in avals[:2] if isinstance(a, Aval)])


def _check_array(name, what, a):
    if not isinstance(a, Aval):
        raise TypeError(f"{name}: {what} must be an array, got {a!r}")


def _check_bias(name, bias, no_bias, nf):
    if bias is None:
        return
    _check_array(name, "bias", bias)
    if no_bias:
        default = " (the default for Deconvolution)" if name == "Deconvolution" else ""
        raise GeomError(f"a bias was given but no_bias=True{default}; pass no_bias=False "
                        "to add it")
    if bias.shape != (nf,):
        raise GeomError(f"bias must have shape ({nf},) (num_filter), got {bias.shape}")


# ------------------------------------------------------------------ Convolution
def _conv_key(dshape, wshape, at):
    return (tuple(dshape), tuple(wshape), G.freeze(at["kernel"]), G.freeze(at["stride"]),
            G.freeze(at["dilate"]), G.freeze(at["pad"]), at["num_filter"], at["num_group"],
            at["layout"])


def _conv_geom(dshape, wshape, at):
    return G.conv_geom(*_conv_key(dshape, wshape, at))


_CONV_SHOWN = ("kernel", "stride", "dilate", "pad", "num_filter", "num_group", "layout")


def _conv_infer(data, weight, bias=None, **at):
    names = ("data", "weight", "bias")
    _check_array("Convolution", "data", data)
    _check_array("Convolution", "weight", weight)
    at = dict(_CONV_ATTRS, **at)
    try:
        geo = _conv_geom(data.shape, weight.shape, at)
        _check_bias("Convolution", bias, at["no_bias"], geo.f)
    except GeomError as e:
        raise _fail("Convolution", e, names, (data, weight, bias), at, _CONV_SHOWN) from None
    return Aval(geo.out_shape, _float_dtype("Convolution", names, data, weight, bias))


def _add_bias(xp, out, bias, geo):
    if bias is None:
        return out
    b = bias.astype(out.dtype, copy=False)
    if not geo.cl:
        b = b.reshape((geo.f,) + (1,) * geo.nsp)
    out += b
    return out


def _bias_grad(g, nf, geo):
    """The sum of ``g`` over all but the channel axis."""
    if geo.cl:  # ones @ (rows, nf): NumPy's sum over the leading axes is 5x slower
        rows = g.size // nf
        return F.matmul(ones(g, (rows,)), F.reshape(g, shape=(rows, nf)))
    return F.sum(g, axis=geo.bias_axes)


def _conv_vjp(c, g):
    x, w, b = c.inputs
    geo = _conv_geom(c.in_shapes[0], c.in_shapes[1], c.attrs)
    dts = wanted(c)
    at = geo.attrs()
    gx = gw = gb = None
    if dts[0] is not None:
        gx = sum_to(F._conv_grad_data(g, w, data_shape=geo.data_shape, **at),
                    geo.data_shape, dts[0])
    if dts[1] is not None:
        gw = sum_to(F._conv_grad_weight(x, g, weight_shape=geo.weight_shape, **at),
                    geo.weight_shape, dts[1])
    if b is not None and dts[2] is not None:
        gb = sum_to(_bias_grad(g, geo.f, geo), (geo.f,), dts[2])
    return gx, gw, gb


def _conv_params(shape, a, n_in, deconv=False):
    """The weight from ``num_filter``/``kernel``/``num_group``/``layout`` and the data's
    channels, and the bias (num_filter,)."""
    kernel = a.get("kernel") or ()
    if isinstance(kernel, numbers.Integral):
        if shape is None:
            return {}
        kernel = (kernel,) * (len(shape) - 2)
    kernel = tuple(kernel)
    if shape is None:
        shape = (None,) * (len(kernel) + 2)
    nd = len(shape)
    if nd < 3:
        return {}
    nf, g = a.get("num_filter") or 0, a.get("num_group") or 1
    if len(kernel) != nd - 2 or not nf:
        return {}
    layout = a.get("layout")
    cl = isinstance(layout, str) and layout.endswith("C")
    c = shape[-1] if cl else shape[1]
    if deconv:
        inner = nf // g
        w = (c,) + (kernel + (inner,) if cl else (inner,) + kernel)
    else:
        inner = c // g if c is not None else None
        w = (nf,) + (kernel + (inner,) if cl else (inner,) + kernel)
    out = {1: w}
    if not a.get("no_bias", deconv):
        out[2] = (nf,)
    return out


@defop("Convolution", save="inputs",
       infer=_conv_infer, vjp=_conv_vjp, inputs=("data", "weight", "bias?"),
       attrs=_CONV_ATTRS, nd=("Convolution", "convolution"),
       param_shapes=ParamShapes(_conv_params, (1, 2)),
       optional_inputs={"bias": lambda a: not a.get("no_bias")})
def _convolution(xp, data, weight, bias=None, kernel=(), stride=(), dilate=(), pad=(),
                 num_filter=0, num_group=1, workspace=1024, no_bias=False, cudnn_tune=None,
                 cudnn_off=False, layout=None):
    """N-d convolution (1-3 spatial axes), channels first or last, with groups."""
    if no_bias and bias is not None:
        raise ValueError("bias with no_bias=True")  # infer explains
    geo = G.conv_geom(data.shape, weight.shape, G.freeze(kernel), G.freeze(stride),
                      G.freeze(dilate), G.freeze(pad), num_filter, num_group, layout)
    return _add_bias(xp, P.conv_forward(xp, data, weight, geo), bias, geo)


# ------------------------------------------------------------------ the gradient operators
def _inner_geom(dshape, wshape, at):
    return G.conv_geom(tuple(dshape), tuple(wshape), (), G.freeze(at["stride"]),
                       G.freeze(at["dilate"]), G.freeze(at["pad"]), 0, at["num_group"],
                       at["layout"])


def _check_out(name, geo, gshape):
    if tuple(gshape) != geo.out_shape:
        raise GeomError(f"the output gradient has shape {tuple(gshape)} but the convolution's "
                        f"output has shape {geo.out_shape}")


def _grad_data_infer(g, weight, data_shape=(), **at):
    at = dict(_INNER_ATTRS, **at)
    try:
        geo = _inner_geom(data_shape, weight.shape, at)
        _check_out("_conv_grad_data", geo, g.shape)
    except GeomError as e:
        raise _fail("_conv_grad_data", e, ("g", "weight"), (g, weight), dict(
            at, data_shape=data_shape), ("data_shape",) + _GEOM_KEYS) from None
    return Aval(geo.data_shape, _float_dtype("_conv_grad_data", ("g", "weight"), g, weight))


def _grad_data_vjp(c, h):
    gy, w = c.inputs
    at = {k: c.attrs[k] for k in _GEOM_KEYS}
    dts = wanted(c)
    d_gy = d_w = None
    if dts[0] is not None:
        d_gy = sum_to(F.Convolution(h, w, None, no_bias=True, **at), c.in_shapes[0], dts[0])
    if dts[1] is not None:
        d_w = sum_to(F._conv_grad_weight(h, gy, weight_shape=c.in_shapes[1], **at),
                     c.in_shapes[1], dts[1])
    return d_gy, d_w


@defop("_conv_grad_data", save="inputs",
       infer=_grad_data_infer, vjp=_grad_data_vjp, inputs=("g", "weight"),
       attrs=dict(_INNER_ATTRS, data_shape=()))
def _conv_grad_data(xp, g, weight, kernel=(), stride=(), dilate=(), pad=(), num_group=1,
                    layout=None, data_shape=()):
    """Gradient of ``Convolution`` wrt its data (a transposed convolution of ``g``)."""
    geo = _inner_geom(data_shape, weight.shape, {"stride": stride, "dilate": dilate,
                                                 "pad": pad, "num_group": num_group,
                                                 "layout": layout})
    if tuple(g.shape) != geo.out_shape:
        raise ValueError("gradient shape")  # infer explains
    return P.conv_grad_data(xp, g, weight, geo)


def _grad_weight_infer(data, g, weight_shape=(), **at):
    at = dict(_INNER_ATTRS, **at)
    try:
        geo = _inner_geom(data.shape, weight_shape, at)
        _check_out("_conv_grad_weight", geo, g.shape)
    except GeomError as e:
        raise _fail("_conv_grad_weight", e, ("data", "g"), (data, g), dict(
            at, weight_shape=weight_shape), ("weight_shape",) + _GEOM_KEYS) from None
    return Aval(geo.weight_shape, _float_dtype("_conv_grad_weight", ("data", "g"), data, g))


def _grad_weight_vjp(c, h):
    x, gy = c.inputs
    at = {k: c.attrs[k] for k in _GEOM_KEYS}
    dts = wanted(c)
    d_x = d_gy = None
    if dts[0] is not None:
        d_x = sum_to(F._conv_grad_data(gy, h, data_shape=c.in_shapes[0], **at),
                     c.in_shapes[0], dts[0])
    if dts[1] is not None:
        d_gy = sum_to(F.Convolution(x, h, None, no_bias=True, **at), c.in_shapes[1], dts[1])
    return d_x, d_gy


@defop("_conv_grad_weight", save="inputs", infer=_grad_weight_infer, vjp=_grad_weight_vjp,
       inputs=("data", "g"), attrs=dict(_INNER_ATTRS, weight_shape=()))
def _conv_grad_weight(xp, data, g, kernel=(), stride=(), dilate=(), pad=(), num_group=1,
                      layout=None, weight_shape=()):
    """Gradient of ``Convolution`` wrt its weight: patches of ``data`` contracted with g."""
    geo = _inner_geom(data.shape, weight_shape, {"stride": stride, "dilate": dilate,
                                                 "pad": pad, "num_group": num_group,
                                                 "layout": layout})
    if tuple(g.shape) != geo.out_shape:
        raise ValueError("gradient shape")  # infer explains
    return P.conv_grad_weight(xp, data, g, geo)


# ------------------------------------------------------------------ Deconvolution
def _deconv_key(dshape, wshape, at):
    return (tuple(dshape), tuple(wshape), G.freeze(at["kernel"]), G.freeze(at["stride"]),
            G.freeze(at["dilate"]), G.freeze(at["pad"]), G.freeze(at["adj"]),
            G.freeze(at["target_shape"]), at["num_filter"], at["num_group"], at["layout"])


_DECONV_SHOWN = ("kernel", "stride", "dilate", "pad", "adj", "target_shape", "num_filter",
                 "num_group", "layout")


def _deconv_infer(data, weight, bias=None, **at):
    names = ("data", "weight", "bias")
    _check_array("Deconvolution", "data", data)
    _check_array("Deconvolution", "weight", weight)
    at = dict(_DECONV_ATTRS, **at)
    try:
        geo = G.deconv_geom(*_deconv_key(data.shape, weight.shape, at))
        _check_bias("Deconvolution", bias, at["no_bias"], geo.c)
    except GeomError as e:
        raise _fail("Deconvolution", e, names, (data, weight, bias), at,
                    _DECONV_SHOWN) from None
    return Aval(geo.data_shape, _float_dtype("Deconvolution", names, data, weight, bias))


def _deconv_vjp(c, g):
    x, w, b = c.inputs
    geo = G.deconv_geom(*_deconv_key(c.in_shapes[0], c.in_shapes[1], c.attrs))
    at = geo.attrs()
    dts = wanted(c)
    gx = gw = gb = None
    if dts[0] is not None:
        gx = sum_to(F.Convolution(g, w, None, no_bias=True, **at), c.in_shapes[0], dts[0])
    if dts[1] is not None:
        gw = sum_to(F._conv_grad_weight(g, x, weight_shape=c.in_shapes[1], **at),
                    c.in_shapes[1], dts[1])
    if b is not None and dts[2] is not None:
        gb = sum_to(_bias_grad(g, geo.c, geo), (geo.c,), dts[2])
    return gx, gw, gb


@defop("Deconvolution", save="inputs", infer=_deconv_infer, vjp=_deconv_vjp,
       inputs=("data", "weight", "bias?"), attrs=_DECONV_ATTRS,
       nd=("Deconvolution", "deconvolution"),
       param_shapes=ParamShapes(lambda s, a, n: _conv_params(s, a, n, deconv=True), (1, 2)),
       optional_inputs={"bias": lambda a: not a.get("no_bias")})
def _deconvolution(xp, data, weight, bias=None, kernel=(), stride=(), dilate=(), pad=(),
                   adj=(), target_shape=(), num_filter=0, num_group=1, workspace=512,
                   no_bias=True, cudnn_tune=None, cudnn_off=False, layout=None):
    """N-d transposed convolution (the data gradient of Convolution), with a bias."""
    if no_bias and bias is not None:
        raise ValueError("bias with no_bias=True")  # infer explains
    geo = G.deconv_geom(data.shape, weight.shape, G.freeze(kernel), G.freeze(stride),
                        G.freeze(dilate), G.freeze(pad), G.freeze(adj),
                        G.freeze(target_shape), num_filter, num_group, layout)
    out = P.conv_grad_data(xp, data, weight, geo)
    if bias is not None:
        b = bias.astype(out.dtype, copy=False)
        out += b if geo.cl else b.reshape((geo.c,) + (1,) * geo.nsp)
    return out


# ------------------------------------------------------------------ im2col, col2im
_PATCH_ATTRS = {"kernel": (), "stride": (), "dilate": (), "pad": ()}


def _plain(dshape, at):
    return G.plain_geom(tuple(dshape), G.freeze(at["kernel"]), G.freeze(at["stride"]),
                        G.freeze(at["dilate"]), G.freeze(at["pad"]))


def _im2col_infer(data, **at):
    _check_array("im2col", "data", data)
    at = dict(_PATCH_ATTRS, **at)
    try:
        geo = _plain(data.shape, at)
    except GeomError as e:
        raise _fail("im2col", e, ("data",), (data,), at, tuple(_PATCH_ATTRS)) from None
    return Aval((geo.n, geo.c * geo.kp, geo.op), data.dtype)


@defop("im2col", infer=_im2col_infer, attrs=_PATCH_ATTRS, nd=("im2col",), save=False,
       vjp=lambda c, g: (F.col2im(g, output_size=c.in_shapes[0][2:], **c.attrs),))
def _im2col(xp, data, kernel=(), stride=(), dilate=(), pad=()):
    """Patches of ``data`` (N, C, *spatial) as columns: (N, C * prod(kernel), L)."""
    geo = _plain(data.shape, {"kernel": kernel, "stride": stride, "dilate": dilate,
                              "pad": pad})
    return P.im2col(xp, data, geo)


def _col2im_geom(shape, output_size, at):
    if len(shape) != 3:
        raise GeomError(f"data must have 3 dimensions (N, C * prod(kernel), L), got "
                        f"{len(shape)}")
    size = G.freeze(output_size)
    if isinstance(size, int):
        size = (size,)
    if not isinstance(size, tuple) or not 1 <= len(size) <= 3 or \
            not all(isinstance(v, int) and v > 0 for v in size):
        raise GeomError(f"output_size={output_size!r} must be 1 to 3 positive ints")
    k = G.ints("kernel", G.freeze(at["kernel"]), len(size), None)
    if k is None:
        raise GeomError(f"kernel must be given ({len(size)} ints)")
    kp = int(numpy.prod(k))
    if shape[1] % kp:
        raise GeomError(f"data.shape[1]={shape[1]} must be a multiple of prod(kernel)={kp}")
    geo = _plain((shape[0], shape[1] // kp) + size, at)
    if shape[2] != geo.op:
        raise GeomError(f"data.shape[2]={shape[2]} must be the number of patches, "
                        f"{geo.op} (output spatial shape {geo.o})")
    return geo


def _col2im_infer(data, output_size=(), **at):
    _check_array("col2im", "data", data)
    at = dict(_PATCH_ATTRS, **at)
    try:
        geo = _col2im_geom(data.shape, output_size, at)
    except GeomError as e:
        raise _fail("col2im", e, ("data",), (data,), dict(at, output_size=output_size),
                    ("output_size",) + tuple(_PATCH_ATTRS)) from None
    return Aval(geo.data_shape, _float_dtype("col2im", ("data",), data))


@defop("col2im", infer=_col2im_infer, attrs=dict(output_size=(), **_PATCH_ATTRS),
       nd=("col2im",), save=False,
       vjp=lambda c, g: (F.im2col(g, **{k: c.attrs[k] for k in _PATCH_ATTRS}),))
def _col2im(xp, data, output_size=(), kernel=(), stride=(), dilate=(), pad=()):
    """Columns (N, C * prod(kernel), L) summed back into an image (N, C, *output_size)."""
    geo = _col2im_geom(data.shape, output_size, {"kernel": kernel, "stride": stride,
                                                 "dilate": dilate, "pad": pad})
    return P.col2im(xp, data, geo)
