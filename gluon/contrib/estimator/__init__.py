"""MXNet 1.9's ``gluon.contrib.estimator``: a training loop with event handlers.

:class:`Estimator` runs ``fit`` (by epochs or by batches) and ``evaluate`` over Gluon
DataLoaders; what happens around each batch and epoch is done by event handlers
(:mod:`.event_handler`): updating the parameters, the metrics, validation, logging,
checkpoints and early stopping. The batch itself is the :class:`BatchProcessor`'s job.

Example:
    >>> import numpy as np
    >>> from gluon import nn, loss, Trainer
    >>> from gluon.data import ArrayDataset, DataLoader
    >>> from gluon.contrib.estimator import Estimator
    >>> net = nn.Dense(2)
    >>> net.initialize()
    >>> data = DataLoader(ArrayDataset(np.ones((8, 3), "float32"), np.zeros(8)), batch_size=4)
    >>> est = Estimator(net, loss.SoftmaxCrossEntropyLoss(),
    ...                 trainer=Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1}))
    >>> est.logger.disabled = True
    >>> est.fit(data, epochs=2)
    >>> [m.name for m in est.train_metrics]
    ['training accuracy', 'training softmaxcrossentropyloss']
"""
from . import batch_processor, estimator, event_handler
from .batch_processor import BatchProcessor
from .estimator import Estimator
from .event_handler import (
    BatchBegin,
    BatchEnd,
    CheckpointHandler,
    EarlyStoppingHandler,
    EpochBegin,
    EpochEnd,
    EventHandler,
    GradientUpdateHandler,
    LoggingHandler,
    MetricHandler,
    StoppingHandler,
    TrainBegin,
    TrainEnd,
    ValidationHandler,
)

__all__ = ["BatchBegin", "BatchEnd", "BatchProcessor", "CheckpointHandler",
           "EarlyStoppingHandler", "EpochBegin", "EpochEnd", "Estimator", "EventHandler",
           "GradientUpdateHandler", "LoggingHandler", "MetricHandler", "StoppingHandler",
           "TrainBegin", "TrainEnd", "ValidationHandler", "batch_processor", "estimator",
           "event_handler"]
