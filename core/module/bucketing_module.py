"""``BucketingModule``: one Module per bucket key, all sharing one set of parameters.

``sym_gen(bucket_key)`` returns ``(symbol, data_names, label_names)`` for a key (for
example a sequence length); every bucket's Module is bound with the default bucket's
Module as ``shared_module``, so they all read and update the same parameter arrays.
A batch's ``bucket_key`` (and ``provide_data``/``provide_label``) choose the bucket.

Example:
    >>> import numpy as np
    >>> from core import sym
    >>> from core.io import DataBatch, DataDesc
    >>> from core import nd
    >>> from core.module import BucketingModule
    >>> def sym_gen(n):  # n inputs summed by one shared layer
    ...     x = sym.var("data")
    ...     out = sym.FullyConnected(sym.reshape(x, shape=(-1, 1)), num_hidden=1,
    ...                              name="fc")
    ...     return sym.MakeLoss(sym.sum(out)), ("data",), None
    >>> m = BucketingModule(sym_gen, default_bucket_key=4)
    >>> m.bind([DataDesc("data", (1, 4))], None)
    >>> m.init_params()
    >>> m.forward(DataBatch([nd.ones((1, 2))], bucket_key=2,
    ...                     provide_data=[DataDesc("data", (1, 2))]))
    >>> sorted(m._buckets)
    [2, 4]
"""
from __future__ import annotations

import logging
import os

import numpy

from ..name import NameManager
from .base_module import BaseModule, check_input_names
from .module import Module

__all__ = ["BucketingModule"]


