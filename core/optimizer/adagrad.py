"""Per-coordinate adaptive rates from accumulated squared gradients: AdaGrad, AdaDelta,
RMSProp (Tieleman and Hinton's, and Graves' centered version).

Each update rule is a function over raw ``xp`` arrays that writes the weight and its
accumulators in place; the fused CuPy kernel that replaces it on GPU is declared right
above it (``core.optimizer._fused``). Everything is computed in float32 (float64 for
float64 weights).
"""
from __future__ import annotations

from . import _cpu
from ._fused import CLIP_GRAD, FusedOptimizer, fused, scaled_grad
from .optimizer import array_module, bound, compute_dtype, register, zeros_state

__all__ = ["AdaDelta", "AdaGrad", "RMSProp"]

# Clip a weight in CUDA (bound < 0: no clipping). Kernel parameters avoid CuPy's reserved
# names (``i``, ``n`` and names starting with ``_``).
_CLIP_WEIGHT = ("if (clip_weights >= 0) { ww = ww > clip_weights ? clip_weights :"
                " (ww < -clip_weights ? -clip_weights : ww); }")


_ADAGRAD_KERNEL = (
    "G g, T lr, T wd, T eps, T rescale, T clip", "P w, P hist",
    "T gr = rescale * (T)g; " + CLIP_GRAD +
    " T hh = (T)hist + gr * gr; hist = (P)hh;"
    " w = (P)((T)w - lr * (gr / sqrt(hh + eps) + wd * (T)w));",
    "kb_adagrad_update")


@fused(_ADAGRAD_KERNEL, _cpu.adagrad)
def adagrad_update(w, g, hist, lr, wd, eps, rescale, clip):
    """``d = clip(rescale * g); hist += d * d; w -= lr * (d / sqrt(hist + eps) + wd * w)``."""
    xp = array_module(w)
    ct = compute_dtype(w.dtype)
    t = scaled_grad(xp, g, rescale, clip, ct)
    hist += t * t
    den = xp.add(hist, ct.type(eps), dtype=ct)
    xp.sqrt(den, out=den)
    t /= den
    if wd:
        t += xp.multiply(w, ct.type(wd), dtype=ct)
    t *= lr
    w -= t


_ADADELTA_KERNEL = (
    "G g, T wd, T rho, T eps, T rescale, T clip", "P w, P acc_g, P acc_delta",
    "T gr = rescale * (T)g; " + CLIP_GRAD +
    " T ag = rho * (T)acc_g + (1 - rho) * gr * gr;"
    " T d = sqrt((T)acc_delta + eps) / sqrt(ag + eps) * gr;"
    " T ad = rho * (T)acc_delta + (1 - rho) * d * d;"
    " acc_g = (P)ag; acc_delta = (P)ad; w = (P)((T)w - d - wd * (T)w);",
    "kb_adadelta_update")


@fused(_ADADELTA_KERNEL)
def adadelta_update(w, g, acc_g, acc_delta, wd, rho, eps, rescale, clip):
    """``d = clip(rescale * g); acc_g = rho * acc_g + (1 - rho) * d * d;
    delta = sqrt(acc_delta + eps) / sqrt(acc_g + eps) * d;
    acc_delta = rho * acc_delta + (1 - rho) * delta * delta; w -= delta + wd * w``."""
    xp = array_module(w)
    ct = compute_dtype(w.dtype)
    t = scaled_grad(xp, g, rescale, clip, ct)
    acc_g *= rho
    acc_g += t * t * (1.0 - rho)
    num = xp.add(acc_delta, ct.type(eps), dtype=ct)
    xp.sqrt(num, out=num)
    den = xp.add(acc_g, ct.type(eps), dtype=ct)
    xp.sqrt(den, out=den)
    num /= den
    num *= t  # delta
    acc_delta *= rho
    acc_delta += num * num * (1.0 - rho)
    if wd:
        num += xp.multiply(w, ct.type(wd), dtype=ct)
    w -= num


