"""Reductions: sum, mean, prod, max/min, argmax/argmin, std/var, norm, logsumexp,
all/any, the NaN-ignoring sums and means, and the cumulative sum and product.

``axis`` follows NumPy (None, an int or a tuple; negative counts from the end) and
``keepdims`` keeps reduced axes as size 1. The MXNet names also accept
``exclude=True`` (reduce over every axis *except* ``axis``) and treat ``axis=()`` as
"all axes", as MXNet 1.x does; in NumPy ``axis=()`` reduces over no axis.
"""
from __future__ import annotations

import math

import numpy

from ..dtypes import ML_FLOATS, as_dtype, is_float
from . import reduce_kernels
from .infer import norm_axes, norm_axis, reduced_shape, require_float, ufunc_dtype
from .registry import Aval, F, defop

_INT = numpy.dtype(numpy.int_)
_UINT = numpy.dtype(numpy.uint)
_F32 = numpy.dtype(numpy.float32)
_F64 = numpy.dtype(numpy.float64)


# --------------------------------------------------------------- axes and dtypes
def _desc(x) -> str:
    return f"{tuple(x.shape)} {x.dtype.name}"


def _axes(name, x, axis, exclude=False, mx=False, scalar_ok=True) -> tuple:
    """The reduced axes of ``x`` (an Aval or an array) as a sorted tuple.

    ``mx``: ``axis=()`` means every axis (MXNet). ``scalar_ok``: an int axis 0 or -1
    is accepted on a 0-d array, as NumPy's ufunc reductions do (``mean`` does not).
    """
    ndim = len(x.shape)
    if type(axis) is int and -ndim <= axis < ndim and not exclude:  # the common case
        return (axis % ndim,)
    empty = isinstance(axis, (tuple, list)) and len(axis) == 0
    if mx and empty:  # MXNet reduces every axis here, whatever ``exclude`` says
        return tuple(range(ndim))
    if axis is None:
        axes = tuple(range(ndim))
    elif ndim == 0 and (empty or (scalar_ok and not isinstance(axis, (bool, tuple, list))
                                  and axis in (0, -1))):
        axes = ()
    else:
        try:
            if ndim == 0:
                raise ValueError(f"{name}: axis={axis!r} is out of range for an array of 0 "
                                 "dimension(s)")
            axes = norm_axes(name, axis, ndim)
        except (ValueError, TypeError) as e:
            raise type(e)(f"{e} (input: {_desc(x)})") from None
    if exclude:
        axes = tuple(i for i in range(ndim) if i not in axes)
    return axes


def _int_axis(name, x, axis):
    """A single axis (argmax, cumsum) normalized, or None."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list, bool)):
        raise TypeError(f"{name}: axis must be None or an int, got {axis!r} "
                        f"(input: {_desc(x)})")
    try:
        if len(x.shape) == 0:
            if axis not in (0, -1):
                raise ValueError(f"{name}: axis={axis} is out of range for an array of 0 "
                                 "dimension(s)")
            return 0
        return norm_axis(name, axis, len(x.shape))
    except (ValueError, TypeError) as e:
        raise type(e)(f"{e} (input: {_desc(x)})") from None


def _check_nonempty(name, x, axes):
    for a in axes:
        if x.shape[a] == 0:
            raise ValueError(f"{name}: cannot reduce over axis {a}, which has size 0 (input: "
                             f"{_desc(x)}); this reduction has no identity value")


def _sum_dtype(name, dt, dtype=None):
    """NumPy's result dtype of sum/prod/cumsum: small integers and bools widen."""
    if dtype is not None:
        return as_dtype(dtype, name)
    if dt.kind == "b" or (dt.kind == "i" and dt.itemsize < _INT.itemsize):
        return _INT
    if dt.kind == "u" and dt.itemsize < _UINT.itemsize:
        return _UINT
    return dt


def _mean_dtype(name, dt, dtype=None):
    """NumPy's result dtype of mean/std/var: integers and bools give float64."""
    if dtype is not None:
        return as_dtype(dtype, name)
    return dt if is_float(dt) else _F64


