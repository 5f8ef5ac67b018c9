"""The Adam family: Adam, AdamW, Adamax, Nadam.

Each update rule is a function over raw ``xp`` arrays that writes the weight and its
moment estimates in place; the fused CuPy kernel that replaces it on GPU is declared
right above it (``core.optimizer._fused``). Everything is computed in float32 (float64
for float64 weights).
"""
from __future__ import annotations

import math

from . import _cpu
from ._fused import CLIP_GRAD, FusedOptimizer, fused, scaled_grad
from .optimizer import array_module, compute_dtype, register, zeros_state

__all__ = ["Adam", "AdamW", "Adamax", "Nadam"]


def update_moments(xp, t, m, v, beta1, beta2):
    """``m = beta1 * m + (1 - beta1) * t; v = beta2 * v + (1 - beta2) * t * t``; ``t`` is
    overwritten."""
    m *= beta1
    m += t * (1.0 - beta1)
    t *= t
    t *= 1.0 - beta2
    v *= beta2
    v += t


_ADAM_KERNEL = (
    "G g, T lr, T wd, T beta1, T beta2, T eps, T rescale, T clip", "P w, P m, P v",
    "T gr = rescale * (T)g + wd * (T)w; " + CLIP_GRAD +
    " T mm = beta1 * (T)m + (1 - beta1) * gr; T vv = beta2 * (T)v + (1 - beta2) * gr * gr;"
    " m = (P)mm; v = (P)vv; w = (P)((T)w - lr * mm / (sqrt(vv) + eps));",
    "kb_adam_update")


@fused(_ADAM_KERNEL, _cpu.adam)
def adam_update(w, g, m, v, lr, wd, beta1, beta2, eps, rescale, clip):
    """``d = clip(rescale * g + wd * w)``; moments of ``d``;
    ``w -= lr * m / (sqrt(v) + eps)`` (``lr`` carries the bias correction)."""
    xp = array_module(w)
    t = scaled_grad(xp, g, rescale, clip, compute_dtype(w.dtype), w, wd)
    update_moments(xp, t, m, v, beta1, beta2)
    xp.sqrt(v, out=t)
    t += eps
    xp.divide(m, t, out=t)
    t *= lr
    w -= t


_ADAMW_KERNEL = (
    "G g, T eta, T wd, T beta1, T beta2, T eps, T rescale, T clip", "P w, P m, P v",
    "T gr = rescale * (T)g; " + CLIP_GRAD +
    " T mm = beta1 * (T)m + (1 - beta1) * gr; T vv = beta2 * (T)v + (1 - beta2) * gr * gr;"
    " m = (P)mm; v = (P)vv; w = (P)((T)w - eta * (mm / (sqrt(vv) + eps) + wd * (T)w));",
    "kb_adamw_update")


@fused(_ADAMW_KERNEL, _cpu.adamw)
def adamw_update(w, g, m, v, eta, wd, beta1, beta2, eps, rescale, clip):
    """``d = clip(rescale * g)``; moments of ``d``;
    ``w -= eta * (m / (sqrt(v) + eps) + wd * w)``."""
    xp = array_module(w)
    ct = compute_dtype(w.dtype)
    t = scaled_grad(xp, g, rescale, clip, ct)
    update_moments(xp, t, m, v, beta1, beta2)
    xp.sqrt(v, out=t)
    t += eps
    xp.divide(m, t, out=t)
    if wd:
        t += xp.multiply(w, ct.type(wd), dtype=ct)
    t *= eta
    w -= t


_ADAMAX_KERNEL = (
    "G g, T lr, T wd, T beta1, T beta2, T rescale, T clip", "P w, P m, P u",
    "T gr = rescale * (T)g + wd * (T)w; " + CLIP_GRAD +
    " T mm = beta1 * (T)m + (1 - beta1) * gr; T uu = beta2 * (T)u; T ag = fabs(gr);"
    " uu = uu > ag ? uu : ag; m = (P)mm; u = (P)uu; w = (P)((T)w - lr * mm / uu);",
    "kb_adamax_update")


@fused(_ADAMAX_KERNEL)
def adamax_update(w, g, m, u, lr, wd, beta1, beta2, rescale, clip):
    """``d = clip(rescale * g + wd * w); m = beta1 * m + (1 - beta1) * d;
    u = max(beta2 * u, |d|); w -= lr * m / u``."""
    xp = array_module(w)
    t = scaled_grad(xp, g, rescale, clip, compute_dtype(w.dtype), w, wd)
    m *= beta1
    m += t * (1.0 - beta1)
    u *= beta2
    xp.abs(t, out=t)
    xp.maximum(u, t, out=u)
    xp.divide(m, u, out=t)
    t *= lr
    w -= t


