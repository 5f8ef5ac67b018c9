"""``SequentialModule``: modules chained, each one's outputs the next one's data.

``add(module, take_labels=True)`` marks the modules that receive the labels (usually
the last, whose outputs are loss heads); ``auto_wiring=True`` renames the previous
module's outputs to this module's data names. Backward runs from the last module to
the first, each module's input gradients becoming the previous one's output
gradients.

Example:
    >>> import numpy as np
    >>> from core import io, sym
    >>> from core.module import Module, SequentialModule
    >>> m1 = Module(sym.FullyConnected(sym.var("data"), num_hidden=4, name="fc1"),
    ...             label_names=None)
    >>> head = sym.SoftmaxOutput(sym.FullyConnected(sym.var("data"), num_hidden=2,
    ...                                             name="fc2"), name="softmax")
    >>> seq = SequentialModule().add(m1).add(Module(head), take_labels=True,
    ...                                      auto_wiring=True)
    >>> it = io.NDArrayIter(np.random.rand(8, 3), np.arange(8) % 2, batch_size=4)
    >>> seq.fit(it, num_epoch=1)
    >>> seq.predict(it).shape
    (8, 2)
"""
from __future__ import annotations

import copy
import logging

from .base_module import BaseModule

__all__ = ["SequentialModule"]


