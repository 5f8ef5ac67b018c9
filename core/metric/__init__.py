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
from .base import EvalMetric, alias, check_label_shapes, register
from .classification import F1, MCC, PCC, Accuracy, TopKAccuracy
from .composite import CompositeEvalMetric, CustomMetric, create, np
from .loss import Caffe, CrossEntropy, Loss, NegativeLogLikelihood, Perplexity, Torch
from .regression import MAE, MSE, RMSE, PearsonCorrelation

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