_NADAM_KERNEL = (
    "G g, T lr, T wd, T beta1, T beta2, T eps, T rescale, T clip, T cg, T cm, T cv",
    "P w, P m, P v",
    "T gr = rescale * (T)g + wd * (T)w; " + CLIP_GRAD +
    " T mm = beta1 * (T)m + (1 - beta1) * gr; T vv = beta2 * (T)v + (1 - beta2) * gr * gr;"
    " m = (P)mm; v = (P)vv;"
    " w = (P)((T)w - lr * (cg * gr + cm * mm) / (sqrt(cv * vv) + eps));",
    "kb_nadam_update")


@fused(_NADAM_KERNEL)
def nadam_update(w, g, m, v, lr, wd, beta1, beta2, eps, rescale, clip, cg, cm, cv):
    """``d = clip(rescale * g + wd * w)``; moments of ``d``;
    ``w -= lr * (cg * d + cm * m) / (sqrt(cv * v) + eps)``."""
    xp = array_module(w)
    t = scaled_grad(xp, g, rescale, clip, compute_dtype(w.dtype), w, wd)
    bar = t * cg
    update_moments(xp, t, m, v, beta1, beta2)
    bar += m * cm
    xp.multiply(v, cv, out=t)
    xp.sqrt(t, out=t)
    t += eps
    xp.divide(bar, t, out=t)
    t *= lr
    w -= t


class AdamBase(FusedOptimizer):
    """The base of the Adam family (and LAMB): the decays ``beta1`` and ``beta2`` of two
    moment estimates, and the state ``(m, v)``."""

    def __init__(self, learning_rate: float, beta1: float, beta2: float, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2

    def create_state(self, index, weight):
        return (zeros_state(weight), zeros_state(weight))

    def _bias_corrected(self, lr: float, index) -> float:
        """``lr * sqrt(1 - beta2 ** t) / (1 - beta1 ** t)`` at update ``t`` of ``index``."""
        t = self._index_update_count[index]
        return lr * (math.sqrt(1.0 - self.beta2 ** t) / (1.0 - self.beta1 ** t))


@register
class Adam(AdamBase):
    """Adam (Kingma and Ba), with MXNet 1.x's bias correction folded into the rate.

    At step ``t`` of a weight::

        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        lr_t = learning_rate * sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
        weight = weight - lr_t * m / (sqrt(v) + epsilon)

    Note that ``wd`` is added to the gradient (L2 regularization); see :class:`AdamW`
    for decoupled weight decay. The state is ``(m, v)``.

    Args:
        learning_rate: the step size.
        beta1: decay of the first moment.
        beta2: decay of the second moment.
        epsilon: added to ``sqrt(v)``.
        lazy_update: with a ``row_sparse`` gradient, update only its rows of the weight
            and the moments, as MXNet's lazy kernel; False updates every row with the
            gradient made dense (``core.optimizer._sparse``).
        **kwargs: the arguments of :class:`Optimizer`.

    Example:
        >>> from core import nd, optimizer
        >>> opt = optimizer.Adam(learning_rate=0.1)
        >>> w = nd.array([1.0, 1.0])
        >>> opt.update(0, w, nd.array([3.0, -0.5]), opt.create_state(0, w))
        >>> [round(x, 4) for x in w.asnumpy().tolist()]
        [0.9, 1.1]
    """

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9,
                 beta2: float = 0.999, epsilon: float = 1e-8, lazy_update: bool = True,
                 **kwargs):
        super().__init__(learning_rate, beta1, beta2, **kwargs)
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    @property
    def _sparse_lazy(self) -> bool:
        return bool(self.lazy_update)

    def _step(self, index, ctx, w, g, state, lr, wd):
        m, v = state
        adam_update(w, g, m, v, self._bias_corrected(lr, index), wd, self.beta1, self.beta2,
                    self.epsilon, self.rescale_grad, self._clip())