def _same_dtype(name, dt, dtype=None):
    return dt


def _bool_dtype(name, dt, dtype=None):
    return numpy.dtype(bool)


def _acc(xp, name, x, dt, **kw):
    """``x.<name>(dtype=dt, **kw)`` (``xp.nan*`` for the NaN reductions), computed in
    float32 when bfloat16 or float8 is involved: NumPy would accumulate in them."""
    res = dt
    if dt in ML_FLOATS or x.dtype in ML_FLOATS:
        x, dt = x.astype(_F32), (_F32 if is_float(dt) else dt)
    # array methods skip NumPy's function dispatch, a few microseconds a call
    out = getattr(xp, name)(x, dtype=dt, **kw) if name.startswith("nan") else \
        getattr(x, name)(dtype=dt, **kw)
    return out if res == dt else out.astype(res)


def _by(name):
    """``compute`` for a reduction that has a ``dtype`` argument."""
    return lambda xp, x, axes, kd, dt: _acc(xp, name, x, dt, axis=axes, keepdims=kd)


# --------------------------------------------------------------- gradient helpers
def _unreduce_infer(g, shape=(), axes=(), keepdims=False):
    return Aval(tuple(shape), g.dtype)


@defop("_unreduce", infer=_unreduce_infer, attrs={"shape": (), "axes": (), "keepdims": False},
       save=False, vjp=lambda c, g: (F.sum(g, axis=tuple(c.attrs["axes"]),
                                           keepdims=c.attrs["keepdims"]),))
def _unreduce(xp, g, shape=(), axes=(), keepdims=False):
    """Broadcast a reduction's result back over its reduced ``axes`` to ``shape``."""
    shape = tuple(shape)
    if not keepdims:
        g = g.reshape(reduced_shape(shape, tuple(axes), True))
    # A materialized array (not a read-only view): gradients may be modified in place.
    return xp.broadcast_to(g, shape).copy()


def _vjp_axes(c) -> tuple:
    a = c.attrs
    x = Aval(c.in_shapes[0], c.in_dtypes[0])
    return _axes(c.node.op.name, x, a.get("axis"), a.get("exclude", False), a.get("_mx", False))


def _spread(c, g, axes=None):
    """``g`` (shaped like the output) broadcast to the input's shape, in its dtype."""
    dt = c.in_dtypes[0]
    if g.dtype != dt:
        g = F.cast(g, dtype=dt)
    return F._unreduce(g, shape=c.in_shapes[0], axes=_vjp_axes(c) if axes is None else axes,
                       keepdims=c.attrs.get("keepdims", False))


def _count(c, axes) -> int:
    return math.prod(c.in_shapes[0][a] for a in axes)


# --------------------------------------------------------------- the family factory
_MX_ATTRS = {"axis": None, "keepdims": False, "exclude": False}


def _reduction(name, compute, out_dtype, vjp, nd=None, np=None, dtype_attr=True,
               scalar_ok=True, nonempty=False, save=True, doc=""):
    """Register a reduction ``compute(xp, x, axes, keepdims, dt)`` with the common attrs."""
    attrs = dict(_MX_ATTRS, **({"dtype": None} if dtype_attr else {}), _mx=False)

    def _scalar_ok(dt):
        return scalar_ok(dt) if callable(scalar_ok) else scalar_ok

    def infer(x, axis=None, keepdims=False, exclude=False, dtype=None, _mx=False):
        axes = _axes(name, x, axis, exclude, _mx, _scalar_ok(x.dtype))
        if nonempty:
            _check_nonempty(name, x, axes)
        return Aval(reduced_shape(x.shape, axes, keepdims), out_dtype(name, x.dtype, dtype))

    def forward(xp, x, axis=None, keepdims=False, exclude=False, dtype=None, _mx=False):
        axes = _axes(name, x, axis, exclude, _mx, _scalar_ok(x.dtype))
        if nonempty:
            _check_nonempty(name, x, axes)
        return compute(xp, x, axes, keepdims, out_dtype(name, x.dtype, dtype))

    forward.__doc__ = doc
    nd = (name,) if nd is None else nd
    defop(name, infer=infer, vjp=vjp, attrs=attrs, save=save, doc=doc,
          nd=tuple((n, {"_mx": True}) for n in nd), np=(name,) if np is None else np)(forward)


