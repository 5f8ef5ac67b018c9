"""Classification metrics: accuracy, top-k accuracy, F1, Matthews' correlation
coefficient (binary, MCC) and its multiclass generalization (PCC).
"""
from __future__ import annotations

import math

import numpy

from .base import EvalMetric, _np, _wrap, alias, check_label_shapes, register

__all__ = ["F1", "MCC", "PCC", "Accuracy", "TopKAccuracy"]


@register
@alias("acc")
class Accuracy(EvalMetric):
    """Accuracy: the fraction of predictions equal to the labels.

    Predictions of a different shape than the labels are class scores, reduced by
    ``argmax`` over ``axis``; predictions of the labels' shape are class indices.

    Args:
        axis: the class axis of score predictions.
        name, output_names, label_names: as :class:`EvalMetric`.

    Example:
        >>> from core import metric, nd
        >>> acc = metric.Accuracy()
        >>> acc.update([nd.array([0, 1, 1])], [nd.array([[0.3, 0.7], [0, 1.0], [0.4, 0.6]])])
        >>> acc.get()
        ('accuracy', 0.666...)
    """

    def __init__(self, axis: int = 1, name: str = "accuracy", output_names=None,
                 label_names=None):
        super().__init__(name, axis=axis, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self.axis = axis

    def update(self, labels, preds) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            pred = _np(pred)
            label = _np(label)
            if pred.shape != label.shape:
                pred = numpy.argmax(pred, axis=self.axis)
            pred = pred.astype("int32").ravel()
            label = label.astype("int32").ravel()
            check_label_shapes(label, pred)
            self._add(int((pred == label).sum()), len(pred))


@register
@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """Top-k accuracy: a prediction counts when the label is among the ``top_k`` highest
    scores.

    Args:
        top_k: how many of the highest scores count (> 1; use :class:`Accuracy` for 1).
        name, output_names, label_names: as :class:`EvalMetric` (the name gets
            ``_<top_k>`` appended).

    Example:
        >>> from core import metric, nd
        >>> m = metric.TopKAccuracy(top_k=2)
        >>> m.update([nd.array([2, 0])], [nd.array([[0.1, 0.5, 0.4], [0.2, 0.3, 0.5]])])
        >>> m.get()
        ('top_k_accuracy_2', 0.5)
    """

    def __init__(self, top_k: int = 1, name: str = "top_k_accuracy", output_names=None,
                 label_names=None):
        super().__init__(name, top_k=top_k, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self.top_k = top_k
        if self.top_k <= 1:
            raise ValueError("Please use Accuracy if top_k is no more than 1")
        self.name += f"_{self.top_k}"

    def update(self, labels, preds) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            pred = _np(pred).astype("float32")
            if pred.ndim > 2:
                raise ValueError(f"TopKAccuracy: predictions should be no more than 2 dims, "
                                 f"got shape {pred.shape}")
            label = _np(label).astype("int32").ravel()
            num_samples = pred.shape[0]
            if pred.ndim == 1:
                correct = int((pred.astype("int32").ravel() == label).sum())
            else:
                k = min(pred.shape[1], self.top_k)
                top = numpy.argpartition(pred, -k, axis=1)[:, -k:]
                correct = int((top == label[:, None]).any(axis=1).sum())
            self._add(correct, num_samples)


def _ratio(tp, other) -> float:
    """``tp / (tp + other)``, 0 when that is 0/0 (precision, recall)."""
    return tp / (tp + other) if tp + other > 0 else 0.0


class _BinaryClassificationMetrics:
    """Counts of true/false positives/negatives, local and global."""

    def __init__(self):
        self.reset_stats()

    def update_binary_stats(self, label, pred) -> None:
        pred = _np(pred)
        label = _np(label)
        if pred.shape == label.shape:  # class indices
            pred_label = pred.astype("int32").ravel()
        else:  # class scores
            pred_label = numpy.argmax(pred, axis=1).ravel()
        label = label.astype("int32").ravel()
        check_label_shapes(label, pred_label)
        if len(numpy.unique(label)) > 2:
            raise ValueError(f"{type(self).__name__} currently only supports binary "
                             "classification.")
        pred_true = pred_label == 1
        label_true = label == 1
        tp = int((pred_true & label_true).sum())
        fp = int((pred_true & ~label_true).sum())
        fn = int((~pred_true & label_true).sum())
        tn = int((~pred_true & ~label_true).sum())
        self.true_positives += tp
        self.false_positives += fp
        self.false_negatives += fn
        self.true_negatives += tn
        self.global_true_positives += tp
        self.global_false_positives += fp
        self.global_false_negatives += fn
        self.global_true_negatives += tn

    def _counts(self, use_global: bool = False) -> tuple:
        """``(tp, fp, fn, tn)`` of the local (or the global) tally."""
        p = "global_" if use_global else ""
        return tuple(getattr(self, p + n) for n in (
            "true_positives", "false_positives", "false_negatives", "true_negatives"))

    @staticmethod
    def _fscore(tp, fp, fn) -> float:
        precision, recall = _ratio(tp, fp), _ratio(tp, fn)
        if precision + recall > 0:
            return 2 * precision * recall / (precision + recall)
        return 0.0

    @property
    def precision(self) -> float:
        return _ratio(self.true_positives, self.false_positives)

    @property
    def recall(self) -> float:
        return _ratio(self.true_positives, self.false_negatives)

    @property
    def fscore(self) -> float:
        return self._fscore(*self._counts()[:3])

    @property
    def global_fscore(self) -> float:
        return self._fscore(*self._counts(use_global=True)[:3])

    def matthewscc(self, use_global: bool = False) -> float:
        """Matthews' correlation coefficient; zero factors of the denominator count as 1."""
        tp, fp, fn, tn = (float(c) for c in self._counts(use_global))
        if tp + fp + fn + tn == 0:
            return 0.0
        denom = 1.0
        for t in (tp + fp, tp + fn, tn + fp, tn + fn):
            if t != 0.0:
                denom *= t
        return (tp * tn - fp * fn) / math.sqrt(denom)

    @property
    def total_examples(self) -> int:
        return sum(self._counts())

    @property
    def global_total_examples(self) -> int:
        return sum(self._counts(use_global=True))

    def local_reset_stats(self) -> None:
        self.false_positives = self.false_negatives = 0
        self.true_positives = self.true_negatives = 0

    def reset_stats(self) -> None:
        self.local_reset_stats()
        self.global_false_positives = self.global_false_negatives = 0
        self.global_true_positives = self.global_true_negatives = 0


class _BinaryScore(EvalMetric):
    """The base of F1 and MCC: a score of the binary counts (:meth:`_score`), the mean of
    the mini-batches' scores (``average='macro'``) or the score of all counts
    (``'micro'``); ``metrics`` holds the counts."""

    _count_zero = 0  # the instance counts after a reset (0.0 for MCC, as MXNet's)

    def __init__(self, name: str, output_names, label_names, average: str):
        self.average = average
        self.metrics = _BinaryClassificationMetrics()
        super().__init__(name=name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def _score(self, use_global: bool) -> float:
        raise NotImplementedError("must override this")

    def update(self, labels, preds) -> None:
        labels, preds = _wrap(labels, preds)
        m = self.metrics
        for label, pred in zip(labels, preds):
            m.update_binary_stats(label, pred)
        if self.average == "macro":
            self.sum_metric += self._score(use_global=False)
            self.global_sum_metric += self._score(use_global=True)
            self.num_inst += 1
            self.global_num_inst += 1
            m.reset_stats()
        else:
            self.sum_metric = self._score(use_global=False) * m.total_examples
            self.global_sum_metric = self._score(use_global=True) * m.global_total_examples
            self.num_inst = m.total_examples
            self.global_num_inst = m.global_total_examples

    def reset(self) -> None:
        self.reset_local()
        self.global_sum_metric = 0.0
        self.global_num_inst = self._count_zero
        self.metrics.reset_stats()

    def reset_local(self) -> None:
        self.sum_metric = 0.0
        self.num_inst = self._count_zero
        self.metrics.local_reset_stats()


@register
class F1(_BinaryScore):
    """The F1 score of a binary classification: ``2 * precision * recall /
    (precision + recall)``, class 1 being positive.

    Predictions are class scores of shape ``(n, 2)`` (reduced by ``argmax``) or class
    indices of the labels' shape.

    Args:
        name, output_names, label_names: as :class:`EvalMetric`.
        average: ``'macro'`` averages the F1 of each mini-batch; ``'micro'`` computes one
            F1 from the counts over all mini-batches.

    Example:
        >>> from core import metric, nd
        >>> f1 = metric.F1()
        >>> f1.update([nd.array([0, 1, 1])], [nd.array([[0.3, 0.7], [0, 1.0], [0.4, 0.6]])])
        >>> f1.get()
        ('f1', 0.8)
    """

    def __init__(self, name: str = "f1", output_names=None, label_names=None,
                 average: str = "macro"):
        super().__init__(name, output_names, label_names, average)

    def _score(self, use_global: bool) -> float:
        return self.metrics.global_fscore if use_global else self.metrics.fscore


@register
class MCC(_BinaryScore):
    """Matthews' correlation coefficient of a binary classification.

    ``(TP * TN - FP * FN) / sqrt((TP + FP) (TP + FN) (TN + FP) (TN + FN))``, with zero
    factors of the denominator replaced by 1.

    Args:
        name, output_names, label_names: as :class:`EvalMetric`.
        average: ``'macro'`` (mean of the mini-batches' MCC) or ``'micro'`` (one MCC over
            all counts).

    Example:
        >>> from core import metric, nd
        >>> m = metric.MCC()
        >>> m.update([nd.array([0, 1, 1, 0])], [nd.array([[0.6, 0.4], [0.3, 0.7],
        ...                                               [0.8, 0.2], [0.9, 0.1]])])
        >>> round(m.get()[1], 4)
        0.5774
    """

    _count_zero = 0.0

    def __init__(self, name: str = "mcc", output_names=None, label_names=None,
                 average: str = "macro"):
        super().__init__(name, output_names, label_names, average)

    def _score(self, use_global: bool) -> float:
        return self.metrics.matthewscc(use_global)


@register
class PCC(EvalMetric):
    """The multiclass generalization of Matthews' correlation coefficient, from a
    confusion matrix that grows with the classes seen.

    Args:
        name, output_names, label_names: as :class:`EvalMetric`.
        has_global_stats: keep a global confusion matrix as well.

    Example:
        >>> from core import metric, nd
        >>> m = metric.PCC()
        >>> m.update([nd.array([0, 1, 2, 1])], [nd.array([0, 1, 2, 2])])
        >>> round(m.get()[1], 4)
        0.7
    """

    def __init__(self, name: str = "pcc", output_names=None, label_names=None,
                 has_global_stats: bool = True):
        self.k = 2
        super().__init__(name=name, output_names=output_names, label_names=label_names,
                         has_global_stats=has_global_stats)

    def _grow(self, inc: int) -> None:
        self.lcm = numpy.pad(self.lcm, ((0, inc), (0, inc)), "constant", constant_values=0)
        self.gcm = numpy.pad(self.gcm, ((0, inc), (0, inc)), "constant", constant_values=0)
        self.k += inc

    @staticmethod
    def _calc_mcc(cmat) -> float:
        n = cmat.sum()
        x = cmat.sum(axis=1)
        y = cmat.sum(axis=0)
        cov_xx = numpy.sum(x * (n - x))
        cov_yy = numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float("nan")
        i = cmat.diagonal()
        cov_xy = numpy.sum(i * n - x * y)
        return float(cov_xy / (cov_xx * cov_yy) ** 0.5)

    def update(self, labels, preds) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            label = _np(label).astype("int32").ravel()
            pred = _np(pred)
            if pred.ndim > 1 and pred.size != label.size:
                pred = pred.argmax(axis=1)
            pred = pred.astype("int32").ravel()
            n = int(max(pred.max(), label.max()))
            if n >= self.k:
                self._grow(n + 1 - self.k)
            bcm = numpy.zeros((self.k, self.k))
            numpy.add.at(bcm, (pred, label), 1)
            self.lcm += bcm
            self.gcm += bcm
        self.num_inst += 1
        self.global_num_inst += 1

    @property
    def sum_metric(self):
        return self._calc_mcc(self.lcm) * self.num_inst

    @property
    def global_sum_metric(self):
        return self._calc_mcc(self.gcm) * self.global_num_inst

    def reset(self) -> None:
        self.global_num_inst = 0.0
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self) -> None:
        self.num_inst = 0.0
        self.lcm = numpy.zeros((self.k, self.k))
