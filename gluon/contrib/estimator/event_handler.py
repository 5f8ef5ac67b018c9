"""The estimator's event handlers (MXNet 1.9's ``gluon.contrib.estimator.event_handler``).

A handler subclasses one or more of :class:`TrainBegin`, :class:`TrainEnd`,
:class:`EpochBegin`, :class:`EpochEnd`, :class:`BatchBegin`, :class:`BatchEnd`; the
estimator calls ``train_begin(estimator)``, ``epoch_begin``, ``batch_begin(estimator,
batch=...)``, ``batch_end(estimator, batch=, pred=, label=, loss=)``, ``epoch_end``,
``train_end`` on them, in the order of their ``priority`` (lowest first). ``batch_end``
and ``epoch_end`` returning True stops the batch loop, resp. training.
"""
from __future__ import annotations

import math
import os
import tempfile
import time
import warnings

import numpy as np

from core.metric import CompositeEvalMetric, EvalMetric
from core.metric import Loss as metric_loss

from .utils import _check_metrics

__all__ = ["BatchBegin", "BatchEnd", "CheckpointHandler", "EarlyStoppingHandler",
           "EpochBegin", "EpochEnd", "EventHandler", "GradientUpdateHandler",
           "LoggingHandler", "MetricHandler", "StoppingHandler", "TrainBegin", "TrainEnd",
           "ValidationHandler"]


class EventHandler:
    """Base class of the event handlers."""


def _check_event_handlers(handlers) -> list:
    if isinstance(handlers, EventHandler):
        return [handlers]
    handlers = list(handlers or [])
    if not all(isinstance(h, EventHandler) for h in handlers):
        raise ValueError(f"handlers must be an EventHandler or a list of EventHandler, got: "
                         f"{handlers}")
    return handlers


class TrainBegin(EventHandler):
    """Called once when ``fit`` starts."""

    def train_begin(self, estimator, *args, **kwargs):
        pass


class TrainEnd(EventHandler):
    """Called once when ``fit`` ends."""

    def train_end(self, estimator, *args, **kwargs):
        pass


class EpochBegin(EventHandler):
    """Called at the start of each epoch (and of ``evaluate``)."""

    def epoch_begin(self, estimator, *args, **kwargs):
        pass


class EpochEnd(EventHandler):
    """Called at the end of each epoch; returning True stops training."""

    def epoch_end(self, estimator, *args, **kwargs):
        return False


class BatchBegin(EventHandler):
    """Called before each batch, with ``batch=``."""

    def batch_begin(self, estimator, *args, **kwargs):
        pass


class BatchEnd(EventHandler):
    """Called after each batch, with ``batch``, ``pred``, ``label``, ``loss``; returning
    True ends the epoch's batch loop."""

    def batch_end(self, estimator, *args, **kwargs):
        return False


class StoppingHandler(TrainBegin, BatchEnd, EpochEnd):
    """Stops training after ``max_epoch`` epochs or ``max_batch`` batches.

    Args:
        max_epoch: the number of epochs (or None).
        max_batch: the number of batches (or None).

    Example:
        >>> h = StoppingHandler(max_batch=2)
        >>> h.batch_end(None), h.batch_end(None)
        (False, True)
    """

    def __init__(self, max_epoch=None, max_batch=None):
        self.max_epoch = max_epoch
        self.max_batch = max_batch
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def train_begin(self, estimator, *args, **kwargs):
        self.max_epoch = estimator.max_epoch
        self.max_batch = estimator.max_batch
        self.current_batch = 0
        self.current_epoch = 0

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.current_batch == self.max_batch:
            self.stop_training = True
        return self.stop_training

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.current_epoch == self.max_epoch:
            self.stop_training = True
        return self.stop_training


class MetricHandler(EpochBegin, BatchEnd):
    """Resets the metrics at each epoch and updates them after each batch (``Loss``
    metrics with the loss, the others with labels and predictions).

    Args:
        metrics: the metrics to update.
        priority: the handler's place in the order (default -1000: early).
    """

    def __init__(self, metrics, priority=-1000):
        self.metrics = _check_metrics(metrics)
        self.priority = priority

    def epoch_begin(self, estimator, *args, **kwargs):
        for metric in self.metrics:
            metric.reset()

    def batch_end(self, estimator, *args, **kwargs):
        pred, label, loss = kwargs["pred"], kwargs["label"], kwargs["loss"]
        for metric in self.metrics:
            if isinstance(metric, metric_loss):
                metric.update(0, loss)
            else:
                metric.update(label, pred)