# --------------------------------------------------------------- sum, mean, prod
def _sum_vjp(c, g):
    if not is_float(c.in_dtypes[0]):
        return (None,)
    return (_spread(c, g),)


def _mean_vjp(c, g):
    if not is_float(c.in_dtypes[0]):
        return (None,)
    axes = _vjp_axes(c)
    return (_spread(c, g * (1.0 / max(_count(c, axes), 1)), axes),)


def _prod_vjp(c, g):
    # d prod / d x_i = product of the others, exact with zeros: with no zero it is
    # prod / x_i; with one zero at z it is the product of the non-zeros at z and
    # x_z * (that product) / x_i = 0 elsewhere, written so that second derivatives
    # stay right; with two or more zeros it is 0.
    if not is_float(c.in_dtypes[0]):
        return (None,)
    x = c.inputs[0]
    axes = _vjp_axes(c)
    zero = x == 0
    safe = F.where(zero, 1, x)
    p = F.prod(safe, axis=axes, keepdims=True)
    n_zero = F.sum(zero, axis=axes, keepdims=True)
    z = F.sum(F.where(zero, x, 0), axis=axes, keepdims=True)
    base = p / safe
    one = F.where(zero, p, z * base)
    d = F.where(n_zero == 0, base, F.where(n_zero == 1, one, 0))
    return (_spread(c, g, axes) * d,)


def _sum_compute(xp, x, axes, kd, dt):
    fast = reduce_kernels.sum_around(xp, x, axes, dt)
    if fast is None:
        return _acc(xp, "sum", x, dt, axis=axes, keepdims=kd)
    return fast.reshape(reduced_shape(x.shape, axes, True)) if kd else fast


_reduction("sum", _sum_compute, _sum_dtype, _sum_vjp, nd=("sum", "sum_axis"), save=False,
           doc="Sum over ``axis`` (every axis by default).")
_reduction("mean", _by("mean"), _mean_dtype, _mean_vjp, scalar_ok=False, save=False,
           doc="Arithmetic mean over ``axis``; integers give float64.")
_reduction("prod", _by("prod"), _sum_dtype, _prod_vjp,
           doc="Product over ``axis``; the gradient is exact when inputs are zero.")


# --------------------------------------------------------------- max, min
def _extreme_vjp(c, g):
    # The gradient is split evenly among the positions that attain the extreme.
    if not is_float(c.in_dtypes[0]):
        return (None,)
    x = c.inputs[0]
    axes = _vjp_axes(c)
    y = F._unreduce(c.out, shape=c.in_shapes[0], axes=axes, keepdims=c.attrs["keepdims"])
    hit = F.cast(x == y, dtype=x.dtype)
    return (_spread(c, g, axes) * hit / F.sum(hit, axis=axes, keepdims=True),)


_reduction("max", lambda xp, x, axes, kd, dt: x.max(axis=axes, keepdims=kd),
           _same_dtype, _extreme_vjp, nd=("max", "max_axis"), np=("max", "amax"),
           dtype_attr=False, nonempty=True,
           doc="Maximum over ``axis``; ties share the gradient equally.")
_reduction("min", lambda xp, x, axes, kd, dt: x.min(axis=axes, keepdims=kd),
           _same_dtype, _extreme_vjp, nd=("min", "min_axis"), np=("min", "amin"),
           dtype_attr=False, nonempty=True,
           doc="Minimum over ``axis``; ties share the gradient equally.")


# --------------------------------------------------------------- all, any (no gradient)
_reduction("all", lambda xp, x, axes, kd, dt: x.all(axis=axes, keepdims=kd),
           _bool_dtype, None, dtype_attr=False, doc="True where every element is non-zero.")
_reduction("any", lambda xp, x, axes, kd, dt: x.any(axis=axes, keepdims=kd),
           _bool_dtype, None, dtype_attr=False, doc="True where any element is non-zero.")


