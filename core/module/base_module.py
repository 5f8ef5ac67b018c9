"""``BaseModule``: the training loop shared by every module (MXNet's ``mx.module.BaseModule``).

A module is bound to input shapes (``bind``), gets parameters (``init_params``) and
an optimizer (``init_optimizer``), and then runs ``forward``/``backward``/``update``.
On top of those, this class gives ``fit`` (the epoch loop with metrics, callbacks and
validation), ``score``, ``predict`` and ``iter_predict``, and parameter files
(``save_params``/``load_params``).
"""
from __future__ import annotations

import logging
import time
import warnings

import numpy

from .. import metric as _metric
from ..context import cpu
from ..io.base import DataBatch, DataDesc, DataIter, as_data_desc
from ..model import BatchEndParam, split_params
from ..ndarray import NDArray

__all__ = ["BaseModule"]


def as_list(obj) -> list:
    """``obj`` as a list (None: empty)."""
    if obj is None:
        return []
    return list(obj) if isinstance(obj, (list, tuple)) else [obj]


def check_input_names(symbol, names, typename: str, throw: bool) -> None:
    """Every name in ``names`` must be an argument of ``symbol`` (error or warning)."""
    args = symbol.list_arguments()
    for name in names:
        if name in args:
            continue
        candidates = [a for a in args if not a.endswith(("_weight", "_bias", "_gamma",
                                                         "_beta"))]
        msg = (f"You created Module with Module(..., {typename}_names={list(names)}) but "
               f"input with name {name!r} is not found in symbol.list_arguments(). Did you "
               f"mean one of: {', '.join(candidates)}")
        if throw:
            raise ValueError(msg)
        warnings.warn(msg, stacklevel=3)


def _checked_shape(item, where: str):
    """``item`` (a DataDesc or a ``(name, shape)`` pair) when its shape is a sequence of
    ints; TypeError else: MXNet's bind refuses an array given as a shape (the module stays
    unbound)."""
    if isinstance(item, (tuple, list)) and len(item) == 2 and not isinstance(item, DataDesc):
        name, shape = item
        ok = isinstance(shape, (tuple, list)) and all(
            isinstance(d, (int, numpy.integer)) and not isinstance(d, bool) for d in shape)
        if not ok and not isinstance(shape, (int, numpy.integer)):
            raise TypeError(f"Module.bind: {where}: the shape of {name!r} must be a tuple of "
                            f"ints, got {type(shape).__name__} {shape!r}")
    return item


def parse_data_desc(data_names, label_names, data_shapes, label_shapes) -> tuple:
    """``DataDesc`` lists for ``bind``, checked against the module's input names."""
    data_shapes = [as_data_desc(_checked_shape(x, "data_shapes")) for x in data_shapes]
    if sorted(data_names) != sorted(d.name for d in data_shapes):
        raise ValueError(f"Module.bind: data_shapes {[(d.name, d.shape) for d in data_shapes]} "
                         f"do not match data_names {list(data_names)}")
    if label_shapes is not None:
        label_shapes = [as_data_desc(_checked_shape(x, "label_shapes"), "label_shapes")
                        for x in label_shapes]
        if sorted(label_names) != sorted(d.name for d in label_shapes):
            warnings.warn(f"Module.bind: label_shapes {[(d.name, d.shape) for d in label_shapes]}"
                          f" do not match label_names {list(label_names)}", stacklevel=3)
    return data_shapes, label_shapes