class ValidationHandler(TrainBegin, BatchEnd, EpochEnd):
    """Runs ``eval_fn`` (the estimator's ``evaluate``) every ``epoch_period`` epochs
    and/or every ``batch_period`` batches.

    Args:
        val_data: the validation DataLoader.
        eval_fn: ``eval_fn(val_data=, batch_axis=, event_handlers=)``.
        epoch_period: validate every this many epochs (None: never at epoch ends).
        batch_period: validate every this many batches (None: never at batch ends).
        priority: the handler's place in the order (default -1000).
        event_handlers: the handlers ``evaluate`` runs with.
    """

    def __init__(self, val_data, eval_fn, epoch_period=1, batch_period=None, priority=-1000,
                 event_handlers=None):
        self.val_data = val_data
        self.eval_fn = eval_fn
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.current_batch = 0
        self.current_epoch = 0
        self.priority = priority
        self.event_handlers = event_handlers

    def train_begin(self, estimator, *args, **kwargs):
        self.current_batch = 0
        self.current_epoch = 0

    def _validate(self, estimator):
        self.eval_fn(val_data=self.val_data, batch_axis=estimator.batch_axis,
                     event_handlers=self.event_handlers)

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.batch_period and self.current_batch % self.batch_period == 0:
            self._validate(estimator)

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.epoch_period and self.current_epoch % self.epoch_period == 0:
            self._validate(estimator)


def _metrics_text(metrics) -> str:
    return ", ".join(f"{name}: {value:.4f}" for name, value in (m.get() for m in metrics))


class LoggingHandler(TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd):
    """Logs the optimizer, times and metric values through ``estimator.logger``.

    Args:
        log_interval: ``'epoch'`` (log at epoch ends) or an int (also every this many
            batches).
        metrics: the metrics to log.
        priority: the handler's place in the order (default: last).
    """

    def __init__(self, log_interval="epoch", metrics=None, priority=math.inf):
        if not isinstance(log_interval, int) and log_interval != "epoch":
            raise ValueError("log_interval must be either an integer or string 'epoch'")
        self.metrics = _check_metrics(metrics)
        self.batch_index = 0
        self.current_epoch = 0
        self.processed_samples = 0
        self.priority = priority
        self.log_interval = log_interval
        self.log_interval_time = 0

    def train_begin(self, estimator, *args, **kwargs):
        self.train_start = time.time()
        trainer = estimator.trainer
        estimator.logger.info("Training begin: using optimizer %s with current learning "
                              "rate %.4f ", type(trainer.optimizer).__name__,
                              trainer.learning_rate)
        if estimator.max_epoch:
            estimator.logger.info("Train for %d epochs.", estimator.max_epoch)
        else:
            estimator.logger.info("Train for %d batches.", estimator.max_batch)
        self.current_epoch = 0
        self.batch_index = 0
        self.processed_samples = 0
        self.log_interval_time = 0

    def train_end(self, estimator, *args, **kwargs):
        train_time = time.time() - self.train_start
        msg = f"Train finished using total {int(train_time)}s with {self.current_epoch} epochs. "
        estimator.logger.info((msg + _metrics_text(self.metrics)).rstrip(", "))

    def batch_begin(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int):
            self.batch_start = time.time()

    def batch_end(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int):
            self.processed_samples += kwargs["batch"][0].shape[0]
            self.log_interval_time += time.time() - self.batch_start
            if self.batch_index % self.log_interval == 0:
                msg = (f"[Epoch {self.current_epoch}][Batch {self.batch_index}][Samples "
                       f"{self.processed_samples}] time/interval: {self.log_interval_time:.3f}s ")
                self.log_interval_time = 0
                estimator.logger.info((msg + _metrics_text(self.metrics)).rstrip(", "))
        self.batch_index += 1

    def epoch_begin(self, estimator, *args, **kwargs):
        self.epoch_start = time.time()
        if any("training" in metric.name for metric in self.metrics):
            estimator.logger.info("[Epoch %d] Begin, current learning rate: %.4f",
                                  self.current_epoch, estimator.trainer.learning_rate)
        else:
            estimator.logger.info("Validation Begin")

    def epoch_end(self, estimator, *args, **kwargs):
        msg = (f"[Epoch {self.current_epoch}] Finished in "
               f"{time.time() - self.epoch_start:.3f}s, ")
        estimator.logger.info((msg + _metrics_text(self.metrics)).rstrip(", "))
        self.current_epoch += 1
        self.batch_index = 0


