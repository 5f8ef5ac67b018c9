"""Normalization: LayerNorm, InstanceNorm, GroupNorm, L2Normalization and LRN, and the
moment-normalization machinery they share with BatchNorm (``batchnorm.py``).

Batch, layer, instance and group normalization are one computation seen through a
*layout*: the data, reshaped to a working shape, is centred and scaled by its mean and
variance over some axes (``axes``), then multiplied by ``gamma`` and shifted by ``beta``,
which broadcast over the working shape as ``pshape``. Each is a primitive whose forward
runs in a few array passes and whose VJP is the full analytic formula (through the
statistics too), computed by one fused operator (``_norm_grad``) for first-order
gradients; under ``create_graph`` the same formula is written with core operators so
that gradients of gradients are exact.

The primitives always return their statistics, (out, mean, var-or-std), so backward
never recomputes them; the public functions (``NAMESPACE_OVERRIDES``) return only
``out`` unless ``output_mean_var`` asks for more, as MXNet does. Statistics of float16
and bfloat16 data are computed and kept in float32.
"""
from __future__ import annotations

import math
from functools import lru_cache

from ...dtypes import bfloat16, float16, float32
from ..dispatch import MXNetError
from ..infer import norm_axis, require_float
from ..namespace import with_out
from ..param_shapes import ParamShapes, axis_position
from ..registry import Aval, F, defop
from . import norm_kernels

_LOW = (float16, bfloat16)
_PUBLIC = {"batch": "BatchNorm", "layer": "LayerNorm", "instance": "InstanceNorm",
           "group": "GroupNorm"}


def acc_dtype(dt):
    """The dtype statistics are computed in: float32 for half precisions."""
    return float32 if dt in _LOW else dt


def _desc(shape, dtype) -> str:
    return f"{tuple(shape)} {dtype.name}"


# --------------------------------------------------------------------------- layouts
class Layout:
    """Where a normalization takes its statistics and applies gamma/beta.

    ``wshape``: the working shape the data is viewed in; ``axes``: the axes of the
    working shape the mean and variance run over (``kshape`` is their keepdims shape);
    ``pshape``: the shape gamma and beta broadcast as; ``red``: the axes parameter
    gradients sum over; ``count``: elements per statistic.
    """

    __slots__ = ("axes", "count", "kshape", "pshape", "red", "shape", "wshape")

    def __init__(self, shape, wshape, axes, pshape):
        self.shape = tuple(shape)
        self.wshape = tuple(wshape)
        self.axes = tuple(axes)
        self.pshape = tuple(pshape)
        self.kshape = tuple(1 if i in self.axes else s for i, s in enumerate(self.wshape))
        self.red = tuple(i for i, s in enumerate(self.pshape) if s == 1)
        self.count = math.prod(self.wshape[a] for a in self.axes)


def _channel_axis(name, shape, dtype, axis):
    try:
        return norm_axis(name, axis, len(shape))
    except (ValueError, TypeError) as e:
        raise type(e)(f"{e} (data: {_desc(shape, dtype)})") from None


class ParamShapeError(ValueError, MXNetError):
    """A scale or shift of the wrong shape: a ``ValueError``, and the ``MXNetError`` MXNet's
    shape inference raises (``nn.LayerNorm(in_channels=10)`` on ``(2, 11)`` data)."""


def _check_param(name, label, p, want, shape, dtype, why):
    """``p`` is (shape, dtype) of parameter ``label``, or None when it was not given."""
    if p is None:
        raise TypeError(f"{name}: {label} is required (data: {_desc(shape, dtype)}); pass an "
                        f"array of shape {want}")
    pshape, pdtype = p
    if pdtype is None:
        raise TypeError(f"{name}: {label} must be an array of shape {want}, got a "
                        f"{pshape.__name__} (data: {_desc(shape, dtype)})")
    if pshape != want:
        raise ParamShapeError(f"{name}: {label} has shape {pshape} but must have shape {want}, "
                         f"{why} (data: {_desc(shape, dtype)}, {label}: "
                         f"{_desc(pshape, pdtype)})")
    require_float(name, Aval(pshape, pdtype), what=f"{label} (data: {_desc(shape, dtype)})")


