"""Metrics made of other metrics or of plain functions, and :func:`create`, which builds
any metric from a name, an instance, a list, a function or a config.
"""
from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable

from .base import _REGISTRY, EvalMetric, _as_list, _np, alias, check_label_shapes, register

__all__ = ["CompositeEvalMetric", "CustomMetric", "create", "np"]


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
        labels, preds = _as_list(labels), _as_list(preds)
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