# --------------------------------------------------------------- NaN-ignoring sum and mean
def _nansum_vjp(c, g):
    if not is_float(c.in_dtypes[0]):
        return (None,)
    return (F.where(F.isnan(c.inputs[0]), 0, _spread(c, g)),)


def _nanmean_vjp(c, g):
    if not is_float(c.in_dtypes[0]):
        return (None,)
    x = c.inputs[0]
    axes = _vjp_axes(c)
    valid = F.logical_not(F.isnan(x))
    n = F.sum(F.cast(valid, dtype=x.dtype), axis=axes, keepdims=True)
    return (F.where(valid, _spread(c, g, axes) / n, 0),)


_reduction("nansum", _by("nansum"),
           _sum_dtype, _nansum_vjp, doc="Sum over ``axis`` treating NaN as zero.")
_reduction("nanmean", _by("nanmean"),
           _mean_dtype, _nanmean_vjp, scalar_ok=is_float,
           doc="Mean over ``axis`` ignoring NaN; integers give float64.")


# --------------------------------------------------------------- argmax, argmin
def _arg_axes(name, x, axis):
    ax = _int_axis(name, x, axis)
    axes = tuple(range(len(x.shape))) if ax is None else (ax,) if x.shape else ()
    for a in axes:
        if x.shape[a] == 0:
            raise ValueError(f"{name}: attempt to get {name} of an empty sequence (axis {a} "
                             f"has size 0; input: {_desc(x)})")
    return ax, axes


def _arg(name, fn_name, doc):
    def infer(x, axis=None, keepdims=False, dtype="int64"):
        _, axes = _arg_axes(name, x, axis)
        return Aval(reduced_shape(x.shape, axes, keepdims), as_dtype(dtype, name))

    def forward(xp, x, axis=None, keepdims=False, dtype="int64"):
        ax, axes = _arg_axes(name, x, axis)
        if x.dtype in ML_FLOATS:
            x = x.astype(_F32)
        out = getattr(xp, fn_name)(x, axis=ax if x.ndim else None)
        if keepdims:
            out = out.reshape(reduced_shape(x.shape, axes, True))
        return out.astype(as_dtype(dtype, name), copy=False)

    forward.__doc__ = doc
    # MXNet 1.x returns the indices as float32, NumPy as int64.
    defop(name, infer=infer, attrs={"axis": None, "keepdims": False, "dtype": "int64"},
          nd=((name, {"dtype": "float32"}),), np=(name,), doc=doc)(forward)


_arg("argmax", "argmax", "Index of the maximum along ``axis`` (of the flattened array if None).")
_arg("argmin", "argmin", "Index of the minimum along ``axis`` (of the flattened array if None).")


# --------------------------------------------------------------- var, std
def _moment_infer(name):
    def infer(x, axis=None, keepdims=False, ddof=0, dtype=None):
        axes = _axes(name, x, axis, scalar_ok=False)
        return Aval(reduced_shape(x.shape, axes, keepdims), _mean_dtype(name, x.dtype, dtype))

    return infer


def _moment_vjp(c, g):
    # d var / dx = 2 (x - mean) / (N - ddof); d std = d var / (2 std), 0 where std is 0.
    if not is_float(c.in_dtypes[0]):
        return (None,)
    x = c.inputs[0]
    axes = _axes(c.node.op.name, x, c.attrs["axis"], scalar_ok=False)
    n = _count(c, axes) - c.attrs["ddof"]
    scale = 2.0 / n if n > 0 else float("nan")
    if c.node.op.name == "std":
        s = c.out
        g = g / F.where(s == 0, 1, s)
        scale *= 0.5
    d = x - F.mean(x, axis=axes, keepdims=True)
    return (_spread(c, g, axes) * d * scale,)


def _moment(name, doc):
    def forward(xp, x, axis=None, keepdims=False, ddof=0, dtype=None):
        axes = _axes(name, x, axis, scalar_ok=False)
        return _acc(xp, name, x, _mean_dtype(name, x.dtype, dtype), axis=axes,
                    keepdims=keepdims, ddof=ddof)

    forward.__doc__ = doc
    defop(name, infer=_moment_infer(name), vjp=_moment_vjp, nd=(name,), np=(name,), doc=doc,
          attrs={"axis": None, "keepdims": False, "ddof": 0, "dtype": None})(forward)