_RMSPROP_KERNEL = (
    "G g, T lr, T wd, T gamma1, T eps, T rescale, T clip, T clip_weights", "P w, P sq",
    "T gr = rescale * (T)g + wd * (T)w; " + CLIP_GRAD +
    " T nn = (1 - gamma1) * gr * gr + gamma1 * (T)sq; sq = (P)nn;"
    " T ww = (T)w - lr * gr / sqrt(nn + eps); " + _CLIP_WEIGHT + " w = (P)ww;",
    "kb_rmsprop_update")


@fused(_RMSPROP_KERNEL, _cpu.rmsprop)
def rmsprop_update(w, g, sq, lr, wd, gamma1, eps, rescale, clip, clip_weights):
    """``d = clip(rescale * g + wd * w); sq = (1 - gamma1) * d * d + gamma1 * sq;
    w = clip_w(w - lr * d / sqrt(sq + eps))``."""
    xp = array_module(w)
    ct = compute_dtype(w.dtype)
    t = scaled_grad(xp, g, rescale, clip, ct, w, wd)
    sq *= gamma1
    sq += t * t * (1.0 - gamma1)
    den = xp.add(sq, ct.type(eps), dtype=ct)
    xp.sqrt(den, out=den)
    t /= den
    t *= lr
    w -= t
    if clip_weights >= 0:
        xp.clip(w, -clip_weights, clip_weights, out=w)


_RMSPROPALEX_KERNEL = (
    "G g, T lr, T wd, T gamma1, T gamma2, T eps, T rescale, T clip, T clip_weights",
    "P w, P sq, P gbar, P delta",
    "T gr = rescale * (T)g + wd * (T)w; " + CLIP_GRAD +
    " T nn = (1 - gamma1) * gr * gr + gamma1 * (T)sq;"
    " T gb = (1 - gamma1) * gr + gamma1 * (T)gbar;"
    " T dd = gamma2 * (T)delta - lr * gr / sqrt(nn - gb * gb + eps);"
    " sq = (P)nn; gbar = (P)gb; delta = (P)dd;"
    " T ww = (T)w + dd; " + _CLIP_WEIGHT + " w = (P)ww;",
    "kb_rmspropalex_update")


@fused(_RMSPROPALEX_KERNEL, _cpu.rmspropalex)
def rmspropalex_update(w, g, sq, gbar, delta, lr, wd, gamma1, gamma2, eps, rescale, clip,
                       clip_weights):
    """Centered RMSProp (Graves): ``d = clip(rescale * g + wd * w);
    sq = (1 - gamma1) * d * d + gamma1 * sq; gbar = (1 - gamma1) * d + gamma1 * gbar;
    delta = gamma2 * delta - lr * d / sqrt(sq - gbar * gbar + eps); w = clip_w(w + delta)``."""
    xp = array_module(w)
    ct = compute_dtype(w.dtype)
    t = scaled_grad(xp, g, rescale, clip, ct, w, wd)
    sq *= gamma1
    sq += t * t * (1.0 - gamma1)
    gbar *= gamma1
    gbar += t * (1.0 - gamma1)
    den = xp.multiply(gbar, gbar, dtype=ct)
    xp.subtract(sq, den, out=den)
    den += eps
    xp.sqrt(den, out=den)
    t /= den
    t *= lr
    delta *= gamma2
    delta -= t
    w += delta
    if clip_weights >= 0:
        xp.clip(w, -clip_weights, clip_weights, out=w)


