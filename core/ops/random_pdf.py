"""MXNet's probability density operators ``random_pdf_<dist>(sample, *params, is_log)``.

Each parameter array has a shape ``P`` that leads the sample's shape ``P + S``: the
density of every sample under the distribution of its parameter element (MXNet's
``sample_<dist>`` draws exactly such arrays); the output has the sample's shape and
dtype. ``random_pdf_dirichlet(sample, alpha)`` reads the last axis as the ``k``
components: ``alpha`` has shape ``P + (k,)``, the sample ``P + S + (k,)``, the output
``P + S``. ``is_log=True`` gives the log-density.

Parameterizations follow MXNet: ``gamma`` has shape ``alpha`` and rate ``beta``;
``exponential`` and ``poisson`` the rate ``lam``; ``negative_binomial`` ``k`` successes
of probability ``p``; ``generalized_negative_binomial`` mean ``mu`` and dispersion
``alpha`` (a negative binomial with ``k = 1 / alpha``, ``p = 1 / (1 + mu * alpha)``).

The gradients with respect to the sample and every parameter come from the analytic
derivative of the log-density (``d pdf = pdf * d log pdf``), in float64, from one
backward operator per distribution.
"""
from __future__ import annotations

import math

import numpy

from .. import cuda
from ..dtypes import FLOATS
from .infer import fmt
from .registry import Aval, F, defop

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _logpdf_and_grads(dist, sp, xp, x, p, grads):
    """log-density of ``x`` under params ``p`` (broadcast to x), and, with ``grads``, its
    derivatives with respect to x and to each parameter (float64 arrays)."""
    lg, dg = sp.gammaln, sp.digamma
    if dist == "normal":
        mu, s = p
        z = (x - mu) / s
        lp = -0.5 * z * z - xp.log(s) - _HALF_LOG_2PI
        return lp, (grads and (-z / s, z / s, (z * z - 1) / s))
    if dist == "uniform":
        lo, hi = p
        inside = (x >= lo) & (x <= hi)
        w = hi - lo
        lp = xp.where(inside, -xp.log(w), -xp.inf)
        zero = xp.zeros_like(x)
        return lp, (grads and (zero, xp.where(inside, 1 / w, 0), xp.where(inside, -1 / w, 0)))
    if dist == "gamma":
        a, b = p
        lp = a * xp.log(b) + (a - 1) * xp.log(x) - b * x - lg(a)
        return lp, (grads and ((a - 1) / x - b, xp.log(b) + xp.log(x) - dg(a), a / b - x))
    if dist == "exponential":
        (lam,) = p
        return xp.log(lam) - lam * x, (grads and (-lam + 0 * x, 1 / lam - x))
    if dist == "poisson":
        (lam,) = p
        lp = x * xp.log(lam) - lam - lg(x + 1)
        return lp, (grads and (xp.log(lam) - dg(x + 1), x / lam - 1))
    if dist == "negative_binomial":
        k, q = p
        lp = lg(x + k) - lg(x + 1) - lg(k) + k * xp.log(q) + x * xp.log1p(-q)
        return lp, (grads and (dg(x + k) - dg(x + 1) + xp.log1p(-q),
                               dg(x + k) - dg(k) + xp.log(q), k / q - x / (1 - q)))
    if dist == "generalized_negative_binomial":
        mu, a = p
        r, ma = 1 / a, mu * a
        lp = lg(x + r) - lg(x + 1) - lg(r) - r * xp.log1p(ma) + x * xp.log(ma) - x * xp.log1p(ma)
        if not grads:
            return lp, None
        dx = dg(x + r) - dg(x + 1) + xp.log(ma) - xp.log1p(ma)
        dmu = x / mu - (1 + x * a) / (1 + ma)
        da = (-(dg(x + r) - dg(r)) + xp.log1p(ma)) / (a * a) - mu / (a * (1 + ma)) + x / a \
            - x * mu / (1 + ma)
        return lp, (dx, dmu, da)
    # dirichlet: x (..., k), alpha (..., k); the log-density sums the last axis
    (al,) = p
    lp = lg(al.sum(-1)) - lg(al).sum(-1) + ((al - 1) * xp.log(x)).sum(-1)
    return lp, (grads and ((al - 1) / x, dg(al.sum(-1, keepdims=True)) - dg(al) + xp.log(x)))


