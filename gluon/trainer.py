"""``Trainer``: applies an optimizer to a set of Parameters (MXNet Gluon 1.9's ``gluon.Trainer``).

``step(batch_size)`` is ``allreduce_grads()`` then ``update(batch_size)``, with the
gradients scaled by ``1 / batch_size`` inside the optimizer (``rescale_grad``); both
halves are public so that gradients can be changed in between (clipping, say).

Several contexts (``initialize(ctx=[cpu(0), cpu(1)])``): each parameter has one replica
and one gradient per context. ``allreduce_grads`` sums a parameter's gradients over the
contexts and writes the sum into every gradient (``core.parallel``, through the
``local`` kvstore); ``update`` then runs one optimizer updater per context on that
context's replica. Every replica sees the same weight, the same summed gradient and
the same optimizer state, so the replicas stay bitwise identical. With
``update_on_kvstore=True`` the update runs once, on the store's copy of each weight
(on the first context), and the new weight is copied into every replica; ``step`` is
then the only way to update.

:meth:`Trainer.forward_backward` runs the replicas' forward and backward passes
concurrently, one per context on the dependency engine's workers, and starts each
parameter's all-reduce as soon as backward is done with it on every context, so the
summing overlaps the rest of backward (``core.parallel.forward_backward``); the next
``step`` then only updates.

Example:
    >>> from core import nd, autograd
    >>> from gluon import Parameter, Trainer
    >>> w = Parameter("w", shape=(2,), init="ones"); w.initialize()
    >>> trainer = Trainer([w], "sgd", {"learning_rate": 0.1})
    >>> with autograd.record():
    ...     loss = (w.data() * nd.array([1.0, 2.0])).sum()
    >>> loss.backward()
    >>> trainer.step(1)
    >>> w.data().asnumpy().tolist()
    [0.9, 0.8]
"""
from __future__ import annotations

import os

import numpy

from core import autograd, nd, parallel
from core import optimizer as opt
from core.kvstore import KVStoreBase

from .parameter import Parameter, ParameterDict

__all__ = ["StaleGradientError", "Trainer", "UpdateOnKVStoreError"]

# MXNet's model._create_kvstore: the 'local' store updates on the workers when a
# parameter has more elements than this.
_LOCAL_UPDATE_LIMIT = 1024 * 1024 * 16


class StaleGradientError(UserWarning, RuntimeError):
    """A parameter's gradient was not written by backward since the last update.

    A ``UserWarning`` (what MXNet raises, so ``except UserWarning`` keeps working) and a
    ``RuntimeError``.
    """


class UpdateOnKVStoreError(RuntimeError, AssertionError):
    """``allreduce_grads``/``update`` called while the kvstore runs the updates.

    A ``RuntimeError`` and an ``AssertionError`` (what MXNet 1.9.1 raises).
    """


