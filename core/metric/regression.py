"""Regression metrics: mean absolute, mean squared and root mean squared error, and
Pearson's correlation coefficient.
"""
from __future__ import annotations

import numpy

from .base import EvalMetric, _np, _wrap, alias, check_label_shapes, register

__all__ = ["MAE", "MSE", "RMSE", "PearsonCorrelation"]


class _BatchError(EvalMetric):
    """The base of MAE, MSE and RMSE: the error :meth:`_error` of each mini-batch (1-d
    labels and predictions as columns), averaged over the mini-batches."""

    def __init__(self, name: str, output_names, label_names):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    @staticmethod
    def _error(label: numpy.ndarray, pred: numpy.ndarray) -> float:
        raise NotImplementedError("must override this")

    def update(self, labels, preds) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            label, pred = _np(label), _np(pred)
            if label.ndim == 1:
                label = label.reshape(label.shape[0], 1)
            if pred.ndim == 1:
                pred = pred.reshape(pred.shape[0], 1)
            self._add(float(self._error(label, pred)), 1)


@register
class MAE(_BatchError):
    """Mean absolute error, averaged over mini-batches (each batch's mean counts once).

    Example:
        >>> import numpy as np
        >>> from core import metric
        >>> m = metric.MAE()
        >>> m.update([np.array([2.5, 0.0, 2, 8])], [np.array([3, -0.5, 2, 7])])
        >>> m.get()
        ('mae', 0.5)
    """

    def __init__(self, name: str = "mae", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _error(label, pred):
        return numpy.abs(label - pred).mean()


@register
class MSE(_BatchError):
    """Mean squared error, averaged over mini-batches (each batch's mean counts once).

    Example:
        >>> import numpy as np
        >>> from core import metric
        >>> m = metric.MSE()
        >>> m.update([np.array([2.5, 0.0, 2, 8])], [np.array([3, -0.5, 2, 7])])
        >>> m.get()
        ('mse', 0.375)
    """

    def __init__(self, name: str = "mse", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _error(label, pred):
        return ((label - pred) ** 2.0).mean()


@register
class RMSE(_BatchError):
    """Root mean squared error, averaged over mini-batches (each batch's RMSE counts once).

    Example:
        >>> import numpy as np
        >>> from core import metric
        >>> m = metric.RMSE()
        >>> m.update([np.array([2.5, 0.0, 2, 8])], [np.array([3, -0.5, 2, 7])])
        >>> round(m.get()[1], 6)
        0.612372
    """

    def __init__(self, name: str = "rmse", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _error(label, pred):
        return numpy.sqrt(MSE._error(label, pred))


@register
@alias("pearsonr")
class PearsonCorrelation(EvalMetric):
    """Pearson's correlation coefficient of predictions and labels (both flattened).

    Args:
        name, output_names, label_names: as :class:`EvalMetric`.
        average: ``'macro'`` (mean of the mini-batches' coefficients) or ``'micro'``
            (one coefficient over all data, accumulated with Welford's algorithm).

    Example:
        >>> from core import metric, nd
        >>> pr = metric.PearsonCorrelation()
        >>> pr.update([nd.array([[1, 0], [0, 1], [0, 1]])],
        ...           [nd.array([[0.3, 0.7], [0, 1.0], [0.4, 0.6]])])
        >>> round(pr.get()[1], 6)
        0.421637
    """

    def __init__(self, name: str = "pearsonr", output_names=None, label_names=None,
                 average: str = "macro"):
        self.average = average
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        if self.average == "micro":
            self.reset_micro()

    def reset_micro(self) -> None:
        self._sse_p = 0
        self._mean_p = 0
        self._sse_l = 0
        self._mean_l = 0
        self._pred_nums = 0
        self._label_nums = 0
        self._conv = 0

    def reset(self) -> None:
        super().reset()
        if self.average == "micro":
            self.reset_micro()

    @staticmethod
    def update_variance(new_values, *aggregate):
        """One step of Welford's online algorithm: ``(count, mean, m_2)``."""
        count, mean, m_2 = aggregate
        count += len(new_values)
        delta = new_values - mean
        mean += numpy.sum(delta / count)
        delta_2 = new_values - mean
        m_2 += numpy.sum(delta * delta_2)
        return count, mean, m_2

    def update_cov(self, label, pred) -> None:
        self._conv = self._conv + numpy.sum((label - self._mean_l) * (pred - self._mean_p))

    def update(self, labels, preds) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            label = _np(label)
            pred = _np(pred)
            check_label_shapes(label, pred, False, True)
            label = label.ravel().astype(numpy.float64)
            pred = pred.ravel().astype(numpy.float64)
            if self.average == "macro":
                self._add(float(numpy.corrcoef(pred, label)[0, 1]), 1)
            else:
                self.global_num_inst += 1
                self.num_inst += 1
                self._label_nums, self._mean_l, self._sse_l = \
                    self.update_variance(label, self._label_nums, self._mean_l, self._sse_l)
                self.update_cov(label, pred)
                self._pred_nums, self._mean_p, self._sse_p = \
                    self.update_variance(pred, self._pred_nums, self._mean_p, self._sse_p)

    def get(self) -> tuple:
        if self.num_inst == 0 or self.average == "macro":
            return super().get()
        n = self._label_nums
        pearsonr = self._conv / ((n - 1) * numpy.sqrt(self._sse_p / (n - 1))
                                 * numpy.sqrt(self._sse_l / (n - 1)))
        return (self.name, float(pearsonr))

    def get_global(self) -> tuple:
        if self.average == "micro":
            return self.get()
        return super().get_global()
