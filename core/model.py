"""MXNet 1.x's ``mx.model``: checkpoints, ``BatchEndParam`` and the ``FeedForward`` estimator.

A checkpoint is two files: ``prefix-symbol.json`` (the network, :meth:`Symbol.save`)
and ``prefix-%04d.params`` (``epoch``), the parameters under ``arg:<name>`` and
``aux:<name>`` keys written by :func:`core.serialization.save`.

Example:
    >>> import os, tempfile
    >>> from core import nd, sym
    >>> from core import model
    >>> net = sym.FullyConnected(sym.var("data"), num_hidden=2, name="fc")
    >>> prefix = os.path.join(tempfile.mkdtemp(), "net")
    >>> model.save_checkpoint(prefix, 3, net, {"fc_weight": nd.ones((2, 4)),
    ...                                        "fc_bias": nd.zeros((2,))}, {})
    >>> sorted(os.listdir(os.path.dirname(prefix)))
    ['net-0003.params', 'net-symbol.json']
    >>> s, args, auxs = model.load_checkpoint(prefix, 3)
    >>> s.list_arguments(), sorted(args), auxs
    (['data', 'fc_weight', 'fc_bias'], ['fc_bias', 'fc_weight'], {})
"""
from __future__ import annotations

import logging
import os
from collections import namedtuple

from .context import cpu

__all__ = ["BatchEndParam", "FeedForward", "load_checkpoint", "load_params",
           "save_checkpoint"]

_LOG = logging.getLogger(__name__)

BatchEndParam = namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])
BatchEndParam.__doc__ = """What a batch-end callback receives: epoch, batch number, the
metric and the caller's locals (MXNet's ``mx.model.BatchEndParam``)."""


def save_checkpoint(prefix: str, epoch: int, symbol, arg_params: dict, aux_params: dict,
                    remove_amp_cast: bool = True) -> None:
    """Write ``prefix-symbol.json`` (unless ``symbol`` is None) and ``prefix-%04d.params``.

    Args:
        prefix: the path prefix.
        epoch: the epoch number in the parameter file's name.
        symbol: the network (or None to write only the parameters).
        arg_params: ``{name: NDArray}`` of the arguments.
        aux_params: ``{name: NDArray}`` of the auxiliary states.
        remove_amp_cast: passed to :meth:`Symbol.save`.
    """
    from . import serialization
    if symbol is not None:
        symbol.save(f"{prefix}-symbol.json", remove_amp_cast=remove_amp_cast)
    save_dict = {f"arg:{k}": v.as_in_context(cpu()) for k, v in arg_params.items()}
    save_dict.update({f"aux:{k}": v.as_in_context(cpu()) for k, v in (aux_params or {}).items()})
    param_name = f"{prefix}-{int(epoch):04d}.params"
    serialization.save(param_name, save_dict)
    _LOG.info('Saved checkpoint to "%s"', param_name)


def split_params(save_dict, fname: str) -> tuple:
    """``(arg_params, aux_params)`` from a dict with ``arg:``/``aux:`` keys."""
    if not isinstance(save_dict, dict):
        raise TypeError(f"{fname}: expected named arrays ('arg:<name>'/'aux:<name>'), got a "
                         f"list of {len(save_dict)} arrays")
    arg_params, aux_params = {}, {}
    for k, v in save_dict.items():
        kind, sep, name = k.partition(":")
        if not sep or kind not in ("arg", "aux"):
            raise ValueError(f"{fname}: key {k!r} is neither 'arg:<name>' nor 'aux:<name>' "
                             "(not a checkpoint's parameter file)")
        (arg_params if kind == "arg" else aux_params)[name] = v
    return arg_params, aux_params


def load_params(prefix: str, epoch: int) -> tuple:
    """``(arg_params, aux_params)`` from ``prefix-%04d.params``."""
    from . import serialization
    fname = f"{prefix}-{int(epoch):04d}.params"
    if not os.path.isfile(fname):
        raise FileNotFoundError(f"load_checkpoint: no parameter file {fname!r} (prefix "
                                f"{prefix!r}, epoch {epoch})")
    return split_params(serialization.load(fname), fname)


