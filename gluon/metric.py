"""Evaluation metrics for Gluon (``gluon.metric``, as in MXNet 2.0): the metrics of
:mod:`core.metric` (MXNet 1.x's ``mx.metric``) under Gluon's namespace.

Example:
    >>> from gluon import metric
    >>> metric.create('acc').name
    'accuracy'
"""
from core.metric import (  # noqa: F401 - re-exported
    F1,
    MAE,
    MCC,
    MSE,
    PCC,
    RMSE,
    Accuracy,
    Caffe,
    CompositeEvalMetric,
    CrossEntropy,
    CustomMetric,
    EvalMetric,
    Loss,
    NegativeLogLikelihood,
    PearsonCorrelation,
    Perplexity,
    TopKAccuracy,
    Torch,
    __all__,
    alias,
    check_label_shapes,
    create,
    np,
    register,
)