def _layout(dist, sample_shape, pshape):
    """(parameter shape as broadcast against the sample, axes to sum a gradient over)."""
    if dist == "dirichlet":
        lead, k = pshape[:-1], pshape[-1]
        extra = len(sample_shape) - len(pshape)
        return lead + (1,) * extra + (k,), tuple(range(len(lead), len(lead) + extra))
    extra = len(sample_shape) - len(pshape)
    return pshape + (1,) * extra, tuple(range(len(pshape), len(sample_shape)))


def _pdf_infer(dist, names):
    opname = f"random_pdf_{dist}"

    def infer(sample, *params, is_log=False):
        avals = [sample, *params]
        if any(p is None for p in params) or len(params) != len(names):
            raise TypeError(f"{opname}: expects inputs sample, {', '.join(names)}")
        if not all(numpy.dtype(a.dtype) in FLOATS for a in avals):
            raise TypeError(f"{opname}: expects floating-point inputs, got {fmt(avals)}")
        ps = tuple(params[0].shape)
        ss = tuple(sample.shape)
        if any(tuple(p.shape) != ps for p in params):
            raise ValueError(f"{opname}: the parameters must have one shape, got {fmt(avals)}")
        if dist == "dirichlet":
            ok = len(ps) >= 1 and len(ss) >= len(ps) and ss[:len(ps) - 1] == ps[:-1] \
                and ss[-1] == ps[-1]
            out = ss[:-1]
        else:
            ok = ss[:len(ps)] == ps
            out = ss
        if not ok:
            raise ValueError(f"{opname}: the sample's shape must start with the parameters' "
                             f"shape {ps}{' and end with k' if dist == 'dirichlet' else ''}, "
                             f"got {fmt(avals)}")
        return Aval(out, sample.dtype)

    return infer


def _register(dist, names):
    opname = f"random_pdf_{dist}"
    infer = _pdf_infer(dist, names)

    def prepare(xp, sample, params):
        x = sample.astype(numpy.float64)
        shape, axes = _layout(dist, tuple(sample.shape), tuple(params[0].shape))
        return x, [p.astype(numpy.float64).reshape(shape) for p in params], axes

    def forward(xp, sample, *params, is_log=False):
        infer(sample, *params, is_log=is_log)
        x, p, _ = prepare(xp, sample, params)
        lp, _ = _logpdf_and_grads(dist, cuda.special(xp), xp, x, p, False)
        return (lp if is_log else xp.exp(lp)).astype(sample.dtype)

    def bwd_infer(g, sample, *params, is_log=False):
        return tuple(Aval(a.shape, a.dtype) for a in (sample, *params))

    def backward(xp, g, sample, *params, is_log=False):
        x, p, axes = prepare(xp, sample, params)
        lp, d = _logpdf_and_grads(dist, cuda.special(xp), xp, x, p, True)
        w = g.astype(numpy.float64)
        if not is_log:
            w = w * xp.exp(lp)
        if dist == "dirichlet":
            w = w[..., None]
        out = [(w * d[0]).astype(sample.dtype)]
        for q, dq in zip(params, d[1:]):
            t = w * dq
            t = t.sum(axis=axes) if axes else t
            out.append(t.reshape(q.shape).astype(q.dtype))
        return tuple(out)

    defop(f"_backward_{opname}", infer=bwd_infer, inputs=("g", "sample", *names),
          attrs={"is_log": False}, differentiable=False, save=False)(backward)

    def vjp(c, g):
        return getattr(F, f"_backward_{opname}")(g, *c.inputs, is_log=c.attrs["is_log"])

    forward.__doc__ = (f"The density of ``sample`` under the {dist} distribution of "
                       f"``{', '.join(names)}`` (``is_log``: its log).")
    defop(opname, infer=infer, vjp=vjp, inputs=("sample", *names), attrs={"is_log": False},
          save="inputs", nd=(opname, f"random.pdf_{dist}"))(forward)


for _dist, _names in [("uniform", ("low", "high")), ("normal", ("mu", "sigma")),
                      ("gamma", ("alpha", "beta")), ("exponential", ("lam",)),
                      ("poisson", ("lam",)), ("negative_binomial", ("k", "p")),
                      ("generalized_negative_binomial", ("mu", "alpha")),
                      ("dirichlet", ("alpha",))]:
    _register(_dist, _names)