class SequentialModule(BaseModule):
    """A chain of modules trained together (MXNet's ``mx.mod.SequentialModule``).

    Args:
        logger: the logger.
    """

    META_TAKE_LABELS = "take_labels"
    META_AUTO_WIRING = "auto_wiring"

    def __init__(self, logger=logging):
        super().__init__(logger=logger)
        self._modules: list = []
        self._metas: list = []
        self._label_shapes = None
        self._data_shapes = None
        self._meta_keys = {self.META_TAKE_LABELS, self.META_AUTO_WIRING}

    def add(self, module, **kwargs):
        """Append ``module``; ``take_labels``/``auto_wiring`` as in the module docstring.

        Returns:
            self, so that calls chain.
        """
        for key in kwargs:
            if key not in self._meta_keys:
                raise ValueError(f"SequentialModule.add: unknown meta {key!r} (known: "
                                 f"{sorted(self._meta_keys)})")
        self._modules.append(module)
        self._metas.append(kwargs)
        self.binded = False
        self.params_initialized = False
        self.optimizer_initialized = False
        return self

    @property
    def data_names(self) -> list:
        """The first module's data names."""
        return self._modules[0].data_names if self._modules else []

    @property
    def output_names(self) -> list:
        """The last module's output names."""
        return self._modules[-1].output_names if self._modules else []

    @property
    def data_shapes(self):
        """The first module's data shapes."""
        self._need("data_shapes")
        return self._modules[0].data_shapes

    @property
    def label_shapes(self):
        """The label shapes (None when no module takes labels)."""
        self._need("label_shapes")
        return self._label_shapes

    @property
    def output_shapes(self):
        """The last module's output shapes."""
        self._need("output_shapes")
        return self._modules[-1].output_shapes

    def get_params(self) -> tuple:
        """All modules' parameters in one pair of dicts."""
        self._need("get_params", params=True)
        arg_params, aux_params = {}, {}
        for module in self._modules:
            arg, aux = module.get_params()
            arg_params.update(arg)
            aux_params.update(aux)
        return arg_params, aux_params

    def init_params(self, initializer=None, arg_params=None, aux_params=None,
                    allow_missing: bool = False, force_init: bool = False,
                    allow_extra: bool = False) -> None:
        """Initialize every module's parameters (names must be unique across modules)."""
        if self.params_initialized and not force_init:
            return
        self._need("init_params")
        for module in self._modules:
            module.init_params(initializer=initializer, arg_params=arg_params,
                               aux_params=aux_params, allow_missing=allow_missing,
                               force_init=force_init, allow_extra=True)
        seen_arg, seen_aux = {}, {}
        for i, module in enumerate(self._modules):
            arg, aux = module.get_params()
            for seen, names in ((seen_arg, arg), (seen_aux, aux)):
                for name in names:
                    if name in seen:
                        raise ValueError(f"SequentialModule: duplicated parameter name "
                                         f"{name!r} in layer {i} ({type(module).__name__}), "
                                         f"already used in layer {seen[name]}")
                    seen[name] = i
        self.params_initialized = True

    def set_params(self, arg_params, aux_params, allow_missing: bool = False,
                   force_init: bool = True, allow_extra: bool = False) -> None:
        """Set the parameters of every module from one pair of dicts."""
        self._need("set_params")
        for module in self._modules:
            mine_arg = {k: v for k, v in arg_params.items()
                        if k in module.get_params()[0]} if module.params_initialized \
                else arg_params
            mine_aux = {k: v for k, v in (aux_params or {}).items()
                        if k in module.get_params()[1]} if module.params_initialized \
                else aux_params
            module.set_params(mine_arg, mine_aux, allow_missing=allow_missing,
                              force_init=force_init, allow_extra=True)
        self.params_initialized = True

    def bind(self, data_shapes, label_shapes=None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False, shared_module=None,
             grad_req="write") -> None:
        """Bind each module to the previous one's output shapes."""
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if inputs_need_grad and not for_training:
            raise ValueError("SequentialModule.bind: inputs_need_grad needs for_training")
        if shared_module is not None:
            raise ValueError("SequentialModule.bind: shared_module is not supported")
        if not self._modules:
            raise ValueError("SequentialModule.bind: attempting to bind an empty "
                             "SequentialModule")
        self.binded = True
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._label_shapes = label_shapes
        my_data_shapes = data_shapes
        anybody_needs_label = False
        for i, module in enumerate(self._modules):
            meta = self._metas[i]
            if meta.get(self.META_TAKE_LABELS):
                my_label_shapes = label_shapes
                anybody_needs_label = True
            else:
                my_label_shapes = None
            my_inputs_need_grad = bool(inputs_need_grad or (for_training and i > 0))
            if meta.get(self.META_AUTO_WIRING, False):
                names = module.data_names
                if len(names) != len(my_data_shapes):
                    raise ValueError(f"SequentialModule: layer {i} takes {len(names)} inputs "
                                     f"{names} but the previous layer gives "
                                     f"{len(my_data_shapes)}")
                my_data_shapes = [(new, shape) for new, (_, shape) in
                                  zip(names, [tuple(d)[:2] for d in my_data_shapes])]
            module.bind(data_shapes=my_data_shapes, label_shapes=my_label_shapes,
                        for_training=for_training, inputs_need_grad=my_inputs_need_grad,
                        force_rebind=force_rebind, shared_module=None, grad_req=grad_req)
            my_data_shapes = module.output_shapes
        if not anybody_needs_label:
            self._label_shapes = None

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),),
                       force_init: bool = False) -> None:
        """Install the optimizer on every module."""
        self._need("init_optimizer", params=True)
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        for module in self._modules:
            module.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                                  optimizer_params=optimizer_params, force_init=force_init)
        self.optimizer_initialized = True

    def forward(self, data_batch, is_train=None) -> None:
        """Forward through the chain."""
        self._need("forward", params=True)
        data_batch = copy.copy(data_batch)
        for i, module in enumerate(self._modules):
            module.forward(data_batch, is_train=is_train)
            if i + 1 == len(self._modules):
                break
            data_batch.data = module.get_outputs()
            if getattr(data_batch, "provide_data", None) is not None:
                names = [x[0] for x in module.output_shapes]
                data_batch.provide_data = [(n, x.shape) for n, x in zip(names, data_batch.data)]

    def backward(self, out_grads=None) -> None:
        """Backward from the last module to the first."""
        self._need("backward", params=True)
        for i in reversed(range(len(self._modules))):
            module = self._modules[i]
            module.backward(out_grads=out_grads)
            if i == 0:
                break
            out_grads = module.get_input_grads()

    def update(self) -> None:
        """Update every module's parameters."""
        self._need("update", params=True, optimizer=True)
        for module in self._modules:
            module.update()

    def get_outputs(self, merge_multi_context: bool = True):
        """The last module's outputs."""
        self._need("get_outputs", params=True)
        return self._modules[-1].get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context: bool = True):
        """The first module's input gradients."""
        self._need("get_input_grads", params=True)
        if not self.inputs_need_grad:
            raise RuntimeError("SequentialModule.get_input_grads: bind with "
                               "inputs_need_grad=True")
        return self._modules[0].get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced: bool = False) -> None:
        """Update the metric with the modules that take labels."""
        self._need("update_metric", params=True)
        for meta, module in zip(self._metas, self._modules):
            if meta.get(self.META_TAKE_LABELS):
                module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon) -> None:
        """Install a monitor on every module."""
        self._need("install_monitor")
        for module in self._modules:
            module.install_monitor(mon)