_moment("var", "Variance over ``axis`` with ``N - ddof`` in the denominator.")
_moment("std", "Standard deviation over ``axis`` with ``N - ddof`` in the denominator.")


# --------------------------------------------------------------- norm (MXNet nd.norm)
def _norm_infer(x, ord=2, axis=None, out_dtype=None, keepdims=False):
    if ord not in (1, 2):
        raise ValueError(f"norm: ord must be 1 or 2, got {ord!r} (input: {_desc(x)})")
    if out_dtype is None:
        require_float("norm", x)
    axes = _axes("norm", x, axis)
    dt = x.dtype if out_dtype is None else as_dtype(out_dtype, "norm")
    return Aval(reduced_shape(x.shape, axes, keepdims), dt)


def _norm_vjp(c, g):
    if not is_float(c.in_dtypes[0]):
        return (None,)
    x = c.inputs[0]
    if c.attrs["ord"] == 1:
        return (_spread(c, g) * F.sign(x),)
    r = c.out
    return (_spread(c, g / F.where(r == 0, 1, r)) * x,)


@defop("norm", infer=_norm_infer, vjp=_norm_vjp, nd=("norm",),
       attrs={"ord": 2, "axis": None, "out_dtype": None, "keepdims": False})
def _norm(xp, x, ord=2, axis=None, out_dtype=None, keepdims=False):
    """L1 (``ord=1``) or L2 (``ord=2``) norm of the elements over ``axis`` (all by default)."""
    dt = _norm_infer(Aval(x.shape, x.dtype), ord, axis, out_dtype, keepdims).dtype
    axes = _axes("norm", x, axis)
    if not is_float(x.dtype):
        x = x.astype(_F64)
    elif x.dtype.itemsize < 4:  # float16/bfloat16: x * x overflows or loses bits
        x = x.astype(_F32)
    if ord == 1:
        out = xp.sum(xp.abs(x), axis=axes, keepdims=keepdims)
    else:
        out = xp.sqrt(xp.sum(x * x, axis=axes, keepdims=keepdims))
    return out.astype(dt, copy=False)


# --------------------------------------------------------------- logsumexp
def _lse_dtype(name, dt, dtype=None):
    return ufunc_dtype(name, numpy.exp, Aval((), dt))


def _lse(xp, x, axes, keepdims, dt):
    if any(x.shape[a] == 0 for a in axes):
        return xp.full(reduced_shape(x.shape, axes, keepdims), -numpy.inf, dt)
    xa = x.astype(_F32 if dt.itemsize < 4 else dt, copy=False)
    m = xp.max(xa, axis=axes, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)  # all -inf (or +inf) slices: no shift
    out = xp.log(xp.sum(xp.exp(xa - m), axis=axes, keepdims=True)) + m
    if not keepdims:
        out = out.reshape(reduced_shape(x.shape, axes, False))
    return out.astype(dt, copy=False)


def _lse_vjp(c, g):
    if not is_float(c.in_dtypes[0]):
        return (None,)
    axes = _vjp_axes(c)
    y = F._unreduce(c.out, shape=c.in_shapes[0], axes=axes, keepdims=c.attrs["keepdims"])
    return (_spread(c, g, axes) * F.exp(c.inputs[0] - y),)


_reduction("logsumexp", _lse, _lse_dtype, _lse_vjp, dtype_attr=False,
           doc="log(sum(exp(x))) over ``axis``, shifted by the maximum so it cannot overflow.")


# --------------------------------------------------------------- cumulative sum, product
def _scan_infer(h, axis=None, reverse=False, shape=None):
    if shape is not None:
        out = tuple(shape)
    else:
        out = (math.prod(h.shape),) if axis is None else h.shape
    return Aval(out, _sum_dtype("_scan", h.dtype))


