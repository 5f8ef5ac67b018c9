"""Geometry of the convolution family: attribute parsing, shapes, padding, errors.

A convolution is described by a :class:`Geom`: batch ``n``, input channels ``c``,
filters ``f``, groups ``g``, input spatial shape ``x``, kernel ``k``, stride ``s``,
dilation ``d``, padding ``p`` as ``(before, after)`` pairs and output spatial shape
``o``, in a channels-first (``NCW/NCHW/NCDHW``) or channels-last (``NWC/NHWC/NDHWC``)
layout. Weights are ``(f, c / g, *k)`` channels-first (MXNet) and ``(f, *k, c / g)``
channels-last (MXNet's NHWC weight layout). Everything here is pure (no arrays), so
``infer`` rules and ``forward`` share it; the geometries are cached by shape and
attributes.
"""
from __future__ import annotations

import functools
import math

import numpy

_CF = {3: "NCW", 4: "NCHW", 5: "NCDHW"}
_CL = {3: "NWC", 4: "NHWC", 5: "NDHWC"}


class GeomError(ValueError):
    """A bad shape or attribute; the operator's ``infer`` adds its name and the inputs."""


def freeze(v):
    """``v`` with lists turned into tuples (a hashable cache key)."""
    if isinstance(v, (list, tuple)):
        return tuple(freeze(e) for e in v)
    if isinstance(v, numpy.integer):
        return int(v)
    return v


class Geom:
    """The geometry of one convolution (see the module docstring)."""

    __slots__ = ("c", "cg", "cl", "d", "dk", "f", "fg", "g", "k", "kp", "layout", "n", "need",
                 "nsp", "o", "op", "p", "s", "x")

    def __init__(self, layout, n, c, f, g, x, k, s, d, p, o):
        self.layout, self.cl = layout, layout[-1] == "C"
        self.n, self.c, self.f, self.g = n, c, f, g
        self.x, self.k, self.s, self.d, self.p, self.o = x, k, s, d, p, o
        self.cg, self.fg, self.nsp = c // g, f // g, len(x)
        self.dk = tuple(di * (ki - 1) + 1 for ki, di in zip(k, d))
        # the extent of the padded input the windows read (trailing rows may be unused)
        self.need = tuple(si * (oi - 1) + dki for si, oi, dki in zip(s, o, self.dk))
        self.kp, self.op = math.prod(k), math.prod(o)

    def _shape(self, ch, sp, lead=None):
        lead = self.n if lead is None else lead
        return (lead,) + tuple(sp) + (ch,) if self.cl else (lead, ch) + tuple(sp)

    @property
    def data_shape(self):
        return self._shape(self.c, self.x)

    @property
    def out_shape(self):
        return self._shape(self.f, self.o)

    @property
    def weight_shape(self):
        return self._shape(self.cg, self.k, self.f)

    @property
    def bias_axes(self):
        """The axes of the output summed by the gradient wrt the bias."""
        return tuple(range(self.nsp + 1)) if self.cl else (0,) + tuple(range(2, self.nsp + 2))

    def attrs(self) -> dict:
        """The normalized attributes the internal operators take."""
        return {"kernel": self.k, "stride": self.s, "dilate": self.d, "pad": self.p,
                "num_group": self.g, "layout": self.layout}


# ------------------------------------------------------------------ attribute parsing
def layout_of(layout, ndim):
    """The layout name for ``ndim``-dimensional data (None: channels first)."""
    if ndim not in _CF:
        raise GeomError(f"data must have 3, 4 or 5 dimensions (batch, channels and 1 to 3 "
                        f"spatial dimensions), got {ndim}")
    if layout is None or layout == "":
        return _CF[ndim]
    if layout in (_CF[ndim], _CL[ndim]):
        return layout
    if layout in _CF.values() or layout in _CL.values():
        raise GeomError(f"layout {layout!r} is for {len(layout)}-dimensional data but the "
                        f"data has {ndim} dimensions; use {_CF[ndim]!r} or {_CL[ndim]!r}")
    raise GeomError(f"unknown layout {layout!r}; expected {_CF[ndim]!r} (channels first, "
                    f"the default) or {_CL[ndim]!r} (channels last)")


def _is_int(v):
    return isinstance(v, (int, numpy.integer)) and not isinstance(v, bool)


def ints(what, v, nsp, default, low=1):
    """``v`` (None, (), an int or ``nsp`` ints) as a tuple of ``nsp`` ints >= ``low``."""
    if v is None or (isinstance(v, (tuple, list)) and len(v) == 0):
        if default is None:
            return None
        return (default,) * nsp
    if _is_int(v):
        v = (int(v),) * nsp
    elif isinstance(v, (tuple, list)) and all(_is_int(e) for e in v):
        v = tuple(int(e) for e in v)
        if len(v) != nsp:
            raise GeomError(f"{what}={v} must have {nsp} value(s), one per spatial "
                            "dimension")
    else:
        raise GeomError(f"{what} must be an int or a tuple of {nsp} ints, got {v!r}")
    if any(e < low for e in v):
        raise GeomError(f"{what}={v} must be >= {low}")
    return v


