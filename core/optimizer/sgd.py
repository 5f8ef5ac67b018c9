"""Stochastic gradient descent and its relatives: SGD, NAG, Signum, LARS, SGLD, DCASGD.

Each update rule is a function over raw ``xp`` arrays that writes the weight and its
state in place; the fused CuPy kernel that replaces it on GPU is declared right above it
(``core.optimizer._fused``). Everything is computed in float32 (float64 for float64
weights).
"""
from __future__ import annotations

import math

from .. import random as _random
from . import _cpu
from ._fused import CLIP_GRAD, FusedOptimizer, fused, scaled_grad
from .optimizer import array_module, compute_dtype, register, zeros_state

__all__ = ["DCASGD", "LARS", "NAG", "SGD", "SGLD", "Signum", "ccSGD"]


_SGD_KERNEL = (
    "G g, T lr, T wd, T rescale, T clip", "P w",
    "T gr = rescale * (T)g; " + CLIP_GRAD +
    " w = (P)((1 - lr * wd) * (T)w - lr * gr);",
    "kb_sgd_update")


@fused(_SGD_KERNEL, _cpu.sgd)
def sgd_update(w, g, lr, wd, rescale, clip):
    """``w = (1 - lr * wd) * w - lr * clip(rescale * g)``."""
    xp = array_module(w)
    t = scaled_grad(xp, g, rescale, clip, compute_dtype(w.dtype))
    t *= lr
    if wd:
        w *= 1.0 - lr * wd
    w -= t


_SGD_MOM_KERNEL = (
    "G g, T lr, T wd, T momentum, T rescale, T clip", "P w, P mom",
    "T gr = rescale * (T)g; " + CLIP_GRAD +
    " T m = momentum * (T)mom - lr * wd * (T)w - lr * gr;"
    " mom = (P)m; w = (P)((T)w + m);",
    "kb_sgd_mom_update")


@fused(_SGD_MOM_KERNEL, _cpu.sgd_mom)
def sgd_mom_update(w, g, mom, lr, wd, momentum, rescale, clip):
    """``mom = momentum * mom - lr * wd * w - lr * clip(rescale * g); w += mom``."""
    xp = array_module(w)
    ct = compute_dtype(w.dtype)
    t = scaled_grad(xp, g, rescale, clip, ct)
    t *= lr
    if wd:
        t += xp.multiply(w, ct.type(lr * wd), dtype=ct)
    mom *= momentum
    mom -= t
    w += mom


_NAG_MOM_KERNEL = (
    "G g, T lr, T wd, T momentum, T rescale, T clip", "P w, P mom",
    "T gr = rescale * (T)g; " + CLIP_GRAD +
    " gr += wd * (T)w; T m = momentum * (T)mom - lr * gr;"
    " mom = (P)m; w = (P)((T)w + momentum * m - lr * gr);",
    "kb_nag_mom_update")


@fused(_NAG_MOM_KERNEL, _cpu.nag_mom)
def nag_mom_update(w, g, mom, lr, wd, momentum, rescale, clip):
    """Nesterov momentum: ``d = clip(rescale * g) + wd * w; mom = momentum * mom - lr * d;
    w += momentum * mom - lr * d``."""
    xp = array_module(w)
    ct = compute_dtype(w.dtype)
    t = scaled_grad(xp, g, rescale, clip, ct, w, wd, wd_first=False)
    t *= lr
    mom *= momentum
    mom -= t
    t -= xp.multiply(mom, ct.type(momentum), dtype=ct)
    w -= t


_SIGNSGD_KERNEL = (
    "G g, T lr, T wd", "P w",
    ("T gv = (T)g; T s = (gv > 0) - (gv < 0);"
     " w = (P)((1 - lr * wd) * (T)w - lr * s);"),
    "kb_signsgd_update")


@fused(_SIGNSGD_KERNEL)
def signsgd_update(w, g, lr, wd):
    """``w = (1 - lr * wd) * w - lr * sign(g)`` (no rescaling or clipping, as MXNet)."""
    xp = array_module(w)
    if wd:
        w *= 1.0 - lr * wd
    w -= xp.multiply(xp.sign(g), lr, dtype=compute_dtype(w.dtype))


_SIGNUM_KERNEL = (
    "G g, T lr, T wd, T momentum, T rescale, T clip, T wd_lh", "P w, P mom",
    "T gr = rescale * (T)g; " + CLIP_GRAD +
    " T m = momentum * (T)mom - (1 - momentum) * (wd * (T)w + gr); mom = (P)m;"
    " T s = (m > 0) - (m < 0); w = (P)((1 - lr * wd_lh) * (T)w + lr * s);",
    "kb_signum_update")


