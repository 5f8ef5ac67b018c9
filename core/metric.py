"""Online evaluation metrics (MXNet 1.9's ``mx.metric``).

A metric accumulates over mini-batches: ``update(labels, preds)`` with lists of arrays
(NDArrays or NumPy arrays; a single array is accepted as well), ``get()`` for
``(name, value)``, ``reset()`` to start over. Every metric keeps a *local* and a
*global* tally: ``reset_local()`` clears the local one only, ``get_global()`` reads the
global one. Values are computed in NumPy.

Metrics are created by name (case-insensitive, with MXNet's aliases such as ``'acc'``,
``'ce'``, ``'top_k_accuracy'``) through :func:`create`, which also accepts lists of
metrics and plain functions ``feval(label, pred)``.

Example:
    >>> from core import metric, nd
    >>> acc = metric.create('acc')
    >>> acc.update([nd.array([0, 1, 1])], [nd.array([[0.3, 0.7], [0, 1.0], [0.4, 0.6]])])
    >>> acc.get()
    ('accuracy', 0.666...)
"""
from __future__ import annotations

import json
import math
import warnings
from collections import OrderedDict
from collections.abc import Callable

import numpy

from .ndarray import NDArray

__all__ = [
    "F1",
    "MAE",
    "MCC",
    "MSE",
    "PCC",
    "RMSE",
    "Accuracy",
    "Caffe",
    "CompositeEvalMetric",
    "CrossEntropy",
    "CustomMetric",
    "EvalMetric",
    "Loss",
    "NegativeLogLikelihood",
    "PearsonCorrelation",
    "Perplexity",
    "TopKAccuracy",
    "Torch",
    "alias",
    "check_label_shapes",
    "create",
    "np",
    "register",
]

_REGISTRY: dict = {}


def _is_array(x) -> bool:
    return isinstance(x, (NDArray, numpy.ndarray))


def _np(x) -> numpy.ndarray:
    """A NumPy array from an NDArray, a NumPy array, or anything array-like."""
    if isinstance(x, NDArray):
        return x.asnumpy()
    return numpy.asarray(x)


def check_label_shapes(labels, preds, wrap: bool = False, shape: bool = False):
    """Check that labels and predictions match in number (or in shape).

    Args:
        labels: a list of label arrays (or one array).
        preds: a list of prediction arrays (or one array).
        wrap: wrap a single array into a list.
        shape: compare ``.shape`` instead of ``len``.

    Returns:
        ``(labels, preds)``, wrapped into lists if ``wrap``.

    Raises:
        ValueError: when they do not match.
    """
    if not shape:
        label_shape, pred_shape = len(labels), len(preds)
    else:
        label_shape, pred_shape = labels.shape, preds.shape
    if label_shape != pred_shape:
        raise ValueError(f"Shape of labels {label_shape} does not match shape of "
                         f"predictions {pred_shape}")
    if wrap:
        if _is_array(labels):
            labels = [labels]
        if _is_array(preds):
            preds = [preds]
    return labels, preds


def _wrap(labels, preds):
    """Lists of labels and predictions (single arrays wrapped) of equal length."""
    if _is_array(labels):
        labels = [labels]
    if _is_array(preds):
        preds = [preds]
    return check_label_shapes(labels, preds)


