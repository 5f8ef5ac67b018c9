"""``Module``: a Symbol bound to data, trained with an optimizer (MXNet's ``mx.mod.Module``).

Example:
    >>> import numpy as np
    >>> from core import io, sym
    >>> from core.module import Module
    >>> net = sym.SoftmaxOutput(sym.FullyConnected(sym.var("data"), num_hidden=2, name="fc"),
    ...                         name="softmax")
    >>> mod = Module(net)
    >>> it = io.NDArrayIter(np.random.rand(8, 3), np.arange(8) % 2, batch_size=4)
    >>> mod.bind(it.provide_data, it.provide_label)
    >>> mod.init_params()
    >>> mod.init_optimizer(optimizer_params={"learning_rate": 0.1})
    >>> batch = next(it)
    >>> mod.forward_backward(batch); mod.update()
    >>> mod.get_outputs()[0].shape
    (4, 2)
"""
from __future__ import annotations

import logging
import os
import warnings

import numpy

from .. import optimizer as opt
from ..context import Context, cpu
from ..io.base import DataDesc
from .base_module import BaseModule, check_input_names, parse_data_desc
from .executor_group import DataParallelExecutorGroup

__all__ = ["Module"]

_LOG = logging.getLogger(__name__)


def create_kvstore(kvstore, num_device: int, arg_params: dict) -> tuple:
    """``(kvstore or None, update_on_kvstore)`` as MXNet's ``model._create_kvstore``."""
    from .. import kvstore as kvs
    update_on_kvstore = bool(int(os.getenv("MXNET_UPDATE_ON_KVSTORE", "1")))
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, kvs.KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and "dist" not in kvstore:
            kv = None  # one device: nothing to aggregate
        else:
            kv = kvs.create(kvstore)
            if kvstore == "local" and arg_params and \
                    max(int(numpy.prod(p.shape)) for p in arg_params.values()) > 1 << 24:
                update_on_kvstore = False
    else:
        raise TypeError(f"kvstore must be a KVStore, a str or None, got {type(kvstore).__name__}")
    if kv is None:
        update_on_kvstore = False
    else:
        update_on_kvstore &= kv.is_capable(kvs.KVStoreBase.OPTIMIZER)
    return kv, update_on_kvstore


