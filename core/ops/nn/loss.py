"""Losses: the fused softmax cross-entropy, MXNet's ``SoftmaxOutput`` and
``softmax_cross_entropy``, ``sigmoid_binary_cross_entropy`` and ``smooth_l1``.

``softmax_cross_entropy_with_logits(logits, label, axis=-1, sparse=True,
ignore_label=None)`` is the training hot path that Gluon's ``SoftmaxCrossEntropyLoss``
and Keras' (sparse) categorical cross-entropy call: one operator forward (per-sample
loss, computed as ``logsumexp - picked`` without forming probabilities) and one fused
operator backward, ``_softmax_ce_grad`` = ``(softmax - one_hot(label)) * g``, which
recomputes the softmax from the logits instead of keeping an extra (N, C) array alive
between forward and backward. ``_softmax_ce_grad`` has its own VJP, so second-order
gradients work.

``SoftmaxOutput`` is MXNet's loss layer: its forward is the softmax, and the gradient
it sends to ``data`` is ``(softmax - one_hot(label)) * grad_scale / normalizer``,
ignoring the incoming head gradient (unless ``out_grad=True``). That gradient is a
rule, not a derivative, so it cannot be differentiated again. The normalizer is MXNet
1.9's: 1 (``'null'``), the number of labels (``'batch'``: the batch size, or every
position with ``preserve_shape``) or of labels other than ``ignore_label``
(``'valid'``); with ``multi_output``, ``'null'`` and ``'batch'`` also divide by the
number of spatial positions. Probability labels (the data's shape) are not normalized.

Class labels may be integers or floats holding integers (MXNet passes float32). A label
outside ``[0, classes)`` raises ValueError naming the operator, the label and the number
of classes, unless it equals ``ignore_label`` (where that is enabled).
"""
from __future__ import annotations

import math

import numpy

from ...dtypes import is_float, is_integer
from ..broadcast import sum_to
from ..infer import broadcast, fmt, norm_axis, require_float
from ..param_shapes import ParamShapes
from ..registry import Aval, F, defop
from .softmax import compute_dtype, softmax_raw


# --------------------------------------------------------------- labels
def int_labels(xp, label):
    label = xp.asarray(label)
    return label if label.dtype.kind in "iu" else label.astype(numpy.int64)


def check_labels(xp, lab, classes, ignore=None):
    """ValueError for class labels outside [0, classes) that are not ``ignore``."""
    if lab.size == 0:
        return
    if ignore is None:
        lo, hi = int(lab.min()), int(lab.max())
        bad = lo if lo < 0 else hi if hi >= classes else None
    else:
        bad_mask = ((lab < 0) | (lab >= classes)) & (lab != int(ignore))
        bad = int(lab[bad_mask].ravel()[0]) if bool(bad_mask.any()) else None
    if bad is not None:
        raise ValueError(f"label {bad} is out of range for {classes} classes (valid labels: "
                         f"0..{classes - 1}{'' if ignore is None else f', or {ignore} (ignored)'})")


def _check_label_dtype(name, label, avals):
    if not (is_integer(label.dtype) or is_float(label.dtype)):
        raise TypeError(f"{name}: labels must be integers or floats holding integers, got "
                        f"{fmt(avals)}")


# --------------------------------------------------------------- fused softmax cross-entropy
def _ce_shapes(name, logits, label, axis, sparse):
    require_float(name, logits, what="logits", shown=[logits, label])
    if logits.ndim == 0:
        raise ValueError(f"{name}: logits must have a class axis, got {fmt([logits, label])}")
    ax = norm_axis(name, axis, logits.ndim)
    out = logits.shape[:ax] + logits.shape[ax + 1:]
    if sparse:
        _check_label_dtype(name, label, [logits, label])
        kept = logits.shape[:ax] + (1,) + logits.shape[ax + 1:]
        if tuple(label.shape) not in (out, kept):
            raise ValueError(f"{name}: sparse labels must have shape {out} (logits' shape "
                             f"without axis {ax}), got {fmt([logits, label])}")
    elif tuple(label.shape) != tuple(logits.shape):
        raise ValueError(f"{name}: with sparse=False, labels are distributions of the logits' "
                         f"shape {logits.shape}, got {fmt([logits, label])}")
    return ax, out