@fused(_SIGNUM_KERNEL)
def signum_update(w, g, mom, lr, wd, momentum, rescale, clip, wd_lh):
    """``mom = momentum * mom - (1 - momentum) * (wd * w + clip(rescale * g));
    w = (1 - lr * wd_lh) * w + lr * sign(mom)``."""
    xp = array_module(w)
    ct = compute_dtype(w.dtype)
    t = scaled_grad(xp, g, rescale, clip, ct, w, wd, wd_first=False)
    t *= 1.0 - momentum
    mom *= momentum
    mom -= t
    if wd_lh:
        w *= 1.0 - lr * wd_lh
    w += xp.multiply(xp.sign(mom), lr, dtype=ct)


class _Momentum(FusedOptimizer):
    """The base of SGD's relatives: a ``momentum``, and a momentum array as the state
    (None without momentum)."""

    def __init__(self, momentum: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum

    def create_state(self, index, weight):
        return zeros_state(weight) if self.momentum != 0.0 else None


def _sgd_step(opt, w, g, mom, lr, wd, momentum, momentum_rule=sgd_mom_update):
    """Plain SGD without a momentum state, else ``momentum_rule``."""
    if mom is None:
        sgd_update(w, g, lr, wd, opt.rescale_grad, opt._clip())
    else:
        momentum_rule(w, g, mom, lr, wd, momentum, opt.rescale_grad, opt._clip())


@register
class SGD(_Momentum):
    """Stochastic gradient descent with momentum and weight decay.

    Without momentum::

        weight = (1 - lr * wd) * weight - lr * clip(rescale_grad * grad, clip_gradient)

    With momentum (the state)::

        state = momentum * state - lr * (clip(rescale_grad * grad) + wd * weight)
        weight = weight + state

    Args:
        momentum: the momentum (0 keeps no state).
        lazy_update: with a ``row_sparse`` gradient, update only its rows of the weight
            and the momentum (no weight decay elsewhere), as MXNet's lazy kernels; False
            updates every row with the gradient made dense (``core.optimizer._sparse``).
        **kwargs: the arguments of :class:`Optimizer` (``learning_rate``, ``wd``,
            ``rescale_grad``, ``clip_gradient``, ``lr_scheduler``, ``multi_precision``, ...).

    Example:
        >>> from core import nd, optimizer
        >>> opt = optimizer.SGD(learning_rate=0.5)
        >>> w = nd.array([1.0, -1.0])
        >>> opt.update(0, w, nd.array([0.2, 0.2]), opt.create_state(0, w))
        >>> w.asnumpy().tolist()
        [0.9, -1.1]
    """

    _state_first = True

    def __init__(self, momentum: float = 0.0, lazy_update: bool = True, **kwargs):
        super().__init__(momentum, **kwargs)
        self.lazy_update = lazy_update

    @property
    def _sparse_lazy(self) -> bool:
        return bool(self.lazy_update)

    def _step(self, index, ctx, w, g, mom, lr, wd):
        _sgd_step(self, w, g, mom, lr, wd, self.momentum)


@register
class ccSGD(SGD):
    """Deprecated in MXNet: the same as :class:`SGD`."""


@register
class NAG(_Momentum):
    """Nesterov accelerated gradient.

    ::

        d = clip(rescale_grad * grad, clip_gradient) + wd * weight
        state = momentum * state - lr * d
        weight = weight + momentum * state - lr * d

    MXNet 1.9's fused kernel read ``weight`` after overwriting it for the ``wd`` term
    of the state; this is the corrected rule (as MXNet 2.0).

    Args:
        momentum: the momentum (0 makes it plain SGD).
        **kwargs: the arguments of :class:`Optimizer`.

    Example:
        >>> from core import nd, optimizer
        >>> opt = optimizer.NAG(learning_rate=0.1, momentum=0.9)
        >>> w = nd.array([1.0])
        >>> opt.update(0, w, nd.array([1.0]), opt.create_state(0, w))
        >>> round(w.item(), 6)
        0.81
    """

    _state_first = True

    def _step(self, index, ctx, w, g, mom, lr, wd):
        _sgd_step(self, w, g, mom, lr, wd, self.momentum, nag_mom_update)


@register
class Signum(_Momentum):
    """signSGD and Signum: steps of size ``lr`` in the direction of the sign of the
    gradient (``momentum=0``) or of its momentum.

    ::

        state = momentum * state - (1 - momentum) * (clip(rescale_grad * grad) + wd * weight)
        weight = (1 - lr * wd_lh) * weight + lr * sign(state)

    Without momentum: ``weight = (1 - lr * wd) * weight - lr * sign(grad)``.

    Args:
        learning_rate: the step size.
        momentum: the momentum (0 gives signSGD).
        wd_lh: decoupled weight decay (Loshchilov and Hutter).
        **kwargs: the arguments of :class:`Optimizer`.
    """

    def __init__(self, learning_rate: float = 0.01, momentum: float = 0.9,
                 wd_lh: float = 0.0, **kwargs):
        super().__init__(momentum, learning_rate=learning_rate, **kwargs)
        self.wd_lh = wd_lh

    def _step(self, index, ctx, w, g, mom, lr, wd):
        if mom is None:
            signsgd_update(w, g, lr, wd)
        else:
            signum_update(w, g, mom, lr, wd, self.momentum, self.rescale_grad, self._clip(),
                          self.wd_lh)


@register
class LARS(_Momentum):
    """Layer-wise adaptive rate scaling (You et al., 2017) on top of SGD with momentum.

    Every weight whose name (``param_idx2name``) does not end in ``gamma``, ``beta`` or
    ``bias`` gets the learning rate
    ``lr * eta * |w| / (|rescale_grad * g| + wd * |w| + eps)`` when both norms are
    positive. With ``momentum_correction`` the momentum is scaled by the ratio of the
    current to the previous learning rate. Only names ending in ``_weight`` get weight
    decay when names are given.

    Args:
        momentum: the momentum.
        lazy_update: accepted for MXNet compatibility.
        eta: the LARS coefficient.
        eps: added to the denominator.
        momentum_correction: scale the momentum when the learning rate changes.
        **kwargs: the arguments of :class:`Optimizer`.
    """

    _state_first = True
    _decayed_suffixes = ("_weight",)

    def __init__(self, momentum: float = 0.0, lazy_update: bool = True, eta: float = 0.001,
                 eps: float = 0, momentum_correction: bool = True, **kwargs):
        super().__init__(momentum, **kwargs)
        self.momentum_correction = momentum_correction
        self.lazy_update = lazy_update
        self.eta = eta
        self.eps = eps
        self.skip = 0
        self.last_lr = None
        self.cur_lr = None

    def _get_lrs(self, indices):
        if self.cur_lr is not None:
            self.last_lr = self.cur_lr
        lr = self.learning_rate
        if self.cur_lr is None:
            self.last_lr = lr
        self.cur_lr = lr
        return super()._get_lrs(indices)

    def _get_lars(self, index, w, g, lr, wd):
        name = self.idx2name.get(index, str(index))
        if name.endswith(("gamma", "beta", "bias")):
            return lr
        xp = array_module(w)
        w_norm = float(xp.linalg.norm(w.astype("float32").ravel()))
        g_norm = float(xp.linalg.norm(g.astype("float32").ravel() * self.rescale_grad))
        if w_norm > 0.0 and g_norm > 0.0:
            return lr * self.eta * w_norm / (g_norm + wd * w_norm + self.eps)
        return lr

    def _step(self, index, ctx, w, g, mom, lr, wd):
        lr = self._get_lars(index, w, g, lr, wd)
        momentum = self.momentum
        if momentum > 0 and self.momentum_correction and self.last_lr != 0:
            momentum = self.momentum * (self.cur_lr / self.last_lr)
        _sgd_step(self, w, g, mom, lr, wd, momentum)


@register
class SGLD(FusedOptimizer):
    """Stochastic gradient Langevin dynamics: half an SGD step plus Gaussian noise of
    variance ``lr``, drawn from the weight's context's generator (``core.random``).

    ::

        weight += -lr / 2 * (clip(rescale_grad * grad) + wd * weight) + normal(0, sqrt(lr))
    """

    def _step(self, index, ctx, w, g, state, lr, wd):
        xp = array_module(w)
        ct = compute_dtype(w.dtype)
        t = scaled_grad(xp, g, self.rescale_grad, self._clip(), ct, w, wd, wd_first=False)
        t *= -lr / 2
        noise = _random.get_generator(ctx).standard_normal(size=w.shape, dtype=ct)
        noise *= math.sqrt(lr)
        t += noise
        w += t


@register
class DCASGD(_Momentum):
    """Delay-compensated asynchronous SGD (Zheng et al., 2016).

    ::

        d = -lr * (g + wd * weight + lamda * g * g * (weight - previous_weight))
        state = momentum * state + d   (or state = d without momentum)
        previous_weight = weight; weight += state

    with ``g = clip(rescale_grad * grad)``. The state is ``(momentum or None,
    previous_weight)``.

    Args:
        momentum: the momentum.
        lamda: the delay-compensation strength.
        **kwargs: the arguments of :class:`Optimizer`.
    """

    def __init__(self, momentum: float = 0.0, lamda: float = 0.04, **kwargs):
        super().__init__(momentum, **kwargs)
        self.weight_previous: dict = {}
        self.lamda = lamda

    def create_state(self, index, weight):
        prev = zeros_state(weight)
        prev._data[...] = weight._data
        return (super().create_state(index, weight), prev)

    def _step(self, index, ctx, w, g, state, lr, wd):
        xp = array_module(w)
        ct = compute_dtype(w.dtype)
        mom, prev = state
        gr = scaled_grad(xp, g, self.rescale_grad, self._clip(), ct)
        d = xp.subtract(w, prev, dtype=ct)
        d *= gr
        d *= gr
        d *= self.lamda
        d += gr
        if wd:
            d += xp.multiply(w, ct.type(wd), dtype=ct)
        d *= -lr
        if mom is not None:
            mom *= self.momentum
            mom += d
            d = mom
        prev[...] = w
        w += d