def _scan_vjp(c, g):
    if not is_float(c.in_dtypes[0]):
        return (None,)
    a = c.attrs
    return (F._scan(g, axis=a["axis"], reverse=not a["reverse"], shape=c.in_shapes[0]),)


@defop("_scan", infer=_scan_infer, attrs={"axis": None, "reverse": False, "shape": None},
       inputs=("h",), save=False, vjp=_scan_vjp)
def _scan(xp, h, axis=None, reverse=False, shape=None):
    """Cumulative sum along ``axis`` (of the flattened array if None), from the end if
    ``reverse``, reshaped to ``shape``: the adjoint of cumsum and of itself reversed."""
    dt = _sum_dtype("_scan", h.dtype)
    if axis is None:
        h, axis = h.reshape(-1), 0
    if reverse:
        out = xp.flip(xp.cumsum(xp.flip(h, axis), axis=axis, dtype=dt), axis)
    else:
        out = xp.cumsum(h, axis=axis, dtype=dt)
    return out if shape is None else out.reshape(tuple(shape))


def _cum_infer(name):
    def infer(x, axis=None, dtype=None):
        ax = _int_axis(name, x, axis)
        shape = (math.prod(x.shape),) if ax is None or not x.shape else x.shape
        return Aval(shape, _sum_dtype(name, x.dtype, dtype))

    return infer


def _cum(name, doc, vjp, save):
    def forward(xp, x, axis=None, dtype=None):
        ax = _int_axis(name, x, axis)
        if ax is None or x.ndim == 0:
            x, ax = x.reshape(-1), 0
        return _acc(xp, name, x, _sum_dtype(name, x.dtype, dtype), axis=ax)

    forward.__doc__ = doc
    defop(name, infer=_cum_infer(name), vjp=vjp, attrs={"axis": None, "dtype": None},
          nd=(name,), np=(name,), save=save, doc=doc)(forward)


def _scan_axis(c):
    """The axis for ``_scan`` in a cumulative op's VJP (None: flattened)."""
    ax = _int_axis(c.node.op.name, Aval(c.in_shapes[0], c.in_dtypes[0]), c.attrs["axis"])
    return None if ax is None or not c.in_shapes[0] else ax


def _cumsum_vjp(c, g):
    dt = c.in_dtypes[0]
    if not is_float(dt):
        return (None,)
    gx = F._scan(g, axis=_scan_axis(c), reverse=True, shape=c.in_shapes[0])
    return (gx if gx.dtype == dt else F.cast(gx, dtype=dt),)


def _cumprod_vjp(c, g):
    # gx_i = sum_{j >= i} g_j * prod_{k <= j, k != i} x_k. Before the first zero z of a
    # line that is revcumsum(g * y)_i / x_i; at z it is b_z = revcumsum(g * y')_z with y'
    # the cumprod where x_z is replaced by 1; after z it is x_z * b_i / x_i, which is 0
    # but keeps the second derivatives right (with at most one zero per line).
    dt = c.in_dtypes[0]
    if not is_float(dt):
        return (None,)
    x, y = c.inputs[0], c.out
    if g.dtype != dt:
        g, y = F.cast(g, dtype=dt), F.cast(y, dtype=dt)
    ax, shape = _scan_axis(c), c.in_shapes[0]
    zero = x == 0
    seen = F._scan(zero, axis=ax, shape=shape)  # zeros up to and including each position
    before = seen == 0
    first = F.logical_and(zero, seen == 1)
    a = F._scan(g * y, axis=ax, reverse=True, shape=shape) / F.where(before, x, 1)
    y1 = F.cumprod(F.where(first, 1, x), axis=c.attrs["axis"])
    b = F._scan(g * y1, axis=ax, reverse=True, shape=shape)
    x_z = F.sum(F.where(first, x, 0), axis=ax, keepdims=True)
    after = x_z * b / F.where(zero, 1, x)
    return (F.where(before, a, F.where(first, b, after)),)


_cum("cumsum", "Cumulative sum along ``axis`` (of the flattened array if None).",
     _cumsum_vjp, save=False)
_cum("cumprod", "Cumulative product along ``axis`` (of the flattened array if None).",
     _cumprod_vjp, save=True)