class EvalMetric:
    """The base class of evaluation metrics.

    Subclasses implement :meth:`update`, adding to ``sum_metric``/``num_inst`` and to
    their global counterparts; :meth:`get` returns ``sum_metric / num_inst``.

    Args:
        name: the name shown with the value.
        output_names: the prediction names :meth:`update_dict` uses (None: all).
        label_names: the label names :meth:`update_dict` uses (None: all).
        **kwargs: the metric's own arguments, kept for :meth:`get_config`.
    """

    def __init__(self, name: str, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self) -> str:
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self) -> dict:
        """The arguments that rebuild this metric with ``create(**config)``."""
        config = self._kwargs.copy()
        config.update({"metric": self.__class__.__name__, "name": self.name,
                       "output_names": self.output_names, "label_names": self.label_names})
        return config

    def update_dict(self, label: dict, pred: dict) -> None:
        """Update with ``{name: array}`` dicts, selected by ``label_names``/``output_names``."""
        if self.output_names is not None:
            pred = [pred[name] for name in self.output_names]
        else:
            pred = list(pred.values())
        if self.label_names is not None:
            label = [label[name] for name in self.label_names]
        else:
            label = list(label.values())
        self.update(label, pred)

    def update(self, labels, preds) -> None:
        """Add a mini-batch: lists of label and prediction arrays."""
        raise NotImplementedError()

    def reset(self) -> None:
        """Clear the local and the global tallies."""
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self) -> None:
        """Clear the local tally only."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self) -> tuple:
        """``(name, value)`` of the local tally (value NaN before any update)."""
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self.sum_metric / self.num_inst)

    def get_global(self) -> tuple:
        """``(name, value)`` of the global tally."""
        if self._has_global_stats:
            if self.global_num_inst == 0:
                return (self.name, float("nan"))
            return (self.name, self.global_sum_metric / self.global_num_inst)
        return self.get()

    def get_name_value(self) -> list:
        """``[(name, value), ...]`` of the local tally."""
        return _zip_name_value(*self.get())

    def get_global_name_value(self) -> list:
        """``[(name, value), ...]`` of the global tally."""
        if self._has_global_stats:
            return _zip_name_value(*self.get_global())
        return self.get_name_value()

    def _add(self, value, count) -> None:
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += count
        self.global_num_inst += count


def _zip_name_value(name, value) -> list:
    if not isinstance(name, list):
        name = [name]
    if not isinstance(value, list):
        value = [value]
    return list(zip(name, value))


def register(klass: type, name: str | None = None) -> type:
    """Register a metric class under its lower-cased name (or ``name``).

    Example:
        >>> from core import metric
        >>> @metric.register
        ... class Always1(metric.EvalMetric):
        ...     def __init__(self, name='always1'):
        ...         super().__init__(name)
        ...     def update(self, labels, preds):
        ...         self._add(1.0, 1)
        >>> metric.create('always1').name
        'always1'
    """
    if not (isinstance(klass, type) and issubclass(klass, EvalMetric)):
        raise TypeError(f"register: can only register subclasses of EvalMetric, got {klass!r}")
    name = (klass.__name__ if name is None else name).lower()
    old = _REGISTRY.get(name)
    if old is not None and old is not klass:
        warnings.warn(f"New metric {klass.__module__}.{klass.__name__} registered with name "
                      f"{name} is overriding existing metric {old.__module__}.{old.__name__}",
                      UserWarning, stacklevel=2)
    _REGISTRY[name] = klass
    return klass


def alias(*aliases: str) -> Callable:
    """A class decorator registering a metric under further names."""

    def reg(klass):
        for name in aliases:
            register(klass, name)
        return klass

    return reg


def create(metric=None, *args, **kwargs) -> EvalMetric:
    """A metric from a name, an instance, a list of those, or a function.

    Args:
        metric: a registered name (``'acc'``, ``'f1'``, ``'rmse'``, ...), an
            :class:`EvalMetric` (returned as is), a list (a :class:`CompositeEvalMetric`
            of each), a function ``feval(label, pred)`` (a :class:`CustomMetric`), a
            config dict from :meth:`EvalMetric.get_config`, or its JSON.
        *args: passed to the metric's constructor.
        **kwargs: passed to the metric's constructor.

    Example:
        >>> import numpy as np
        >>> from core import metric
        >>> def mean_abs(label, pred):
        ...     return np.abs(label - pred).mean()
        >>> m = metric.create(['acc', mean_abs, 'rmse'])
        >>> [c.name for c in m.metrics]
        ['accuracy', 'mean_abs', 'rmse']
    """
    if metric is None:
        metric = kwargs.pop("metric")
    if isinstance(metric, EvalMetric):
        if args or kwargs:
            raise ValueError("create: the metric is already an instance; additional "
                             "arguments are invalid")
        return metric
    if isinstance(metric, type) and issubclass(metric, EvalMetric):
        return metric(*args, **kwargs)
    if callable(metric):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    if isinstance(metric, dict):
        return create(**metric)
    if not isinstance(metric, str):
        raise TypeError(f"create: metric must be a name, an EvalMetric, a list or a "
                        f"function, got {type(metric).__name__}")
    if metric.startswith(("[", "{")):
        if args or kwargs:
            raise ValueError("create: a JSON metric spec takes no further arguments")
        spec = json.loads(metric)
        return create(spec[0], **spec[1]) if isinstance(spec, list) else create(**spec)
    cls = _REGISTRY.get(metric.lower())
    if cls is None:
        raise ValueError(f"{metric} is not registered. Please register with metric.register "
                         f"first; registered: {', '.join(sorted(_REGISTRY))}")
    return cls(*args, **kwargs)


@register
@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get()`` returns lists of names and values.

    Args:
        metrics: the child metrics (anything :func:`create` takes).
        name, output_names, label_names: as :class:`EvalMetric`.

    Example:
        >>> from core import metric, nd
        >>> m = metric.CompositeEvalMetric([metric.Accuracy(), metric.F1()])
        >>> m.update([nd.array([0, 1, 1])], [nd.array([[0.3, 0.7], [0, 1.0], [0.4, 0.6]])])
        >>> m.get()
        (['accuracy', 'f1'], [0.666..., 0.8])
    """

    def __init__(self, metrics=None, name: str = "composite", output_names=None,
                 label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.metrics = [create(m) for m in (metrics or [])]

    def add(self, metric) -> None:
        """Add a child metric."""
        self.metrics.append(create(metric))

    def get_metric(self, index: int):
        """The child metric at ``index``."""
        try:
            return self.metrics[index]
        except IndexError:
            raise ValueError(f"Metric index {index} is out of range 0 and "
                             f"{len(self.metrics)}") from None

    def update_dict(self, labels, preds) -> None:
        if self.label_names is not None:
            labels = OrderedDict([i for i in labels.items() if i[0] in self.label_names])
        if self.output_names is not None:
            preds = OrderedDict([i for i in preds.items() if i[0] in self.output_names])
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels, preds) -> None:
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self) -> None:
        for metric in getattr(self, "metrics", ()):
            metric.reset()

    def reset_local(self) -> None:
        for metric in getattr(self, "metrics", ()):
            metric.reset_local()

    def _collect(self, getter) -> tuple:
        names, values = [], []
        for metric in self.metrics:
            name, value = getter(metric)
            names.extend(name if isinstance(name, list) else [name])
            values.extend(value if isinstance(value, list) else [value])
        return (names, values)

    def get(self) -> tuple:
        return self._collect(lambda m: m.get())

    def get_global(self) -> tuple:
        return self._collect(lambda m: m.get_global())

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"metrics": [i.get_config() for i in self.metrics]})
        return config