def same_pads(x, k, s, d):
    """TensorFlow/Keras "same" padding: output ceil(x / s); the odd pixel goes after."""
    out = []
    for xi, ki, si, di in zip(x, k, s, d):
        dk = di * (ki - 1) + 1
        total = max((-(-xi // si) - 1) * si + dk - xi, 0)
        out.append((total // 2, total - total // 2))
    return tuple(out)


def pads(v, nsp, x, k, s, d):
    """``pad`` as ``(before, after)`` pairs: None/() (none), 'valid', 'same', an int,
    ``nsp`` ints (symmetric, MXNet) or ``nsp`` pairs (asymmetric, Keras)."""
    if isinstance(v, str):
        if v.lower() == "valid":
            return ((0, 0),) * nsp
        if v.lower() == "same":
            return same_pads(x, k, s, d)
        raise GeomError(f"pad={v!r}: the padding modes are 'valid' and 'same'")
    if v is None or (isinstance(v, (tuple, list)) and len(v) == 0):
        return ((0, 0),) * nsp
    if _is_int(v):
        out = ((int(v), int(v)),) * nsp
    elif isinstance(v, (tuple, list)) and len(v) == nsp and all(_is_int(e) for e in v):
        out = tuple((int(e), int(e)) for e in v)
    elif (isinstance(v, (tuple, list)) and len(v) == nsp
          and all(isinstance(e, (tuple, list)) and len(e) == 2 and all(_is_int(t) for t in e)
                  for e in v)):
        out = tuple((int(a), int(b)) for a, b in v)
    else:
        raise GeomError(f"pad={v!r} must be an int, {nsp} ints (symmetric), {nsp} "
                        "(before, after) pairs, 'valid' or 'same'")
    if any(t < 0 for pair in out for t in pair):
        raise GeomError(f"pad={v!r} must not be negative")
    return out


def make_geom(layout, n, c, f, g, x, k, s, d, p):
    """The geometry, with the output shape; errors when the kernel does not fit."""
    o = []
    for i, (xi, ki, si, di, (lo, hi)) in enumerate(zip(x, k, s, d, p)):
        dk = di * (ki - 1) + 1
        if xi + lo + hi < dk:
            raise GeomError(f"the kernel {tuple(k)} (dilated to {dk} along spatial axis {i}) "
                            f"is larger than the padded input: {xi} + pad {lo} + {hi} = "
                            f"{xi + lo + hi}")
        o.append((xi + lo + hi - dk) // si + 1)
    return Geom(layout, n, c, f, g, tuple(x), tuple(k), tuple(s), tuple(d), tuple(p), tuple(o))


def split(shape, cl):
    """(batch, channels, spatial) of a data shape, or (axis 0, channels, spatial) of a
    weight shape, in the layout."""
    if cl:
        return shape[0], shape[-1], tuple(shape[1:-1])
    return shape[0], shape[1], tuple(shape[2:])


def _weight_desc(cl, nsp, first="num_filter", second="channels / num_group"):
    k = ", ".join(("kd", "kh", "kw")[3 - nsp:])
    return f"({first}, {k}, {second})" if cl else f"({first}, {second}, {k})"


def _groups(v):
    if not _is_int(v) or v < 1:
        raise GeomError(f"num_group={v!r} must be a positive int")
    return int(v)


@functools.lru_cache(maxsize=4096)
def conv_geom(dshape, wshape, kernel=(), stride=(), dilate=(), pad=(), num_filter=0,
              num_group=1, layout=None):
    """The geometry of ``Convolution`` (hashable arguments; see :func:`freeze`)."""
    layout = layout_of(layout, len(dshape))
    cl, nsp = layout[-1] == "C", len(dshape) - 2
    if len(wshape) != len(dshape):
        raise GeomError(f"weight must have {len(dshape)} dimensions "
                        f"{_weight_desc(cl, nsp)} for layout {layout}, got {len(wshape)}")
    n, c, x = split(dshape, cl)
    f, cgw, k = split(wshape, cl)
    kk = ints("kernel", kernel, nsp, None)
    if kk is not None and kk != k:
        raise GeomError(f"kernel={kk} does not match the weight's kernel shape {k} "
                        f"(weight layout {_weight_desc(cl, nsp)})")
    g = _groups(num_group)
    if c % g:
        raise GeomError(f"num_group={g} does not divide the {c} input channels")
    if f % g:
        raise GeomError(f"num_group={g} does not divide the {f} filters (weight.shape[0])")
    if cgw * g != c:
        raise GeomError(f"the data has {c} channels but the weight expects {cgw * g} "
                        f"({cgw} per group x {g} group(s); weight layout "
                        f"{_weight_desc(cl, nsp)})")
    if num_filter and num_filter != f:
        raise GeomError(f"num_filter={num_filter} does not match the weight's {f} filters "
                        "(weight.shape[0])")
    s, d = ints("stride", stride, nsp, 1), ints("dilate", dilate, nsp, 1)
    return make_geom(layout, n, c, f, g, x, k, s, d, pads(pad, nsp, x, k, s, d))


@functools.lru_cache(maxsize=4096)
def deconv_geom(dshape, wshape, kernel=(), stride=(), dilate=(), pad=(), adj=(),
                target_shape=(), num_filter=0, num_group=1, layout=None):
    """The geometry of the convolution whose data gradient ``Deconvolution`` computes.

    Its ``x`` is the deconvolution's output spatial shape and its ``o`` the input's.
    """
    layout = layout_of(layout, len(dshape))
    cl, nsp = layout[-1] == "C", len(dshape) - 2
    wdesc = _weight_desc(cl, nsp, "in_channels", "num_filter / num_group")
    if len(wshape) != len(dshape):
        raise GeomError(f"weight must have {len(dshape)} dimensions {wdesc} for layout "
                        f"{layout}, got {len(wshape)}")
    n, cin, xin = split(dshape, cl)
    wc, fg, k = split(wshape, cl)
    if wc != cin:
        raise GeomError(f"the data has {cin} channels but the weight expects {wc} "
                        f"(weight.shape[0]; weight layout {wdesc})")
    kk = ints("kernel", kernel, nsp, None)
    if kk is not None and kk != k:
        raise GeomError(f"kernel={kk} does not match the weight's kernel shape {k} "
                        f"(weight layout {wdesc})")
    g = _groups(num_group)
    if cin % g:
        raise GeomError(f"num_group={g} does not divide the {cin} input channels")
    nf = fg * g
    if num_filter and num_filter != nf:
        raise GeomError(f"num_filter={num_filter} does not match the weight: {fg} filters per "
                        f"group x {g} group(s) = {nf}")
    s, d = ints("stride", stride, nsp, 1), ints("dilate", dilate, nsp, 1)
    a = ints("adj", adj, nsp, 0, low=0)
    dk = tuple(di * (ki - 1) + 1 for ki, di in zip(k, d))
    full = tuple(si * (xi - 1) + dki for si, xi, dki in zip(s, xin, dk))
    target = ints("target_shape", target_shape, nsp, None, low=0)
    if target is not None and any(target):
        if any(t < 1 for t in target):
            raise GeomError(f"target_shape={target} must be positive")
        if any(t > fu for t, fu in zip(target, full)):
            raise GeomError(f"target_shape={target} is larger than the largest output "
                            f"{full} (stride * (input - 1) + dilated kernel)")
        tot = tuple(fu - t for fu, t in zip(full, target))  # MXNet's rule
        a = tuple(t % 2 for t in tot)
        p = tuple(((t + 1) // 2,) * 2 for t in tot)
    elif isinstance(pad, str):
        if any(a):
            raise GeomError(f"adj={a} cannot be combined with pad={pad!r}; give the padding "
                            "as (before, after) pairs instead")
        if pad.lower() == "same":
            t = tuple(xi * si for xi, si in zip(xin, s))
            p = same_pads(t, k, s, d)
        else:
            t = tuple(xi * si + max(dki - si, 0) for xi, si, dki in zip(xin, s, dk))
            p = pads(pad, nsp, t, k, s, d)
        a = tuple(ti - (fu - lo - hi) for ti, fu, (lo, hi) in zip(t, full, p))
    else:
        p = pads(pad, nsp, xin, k, s, d)
    if any(ai >= si for ai, si in zip(a, s)):
        raise GeomError(f"adj={a} must be smaller than stride={s}")
    t = tuple(fu - lo - hi + ai for fu, (lo, hi), ai in zip(full, p, a))
    if any(ti < 1 for ti in t):
        raise GeomError(f"pad={p} is too large: the output would have spatial shape {t}")
    geo = make_geom(layout, n, nf, cin, g, t, k, s, d, p)
    if geo.o != xin:  # cannot happen when adj < stride; a guard for the invariant
        raise GeomError(f"internal: output {t} does not map back to the input {xin}")
    return geo


def plain_geom(dshape, kernel, stride, dilate, pad, name_k="kernel"):
    """The geometry of ``im2col``/``col2im`` (channels first, one group, no weight)."""
    layout = layout_of(None, len(dshape))
    nsp = len(dshape) - 2
    n, c, x = split(dshape, False)
    k = ints(name_k, kernel, nsp, None)
    if k is None:
        raise GeomError(f"kernel must be given ({nsp} ints)")
    s, d = ints("stride", stride, nsp, 1), ints("dilate", dilate, nsp, 1)
    return make_geom(layout, n, c, c, 1, x, k, s, d, pads(pad, nsp, x, k, s, d))