def _monitor_op(handler: str, monitor, mode: str):
    """``(np.less or np.greater)`` for ``mode``; 'auto' picks greater, as MXNet 1.9 does
    (its test ``'acc' or 'f1' in name`` is always true), with its warning."""
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"{handler} mode {mode} is unknown, fallback to auto mode.",
                      RuntimeWarning, stacklevel=3)
        mode = "auto"
    if mode == "min":
        return np.less
    if mode == "max":
        return np.greater
    warnings.warn(f"`greater` operator will be used to determine if {monitor.get()[0]} has "
                  "improved. Please specify `mode='min'` to use the `less` operator. Specify "
                  "`mode='max' to disable this warning.`", stacklevel=3)
    return np.greater


class CheckpointHandler(TrainBegin, BatchEnd, EpochEnd):
    """Saves parameters and trainer states every ``epoch_period`` epochs / ``batch_period``
    batches as ``<model_prefix>-epoch<E>batch<B>.params``/``.states`` (keeping the last
    ``max_checkpoints``), the best model by ``monitor`` as ``<model_prefix>-best``, the
    symbol of a hybridized net, and can resume training from the latest checkpoint.

    Args:
        model_dir: the folder of the files (created if missing).
        model_prefix: the files' prefix.
        monitor: the metric to compare (needed with ``save_best``).
        verbose: 1 logs each save.
        save_best: also keep the best model by ``monitor``.
        mode: ``'min'``, ``'max'`` or ``'auto'`` (how ``monitor`` improves).
        epoch_period: save every this many epochs (None: not at epochs).
        batch_period: save every this many batches (None: not at batches).
        max_checkpoints: how many periodic checkpoints to keep.
        resume_from_checkpoint: load the latest checkpoint in ``model_dir`` at
            ``train_begin`` and train only what is left.
    """

    def __init__(self, model_dir, model_prefix="model", monitor=None, verbose=0,
                 save_best=False, mode="auto", epoch_period=1, batch_period=None,
                 max_checkpoints=5, resume_from_checkpoint=False):
        self.monitor = monitor
        self.verbose = verbose
        os.makedirs(model_dir, exist_ok=True)
        self.model_dir = model_dir
        self.model_prefix = model_prefix
        self.save_best = save_best
        if self.save_best and not isinstance(self.monitor, EvalMetric):
            raise ValueError("To save best model only, please provide one of the metric "
                             "objects from estimator.train_metrics and estimator.val_metrics "
                             "as monitor.")
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.current_batch = 0
        self.current_epoch = 0
        self.max_checkpoints = max_checkpoints
        self.resume_from_checkpoint = resume_from_checkpoint
        self.saved_checkpoints: list = []
        if self.save_best:
            self.monitor_op = _monitor_op("CheckpointHandler", monitor, mode)
            self.best = np.inf if self.monitor_op is np.less else -np.inf

    def train_begin(self, estimator, *args, **kwargs):
        self.current_epoch = 0
        self.current_batch = 0
        if self.save_best:
            self.best = np.inf if self.monitor_op is np.less else -np.inf
        if self.resume_from_checkpoint:
            msg = ("To use resume from checkpoint, you must only specify the same type of "
                   "period you used for training. For example, if you are training based on "
                   "number of epochs, you must save only based on epochs, and set "
                   "batch_period to None.")
            if estimator.max_batch and (not self.batch_period or self.epoch_period):
                raise ValueError(msg)
            if estimator.max_epoch and (not self.epoch_period or self.batch_period):
                raise ValueError(msg)
            self._resume_from_checkpoint(estimator)

    def batch_end(self, estimator, *args, **kwargs):
        if self.current_batch == 0:
            self._save_symbol(estimator)
        if self.batch_period and (self.current_batch + 1) % self.batch_period == 0:
            self._save_checkpoint(estimator)
        self.current_batch += 1

    def epoch_end(self, estimator, *args, **kwargs):
        if self.epoch_period and (self.current_epoch + 1) % self.epoch_period == 0:
            self._save_checkpoint(estimator)
        self.current_epoch += 1

    def _save_checkpoint(self, estimator):
        if self.resume_from_checkpoint:
            epoch = self.current_epoch + self.trained_epoch + 1
            batch = self.current_batch + self.trained_batch + (0 if estimator.max_epoch else 1)
        else:
            epoch, batch = self.current_epoch, self.current_batch
        prefix = f"{self.model_prefix}-epoch{epoch}batch{batch}"
        self._save_params_and_trainer(estimator, prefix)
        if self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: trained total %d batches, "
                                  "saving model at %s with prefix: %s", self.current_epoch,
                                  self.current_batch + 1, self.model_dir, prefix)
        if not self.save_best:
            return
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(f"Skipping save best because {name} is not updated, make sure you "
                          "pass one of the metric objects estimator.train_metrics and "
                          "estimator.val_metrics as monitor", RuntimeWarning, stacklevel=2)
        elif self.monitor_op(value, self.best):
            self._save_params_and_trainer(estimator, self.model_prefix + "-best")
            if self.verbose > 0:
                estimator.logger.info("[Epoch %d] CheckpointHandler: %s improved from %0.5f "
                                      "to %0.5f, updating best model at %s with prefix: %s",
                                      self.current_epoch, name, self.best, value,
                                      self.model_dir, self.model_prefix + "-best")
            self.best = value
        elif self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: %s did not improve from "
                                  "%0.5f, skipping updating best model", self.current_batch,
                                  name, self.best)

    def _save_symbol(self, estimator):
        symbol_file = os.path.join(self.model_dir, self.model_prefix + "-symbol.json")
        net = estimator.net
        if getattr(net, "_active", False) and getattr(net, "_last_cached", None) is not None:
            with tempfile.TemporaryDirectory(dir=self.model_dir) as tmp:
                try:  # the traced graph, in MXNet's spelling where it has one
                    written, _ = net.export(os.path.join(tmp, "net"))
                except ValueError:
                    written, _ = net.export(os.path.join(tmp, "net"), mxnet_compatible=False)
                os.replace(written, symbol_file)
        else:
            estimator.logger.info("Model architecture(symbol file) is not saved, please use "
                                  "HybridBlock to construct your model, and call "
                                  "net.hybridize() before passing to Estimator in order to "
                                  "save model architecture as %s.", symbol_file)

    def _save_params_and_trainer(self, estimator, file_prefix):
        estimator.net.save_parameters(os.path.join(self.model_dir, file_prefix + ".params"))
        estimator.trainer.save_states(os.path.join(self.model_dir, file_prefix + ".states"))
        if "best" not in file_prefix:
            self.saved_checkpoints.append(file_prefix)
        if len(self.saved_checkpoints) > self.max_checkpoints:
            prefix = self.saved_checkpoints.pop(0)
            for fname in os.listdir(self.model_dir):
                if fname.startswith(prefix):
                    os.remove(os.path.join(self.model_dir, fname))

    def _resume_from_checkpoint(self, estimator):
        prefix = self.model_prefix + "-epoch"
        self.trained_epoch = self._find_max_iteration(self.model_dir, prefix, "epoch", "batch",
                                                      self.saved_checkpoints)
        prefix += str(self.trained_epoch)
        self.trained_batch = self._find_max_iteration(self.model_dir, prefix, "batch",
                                                      ".params")
        if self.trained_epoch == -1:
            what = (f"{estimator.max_batch} batches" if estimator.max_batch
                    else f"{estimator.max_epoch} epochs")
            estimator.logger.info("CheckpointHandler: No checkpoint found, training from "
                                  "scratch for " + what)
            return
        msg = (f"CheckpointHandler: Checkpoint resumed from epoch {self.trained_epoch} batch "
               f"{self.trained_batch}, continue to train for ")
        if estimator.max_epoch:
            if self.trained_epoch >= estimator.max_epoch - 1:
                raise ValueError(f"Found checkpoint with maximum number of epoch "
                                 f"{estimator.max_epoch} reached, please specify "
                                 "resume_from_checkpoint=False (default value) if you want to "
                                 "train from scratch.")
            estimator.max_epoch = estimator.max_epoch - self.trained_epoch - 1
            msg += f"{estimator.max_epoch} epochs "
        if estimator.max_batch:
            if self.trained_batch >= estimator.max_batch - 1:
                raise ValueError(f"Found checkpoint with maximum number of batch "
                                 f"{self.trained_batch} reached, please specify "
                                 "resume_from_checkpoint=False (default value) if you want to "
                                 "train from scratch.")
            estimator.max_batch = estimator.max_batch - self.trained_batch - 1
            msg += f"{estimator.max_batch} batches "
        stem = f"{self.model_prefix}-epoch{self.trained_epoch}batch{self.trained_batch}"
        param_file = os.path.join(self.model_dir, stem + ".params")
        trainer_file = os.path.join(self.model_dir, stem + ".states")
        for f in (param_file, trainer_file):
            if not os.path.exists(f):
                raise FileNotFoundError(f"CheckpointHandler: failed to load checkpoint, {f} "
                                        "does not exist")
        estimator.net.load_parameters(param_file, ctx=estimator.context)
        estimator.trainer.load_states(trainer_file)
        estimator.logger.warning(msg)

    @staticmethod
    def _find_max_iteration(folder, prefix, start, end, saved_checkpoints=None) -> int:
        max_iter = -1
        for fname in os.listdir(folder):
            if fname.startswith(prefix) and ".params" in fname:
                if saved_checkpoints:
                    saved_checkpoints.append(fname[:fname.find(".params")])
                try:
                    it = int(fname[fname.find(start) + len(start):fname.find(end)])
                except ValueError:
                    raise ValueError(
                        f"Error parsing checkpoint file {fname!r}, please check your "
                        "checkpoints have the format: "
                        "{model_name}-epoch{epoch_number}batch{batch_number}.params, there "
                        "should also be a .states file for each .params file") from None
                max_iter = max(max_iter, it)
        return max_iter