class Module(BaseModule):
    """A Symbol with its executors, parameters and optimizer (MXNet's ``Module``).

    Args:
        symbol: the network (its outputs are usually loss heads such as
            ``sym.SoftmaxOutput``).
        data_names: the data inputs' names (default ``('data',)``).
        label_names: the labels' names (default ``('softmax_label',)``).
        logger: the logger.
        context: a context or a list of them; the batch is split over them.
        work_load_list: the relative batch share of each context.
        fixed_param_names: parameters that are not trained.
        state_names: arguments that are states (set with ``set_states``).
        group2ctxs: ``{ctx_group: context}`` placing the arrays of variables made under
            ``AttrScope(ctx_group=...)`` (see ``DataParallelExecutorGroup``).
        compression_params: passed to the kvstore's ``set_gradient_compression``.

    Raises:
        ValueError: a data, state or fixed-parameter name is not an argument of the
            symbol (a label name only warns, as in MXNet).
    """

    def __init__(self, symbol, data_names=("data",), label_names=("softmax_label",),
                 logger=logging, context=None, work_load_list=None, fixed_param_names=None,
                 state_names=None, group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        if context is None:
            context = cpu()
        if isinstance(context, Context):
            context = [context]
        self._context = list(context)
        if work_load_list is None:
            work_load_list = [1] * len(self._context)
        if len(work_load_list) != len(self._context):
            raise ValueError(f"Module: work_load_list has {len(work_load_list)} entries for "
                             f"{len(self._context)} contexts")
        self._work_load_list = list(work_load_list)
        self._group2ctxs = group2ctxs
        self._symbol = symbol
        data_names = list(data_names) if data_names is not None else []
        label_names = list(label_names) if label_names is not None else []
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        check_input_names(symbol, data_names, "data", True)
        check_input_names(symbol, label_names, "label", False)
        check_input_names(symbol, state_names, "state", True)
        check_input_names(symbol, fixed_param_names, "fixed_param", True)
        arg_names = symbol.list_arguments()
        input_names = data_names + label_names + state_names
        self._param_names = [x for x in arg_names if x not in input_names]
        self._fixed_param_names = fixed_param_names
        self._aux_names = symbol.list_auxiliary_states()
        self._data_names = data_names
        self._label_names = label_names
        self._state_names = state_names
        self._output_names = symbol.list_outputs()
        self._arg_params = None
        self._aux_params = None
        self._params_dirty = False
        self._compression_params = compression_params
        self._optimizer = None
        self._kvstore = None
        self._update_on_kvstore = None
        self._updater = None
        self._preload_opt_states = None
        self._grad_req = None
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    # ------------------------------------------------------------------ files
    @staticmethod
    def load(prefix: str, epoch: int, load_optimizer_states: bool = False, **kwargs):
        """A Module from a checkpoint (``prefix-symbol.json``, ``prefix-%04d.params``).

        Args:
            prefix: the checkpoint's prefix.
            epoch: its epoch.
            load_optimizer_states: also restore ``prefix-%04d.states`` when the optimizer
                is initialized.
            **kwargs: passed to ``Module`` (``context``, ``data_names``, ...).
        """
        from ..model import load_checkpoint
        symbol, args, auxs = load_checkpoint(prefix, epoch)
        mod = Module(symbol=symbol, **kwargs)
        mod._arg_params = args
        mod._aux_params = auxs
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = f"{prefix}-{int(epoch):04d}.states"
        return mod

    def save_checkpoint(self, prefix: str, epoch: int, save_optimizer_states: bool = False,
                        remove_amp_cast: bool = True) -> None:
        """Write ``prefix-symbol.json``, ``prefix-%04d.params`` (and ``.states``)."""
        self._symbol.save(f"{prefix}-symbol.json", remove_amp_cast=remove_amp_cast)
        param_name = f"{prefix}-{int(epoch):04d}.params"
        self.save_params(param_name)
        _LOG.info('Saved checkpoint to "%s"', param_name)
        if save_optimizer_states:
            state_name = f"{prefix}-{int(epoch):04d}.states"
            self.save_optimizer_states(state_name)
            _LOG.info('Saved optimizer state to "%s"', state_name)

    def _reset_bind(self) -> None:
        self.binded = False
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    # ------------------------------------------------------------------ properties
    @property
    def data_names(self) -> list:
        """The data inputs' names."""
        return self._data_names

    @property
    def label_names(self) -> list:
        """The labels' names."""
        return self._label_names

    @property
    def output_names(self) -> list:
        """The outputs' names."""
        return self._output_names

    @property
    def data_shapes(self) -> list:
        """``DataDesc`` of the bound data inputs."""
        self._need("data_shapes")
        return self._data_shapes

    @property
    def label_shapes(self):
        """``DataDesc`` of the bound labels (or None)."""
        self._need("label_shapes")
        return self._label_shapes

    @property
    def output_shapes(self) -> list:
        """``[(name, shape)]`` of the outputs."""
        self._need("output_shapes")
        return self._exec_group.get_output_shapes()

    # ------------------------------------------------------------------ parameters
    def get_params(self) -> tuple:
        """``(arg_params, aux_params)``: copies on CPU, synced from the devices."""
        self._need("get_params", binded=False, params=True)
        if self._params_dirty:
            self._sync_params_from_devices()
        return self._arg_params, self._aux_params

    def init_params(self, initializer=None, arg_params=None, aux_params=None,
                    allow_missing: bool = False, force_init: bool = False,
                    allow_extra: bool = False) -> None:
        """Initialize the parameters and auxiliary states.

        Args:
            initializer: fills parameters not given in ``arg_params``/``aux_params``
                (default ``Uniform(0.01)``; with ``set_params``, None).
            arg_params: ``{name: NDArray}`` to copy from.
            aux_params: ``{name: NDArray}`` to copy from.
            allow_missing: with ``arg_params``, initialize the names it lacks instead of
                failing.
            force_init: re-initialize even if initialized.
            allow_extra: ignore names in ``arg_params`` the symbol does not have.

        Raises:
            RuntimeError: a parameter is missing from ``arg_params`` and
                ``allow_missing`` is False (the message names it).
        """
        from ..initializer import InitDesc, Uniform
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. "
                          "init_params call ignored.", stacklevel=2)
            return
        self._need("init_params")
        if initializer is None and arg_params is None and aux_params is None:
            initializer = Uniform(0.01)

        def _impl(name, arr, cache):
            if cache is not None:
                if name in cache:
                    if cache[name] is not arr:
                        _copy_param(cache[name], arr, name)
                    return
                if not allow_missing:
                    raise RuntimeError(f"init_params: {name!r} is not presented (not in the "
                                       "given params; pass allow_missing=True to initialize "
                                       "it)")
            if initializer is not None:
                initializer(name, arr)

        attrs = self._symbol.attr_dict()
        for name, arr in sorted(self._arg_params.items()):
            _impl(InitDesc(name, attrs.get(name, None)), arr, arg_params)
        for name, arr in sorted(self._aux_params.items()):
            _impl(InitDesc(name, attrs.get(name, None)), arr, aux_params)
        if not allow_extra:
            for kind, given, known in (("arg", arg_params, self._arg_params),
                                       ("aux", aux_params, self._aux_params)):
                extra = sorted(set(given or {}) - set(known))
                if extra:
                    raise ValueError(f"init_params: {kind}_params has {extra}, which the "
                                     f"symbol does not have (allow_extra=True skips them)")
        self.params_initialized = True
        self._params_dirty = False
        self._exec_group.set_params(self._arg_params, self._aux_params, allow_extra=True)

    def set_params(self, arg_params, aux_params, allow_missing: bool = False,
                   force_init: bool = True, allow_extra: bool = False) -> None:
        """Set the parameters from dicts of NDArrays."""
        self._set_given_params(
            lambda: self._exec_group.set_params(arg_params, aux_params, allow_extra=allow_extra),
            arg_params, aux_params, allow_missing, force_init, allow_extra)

    def _sync_params_from_devices(self) -> None:
        self._exec_group.get_params(self._arg_params, self._aux_params)
        self._params_dirty = False

    # ------------------------------------------------------------------ binding
    def bind(self, data_shapes, label_shapes=None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False, shared_module=None,
             grad_req="write") -> None:
        """Allocate the executors for these input shapes.

        Args:
            data_shapes: ``DataDesc`` list or ``[(name, shape)]`` (e.g. ``it.provide_data``).
            label_shapes: the same for the labels (None: no labels, e.g. prediction).
            for_training: allocate gradients (False: inference only).
            inputs_need_grad: also compute the data inputs' gradients.
            force_rebind: re-bind when bound already.
            shared_module: a bound Module whose parameters are shared (bucketing).
            grad_req: ``'write'``, ``'add'``, ``'null'``, or a list/dict per argument.
        """
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if not for_training and inputs_need_grad:
            raise ValueError("Module.bind: inputs_need_grad=True needs for_training=True")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        self._data_shapes, self._label_shapes = parse_data_desc(
            self.data_names, self.label_names, data_shapes, label_shapes)
        shared_group = None
        if shared_module is not None:
            if not (isinstance(shared_module, Module) and shared_module.binded
                    and shared_module.params_initialized):
                raise ValueError("Module.bind: shared_module must be a bound Module with "
                                 "initialized parameters")
            shared_group = shared_module._exec_group
        self._exec_group = DataParallelExecutorGroup(
            self._symbol, self._context, self._work_load_list, self._data_shapes,
            self._label_shapes, self._param_names, for_training, inputs_need_grad,
            shared_group, logger=self.logger, fixed_param_names=self._fixed_param_names,
            grad_req=grad_req, state_names=self._state_names, group2ctxs=self._group2ctxs)
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params = shared_module._arg_params
            self._aux_params = shared_module._aux_params
        elif self.params_initialized:
            # e.g. Module.load: parameters known before binding
            self._exec_group.set_params(self._arg_params, self._aux_params)
        else:
            from .. import nd
            stypes = _storage_types(self._symbol)  # sym.var(stype=): sparse parameters
            self._arg_params = {n: nd.zeros(b[0].shape, dtype=b[0].dtype,
                                            stype=stypes.get(n, "default")) for n, b in
                                zip(self._exec_group.param_names, self._exec_group.param_arrays)}
            self._aux_params = {n: nd.zeros(b[0].shape, dtype=b[0].dtype) for n, b in
                                zip(self._aux_names, self._exec_group.aux_arrays)}
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)
        self.binded = True

    def reshape(self, data_shapes, label_shapes=None) -> None:
        """Re-bind for new input shapes (parameters kept)."""
        self._need("reshape")
        self._data_shapes, self._label_shapes = parse_data_desc(
            self.data_names, self.label_names, data_shapes, label_shapes)
        self._exec_group.reshape(self._data_shapes, self._label_shapes)

    # ------------------------------------------------------------------ optimizer
    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),),
                       force_init: bool = False) -> None:
        """Install the optimizer (and the kvstore that aggregates over contexts).

        Args:
            kvstore: ``'local'``, ``'device'``, a KVStore or None. With one context and a
                name, no kvstore is used (as in MXNet).
            optimizer: a name (created with ``rescale_grad=1/batch_size``) or an
                ``Optimizer``.
            optimizer_params: the optimizer's keyword arguments.
            force_init: replace an installed optimizer.
        """
        self._need("init_optimizer", params=True)
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring...")
            return
        if self._params_dirty:
            self._sync_params_from_devices()
        kv, update_on_kvstore = create_kvstore(kvstore, len(self._context), self._arg_params)
        batch_size = self._exec_group.batch_size
        if kv is not None and "dist" in kv.type and "_sync" in kv.type:
            batch_size *= kv.num_workers
        rescale_grad = 1.0 / batch_size
        names = self._exec_group.param_names
        idx2name = {}
        if update_on_kvstore:
            idx2name.update(enumerate(names))
        else:
            n_dev = len(self._context)
            for k in range(n_dev):
                idx2name.update({i * n_dev + k: n for i, n in enumerate(names)})
        if isinstance(optimizer, str):
            optimizer_params = dict(optimizer_params)
            optimizer_params.setdefault("rescale_grad", rescale_grad)
            optimizer = opt.create(optimizer, sym=self.symbol, param_idx2name=idx2name,
                                   **optimizer_params)
        else:
            if not isinstance(optimizer, opt.Optimizer):
                raise TypeError(f"init_optimizer: optimizer must be a name or an Optimizer, "
                                f"got {type(optimizer).__name__}")
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn("Optimizer created manually outside Module but rescale_grad is "
                              f"not normalized to 1.0/batch_size/num_workers "
                              f"({optimizer.rescale_grad} vs. {rescale_grad}). Is this "
                              "intended?", stacklevel=2)
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()
        self._optimizer = optimizer
        self._kvstore = kv
        self._update_on_kvstore = update_on_kvstore
        self._updater = None
        if kv is not None:
            if self._compression_params:
                kv.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kv.set_optimizer(self._optimizer)
            for idx, on_devs in enumerate(self._exec_group.param_arrays):
                name = names[idx]
                if update_on_kvstore:
                    kv.broadcast(name, self._arg_params[name], out=on_devs)
                else:
                    kv.init(name, self._arg_params[name])
        if not update_on_kvstore:
            self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module) -> None:
        """Use ``shared_module``'s optimizer, kvstore and updater."""
        if not shared_module.optimizer_initialized:
            raise RuntimeError("borrow_optimizer: the shared module has no optimizer")
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        self.optimizer_initialized = True

    def save_optimizer_states(self, fname: str) -> None:
        """Write the optimizer states to ``fname`` (written atomically)."""
        from ..serialization import atomic_write
        self._need("save_optimizer_states", binded=False, optimizer=True)
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
            return
        blob = self._updater.get_states()
        atomic_write(fname, lambda f: f.write(blob))

    def load_optimizer_states(self, fname: str) -> None:
        """Read optimizer states written by :meth:`save_optimizer_states`."""
        self._need("load_optimizer_states", binded=False, optimizer=True)
        if not os.path.isfile(fname):
            raise FileNotFoundError(f"load_optimizer_states: no file {fname!r}")
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            return
        with open(fname, "rb") as f:
            self._updater.set_states(f.read())

    # ------------------------------------------------------------------ computation
    def forward(self, data_batch, is_train=None) -> None:
        """Forward computation; re-binds when the batch's shapes differ from the bound ones.

        Args:
            data_batch: a ``DataBatch``.
            is_train: training mode (default: ``for_training`` of ``bind``).
        """
        self._need("forward", params=True)
        curr = tuple(tuple(d.shape) for d in self._data_shapes)
        if isinstance(data_batch, list):  # pre-sliced, one batch per context (as MXNet)
            if not data_batch:
                raise ValueError("Module.forward: empty list of batches")
            new = tuple((len(data_batch) * b.shape[0],) + tuple(b.shape[1:])
                        for b in data_batch[0].data)
            if curr != new:
                raise ValueError(f"Module.forward: pre-sliced batches make shapes {new}, the "
                                 f"module is bound to {curr}")
            self._exec_group.forward(data_batch, is_train)
            return
        new = tuple(tuple(d.shape) for d in data_batch.data)
        if curr != new:
            provided = getattr(data_batch, "provide_data", None)
            if provided and sorted(d[0] for d in provided) == sorted(self._data_names):
                new_dshape = provided
            else:
                new_dshape = [DataDesc(d.name, s, d.dtype, d.layout)
                              for d, s in zip(self._data_shapes, new)]
            provided = getattr(data_batch, "provide_label", None)
            if provided and sorted(d[0] for d in provided) == sorted(self._label_names):
                new_lshape = provided
            elif getattr(data_batch, "label", None) and self._label_shapes:
                new_lshape = [DataDesc(d.name, lab.shape, d.dtype, d.layout)
                              for d, lab in zip(self._label_shapes, data_batch.label)]
            else:
                new_lshape = None
            self.reshape(new_dshape, new_lshape)
        self._exec_group.forward(data_batch, is_train)

    def backward(self, out_grads=None) -> None:
        """Backward computation (``out_grads``: gradients of the outputs, if not loss heads)."""
        self._need("backward", params=True)
        self._exec_group.backward(out_grads=out_grads)

    def update(self) -> None:
        """Update the parameters with the gradients of the last backward.

        With several contexts and a kvstore, the gradients are summed over the contexts
        (with ``update_on_kvstore``, the kvstore updates its copy and pulls it back to
        every context); otherwise each context's copy is updated with its own gradient.
        """
        self._need("update", params=True, optimizer=True)
        self._params_dirty = True
        group = self._exec_group
        names = group.param_names
        if self._update_on_kvstore:
            for index, (args, grads) in enumerate(zip(group.param_arrays, group.grad_arrays)):
                if grads[0] is None:
                    continue
                self._kvstore.pushpull(names[index], grads, out=args, priority=-index)
            return
        n_dev = len(self._context)
        updates = [[] for _ in range(n_dev)]
        for index, (args, grads) in enumerate(zip(group.param_arrays, group.grad_arrays)):
            if grads[0] is None:
                continue
            if self._kvstore is not None:
                self._kvstore.pushpull(names[index], grads, priority=-index)
            for k, (w, g) in enumerate(zip(args, grads)):
                updates[k].append((index * n_dev + k, g, w))
        for dev_updates in updates:
            if dev_updates:
                idx, g, w = zip(*dev_updates)
                self._updater(list(idx), list(g), list(w))

    def get_outputs(self, merge_multi_context: bool = True) -> list:
        """The outputs of the last forward (joined over the contexts)."""
        self._need("get_outputs", params=True)
        return self._exec_group.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context: bool = True) -> list:
        """The data inputs' gradients (bind with ``inputs_need_grad=True``)."""
        self._need("get_input_grads", params=True)
        return self._exec_group.get_input_grads(merge_multi_context=merge_multi_context)

    def get_states(self, merge_multi_context: bool = True) -> list:
        """The state arrays, per device."""
        self._need("get_states", params=True)
        return self._exec_group.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None) -> None:
        """Set the states from arrays or to one value."""
        self._need("set_states", params=True)
        self._exec_group.set_states(states, value)

    def update_metric(self, eval_metric, labels, pre_sliced: bool = False) -> None:
        """Update ``eval_metric`` with the last outputs and ``labels``."""
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon) -> None:
        """Install a ``Monitor`` on every executor."""
        self._need("install_monitor")
        self._exec_group.install_monitor(mon)


def _copy_param(src, dst, name) -> None:
    from .executor_group import copy_into
    copy_into(src, dst, f"init_params: {name!r}")


_STYPE_CODES = {"0": "default", "1": "row_sparse", "2": "csr"}


def _storage_types(symbol) -> dict:
    """``{variable name: storage type}`` from the ``__storage_type__`` attributes
    (``sym.var(..., stype=...)``; MXNet's storage-type codes)."""
    out = {}
    for name, attrs in symbol.attr_dict().items():
        code = attrs.get("__storage_type__")
        if code is not None:
            out[name] = _STYPE_CODES.get(str(code), "default")
    return out
