"""Compiled CPU kernels (``core.cpu_kernels``) for layer and batch normalization.

``norm.py`` holds the operators and their NumPy twins (``normalize`` and ``grads``); those
ask :func:`normalize` and :func:`grads` here first, which return None where no kernel
applies (another array module, kernels switched off, a dtype other than float32/float64,
a layout other than the two below) so that the twin runs.

Two layouts, both seen as C-contiguous arrays:

- layer norm over the last axis: rows ``(R, C)``, one mean and std per row, gamma and
  beta per column;
- batch norm: ``(A, C, B)`` with the channel axis in the middle (NCHW: ``(N, C, H*W)``;
  channels last: ``(N*H*W, C, 1)``), statistics and parameters per channel.

The reductions stay NumPy's ``einsum`` exactly as in the twin (SIMD sums that a numba
loop without fast-math cannot match, and the statistics come out bit-identical); the
kernels fuse the elementwise passes around them, each of which the twin runs as a
separate NumPy pass with a temporary: the forward's scale-and-shift (3 passes to 1), the
backward's normalized input (2 to 1) and its gradient formula (4 to 1). The kernels
compute in the twin's order, in the data's dtype.
"""
from __future__ import annotations

import math

import numpy

from ... import cpu_kernels
from ...cpu_kernels import prange

_FLOATS = (numpy.dtype(numpy.float32), numpy.dtype(numpy.float64))


