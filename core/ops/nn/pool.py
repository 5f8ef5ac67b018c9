"""Pooling: MXNet's ``Pooling`` (max, avg, sum and lp over 1-D, 2-D and 3-D windows, channels
first or last) and the operators its gradients are written with.

Every pooling runs as a loop over the kernel offsets (4 iterations for a 2x2 window), each a
whole-array NumPy/CuPy operation on a strided view of the (padded) input, so both layouts
pool in place, without transposing. A window that is the whole (padded) input, as in global
pooling, is one reduction.

Padding follows MXNet: ``pad`` adds that many cells before and after each spatial axis;
padded cells never win a max, count as zeros in sums, and count towards the divisor of an
average only with ``count_include_pad=True`` (the default). ``pad`` also takes
``((before, after), ...)`` pairs: Keras' asymmetric 'same' padding is
``pad=((total // 2, total - total // 2), ...)`` with ``pooling_convention='valid'``, where
``total = max((ceil(x / s) - 1) * s + k - x, 0)``. The 'full' and 'same' conventions let the
last window run past the padded input; the cells past it are ignored and not counted (as
MXNet does). MXNet only allows 'same' for 1-D max pooling; here it works for every
pool type and dimension: ``out = ceil(padded / stride)``, windows start at ``-pad_before``.

Gradients: max pooling routes each output's gradient to the first position (in row-major
window order) holding the window's maximum (``_pooling_max_route``); its adjoint gathers
at those positions (``_pooling_max_gather``), so gradients of any order work. Sum and
average pooling are linear; their adjoint is ``_pooling_spread``, whose adjoint is
``Pooling`` again. lp pooling, ``y = (sum x ** p) ** (1 / p)``, differentiates as
``spread(g * y ** (1 - p)) * x ** (p - 1)`` (MXNet's ``lp_grad``).
"""
from __future__ import annotations

import itertools
import math
import operator
from functools import lru_cache

import numpy

from ... import cpu_parallel
from ...dtypes import is_float
from ..infer import fmt
from ..registry import Aval, F, defop

_TYPES = ("max", "avg", "sum", "lp")
_CONVENTIONS = ("valid", "full", "same")
_LAYOUTS = {3: ("NCW", "NWC"), 4: ("NCHW", "NHWC"), 5: ("NCDHW", "NDHWC")}
_ALL_LAYOUTS = tuple(lay for pair in _LAYOUTS.values() for lay in pair)

POOL_ATTRS = {"kernel": (), "pool_type": "max", "global_pool": False, "cudnn_off": False,
              "pooling_convention": "valid", "stride": (), "pad": (), "p_value": None,
              "count_include_pad": None, "layout": None}


# ------------------------------------------------------------------ geometry
class Geometry:
    """Where the windows of one pooling call lie.

    ``axes``: the spatial axes; ``size``, ``kernel``, ``stride``, ``out``: per spatial axis;
    ``before``/``after``: padding; ``extent``: cells the windows span from the first padded
    cell, ``(out - 1) * stride + kernel``; ``buf``: the padded buffer's extent,
    ``max(extent, before + size)``.
    """

    __slots__ = ("after", "axes", "before", "buf", "channels_last", "extent", "include_pad",
                 "kernel", "out", "p", "pool_type", "size", "stride")

    def out_shape(self, shape):
        out = list(shape)
        for a, o in zip(self.axes, self.out):
            out[a] = o
        return tuple(out)

    def buf_shape(self, shape):
        out = list(shape)
        for a, b in zip(self.axes, self.buf):
            out[a] = b
        return tuple(out)

    @property
    def unpadded(self) -> bool:
        """The windows read only input cells (no padding, no overflow past the end)."""
        return all(b == 0 and e <= s for b, e, s in zip(self.before, self.extent, self.size))

    @property
    def single_window(self) -> bool:
        return all(o == 1 for o in self.out)

    def window_keys(self, ndim):
        """One index per kernel offset: the cells each window reads at that offset."""
        per_axis = [[slice(o, o + s * (n - 1) + 1, s) for o in range(k)]
                    for k, s, n in zip(self.kernel, self.stride, self.out)]
        keys = []
        for combo in itertools.product(*per_axis):
            key = [slice(None)] * ndim
            for a, sl in zip(self.axes, combo):
                key[a] = sl
            keys.append(tuple(key))
        return keys

    def input_key(self, ndim):
        """The input's cells inside the padded buffer."""
        key = [slice(None)] * ndim
        for a, b, s in zip(self.axes, self.before, self.size):
            key[a] = slice(b, b + s)
        return tuple(key)

    def region_key(self, ndim):
        """The single window of a single-window pooling inside the padded buffer."""
        key = [slice(None)] * ndim
        for a, k in zip(self.axes, self.kernel):
            key[a] = slice(0, k)
        return tuple(key)