@register
class AdaGrad(FusedOptimizer):
    """AdaGrad (Duchi et al.): per-coordinate rates from the sum of squared gradients.

    ::

        g = clip(rescale_grad * grad, clip_gradient)
        history += g * g
        weight -= lr * (g / sqrt(history + eps) + wd * weight)

    The state is ``history``. With a ``row_sparse`` gradient only its rows change, as
    MXNet's sparse kernel (which takes no weight decay: ``wd`` must be 0 then).

    Args:
        eps: added to the history under the square root.
        **kwargs: the arguments of :class:`Optimizer`.

    Example:
        >>> from core import nd, optimizer
        >>> opt = optimizer.AdaGrad(learning_rate=0.1, eps=0.0)
        >>> w = nd.array([1.0])
        >>> opt.update(0, w, nd.array([4.0]), opt.create_state(0, w))
        >>> round(w.item(), 6)
        0.9
    """

    _sparse_lazy = True
    _sparse_takes_wd = False

    def __init__(self, eps: float = 1e-7, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        return zeros_state(weight)

    def _step(self, index, ctx, w, g, hist, lr, wd):
        adagrad_update(w, g, hist, lr, wd, self.float_stable_eps, self.rescale_grad,
                       self._clip())


@register
class AdaDelta(FusedOptimizer):
    """AdaDelta (Zeiler): no learning rate, step sizes from running averages.

    ::

        g = clip(rescale_grad * grad, clip_gradient)
        acc_g = rho * acc_g + (1 - rho) * g * g
        delta = sqrt(acc_delta + epsilon) / sqrt(acc_g + epsilon) * g
        acc_delta = rho * acc_delta + (1 - rho) * delta * delta
        weight -= delta + wd * weight

    The learning rate is not used (as in MXNet). The state is ``(acc_g, acc_delta)``.

    Args:
        rho: decay of both running averages.
        epsilon: added under both square roots.
        **kwargs: the arguments of :class:`Optimizer`.
    """

    _uses_lr = False

    def __init__(self, rho: float = 0.90, epsilon: float = 1e-5, **kwargs):
        super().__init__(**kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return (zeros_state(weight), zeros_state(weight))

    def _step(self, index, ctx, w, g, state, lr, wd):
        acc_g, acc_delta = state
        adadelta_update(w, g, acc_g, acc_delta, wd, self.rho, self.epsilon, self.rescale_grad,
                        self._clip())


@register
class RMSProp(FusedOptimizer):
    """RMSProp: Tieleman and Hinton's (``centered=False``) or Graves' centered version.

    Not centered (state ``(n,)``)::

        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        n = (1 - gamma1) * g * g + gamma1 * n
        weight = weight - lr * g / sqrt(n + epsilon)

    Centered (state ``(n, gbar, delta)``)::

        n = (1 - gamma1) * g * g + gamma1 * n
        gbar = (1 - gamma1) * g + gamma1 * gbar
        delta = gamma2 * delta - lr * g / sqrt(n - gbar * gbar + epsilon)
        weight = weight + delta

    Args:
        learning_rate: the step size.
        gamma1: decay of the moving averages.
        gamma2: the momentum of the centered version.
        epsilon: added under the square root.
        centered: use Graves' centered version.
        clip_weights: clip the weights to ``[-clip_weights, clip_weights]`` after each
            update (None or a value <= 0: no clipping).
        **kwargs: the arguments of :class:`Optimizer`.
    """

    def __init__(self, learning_rate: float = 0.001, gamma1: float = 0.9, gamma2: float = 0.9,
                 epsilon: float = 1e-8, centered: bool = False,
                 clip_weights: float | None = None, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.centered = centered
        self.epsilon = epsilon
        self.clip_weights = clip_weights

    def create_state(self, index, weight):
        if self.centered:
            return (zeros_state(weight), zeros_state(weight), zeros_state(weight))
        return (zeros_state(weight),)

    def _step(self, index, ctx, w, g, state, lr, wd):
        cw = bound(self.clip_weights)
        if self.centered:
            sq, gbar, delta = state
            rmspropalex_update(w, g, sq, gbar, delta, lr, wd, self.gamma1, self.gamma2,
                               self.epsilon, self.rescale_grad, self._clip(), cw)
        else:
            (sq,) = state
            rmsprop_update(w, g, sq, lr, wd, self.gamma1, self.epsilon, self.rescale_grad,
                           self._clip(), cw)
