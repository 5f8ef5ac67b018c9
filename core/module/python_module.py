"""Modules written in Python (MXNet's ``mx.mod.PythonModule``, ``PythonLossModule``).

A ``PythonModule`` has no parameters and computes in Python; the usual use is a
``PythonLossModule`` at the end of a :class:`~core.module.SequentialModule`: it passes
its input through as output and, in ``backward``, returns ``grad_func(scores, labels)``
as the gradient of its input.

Example:
    >>> import numpy as np
    >>> from core import io, nd, sym
    >>> from core.module import Module, PythonLossModule, SequentialModule
    >>> def softmax_grad(scores, labels):  # d(cross-entropy)/d(logits)
    ...     p = nd.softmax(scores).asnumpy()
    ...     p[np.arange(len(p)), labels.asnumpy().astype(int)] -= 1
    ...     return p
    >>> fc = Module(sym.FullyConnected(sym.var("data"), num_hidden=2, name="fc"),
    ...             label_names=None)
    >>> seq = SequentialModule().add(fc).add(PythonLossModule(grad_func=softmax_grad),
    ...                                      take_labels=True, auto_wiring=True)
    >>> x = np.random.RandomState(0).rand(8, 3)
    >>> seq.fit(io.NDArrayIter(x, (x[:, 0] > 0.5), batch_size=4), num_epoch=1)
    >>> seq.get_outputs()[0].shape
    (4, 2)
"""
from __future__ import annotations

import logging

from ..ndarray import NDArray
from .base_module import BaseModule

__all__ = ["PythonLossModule", "PythonModule"]


class PythonModule(BaseModule):
    """A parameter-free module whose computation is Python code (subclass it).

    Subclasses implement ``_compute_output_shapes``, ``forward``, ``backward``,
    ``get_outputs`` and ``get_input_grads``.

    Args:
        data_names: the data inputs' names.
        label_names: the labels' names (or None).
        output_names: the outputs' names.
        logger: the logger.
    """

    def __init__(self, data_names, label_names, output_names, logger=logging):
        super().__init__(logger=logger)
        self._data_names = list(data_names)
        self._label_names = list(label_names) if label_names is not None else None
        self._output_names = list(output_names)
        self._data_shapes = None
        self._label_shapes = None
        self._output_shapes = None

    @property
    def data_names(self) -> list:
        """The data inputs' names."""
        return self._data_names

    @property
    def output_names(self) -> list:
        """The outputs' names."""
        return self._output_names

    @property
    def data_shapes(self):
        """The bound data shapes."""
        return self._data_shapes

    @property
    def label_shapes(self):
        """The bound label shapes."""
        return self._label_shapes

    @property
    def output_shapes(self):
        """``[(name, shape)]`` of the outputs."""
        return self._output_shapes

    def get_params(self) -> tuple:
        """No parameters: ``({}, {})``."""
        return {}, {}

    def init_params(self, initializer=None, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False) -> None:
        """Nothing to initialize."""
        self.params_initialized = True

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False) -> None:
        """Nothing to set."""
        self.params_initialized = True

    def update(self) -> None:
        """Nothing to update."""

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False) -> None:
        """No optimizer is needed."""
        self.optimizer_initialized = True

    def update_metric(self, eval_metric, labels, pre_sliced: bool = False) -> None:
        """Update ``eval_metric`` with the outputs and ``labels``."""
        if self._label_shapes is None:
            return
        if pre_sliced:
            raise RuntimeError("PythonModule does not support pre-sliced labels")
        eval_metric.update(labels, self.get_outputs())

    def bind(self, data_shapes, label_shapes=None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False, shared_module=None,
             grad_req="write") -> None:
        """Record the shapes (the names must match the module's)."""
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if grad_req != "write":
            raise ValueError(f"{type(self).__name__}.bind: only grad_req='write' is supported")
        names = [x[0] for x in data_shapes]
        if names != self._data_names:
            raise ValueError(f"{type(self).__name__}.bind: data_shapes {names} do not match "
                             f"data_names {self._data_names}")
        if label_shapes is not None:
            lnames = [x[0] for x in label_shapes]
            if self._label_names is None or lnames != self._label_names:
                raise ValueError(f"{type(self).__name__}.bind: label_shapes {lnames} do not "
                                 f"match label_names {self._label_names}")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._data_shapes = data_shapes
        self._label_shapes = label_shapes
        self._output_shapes = self._compute_output_shapes()
        self.binded = True

    def _compute_output_shapes(self):
        raise NotImplementedError(f"{type(self).__name__}._compute_output_shapes")

    def install_monitor(self, mon) -> None:
        """A Python module has no executor to monitor (ignored)."""


class PythonLossModule(PythonModule):
    """A loss written in Python: output = input; input gradient = ``grad_func(scores, labels)``.

    Args:
        name: the module's name (its output is ``<name>_output``).
        data_names: one data name.
        label_names: one label name.
        logger: the logger.
        grad_func: ``(scores, labels) -> gradient`` (an NDArray or array-like).
    """

    def __init__(self, name: str = "pyloss", data_names=("data",),
                 label_names=("softmax_label",), logger=logging, grad_func=None):
        super().__init__(data_names, label_names, [name + "_output"], logger=logger)
        if len(self._data_names) != 1 or len(self._label_names) != 1:
            raise ValueError("PythonLossModule: needs exactly one data and one label name")
        if grad_func is not None and not callable(grad_func):
            raise TypeError("PythonLossModule: grad_func must be callable")
        self._name = name
        self._scores = None
        self._labels = None
        self._scores_grad = None
        self._grad_func = grad_func

    def _compute_output_shapes(self):
        return [(self._name + "_output", tuple(self._data_shapes[0][1]))]

    def forward(self, data_batch, is_train=None) -> None:
        """Keep the scores (and, when training, the labels)."""
        self._scores = data_batch.data[0]
        if is_train is None:
            is_train = self.for_training
        if is_train:
            self._labels = data_batch.label[0]

    def get_outputs(self, merge_multi_context: bool = True) -> list:
        """``[scores]``."""
        return [self._scores]

    def backward(self, out_grads=None) -> None:
        """Compute the input gradient with ``grad_func``."""
        if out_grads is not None:
            raise ValueError("PythonLossModule.backward: a loss takes no out_grads")
        if not self.for_training:
            raise RuntimeError("PythonLossModule.backward: bind with for_training=True")
        if self._grad_func is None:
            raise NotImplementedError("PythonLossModule: give grad_func (or subclass and "
                                      "override backward)")
        from .. import nd
        grad = self._grad_func(self._scores, self._labels)
        if not isinstance(grad, NDArray):
            grad = nd.array(grad, ctx=self._scores.context)
        self._scores_grad = grad

    def get_input_grads(self, merge_multi_context: bool = True) -> list:
        """``[gradient of the scores]``."""
        return [self._scores_grad]
