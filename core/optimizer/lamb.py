"""LAMB: layer-wise adaptive moments for large-batch training (You et al., 2019).

Phase one is a fused element-wise rule (the Adam direction plus weight decay), phase two
scales the step by the trust ratio ``|w| / |direction|``; the norms stay on the device.
On the CPU, compiled kernels (``core.optimizer._cpu.lamb``) do both phases in two passes.
"""
from __future__ import annotations

import numpy

from . import _cpu
from ._fused import CLIP_GRAD, launch, scaled_grad
from .adam import AdamBase, update_moments
from .optimizer import array_module, compute_dtype, register, use_kernel

__all__ = ["LAMB"]


def lamb_phase1(w, g, m, v, wd, beta1, beta2, eps, c1, c2, rescale, clip):
    """Update the moments of ``d = clip(rescale * g)`` and return the direction
    ``c1 * m / (sqrt(c2 * v) + eps) + wd * w`` (``c1``, ``c2``: bias corrections)."""
    xp = array_module(w)
    ct = compute_dtype(w.dtype)
    if use_kernel(w):
        upd = xp.empty(w.shape, ct)
        launch(_LAMB_PHASE1_KERNEL, w, (w, g), (wd, beta1, beta2, eps, c1, c2, rescale, clip),
               (m, v, upd))
        return upd
    t = scaled_grad(xp, g, rescale, clip, ct)
    update_moments(xp, t, m, v, beta1, beta2)
    xp.multiply(v, ct.type(c2), out=t)
    xp.sqrt(t, out=t)
    t += eps
    upd = xp.multiply(m, ct.type(c1), dtype=ct)
    upd /= t
    if wd:
        upd += xp.multiply(w, ct.type(wd), dtype=ct)
    return upd


_LAMB_PHASE1_KERNEL = (
    "P w, G g, T wd, T beta1, T beta2, T eps, T c1, T c2, T rescale, T clip", "P m, P v, T upd",
    "T gr = rescale * (T)g; " + CLIP_GRAD +
    " T mm = beta1 * (T)m + (1 - beta1) * gr; T vv = beta2 * (T)v + (1 - beta2) * gr * gr;"
    " m = (P)mm; v = (P)vv; upd = c1 * mm / (sqrt(c2 * vv) + eps) + wd * (T)w;",
    "kb_lamb_phase1")


def lamb_phase2(w, upd, lr, lower_bound, upper_bound):
    """``w -= lr * r1 / r2 * upd`` with ``r1 = |w|`` (bounded), ``r2 = |upd|``; the
    ratio is 1 when either norm is 0. Bounds <= 0 (or None) are not applied."""
    xp = array_module(w)
    ct = compute_dtype(w.dtype)
    r1 = xp.linalg.norm(w.astype(ct, copy=False).ravel())
    r2 = xp.linalg.norm(upd.ravel())
    if lower_bound is not None and lower_bound > 0:
        r1 = xp.maximum(r1, ct.type(lower_bound))
    if upper_bound is not None and upper_bound > 0:
        r1 = xp.minimum(r1, ct.type(upper_bound))
    if xp is numpy:
        r1, r2 = float(r1), float(r2)
        scale = lr if r1 == 0.0 or r2 == 0.0 else lr * r1 / r2
    else:  # stay on the device: no synchronization
        ok = (r1 != 0) & (r2 != 0)
        scale = xp.where(ok, r1 / xp.where(ok, r2, 1), 1).astype(ct) * ct.type(lr)
    upd *= scale
    w -= upd


@register
class LAMB(AdamBase):
    """LAMB: Adam's direction with a per-layer trust ratio.

    At step ``t`` of a weight::

        g = clip(rescale_grad * grad, clip_gradient)
        m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
        m_hat = m / (1 - beta1 ** t);  v_hat = v / (1 - beta2 ** t)   (bias_correction)
        d = m_hat / (sqrt(v_hat) + epsilon) + wd * weight
        r1 = clip(norm(weight), lower_bound, upper_bound);  r2 = norm(d)
        weight = weight - lr * (r1 / r2 if r1 > 0 and r2 > 0 else 1) * d

    The state is ``(m, v)``.

    Args:
        learning_rate: the step size.
        beta1: decay of the first moment.
        beta2: decay of the second moment.
        epsilon: added to ``sqrt(v_hat)``.
        lower_bound: lower bound of the weight norm (None: none).
        upper_bound: upper bound of the weight norm (None: none).
        bias_correction: apply Adam's bias correction.
        **kwargs: the arguments of :class:`Optimizer`.
    """

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-6, lower_bound: float | None = None,
                 upper_bound: float | None = None, bias_correction: bool = True, **kwargs):
        super().__init__(learning_rate, beta1, beta2, **kwargs)
        self.epsilon = epsilon
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bias_correction

    def _step(self, index, ctx, w, g, state, lr, wd):
        t = self._index_update_count[index]
        c1 = 1.0 / (1.0 - self.beta1 ** t) if self.bias_correction else 1.0
        c2 = 1.0 / (1.0 - self.beta2 ** t) if self.bias_correction else 1.0
        m, v = state
        if _cpu.takes(w, g, (m, v), exact=False):
            _cpu.lamb(w, g, m, v, lr, wd, self.beta1, self.beta2, self.epsilon, c1, c2,
                      self.rescale_grad, self._clip(), self.lower_bound, self.upper_bound)
            return
        upd = lamb_phase1(w, g, m, v, wd, self.beta1, self.beta2, self.epsilon, c1, c2,
                          self.rescale_grad, self._clip())
        lamb_phase2(w, upd, lr, self.lower_bound, self.upper_bound)