def _ce_infer(logits, label, axis=-1, sparse=True, ignore_label=None):
    _, out = _ce_shapes("softmax_cross_entropy_with_logits", logits, label, axis, sparse)
    return Aval(out, logits.dtype)


def _moved(xp, x, ax):
    """``x`` with ``ax`` moved last, as a C-contiguous (rows, classes) array and its shape."""
    if ax != x.ndim - 1:
        x = xp.moveaxis(x, ax, -1)
    shape = x.shape
    return xp.ascontiguousarray(x).reshape(-1, shape[-1]), shape


def _unmove(xp, flat, shape, ax, ndim):
    out = flat.reshape(shape)
    return out if ax == ndim - 1 else xp.moveaxis(out, -1, ax)


def ce_forward(xp, logits, label, ax, sparse=True, ignore_label=None):
    """Per-sample cross-entropy of softmax(logits) along ``ax`` (``ax`` removed)."""
    out_shape = logits.shape[:ax] + logits.shape[ax + 1:]
    w = logits.astype(compute_dtype(logits.dtype), copy=False)
    if not sparse:
        logp = softmax_raw(xp, w, ax, log=True)
        z = xp.asarray(label).astype(w.dtype, copy=False)
        return (-(z * logp).sum(axis=ax)).astype(logits.dtype, copy=False)
    flat, _ = _moved(xp, w, ax)
    n, classes = flat.shape
    lab = int_labels(xp, label).reshape(-1)
    check_labels(xp, lab, classes, ignore_label)
    m = flat.max(axis=1, keepdims=True)
    if not bool(xp.isfinite(m).all()):
        m = xp.where(xp.isfinite(m), m, 0)
    e = flat - m
    rows = xp.arange(n)
    if ignore_label is not None:
        keep = lab != int(ignore_label)
        lab = xp.where(keep, lab, 0)
    picked = e[rows, lab]
    xp.exp(e, out=e)
    loss = xp.log(e.sum(axis=1))
    loss -= picked
    if ignore_label is not None:
        loss *= keep
    return loss.reshape(out_shape).astype(logits.dtype, copy=False)


def ce_grad(xp, logits, label, g, ax, sparse=True, ignore_label=None):
    """(softmax(logits) - one_hot(label)) * g, g expanded along ``ax``."""
    w = logits.astype(compute_dtype(logits.dtype), copy=False)
    if not sparse:
        p = softmax_raw(xp, w, ax)
        z = xp.asarray(label).astype(w.dtype, copy=False)
        p *= z.sum(axis=ax, keepdims=True)
        p -= z
        p *= xp.expand_dims(xp.asarray(g), ax)
        return p.astype(numpy.result_type(logits.dtype, g.dtype), copy=False)
    flat, shape = _moved(xp, w, ax)
    n = flat.shape[0]
    lab = int_labels(xp, label).reshape(-1)
    p = softmax_raw(xp, flat, 1)
    rows = xp.arange(n)
    if ignore_label is not None:
        keep = lab != int(ignore_label)
        p[rows[keep], lab[keep]] -= 1
        p[~keep] = 0
    else:
        p[rows, lab] -= 1
    p *= xp.asarray(g).reshape(-1, 1)
    p = p.astype(numpy.result_type(logits.dtype, g.dtype), copy=False)
    return _unmove(xp, p, shape, ax, logits.ndim)


def _ce_vjp(c, g):
    x, label = c.inputs
    at = c.attrs
    gx = F._softmax_ce_grad(x, label, g, **at)
    gl = None
    if not at["sparse"] and c.node.parents[1] is not None and is_float(c.in_dtypes[1]):
        gl = F.log_softmax(x, axis=at["axis"]) * -F.expand_dims(g, axis=at["axis"])
        gl = sum_to(gl, c.in_shapes[1], c.in_dtypes[1])
    return gx, gl


