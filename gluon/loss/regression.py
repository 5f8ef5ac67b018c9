"""Regression losses: ``L2Loss``, ``L1Loss``, ``HuberLoss`` and ``PoissonNLLLoss``
(MXNet Gluon 1.9's ``gluon.loss``; re-exported by ``gluon.loss``)."""
from __future__ import annotations

import math

from .loss import Loss, _apply_weighting, _batch_mean, _reshape_like

__all__ = ["HuberLoss", "L1Loss", "L2Loss", "PoissonNLLLoss"]


class L2Loss(Loss):
    r"""Half the squared error: ``L = 0.5 * (label - pred)**2``, averaged per sample.

    ``label`` may have any shape with as many elements as ``pred``.

    Args:
        weight: a global scalar weight (default 1; None counts as 1).
        batch_axis: the axis of the mini-batch.

    Inputs: ``pred``, ``label`` and an optional ``sample_weight`` broadcastable to
    ``pred``'s shape. Output: shape ``(batch_size,)``.

    Example:
        >>> from core import nd
        >>> from gluon.loss import L2Loss
        >>> L2Loss()(nd.array([[1.0, 3.0]]), nd.array([[0.0, 1.0]])).asnumpy().tolist()
        [1.25]
    """

    def __init__(self, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.square(label - pred)
        half = 0.5 if self._weight is None else self._weight / 2
        loss = _apply_weighting(F, loss, half, sample_weight)
        return _batch_mean(F, loss, self._batch_axis)


class L1Loss(Loss):
    r"""The absolute error: ``L = |label - pred|``, averaged per sample.

    Args:
        weight: a global scalar weight, or None.
        batch_axis: the axis of the mini-batch.

    Inputs: ``pred``, ``label`` (as many elements as ``pred``) and an optional
    ``sample_weight`` broadcastable to ``pred``'s shape. Output: ``(batch_size,)``.

    Example:
        >>> from core import nd
        >>> from gluon.loss import L1Loss
        >>> L1Loss()(nd.array([[1.0, 3.0]]), nd.array([[0.0, 1.0]])).asnumpy().tolist()
        [1.5]
    """

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        return self._weighted_mean(F, F.abs(label - pred), sample_weight)


class HuberLoss(Loss):
    r"""Smoothed L1 loss: ``L = 0.5 / rho * (label - pred)**2`` where
    ``|label - pred| <= rho``, else ``|label - pred| - 0.5 * rho``; averaged per sample.

    Args:
        rho: the threshold between the quadratic and the linear part.
        weight: a global scalar weight, or None.
        batch_axis: the axis of the mini-batch.

    Inputs: ``pred``, ``label`` (as many elements as ``pred``) and an optional
    ``sample_weight`` broadcastable to ``pred``'s shape. Output: ``(batch_size,)``.

    Example:
        >>> from core import nd
        >>> from gluon.loss import HuberLoss
        >>> HuberLoss()(nd.array([[0.5, 3.0]]), nd.zeros((1, 2))).asnumpy().tolist()
        [1.3125]
    """

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.abs(label - pred)
        loss = F.where(loss > self._rho, loss - 0.5 * self._rho,
                       (0.5 / self._rho) * F.square(loss))
        return self._weighted_mean(F, loss, sample_weight)


class PoissonNLLLoss(Loss):
    r"""Negative log-likelihood of a Poisson-distributed ``target``, averaged over all
    elements (the result is a scalar).

    With ``from_logits=True`` (default) ``pred`` is the log of the rate and
    ``L = exp(pred) - target * pred``; otherwise ``L = pred - target * log(pred +
    epsilon)``. ``compute_full=True`` adds Stirling's approximation of ``log(target!)``,
    ``target * log(target) - target + 0.5 * log(2 * pi * target)``, where ``target > 1``
    (0 elsewhere).

    Args:
        weight: a global scalar weight, or None.
        from_logits: whether ``pred`` is the log of the rate.
        batch_axis: the axis of the mini-batch (unused: the mean is over everything).
        compute_full: whether to add the Stirling term.

    Inputs: ``pred``, ``target`` (as many elements as ``pred``), an optional
    ``sample_weight`` broadcastable to ``pred``'s shape and ``epsilon`` (default 1e-8).
    Output: a scalar, shape ``()``.

    Example:
        >>> from core import nd
        >>> from gluon.loss import PoissonNLLLoss
        >>> float(PoissonNLLLoss()(nd.zeros((2, 2)), nd.ones((2, 2))).asscalar())
        1.0
    """

    def __init__(self, weight=None, from_logits=True, batch_axis=0, compute_full=False,
                 **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._compute_full = compute_full

    def hybrid_forward(self, F, pred, target, sample_weight=None, epsilon=1e-08):
        target = _reshape_like(F, target, pred, ("target", "pred"))
        if self._from_logits:
            loss = F.exp(pred) - target * pred
        else:
            loss = pred - target * F.log(pred + epsilon)
        if self._compute_full:
            above = target > 1
            # log(target) only where target > 1: no 0 * log(0) = nan below it
            t = F.where(above, target, F.ones_like(target))
            stirling = t * F.log(t) - t + 0.5 * F.log(2 * t * math.pi)
            loss = loss + stirling * above
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss)
