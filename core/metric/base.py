"""The base of the evaluation metrics: :class:`EvalMetric`, the registry of metric names
(:func:`register`, :func:`alias`) and the checks and conversions every metric uses.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy

from ..ndarray import NDArray

__all__ = ["EvalMetric", "alias", "check_label_shapes", "register"]


_REGISTRY: dict = {}


def _is_array(x) -> bool:
    return isinstance(x, (NDArray, numpy.ndarray))


def _as_list(x):
    """``[x]`` for a single array, else ``x`` (a list of arrays)."""
    return [x] if _is_array(x) else x


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
        labels, preds = _as_list(labels), _as_list(preds)
    return labels, preds


def _wrap(labels, preds):
    """Lists of labels and predictions (single arrays wrapped) of equal length."""
    return check_label_shapes(_as_list(labels), _as_list(preds))


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
        return (self.name, _mean(self.sum_metric, self.num_inst))

    def get_global(self) -> tuple:
        """``(name, value)`` of the global tally."""
        if self._has_global_stats:
            return (self.name, _mean(self.global_sum_metric, self.global_num_inst))
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


def _mean(sum_metric, num_inst):
    """``sum_metric / num_inst``, NaN for no instances."""
    return float("nan") if num_inst == 0 else sum_metric / num_inst


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
