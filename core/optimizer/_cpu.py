"""Compiled CPU kernels (``core.cpu_kernels``) for the fused update rules.

One kernel per rule updates the weight and its state in place in one pass over the
elements, block by block (:data:`BLOCK` elements, each step of the rule one loop with
one store over the block: numba (LLVM) vectorizes such loops, not a loop that writes
both the weight and its states; measured on 400k floats, SGD with momentum 0.16 ms
blocked, 0.60 ms as one scalar loop, 0.33 ms the NumPy twin; Adam 0.20 ms blocked,
1.8 ms the twin), with the operations of the rule's NumPy twin (``sgd_update`` in ``sgd.py``,
...) in the same order and in the same dtype (float32, float64 for float64 weights;
scalars rounded to it as NumPy rounds Python floats), so that both give the same
numbers. The twin still runs for what the kernels do not take (:func:`takes`: CuPy
arrays, float16/bfloat16 or mixed dtypes, non-contiguous weights or states) and when
kernels are off (``KBACKEND_NUMBA=0``, ``cpu_kernels.disabled()``).

Each rule has a serial kernel over the element range ``[lo, hi)`` of flat arrays and a
parallel one that runs the serial kernel on chunks of :data:`CHUNK` elements; a
:class:`CpuRule` picks one by size (:data:`PARALLEL_MIN`). A step over many tensors calls the rule once per tensor: that flat loop was
measured faster than one multi-tensor kernel over numba typed Lists of the arrays
(on an MLP's 6 parameters, SGD with momentum: 0.23 ms for the loop, 1.5 ms serial and
11 ms parallel over typed Lists, whose unboxing and item access cost more than the
calls they save).
"""
from __future__ import annotations

import math

import numpy

from .. import cpu_kernels
from ..cpu_kernels import prange

__all__ = ["CHUNK", "PARALLEL_MIN", "CpuRule", "lamb", "takes"]

CHUNK = 16384  # elements per parallel task
BLOCK = 1024  # elements per block of the blocked kernels (their scratch stays in L1)
# Smaller tensors run serially. A parallel region costs ~3 us on an idle machine but
# milliseconds on a busy one (its second thread waits for a core): on the shared 2-core
# machine the MLP's Adam step took 15.8 ms with the parallel kernels from 64k elements
# on, 0.6 ms all serial (torch's foreach step, OpenMP too: 6.3 ms). Retune on a quiet
# machine; KBACKEND_NUM_THREADS=1 keeps every kernel serial.
PARALLEL_MIN = 1 << 22
_DTYPES = (numpy.dtype(numpy.float32), numpy.dtype(numpy.float64))


def takes(w, g, states, exact: bool = True) -> bool:
    """Whether the kernels take these raw arrays: NumPy, float32 or float64 alike, the
    weight and states C-contiguous (they are written through flat views), the gradient
    of the weight's shape (any layout: it is made contiguous); and kernels are on.

    ``exact``: the rule's kernels equal its twin bit for bit, so the twin runs while
    numba starts in the background (``cpu_kernels.ready``); LAMB's do not (False: wait)."""
    if not (type(w) is numpy.ndarray and type(g) is numpy.ndarray):
        return False
    if not (cpu_kernels.ready() if exact else cpu_kernels.enabled()):
        return False
    dt = w.dtype
    if dt not in _DTYPES or g.dtype != dt or g.shape != w.shape or not w.flags.c_contiguous:
        return False
    for s in states:
        if type(s) is not numpy.ndarray or s.dtype != dt or s.shape != w.shape \
                or not s.flags.c_contiguous:
            return False
    return True


def _flat(a):
    return a.reshape(-1)


class CpuRule:
    """A rule's serial and parallel kernel, called as ``rule(w, g, states, scalars)``.

    Args:
        serial: the kernel ``(lo, hi, w, g, *states, *scalars)`` over flat arrays.
        parallel: the kernel ``(w, g, *states, *scalars)`` running ``serial`` on chunks.
    """

    def __init__(self, serial, parallel):
        self.serial, self.parallel = serial, parallel

    def __call__(self, w, g, states, scalars) -> None:
        n = w.size
        arrays = (_flat(w), _flat(numpy.ascontiguousarray(g)), *(_flat(s) for s in states))
        if n >= PARALLEL_MIN and cpu_kernels.num_threads() > 1:
            self.parallel(*arrays, *scalars)
        else:
            self.serial(0, n, *arrays, *scalars)


# ------------------------------------------------------------------ shared pieces