_CE_ATTRS = {"axis": -1, "sparse": True, "ignore_label": None}


@defop("softmax_cross_entropy_with_logits", infer=_ce_infer, vjp=_ce_vjp,
       inputs=("logits", "label"), attrs=_CE_ATTRS, nd=("softmax_cross_entropy_with_logits",))
def _softmax_ce(xp, logits, label, axis=-1, sparse=True, ignore_label=None):
    """Per-sample cross-entropy of softmax(logits) along ``axis`` against class indices
    (``sparse=True``) or distributions; samples whose label is ``ignore_label`` give 0.

    Example:
        >>> from core import nd
        >>> loss = nd.softmax_cross_entropy_with_logits(nd.zeros((2, 4)), nd.array([1, 3]))
        >>> [round(v, 4) for v in loss.asnumpy().tolist()]
        [1.3863, 1.3863]
    """
    ax = axis if 0 <= axis < logits.ndim else norm_axis("", axis, max(logits.ndim, 1))
    return ce_forward(xp, logits, label, ax, sparse, ignore_label)


def _ce_grad_infer(logits, label, g, axis=-1, sparse=True, ignore_label=None):
    name = "_softmax_ce_grad"
    _, out = _ce_shapes(name, logits, label, axis, sparse)
    if tuple(g.shape) != out:
        raise ValueError(f"{name}: g must have the loss' shape {out}, got "
                         f"{fmt([logits, label, g])}")
    return Aval(logits.shape, numpy.result_type(logits.dtype, g.dtype))


def _ce_grad_vjp(c, h):
    x, label, g = c.inputs
    at = c.attrs
    axis = at["axis"]
    gexp = F.expand_dims(g, axis=axis)
    p = F.softmax(x, axis=axis)
    if at["sparse"]:
        weight = gexp
        if at["ignore_label"] is not None:
            keep = F.cast(F.not_equal(label, at["ignore_label"]), dtype=gexp.dtype)
            weight = weight * F.reshape(keep, newshape=gexp.shape, mx_codes=False)
    else:
        weight = gexp * F.sum(label, axis=axis, keepdims=True)
    q = h * weight
    gx = p * (q - F.sum(q * p, axis=axis, keepdims=True))
    gx = sum_to(gx, c.in_shapes[0], c.in_dtypes[0])
    gg = F.sum(h * F._softmax_ce_grad(x, label, F.ones_like(g), **at), axis=axis)
    gg = sum_to(gg, c.in_shapes[2], c.in_dtypes[2])
    gl = None
    if not at["sparse"] and c.node.parents[1] is not None and is_float(c.in_dtypes[1]):
        gl = gexp * (F.sum(h * p, axis=axis, keepdims=True) - h)
        gl = sum_to(gl, c.in_shapes[1], c.in_dtypes[1])
    return gx, gl, gg


@defop("_softmax_ce_grad", infer=_ce_grad_infer, vjp=_ce_grad_vjp,
       inputs=("logits", "label", "g"), attrs=_CE_ATTRS)
def _softmax_ce_grad(xp, logits, label, g, axis=-1, sparse=True, ignore_label=None):
    """(softmax(logits) - one_hot(label)) * g: the cross-entropy's gradient in one operator."""
    ax = axis if 0 <= axis < logits.ndim else norm_axis("", axis, max(logits.ndim, 1))
    return ce_grad(xp, logits, label, g, ax, sparse, ignore_label)


# --------------------------------------------------------------- MXNet's softmax_cross_entropy
def _sce_infer(data, label):
    name = "softmax_cross_entropy"
    if data.ndim != 2:
        raise ValueError(f"{name}: data must be 2-D (batch, classes), got {fmt([data, label])}")
    _ce_shapes(name, data, label, -1, True)
    return Aval((1,), data.dtype)