def _layout(L, x):
    """``(kind, (A, C, B))`` when a kernel handles layout ``L`` for array ``x``, else None."""
    if x.dtype not in _FLOATS or L.wshape != L.shape or x.size == 0:
        return None
    shape = L.shape
    if L.axes == (len(shape) - 1,) and L.pshape == (1,) * (len(shape) - 1) + (shape[-1],):
        return "layer", (x.size // shape[-1], shape[-1], 1)  # layer norm, last axis
    if L.pshape == L.kshape and len(L.axes) == len(shape) - 1:
        a = next(i for i in range(len(shape)) if i not in L.axes)
        return "batch", (math.prod(shape[:a]), shape[a], math.prod(shape[a + 1:]))
    return None


# --------------------------------------------------------------------------- kernels
@cpu_kernels.kernel(parallel=True)
def _rows_affine(d, gamma, scale, beta, out):
    """out[r, j] = d[r, j] * gamma[j] * scale[r] + beta[j] (may be in place)."""
    n, c = d.shape
    for r in prange(n):
        s = scale[r]
        for j in range(c):
            out[r, j] = d[r, j] * gamma[j] * s + beta[j]


@cpu_kernels.kernel(parallel=True)
def _rows_gx(gxhat, xhat, m1, m2, rstd, gx):
    """gx[r, j] = ((gxhat[r, j] - m1[r]) - xhat[r, j] * m2[r]) * rstd[r]."""
    n, c = gxhat.shape
    for r in prange(n):
        a, b, s = m1[r], m2[r], rstd[r]
        for j in range(c):
            gx[r, j] = ((gxhat[r, j] - a) - xhat[r, j] * b) * s


@cpu_kernels.kernel(parallel=True)
def _chan_affine(d, scale, shift, out):
    """out[a, c, b] = d[a, c, b] * scale[c] + shift[c] (may be in place)."""
    a_n, c_n, b_n = d.shape
    for a in prange(a_n):
        for c in range(c_n):
            s, t = scale[c], shift[c]
            for b in range(b_n):
                out[a, c, b] = d[a, c, b] * s + t


@cpu_kernels.kernel(parallel=True)
def _chan_xhat(x, mean, rstd, out):
    """out[a, c, b] = (x[a, c, b] - mean[c]) * rstd[c]."""
    a_n, c_n, b_n = x.shape
    for a in prange(a_n):
        for c in range(c_n):
            m, s = mean[c], rstd[c]
            for b in range(b_n):
                out[a, c, b] = (x[a, c, b] - m) * s


@cpu_kernels.kernel(parallel=True)
def _chan_gx(g, xhat, k_g, k_0, k_x, gx):
    """gx[a, c, b] = g[a, c, b] * k_g[c] - k_0[c] - xhat[a, c, b] * k_x[c] (may be in
    place of xhat)."""
    a_n, c_n, b_n = g.shape
    for a in prange(a_n):
        for c in range(c_n):
            kg, k0, kx = k_g[c], k_0[c], k_x[c]
            for b in range(b_n):
                gx[a, c, b] = g[a, c, b] * kg - k0 - xhat[a, c, b] * kx


# --------------------------------------------------------------------------- dispatch
def _on(xp):
    return xp is numpy and cpu_kernels.enabled()


def _c(a, shape=None, dtype=None):
    """``a`` C-contiguous, cast to ``dtype`` and reshaped to ``shape`` when given."""
    a = numpy.ascontiguousarray(a if dtype is None else a.astype(dtype, copy=False))
    return a if shape is None else a.reshape(shape)


def _sum(*ops):
    """Sums over the first and last axes of (A, C, B) operands (of their product)."""
    return numpy.einsum(",".join(["acb"] * len(ops)) + "->c", *ops)


def normalize(xp, x, gamma, beta, L, eps, fix_gamma=False, stats=None):
    """:func:`norm.normalize` through the kernels, or None where they do not apply."""
    lay = _layout(L, x) if _on(xp) else None
    if lay is None or beta.dtype != x.dtype or not fix_gamma and gamma.dtype != x.dtype:
        return None
    kind, (a, c, b) = lay
    inv_n = 1.0 / max(L.count, 1)
    if kind == "layer":
        if stats is not None or fix_gamma:
            return None
        # the rows (R, C) as (1, R, C): one statistic per row
        x3 = _c(x, (1, a, c))
        mean = _sum(x3) * inv_n
        d = x3 - mean[:, None]
        var = _sum(d, d) * inv_n
        scale = 1.0 / numpy.sqrt(var + eps)
        _rows_affine(d[0], _c(gamma, (c,)), scale, _c(beta, (c,)), d[0])
        return d.reshape(L.shape), mean.reshape(L.kshape), var.reshape(L.kshape)
    x3 = _c(x, (a, c, b))
    if stats is None:
        mean = _sum(x3) * inv_n
        d = x3 - mean[:, None]
        var = var_n = _sum(d, d) * inv_n
    else:
        mean = _c(stats[0], (c,), x.dtype)
        var_n = _c(stats[1], (c,), x.dtype)
        var = None
        d = x3 - mean[:, None]
    scale = 1.0 / numpy.sqrt(var_n + eps)
    if not fix_gamma:
        scale = scale * gamma.reshape(c)
    _chan_affine(d, _c(scale), _c(beta, (c,)), d)
    return (d.reshape(L.shape), mean.reshape(L.kshape),
            None if var is None else var.reshape(L.kshape))


def grads(xp, gy, x, gamma, mean, rstd, L, fix_gamma, batch_stats, gmean=None, gvar=None,
          gstd=None):
    """:func:`norm.grads` through the kernels, or None where they do not apply."""
    lay = _layout(L, x) if _on(xp) else None
    if (lay is None or gy.dtype != x.dtype or mean.dtype != x.dtype or rstd.dtype != x.dtype
            or not fix_gamma and gamma.dtype != x.dtype or not batch_stats):
        return None
    kind, (a, c, b) = lay
    n = max(L.count, 1)
    if kind == "layer":
        if fix_gamma or gvar is not None:
            return None
        x3, g2 = _c(x, (1, a, c)), _c(gy, (a, c))
        mean, rstd = _c(mean, (a,)), _c(rstd, (a,))
        xhat = numpy.empty((1, a, c), x.dtype)
        _chan_xhat(x3, mean, rstd, xhat)
        xhat = xhat[0]
        gb = numpy.einsum("rc->c", g2)
        gg = numpy.einsum("rc,rc->c", g2, xhat)
        gxhat = g2 * gamma.reshape(c)
        m1 = numpy.einsum("rc->r", gxhat) / n
        m2 = numpy.einsum("rc,rc->r", gxhat, xhat) / n
        if gmean is not None:
            m1 = m1 - gmean.reshape(a).astype(x.dtype, copy=False) / (n * rstd)
        if gstd is not None:
            m2 = m2 - gstd.reshape(a).astype(x.dtype, copy=False) / (n * rstd)
        _rows_gx(gxhat, xhat, _c(m1), _c(m2), rstd, gxhat)
        return gxhat.reshape(L.wshape), gg.reshape(L.pshape), gb.reshape(L.pshape)
    g3, x3 = _c(gy, (a, c, b)), _c(x, (a, c, b))
    mean, rstd = _c(mean, (c,)), _c(rstd, (c,))
    xhat = numpy.empty((a, c, b), x.dtype)
    _chan_xhat(x3, mean, rstd, xhat)
    gb, gg = _sum(g3), _sum(g3, xhat)
    # the per-channel coefficients, as norm.grads computes them (C values each)
    gp = None if fix_gamma else gamma.reshape(c)
    m1 = gb / n if gp is None else gb * (gp / n)
    m2 = gg / n if gp is None else gg * (gp / n)
    if gmean is not None:
        m1 = m1 - gmean.reshape(c).astype(x.dtype, copy=False) / (n * rstd)
    if gvar is not None:
        m2 = m2 - gvar.reshape(c).astype(x.dtype, copy=False) * (2.0 / n) / (rstd * rstd)
    if gstd is not None:
        m2 = m2 - gstd.reshape(c).astype(x.dtype, copy=False) / (n * rstd)
    _chan_gx(g3, xhat, _c(rstd if gp is None else rstd * gp), _c(rstd * m1), _c(rstd * m2),
             xhat)
    if fix_gamma:
        gg = numpy.zeros_like(gg)
    return xhat.reshape(L.wshape), gg.reshape(L.pshape), gb.reshape(L.pshape)
