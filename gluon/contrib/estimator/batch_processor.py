"""How the estimator runs one batch: :class:`BatchProcessor` (subclass it to customize)."""
from __future__ import annotations

from core import autograd

from ...utils import split_and_load

__all__ = ["BatchProcessor"]


class BatchProcessor:
    """Runs a training or a validation batch for an :class:`~.estimator.Estimator`.

    The batch ``(data, label)`` is split over the estimator's contexts; ``fit_batch``
    records the forward pass and runs backward on each context's loss (the parameter
    update is the ``GradientUpdateHandler``'s); ``evaluate_batch`` runs ``val_net``.

    Example:
        >>> BatchProcessor().fit_batch.__name__
        'fit_batch'
    """

    def _get_data_and_label(self, batch, ctx, batch_axis: int = 0):
        data = split_and_load(batch[0], ctx_list=ctx, batch_axis=batch_axis)
        label = split_and_load(batch[1], ctx_list=ctx, batch_axis=batch_axis)
        return data, label

    def evaluate_batch(self, estimator, val_batch, batch_axis: int = 0):
        """``(data, label, pred, loss)`` of one validation batch, lists per context.

        Args:
            estimator: the Estimator (its ``val_net``, ``val_loss``, ``context``).
            val_batch: ``(data, label)`` from the validation DataLoader.
            batch_axis: the batch axis to split along.
        """
        data, label = self._get_data_and_label(val_batch, estimator.context, batch_axis)
        pred = [estimator.val_net(x) for x in data]
        loss = [estimator.val_loss(y_hat, y) for y_hat, y in zip(pred, label)]
        return data, label, pred, loss

    def fit_batch(self, estimator, train_batch, batch_axis: int = 0):
        """``(data, label, pred, loss)`` of one training batch, after backward.

        Args:
            estimator: the Estimator (its ``net``, ``loss``, ``context``).
            train_batch: ``(data, label)`` from the training DataLoader.
            batch_axis: the batch axis to split along.
        """
        data, label = self._get_data_and_label(train_batch, estimator.context, batch_axis)
        with autograd.record():
            pred = [estimator.net(x) for x in data]
            loss = [estimator.loss(y_hat, y) for y_hat, y in zip(pred, label)]
        for one in loss:
            one.backward()
        return data, label, pred, loss