@lru_cache(maxsize=2048)
def plan(kind, shape, dtype, params, axis=1, num_groups=1) -> Layout:
    """The layout of normalization ``kind`` for data (``shape``, ``dtype``), after checking
    ``params``: ((label, shape, dtype) or (label, type, None) or (label, None, None)).

    Pure and cached; raises the errors users see, naming the public operator.
    """
    name = _PUBLIC[kind]
    require_float(name, Aval(shape, dtype), what="data")
    ndim = len(shape)
    given = {label: (None if ps is None else (ps, pd)) for label, ps, pd in params}
    if kind in ("batch", "layer"):
        if ndim < 1:
            raise ValueError(f"{name}: data must have at least 1 dimension, got "
                             f"{_desc(shape, dtype)}")
        a = _channel_axis(name, shape, dtype, axis)
        c = shape[a]
        pshape = tuple(c if i == a else 1 for i in range(ndim))
        axes = tuple(i for i in range(ndim) if i != a) if kind == "batch" else (a,)
        why = (f"one value per channel: data has {c} channels on axis {axis}" if kind == "batch"
               else f"one value per position along axis {axis} (size {c})")
        for label, p in given.items():
            _check_param(name, label, p, (c,), shape, dtype, why)
        return Layout(shape, shape, axes, pshape)
    if kind == "instance":
        if ndim < 3:
            raise ValueError(f"{name}: data must have at least 3 dimensions (N, C, spatial...), "
                             f"got {_desc(shape, dtype)}")
        c = shape[1]
        for label, p in given.items():
            _check_param(name, label, p, (c,), shape, dtype,
                         f"one value per channel: data has {c} channels on axis 1")
        return Layout(shape, shape, tuple(range(2, ndim)), (1, c) + (1,) * (ndim - 2))
    # group
    if ndim < 2:
        raise ValueError(f"{name}: data must have at least 2 dimensions (N, C, ...), got "
                         f"{_desc(shape, dtype)}")
    g = num_groups
    if isinstance(g, bool) or not isinstance(g, int) or g < 1:
        raise ValueError(f"{name}: num_groups must be a positive int, got {g!r}")
    c = shape[1]
    if c % g:
        raise ValueError(f"{name}: the {c} channels (axis 1) of data {_desc(shape, dtype)} "
                         f"cannot be split into num_groups={g} equal groups")
    wshape = (shape[0], g, c // g) + tuple(shape[2:])
    rest = (1,) * (ndim - 2)
    gp = given.get("gamma")
    per_group = gp is not None and gp[1] is not None and gp[0] == (g,) and g != c
    want = (g,) if per_group else (c,)
    for label, p in given.items():
        _check_param(name, label, p, want, shape, dtype,
                     f"one value per channel (or, as in MXNet 1.x, per group): data has {c} "
                     f"channels in {g} groups")
    pshape = (1, g, 1) + rest if per_group else (1, g, c // g) + rest
    return Layout(shape, wshape, tuple(range(2, ndim + 1)), pshape)


def param_spec(label, p):
    """(label, shape, dtype) of an Aval or an array, for :func:`plan`."""
    if p is None:
        return (label, None, None)
    if hasattr(p, "shape") and hasattr(p, "dtype"):
        return (label, tuple(p.shape), p.dtype)
    return (label, type(p), None)


# --------------------------------------------------------------------------- forward
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


@lru_cache(maxsize=512)
def _subscripts(ndim, axes, n_ops):
    ins = _LETTERS[:ndim]
    return ",".join([ins] * n_ops) + "->" + "".join(
        c for i, c in enumerate(ins) if i not in axes)


def _reduce(xp, axes, shape, *ops):
    """The sum over ``axes`` of the product of ``ops``, reshaped to ``shape`` (keepdims).

    einsum reads its operands once without a temporary product, several times faster
    than ``(a * b).sum(axes)`` on CPU."""
    return xp.einsum(_subscripts(ops[0].ndim, axes, len(ops)), *ops).reshape(shape)


def _work(a, L, acc):
    if L.wshape != L.shape:
        a = a.reshape(L.wshape)
    return a if a.dtype == acc else a.astype(acc)


def normalize(xp, x, gamma, beta, L, eps, fix_gamma=False, stats=None):
    """``(out, mean, var)``: ``x`` normalized over ``L.axes``; ``mean`` and ``var`` in the
    keepdims working shape and the accumulation dtype. ``stats`` (mean, var) replaces the
    batch statistics (inference with moving statistics), ``eps`` then adds to them."""
    if (fast := norm_kernels.normalize(xp, x, gamma, beta, L, eps, fix_gamma, stats)) is not None:
        return fast  # compiled CPU kernels where they apply (norm_kernels.py)
    acc = acc_dtype(x.dtype)
    xw = _work(x, L, acc)
    inv_n = 1.0 / max(L.count, 1)
    if stats is None:
        mean = _reduce(xp, L.axes, L.kshape, xw) * inv_n
        d = xw - mean
        var = var_n = _reduce(xp, L.axes, L.kshape, d, d) * inv_n  # two passes: exact
    else:
        mean = stats[0].reshape(L.kshape).astype(acc, copy=False)
        var_n = stats[1].reshape(L.kshape).astype(acc, copy=False)
        var = None
        d = xw - mean
    scale = 1.0 / xp.sqrt(var_n + eps)
    if not fix_gamma:
        gp = gamma.reshape(L.pshape).astype(acc, copy=False)
        if L.pshape == L.kshape:  # batch norm: fold gamma into the per-channel scale
            scale = scale * gp
        else:
            d *= gp
    d *= scale
    d += beta.reshape(L.pshape).astype(acc, copy=False)
    out = d if d.dtype == x.dtype else d.astype(x.dtype)
    return out.reshape(L.shape), mean, var


# --------------------------------------------------------------------------- gradients
def grads(xp, gy, x, gamma, mean, rstd, L, fix_gamma, batch_stats, gmean=None, gvar=None,
          gstd=None):
    """(gx, ggamma, gbeta) in the working shapes (ggamma, gbeta as ``L.pshape``).

    With x̂ = (x - mean) * rstd and y = gamma x̂ + beta, for the incoming gradient g:
    gbeta = Σ g, ggamma = Σ g x̂ (sums over ``L.red``); with ĝ = gamma g, gx = rstd ĝ
    when the statistics are constants, and with batch statistics (``L.axes``, n each)
    gx = rstd (ĝ - m1 - x̂ m2), m1 = mean(ĝ), m2 = mean(ĝ x̂). Gradients reaching the
    statistics outputs add gmean / n, gvar 2 (x - mean) / n = gvar 2 x̂ / (n rstd) and
    gstd x̂ / n: they fold into m1 and m2, which have the statistics' (small) shape.
    """
    fast = norm_kernels.grads(xp, gy, x, gamma, mean, rstd, L, fix_gamma, batch_stats, gmean,
                              gvar, gstd)
    if fast is not None:
        return fast  # compiled CPU kernels where they apply (norm_kernels.py)
    acc = acc_dtype(x.dtype)
    n = max(L.count, 1)
    gw = _work(gy, L, acc)
    xhat = _work(x, L, acc) - mean
    xhat *= rstd
    gb = _reduce(xp, L.red, L.pshape, gw)
    gg = _reduce(xp, L.red, L.pshape, gw, xhat)
    gp = None if fix_gamma else gamma.reshape(L.pshape).astype(acc, copy=False)
    per_channel = L.pshape == L.kshape  # batch norm: statistics and parameters share axes
    if not batch_stats:
        gx = gw * (rstd if gp is None else rstd * gp)
    else:
        if per_channel:  # the statistics' sums are the parameter gradients
            m1 = gb / n if gp is None else gb * (gp / n)
            m2 = gg / n if gp is None else gg * (gp / n)
            gxhat = None
        else:
            gxhat = gw if gp is None else gw * gp
            m1 = _reduce(xp, L.axes, L.kshape, gxhat) / n
            m2 = _reduce(xp, L.axes, L.kshape, gxhat, xhat) / n
        if gmean is not None:
            m1 = m1 - gmean.reshape(L.kshape).astype(acc, copy=False) / (n * rstd)
        if gvar is not None:
            m2 = m2 - gvar.reshape(L.kshape).astype(acc, copy=False) * (2.0 / n) / (rstd * rstd)
        if gstd is not None:
            m2 = m2 - gstd.reshape(L.kshape).astype(acc, copy=False) / (n * rstd)
        if per_channel:  # gx = (rstd gamma) g - rstd m1 - x̂ (rstd m2), all coefficients small
            gx = gw * (rstd if gp is None else rstd * gp)
            gx -= rstd * m1
            xhat *= rstd * m2
        else:
            if gxhat is gw:
                gx = gw - m1
            else:
                gx = gxhat
                gx -= m1
            xhat *= m2
        gx -= xhat
        if not per_channel:
            gx *= rstd
    if fix_gamma:
        gg = xp.zeros_like(gg)
    return gx, gg, gb


def graph_grads(gy, x, gamma, beta, mean, stat, L, eps, stat_kind, fix_gamma, batch_stats,
                gmean=None, gstat=None):
    """:func:`grads` written with core operators on NDArrays, so that it is recorded
    (used under ``create_graph``: gradients of gradients)."""
    def w(a, shape):
        return a if tuple(a.shape) == shape else F.reshape(a, shape=shape, mx_codes=False)

    def cast(a, dt):
        return a if a.dtype == dt else F.cast(a, dtype=dt)

    xw, gw = w(x, L.wshape), w(gy, L.wshape)
    mean, s = w(mean, L.kshape), w(stat, L.kshape)
    rstd = F.rsqrt(s + eps) if stat_kind == "var" else s if stat_kind == "rstd" else 1.0 / s
    xhat = (xw - mean) * rstd
    gb = F.sum(gw, axis=L.red, keepdims=True)
    gg = F.sum(gw * xhat, axis=L.red, keepdims=True)
    gxhat = gw if fix_gamma else gw * w(gamma, L.pshape)
    n = L.count
    if batch_stats:
        m1 = F.mean(gxhat, axis=L.axes, keepdims=True)
        m2 = F.mean(gxhat * xhat, axis=L.axes, keepdims=True)
        gx = (gxhat - m1 - xhat * m2) * rstd
    else:
        gx = gxhat * rstd
    if gmean is not None:
        gx = gx + w(gmean, L.kshape) * (1.0 / n)
    if gstat is not None:
        k = ((xw - mean) * (2.0 / n) if stat_kind == "var"
             else xhat * (rstd * rstd * (-1.0 / n)) if stat_kind == "rstd" else xhat * (1.0 / n))
        gx = gx + k * w(gstat, L.kshape)
    gg = F.zeros_like(gamma) if fix_gamma else cast(w(gg, tuple(gamma.shape)), gamma.dtype)
    return (cast(w(gx, tuple(x.shape)), x.dtype), gg,
            cast(w(gb, tuple(beta.shape)), beta.dtype))


def _norm_grad_infer(g, x, gamma, beta, mean, stat, gmean=None, gstat=None, **_):
    return (Aval(x.shape, x.dtype), Aval(gamma.shape, gamma.dtype), Aval(beta.shape, beta.dtype))


@defop("_norm_grad", infer=_norm_grad_infer,
       inputs=("g", "x", "gamma", "beta", "mean", "stat", "gmean?", "gstat?"),
       attrs={"kind": "batch", "axis": 1, "num_groups": 1, "eps": 1e-3, "stat_kind": "var",
              "fix_gamma": False, "batch_stats": True})
def _norm_grad(xp, g, x, gamma, beta, mean, stat, gmean=None, gstat=None, kind="batch", axis=1,
               num_groups=1, eps=1e-3, stat_kind="var", fix_gamma=False, batch_stats=True):
    """First-order VJP of batch/layer/instance/group normalization in one call.

    ``mean`` and ``stat`` are the statistics the forward used: ``stat`` a variance
    (``stat_kind="var"``, ``eps`` is added), ``sqrt(var + eps)`` (``"std"``) or its
    inverse (``"rstd"``);
    ``batch_stats``: they were computed from ``x``, so the gradient runs through them;
    ``gmean``/``gstat``: gradients reaching the statistics outputs. Returns (gx, ggamma,
    gbeta). Not differentiable itself: under ``create_graph`` VJPs use ``graph_grads``.
    """
    L = plan(kind, tuple(x.shape), x.dtype,
             (param_spec("gamma", gamma), param_spec("beta", beta)), axis, num_groups)
    acc = acc_dtype(x.dtype)
    mean = mean.reshape(L.kshape).astype(acc, copy=False)
    s = stat.reshape(L.kshape).astype(acc, copy=False)
    rstd = s if stat_kind == "rstd" else 1.0 / (xp.sqrt(s + eps) if stat_kind == "var" else s)
    if stat_kind == "rstd" and gstat is not None:  # d rstd = -rstd^2 d std
        gstat, stat_kind = gstat.reshape(L.kshape).astype(acc, copy=False) * -(rstd * rstd), "std"
    gx, gg, gb = grads(xp, g, x, gamma, mean, rstd, L, fix_gamma, batch_stats, gmean,
                       gstat if stat_kind == "var" else None,
                       gstat if stat_kind == "std" else None)
    return (gx.reshape(x.shape).astype(x.dtype, copy=False),
            gg.reshape(gamma.shape).astype(gamma.dtype, copy=False),
            gb.reshape(beta.shape).astype(beta.dtype, copy=False))


def vjp_with_stats(c, gy, x, gamma, beta, mean, stat, gmean, gstat, kind, stat_kind, eps,
                   fix_gamma=False, batch_stats=True, axis=1, num_groups=1):
    """The VJP of a moment normalization: fused first-order, or recorded under create_graph."""
    if c.create_graph:
        L = plan(kind, tuple(x.shape), x.dtype,
                 (param_spec("gamma", gamma), param_spec("beta", beta)), axis, num_groups)
        return graph_grads(gy, x, gamma, beta, mean, stat, L, eps, stat_kind, fix_gamma,
                           batch_stats, gmean, gstat)
    return F._norm_grad(gy, x, gamma, beta, mean, stat, gmean, gstat, kind=kind, axis=axis,
                        num_groups=num_groups, eps=eps, stat_kind=stat_kind,
                        fix_gamma=fix_gamma, batch_stats=batch_stats)


# --------------------------------------------------------------------------- layer, instance, group
def _params(gamma, beta):
    return (param_spec("gamma", gamma), param_spec("beta", beta))


def _ln_infer(data, gamma, beta, axis=-1, eps=1e-5):
    L = plan("layer", data.shape, data.dtype, _params(gamma, beta), axis)
    acc = acc_dtype(data.dtype)
    return Aval(data.shape, data.dtype), Aval(L.kshape, acc), Aval(L.kshape, acc)


def _ln_vjp(c, g):
    x, gamma, beta = c.inputs
    a = c.attrs
    return vjp_with_stats(c, g[0], x, gamma, beta, c.outputs[1], c.outputs[2], g[1], g[2],
                          "layer", "std", a["eps"], axis=a["axis"])


def _ln_params(shape, a, n_in):
    """gamma and beta: the size of the normalized axis."""
    if shape is None:
        return {}
    ax = axis_position(shape, a.get("axis", -1))
    return {} if ax is None else {1: (shape[ax],), 2: (shape[ax],)}


def _channel_params(shape, a, n_in):
    """gamma and beta: one per channel (axis 1)."""
    if shape is None or len(shape) < 2:
        return {}
    return {1: (shape[1],), 2: (shape[1],)}


@defop("_layer_norm", infer=_ln_infer, vjp=_ln_vjp, inputs=("data", "gamma", "beta"),
       attrs={"axis": -1, "eps": 1e-5}, param_shapes=ParamShapes(_ln_params, (1, 2)))
def _layer_norm(xp, data, gamma, beta, axis=-1, eps=1e-5):
    """Layer normalization along ``axis``: (out, mean, std), std = sqrt(var + eps)."""
    L = plan("layer", tuple(data.shape), data.dtype, _params(gamma, beta), axis)
    out, mean, var = normalize(xp, data, gamma, beta, L, eps)
    return out, mean, xp.sqrt(var + eps)


def _in_infer(data, gamma, beta, eps=1e-3):
    plan("instance", data.shape, data.dtype, _params(gamma, beta))
    acc = acc_dtype(data.dtype)
    return (Aval(data.shape, data.dtype), Aval(data.shape[:2], acc),
            Aval(data.shape[:2], acc))


def _in_vjp(c, g):
    x, gamma, beta = c.inputs
    return vjp_with_stats(c, g[0], x, gamma, beta, c.outputs[1], c.outputs[2], g[1], g[2],
                          "instance", "var", c.attrs["eps"])


@defop("_instance_norm", infer=_in_infer, vjp=_in_vjp, inputs=("data", "gamma", "beta"),
       attrs={"eps": 1e-3}, param_shapes=ParamShapes(_channel_params, (1, 2)))
def _instance_norm(xp, data, gamma, beta, eps=1e-3):
    """Instance normalization (per sample and channel, over the spatial axes 2...):
    (out, mean, var) with statistics of shape (N, C)."""
    L = plan("instance", tuple(data.shape), data.dtype, _params(gamma, beta))
    out, mean, var = normalize(xp, data, gamma, beta, L, eps)
    return out, mean.reshape(data.shape[:2]), var.reshape(data.shape[:2])


def _gn_infer(data, gamma, beta, num_groups=1, eps=1e-5):
    plan("group", data.shape, data.dtype, _params(gamma, beta), 1, num_groups)
    acc = acc_dtype(data.dtype)
    s = (data.shape[0], num_groups)
    return Aval(data.shape, data.dtype), Aval(s, acc), Aval(s, acc)


def _gn_vjp(c, g):
    x, gamma, beta = c.inputs
    a = c.attrs
    return vjp_with_stats(c, g[0], x, gamma, beta, c.outputs[1], c.outputs[2], g[1], g[2],
                          "group", "std", a["eps"], num_groups=a["num_groups"])


@defop("_group_norm", infer=_gn_infer, vjp=_gn_vjp, inputs=("data", "gamma", "beta"),
       attrs={"num_groups": 1, "eps": 1e-5}, param_shapes=ParamShapes(_channel_params, (1, 2)))
def _group_norm(xp, data, gamma, beta, num_groups=1, eps=1e-5):
    """Group normalization (channels split into ``num_groups``): (out, mean, std) with
    statistics of shape (N, num_groups), std = sqrt(var + eps)."""
    L = plan("group", tuple(data.shape), data.dtype, _params(gamma, beta), 1, num_groups)
    out, mean, var = normalize(xp, data, gamma, beta, L, eps)
    s = (data.shape[0], num_groups)
    return out, mean.reshape(s), xp.sqrt(var + eps).reshape(s)


def _as_dtype(a, dt):
    return a if a.dtype == dt else F.cast(a, dtype=dt)


def LayerNorm(data, gamma, beta, axis=-1, eps=1e-5, output_mean_var=False, name=None,
              out=None):
    """Layer normalization (MXNet's ``LayerNorm``).

    ``out = (data - mean) / sqrt(var + eps) * gamma + beta`` with the mean and (biased)
    variance taken along ``axis``; ``gamma`` and ``beta`` have shape
    ``(data.shape[axis],)``.

    Args:
        data: the input.
        gamma, beta: scale and shift, one value per position along ``axis``.
        axis: the normalized axis (default -1, the last).
        eps: added to the variance (used exactly as given).
        output_mean_var: also return the mean and the standard deviation
            ``sqrt(var + eps)``, shaped like ``data`` with ``axis`` of size 1.
            Unlike MXNet, which blocks them, gradients flow through these outputs.
        out: an NDArray to write the result into (may be ``data``), or one per result.

    Returns:
        ``out``, or ``(out, mean, std)``.

    Example:
        >>> from core import nd
        >>> x = nd.array([[1.0, 2.0, 3.0]], dtype="float64")
        >>> LayerNorm(x, nd.ones((3,)), nd.zeros((3,)), eps=0.0).asnumpy().round(4).tolist()
        [[-1.2247, 0.0, 1.2247]]
    """
    res, mean, std = F._layer_norm(data, gamma, beta, axis=axis, eps=eps)
    if not output_mean_var:
        return with_out("LayerNorm", res, out)
    return with_out("LayerNorm", (res, _as_dtype(mean, res.dtype), _as_dtype(std, res.dtype)),
                    out)


def InstanceNorm(data, gamma, beta, eps=1e-3, name=None, out=None):
    """Instance normalization (MXNet's ``InstanceNorm``).

    Each sample and channel (axis 1) of ``data`` (N, C, spatial...) is normalized over its
    spatial axes with the biased variance: ``out = (data - mean) / sqrt(var + eps) *
    gamma + beta``, ``gamma`` and ``beta`` of shape (C,). ``out=`` receives the result
    (it may be ``data``).
    """
    return with_out("InstanceNorm", F._instance_norm(data, gamma, beta, eps=eps)[0], out)


def GroupNorm(data, gamma, beta, num_groups=1, eps=1e-5, output_mean_var=False,
              name=None, out=None):
    """Group normalization (MXNet's ``GroupNorm``).

    The C channels (axis 1) of ``data`` (N, C, ...) are split into ``num_groups`` groups;
    each sample's group is normalized over its channels and spatial positions, then
    scaled by ``gamma`` and shifted by ``beta``, of shape (C,) (MXNet 2.0; one value per
    channel). MXNet 1.x gave them shape (num_groups,), one value per group: that shape
    is accepted too, so 1.x parameters load unchanged.

    Returns:
        ``out``, or with ``output_mean_var`` ``(out, mean, std)`` with statistics of
        shape (N, num_groups) and std = sqrt(var + eps) (gradients flow through them).
        ``out=`` receives the result (it may be ``data``), or one array per result.
    """
    res, mean, std = F._group_norm(data, gamma, beta, num_groups=num_groups, eps=eps)
    if not output_mean_var:
        return with_out("GroupNorm", res, out)
    return with_out("GroupNorm", (res, _as_dtype(mean, res.dtype), _as_dtype(std, res.dtype)),
                    out)


# --------------------------------------------------------------------------- L2Normalization
_L2_MODES = ("instance", "channel", "spatial")


def _l2_axes(shape, dtype, mode) -> tuple:
    nd_ = len(shape)
    if mode not in _L2_MODES:
        raise ValueError(f"L2Normalization: mode must be one of {', '.join(_L2_MODES)}, got "
                         f"{mode!r}")
    require_float("L2Normalization", Aval(shape, dtype), what="data")
    need = {"instance": 1, "channel": 2, "spatial": 3}[mode]
    if nd_ < need:
        raise ValueError(f"L2Normalization: mode={mode!r} needs data with at least {need} "
                         f"dimension(s), got {_desc(shape, dtype)}")
    if mode == "instance":
        return tuple(range(1, nd_)) if nd_ > 1 else (0,)
    return (1,) if mode == "channel" else tuple(range(2, nd_))


def _l2_vjp(c, g):
    # y = x / n with n = sqrt(sum(x^2) + eps): gx = (g - y sum(g y)) / n
    x, y = c.inputs[0], c.out
    a = c.attrs
    axes = _l2_axes(c.in_shapes[0], c.in_dtypes[0], a["mode"])
    n = F.sqrt(F.sum(x * x, axis=axes, keepdims=True) + a["eps"])
    return ((g - y * F.sum(g * y, axis=axes, keepdims=True)) / n,)


def _l2_infer(data, eps=1e-10, mode="instance"):
    _l2_axes(data.shape, data.dtype, mode)
    return Aval(data.shape, data.dtype)


@defop("L2Normalization", infer=_l2_infer, vjp=_l2_vjp,
       nd=("L2Normalization",), inputs=("data",), attrs={"eps": 1e-10, "mode": "instance"})
def _l2_normalization(xp, data, eps=1e-10, mode="instance"):
    """``data / sqrt(sum(data ** 2) + eps)``, the sum over every axis but the first
    (``mode="instance"``; a 1-D array is one instance), over the channel axis 1
    (``"channel"``) or over the spatial axes 2... (``"spatial"``)."""
    axes = _l2_axes(tuple(data.shape), data.dtype, mode)
    x = data.astype(acc_dtype(data.dtype), copy=False)
    n = xp.sqrt((x * x).sum(axis=axes, keepdims=True) + eps)
    return (x / n).astype(data.dtype, copy=False)


# --------------------------------------------------------------------------- LRN
def _window_infer(x, nsize=1):
    return Aval(x.shape, x.dtype)


def _window_sum(xp, x, nsize):
    """Sum over the ``nsize`` channels (axis 1) centred on each channel, zero-padded."""
    out = x.copy()
    c = x.shape[1]
    for d in range(1, min(nsize // 2, c - 1) + 1):
        out[:, d:] += x[:, :c - d]
        out[:, :c - d] += x[:, d:]
    return out


@defop("_lrn_window", infer=_window_infer, attrs={"nsize": 1}, save=False,
       vjp=lambda c, g: (F._lrn_window(g, nsize=c.attrs["nsize"]),))
def _lrn_window(xp, x, nsize=1):
    """LRN's window sum over channels; the window is symmetric, so it is self-adjoint."""
    return _window_sum(xp, x, nsize)


def _lrn_check(shape, dtype, alpha, beta, knorm, nsize):
    if nsize is None:
        raise TypeError("LRN: nsize (the window width in channels) is required, e.g. nsize=5")
    if isinstance(nsize, bool) or not isinstance(nsize, int) or nsize < 1 or nsize % 2 == 0:
        raise ValueError(f"LRN: nsize must be a positive odd int, got {nsize!r}")
    require_float("LRN", Aval(shape, dtype), what="data")
    if len(shape) < 2:
        raise ValueError(f"LRN: data must have at least 2 dimensions (N, C, ...), got "
                         f"{_desc(shape, dtype)}")


def _lrn_vjp(c, g):
    # y = x s^-beta, s = knorm + alpha/n W(x^2) with W the (self-adjoint) window sum:
    # gx = g s^-beta - (2 alpha beta / n) x W(g x s^(-beta-1))
    x = c.inputs[0]
    a = c.attrs
    n, alpha, beta = a["nsize"], a["alpha"], a["beta"]
    s = F._lrn_window(x * x, nsize=n) * (alpha / n) + a["knorm"]
    t = s ** (-beta)
    return (g * t - x * F._lrn_window(g * x * t / s, nsize=n) * (2.0 * alpha * beta / n),)


def _lrn_infer(data, alpha=1e-4, beta=0.75, knorm=2.0, nsize=None):
    _lrn_check(data.shape, data.dtype, alpha, beta, knorm, nsize)
    return Aval(data.shape, data.dtype)


@defop("LRN", infer=_lrn_infer, vjp=_lrn_vjp, nd=("LRN",), inputs=("data",),
       attrs={"alpha": 1e-4, "beta": 0.75, "knorm": 2.0, "nsize": None})
def _lrn(xp, data, alpha=1e-4, beta=0.75, knorm=2.0, nsize=None):
    """Local response normalization across channels (axis 1):
    ``out = data * (knorm + alpha / nsize * sum(data ** 2 over nsize channels)) ** -beta``."""
    _lrn_check(tuple(data.shape), data.dtype, alpha, beta, knorm, nsize)
    x = data.astype(acc_dtype(data.dtype), copy=False)
    s = _window_sum(xp, x * x, nsize)
    s *= alpha / nsize
    s += knorm
    return (x * s ** (-beta)).astype(data.dtype, copy=False)


NAMESPACE_OVERRIDES = {
    "nd": {"LayerNorm": LayerNorm, "layer_norm": LayerNorm, "InstanceNorm": InstanceNorm,
           "GroupNorm": GroupNorm},
    "np": {},
}
