"""Checks the estimator shares: metric lists, handlers' metric references, default metrics."""
from __future__ import annotations

from core.metric import Accuracy, CompositeEvalMetric, EvalMetric

from ...loss import SoftmaxCrossEntropyLoss


def _check_metrics(metrics) -> list:
    """A list of metrics from a metric, a composite metric, a list or None."""
    if isinstance(metrics, CompositeEvalMetric):
        return [m for metric in metrics.metrics for m in _check_metrics(metric)]
    if isinstance(metrics, EvalMetric):
        return [metrics]
    metrics = list(metrics or [])
    bad = [m for m in metrics if not isinstance(m, EvalMetric)]
    if bad:
        raise ValueError("metrics must be a Metric or a list of Metric, refer to "
                         f"mxnet.metric.EvalMetric: {metrics} ({type(bad[0]).__name__} is not "
                         "one)")
    return metrics


def _check_handler_metric_ref(handler, known_metrics) -> None:
    """Every metric a handler refers to (its attributes named ``*metric*``) is known."""
    for attribute in dir(handler):
        if "metric" not in attribute:
            continue
        reference = getattr(handler, attribute)
        if not reference or callable(reference):
            continue
        for metric in reference if isinstance(reference, list) else [reference]:
            if metric not in known_metrics:
                raise ValueError(
                    f"Event handler {type(handler).__name__} refers to a metric instance "
                    f"{metric} outside of the known training and validation metrics. Please "
                    "use the metrics from estimator.train_metrics and estimator.val_metrics "
                    "instead.")


def _suggest_metric_for_loss(loss):
    """Accuracy for a softmax cross-entropy loss, else None."""
    if isinstance(loss, SoftmaxCrossEntropyLoss):
        return Accuracy()
    return None