def load_checkpoint(prefix: str, epoch: int) -> tuple:
    """``(symbol, arg_params, aux_params)`` from a checkpoint (see the module).

    Raises:
        FileNotFoundError: a file is missing (the message names it).
        ValueError: the parameter file's keys are not ``arg:``/``aux:`` names.
    """
    from . import sym
    sym_file = f"{prefix}-symbol.json"
    if not os.path.isfile(sym_file):
        raise FileNotFoundError(f"load_checkpoint: no symbol file {sym_file!r}")
    symbol = sym.load(sym_file)
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params


def _init_iter(X, y, is_train: bool, batch_size: int, label_name: str = "softmax_label"):
    """A DataIter from NumPy/NDArray ``X`` (and ``y``), or ``X`` itself if it is one."""
    import numpy

    from .io import DataIter, NDArrayIter
    from .ndarray import NDArray
    if isinstance(X, DataIter):
        if y is not None:
            raise ValueError("FeedForward: y must be None when X is a DataIter")
        return X
    if isinstance(X, (list, tuple)) and len(X) == 2 and y is None:
        X, y = X
    if not isinstance(X, (numpy.ndarray, NDArray)):
        raise TypeError(f"FeedForward: X must be a DataIter, a NumPy array or an NDArray, got "
                        f"{type(X).__name__}")
    if y is None:
        if is_train:
            raise ValueError("FeedForward: y must be given when X is an array")
        y = numpy.zeros(X.shape[0])
    if int(X.shape[0]) != int(y.shape[0]):
        raise ValueError(f"FeedForward: X has {X.shape[0]} examples but y has {y.shape[0]}")
    batch_size = min(int(X.shape[0]), batch_size)
    return NDArrayIter(X, y, batch_size, shuffle=is_train,
                       last_batch_handle="roll_over" if is_train else "pad",
                       label_name=label_name)