class Trainer:
    """Applies an optimizer to a set of Parameters; use it with ``autograd``.

    Args:
        params: the parameters to optimize: a ParameterDict, a dict of name to
            Parameter (both taken in sorted name order, as MXNet does) or a list of
            Parameters. A parameter listed twice (shared) is updated once.
        optimizer: an optimizer name (``'sgd'``, ``'adam'``, ...) or an Optimizer.
        optimizer_params: keyword arguments for the optimizer named by ``optimizer``
            (``{'learning_rate': 0.1, 'wd': 1e-4}``); must be empty for an Optimizer.
        kvstore: how gradients are summed over contexts: ``'device'`` or ``'local'``
            (in one process both use the local store), a ``core.kvstore`` store, or
            None. With one context no store is used. With several contexts and
            ``kvstore=None`` the gradients are still summed (directly, without a store).
            A distributed store (``'dist_sync'``) is created here, and rank 0's
            weights are copied to every worker at once (deferred parameters at their
            first step), so every worker's first forward pass uses the same weights.
        compression_params: gradient compression for the store; only
            ``{'type': 'none'}`` is supported (2-bit compression is not implemented).
        update_on_kvstore: True runs the optimizer once on the store and copies the new
            weights to every context; False updates every replica with the summed
            gradient. None chooses as MXNet 1.9.1 does: on the store when there is one
            that can run optimizers, unless the environment variable
            ``MXNET_UPDATE_ON_KVSTORE`` is ``0`` or a ``'local'`` store holds a
            parameter of more than 16M elements; with sparse (``row_sparse``) weights
            always on the store (False is then an error); with dense weights and sparse
            gradients on the replicas (on the store for a distributed store).

    Raises:
        ValueError: ``params`` is not a list or dict of Parameters, or the parameters
            live on different sets of contexts.

    Example:
        >>> from gluon import Parameter, Trainer
        >>> w = Parameter("w", shape=(3,)); w.initialize()
        >>> trainer = Trainer({"w": w}, "adam", {"learning_rate": 0.01})
        >>> trainer.learning_rate
        0.01
        >>> trainer.set_learning_rate(0.001); trainer.optimizer.learning_rate
        0.001
    """

    def __init__(self, params, optimizer, optimizer_params=None, kvstore="device",
                 compression_params=None, update_on_kvstore=None):
        if isinstance(params, (dict, ParameterDict)):
            params = [params[k] for k in sorted(params.keys())]
        if not isinstance(params, (list, tuple)):
            msg = f"First argument must be a list or dict of Parameters, got {type(params)}."
            raise ValueError(msg)  # noqa: TRY004 - MXNet raises ValueError
        self._params: list = []
        self._param2idx: dict = {}
        self._contains_sparse_weight = False
        self._contains_sparse_grad = False
        for p in params:
            if not isinstance(p, Parameter):
                msg = ("First argument must be a list or dict of Parameters, got list of "
                       f"{type(p)}.")
                raise ValueError(msg)  # noqa: TRY004 - MXNet raises ValueError
            if id(p) in self._param2idx:
                continue
            self._param2idx[id(p)] = len(self._params)
            self._params.append(p)
            p._set_trainer(self)
            self._contains_sparse_weight |= p._stype != "default"
            self._contains_sparse_grad |= p._grad_stype != "default"
        self._compression_params = compression_params
        self._contexts = self._check_contexts()
        self._init_optimizer(optimizer, optimizer_params or {})
        self._scale = self._optimizer.rescale_grad
        if kvstore is not None and not isinstance(kvstore, (str, KVStoreBase)):
            raise TypeError(f"kvstore must be None, a store name or a KVStoreBase, got "
                            f"{type(kvstore).__name__}")
        self._kvstore_params = {"kvstore": kvstore, "update_on_kvstore": update_on_kvstore}
        self._kv_initialized = False
        self._stepped = False  # whether step/update has set rescale_grad once
        self._kvstore = None
        self._update_on_kvstore = None
        self._distributed = None
        self._params_to_init: list = []
        self._fresh = None  # freshness of the gradients, taken before allreduce_grads
        self._pending = None  # (core.parallel.Step, keys) of the last forward_backward
        self._reset_kvstore()
        if "dist" in str(getattr(kvstore, "type", kvstore)):
            # every worker starts from rank 0's weights before its first forward pass
            self._prepare()

    # ------------------------------------------------------------------ set-up
    def _check_contexts(self) -> list:
        contexts = None
        for p in self._params:
            ctx = p.list_ctx()
            if contexts is not None and contexts != ctx:
                raise ValueError(f"All Parameters must be initialized on the same set of "
                                 f"contexts, but Parameter '{p.name}' is initialized on {ctx} "
                                 f"while previous Parameters are initialized on {contexts}.")
            contexts = ctx
        return contexts or []

    def _init_optimizer(self, optimizer, optimizer_params: dict) -> None:
        # param_dict is shared, not copied: later changes to lr_mult/wd_mult apply.
        param_dict = dict(enumerate(self._params))
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise ValueError("optimizer_params must be None if optimizer is an instance "
                                 "of Optimizer instead of str")
            self._optimizer = optimizer
            self._optimizer.param_dict = param_dict
        elif isinstance(optimizer, str):
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        else:
            raise TypeError(f"optimizer must be an optimizer name or a "
                            f"core.optimizer.Optimizer, got {type(optimizer).__name__}")
        self._updaters = [opt.get_updater(self._optimizer) for _ in self._contexts]

    def _reset_kvstore(self) -> None:
        """Drop the store; the next update creates a new one and copies every parameter
        into it (MXNet 1.9.1's ``Trainer._reset_kvstore``).

        ``Parameter.set_data`` (and so ``load_parameters``) calls this when the store
        holds the weights (``update_on_kvstore``); the optimizer states the store kept
        are dropped with it, as in MXNet.

        The store holds the only current value of a ``row_sparse`` weight (its
        replicas hold the rows last pulled): it is pulled in full into the replicas
        first, so that the new store starts from it.

        Raises:
            RuntimeError: the store is distributed.
        """
        kv = self._kvstore
        if kv is not None and "dist" in kv.type:
            raise RuntimeError("Cannot reset distributed KVStore.")
        if kv is not None and self._update_on_kvstore:
            for p in self._params:
                if p._stype != "default" and p._data is not None and \
                        p not in self._params_to_init:
                    idx = self._param2idx[id(p)]
                    kv.pull(idx, out=p._list_data(), priority=-idx, ignore_sparse=False)
        self._kv_initialized = False
        self._kvstore = None
        self._distributed = None
        self._update_on_kvstore = None
        self._params_to_init = list(self._params)

    def _init_kvstore(self) -> None:
        """Create the store (lazily, at the first update) and choose where updates run,
        as MXNet 1.9.1's ``Trainer._init_kvstore`` (see ``update_on_kvstore``)."""
        config = self._kvstore_params
        requested = config["update_on_kvstore"]
        if self._contains_sparse_weight:
            kvstore, update_on_kvstore = self._sparse_kvstore(config["kvstore"]), True
            if requested is False:
                raise ValueError("Cannot set update_on_kvstore=False when sparse weights are "
                                 "present.")
        else:
            kvstore, _ = parallel.create_kvstore(config["kvstore"], len(self._contexts), None)
            distributed = kvstore is not None and "dist" in kvstore.type
            if self._contains_sparse_grad:
                update_on_kvstore = distributed
                if requested is False and distributed:
                    raise ValueError("Cannot set update_on_kvstore=False on dist kvstore when "
                                     "sparse gradients are present.")
            else:
                update_on_kvstore = self._default_update_on_kvstore(config["kvstore"])
                if distributed and "async" in kvstore.type:
                    if requested is False:
                        raise ValueError("Please set update_on_kvstore=True when training in "
                                         "async mode.")
                    update_on_kvstore = True
            if requested is not None:
                update_on_kvstore = bool(requested)
            capable = kvstore is not None and kvstore.is_capable(KVStoreBase.OPTIMIZER)
            if update_on_kvstore and kvstore is not None and not capable:
                if requested:
                    raise ValueError(f"update_on_kvstore=True, but the {kvstore.type!r} "
                                     "store cannot run optimizers; set "
                                     "update_on_kvstore=False")
                update_on_kvstore = False
        if kvstore is not None:
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kvstore.set_optimizer(self._optimizer)
        self._kvstore = kvstore
        self._update_on_kvstore = update_on_kvstore if kvstore is not None else None
        self._distributed = kvstore is not None and "dist" in kvstore.type
        self._kv_initialized = True

    def _default_update_on_kvstore(self, kvstore) -> bool:
        """MXNet's choice for dense parameters when ``update_on_kvstore`` is None."""
        if os.environ.get("MXNET_UPDATE_ON_KVSTORE", "1").strip() not in ("1", "true", "True"):
            return False
        return not (kvstore == "local" and any(
            p.shape and int(numpy.prod(p.shape)) > _LOCAL_UPDATE_LIMIT for p in self._params))

    @staticmethod
    def _sparse_kvstore(kvstore) -> KVStoreBase:
        """The store of a trainer with row_sparse weights: always one, able to update."""
        if isinstance(kvstore, KVStoreBase):
            kv = kvstore
        elif isinstance(kvstore, str):
            from core import kvstore as kvs

            kv = kvs.create(kvstore)
        else:
            raise TypeError(f"Cannot create {kvstore!r} KVStore with row_sparse parameters. "
                            "The type must be KVStore or str.")
        if not kv.is_capable(KVStoreBase.OPTIMIZER):
            raise ValueError(f"KVStore with sparse weight requires optimizer support, but "
                             f"the {kv.type!r} store does not support optimizer. Use another "
                             "store (e.g. 'local' or 'device').")
        return kv

    def _row_sparse_pull(self, parameter: Parameter, out, row_id, full_idx: bool = False):
        """Fill ``out`` (a replica or a list of them) with ``row_id``'s rows of
        ``parameter`` from the store (all rows with ``full_idx``, through ``pull``)."""
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params(sparse_only=True)
        idx = self._param2idx[id(parameter)]
        if full_idx and "dist" not in self._kvstore.type:
            self._kvstore.pull(idx, out=out, priority=-idx, ignore_sparse=False)
        else:
            self._kvstore.row_sparse_pull(idx, out=out, row_ids=row_id, priority=-idx)

    def _init_params(self, sparse_only: bool = False) -> None:
        """Copy the parameters waiting in ``_params_to_init`` into the store (and the
        first replica into the others); deferred ones wait for their shapes.

        Args:
            sparse_only: only the sparse ones (a pull during the forward pass: writing
                the dense replicas then would change arrays the recorded graph uses).
        """
        waiting, ready = [], []
        for p in self._params_to_init:
            wait = p._deferred_init or p._data is None or (sparse_only and
                                                           p._stype == "default")
            (waiting if wait else ready).append(p)
        dense = [p for p in ready if p._stype == "default"]
        if self._kvstore is not None:
            for p in ready:
                if p._stype != "default":  # the store keeps the weight, replicas pull rows
                    self._kvstore.init(self._param2idx[id(p)], p._list_data()[0])
            if dense:
                parallel.broadcast_params(self._kvstore, [p.list_data() for p in dense],
                                          keys=[self._param2idx[id(p)] for p in dense])
        self._params_to_init = waiting

    def _prepare(self) -> None:
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()

    # ------------------------------------------------------------------ properties
    @property
    def learning_rate(self) -> float:
        """The optimizer's current learning rate."""
        return self._optimizer.learning_rate

    @property
    def optimizer(self) -> opt.Optimizer:
        """The optimizer."""
        return self._optimizer

    def set_learning_rate(self, lr: float) -> None:
        """Set a new learning rate of the optimizer.

        Args:
            lr: the new learning rate.

        Raises:
            UserWarning: (raised) the optimizer's learning rate comes from a scheduler.
        """
        self._optimizer.set_learning_rate(lr)

    def _check_and_rescale_grad(self, scale: float) -> None:
        # from the second step on (a dist store exists from the construction on, but
        # the first step sets the scale, as MXNet's first step does before its store)
        if self._update_on_kvstore and self._distributed and self._stepped \
                and self._optimizer.rescale_grad != scale:
            raise UserWarning("Possible change in the `batch_size` from previous `step` "
                              "detected. Optimizer gradient normalizing factor will not "
                              "change w.r.t new batch_size when update_on_kvstore=True and "
                              "when distributed kvstore is used.")
        self._optimizer.rescale_grad = scale
        self._stepped = True

    # ------------------------------------------------------------------ freshness
    def _take_freshness(self) -> list:
        """Per parameter, per replica: written by backward since the last update?

        Taken before anything writes the gradients in place (the all-reduce does), since
        any in-place write makes a gradient look fresh. None for ``grad_req='null'``.
        """
        fresh = []
        for p in self._params:
            if p.grad_req == "null":
                fresh.append(None)
                continue
            p._list_data()  # an uninitialized (or deferred) parameter raises here
            fresh.append(p._check_fresh())
        return fresh

    def _take_pending(self) -> tuple:
        """Freshness (as :meth:`_take_freshness`) and the indices of the parameters that
        the last :meth:`forward_backward` all-reduced already; consumes that step.

        For those, the freshness is what backward wrote (the all-reduce writes every
        replica, stale ones too).
        """
        fresh = self._take_freshness()
        pending, self._pending = self._pending, None
        if pending is None:
            return fresh, set()
        step, keys = pending
        step.wait()
        done = set()
        for j, i in enumerate(keys):
            if step.reduced[j]:
                fresh[i] = list(step.fresh[j])
                done.add(i)
        return fresh, done

    def _check_stale(self, fresh: list) -> None:
        for p, f in zip(self._params, fresh):
            if f is None or all(f):
                continue
            ctx = p.list_ctx()[f.index(False)]
            raise StaleGradientError(
                f"Gradient of Parameter `{p.name}` on context {ctx} has not been updated by "
                "backward since last `step`. This could mean a bug in your model that made "
                "it only use a subset of the Parameters (Blocks) for this iteration. If you "
                "are intentionally only using a subset, call step with "
                "ignore_stale_grad=True to suppress this warning and skip updating of "
                "Parameters with stale gradient")

    # ------------------------------------------------------------------ training
    def step(self, batch_size: float, ignore_stale_grad: bool = False) -> None:
        """One update step: :meth:`allreduce_grads` then :meth:`update`.

        Call it after ``backward()``, outside ``autograd.record()``.

        Args:
            batch_size: the gradients are scaled by ``1 / batch_size`` (through the
                optimizer's ``rescale_grad``). Use 1 if the loss is a mean already.
            ignore_stale_grad: skip parameters whose gradients backward did not write
                since the last update, instead of raising. On several contexts a
                replica with a stale gradient adds nothing to the sum.

        Raises:
            StaleGradientError: (a ``UserWarning``) a stale gradient, naming the
                parameter and the context, and nothing is changed.
        """
        self._check_and_rescale_grad(self._scale / batch_size)
        self._prepare()
        fresh, reduced = self._take_pending()
        if not ignore_stale_grad:
            self._check_stale(fresh)
        if self._kvstore is not None and self._update_on_kvstore:
            self._fresh = None
            self._update_on_store(fresh)
            return
        self._allreduce_grads(fresh, reduced)
        self._fresh = None
        self._update(fresh)

    def allreduce_grads(self) -> None:
        """Sum every parameter's gradients over its contexts, in place.

        Call it after ``backward()`` and before :meth:`update`, to work on the summed
        gradients in between (e.g. ``gluon.utils.clip_global_norm``). With one context
        there is nothing to sum.

        Raises:
            UpdateOnKVStoreError: (a ``RuntimeError``) the trainer updates on the kvstore
                (``update_on_kvstore=True``); use :meth:`step`.
        """
        self._prepare()
        if self._kvstore is not None and self._update_on_kvstore:
            raise UpdateOnKVStoreError("allreduce_grads() when parameters are updated on "
                                       "kvstore is not supported. Try setting "
                                       "`update_on_kvstore` to False when creating trainer.")
        fresh, reduced = self._take_pending()
        if self._fresh is None:  # the first call since the last update counts
            self._fresh = fresh
        self._allreduce_grads(fresh, reduced)

    def _allreduce_grads(self, fresh: list, reduced=frozenset()) -> None:
        """Sum the fresh gradients, except those of ``reduced`` (summed already)."""
        if len(self._contexts) <= 1 and self._kvstore is None:
            return
        keys, grads, outs = [], [], []
        for i, (p, f) in enumerate(zip(self._params, fresh)):
            if f is None or i in reduced or not (any(f) or self._distributed):
                continue
            g = p.list_grad()
            if self._kvstore is not None and g[0].stype != "default":
                # MXNet: sparse gradients are pushed, and pulled back separately
                self._kvstore.push(i, [x for x, ok in zip(g, f) if ok] or g, priority=-i)
                self._kvstore.pull(i, out=g, priority=-i, ignore_sparse=self._distributed)
                continue
            keys.append(i)
            # a distributed store's collectives need every worker: zeros if none fresh
            grads.append([x for x, ok in zip(g, f) if ok] or [nd.zeros_like(g[0])])
            outs.append(g)
        parallel.allreduce_grads(self._kvstore, grads, out=outs, keys=keys)

    def forward_backward(self, fn, *data, batch_axis: int = 0, even_split: bool = False,
                         overlap: bool = True) -> list:
        """Forward and backward on every context at once, the all-reduce overlapping.

        Each array of ``data`` is split along ``batch_axis`` over the trainer's
        contexts (``split_and_load``); on each context's engine worker, ``fn`` runs on
        that context's slices under ``autograd.record()`` and backward runs from the
        loss it returns; as soon as a parameter's gradient is final on every context,
        its all-reduce starts (the first layers first when several wait). Then call
        :meth:`step` (or :meth:`allreduce_grads` and :meth:`update`): it updates with
        the summed gradients without summing them again. The results equal a
        ``backward`` per context followed by :meth:`step`.

        ``fn`` runs on worker threads: it must not read or write state shared by the
        contexts (a Block's parameters per context and its layers are fine). A first
        call with deferred-initialized parameters runs ``fn`` once on the first slice
        outside ``record`` (in predict mode) to initialize them (so their random draws
        come before the first Dropout's, unlike in a first recorded forward).

        Args:
            fn: ``fn(*slices) -> loss`` (an NDArray, or a list of them).
            *data: the batch's arrays (data, labels, ...), NDArrays or array-likes.
            batch_axis: the axis to split along.
            even_split: require the batch to split evenly over the contexts.
            overlap: False starts the all-reduces only after every backward finished
                (to measure what the overlap saves; the same results).

        Returns:
            The losses, one per context (what ``fn`` returned there).

        Raises:
            ValueError: no data, or data that cannot be split as asked.
            core.engine.EngineError: ``fn`` or backward raised on some context (the
                message names the context and the original error).

        Example:
            >>> from core import nd, cpu
            >>> from gluon import nn, Trainer, loss as gloss
            >>> net = nn.Dense(1, in_units=2); net.initialize(ctx=[cpu(0), cpu(1)])
            >>> trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
            >>> l2 = gloss.L2Loss()
            >>> x, y = nd.ones((4, 2)), nd.zeros((4, 1))
            >>> losses = trainer.forward_backward(lambda a, b: l2(net(a), b), x, y)
            >>> [loss.shape for loss in losses]
            [(2,), (2,)]
            >>> trainer.step(4)
        """
        if not data:
            raise ValueError("Trainer.forward_backward: no data to split over the contexts")
        self._prepare()
        ctxs = self._contexts
        slices = [parallel.split_batch(d, ctxs, batch_axis, even_split) for d in data]
        batches = list(zip(*slices))
        if any(p._deferred_init for p in self._params):
            with autograd.pause():  # shapes come from a first forward
                fn(*batches[0])
            self._prepare()
        keys = [i for i, p in enumerate(self._params) if p.grad_req != "null"]
        params = [self._params[i]._list_data() for i in keys]
        on_store = self._kvstore is not None and self._update_on_kvstore
        reduce = not on_store and (len(ctxs) > 1 or self._kvstore is not None)
        step = parallel.forward_backward(fn, batches, params, kvstore=self._kvstore,
                                         keys=keys, reduce=reduce, overlap=overlap)
        self._pending = (step, keys)
        return step.losses

    def update(self, batch_size: float, ignore_stale_grad: bool = False) -> None:
        """Update the parameters with their gradients (after :meth:`allreduce_grads`).

        Args:
            batch_size: the gradients are scaled by ``1 / batch_size``.
            ignore_stale_grad: skip parameters with stale gradients instead of raising.

        Raises:
            UpdateOnKVStoreError: (a ``RuntimeError``) the trainer updates on the kvstore
                (``update_on_kvstore=True``).
            StaleGradientError: (a ``UserWarning``) a stale gradient, naming the
                parameter and the context; nothing is updated.
        """
        self._prepare()
        if self._kvstore is not None and self._update_on_kvstore:
            raise UpdateOnKVStoreError("update() when parameters are updated on kvstore is "
                                       "not supported. Try setting `update_on_kvstore` to "
                                       "False when creating trainer.")
        self._check_and_rescale_grad(self._scale / batch_size)
        if self._fresh is not None:
            fresh = self._fresh
            self._pending = None
        else:
            fresh = self._take_pending()[0]
        self._fresh = None
        if not ignore_stale_grad:
            self._check_stale(fresh)
        self._update(fresh)

    def _update(self, fresh: list) -> None:
        """Update every replica of each parameter with a fresh gradient (one updater call
        per context, all parameters at once), then mark the gradients consumed."""
        keys, grads, weights, done = [], [], [], []
        for i, (p, f) in enumerate(zip(self._params, fresh)):
            if f is None or not any(f):
                continue
            keys.append(i)
            grads.append(p.list_grad())
            weights.append(p._list_data())
            done.append(p)
        parallel.update_replicas(self._updaters, grads, weights, keys=keys)
        for p in done:
            p._mark_stale()

    def _update_on_store(self, fresh: list) -> None:
        keys, grads, weights, done = [], [], [], []
        for i, (p, f) in enumerate(zip(self._params, fresh)):
            if f is None or not any(f):
                continue
            done.append(p)
            fresh_grads = [x for x, ok in zip(p.list_grad(), f) if ok]
            if p._stype != "default":
                # the store keeps the weight; replicas pull their rows (row_sparse_data)
                self._kvstore.push(i, fresh_grads, priority=-i)
                continue
            if fresh_grads[0].stype != "default":
                # MXNet: push the sparse gradients, pull the dense weights
                self._kvstore.push(i, fresh_grads, priority=-i)
                self._kvstore.pull(i, out=p._list_data(), priority=-i,
                                   ignore_sparse=self._distributed)
                continue
            keys.append(i)
            grads.append(fresh_grads)
            weights.append(p._list_data())
        parallel.pushpull_update(self._kvstore, grads, weights, keys=keys)
        for p in done:
            p._mark_stale()

    # ------------------------------------------------------------------ states
    def save_states(self, fname: str) -> None:
        """Save the optimizer and its states (momentum, moments, update counts) to
        ``fname``, atomically and without pickle (``Updater.get_states`` bytes).

        ``optimizer.param_dict`` (the parameters' ``lr_mult``/``wd_mult``) is not saved.

        Args:
            fname: the file.

        Example:
            >>> import os, tempfile
            >>> from gluon import Parameter, Trainer
            >>> w = Parameter("w", shape=(2,)); w.initialize()
            >>> trainer = Trainer([w], "adam")
            >>> path = os.path.join(tempfile.mkdtemp(), "trainer.states")
            >>> trainer.save_states(path); trainer.load_states(path)
        """
        self._prepare()
        if self._kvstore is not None and self._update_on_kvstore:
            if self._params_to_init:
                raise RuntimeError("Cannot save trainer states when some parameters are not "
                                   "yet initialized in kvstore.")
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
        else:
            parallel.save_states(fname, self._updaters[0], dump_optimizer=True)

    def load_states(self, fname: str) -> None:
        """Load what :meth:`save_states` wrote: the optimizer's settings and states.

        ``optimizer.param_dict`` is set from this trainer's parameters, not the file.

        Args:
            fname: the file.

        Raises:
            ValueError: the file does not hold optimizer states (MXNet's pickled
                states are refused).
        """
        self._prepare()
        if self._kvstore is not None and self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer
        else:
            parallel.load_states(fname, self._updaters)
            for u in self._updaters:
                u.optimizer = self._updaters[0].optimizer
            self._optimizer = self._updaters[0].optimizer
        self._optimizer.param_dict = dict(enumerate(self._params))