# ---------------------------------------------------------------------- classification

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

    @staticmethod
    def _fscore(tp, fp, fn) -> float:
        precision = tp / (tp + fp) if tp + fp > 0 else 0.0
        recall = tp / (tp + fn) if tp + fn > 0 else 0.0
        if precision + recall > 0:
            return 2 * precision * recall / (precision + recall)
        return 0.0

    @property
    def precision(self) -> float:
        tp, fp = self.true_positives, self.false_positives
        return tp / (tp + fp) if tp + fp > 0 else 0.0

    @property
    def recall(self) -> float:
        tp, fn = self.true_positives, self.false_negatives
        return tp / (tp + fn) if tp + fn > 0 else 0.0

    @property
    def fscore(self) -> float:
        return self._fscore(self.true_positives, self.false_positives, self.false_negatives)

    @property
    def global_fscore(self) -> float:
        return self._fscore(self.global_true_positives, self.global_false_positives,
                            self.global_false_negatives)

    def matthewscc(self, use_global: bool = False) -> float:
        """Matthews' correlation coefficient; zero factors of the denominator count as 1."""
        p = "global_" if use_global else ""
        tp, fp, fn, tn = (float(getattr(self, p + n)) for n in (
            "true_positives", "false_positives", "false_negatives", "true_negatives"))
        if tp + fp + fn + tn == 0:
            return 0.0
        denom = 1.0
        for t in (tp + fp, tp + fn, tn + fp, tn + fn):
            if t != 0.0:
                denom *= t
        return (tp * tn - fp * fn) / math.sqrt(denom)

    @property
    def total_examples(self) -> int:
        return self.false_negatives + self.false_positives + self.true_negatives + \
            self.true_positives

    @property
    def global_total_examples(self) -> int:
        return self.global_false_negatives + self.global_false_positives + \
            self.global_true_negatives + self.global_true_positives

    def local_reset_stats(self) -> None:
        self.false_positives = self.false_negatives = 0
        self.true_positives = self.true_negatives = 0

    def reset_stats(self) -> None:
        self.local_reset_stats()
        self.global_false_positives = self.global_false_negatives = 0
        self.global_true_positives = self.global_true_negatives = 0


