"""Connectionist temporal classification loss: MXNet's ``CTCLoss`` (``contrib.CTCLoss``).

``data`` is (T, N, C): unnormalized activations for T time steps, N sequences and C
classes (the blank included); the softmax over C is taken inside. ``label`` is (N, L),
padded. With ``blank_label='first'`` the blank is class 0, real labels are 1..C-1 and
0 pads; with ``'last'`` the blank is C-1, real labels are 0..C-2 and -1 pads (a label
equal to the blank is accepted, as MXNet accepts it: an extra state that cannot be
skipped). Without
``use_label_lengths`` a sequence's labels end at its first padding value; without
``use_data_lengths`` every sequence uses all T steps. The result is the negative log
likelihood per sequence, shape (N,); it is ``inf`` where no alignment exists (the
gradient of such a sequence is 0).

The forward runs the alpha recursion in log space over the extended label sequences
(blanks interleaved, S = 2L + 1 states), vectorized over the batch; only the loop over
time is in Python. The VJP (``_ctc_loss_grad``) runs alpha and beta and returns
``(softmax(data) - occupation) * g``, where occupation[t, n, k] is the posterior
probability of emitting class k at step t. That gradient is not differentiable again.
"""
from __future__ import annotations

import numpy

from ...dtypes import is_float, is_integer
from ..infer import fmt, require_float
from ..param_shapes import ParamShapes
from ..registry import Aval, F, defop

_ATTRS = {"use_data_lengths": False, "use_label_lengths": False, "blank_label": "first"}
_F32 = numpy.dtype(numpy.float32)


def _ctc_check(name, data, label, data_lengths, label_lengths, use_data_lengths,
               use_label_lengths, blank_label):
    avals = [a for a in (data, label, data_lengths, label_lengths) if a is not None]
    require_float(name, data, what="data", shown=avals)
    if data.ndim != 3:
        raise ValueError(f"{name}: data must be 3-D (time, batch, classes), got {fmt(avals)}")
    if label.ndim != 2 or label.shape[0] != data.shape[1]:
        raise ValueError(f"{name}: label must be 2-D (batch={data.shape[1]}, max label length), "
                         f"got {fmt(avals)}")
    if not (is_integer(label.dtype) or is_float(label.dtype)):
        raise TypeError(f"{name}: labels must be integers or floats holding integers, got "
                        f"{fmt(avals)}")
    if blank_label not in ("first", "last"):
        raise ValueError(f"{name}: blank_label must be 'first' or 'last', got {blank_label!r}")
    for use, arr, what in ((use_data_lengths, data_lengths, "data_lengths"),
                           (use_label_lengths, label_lengths, "label_lengths")):
        if use:
            if arr is None:
                raise ValueError(f"{name}: use_{what}=True needs the {what} input, of shape "
                                 f"({data.shape[1]},) ({fmt(avals)})")
            if tuple(arr.shape) != (data.shape[1],):
                raise ValueError(f"{name}: {what} must have shape ({data.shape[1]},), got "
                                 f"{fmt(avals)}")


def _ctc_infer(data, label, data_lengths=None, label_lengths=None, **at):
    _ctc_check("CTCLoss", data, label, data_lengths, label_lengths, **at)
    return Aval((data.shape[1],), data.dtype)


# --------------------------------------------------------------- the recursions
def _lse3(xp, a, b, c):
    """log(exp(a) + exp(b) + exp(c)) elementwise, -inf where all three are -inf."""
    m = xp.maximum(xp.maximum(a, b), c)
    fin = xp.isfinite(m)
    ms = xp.where(fin, m, 0)
    s = xp.exp(a - ms) + xp.exp(b - ms) + xp.exp(c - ms)
    return xp.where(fin, xp.log(xp.where(fin, s, 1)) + ms, -numpy.inf)


def _shift(xp, a, k, fill):
    """``a`` shifted right by k along axis 1 (k < 0: left), filled with ``fill``."""
    out = xp.full_like(a, fill)
    if k > 0:
        out[:, k:] = a[:, :-k]
    else:
        out[:, :k] = a[:, -k:]
    return out