def _sce_vjp(c, g):
    x, label = c.inputs
    n = c.in_shapes[0][0]
    return F._softmax_ce_grad(x, label, F.broadcast_to(g, shape=(n,))), None


@defop("softmax_cross_entropy", infer=_sce_infer, vjp=_sce_vjp, inputs=("data", "label"),
       nd=("softmax_cross_entropy",))
def _softmax_cross_entropy(xp, data, label):
    """MXNet's softmax_cross_entropy: the cross-entropy summed over the batch, shape (1,).

    Example:
        >>> from core import nd
        >>> nd.softmax_cross_entropy(nd.zeros((2, 2)), nd.array([0, 1])).shape
        (1,)
    """
    if data.ndim != 2:
        raise ValueError("data")  # infer explains
    return ce_forward(xp, data, label, 1).sum(keepdims=True).reshape(1)


# --------------------------------------------------------------- SoftmaxOutput
_SO_ATTRS = {"grad_scale": 1.0, "ignore_label": -1.0, "multi_output": False,
             "use_ignore": False, "preserve_shape": False, "normalization": "null",
             "out_grad": False, "smooth_alpha": 0.0}


def _so_layout(shape, label_shape, multi_output, preserve_shape):
    """(class axis, per-sample label shape, probability labels?) of a SoftmaxOutput call."""
    if tuple(label_shape) == tuple(shape) and len(shape) > 1:
        ax = 1 if multi_output else len(shape) - 1 if preserve_shape else None
        return ax, None, True
    if multi_output:
        return 1, shape[:1] + shape[2:], False
    if preserve_shape:
        return len(shape) - 1, shape[:-1], False
    return None, shape[:1], False  # flattened to (batch, everything else)


def _so_infer(data, label, **at):
    name = "SoftmaxOutput"
    avals = [data, label]
    require_float(name, data, what="data", shown=avals)
    _check_label_dtype(name, label, avals)
    if at.get("normalization", "null") not in ("null", "batch", "valid"):
        raise ValueError(f"{name}: normalization must be 'null', 'batch' or 'valid', got "
                         f"{at['normalization']!r}")
    if data.ndim < (3 if at.get("multi_output") else 1):
        raise ValueError(f"{name}: data has too few dimensions for multi_output="
                         f"{at.get('multi_output')}: {fmt(avals)}")
    _, want, prob = _so_layout(data.shape, label.shape, at.get("multi_output"),
                               at.get("preserve_shape"))
    if not prob and math.prod(label.shape) != math.prod(want):
        raise ValueError(f"{name}: label must have shape {tuple(want)} (one class index per "
                         f"softmax), or data's shape {data.shape} (probabilities), got "
                         f"{fmt(avals)}")
    return Aval(data.shape, data.dtype)


def _so_classes(xp, data, label, at):
    """data as (rows, classes) with the class axis last, the moved shape, the axis."""
    ax, _, prob = _so_layout(data.shape, label.shape, at["multi_output"], at["preserve_shape"])
    if ax is None:
        return data.reshape(data.shape[0], -1), None, None, prob
    flat, shape = _moved(xp, data, ax)
    return flat, shape, ax, prob


def _so_params(shape, a, n_in):
    """The label's shape: the data's without the class axis."""
    if shape is None or len(shape) < 2:
        return {}
    if a.get("multi_output"):
        return {1: (shape[0],) + tuple(shape[2:])}
    return {1: tuple(shape[:-1])}


@defop("SoftmaxOutput", infer=_so_infer, inputs=("data", "label"), attrs=_SO_ATTRS,
       nd=("SoftmaxOutput", "Softmax"),
       vjp=lambda c, g: (F._softmax_output_grad(c.out, c.inputs[1], g, **c.attrs), None),
       param_shapes=ParamShapes(_so_params, (1,)))