@register
class F1(EvalMetric):
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
        self.average = average
        self.metrics = _BinaryClassificationMetrics()
        super().__init__(name=name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, labels, preds) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            self.metrics.update_binary_stats(label, pred)
        m = self.metrics
        if self.average == "macro":
            self.sum_metric += m.fscore
            self.global_sum_metric += m.global_fscore
            self.num_inst += 1
            self.global_num_inst += 1
            m.reset_stats()
        else:
            self.sum_metric = m.fscore * m.total_examples
            self.global_sum_metric = m.global_fscore * m.global_total_examples
            self.num_inst = m.total_examples
            self.global_num_inst = m.global_total_examples

    def reset(self) -> None:
        self.sum_metric = 0.0
        self.num_inst = 0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0
        self.metrics.reset_stats()

    def reset_local(self) -> None:
        self.sum_metric = 0.0
        self.num_inst = 0
        self.metrics.local_reset_stats()


@register
class MCC(EvalMetric):
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

    def __init__(self, name: str = "mcc", output_names=None, label_names=None,
                 average: str = "macro"):
        self._average = average
        self._metrics = _BinaryClassificationMetrics()
        super().__init__(name=name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, labels, preds) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            self._metrics.update_binary_stats(label, pred)
        m = self._metrics
        if self._average == "macro":
            self.sum_metric += m.matthewscc()
            self.global_sum_metric += m.matthewscc(use_global=True)
            self.num_inst += 1
            self.global_num_inst += 1
            m.reset_stats()
        else:
            self.sum_metric = m.matthewscc() * m.total_examples
            self.global_sum_metric = m.matthewscc(use_global=True) * m.global_total_examples
            self.num_inst = m.total_examples
            self.global_num_inst = m.global_total_examples

    def reset(self) -> None:
        self.sum_metric = 0.0
        self.num_inst = 0.0
        self.global_sum_metric = 0.0
        self.global_num_inst = 0.0
        self._metrics.reset_stats()

    def reset_local(self) -> None:
        self.sum_metric = 0.0
        self.num_inst = 0.0
        self._metrics.local_reset_stats()


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
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.sum_metric / self.num_inst))

    def get_global(self) -> tuple:
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.global_sum_metric / self.global_num_inst))


# ---------------------------------------------------------------------- regression

def _as_columns(label, pred):
    label, pred = _np(label), _np(pred)
    if label.ndim == 1:
        label = label.reshape(label.shape[0], 1)
    if pred.ndim == 1:
        pred = pred.reshape(pred.shape[0], 1)
    return label, pred


@register
class MAE(EvalMetric):
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
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, labels, preds) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            label, pred = _as_columns(label, pred)
            self._add(float(numpy.abs(label - pred).mean()), 1)


@register
class MSE(EvalMetric):
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
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, labels, preds) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            label, pred = _as_columns(label, pred)
            self._add(float(((label - pred) ** 2.0).mean()), 1)


@register
class RMSE(EvalMetric):
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
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, labels, preds) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            label, pred = _as_columns(label, pred)
            self._add(float(numpy.sqrt(((label - pred) ** 2.0).mean())), 1)


def _picked_nll(label, pred, eps):
    label, pred = _np(label).ravel(), _np(pred)
    if label.shape[0] != pred.shape[0]:
        raise ValueError(f"labels ({label.shape[0]}) and predictions ({pred.shape[0]}) "
                         "differ in number of samples")
    prob = pred[numpy.arange(label.shape[0]), label.astype(numpy.int64)]
    return float((-numpy.log(prob + eps)).sum()), label.shape[0]