def _ints(name, what, v, n, layout, shape):
    """``v`` (an int or a sequence of ``n`` ints) as a tuple of ``n`` ints."""
    try:
        t = (operator.index(v),) * n if not hasattr(v, "__iter__") else \
            tuple(operator.index(s) for s in v)
    except TypeError:
        raise TypeError(f"{name}: {what} must be an int or a sequence of ints, got {v!r}") \
            from None
    if len(t) != n:
        raise ValueError(f"{name}: {what}={tuple(t)} has {len(t)} value(s) but the {layout} "
                         f"input of shape {shape} has {n} spatial dimension(s)")
    return t


def _pairs(name, pad, n, layout, shape):
    """``pad`` (int, per-axis ints, or (before, after) pairs) as two tuples."""
    if pad is None or (hasattr(pad, "__len__") and len(pad) == 0):
        return (0,) * n, (0,) * n
    if hasattr(pad, "__iter__") and any(hasattr(p, "__iter__") for p in pad):
        try:
            pairs = [tuple(operator.index(q) for q in p) for p in pad]
        except TypeError:
            raise TypeError(f"{name}: pad must be ints or (before, after) pairs of ints, got "
                            f"{pad!r}") from None
        if len(pairs) != n or any(len(p) != 2 for p in pairs):
            raise ValueError(f"{name}: pad={pad!r} must give one (before, after) pair per "
                             f"spatial dimension; the {layout} input of shape {shape} has {n}")
        before, after = tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
    else:
        before = after = _ints(name, "pad", pad, n, layout, shape)
    if min(before + after) < 0:
        raise ValueError(f"{name}: pad must be non-negative, got {pad!r}")
    return before, after


def _hashable(v):
    if isinstance(v, list) or (isinstance(v, tuple) and any(isinstance(e, list) for e in v)):
        return tuple(_hashable(e) for e in v)
    return v


def geometry(name, shape, kernel=(), pool_type="max", global_pool=False, cudnn_off=False,
             pooling_convention="valid", stride=(), pad=(), p_value=None,
             count_include_pad=None, layout=None) -> Geometry:
    """The windows of a pooling call, or a ValueError/TypeError naming ``name``."""
    args = (name, tuple(shape), _hashable(kernel), pool_type, bool(global_pool),
            pooling_convention, _hashable(stride), _hashable(pad), p_value, count_include_pad,
            layout)
    try:
        return _geometry(*args)
    except TypeError as e:
        if "unhashable" not in str(e):
            raise
        return _geometry.__wrapped__(*args)


