"""Follow-the-leader methods: FTRL-Proximal and FTML.

Each update rule is a function over raw ``xp`` arrays that writes the weight and its
state in place; the fused CuPy kernel that replaces it on GPU is declared right above
it (``core.optimizer._fused``). Everything is computed in float32 (float64 for float64
weights).
"""
from __future__ import annotations

from ._fused import CLIP_GRAD, FusedOptimizer, fused, scaled_grad
from .optimizer import array_module, compute_dtype, register, zeros_state

__all__ = ["FTML", "Ftrl"]


_FTRL_KERNEL = (
    "G g, T lr, T wd, T lamda1, T beta, T rescale, T clip", "P w, P z, P sq",
    "T gr = rescale * (T)g; " + CLIP_GRAD +
    " T nn = (T)sq; T zz = (T)z + gr - (sqrt(nn + gr * gr) - sqrt(nn)) * (T)w / lr;"
    " nn += gr * gr; z = (P)zz; sq = (P)nn; T s = (zz > 0) - (zz < 0);"
    " w = (P)(fabs(zz) > lamda1 ? (s * lamda1 - zz) / ((beta + sqrt(nn)) / lr + wd) : 0);",
    "kb_ftrl_update")


@fused(_FTRL_KERNEL)
def ftrl_update(w, g, z, sq, lr, wd, lamda1, beta, rescale, clip):
    """``d = clip(rescale * g); z += d - (sqrt(sq + d * d) - sqrt(sq)) * w / lr; sq += d * d;
    w = (sign(z) * lamda1 - z) / ((beta + sqrt(sq)) / lr + wd) * (|z| > lamda1)``."""
    xp = array_module(w)
    ct = compute_dtype(w.dtype)
    t = scaled_grad(xp, g, rescale, clip, ct)
    sqrt_old = xp.sqrt(sq, dtype=ct)
    sq += t * t
    sqrt_new = xp.sqrt(sq, dtype=ct)
    sqrt_old -= sqrt_new
    sqrt_old *= w
    sqrt_old /= lr  # -(sqrt(sq_new) - sqrt(sq_old)) * w / lr
    t += sqrt_old
    z += t
    num = xp.multiply(xp.sign(z), ct.type(lamda1), dtype=ct)
    num -= z
    sqrt_new += beta
    sqrt_new /= lr
    sqrt_new += wd
    num /= sqrt_new
    num *= xp.abs(z) > lamda1
    w[...] = num


_FTML_KERNEL = (
    "G g, T wd, T beta1, T beta2, T eps, T c1, T c2, T rescale, T clip",
    "P w, P d, P v, P z",
    "T gr = rescale * (T)g + wd * (T)w; " + CLIP_GRAD +
    " T vv = beta2 * (T)v + (1 - beta2) * gr * gr; T dt = c1 * (sqrt(vv * c2) + eps);"
    " T zz = beta1 * (T)z + (1 - beta1) * gr - (dt - beta1 * (T)d) * (T)w;"
    " v = (P)vv; d = (P)dt; z = (P)zz; w = (P)(-zz / dt);",
    "kb_ftml_update")


@fused(_FTML_KERNEL)
def ftml_update(w, g, d, v, z, wd, beta1, beta2, eps, c1, c2, rescale, clip):
    """``e = clip(rescale * g + wd * w); v = beta2 * v + (1 - beta2) * e * e;
    d_t = c1 * (sqrt(c2 * v) + eps); z = beta1 * z + (1 - beta1) * e - (d_t - beta1 * d) * w;
    d = d_t; w = -z / d_t`` with ``c1 = (1 - beta1 ** t) / lr``, ``c2 = 1 / (1 - beta2 ** t)``.
    """
    xp = array_module(w)
    ct = compute_dtype(w.dtype)
    t = scaled_grad(xp, g, rescale, clip, ct, w, wd)
    v *= beta2
    v += t * t * (1.0 - beta2)
    d_t = xp.multiply(v, ct.type(c2), dtype=ct)
    xp.sqrt(d_t, out=d_t)
    d_t += eps
    d_t *= c1
    t *= 1.0 - beta1
    sigma = xp.multiply(d, ct.type(beta1), dtype=ct)
    xp.subtract(d_t, sigma, out=sigma)
    sigma *= w
    t -= sigma
    z *= beta1
    z += t
    d[...] = d_t
    xp.divide(z, d_t, out=d_t)
    xp.negative(d_t, out=d_t)
    w[...] = d_t


@register
class Ftrl(FusedOptimizer):
    """FTRL-Proximal (McMahan et al., "Ad Click Prediction: a View from the Trenches").

    ::

        g = clip(rescale_grad * grad, clip_gradient)
        z += g - (sqrt(n + g * g) - sqrt(n)) * weight / lr
        n += g * g
        weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (abs(z) > lamda1)

    The state is ``(z, n)``. With a ``row_sparse`` gradient only its rows change, as
    MXNet's sparse kernel.

    Args:
        lamda1: the L1 regularization strength.
        learning_rate: the learning rate (default 0.1).
        beta: the per-coordinate learning-rate parameter.
        **kwargs: the arguments of :class:`Optimizer`.
    """

    def __init__(self, lamda1: float = 0.01, learning_rate: float = 0.1, beta: float = 1,
                 **kwargs):
        # As MXNet: the rate is set after the base class, so that it does not replace a
        # scheduler's base rate.
        super().__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    _sparse_lazy = True

    def create_state(self, index, weight):
        return (zeros_state(weight), zeros_state(weight))

    def _step(self, index, ctx, w, g, state, lr, wd):
        z, sq = state
        ftrl_update(w, g, z, sq, lr, wd, self.lamda1, self.beta, self.rescale_grad,
                    self._clip())


@register
class FTML(FusedOptimizer):
    """FTML, "Follow the Moving Leader in Deep Learning" (Zheng and Kwok, 2017).

    At step ``t`` of a weight::

        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        v = beta2 * v + (1 - beta2) * g * g
        d_t = (1 - beta1 ** t) / lr * (sqrt(v / (1 - beta2 ** t)) + epsilon)
        z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * weight
        d = d_t;  weight = -z / d_t

    The state is ``(d, v, z)``.

    Args:
        beta1: the decay of ``z`` (about 0.5).
        beta2: the decay of ``v`` (close to 1).
        epsilon: added to the square root.
        **kwargs: the arguments of :class:`Optimizer`.
    """

    def __init__(self, beta1: float = 0.6, beta2: float = 0.999, epsilon: float = 1e-8,
                 **kwargs):
        super().__init__(**kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return (zeros_state(weight), zeros_state(weight), zeros_state(weight))

    def _step(self, index, ctx, w, g, state, lr, wd):
        t = self._index_update_count[index]
        c1 = (1.0 - self.beta1 ** t) / lr
        c2 = 1.0 / (1.0 - self.beta2 ** t)
        d, v, z = state
        ftml_update(w, g, d, v, z, wd, self.beta1, self.beta2, self.epsilon, c1, c2,
                    self.rescale_grad, self._clip())