def _softmax_output(xp, data, label, **at):
    """MXNet's SoftmaxOutput: the softmax forward, and as gradient
    ``(softmax - one_hot(label)) * grad_scale / normalizer`` whatever the head gradient.

    Example:
        >>> from core import nd
        >>> nd.SoftmaxOutput(nd.zeros((1, 4)), nd.array([2])).asnumpy().tolist()
        [[0.25, 0.25, 0.25, 0.25]]
    """
    flat, shape, ax, prob = _so_classes(xp, data, label, at)
    if not prob:
        check_labels(xp, int_labels(xp, label).reshape(-1), flat.shape[1],
                     at["ignore_label"] if at["use_ignore"] else None)
    y = softmax_raw(xp, flat, 1)
    if ax is None:
        return y.reshape(data.shape)
    return _unmove(xp, y, shape, ax, data.ndim)


def _sog_infer(out, label, g, **at):
    return Aval(out.shape, out.dtype)


def _sog_vjp(c, h):
    raise NotImplementedError(
        "SoftmaxOutput: its gradient is a loss-layer rule (softmax - label), not a derivative, "
        "and cannot be differentiated again; use softmax_cross_entropy_with_logits for "
        "higher-order gradients")


@defop("_softmax_output_grad", infer=_sog_infer, vjp=_sog_vjp, inputs=("out", "label", "g"),
       attrs=_SO_ATTRS)