@register
@alias("ce")
class CrossEntropy(EvalMetric):
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
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.eps = eps

    def update(self, labels, preds) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            self._add(*_picked_nll(label, pred, self.eps))


@register
@alias("nll_loss")
class NegativeLogLikelihood(EvalMetric):
    """Negative log-likelihood of predicted class probabilities: mean of
    ``-log(p[label] + eps)``.

    Args:
        eps: added to the probabilities before the log.
        name, output_names, label_names: as :class:`EvalMetric`.
    """

    def __init__(self, eps: float = 1e-12, name: str = "nll-loss", output_names=None,
                 label_names=None):
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.eps = eps

    def update(self, labels, preds) -> None:
        labels, preds = _wrap(labels, preds)
        for label, pred in zip(labels, preds):
            self._add(*_picked_nll(label, pred, self.eps))


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
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0
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
        if self.num_inst == 0:
            return (self.name, float("nan"))
        if self.average == "macro":
            return (self.name, self.sum_metric / self.num_inst)
        n = self._label_nums
        pearsonr = self._conv / ((n - 1) * numpy.sqrt(self._sse_p / (n - 1))
                                 * numpy.sqrt(self._sse_l / (n - 1)))
        return (self.name, float(pearsonr))

    def get_global(self) -> tuple:
        if self.average == "micro":
            return self.get()
        return super().get_global()


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


# ---------------------------------------------------------------------- losses, custom

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
        if _is_array(preds):
            preds = [preds]
        for pred in preds:
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


@register
class CustomMetric(EvalMetric):
    """A metric from a function ``feval(label, pred)`` on NumPy arrays, returning a value
    (counted once per pair) or a ``(sum_metric, num_inst)`` tuple.

    Args:
        feval: the function.
        name: the name (default: the function's name, ``custom(<lambda>)`` for lambdas).
        allow_extra_outputs: allow more predictions than labels (extra ones are ignored).
        output_names, label_names: as :class:`EvalMetric`.

    Example:
        >>> import numpy as np
        >>> from core import metric
        >>> m = metric.CustomMetric(lambda label, pred: (label + pred).mean())
        >>> m.update([np.array([2.5, 0.0, 2, 8])], [np.array([3, -0.5, 2, 7])])
        >>> m.get()
        ('custom(<lambda>)', 6.0)
    """

    def __init__(self, feval: Callable, name: str | None = None,
                 allow_extra_outputs: bool = False, output_names=None, label_names=None):
        if name is None:
            name = feval.__name__
            if "<" in name:
                name = f"custom({name})"
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds) -> None:
        if _is_array(labels):
            labels = [labels]
        if _is_array(preds):
            preds = [preds]
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds)
        for pred, label in zip(preds, labels):
            reval = self._feval(_np(label), _np(pred))
            if isinstance(reval, tuple):
                sum_metric, num_inst = reval
                self._add(float(sum_metric), num_inst)
            else:
                self._add(float(reval), 1)

    def get_config(self) -> dict:
        raise NotImplementedError("CustomMetric cannot be serialized")


def np(numpy_feval: Callable, name: str | None = None,
       allow_extra_outputs: bool = False) -> CustomMetric:
    """A :class:`CustomMetric` from a function of NumPy arrays (MXNet's ``metric.np``).

    Args:
        numpy_feval: ``feval(label, pred) -> float`` on NumPy arrays.
        name: the metric's name (default: the function's).
        allow_extra_outputs: allow more predictions than labels.

    Returns:
        The metric.

    Example:
        >>> import numpy
        >>> from core import metric
        >>> def abs_err(label, pred):
        ...     return numpy.abs(label - pred).mean()
        >>> m = metric.np(abs_err)
        >>> m.update([numpy.array([1.0, 2.0])], [numpy.array([1.5, 2.5])])
        >>> m.get()
        ('abs_err', 0.5)
    """

    def feval(label, pred):
        return numpy_feval(label, pred)

    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)