def _prepare(xp, data, label, data_lengths, label_lengths, use_data_lengths,
             use_label_lengths, blank_label):
    """log-softmax, the extended labels and the lengths, with the labels validated."""
    t_max, n, c = data.shape
    w = data.astype(_F32 if data.dtype.itemsize < 4 else data.dtype, copy=False)
    m = w.max(axis=2, keepdims=True)
    logp = w - m
    logp -= xp.log(xp.exp(logp).sum(axis=2, keepdims=True))
    lab = xp.asarray(label)
    lab = lab if lab.dtype.kind in "iu" else lab.astype(numpy.int64)
    lab = lab.astype(numpy.int64, copy=False)
    big_l = lab.shape[1]
    blank, pad = (0, 0) if blank_label == "first" else (c - 1, -1)
    if use_label_lengths:
        lens = xp.asarray(label_lengths).astype(numpy.int64)
        if lens.size and (int(lens.min()) < 0 or int(lens.max()) > big_l):
            raise ValueError(f"label_lengths must be in [0, {big_l}] (the label's width), got "
                             f"values from {int(lens.min())} to {int(lens.max())}")
    else:
        is_pad = lab == pad
        lens = xp.where(is_pad.any(axis=1), xp.argmax(is_pad, axis=1), big_l)
    used = xp.arange(big_l)[None, :] < lens[:, None]
    # A label equal to the blank is taken as MXNet takes it: a state of its own that the
    # alignment cannot skip into (only reachable with label_lengths, or 'last' padding).
    bad = used & ((lab < 0) | (lab >= c))
    if bool(bad.any()):
        i, j = (int(v) for v in xp.argwhere(bad)[0])
        low, high = (1, c - 1) if blank_label == "first" else (0, c - 2)
        raise ValueError(f"label {int(lab[i, j])} of sequence {i} (position {j}) is not a "
                         f"class: with {c} classes and blank_label={blank_label!r} the labels "
                         f"are {low}..{high} (the blank is {blank}; labels must be in "
                         f"[0, {c}))")
    if use_data_lengths:
        tlen = xp.asarray(data_lengths).astype(numpy.int64)
        if tlen.size and (int(tlen.min()) < 0 or int(tlen.max()) > t_max):
            raise ValueError(f"data_lengths must be in [0, {t_max}] (the data's time steps), "
                             f"got values from {int(tlen.min())} to {int(tlen.max())}")
    else:
        tlen = xp.full((n,), t_max, numpy.int64)
    s_max = 2 * big_l + 1
    ext = xp.full((n, s_max), blank, numpy.int64)
    ext[:, 1::2] = xp.where(used, lab, blank)
    s_len = 2 * lens + 1
    valid = xp.arange(s_max)[None, :] < s_len[:, None]
    prev2 = _shift(xp, ext, 2, blank)
    skip = (ext != blank) & (ext != prev2)
    skip[:, :2] = False
    lp_ext = logp[:, xp.arange(n)[:, None], ext]  # (T, N, S)
    return logp, lp_ext, ext, valid, skip, s_len, lens, tlen


def _alphas(xp, lp_ext, valid, skip, tlen, keep_all):
    t_max, n, s_max = lp_ext.shape
    neg = -numpy.inf
    alpha = xp.full((n, s_max), neg, lp_ext.dtype)
    if t_max:
        alpha[:, 0] = lp_ext[0, :, 0]
        if s_max > 1:
            alpha[:, 1] = lp_ext[0, :, 1]
        alpha = xp.where(valid, alpha, neg)
    alls = xp.empty((t_max, n, s_max), lp_ext.dtype) if keep_all else None
    if keep_all and t_max:
        alls[0] = alpha
    for t in range(1, t_max):
        a3 = xp.where(skip, _shift(xp, alpha, 2, neg), neg)
        new = _lse3(xp, alpha, _shift(xp, alpha, 1, neg), a3) + lp_ext[t]
        new = xp.where(valid, new, neg)
        alpha = xp.where((t < tlen)[:, None], new, alpha)
        if keep_all:
            alls[t] = alpha
    return alpha, alls


def _final(xp, alpha, s_len, lens, tlen):
    """log p(label | data) per sequence from the last alpha."""
    n = alpha.shape[0]
    rows = xp.arange(n)
    last = alpha[rows, s_len - 1]
    before = xp.where(s_len >= 2, alpha[rows, xp.maximum(s_len - 2, 0)], -numpy.inf)
    ll = xp.logaddexp(last, before)
    # no time steps: only the empty label has an alignment
    return xp.where(tlen == 0, xp.where(lens == 0, 0.0, -numpy.inf), ll)


def _ctc_nll(xp, data, label, data_lengths, label_lengths, **at):
    _, lp_ext, _, valid, skip, s_len, lens, tlen = _prepare(xp, data, label, data_lengths,
                                                            label_lengths, **at)
    alpha, _ = _alphas(xp, lp_ext, valid, skip, tlen, False)
    return 0.0 - _final(xp, alpha, s_len, lens, tlen)  # 0.0 - : no -0.0 for empty labels