@cpu_kernels.kernel()
def _grad(g, rescale, clip):
    """``clip(rescale * g)``, ``clip < 0`` meaning no clipping (NaN stays NaN)."""
    t = g * rescale
    if clip >= 0:
        if t > clip:
            t = clip
        elif t < -clip:
            t = -clip
    return t


@cpu_kernels.kernel()
def _div(a, b):
    """``a / b`` with IEEE results for ``b == 0`` (inf or NaN, as NumPy), where numba's
    division would raise ZeroDivisionError."""
    if b == 0:
        return type(a)(a * math.copysign(math.inf, b))
    return a / b


@cpu_kernels.kernel()
def _clip_block(w, n, bound):
    """Clip ``w[:n]`` to ``[-bound, bound]`` (``bound < 0``: no clipping)."""
    if bound >= 0:
        for j in range(n):
            x = w[j]
            w[j] = bound if x > bound else (-bound if x < -bound else x)


@cpu_kernels.kernel()
def _moments_block(t, m, v, n, b1, c1, b2, c2):
    """Adam's moments of ``t[:n]``: ``m = b1 * m + c1 * t; v = b2 * v + c2 * t * t``."""
    for j in range(n):
        m[j] = m[j] * b1 + t[j] * c1
    for j in range(n):
        v[j] = v[j] * b2 + (t[j] * t[j]) * c2


# ------------------------------------------------------------------ SGD, NAG

@cpu_kernels.kernel()
def _scaled_block(t, g, w, n, rescale, wd, clip, wd_first):
    """``t[:n] = clip(rescale * g + wd * w)`` (``wd_first``) or ``clip(rescale * g) + wd *
    w``, in the twins' order (``scaled_grad``)."""
    for j in range(n):
        t[j] = g[j] * rescale
    if wd_first and wd != 0:
        for j in range(n):
            t[j] = t[j] + w[j] * wd
    if clip >= 0:
        for j in range(n):
            x = t[j]
            t[j] = clip if x > clip else (-clip if x < -clip else x)
    if not wd_first and wd != 0:
        for j in range(n):
            t[j] = t[j] + w[j] * wd


@cpu_kernels.kernel()
def _sgd(lo, hi, w, g, lr, wd, rescale, clip):
    ct = w.dtype.type
    lr_, rs, cl, dec = ct(lr), ct(rescale), ct(clip), ct(1.0 - lr * wd)
    t = numpy.empty(BLOCK, w.dtype)
    for a in range(lo, hi, BLOCK):
        n = min(BLOCK, hi - a)
        ww = w[a:a + n]
        _scaled_block(t, g[a:a + n], ww, n, rs, ct(0.0), cl, True)
        if wd != 0:
            for j in range(n):
                ww[j] = ww[j] * dec - t[j] * lr_
        else:
            for j in range(n):
                ww[j] = ww[j] - t[j] * lr_


@cpu_kernels.kernel(parallel=True)
def _sgd_par(w, g, lr, wd, rescale, clip):
    n = w.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        _sgd(c * CHUNK, min(n, (c + 1) * CHUNK), w, g, lr, wd, rescale, clip)


sgd = CpuRule(_sgd, _sgd_par)


@cpu_kernels.kernel()
def _sgd_mom(lo, hi, w, g, mom, lr, wd, momentum, rescale, clip):
    ct = w.dtype.type
    lr_, lrwd, mu, rs, cl = ct(lr), ct(lr * wd), ct(momentum), ct(rescale), ct(clip)
    t = numpy.empty(BLOCK, w.dtype)
    for a in range(lo, hi, BLOCK):
        n = min(BLOCK, hi - a)
        ww, mm = w[a:a + n], mom[a:a + n]
        _scaled_block(t, g[a:a + n], ww, n, rs, ct(0.0), cl, True)
        if wd != 0:
            for j in range(n):
                t[j] = t[j] * lr_ + ww[j] * lrwd
        else:
            for j in range(n):
                t[j] = t[j] * lr_
        for j in range(n):
            mm[j] = mm[j] * mu - t[j]
        for j in range(n):
            ww[j] = ww[j] + mm[j]


@cpu_kernels.kernel(parallel=True)
def _sgd_mom_par(w, g, mom, lr, wd, momentum, rescale, clip):
    n = w.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        _sgd_mom(c * CHUNK, min(n, (c + 1) * CHUNK), w, g, mom, lr, wd, momentum, rescale,
                 clip)


sgd_mom = CpuRule(_sgd_mom, _sgd_mom_par)