@lru_cache(maxsize=512)
def _geometry(name, shape, kernel, pool_type, global_pool, convention, stride, pad, p_value,
              count_include_pad, layout):
    if pool_type not in _TYPES:
        raise ValueError(f"{name}: unknown pool_type {pool_type!r} (input shape {shape}); "
                         f"use one of {', '.join(map(repr, _TYPES))}")
    if convention not in _CONVENTIONS:
        raise ValueError(f"{name}: unknown pooling_convention {convention!r}; use one of "
                         f"{', '.join(map(repr, _CONVENTIONS))}")
    ndim = len(shape)
    if layout is None:
        if ndim not in _LAYOUTS:
            raise ValueError(f"{name}: the input must be 3-D (N, C, W), 4-D (N, C, H, W) or "
                             f"5-D (N, C, D, H, W), got shape {shape}")
        layout = _LAYOUTS[ndim][0]
    elif layout not in _ALL_LAYOUTS:
        raise ValueError(f"{name}: unknown layout {layout!r}; use one of "
                         f"{', '.join(_ALL_LAYOUTS)}")
    if len(layout) != ndim:
        raise ValueError(f"{name}: layout {layout!r} needs a {len(layout)}-D input, got shape "
                         f"{shape} ({ndim}-D)")
    n = ndim - 2
    g = Geometry()
    g.channels_last = layout[-1] == "C"
    g.axes = tuple(range(1, ndim - 1)) if g.channels_last else tuple(range(2, ndim))
    g.size = tuple(shape[a] for a in g.axes)
    if global_pool:
        g.kernel, g.stride, g.before, g.after = g.size, (1,) * n, (0,) * n, (0,) * n
        convention = "valid"
    else:
        if kernel is None or (hasattr(kernel, "__len__") and len(kernel) == 0):
            raise ValueError(f"{name}: kernel is required unless global_pool=True (input "
                             f"shape {shape}, layout {layout})")
        g.kernel = _ints(name, "kernel", kernel, n, layout, shape)
        g.stride = (1,) * n if stride is None or stride == () else \
            _ints(name, "stride", stride, n, layout, shape)
        g.before, g.after = _pairs(name, pad, n, layout, shape)
        if min(g.kernel) < 1 or min(g.stride) < 1:
            raise ValueError(f"{name}: kernel and stride must be positive, got "
                             f"kernel={g.kernel}, stride={g.stride}")
    padded = tuple(b + s + a for b, s, a in zip(g.before, g.size, g.after))
    if any(k > p for k, p in zip(g.kernel, padded)):
        raise ValueError(f"{name}: the pooling window {g.kernel} is larger than the padded "
                         f"input {padded} (input shape {shape}, layout {layout}, padding "
                         f"{tuple(zip(g.before, g.after))}); use a smaller kernel or more "
                         "padding")
    if convention == "valid":
        g.out = tuple((p - k) // s + 1 for p, k, s in zip(padded, g.kernel, g.stride))
    elif convention == "full":
        g.out = tuple(-(-(p - k) // s) + 1 for p, k, s in zip(padded, g.kernel, g.stride))
    else:
        g.out = tuple(-(-p // s) for p, s in zip(padded, g.stride))
    g.extent = tuple((o - 1) * s + k for o, s, k in zip(g.out, g.stride, g.kernel))
    g.buf = tuple(max(e, b + s) for e, b, s in zip(g.extent, g.before, g.size))
    g.pool_type = pool_type
    if pool_type == "lp" and (p_value is None or isinstance(p_value, bool)
                              or not p_value > 0):
        raise ValueError(f"{name}: pool_type='lp' needs a positive p_value, got {p_value!r}")
    g.p = p_value
    g.include_pad = True if count_include_pad is None else bool(count_include_pad)
    return g


def _check_dtype(name, x, pool_type):
    floats_only = pool_type in ("avg", "lp")
    if not (is_float(x.dtype) or (not floats_only and x.dtype.kind in "iu")):
        raise TypeError(f"{name}: pool_type={pool_type!r} needs a "
                        f"{'floating-point' if floats_only else 'numeric'} input, got "
                        f"{fmt([x])}")


def _divisor(g: Geometry, ndim):
    """The count each window's sum is divided by (a number, or per-output counts)."""
    counts = []
    for b, s, a, k, st, o in zip(g.before, g.size, g.after, g.kernel, g.stride, g.out):
        start = numpy.arange(o) * st - b  # in input coordinates
        lo, hi = (-b, s + a) if g.include_pad else (0, s)
        counts.append(numpy.clip(numpy.minimum(start + k, hi) - numpy.maximum(start, lo),
                                 1, None))
    if all((c == c[0]).all() for c in counts):
        return float(math.prod(int(c[0]) for c in counts))
    div = numpy.ones([1] * ndim)
    for a, c in zip(g.axes, counts):
        shape = [1] * ndim
        shape[a] = len(c)
        div = div * c.reshape(shape)
    return div


def _fill_low(dtype):
    dtype = numpy.dtype(dtype)
    if dtype.kind in "iu":
        return numpy.iinfo(dtype).min
    return -numpy.inf


def _padded(xp, x, g: Geometry, fill):
    """``x`` inside a buffer covering every window (``x`` itself when nothing is padded)."""
    if g.unpadded:
        return x
    buf = xp.full(g.buf_shape(x.shape), fill, dtype=x.dtype)
    buf[g.input_key(x.ndim)] = x
    return buf


def _crop(xp, buf, g: Geometry):
    """The input's cells of a padded buffer (a gradient)."""
    if tuple(buf.shape[a] for a in g.axes) == g.size:
        return buf
    return xp.ascontiguousarray(buf[g.input_key(buf.ndim)])


def _scaled(xp, g, div):
    if isinstance(div, float):
        return g if div == 1.0 else g * g.dtype.type(1.0 / div)
    return g / xp.asarray(div, dtype=g.dtype)


# ------------------------------------------------------------------ forwards
def _windows(xp, xb, g: Geometry, ufunc):
    """Every window of ``xb`` reduced with ``ufunc`` (``add``, ``maximum``), one pass per
    kernel offset over whole-array strided views. This and the gradients below split
    their passes over the samples (axis 0 in both layouts) with ``core.cpu_parallel``:
    the same NumPy passes on slices, so results do not depend on the split."""
    if g.single_window:
        region = xb[g.region_key(xb.ndim)]
        if ufunc is xp.maximum:
            return region.max(axis=g.axes, keepdims=True)
        return region.sum(axis=g.axes, keepdims=True, dtype=xb.dtype)
    keys = g.window_keys(xb.ndim)
    acc = xp.empty(xb[keys[0]].shape, xb.dtype)

    def part(lo, hi):
        a = acc[lo:hi]
        a[...] = xb[keys[0]][lo:hi]
        for key in keys[1:]:
            ufunc(a, xb[key][lo:hi], out=a)

    cpu_parallel.run_chunks(acc.shape[0], part, elements=xb.size, xp=xp)
    return acc


def _sum_windows(xp, xb, g: Geometry):
    return _windows(xp, xb, g, xp.add)


def _max_windows(xp, xb, g: Geometry):
    return _windows(xp, xb, g, xp.maximum)


def _root(xp, s, p):
    if p == 1:
        return s
    if p == 2:
        return xp.sqrt(s)
    if p == 3:
        return xp.cbrt(s)
    return xp.power(s, s.dtype.type(1.0 / p))


def _power(xp, x, p):
    if p == 1:
        return x
    if p == 2:
        return x * x
    return xp.power(x, x.dtype.type(p))


def pool_forward(xp, x, g: Geometry):
    """Pool ``x`` as ``g`` says (raw arrays)."""
    t = g.pool_type
    if t == "max":
        return _max_windows(xp, _padded(xp, x, g, _fill_low(x.dtype)), g)
    if t == "lp":
        return _root(xp, _sum_windows(xp, _padded(xp, _power(xp, x, g.p), g, 0), g), g.p)
    out = _sum_windows(xp, _padded(xp, x, g, 0), g)
    if t == "avg":
        out = _scaled(xp, out, _divisor(g, x.ndim))
    return out


def _infer(x, **attrs):
    g = geometry("Pooling", x.shape, **attrs)
    _check_dtype("Pooling", x, g.pool_type)
    return Aval(g.out_shape(x.shape), x.dtype)


def _sum_attrs(attrs):
    """The attributes of the sum pooling an lp pooling's gradient spreads with."""
    return dict(attrs, pool_type="sum") if attrs["pool_type"] == "lp" else attrs


def _pool_vjp(c, g):
    x = c.inputs[0]
    if not is_float(c.in_dtypes[0]):
        return (None,)
    attrs = c.attrs
    t = attrs["pool_type"]
    if t == "max":
        return (F._pooling_max_route(x, c.out, g, **attrs),)
    if t in ("avg", "sum"):
        return (F._pooling_spread(g, shape=c.in_shapes[0], **attrs),)
    p = attrs["p_value"]
    spread = F._pooling_spread(g if p == 1 else g * c.out ** (1 - p), shape=c.in_shapes[0],
                               **_sum_attrs(attrs))
    if p == 1:
        return (spread,)
    return (spread * (x if p == 2 else x ** (p - 1)),)


@defop("Pooling", infer=_infer, vjp=_pool_vjp, inputs=("data",), attrs=POOL_ATTRS,
       nd=("Pooling", "pooling"))
def _pooling(xp, x, **attrs):
    """Max, average, sum or lp pooling over 1-D/2-D/3-D windows (MXNet's Pooling)."""
    geo = geometry("Pooling", x.shape, **attrs)
    if geo.pool_type in ("avg", "lp") and not is_float(x.dtype):
        raise TypeError("integer input")  # infer explains
    return pool_forward(xp, x, geo)


# ------------------------------------------------------------------ gradients
def _spread_infer(g, shape=(), **attrs):
    geo = geometry("_pooling_spread", tuple(shape), **attrs)
    if geo.out_shape(tuple(shape)) != g.shape:
        raise ValueError(f"_pooling_spread: the gradient {fmt([g])} does not match the "
                         f"pooled shape {geo.out_shape(tuple(shape))} of an input of shape "
                         f"{tuple(shape)}")
    return Aval(tuple(shape), g.dtype)


def spread_raw(xp, gy, geo: Geometry, shape):
    """The adjoint of sum (or average) pooling: each window's gradient added to its cells."""
    if geo.pool_type == "avg":
        gy = _scaled(xp, gy, _divisor(geo, gy.ndim))
    bshape = geo.buf_shape(shape)
    if geo.single_window:
        buf = xp.zeros(bshape, gy.dtype)
        region = buf[geo.region_key(buf.ndim)]
        region[...] = gy
        return _crop(xp, buf, geo)
    disjoint = all(s >= k for s, k in zip(geo.stride, geo.kernel))
    tiled = disjoint and geo.unpadded and geo.stride == geo.kernel and geo.extent == geo.buf
    buf = xp.empty(bshape, gy.dtype)
    keys = geo.window_keys(buf.ndim)

    def part(lo, hi):
        b, g = buf[lo:hi], gy[lo:hi]
        if not tiled:
            b.fill(0)
        for key in keys:
            if disjoint:
                b[key] = g
            else:
                view = b[key]
                xp.add(view, g, out=view)

    cpu_parallel.run_chunks(bshape[0], part, elements=buf.size, xp=xp)
    return _crop(xp, buf, geo)


@defop("_pooling_spread", infer=_spread_infer, inputs=("g",),
       attrs=dict(POOL_ATTRS, shape=()), save=False,
       vjp=lambda c, h: (F.Pooling(h, **{k: v for k, v in c.attrs.items() if k != "shape"}),))
def _pooling_spread(xp, gy, shape=(), **attrs):
    """Adjoint of sum/average pooling: each output's value added over its window's cells."""
    geo = geometry("_pooling_spread", tuple(shape), **attrs)
    return spread_raw(xp, gy, geo, tuple(shape))


def _winners(xp, xb, y, geo: Geometry):
    """(key, mask) per kernel offset: where that offset holds its window's maximum, first
    occurrence (row-major window order) only."""
    m = None
    free = None
    keys = geo.window_keys(xb.ndim)
    last = len(keys) - 1
    for i, key in enumerate(keys):
        m = xp.equal(xb[key], y)
        if free is None:
            free = ~m
        else:
            xp.logical_and(m, free, out=m)
            if i < last:
                xp.logical_xor(free, m, out=free)
        yield key, m


def _flat_region(r, geo: Geometry):
    """A single-window region with its spatial axes merged into one (and that axis)."""
    s = r.shape
    if geo.channels_last:
        return r.reshape(s[0], -1, s[-1]), 1
    return r.reshape(s[0], s[1], -1), 2


def _route_raw(xp, x, y, gy, geo: Geometry):
    xb = _padded(xp, x, geo, _fill_low(x.dtype))
    bshape = xb.shape
    if geo.single_window:
        region = xb[geo.region_key(xb.ndim)]
        flat, ax = _flat_region(region, geo)
        idx = xp.expand_dims(flat.argmax(axis=ax), ax)
        pos = xp.arange(flat.shape[ax]).reshape([-1 if a == ax else 1 for a in range(3)])
        gflat, _ = _flat_region(gy, geo)
        buf = xp.zeros(bshape, gy.dtype)
        buf[geo.region_key(xb.ndim)] = ((pos == idx) * gflat).reshape(region.shape)
        return _crop(xp, buf, geo)
    disjoint = all(s >= k for s, k in zip(geo.stride, geo.kernel))
    tiled = disjoint and geo.unpadded and geo.stride == geo.kernel and geo.extent == geo.buf
    buf = xp.empty(bshape, gy.dtype)

    def part(lo, hi):
        b, g = buf[lo:hi], gy[lo:hi]
        if not tiled:
            b.fill(0)
        for key, m in _winners(xp, xb[lo:hi], y[lo:hi], geo):
            if disjoint:
                xp.multiply(g, m, out=b[key])
            else:
                view = b[key]
                xp.add(view, g * m, out=view)

    cpu_parallel.run_chunks(bshape[0], part, elements=buf.size, xp=xp)
    return _crop(xp, buf, geo)


def _gather_raw(xp, x, y, h, geo: Geometry):
    xb = _padded(xp, x, geo, _fill_low(x.dtype))
    hb = _padded(xp, h, geo, 0)
    if geo.single_window:
        flat, ax = _flat_region(xb[geo.region_key(xb.ndim)], geo)
        hflat, _ = _flat_region(hb[geo.region_key(hb.ndim)], geo)
        idx = xp.expand_dims(flat.argmax(axis=ax), ax)
        return xp.take_along_axis(hflat, idx, axis=ax).reshape(y.shape)
    out = xp.empty(y.shape, h.dtype)

    def part(lo, hi):
        o = out[lo:hi]
        o.fill(0)
        for key, m in _winners(xp, xb[lo:hi], y[lo:hi], geo):
            o += hb[key][lo:hi] * m

    cpu_parallel.run_chunks(y.shape[0], part, elements=xb.size, xp=xp)
    return out


def _route_infer(x, y, g, **attrs):
    geo = geometry("_pooling_max_route", x.shape, **attrs)
    if geo.out_shape(x.shape) != y.shape or y.shape != g.shape:
        raise ValueError(f"_pooling_max_route: the output and its gradient must have the "
                         f"pooled shape {geo.out_shape(x.shape)}, got {fmt([x, y, g])}")
    return Aval(x.shape, g.dtype)


def _gather_infer(x, y, h, **attrs):
    geo = geometry("_pooling_max_gather", x.shape, **attrs)
    if geo.out_shape(x.shape) != y.shape or h.shape != x.shape:
        raise ValueError(f"_pooling_max_gather: needs the input, its pooled maximum of shape "
                         f"{geo.out_shape(x.shape)} and an input-shaped array, got "
                         f"{fmt([x, y, h])}")
    return Aval(y.shape, h.dtype)


@defop("_pooling_max_route", infer=_route_infer, inputs=("data", "out", "g"), attrs=POOL_ATTRS,
       vjp=lambda c, h: (None, None, F._pooling_max_gather(c.inputs[0], c.inputs[1], h,
                                                           **c.attrs)))
def _pooling_max_route(xp, x, y, gy, **attrs):
    """Gradient of max pooling: each output's gradient at its window's (first) maximum."""
    return _route_raw(xp, x, y, gy, geometry("_pooling_max_route", x.shape, **attrs))


@defop("_pooling_max_gather", infer=_gather_infer, inputs=("data", "out", "h"),
       attrs=POOL_ATTRS,
       vjp=lambda c, g: (None, None, F._pooling_max_route(c.inputs[0], c.inputs[1], g,
                                                          **c.attrs)))
def _pooling_max_gather(xp, x, y, h, **attrs):
    """Adjoint of ``_pooling_max_route``: ``h`` read at each window's (first) maximum."""
    return _gather_raw(xp, x, y, h, geometry("_pooling_max_gather", x.shape, **attrs))
