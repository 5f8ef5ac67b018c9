"""Loss-valued metrics: the likelihood of class probabilities (cross-entropy, negative
log-likelihood, perplexity) and the mean of loss values computed elsewhere.
"""
from __future__ import annotations

import math

import numpy

from .base import EvalMetric, _as_list, _np, _wrap, alias, register

__all__ = ["Caffe", "CrossEntropy", "Loss", "NegativeLogLikelihood", "Perplexity", "Torch"]


class _PickedNLL(EvalMetric):
    """The base of :class:`CrossEntropy` and :class:`NegativeLogLikelihood`: the mean of
    ``-log(p[label] + eps)`` over the samples, ``p`` being the predicted probabilities."""

    def __init__(self, eps: float, name: str, output_names, label_names):
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.eps = eps

    def update(self, labels, preds) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            label, pred = _np(label).ravel(), _np(pred)
            if label.shape[0] != pred.shape[0]:
                raise ValueError(f"labels ({label.shape[0]}) and predictions "
                                 f"({pred.shape[0]}) differ in number of samples")
            prob = pred[numpy.arange(label.shape[0]), label.astype(numpy.int64)]
            self._add(float((-numpy.log(prob + self.eps)).sum()), label.shape[0])


@register
@alias("ce")
class CrossEntropy(_PickedNLL):
    """Cross-entropy of predicted class probabilities: mean of ``-log(p[label] + eps)``.

    Args:
        eps: added to the probabilities before the log.
        name, output_names, label_names: as :class:`EvalMetric`.

    Example:
        >>> from core import metric, nd
        >>> ce = metric.CrossEntropy()
        >>> ce.update([nd.array([0, 1, 1])], [nd.array([[0.3, 0.7], [0, 1.0], [0.4, 0.6]])])
        >>> round(ce.get()[1], 6)
        0.571599
    """

    def __init__(self, eps: float = 1e-12, name: str = "cross-entropy", output_names=None,
                 label_names=None):
        super().__init__(eps, name, output_names, label_names)


@register
@alias("nll_loss")
class NegativeLogLikelihood(_PickedNLL):
    """Negative log-likelihood of predicted class probabilities: mean of
    ``-log(p[label] + eps)``.

    Args:
        eps: added to the probabilities before the log.
        name, output_names, label_names: as :class:`EvalMetric`.
    """

    def __init__(self, eps: float = 1e-12, name: str = "nll-loss", output_names=None,
                 label_names=None):
        super().__init__(eps, name, output_names, label_names)


@register
class Perplexity(EvalMetric):
    """Perplexity: ``exp(-mean(log p))`` of the probabilities given to the labels.

    Args:
        ignore_label: a label value not counted (None: count all).
        axis: the class axis of the predictions.
        name, output_names, label_names: as :class:`EvalMetric`.

    Example:
        >>> from core import metric, nd
        >>> p = metric.Perplexity(ignore_label=None)
        >>> p.update([nd.array([0, 1, 1])], [nd.array([[0.3, 0.7], [0, 1.0], [0.4, 0.6]])])
        >>> round(p.get()[1], 6)
        1.771098
    """

    def __init__(self, ignore_label, axis: int = -1, name: str = "perplexity",
                 output_names=None, label_names=None):
        super().__init__(name, ignore_label=ignore_label, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels, preds) -> None:
        labels, preds = _wrap(labels, preds)
        loss = 0.0
        num = 0
        for label, pred in zip(labels, preds):
            pred = _np(pred)
            label = _np(label)
            if label.size != pred.size / pred.shape[-1]:
                raise ValueError(f"Perplexity: shape mismatch: labels {label.shape} vs. "
                                 f"predictions {pred.shape}")
            label = label.reshape(-1)
            scores = numpy.moveaxis(pred, self.axis, -1).reshape(-1, pred.shape[self.axis])
            picked = scores[numpy.arange(label.size), numpy.clip(
                label.astype("int64"), 0, scores.shape[1] - 1)].astype(numpy.float64)
            if self.ignore_label is not None:
                ignore = label == self.ignore_label
                num -= int(ignore.sum())
                picked = numpy.where(ignore, 1.0, picked)
            loss -= float(numpy.log(numpy.maximum(1e-10, picked)).sum())
            num += picked.size
        self._add(loss, num)

    def get(self) -> tuple:
        name, mean_nll = super().get()
        return (name, math.exp(mean_nll))

    def get_global(self) -> tuple:
        name, mean_nll = super().get_global()
        return (name, math.exp(mean_nll))


@register
class Loss(EvalMetric):
    """The mean of loss values (the predictions); labels are ignored.

    Example:
        >>> from core import metric, nd
        >>> m = metric.Loss()
        >>> m.update(None, [nd.array([1.0, 2.0, 3.0])])
        >>> m.get()
        ('loss', 2.0)
    """

    def __init__(self, name: str = "loss", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, _, preds) -> None:
        for pred in _as_list(preds):
            pred = _np(pred)
            self._add(float(pred.sum()), pred.size)


@register
class Torch(Loss):
    """A :class:`Loss` for torch criterions (MXNet's name)."""

    def __init__(self, name: str = "torch", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class Caffe(Loss):
    """A :class:`Loss` for caffe criterions (MXNet's name)."""

    def __init__(self, name: str = "caffe", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)
