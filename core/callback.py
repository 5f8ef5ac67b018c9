"""Training callbacks of MXNet 1.x (``mx.callback``), for ``Module.fit`` and ``FeedForward``.

Batch-end callbacks take a :class:`core.model.BatchEndParam` (``epoch``, ``nbatch``,
``eval_metric``, ``locals``); epoch-end callbacks take ``(epoch, symbol, arg_params,
aux_params)``. Messages go to the ``logging`` module at INFO level, in MXNet's wording.

Example:
    >>> import logging
    >>> from core import callback, metric
    >>> from core.model import BatchEndParam
    >>> acc = metric.Accuracy()
    >>> speed = callback.Speedometer(batch_size=32, frequent=2)
    >>> for n in range(5):
    ...     speed(BatchEndParam(epoch=0, nbatch=n, eval_metric=acc, locals=None))
"""
from __future__ import annotations

import logging
import math
import time

from .model import save_checkpoint

__all__ = ["LogValidationMetricsCallback", "ProgressBar", "Speedometer", "do_checkpoint",
           "log_train_metric", "module_checkpoint"]

_LOG = logging.getLogger(__name__)


def _period(period) -> int:
    return int(max(1, period))


def module_checkpoint(mod, prefix: str, period: int = 1, save_optimizer_states: bool = False):
    """An epoch-end callback calling ``mod.save_checkpoint`` every ``period`` epochs.

    Args:
        mod: the module to save.
        prefix: the checkpoint prefix.
        period: save every this many epochs.
        save_optimizer_states: also write the optimizer states.

    Returns:
        The callback.
    """
    period = _period(period)

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)
    return _callback


def do_checkpoint(prefix: str, period: int = 1):
    """An epoch-end callback writing a checkpoint (``prefix-%04d.params`` for epoch + 1).

    Example:
        >>> import os, tempfile
        >>> from core import nd, sym
        >>> prefix = os.path.join(tempfile.mkdtemp(), "m")
        >>> cb = do_checkpoint(prefix, period=2)
        >>> net = sym.FullyConnected(sym.var("data"), num_hidden=1, name="fc")
        >>> for epoch in range(4):
        ...     cb(epoch, net, {"fc_weight": nd.ones((1, 2))}, {})
        >>> sorted(os.listdir(os.path.dirname(prefix)))
        ['m-0002.params', 'm-0004.params', 'm-symbol.json']
    """
    period = _period(period)

    def _callback(iter_no, sym, arg, aux):
        if (iter_no + 1) % period == 0:
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)
    return _callback


def log_train_metric(period: int, auto_reset: bool = False):
    """A batch-end callback logging the training metric every ``period`` batches.

    Args:
        period: log every this many batches.
        auto_reset: reset the metric's local statistics after logging.
    """
    def _callback(param):
        if param.nbatch % period == 0 and param.eval_metric is not None:
            for name, value in param.eval_metric.get_name_value():
                _LOG.info("Iter[%d] Batch[%d] Train-%s=%f", param.epoch, param.nbatch,
                             name, value)
            if auto_reset:
                param.eval_metric.reset_local()
    return _callback


class Speedometer:
    """Logs the training speed (samples/sec) and metric every ``frequent`` batches.

    Args:
        batch_size: samples per batch.
        frequent: log every this many batches.
        auto_reset: reset the metric's local statistics after logging, so each line
            shows the metric of the last ``frequent`` batches.
    """

    def __init__(self, batch_size: int, frequent: int = 50, auto_reset: bool = True):
        self.batch_size = batch_size
        self.frequent = frequent
        self.init = False
        self.tic = 0.0
        self.last_count = 0
        self.auto_reset = auto_reset

    def __call__(self, param) -> None:
        count = param.nbatch
        if self.last_count > count:
            self.init = False  # a new epoch
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = time.time()
            return
        if count % self.frequent != 0:
            return
        elapsed = time.time() - self.tic
        speed = self.frequent * self.batch_size / elapsed if elapsed > 0 else float("inf")
        if param.eval_metric is not None:
            name_value = param.eval_metric.get_name_value()
            if self.auto_reset:
                param.eval_metric.reset_local()
                msg = "Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec"
                msg += "\t%s=%f" * len(name_value)
                _LOG.info(msg, param.epoch, count - self.frequent, count, speed,
                             *sum(name_value, ()))
            else:
                msg = "Epoch[%d] Batch [0-%d]\tSpeed: %.2f samples/sec"
                msg += "\t%s=%f" * len(name_value)
                _LOG.info(msg, param.epoch, count, speed, *sum(name_value, ()))
        else:
            _LOG.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec", param.epoch, count,
                         speed)
        self.tic = time.time()


class ProgressBar:
    """Logs a text progress bar of ``nbatch`` out of ``total`` batches.

    Args:
        total: the number of batches per epoch.
        length: the bar's width in characters.
    """

    def __init__(self, total: int, length: int = 80):
        self.bar_len = length
        self.total = total

    def __call__(self, param) -> None:
        count = param.nbatch
        filled_len = round(self.bar_len * count / float(self.total))
        percents = math.ceil(100.0 * count / float(self.total))
        prog_bar = "=" * filled_len + "-" * (self.bar_len - filled_len)
        _LOG.info("[%s] %s%s\r", prog_bar, percents, "%")


class LogValidationMetricsCallback:
    """An eval-end callback logging the validation metric of each epoch."""

    def __call__(self, param) -> None:
        if not param.eval_metric:
            return
        for name, value in param.eval_metric.get_name_value():
            _LOG.info("Epoch[%d] Validation-%s=%f", param.epoch, name, value)