@cpu_kernels.kernel()
def _nag_mom(lo, hi, w, g, mom, lr, wd, momentum, rescale, clip):
    ct = w.dtype.type
    lr_, wd_, mu, rs, cl = ct(lr), ct(wd), ct(momentum), ct(rescale), ct(clip)
    t = numpy.empty(BLOCK, w.dtype)
    for a in range(lo, hi, BLOCK):
        n = min(BLOCK, hi - a)
        ww, mm = w[a:a + n], mom[a:a + n]
        _scaled_block(t, g[a:a + n], ww, n, rs, wd_, cl, False)
        for j in range(n):
            t[j] = t[j] * lr_
        for j in range(n):
            mm[j] = mm[j] * mu - t[j]
        for j in range(n):
            ww[j] = ww[j] - (t[j] - mm[j] * mu)


@cpu_kernels.kernel(parallel=True)
def _nag_mom_par(w, g, mom, lr, wd, momentum, rescale, clip):
    n = w.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        _nag_mom(c * CHUNK, min(n, (c + 1) * CHUNK), w, g, mom, lr, wd, momentum, rescale,
                 clip)


nag_mom = CpuRule(_nag_mom, _nag_mom_par)


# ------------------------------------------------------------------ Adam, AdamW

@cpu_kernels.kernel()
def _adam(lo, hi, w, g, m, v, lr, wd, beta1, beta2, eps, rescale, clip):
    ct = w.dtype.type
    lr_, wd_, b1, b2, ep = ct(lr), ct(wd), ct(beta1), ct(beta2), ct(eps)
    c1, c2, rs, cl = ct(1.0 - beta1), ct(1.0 - beta2), ct(rescale), ct(clip)
    t = numpy.empty(BLOCK, w.dtype)
    d = numpy.empty(BLOCK, w.dtype)
    for a in range(lo, hi, BLOCK):
        n = min(BLOCK, hi - a)
        ww, mm, vv, dd = w[a:a + n], m[a:a + n], v[a:a + n], d[:n]
        _scaled_block(t, g[a:a + n], ww, n, rs, wd_, cl, True)
        _moments_block(t, mm, vv, n, b1, c1, b2, c2)
        for j in range(n):
            dd[j] = math.sqrt(vv[j]) + ep
        numpy.divide(mm, dd, dd)  # NumPy's inf and NaN where dd is 0, vectorized
        for j in range(n):
            ww[j] = ww[j] - dd[j] * lr_

@cpu_kernels.kernel(parallel=True)
def _adam_par(w, g, m, v, lr, wd, beta1, beta2, eps, rescale, clip):
    n = w.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        _adam(c * CHUNK, min(n, (c + 1) * CHUNK), w, g, m, v, lr, wd, beta1, beta2, eps,
              rescale, clip)


adam = CpuRule(_adam, _adam_par)


@cpu_kernels.kernel()
def _adamw(lo, hi, w, g, m, v, eta, wd, beta1, beta2, eps, rescale, clip):
    ct = w.dtype.type
    eta_, wd_, b1, b2, ep = ct(eta), ct(wd), ct(beta1), ct(beta2), ct(eps)
    c1, c2, rs, cl = ct(1.0 - beta1), ct(1.0 - beta2), ct(rescale), ct(clip)
    t = numpy.empty(BLOCK, w.dtype)
    d = numpy.empty(BLOCK, w.dtype)
    for a in range(lo, hi, BLOCK):
        n = min(BLOCK, hi - a)
        ww, mm, vv, dd = w[a:a + n], m[a:a + n], v[a:a + n], d[:n]
        _scaled_block(t, g[a:a + n], ww, n, rs, ct(0.0), cl, True)
        _moments_block(t, mm, vv, n, b1, c1, b2, c2)
        for j in range(n):
            dd[j] = math.sqrt(vv[j]) + ep
        numpy.divide(mm, dd, dd)
        if wd != 0:
            for j in range(n):
                dd[j] = dd[j] + ww[j] * wd_
        for j in range(n):
            ww[j] = ww[j] - dd[j] * eta_

@cpu_kernels.kernel(parallel=True)
def _adamw_par(w, g, m, v, eta, wd, beta1, beta2, eps, rescale, clip):
    n = w.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        _adamw(c * CHUNK, min(n, (c + 1) * CHUNK), w, g, m, v, eta, wd, beta1, beta2, eps,
               rescale, clip)


adamw = CpuRule(_adamw, _adamw_par)


# ------------------------------------------------------------------ AdaGrad, RMSProp

