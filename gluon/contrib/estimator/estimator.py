"""The :class:`Estimator` (MXNet 1.9's ``gluon.contrib.estimator.Estimator``)."""
from __future__ import annotations

import copy
import logging
import sys
import warnings

from core.context import Context, cpu, gpu, num_gpus
from core.metric import Loss as metric_loss

from ...data import DataLoader
from ...loss import Loss as gluon_loss
from ...trainer import Trainer
from .batch_processor import BatchProcessor
from .event_handler import (
    BatchBegin,
    BatchEnd,
    EpochBegin,
    EpochEnd,
    GradientUpdateHandler,
    LoggingHandler,
    MetricHandler,
    StoppingHandler,
    TrainBegin,
    TrainEnd,
    ValidationHandler,
    _check_event_handlers,
)
from .utils import _check_handler_metric_ref, _check_metrics, _suggest_metric_for_loss

__all__ = ["ContextUnavailableError", "Estimator"]


class ContextUnavailableError(ValueError, AssertionError):
    """A context the estimator was given does not exist (MXNet 1.9 raises AssertionError
    there, so this is one too)."""


class Estimator:
    """Trains and evaluates a Gluon network on DataLoaders, driven by event handlers.

    Args:
        net: the network (a Block); initialized on ``context`` if it is not yet.
        loss: a ``gluon.loss.Loss``.
        train_metrics: metrics for training (default: accuracy for a softmax
            cross-entropy loss, and the loss); their names get a ``'training '`` prefix.
        val_metrics: metrics for validation (default: copies of the training ones,
            named ``'validation ...'``).
        initializer: the initializer when the net is not initialized yet.
        trainer: a ``gluon.Trainer`` (default: SGD with learning rate 0.001, with a
            warning).
        context: a Context or a list (default: ``gpu(0)`` if there is a GPU, else
            ``cpu()``).
        val_net: the network for validation (default: ``net``).
        val_loss: the loss for validation (default: ``loss``).
        batch_processor: runs each batch (default :class:`BatchProcessor`); needs
            ``fit_batch`` and ``evaluate_batch``.

    Example:
        >>> import numpy as np
        >>> from core import metric
        >>> from gluon import nn, loss, Trainer
        >>> from gluon.data import ArrayDataset, DataLoader
        >>> net = nn.Dense(1)
        >>> net.initialize()
        >>> est = Estimator(net, loss.L2Loss(), train_metrics=metric.MAE(),
        ...                 trainer=Trainer(net.collect_params(), "sgd"))
        >>> est.logger.disabled = True
        >>> est.fit(DataLoader(ArrayDataset(np.ones((4, 2), "float32"), np.ones((4, 1))),
        ...                    batch_size=2), batches=3)
        >>> est.train_metrics[0].name
        'training mae'
    """

    logger = None

    def __init__(self, net, loss, train_metrics=None, val_metrics=None, initializer=None,
                 trainer=None, context=None, val_net=None, val_loss=None,
                 batch_processor=None):
        self.net = net
        self.loss = self._check_loss(loss)
        self._train_metrics = _check_metrics(train_metrics)
        self._val_metrics = _check_metrics(val_metrics)
        self._add_default_training_metrics()
        self._add_validation_metrics()
        self.val_loss = self.loss if val_loss is None else self._check_loss(val_loss)
        self.val_net = self.net if val_net is None else val_net
        # one logger per estimator (as MXNet), not the shared logging.getLogger("Estimator")
        self.logger = logging.Logger(name="Estimator", level=logging.INFO)  # noqa: LOG001
        self.logger.addHandler(logging.StreamHandler(sys.stdout))
        self.context = self._check_context(context)
        self._initialize(initializer)
        self.trainer = self._check_trainer(trainer)
        self.batch_processor = self._check_batch_processor(batch_processor)
        self.max_epoch = None
        self.max_batch = None
        self.batch_axis = 0

    # ------------------------------------------------------------------ checks
    @staticmethod
    def _check_loss(loss):
        if not isinstance(loss, gluon_loss):
            raise ValueError(  # noqa: TRY004 - MXNet raises ValueError
                f"loss must be a Loss, refer to gluon.loss.Loss:{loss}")
        return loss

    @staticmethod
    def _check_context(context) -> list:
        gpus = [gpu(i) for i in range(num_gpus())]
        if not context:
            if len(gpus) > 1:
                warnings.warn("You have multiple GPUs, gpu(0) will be used by default. To "
                              "utilize all your GPUs, specify context as a list of gpus, e.g. "
                              "context=[mx.gpu(0), mx.gpu(1)] ", stacklevel=3)
            return [gpus[0]] if gpus else [cpu()]
        if isinstance(context, Context):
            context = [context]
        elif not (isinstance(context, list) and all(isinstance(c, Context) for c in context)):
            raise ValueError("context must be a Context or a list of Context, for example "
                             "mx.cpu() or [mx.gpu(0), mx.gpu(1)], refer to mxnet.Context:"
                             f"{context}")
        for ctx in context:
            if ctx not in gpus and ctx.device_type != "cpu":
                raise ContextUnavailableError(
                    f"Estimator: {ctx} is not available, please make sure your context is in "
                    f"one of: mx.cpu(), {', '.join(str(g) for g in gpus)}")
        return context

    @staticmethod
    def _check_batch_processor(batch_processor):
        if batch_processor is None:
            return BatchProcessor()
        if not (callable(getattr(batch_processor, "fit_batch", None))
                and callable(getattr(batch_processor, "evaluate_batch", None))):
            raise ValueError(  # noqa: TRY004 - MXNet raises ValueError
                "Customized Batch Processor must contain fit_batch() and evaluate_batch() "
                "methods")
        return batch_processor

    def _is_initialized(self) -> bool:
        params = self.net.collect_params()
        for name in params:
            try:
                params[name].list_ctx()
            except RuntimeError:
                return False
        return True

    def _initialize(self, initializer) -> None:
        if not self._is_initialized():
            if initializer:
                self.net.initialize(init=initializer, ctx=self.context)
            else:
                self.net.initialize(ctx=self.context)
        elif initializer:
            warnings.warn("Network already fully initialized, skipping initialization. You "
                          "don't need to pass initializer if you already initialized your "
                          "net. You can use net.initialize(init=your_initializer, "
                          "force_reinit=True)to force re-initialize.", stacklevel=3)

    def _check_trainer(self, trainer):
        if not trainer:
            warnings.warn("No trainer specified, default SGD optimizer with learning rate "
                          "0.001 is used.", stacklevel=3)
            return Trainer(self.net.collect_params(), "sgd", {"learning_rate": 0.001})
        if not isinstance(trainer, Trainer):
            raise ValueError(  # noqa: TRY004 - MXNet raises ValueError
                f"Trainer must be a Gluon Trainer instance, refer to gluon.Trainer:{trainer}")
        return trainer

    def _get_data_and_label(self, batch, ctx, batch_axis=0):
        return self.batch_processor._get_data_and_label(batch, ctx, batch_axis)

    # ------------------------------------------------------------------ metrics
    def _add_default_training_metrics(self) -> None:
        if not self._train_metrics:
            suggested = _suggest_metric_for_loss(self.loss)
            if suggested:
                self._train_metrics = [suggested]
            self._train_metrics.append(metric_loss(self.loss.name.rstrip("1234567890")))
        for metric in self._train_metrics:
            metric.name = "training " + metric.name

    def _add_validation_metrics(self) -> None:
        if not self._val_metrics:
            self._val_metrics = [copy.deepcopy(m) for m in self._train_metrics]
        for metric in self._val_metrics:
            if "training" in metric.name:
                metric.name = metric.name.replace("training", "validation")
            else:
                metric.name = "validation " + metric.name

    @property
    def train_metrics(self) -> list:
        """The training metrics (names ``'training ...'``)."""
        return self._train_metrics

    @property
    def val_metrics(self) -> list:
        """The validation metrics (names ``'validation ...'``)."""
        return self._val_metrics

    # ------------------------------------------------------------------ loops
    def evaluate(self, val_data, batch_axis: int = 0, event_handlers=None) -> None:
        """Run ``val_net`` over ``val_data`` and update the validation metrics.

        Args:
            val_data: a ``gluon.data.DataLoader`` of ``(data, label)``.
            batch_axis: the batch axis, to split each batch over the contexts.
            event_handlers: more handlers (a MetricHandler and a LoggingHandler on the
                validation metrics are added unless given).
        """
        if not isinstance(val_data, DataLoader):
            raise ValueError(  # noqa: TRY004 - MXNet raises ValueError
                "Estimator only support input as Gluon DataLoader. Alternatively, you can "
                "transform your DataIter or any NDArray into Gluon DataLoader. Refer to "
                "gluon.data.DataLoader")
        for metric in self.val_metrics:
            metric.reset()
        handlers = self._prepare_default_validation_handlers(event_handlers)
        _, epoch_begin, batch_begin, batch_end, epoch_end, _ = self._categorize_handlers(
            handlers)
        for h in epoch_begin:
            h.epoch_begin(self)
        for batch in val_data:
            for h in batch_begin:
                h.batch_begin(self, batch=batch)
            _, label, pred, loss = self.batch_processor.evaluate_batch(self, batch, batch_axis)
            for h in batch_end:
                h.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
        for h in epoch_end:
            h.epoch_end(self)

    def fit(self, train_data, val_data=None, epochs=None, event_handlers=None, batches=None,
            batch_axis: int = 0) -> None:
        """Train for ``epochs`` epochs or ``batches`` batches (exactly one of them).

        Args:
            train_data: a ``gluon.data.DataLoader`` of ``(data, label)``.
            val_data: a DataLoader to validate on after each epoch (or None).
            epochs: the number of epochs.
            event_handlers: more handlers; the defaults (StoppingHandler,
                GradientUpdateHandler, MetricHandler, ValidationHandler when ``val_data``
                is given, LoggingHandler) are added unless one of the type is given.
            batches: the number of batches.
            batch_axis: the batch axis, to split each batch over the contexts.
        """
        if not isinstance(train_data, DataLoader):
            raise ValueError(  # noqa: TRY004 - MXNet raises ValueError
                "Estimator only support input as Gluon DataLoader. Alternatively, you can "
                "transform your DataIter or any NDArray into Gluon DataLoader. Refer to "
                "gluon.data.dataloader")
        if (not epochs) == (not batches):
            raise ValueError("Fit only support exactly one type of iteration, train by "
                             "number of epochs or number of batches.Please specify one and "
                             "only one of: epochs or batches.")
        self.max_epoch = epochs
        self.max_batch = batches
        self.batch_axis = batch_axis
        handlers = self._prepare_default_handlers(val_data, event_handlers)
        train_begin, epoch_begin, batch_begin, batch_end, epoch_end, train_end = \
            self._categorize_handlers(handlers)
        for h in train_begin:
            h.train_begin(self)
        while True:
            for h in epoch_begin:
                h.epoch_begin(self)
            for batch in train_data:
                for h in batch_begin:
                    h.batch_begin(self, batch=batch)
                _, label, pred, loss = self.batch_processor.fit_batch(self, batch, batch_axis)
                stop = [h.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
                        for h in batch_end]
                if any(stop):
                    break
            if any([h.epoch_end(self) for h in epoch_end]):  # noqa: C419 - call every one
                break
        for h in train_end:
            h.train_end(self)

    def _prepare_default_handlers(self, val_data, event_handlers) -> list:
        handlers = _check_event_handlers(event_handlers)
        added = [StoppingHandler(self.max_epoch, self.max_batch)]
        if not any(isinstance(h, GradientUpdateHandler) for h in handlers):
            added.append(GradientUpdateHandler())
        if not any(isinstance(h, MetricHandler) for h in handlers):
            added.append(MetricHandler(metrics=self.train_metrics))
        if not any(isinstance(h, ValidationHandler) for h in handlers) and val_data:
            added.append(ValidationHandler(val_data=val_data, eval_fn=self.evaluate))
        if not any(isinstance(h, LoggingHandler) for h in handlers):
            added.append(LoggingHandler(metrics=self.train_metrics))
        mixing = bool(handlers) and bool(added)
        handlers.extend(added)
        if mixing:  # user handlers must refer to the metrics the default ones update
            known = set(self.train_metrics + self.val_metrics)
            for h in handlers:
                _check_handler_metric_ref(h, known)
        handlers.sort(key=lambda h: getattr(h, "priority", 0))
        return handlers

    def _prepare_default_validation_handlers(self, event_handlers) -> list:
        handlers = _check_event_handlers(event_handlers)
        added = []
        if not any(isinstance(h, MetricHandler) for h in handlers):
            added.append(MetricHandler(metrics=self.val_metrics))
        if not any(isinstance(h, LoggingHandler) for h in handlers):
            added.append(LoggingHandler(metrics=self.val_metrics))
        mixing = bool(handlers) and bool(added)
        handlers.extend(added)
        if mixing:
            known = set(self.val_metrics)
            for h in handlers:
                _check_handler_metric_ref(h, known)
        handlers.sort(key=lambda h: getattr(h, "priority", 0))
        return handlers

    @staticmethod
    def _categorize_handlers(handlers) -> tuple:
        kinds = (TrainBegin, EpochBegin, BatchBegin, BatchEnd, EpochEnd, TrainEnd)
        return tuple([h for h in handlers if isinstance(h, kind)] for kind in kinds)