class FeedForward:
    """MXNet's old estimator API (``mx.model.FeedForward``), run on :class:`Module`.

    Args:
        symbol: the network.
        ctx: a context or a list of them (default ``cpu()``).
        num_epoch: epochs to train.
        epoch_size: batches per epoch (None: one pass over the data).
        optimizer: an optimizer name or ``Optimizer``.
        initializer: the initializer (default ``Uniform(0.01)``).
        numpy_batch_size: the batch size used for NumPy inputs.
        arg_params: parameters to start from.
        aux_params: auxiliary states to start from.
        allow_extra_params: ignore parameters the symbol does not have.
        begin_epoch: the first epoch's number.
        **kwargs: the optimizer's parameters (``learning_rate``, ``momentum``, ...).

    Example:
        >>> import numpy as np
        >>> from core import sym
        >>> net = sym.LinearRegressionOutput(sym.FullyConnected(
        ...     sym.var("data"), num_hidden=1, name="fc"), name="lro")
        >>> x = np.random.RandomState(0).rand(64, 3)
        >>> model = FeedForward(net, num_epoch=20, numpy_batch_size=16, learning_rate=0.5)
        >>> model.fit(x, x.sum(axis=1))
        >>> float(np.abs(model.predict(x)[:, 0] - x.sum(axis=1)).mean()) < 0.1
        True
    """

    def __init__(self, symbol, ctx=None, num_epoch=None, epoch_size=None, optimizer="sgd",
                 initializer=None, numpy_batch_size: int = 128, arg_params=None,
                 aux_params=None, allow_extra_params: bool = False, begin_epoch: int = 0,
                 **kwargs):
        from .context import Context
        from .initializer import Uniform
        self.symbol = symbol
        if ctx is None:
            ctx = [cpu()]
        elif isinstance(ctx, Context):
            ctx = [ctx]
        self.ctx = list(ctx)
        self.num_epoch = num_epoch
        self.epoch_size = epoch_size
        self.optimizer = optimizer
        self.initializer = initializer if initializer is not None else Uniform(0.01)
        self.numpy_batch_size = numpy_batch_size
        self.arg_params = arg_params
        self.aux_params = aux_params
        self.allow_extra_params = allow_extra_params
        self.begin_epoch = begin_epoch
        self.kwargs = kwargs.copy()
        self._pred_mod = None
        labels = [a for a in symbol.list_arguments() if a.endswith("label")]
        self._label_name = labels[0] if labels else "softmax_label"

    def _module(self, data_iter, for_training: bool):
        from .module import Module
        data_names = [d[0] for d in data_iter.provide_data]
        label_names = [d[0] for d in data_iter.provide_label] if for_training else \
            [n for n in self.symbol.list_arguments() if n.endswith("label")]
        return Module(self.symbol, data_names=data_names, label_names=label_names,
                      context=self.ctx)

    def fit(self, X, y=None, eval_data=None, eval_metric="acc", epoch_end_callback=None,
            batch_end_callback=None, kvstore="local", logger=None, work_load_list=None,
            monitor=None, eval_end_callback=None, eval_batch_end_callback=None) -> None:
        """Train on ``X`` (a DataIter, or arrays with labels ``y``).

        Args:
            X: training data.
            y: labels when ``X`` is an array.
            eval_data: a DataIter or an ``(X, y)`` pair scored after every epoch.
            eval_metric: the metric.
            epoch_end_callback: called as ``cb(epoch, symbol, arg_params, aux_params)``.
            batch_end_callback: called with a ``BatchEndParam``.
            kvstore: the kvstore for several contexts.
            logger: the logger (default: ``logging``).
            work_load_list: accepted for MXNet compatibility.
            monitor: a ``Monitor``.
            eval_end_callback: called after validation.
            eval_batch_end_callback: called after every validation batch.
        """
        from .io import ResizeIter
        from .module import Module
        if self.num_epoch is None:
            raise ValueError("FeedForward.fit: num_epoch must be set")
        data = _init_iter(X, y, True, self.numpy_batch_size, self._label_name)
        if eval_data is not None and not hasattr(eval_data, "provide_data"):
            eval_data = _init_iter(eval_data, None, False, self.numpy_batch_size,
                                   self._label_name)
        train = ResizeIter(data, self.epoch_size, reset_internal=False) \
            if self.epoch_size is not None else data
        mod = Module(self.symbol, data_names=[d[0] for d in data.provide_data],
                     label_names=[d[0] for d in data.provide_label], context=self.ctx,
                     logger=logger or logging, work_load_list=work_load_list)
        params = dict(self.kwargs)
        optimizer_params = params if isinstance(self.optimizer, str) else ()
        mod.fit(train, eval_data=eval_data, eval_metric=eval_metric,
                epoch_end_callback=epoch_end_callback, batch_end_callback=batch_end_callback,
                kvstore=kvstore, optimizer=self.optimizer, optimizer_params=optimizer_params,
                eval_end_callback=eval_end_callback,
                eval_batch_end_callback=eval_batch_end_callback, initializer=self.initializer,
                arg_params=self.arg_params, aux_params=self.aux_params,
                allow_missing=self.arg_params is not None, begin_epoch=self.begin_epoch,
                num_epoch=self.num_epoch, monitor=monitor)
        self.arg_params, self.aux_params = mod.get_params()
        self._pred_mod = None

    def _predictor(self, data_iter):
        if self.arg_params is None:
            raise RuntimeError("FeedForward: no parameters; fit() or load() first")
        shapes = [tuple(d)[:2] for d in data_iter.provide_data]
        if self._pred_mod is None or self._pred_mod[0] != shapes:
            mod = self._module(data_iter, for_training=False)
            mod.bind(data_iter.provide_data, None, for_training=False)
            mod.set_params(self.arg_params, self.aux_params or {},
                           allow_extra=self.allow_extra_params)
            self._pred_mod = (shapes, mod)
        return self._pred_mod[1]

    def predict(self, X, num_batch=None, return_data: bool = False, reset: bool = True):
        """Outputs for ``X`` as NumPy arrays (one array per output; padding removed).

        With ``return_data``, returns ``(outputs, data, label)``.
        """
        import numpy
        data = _init_iter(X, None, False, self.numpy_batch_size, self._label_name)
        mod = self._predictor(data)
        if reset:
            data.reset()
        outs, datas, labels = None, [], []
        for outputs, _, batch in mod.iter_predict(data, num_batch=num_batch, reset=False):
            outs = [[] for _ in outputs] if outs is None else outs
            for acc, o in zip(outs, outputs):
                acc.append(o.asnumpy())
            if return_data:
                real = batch.data[0].shape[0] - (batch.pad or 0)
                datas.append([d.asnumpy()[:real] for d in batch.data])
                labels.append([lab.asnumpy()[:real] for lab in batch.label or []])
        if outs is None:
            return []
        merged = [numpy.concatenate(o) for o in outs]
        result = merged[0] if len(merged) == 1 else merged
        if return_data:
            data_m = [numpy.concatenate([d[i] for d in datas]) for i in range(len(datas[0]))]
            label_m = [numpy.concatenate([lab[i] for lab in labels])
                       for i in range(len(labels[0]))] if labels and labels[0] else []
            return (result, data_m[0] if len(data_m) == 1 else data_m,
                    label_m[0] if len(label_m) == 1 else label_m)
        return result

    def score(self, X, eval_metric="acc", num_batch=None, batch_end_callback=None,
              reset: bool = True) -> float:
        """The metric's value over ``X`` (a DataIter, or an ``(X, y)`` pair)."""
        from . import metric
        data = _init_iter(X, None, False, self.numpy_batch_size, self._label_name)
        mod = self._predictor(data)
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        if reset:
            data.reset()
        eval_metric.reset()
        for nbatch, batch in enumerate(data):
            if num_batch is not None and nbatch == num_batch:
                break
            mod.forward(batch, is_train=False)
            outs = mod.get_outputs()
            real = batch.data[0].shape[0] - (batch.pad or 0)
            eval_metric.update([lab[0:real] for lab in batch.label],
                               [o[0:real] for o in outs])
            for cb in (batch_end_callback if isinstance(batch_end_callback, list) else
                       [batch_end_callback] if batch_end_callback else []):
                cb(BatchEndParam(epoch=0, nbatch=nbatch, eval_metric=eval_metric,
                                 locals=locals()))
        return eval_metric.get()[1]

    def save(self, prefix: str, epoch=None, remove_amp_cast: bool = True) -> None:
        """Write a checkpoint (epoch default: ``num_epoch``)."""
        if epoch is None:
            epoch = self.num_epoch
        if epoch is None:
            raise ValueError("FeedForward.save: give epoch= (num_epoch is not set)")
        save_checkpoint(prefix, epoch, self.symbol, self.arg_params or {},
                        self.aux_params or {}, remove_amp_cast=remove_amp_cast)

    @staticmethod
    def load(prefix: str, epoch: int, ctx=None, **kwargs):
        """A FeedForward from a checkpoint (``kwargs`` as for the constructor)."""
        symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
        return FeedForward(symbol, ctx=ctx, arg_params=arg_params, aux_params=aux_params,
                           begin_epoch=epoch, **kwargs)

    @staticmethod
    def create(symbol, X, y=None, ctx=None, num_epoch=None, epoch_size=None,
               optimizer="sgd", initializer=None, eval_data=None, eval_metric="acc",
               epoch_end_callback=None, batch_end_callback=None, kvstore="local",
               logger=None, work_load_list=None, eval_end_callback=None,
               eval_batch_end_callback=None, **kwargs):
        """Make a FeedForward and ``fit`` it (MXNet's functional way)."""
        model = FeedForward(symbol, ctx=ctx, num_epoch=num_epoch, epoch_size=epoch_size,
                            optimizer=optimizer, initializer=initializer, **kwargs)
        model.fit(X, y, eval_data=eval_data, eval_metric=eval_metric,
                  epoch_end_callback=epoch_end_callback,
                  batch_end_callback=batch_end_callback, kvstore=kvstore, logger=logger,
                  work_load_list=work_load_list, eval_end_callback=eval_end_callback,
                  eval_batch_end_callback=eval_batch_end_callback)
        return model