class BaseModule:
    """The interface and the shared loops of all modules (see the module docstring).

    Subclasses implement ``bind``, ``init_params``, ``init_optimizer``, ``forward``,
    ``backward``, ``update``, ``update_metric``, ``get_outputs``, ``get_params``, and
    the properties ``data_names``, ``output_names``, ``data_shapes``,
    ``label_shapes``, ``output_shapes``.

    Args:
        logger: where ``fit`` logs (default: the ``logging`` module).
    """

    def __init__(self, logger=logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None
        self._total_exec_bytes = 0

    def _need(self, what: str, binded=True, params=False, optimizer=False) -> None:
        if binded and not self.binded:
            raise RuntimeError(f"{type(self).__name__}.{what}: call bind() first")
        if params and not self.params_initialized:
            raise RuntimeError(f"{type(self).__name__}.{what}: call init_params() first")
        if optimizer and not self.optimizer_initialized:
            raise RuntimeError(f"{type(self).__name__}.{what}: call init_optimizer() first")

    # ------------------------------------------------------------------ high level
    def forward_backward(self, data_batch) -> None:
        """``forward(is_train=True)`` then ``backward()``."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(self, eval_data, eval_metric, num_batch=None, batch_end_callback=None,
              score_end_callback=None, reset: bool = True, epoch: int = 0,
              sparse_row_id_fn=None) -> list:
        """Evaluate ``eval_metric`` over ``eval_data``.

        Args:
            eval_data: a ``DataIter``.
            eval_metric: an ``EvalMetric`` or a name/list for ``metric.create``.
            num_batch: stop after this many batches (None: all).
            batch_end_callback: called with a ``BatchEndParam`` after each batch.
            score_end_callback: called with a ``BatchEndParam`` at the end.
            reset: reset ``eval_data`` first.
            epoch: the epoch reported to the callbacks.
            sparse_row_id_fn: accepted for MXNet compatibility.

        Returns:
            ``[(name, value)]`` of the metric.
        """
        self._need("score", params=True)
        if reset:
            eval_data.reset()
        if not isinstance(eval_metric, _metric.EvalMetric):
            eval_metric = _metric.create(eval_metric)
        eval_metric.reset()
        actual_num_batch = 0
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            if isinstance(eval_batch, list):
                self.update_metric(eval_metric, [eb.label for eb in eval_batch],
                                   pre_sliced=True)
            else:
                self.update_metric(eval_metric, eval_batch.label)
            for callback in as_list(batch_end_callback):
                callback(BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                       locals=locals()))
            actual_num_batch += 1
        for callback in as_list(score_end_callback):
            callback(BatchEndParam(epoch=epoch, nbatch=actual_num_batch,
                                   eval_metric=eval_metric, locals=locals()))
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data, num_batch=None, reset: bool = True,
                     sparse_row_id_fn=None):
        """Yield ``(outputs, nbatch, batch)`` per batch, padding removed from the outputs."""
        self._need("iter_predict", params=True)
        if reset:
            eval_data.reset()
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            outputs = [out[0:out.shape[0] - pad] for out in self.get_outputs()]
            yield outputs, nbatch, eval_batch

    def predict(self, eval_data, num_batch=None, merge_batches: bool = True,
                reset: bool = True, always_output_list: bool = False, sparse_row_id_fn=None):
        """Run inference over ``eval_data`` (a ``DataIter``, or one NDArray/NumPy batch).

        Args:
            eval_data: the data.
            num_batch: stop after this many batches.
            merge_batches: join the batches' outputs into one array per output.
            reset: reset ``eval_data`` first.
            always_output_list: return a list even for one output.
            sparse_row_id_fn: accepted for MXNet compatibility.

        Returns:
            With ``merge_batches``: an NDArray (one output) or a list of them; without:
            a list (per batch) of lists of NDArrays. Padded examples are removed.
        """
        from .. import nd
        self._need("predict", params=True)
        if isinstance(eval_data, (NDArray, numpy.ndarray)):
            if isinstance(eval_data, numpy.ndarray):
                eval_data = nd.array(eval_data)
            self.forward(DataBatch([eval_data]))
            return self.get_outputs()[0]
        if not isinstance(eval_data, DataIter):
            raise TypeError(f"predict: eval_data must be a DataIter, an NDArray or a NumPy "
                             f"array, got {type(eval_data).__name__}")
        if reset:
            eval_data.reset()
        output_list = []
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            output_list.append([out[0:out.shape[0] - pad].copy()
                                for out in self.get_outputs()])
        if not output_list:
            return output_list
        if merge_batches:
            num_outputs = len(output_list[0])
            if any(len(o) != num_outputs for o in output_list):
                raise ValueError("predict: cannot merge batches with different numbers of "
                                 "outputs (bucketing?); use merge_batches=False")
            merged = [nd.concat(*[o[i] for o in output_list], dim=0)
                      for i in range(num_outputs)]
            if num_outputs == 1 and not always_output_list:
                return merged[0]
            return merged
        return output_list

    def fit(self, train_data, eval_data=None, eval_metric="acc", epoch_end_callback=None,
            batch_end_callback=None, kvstore="local", optimizer="sgd",
            optimizer_params=(("learning_rate", 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=None, arg_params=None,
            aux_params=None, allow_missing: bool = False, force_rebind: bool = False,
            force_init: bool = False, begin_epoch: int = 0, num_epoch=None,
            validation_metric=None, monitor=None, sparse_row_id_fn=None) -> None:
        """Train: bind, initialize, then ``num_epoch - begin_epoch`` epochs over ``train_data``.

        Args:
            train_data: a ``DataIter`` of training batches.
            eval_data: a ``DataIter`` scored after every epoch (optional).
            eval_metric: the training metric (``EvalMetric`` or name; default ``'acc'``).
            epoch_end_callback: called as ``cb(epoch, symbol, arg_params, aux_params)``.
            batch_end_callback: called with a ``BatchEndParam`` after every batch.
            kvstore: ``'local'``, ``'device'``, a ``KVStore`` or None.
            optimizer: an optimizer name or ``Optimizer``.
            optimizer_params: its keyword arguments (dict or pairs).
            eval_end_callback: called with a ``BatchEndParam`` after validation.
            eval_batch_end_callback: called after every validation batch.
            initializer: the parameter initializer (default ``Uniform(0.01)``).
            arg_params: parameters to start from.
            aux_params: auxiliary states to start from.
            allow_missing: with ``arg_params``, initialize the missing ones.
            force_rebind: re-bind even if bound.
            force_init: re-initialize even if initialized.
            begin_epoch: the first epoch's number (to resume).
            num_epoch: the end epoch (required).
            validation_metric: the validation metric (default: ``eval_metric``).
            monitor: a ``Monitor`` to install.
            sparse_row_id_fn: accepted for MXNet compatibility.
        """
        from ..initializer import Uniform
        if num_epoch is None:
            raise ValueError("fit: please specify number of epochs (num_epoch=)")
        if initializer is None:
            initializer = Uniform(0.01)
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, _metric.EvalMetric):
            eval_metric = _metric.create(eval_metric)
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            nbatch = 0
            data_iter = iter(train_data)
            end_of_batch = False
            try:
                next_data_batch = next(data_iter)
            except StopIteration:
                raise ValueError("fit: train_data gave no batch in epoch "
                                 f"{epoch}") from None
            eval_name_vals = []
            while not end_of_batch:
                data_batch = next_data_batch
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(data_batch)
                self.update()
                if isinstance(data_batch, list):
                    self.update_metric(eval_metric, [db.label for db in data_batch],
                                       pre_sliced=True)
                else:
                    self.update_metric(eval_metric, data_batch.label)
                try:
                    next_data_batch = next(data_iter)
                    self.prepare(next_data_batch, sparse_row_id_fn=sparse_row_id_fn)
                except StopIteration:
                    end_of_batch = True
                if monitor is not None:
                    monitor.toc_print()
                if end_of_batch:
                    eval_name_vals = eval_metric.get_global_name_value()
                for callback in as_list(batch_end_callback):
                    callback(BatchEndParam(epoch=epoch, nbatch=nbatch,
                                           eval_metric=eval_metric, locals=locals()))
                nbatch += 1
            for name, val in eval_name_vals:
                self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, val)
            self.logger.info("Epoch[%d] Time cost=%.3f", epoch, time.time() - tic)
            arg_params_, aux_params_ = self.get_params()
            self.set_params(arg_params_, aux_params_)
            for callback in as_list(epoch_end_callback):
                callback(epoch, self.symbol, arg_params_, aux_params_)
            if eval_data is not None:
                res = self.score(eval_data, validation_metric,
                                 score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, val)
            train_data.reset()

    # ------------------------------------------------------------------ parameters
    def set_params(self, arg_params, aux_params, allow_missing: bool = False,
                   force_init: bool = True, allow_extra: bool = False) -> None:
        """Set the parameters (``init_params`` without an initializer)."""
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init,
                         allow_extra=allow_extra)

    def _set_given_params(self, assign, arg_params, aux_params, allow_missing: bool,
                          force_init: bool, allow_extra: bool) -> None:
        """MXNet's ``set_params`` for modules that hold parameters: without
        ``allow_missing``, ``init_params`` checks and sets them all; with it, ``assign()``
        writes only the given values, unless the parameters are set already and
        ``force_init`` is False (a warning)."""
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init,
                             allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. "
                          "set_params call ignored.", stacklevel=3)
            return
        assign()
        self._params_dirty = True
        self.params_initialized = True

    def save_params(self, fname: str) -> None:
        """Write the parameters to ``fname`` under ``arg:``/``aux:`` keys."""
        from .. import serialization
        arg_params, aux_params = self.get_params()
        save_dict = {f"arg:{k}": v.as_in_context(cpu()) for k, v in arg_params.items()}
        save_dict.update({f"aux:{k}": v.as_in_context(cpu()) for k, v in aux_params.items()})
        serialization.save(fname, save_dict)

    def load_params(self, fname: str) -> None:
        """Read parameters written by :meth:`save_params` (or a checkpoint's ``.params``)."""
        from .. import serialization
        arg_params, aux_params = split_params(serialization.load(fname), fname)
        self.set_params(arg_params, aux_params)

    def get_states(self, merge_multi_context: bool = True) -> list:
        """The states (none for a module without state inputs)."""
        self._need("get_states", params=True)
        return []

    def set_states(self, states=None, value=None) -> None:
        """Set the states (a module without state inputs has none)."""
        self._need("set_states", params=True)
        if states or value:
            raise ValueError(f"{type(self).__name__} has no states to set")

    def prepare(self, data_batch, sparse_row_id_fn=None) -> None:
        """Prepare for the next batch (nothing to do for dense parameters)."""

    def install_monitor(self, mon) -> None:
        """Install a ``Monitor`` on the executors."""
        raise NotImplementedError(f"{type(self).__name__}.install_monitor")

    @property
    def symbol(self):
        """The network."""
        return self._symbol

    # the interface ----------------------------------------------------------
    @property
    def data_names(self):
        """Names of the data inputs."""
        raise NotImplementedError

    @property
    def output_names(self):
        """Names of the outputs."""
        raise NotImplementedError

    @property
    def data_shapes(self):
        """``DataDesc`` of the data inputs."""
        raise NotImplementedError

    @property
    def label_shapes(self):
        """``DataDesc`` of the labels."""
        raise NotImplementedError

    @property
    def output_shapes(self):
        """``[(name, shape)]`` of the outputs."""
        raise NotImplementedError

    def get_params(self):
        """``(arg_params, aux_params)``."""
        raise NotImplementedError

    def init_params(self, initializer=None, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialize the parameters."""
        raise NotImplementedError

    def forward(self, data_batch, is_train=None):
        """Forward computation."""
        raise NotImplementedError

    def backward(self, out_grads=None):
        """Backward computation."""
        raise NotImplementedError

    def get_outputs(self, merge_multi_context=True):
        """The outputs of the last forward."""
        raise NotImplementedError

    def get_input_grads(self, merge_multi_context=True):
        """The gradients of the data inputs."""
        raise NotImplementedError

    def update(self):
        """Update the parameters with the gradients."""
        raise NotImplementedError

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update a metric with the last outputs."""
        raise NotImplementedError

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Bind to input shapes."""
        raise NotImplementedError

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Install an optimizer."""
        raise NotImplementedError


def descs_like(descs, shapes) -> list:
    """``DataDesc`` list with ``descs``' names/dtypes/layouts and new ``shapes``."""
    return [DataDesc(d.name, s, d.dtype, d.layout) for d, s in zip(descs, shapes)]