def _softmax_output_grad(xp, out, label, g, **at):
    """SoftmaxOutput's gradient with respect to its data, from its output."""
    flat, shape, ax, prob = _so_classes(xp, out, label, at)
    scale = at["grad_scale"]
    if prob:
        grad = flat - _so_classes(xp, xp.asarray(label).astype(out.dtype), label, at)[0]
        grad *= scale
    else:
        n, classes = flat.shape
        lab = int_labels(xp, label).reshape(-1)
        grad = flat.copy()
        rows = xp.arange(n)
        alpha = at["smooth_alpha"]
        ignore = int(at["ignore_label"])
        keep = lab != ignore if at["use_ignore"] else None
        safe = xp.where(keep, lab, 0) if keep is not None else lab
        if alpha:
            grad -= alpha / (classes - 1) if classes > 1 else 0.0
            grad[rows, safe] -= (1 - alpha) - (alpha / (classes - 1) if classes > 1 else 0.0)
        else:
            grad[rows, safe] -= 1
        if keep is not None:
            grad[~keep] = 0
        norm = at["normalization"]
        if norm == "valid":
            count = max(int((lab != ignore).sum()), 1)
        elif at["multi_output"]:  # MXNet 1.9: per position of the spatial axes too
            count = (n if norm == "batch" else n // max(out.shape[0], 1)) or 1
        else:  # 'batch' divides by the number of labels (rows; preserve_shape: all)
            count = (n if norm == "batch" else 1) or 1
        grad *= scale / count
    if at["out_grad"]:
        gflat = _so_classes(xp, g, label, at)[0]
        grad *= gflat
    if ax is None:
        return grad.reshape(out.shape)
    return _unmove(xp, grad, shape, ax, out.ndim)


# --------------------------------------------------------------- sigmoid binary cross-entropy
_EPS = 1e-12


def _bce_dtype(*xs):
    """The floating-point inputs' common dtype (integer and boolean labels follow logits)."""
    return numpy.result_type(*[x.dtype for x in xs
                               if x is not None and is_float(getattr(x, "dtype", None))])


def _bce_infer(logits, label, pos_weight=None, from_logits=True):
    name = "sigmoid_binary_cross_entropy"
    avals = [a for a in (logits, label, pos_weight) if a is not None]
    for a in avals:
        if hasattr(a, "dtype") and not (is_float(a.dtype) or a.dtype.kind in "iub"):
            raise TypeError(f"{name}: inputs must be numeric, got {fmt(avals)}")
    if not is_float(getattr(logits, "dtype", None)):
        raise TypeError(f"{name}: logits must be floating-point, got {fmt(avals)}")
    return Aval(broadcast(name, *avals), _bce_dtype(logits, label, pos_weight))


def _softplus_neg(xp, x):
    """softplus(-x) = log1p(exp(-|x|)) + max(-x, 0), without overflow."""
    out = xp.log1p(xp.exp(-xp.abs(x)))
    out += xp.maximum(-x, 0)
    return out


def _bce_vjp(c, g):
    x, z, pw = c.inputs
    shapes, dts = c.in_shapes, c.in_dtypes
    gx = gz = gpw = None
    if c.attrs["from_logits"]:
        if pw is None:
            gx = g * (F.sigmoid(x) - z)
            gz = g * -x
        else:
            lw = (pw - 1) * z + 1
            gx = g * ((1 - z) - lw * (1 - F.sigmoid(x)))
            spn = F.softplus(-x)
            gz = g * ((pw - 1) * spn - x)
            gpw = g * z * spn
    else:
        lp, lq = F.log(x + _EPS), F.log(1 - x + _EPS)
        w = 1 if pw is None else pw
        gx = g * ((1 - z) / (1 - x + _EPS) - z * w / (x + _EPS))
        gz = -g * (lp * w - lq)
        if pw is not None:
            gpw = -g * z * lp
    out = []
    for grad, parent, shape, dt in zip((gx, gz, gpw), c.node.parents, shapes, dts):
        if grad is None or parent is None or not is_float(dt):
            out.append(None)
        else:
            out.append(sum_to(grad, shape, dt))
    return tuple(out)


@defop("sigmoid_binary_cross_entropy", infer=_bce_infer, vjp=_bce_vjp,
       inputs=("logits", "label", "pos_weight?"), attrs={"from_logits": True},
       nd=("sigmoid_binary_cross_entropy",))
def _sigmoid_bce(xp, logits, label, pos_weight=None, from_logits=True):
    """Elementwise binary cross-entropy of sigmoid(logits) (or of probabilities when
    ``from_logits=False``) against ``label``; ``pos_weight`` weighs the positive term.

    With logits it is ``max(x, 0) - x * z + log1p(exp(-|x|))``, which never overflows.

    Example:
        >>> from core import nd
        >>> l = nd.sigmoid_binary_cross_entropy(nd.array([0.0]), nd.array([1.0]))
        >>> round(float(l.asscalar()), 4)
        0.6931
    """
    dt = _bce_dtype(logits, label, pos_weight)
    x = logits.astype(dt, copy=False)
    z = xp.asarray(label).astype(dt, copy=False)
    if from_logits:
        if pos_weight is None:
            out = xp.log1p(xp.exp(-xp.abs(x)))
            out += xp.maximum(x, 0)
            out -= x * z
            return out
        lw = (pos_weight - 1) * z + 1
        return (1 - z) * x + lw * _softplus_neg(xp, x)
    lp, lq = xp.log(x + _EPS), xp.log(1 - x + _EPS)
    if pos_weight is None:
        return -(z * lp + (1 - z) * lq)
    return -(z * pos_weight * lp + (1 - z) * lq)


# --------------------------------------------------------------- smooth_l1
def _sl1_infer(data, scalar=1.0):
    require_float("smooth_l1", data, what="input")
    return Aval(data.shape, data.dtype)


def _sl1_vjp(c, g):
    x = c.inputs[0]
    s2 = float(c.attrs["scalar"]) ** 2
    return (F.where(F.abs(x) < 1.0 / s2, g * x * s2, g * F.sign(x)),)


@defop("smooth_l1", infer=_sl1_infer, vjp=_sl1_vjp, attrs={"scalar": 1.0}, nd=("smooth_l1",))
def _smooth_l1(xp, data, scalar=1.0):
    """MXNet's smooth_l1: 0.5 * (s * x)**2 where |x| < 1 / s**2, else |x| - 0.5 / s**2.

    Example:
        >>> from core import nd
        >>> nd.smooth_l1(nd.array([0.5, -2.0])).asnumpy().tolist()
        [0.125, 1.5]
    """
    s2 = float(scalar) ** 2
    a = xp.abs(data)
    return xp.where(a < 1.0 / s2, (0.5 * s2) * data * data, a - 0.5 / s2).astype(
        data.dtype, copy=False)