@cpu_kernels.kernel()
def _adagrad(lo, hi, w, g, hist, lr, wd, eps, rescale, clip):
    ct = w.dtype.type
    lr_, wd_, ep, rs, cl = ct(lr), ct(wd), ct(eps), ct(rescale), ct(clip)
    t = numpy.empty(BLOCK, w.dtype)
    d = numpy.empty(BLOCK, w.dtype)
    for a in range(lo, hi, BLOCK):
        n = min(BLOCK, hi - a)
        ww, hh, tt, dd = w[a:a + n], hist[a:a + n], t[:n], d[:n]
        _scaled_block(t, g[a:a + n], ww, n, rs, ct(0.0), cl, True)
        for j in range(n):
            hh[j] = hh[j] + tt[j] * tt[j]
        for j in range(n):
            dd[j] = math.sqrt(hh[j] + ep)
        numpy.divide(tt, dd, tt)
        if wd != 0:
            for j in range(n):
                tt[j] = tt[j] + ww[j] * wd_
        for j in range(n):
            ww[j] = ww[j] - tt[j] * lr_

@cpu_kernels.kernel(parallel=True)
def _adagrad_par(w, g, hist, lr, wd, eps, rescale, clip):
    n = w.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        _adagrad(c * CHUNK, min(n, (c + 1) * CHUNK), w, g, hist, lr, wd, eps, rescale, clip)


adagrad = CpuRule(_adagrad, _adagrad_par)


@cpu_kernels.kernel()
def _rmsprop(lo, hi, w, g, sq, lr, wd, gamma1, eps, rescale, clip, clip_weights):
    ct = w.dtype.type
    lr_, wd_, g1, og1, ep = ct(lr), ct(wd), ct(gamma1), ct(1.0 - gamma1), ct(eps)
    rs, cl, cw = ct(rescale), ct(clip), ct(clip_weights)
    t = numpy.empty(BLOCK, w.dtype)
    d = numpy.empty(BLOCK, w.dtype)
    for a in range(lo, hi, BLOCK):
        n = min(BLOCK, hi - a)
        ww, ss, tt, dd = w[a:a + n], sq[a:a + n], t[:n], d[:n]
        _scaled_block(t, g[a:a + n], ww, n, rs, wd_, cl, True)
        for j in range(n):
            ss[j] = ss[j] * g1 + (tt[j] * tt[j]) * og1
        for j in range(n):
            dd[j] = math.sqrt(ss[j] + ep)
        numpy.divide(tt, dd, tt)
        for j in range(n):
            ww[j] = ww[j] - tt[j] * lr_
        _clip_block(ww, n, cw)

@cpu_kernels.kernel(parallel=True)
def _rmsprop_par(w, g, sq, lr, wd, gamma1, eps, rescale, clip, clip_weights):
    n = w.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        _rmsprop(c * CHUNK, min(n, (c + 1) * CHUNK), w, g, sq, lr, wd, gamma1, eps, rescale,
                 clip, clip_weights)


rmsprop = CpuRule(_rmsprop, _rmsprop_par)


@cpu_kernels.kernel()
def _rmspropalex(lo, hi, w, g, sq, gbar, delta, lr, wd, gamma1, gamma2, eps, rescale, clip,
                 clip_weights):
    ct = w.dtype.type
    lr_, wd_, g1, og1, g2 = ct(lr), ct(wd), ct(gamma1), ct(1.0 - gamma1), ct(gamma2)
    ep, rs, cl, cw = ct(eps), ct(rescale), ct(clip), ct(clip_weights)
    t = numpy.empty(BLOCK, w.dtype)
    d = numpy.empty(BLOCK, w.dtype)
    for a in range(lo, hi, BLOCK):
        n = min(BLOCK, hi - a)
        ww, ss, bb, de = w[a:a + n], sq[a:a + n], gbar[a:a + n], delta[a:a + n]
        tt, dd = t[:n], d[:n]
        _scaled_block(t, g[a:a + n], ww, n, rs, wd_, cl, True)
        for j in range(n):
            ss[j] = ss[j] * g1 + (tt[j] * tt[j]) * og1
        for j in range(n):
            bb[j] = bb[j] * g1 + tt[j] * og1
        for j in range(n):
            dd[j] = math.sqrt((ss[j] - bb[j] * bb[j]) + ep)
        numpy.divide(tt, dd, tt)
        for j in range(n):
            de[j] = de[j] * g2 - tt[j] * lr_
        for j in range(n):
            ww[j] = ww[j] + de[j]
        _clip_block(ww, n, cw)

@cpu_kernels.kernel(parallel=True)
def _rmspropalex_par(w, g, sq, gbar, delta, lr, wd, gamma1, gamma2, eps, rescale, clip,
                     clip_weights):
    n = w.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        _rmspropalex(c * CHUNK, min(n, (c + 1) * CHUNK), w, g, sq, gbar, delta, lr, wd,
                     gamma1, gamma2, eps, rescale, clip, clip_weights)