class BucketingModule(BaseModule):
    """Modules per bucket key sharing parameters (MXNet's ``mx.mod.BucketingModule``).

    Args:
        sym_gen: ``bucket_key -> (symbol, data_names, label_names)``.
        default_bucket_key: the bucket bound first, whose Module owns the parameters
            (it should be the largest).
        logger: the logger.
        context: a context or a list of them.
        work_load_list: the relative batch share of each context.
        fixed_param_names: parameters that are not trained.
        state_names: arguments that are states.
        group2ctxs: accepted for MXNet compatibility.
        compression_params: passed to the kvstore.
    """

    def __init__(self, sym_gen, default_bucket_key=None, logger=logging, context=None,
                 work_load_list=None, fixed_param_names=None, state_names=None,
                 group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        if default_bucket_key is None:
            raise ValueError("BucketingModule: default_bucket_key is required")
        self._default_bucket_key = default_bucket_key
        self._sym_gen = sym_gen
        symbol, data_names, label_names = self._call_sym_gen(default_bucket_key)
        data_names = list(data_names) if data_names is not None else []
        label_names = list(label_names) if label_names is not None else []
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        check_input_names(symbol, data_names, "data", True)
        check_input_names(symbol, label_names, "label", False)
        check_input_names(symbol, state_names, "state", True)
        check_input_names(symbol, fixed_param_names, "fixed_param", True)
        self._compression_params = compression_params
        self._fixed_param_names = fixed_param_names
        self._state_names = state_names
        self._context = context
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._buckets: dict = {}
        self._curr_module = None
        self._curr_bucket_key = None
        self._params_dirty = False
        self._monitor = None
        self._grad_req = None

    def _call_sym_gen(self, key):
        # a fresh NameManager per call, as MXNet: every bucket's unnamed nodes get the
        # same names (embedding0_weight), so their parameters are shared by name
        with NameManager():
            out = self._sym_gen(key)
        if not (isinstance(out, tuple) and len(out) == 3):
            raise ValueError(f"BucketingModule: sym_gen({key!r}) must return (symbol, "
                             f"data_names, label_names), got {type(out).__name__}")
        return out

    def _module(self, symbol, data_names, label_names) -> Module:
        return Module(symbol, data_names, label_names, logger=self.logger,
                      context=self._context, work_load_list=self._work_load_list,
                      fixed_param_names=self._fixed_param_names,
                      state_names=self._state_names, group2ctxs=self._group2ctxs,
                      compression_params=self._compression_params)

    def _reset_bind(self) -> None:
        self.binded = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    # ------------------------------------------------------------------ properties
    @property
    def default_bucket_key(self):
        """The default bucket's key."""
        return self._default_bucket_key

    @property
    def data_names(self) -> list:
        """The current bucket's data names."""
        if self.binded:
            return self._curr_module.data_names
        return list(self._call_sym_gen(self._default_bucket_key)[1])

    @property
    def output_names(self) -> list:
        """The current bucket's output names."""
        if self.binded:
            return self._curr_module.output_names
        return self._call_sym_gen(self._default_bucket_key)[0].list_outputs()

    @property
    def data_shapes(self):
        """The current bucket's data shapes."""
        self._need("data_shapes")
        return self._curr_module.data_shapes

    @property
    def label_shapes(self):
        """The current bucket's label shapes."""
        self._need("label_shapes")
        return self._curr_module.label_shapes

    @property
    def output_shapes(self):
        """The current bucket's output shapes."""
        self._need("output_shapes")
        return self._curr_module.output_shapes

    @property
    def symbol(self):
        """The current bucket's symbol."""
        self._need("symbol")
        return self._curr_module.symbol

    # ------------------------------------------------------------------ parameters
    def get_params(self) -> tuple:
        """The shared ``(arg_params, aux_params)``."""
        self._need("get_params", binded=False, params=True)
        self._curr_module._params_dirty = self._params_dirty
        params = self._curr_module.get_params()
        self._params_dirty = False
        return params

    def set_params(self, arg_params, aux_params, allow_missing: bool = False,
                   force_init: bool = True, allow_extra: bool = False) -> None:
        """Set the shared parameters."""
        self._set_given_params(
            lambda: self._curr_module.set_params(arg_params, aux_params,
                                                 allow_missing=allow_missing,
                                                 force_init=force_init, allow_extra=allow_extra),
            arg_params, aux_params, allow_missing, force_init, allow_extra)

    def init_params(self, initializer=None, arg_params=None, aux_params=None,
                    allow_missing: bool = False, force_init: bool = False,
                    allow_extra: bool = False) -> None:
        """Initialize the shared parameters (on the current bucket's Module)."""
        if self.params_initialized and not force_init:
            return
        self._need("init_params")
        self._curr_module.init_params(initializer=initializer, arg_params=arg_params,
                                      aux_params=aux_params, allow_missing=allow_missing,
                                      force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = False
        self.params_initialized = True

    def get_states(self, merge_multi_context: bool = True):
        """The current bucket's states."""
        return self._curr_module.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None) -> None:
        """Set the current bucket's states."""
        self._curr_module.set_states(states, value)

    # ------------------------------------------------------------------ binding
    def bind(self, data_shapes, label_shapes=None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False, shared_module=None,
             grad_req="write") -> None:
        """Bind the default bucket's Module (the others are bound when first used)."""
        arg_params = aux_params = None
        if self.params_initialized:
            arg_params, aux_params = self.get_params()
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if shared_module is not None:
            raise ValueError("BucketingModule.bind: shared_module is not supported")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.binded = True
        self._grad_req = grad_req
        symbol, data_names, label_names = self._call_sym_gen(self._default_bucket_key)
        module = self._buckets.get(self._default_bucket_key) or \
            self._module(symbol, data_names, label_names)
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                    force_rebind=False, shared_module=None, grad_req=grad_req)
        self._curr_module = module
        self._curr_bucket_key = self._default_bucket_key
        self._buckets[self._default_bucket_key] = module
        if arg_params is not None:
            self.set_params(arg_params, aux_params)

    def switch_bucket(self, bucket_key, data_shapes, label_shapes=None) -> None:
        """Make ``bucket_key`` current, binding its Module (sharing parameters) if new."""
        self._need("switch_bucket")
        default = self._buckets[self._default_bucket_key]
        if bucket_key not in self._buckets:
            symbol, data_names, label_names = self._call_sym_gen(bucket_key)
            module = self._module(symbol, data_names, label_names)
            module.bind(data_shapes, label_shapes, self._curr_module.for_training,
                        self._curr_module.inputs_need_grad, force_rebind=False,
                        shared_module=default, grad_req=self._grad_req)
            if self._monitor is not None:
                module.install_monitor(self._monitor)
            self._buckets[bucket_key] = module
        else:
            module = self._buckets[bucket_key]
            if not module.binded:
                module.bind(data_shapes, label_shapes, self._curr_module.for_training,
                            self._curr_module.inputs_need_grad, force_rebind=False,
                            shared_module=default, grad_req=self._grad_req)
        self._curr_module = self._buckets[bucket_key]
        self._curr_bucket_key = bucket_key

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),),
                       force_init: bool = False) -> None:
        """Install the optimizer on the current Module; the other buckets borrow it."""
        self._need("init_optimizer", params=True)
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        self._curr_module.init_optimizer(kvstore, optimizer, optimizer_params,
                                         force_init=force_init)
        for module in self._buckets.values():
            if module is not self._curr_module:
                module.borrow_optimizer(self._curr_module)
        self.optimizer_initialized = True

    # ------------------------------------------------------------------ computation
    def prepare(self, data_batch, sparse_row_id_fn=None) -> None:
        """Bind the batch's bucket ahead of time (the current bucket is kept)."""
        self._need("prepare", params=True)
        key = getattr(data_batch, "bucket_key", None)
        if key is None:
            return
        original = self._curr_bucket_key
        self.switch_bucket(key, data_batch.provide_data, data_batch.provide_label)
        self._curr_module.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self.switch_bucket(original, None, None)

    def forward(self, data_batch, is_train=None) -> None:
        """Switch to the batch's bucket (default when it has none) and run forward."""
        self._need("forward", params=True)
        key = getattr(data_batch, "bucket_key", None)
        if key is None:
            key = self._default_bucket_key
        provide_data = getattr(data_batch, "provide_data", None)
        if key not in self._buckets and not provide_data:
            raise ValueError(f"BucketingModule.forward: the batch for new bucket {key!r} "
                             "needs provide_data (and provide_label) to bind it")
        self.switch_bucket(key, provide_data, getattr(data_batch, "provide_label", None))
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads=None) -> None:
        """Backward on the current bucket."""
        self._need("backward", params=True)
        self._curr_module.backward(out_grads=out_grads)

    def update(self) -> None:
        """Update the shared parameters."""
        self._need("update", params=True, optimizer=True)
        self._params_dirty = True
        self._curr_module.update()

    def get_outputs(self, merge_multi_context: bool = True):
        """The current bucket's outputs."""
        self._need("get_outputs", params=True)
        return self._curr_module.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context: bool = True):
        """The current bucket's input gradients."""
        self._need("get_input_grads", params=True)
        return self._curr_module.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced: bool = False) -> None:
        """Update a metric with the current bucket's outputs."""
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon) -> None:
        """Install a monitor on every bucket (and the ones bound later)."""
        self._need("install_monitor")
        self._monitor = mon
        for module in self._buckets.values():
            module.install_monitor(mon)

    # ------------------------------------------------------------------ files
    def save_checkpoint(self, prefix: str, epoch: int, remove_amp_cast: bool = False) -> None:
        """Write ``prefix-%04d.params``, ``prefix-<key>-symbol.json`` per bucket and
        ``prefix.buckets`` (the keys, int32), as MXNet does."""
        from .. import nd, serialization
        if not self._buckets:
            raise RuntimeError("BucketingModule.save_checkpoint: empty BucketingModule "
                               "cannot be saved")
        self.save_params(f"{prefix}-{int(epoch):04d}.params")
        for key in self._buckets:
            symbol, _, _ = self._call_sym_gen(key)
            symbol.save(f"{prefix}-{key}-symbol.json", remove_amp_cast=remove_amp_cast)
        serialization.save(f"{prefix}.buckets",
                           [nd.array(list(self._buckets), dtype=numpy.int32)])

    @staticmethod
    def load(prefix: str, epoch: int, sym_gen=None, default_bucket_key=None, **kwargs):
        """A BucketingModule from :meth:`save_checkpoint`'s files (``sym_gen`` gives the
        input names; the symbols come from the files)."""
        from .. import serialization, sym
        from ..model import load_params
        if sym_gen is None or default_bucket_key is None:
            raise ValueError("BucketingModule.load: sym_gen and default_bucket_key are "
                             "required")
        fname = f"{prefix}.buckets"
        if not os.path.isfile(fname):
            raise FileNotFoundError(f"BucketingModule.load: no bucket file {fname!r}")
        loaded = serialization.load(fname)
        keys = loaded if isinstance(loaded, list) else list(loaded.values())
        buckets = [int(k) for k in keys[0].asnumpy().astype("int32")]
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for key in buckets:
            _, data_names, label_names = mod._call_sym_gen(key)
            symbol = sym.load(f"{prefix}-{key}-symbol.json")
            mod._buckets[key] = Module(symbol, data_names, label_names, **kwargs)
            if key == default_bucket_key:
                mod._curr_module = mod._buckets[key]
        if mod._curr_module is None:
            raise ValueError(f"BucketingModule.load: {fname!r} has no default bucket "
                             f"{default_bucket_key!r} (it has {buckets})")
        arg_params, aux_params = load_params(prefix, epoch)
        mod._curr_module._arg_params = arg_params
        mod._curr_module._aux_params = aux_params
        mod._curr_module.params_initialized = True
        mod.params_initialized = True
        return mod