@register
class AdamW(AdamBase):
    """AdamW: Adam with decoupled weight decay (Loshchilov and Hutter), as MXNet 2.0's.

    At step ``t`` of a weight::

        g = clip(rescale_grad * grad, clip_gradient)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        eta = learning_rate * sqrt(1 - beta2 ** t) / (1 - beta1 ** t)   (correct_bias)
        weight = weight - eta * (m / (sqrt(v) + epsilon) + wd * weight)

    The state is ``(m, v)``.

    Args:
        learning_rate: the step size.
        beta1: decay of the first moment.
        beta2: decay of the second moment.
        epsilon: added to ``sqrt(v)``.
        correct_bias: fold Adam's bias correction into the step size (False, as in
            BERT's original code, uses ``eta = learning_rate``).
        **kwargs: the arguments of :class:`Optimizer` (``use_fused_step`` of MXNet 2.0
            is accepted and ignored: updates are always fused).
    """

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9,
                 beta2: float = 0.999, epsilon: float = 1e-6, correct_bias: bool = True,
                 **kwargs):
        kwargs.pop("use_fused_step", None)
        super().__init__(learning_rate, beta1, beta2, **kwargs)
        self.epsilon = epsilon
        self.correct_bias = correct_bias

    def _step(self, index, ctx, w, g, state, lr, wd):
        if self.correct_bias:
            lr = self._bias_corrected(lr, index)
        m, v = state
        adamw_update(w, g, m, v, lr, wd, self.beta1, self.beta2, self.epsilon,
                     self.rescale_grad, self._clip())


@register
class Adamax(AdamBase):
    """AdaMax, Adam's variant on the infinity norm (Kingma and Ba, section 7).

    At step ``t`` of a weight::

        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        m = beta1 * m + (1 - beta1) * g
        u = maximum(beta2 * u, abs(g))
        weight = weight - learning_rate / (1 - beta1 ** t) * m / u

    The state is ``(m, u)``.

    Args:
        learning_rate: the step size.
        beta1: decay of the first moment.
        beta2: decay of the infinity norm.
        **kwargs: the arguments of :class:`Optimizer`.
    """

    def __init__(self, learning_rate: float = 0.002, beta1: float = 0.9,
                 beta2: float = 0.999, **kwargs):
        super().__init__(learning_rate, beta1, beta2, **kwargs)

    def _step(self, index, ctx, w, g, state, lr, wd):
        lr /= 1.0 - self.beta1 ** self._index_update_count[index]
        m, u = state
        adamax_update(w, g, m, u, lr, wd, self.beta1, self.beta2, self.rescale_grad,
                      self._clip())


@register
class Nadam(AdamBase):
    """Nadam: Adam with Nesterov momentum (Dozat), with a warming momentum schedule.

    At step ``t`` of a weight::

        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * schedule_decay))
        mu_next = beta1 * (1 - 0.5 * 0.96 ** ((t + 1) * schedule_decay))
        m_schedule = m_schedule * mu_t
        m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
        m_bar = (1 - mu_t) * g / (1 - m_schedule) + mu_next * m / (1 - m_schedule * mu_next)
        weight = weight - lr * m_bar / (sqrt(v / (1 - beta2 ** t)) + epsilon)

    As in MXNet, ``m_schedule`` is one number for the optimizer, multiplied at every
    update of any weight. The state is ``(m, v)``.

    Args:
        learning_rate: the step size.
        beta1: decay of the first moment.
        beta2: decay of the second moment.
        epsilon: added to the denominator.
        schedule_decay: decay of the momentum schedule.
        **kwargs: the arguments of :class:`Optimizer`.
    """

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9,
                 beta2: float = 0.999, epsilon: float = 1e-8, schedule_decay: float = 0.004,
                 **kwargs):
        super().__init__(learning_rate, beta1, beta2, **kwargs)
        self.epsilon = epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.0

    def _step(self, index, ctx, w, g, state, lr, wd):
        t = self._index_update_count[index]
        mu_t = self.beta1 * (1.0 - 0.5 * 0.96 ** (t * self.schedule_decay))
        mu_next = self.beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * self.schedule_decay))
        self.m_schedule = self.m_schedule * mu_t
        m_schedule_next = self.m_schedule * mu_next
        cg = (1.0 - mu_t) / (1.0 - self.m_schedule)
        cm = mu_next / (1.0 - m_schedule_next)
        cv = 1.0 / (1.0 - self.beta2 ** t)
        m, v = state
        nadam_update(w, g, m, v, lr, wd, self.beta1, self.beta2, self.epsilon,
                     self.rescale_grad, self._clip(), cg, cm, cv)