rmspropalex = CpuRule(_rmspropalex, _rmspropalex_par)


# ------------------------------------------------------------------ LAMB
# (scalar loops, not blocked yet: LAMB's two passes are less common than the others)

@cpu_kernels.kernel()
def _lamb_dir(w, m, v, i, wd_, c1, c2, ep):
    """LAMB's direction at element ``i`` (from the updated moments)."""
    d = _div(m[i] * c1, math.sqrt(v[i] * c2) + ep)
    if wd_ != 0:
        d = d + w[i] * wd_
    return d


@cpu_kernels.kernel()
def _lamb1(lo, hi, w, g, m, v, wd, beta1, beta2, eps, c1, c2, rescale, clip):
    """Update the moments; return the float64 sums of squares of the weight and of the
    direction over ``[lo, hi)``."""
    ct = w.dtype.type
    wd_, b1, b2, ep = ct(wd), ct(beta1), ct(beta2), ct(eps)
    o1, o2, c1_, c2_, rs, cl = ct(1.0 - beta1), ct(1.0 - beta2), ct(c1), ct(c2), \
        ct(rescale), ct(clip)
    sw = 0.0
    sd = 0.0
    for i in range(lo, hi):
        t = _grad(g[i], rs, cl)
        m[i] = m[i] * b1 + t * o1
        v[i] = v[i] * b2 + (t * t) * o2
        d = _lamb_dir(w, m, v, i, wd_, c1_, c2_, ep)
        x = w[i]
        sw += float(x) * float(x)
        sd += float(d) * float(d)
    return sw, sd


@cpu_kernels.kernel()
def _lamb2(lo, hi, w, m, v, wd, eps, c1, c2, scale):
    """``w -= scale * direction`` over ``[lo, hi)``."""
    ct = w.dtype.type
    wd_, ep, c1_, c2_, sc = ct(wd), ct(eps), ct(c1), ct(c2), ct(scale)
    for i in range(lo, hi):
        w[i] = w[i] - _lamb_dir(w, m, v, i, wd_, c1_, c2_, ep) * sc


@cpu_kernels.kernel(parallel=True)
def _lamb1_par(w, g, m, v, wd, beta1, beta2, eps, c1, c2, rescale, clip):
    n = w.shape[0]
    sw = 0.0
    sd = 0.0
    for c in prange((n + CHUNK - 1) // CHUNK):
        a, b = _lamb1(c * CHUNK, min(n, (c + 1) * CHUNK), w, g, m, v, wd, beta1, beta2, eps,
                      c1, c2, rescale, clip)
        sw += a
        sd += b
    return sw, sd


@cpu_kernels.kernel(parallel=True)
def _lamb2_par(w, m, v, wd, eps, c1, c2, scale):
    n = w.shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        _lamb2(c * CHUNK, min(n, (c + 1) * CHUNK), w, m, v, wd, eps, c1, c2, scale)


def lamb(w, g, m, v, lr, wd, beta1, beta2, eps, c1, c2, rescale, clip, lower_bound,
         upper_bound) -> None:
    """One LAMB step in two passes (the moments and both norms; then the weight, from the
    direction recomputed): the kernels' version of ``lamb_phase1`` + ``lamb_phase2``.
    The norms are summed in float64 (the twin's in the compute dtype)."""
    n = w.size
    wf, mf, vf = _flat(w), _flat(m), _flat(v)
    gf = _flat(numpy.ascontiguousarray(g))
    par = n >= PARALLEL_MIN and cpu_kernels.num_threads() > 1
    if par:
        sw, sd = _lamb1_par(wf, gf, mf, vf, wd, beta1, beta2, eps, c1, c2, rescale, clip)
    else:
        sw, sd = _lamb1(0, n, wf, gf, mf, vf, wd, beta1, beta2, eps, c1, c2, rescale, clip)
    ct = w.dtype.type
    r1, r2 = float(ct(math.sqrt(sw))), float(ct(math.sqrt(sd)))
    if lower_bound is not None and lower_bound > 0:
        r1 = max(r1, float(ct(lower_bound)))
    if upper_bound is not None and upper_bound > 0:
        r1 = min(r1, float(ct(upper_bound)))
    scale = lr if r1 == 0.0 or r2 == 0.0 else lr * r1 / r2
    if par:
        _lamb2_par(wf, mf, vf, wd, eps, c1, c2, scale)
    else:
        _lamb2(0, n, wf, mf, vf, wd, eps, c1, c2, scale)