class EarlyStoppingHandler(TrainBegin, EpochEnd, TrainEnd):
    """Stops training when ``monitor`` has not improved by ``min_delta`` for ``patience``
    epochs.

    Args:
        monitor: the metric (one of the estimator's, not a composite).
        min_delta: the least change that counts as an improvement.
        patience: how many epochs without improvement to allow.
        mode: ``'min'``, ``'max'`` or ``'auto'``.
        baseline: the value to improve on first (default: +-inf).
    """

    def __init__(self, monitor, min_delta=0, patience=0, mode="auto", baseline=None):
        if not isinstance(monitor, EvalMetric):
            raise ValueError(  # noqa: TRY004 - MXNet raises ValueError
                "Please provide one of the metric objects from estimator.train_metrics and "
                "estimator.val_metrics as monitor.")
        if isinstance(monitor, CompositeEvalMetric):
            raise ValueError(  # noqa: TRY004 - MXNet raises ValueError
                "CompositeEvalMetric is not supported for EarlyStoppingHandler, please "
                "specify a simple metric instead.")
        self.monitor = monitor
        self.baseline = baseline
        self.patience = patience
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        self.monitor_op = _monitor_op("EarlyStopping", monitor, mode)
        self.min_delta = min_delta if self.monitor_op is np.greater else -min_delta

    def train_begin(self, estimator, *args, **kwargs):
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        if self.baseline is not None:
            self.best = self.baseline
        else:
            self.best = np.inf if self.monitor_op is np.less else -np.inf

    def epoch_end(self, estimator, *args, **kwargs):
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(f"{name} is not updated, make sure you pass one of the metric "
                          "objects from estimator.train_metrics and estimator.val_metrics as "
                          "monitor.", RuntimeWarning, stacklevel=2)
        elif self.monitor_op(value - self.min_delta, self.best):
            self.best = value
            self.wait = 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = self.current_epoch
                self.stop_training = True
        self.current_epoch += 1
        return self.stop_training

    def train_end(self, estimator, *args, **kwargs):
        if self.stopped_epoch > 0:
            estimator.logger.info("[Epoch %d] EarlyStoppingHanlder: early stopping due to %s "
                                  "not improving", self.stopped_epoch, self.monitor.get()[0])


class GradientUpdateHandler(BatchEnd):
    """Calls ``estimator.trainer.step(batch_size)`` after each batch (the batch size is the
    losses' first axes added).

    Args:
        priority: the handler's place in the order (default -2000: first).
    """

    def __init__(self, priority=-2000):
        self.priority = priority

    def batch_end(self, estimator, *args, **kwargs):
        loss = kwargs["loss"]
        losses = loss if isinstance(loss, list) else [loss]
        estimator.trainer.step(sum(one.shape[0] for one in losses))