def _ctc_lengths(shape, a, n_in):
    """``data_lengths`` and ``label_lengths``: one per batch row."""
    if shape is None or len(shape) != 3:
        return {}
    n = shape[0] if a.get("layout") == "NTC" else shape[1]
    return {2: (n,), 3: (n,)}


@defop("CTCLoss", infer=_ctc_infer, inputs=("data", "label", "data_lengths?", "label_lengths?"),
       attrs=_ATTRS, nd=("CTCLoss", "ctc_loss", "contrib.CTCLoss", "contrib.ctc_loss"),
       param_shapes=ParamShapes(_ctc_lengths),
       optional_inputs={"data_lengths": lambda a: bool(a.get("use_data_lengths")),
                        "label_lengths": lambda a: bool(a.get("use_label_lengths"))},
       vjp=lambda c, g: (F._ctc_loss_grad(c.inputs[0], c.inputs[1], g, c.inputs[2],
                                          c.inputs[3], **c.attrs), None, None, None))
def _ctc_loss(xp, data, label, data_lengths=None, label_lengths=None, **at):
    """CTC loss (negative log likelihood) per sequence of (T, N, C) activations.

    Example:
        >>> from core import nd
        >>> x = nd.zeros((2, 1, 3))  # uniform over 3 classes at 2 steps
        >>> round(float(nd.CTCLoss(x, nd.array([[1]])).asscalar()), 4)  # 3 of 9 paths
        1.0986
    """
    return _ctc_nll(xp, data, label, data_lengths, label_lengths, **at).astype(data.dtype)


def _ctc_grad_infer(data, label, g, data_lengths=None, label_lengths=None, **at):
    _ctc_check("_ctc_loss_grad", data, label, data_lengths, label_lengths, **at)
    if tuple(g.shape) != (data.shape[1],):
        raise ValueError(f"_ctc_loss_grad: g must have shape ({data.shape[1]},), got "
                         f"{fmt([data, label, g])}")
    return Aval(data.shape, data.dtype)


def _ctc_grad_vjp(c, h):
    raise NotImplementedError("CTCLoss: second-order gradients are not supported")


@defop("_ctc_loss_grad", infer=_ctc_grad_infer, vjp=_ctc_grad_vjp,
       inputs=("data", "label", "g", "data_lengths?", "label_lengths?"), attrs=_ATTRS)
def _ctc_loss_grad(xp, data, label, g, data_lengths=None, label_lengths=None, **at):
    """CTCLoss' gradient with respect to ``data``, times the head gradient ``g``."""
    logp, lp_ext, ext, valid, skip, s_len, lens, tlen = _prepare(
        xp, data, label, data_lengths, label_lengths, **at)
    t_max, n, c = data.shape
    s_max = ext.shape[1]
    neg = -numpy.inf
    alpha, alls = _alphas(xp, lp_ext, valid, skip, tlen, True)
    ll = _final(xp, alpha, s_len, lens, tlen)
    # beta[t, n, s]: log probability of finishing from state s at step t (excluding step t)
    rows = xp.arange(n)
    init = xp.full((n, s_max), neg, lp_ext.dtype)
    init[rows, s_len - 1] = 0
    two = s_len >= 2
    init[rows[two], (s_len - 2)[two]] = 0
    skip_next = _shift(xp, skip, -2, False)
    gamma = xp.empty((t_max, n, s_max), lp_ext.dtype)
    beta = init
    for t in range(t_max - 1, -1, -1):
        if t < t_max - 1:
            e = beta + lp_ext[t + 1]
            b3 = xp.where(skip_next, _shift(xp, e, -2, neg), neg)
            new = xp.where(valid, _lse3(xp, e, _shift(xp, e, -1, neg), b3), neg)
            beta = xp.where((t == tlen - 1)[:, None], init, new)
        gamma[t] = alls[t] + beta
    ok = xp.isfinite(ll)
    gamma -= xp.where(ok, ll, 0)[None, :, None]
    live = (xp.arange(t_max)[:, None] < tlen[None, :]) & ok[None, :]  # (T, N)
    post = xp.where(live[:, :, None], xp.exp(gamma), 0)
    onehot = (ext[:, :, None] == xp.arange(c)[None, None, :]).astype(post.dtype)  # (N, S, C)
    occ = xp.matmul(post.transpose(1, 0, 2), onehot).transpose(1, 0, 2)  # (T, N, C)
    grad = xp.exp(logp)
    grad -= occ
    grad *= live[:, :, None]
    grad *= xp.asarray(g).astype(grad.dtype, copy=False)[None, :, None]
    return grad.astype(data.dtype, copy=False)
