"""``keras.distribution.DataParallel`` for kbackend: one batch split over several devices.

When a ``DataParallel`` distribution is set (``keras.distribution.set_distribution``
or ``with distribution.scope():``), the built-in train, test and predict steps of
``model.fit``/``evaluate``/``predict`` run through :class:`ReplicatedSteps`:

1. The batch of ``n`` samples is split along axis 0 over this process' devices of
   the mesh (``core.parallel.split_batch``; uneven batches give the first devices one
   sample more, and a batch smaller than the number of devices uses the first ``n``).
2. Each replica runs the model on its slice on its own device: every Variable of the
   model (and of its metrics) is swapped for a per-device copy of its value while the
   replica runs, eagerly or through its own compiled program under ``jit_compile``
   (one :class:`kbackend.jit.CompiledSteps` per device).
3. Replica ``i``'s loss, a mean over its ``n_i`` samples, is scaled by ``n_i / N``
   (``N``: the global batch, all processes); the gradients are summed
   (``core.parallel.allreduce_grads``: over the devices, then across processes by
   the ``dist_sync`` store after ``keras.distribution.initialize()``), which is the
   gradient of the mean loss over the whole batch. The optimizer applies it once to
   the Variables, and the replicas copy the new values at the next step.
4. State the replicas changed is merged into the Variables: float non-trainable
   state (BatchNormalization's moving statistics) by the ``n_i / N``-weighted mean of
   the replicas' changes, integer state (seed generators) from the first replica,
   metric accumulators by the sum of the replicas' changes.

So a model without batch-dependent layers trains as on one device with the whole
batch, up to float rounding. Two layers differ, as in MXNet's and PyTorch's data
parallelism: BatchNormalization normalizes each slice with the slice's statistics
(the moving mean is still the batch mean; the moving variance is the mean of the
slices' variances), and Dropout draws each replica's mask from its own stream (seed
generator state offset by the replica's index). Losses are assumed to be means over
the batch (Keras' default reduction); a loss normalized by a data-dependent count (a
masked sequence loss divides by the unmasked steps) is weighted by samples, not by
that count. The replicas run one after the other in the calling thread: Keras keeps
per-thread state (dtype policy, scopes) that engine worker threads would not see.

In several processes, the logged loss and metrics are this process' (its data); the
weights are the same in every process (process 0's are broadcast at the first step).

Example:
    >>> from core import cpu
    >>> slice_weights([3, 2], 5)
    [0.6, 0.4]
"""
from __future__ import annotations

import warnings

import numpy as np
from keras.src import tree
from keras.src.backend.common import global_state
from keras.src.trainers.data_adapters import data_adapter_utils

from core import autograd as _autograd
from core import context as _context
from core import np as _cnp
from core import parallel as _parallel
from core.ndarray import NDArray

from . import distribution_lib
from .core import convert_to_tensor
from .jit import CompiledSteps, compiled_steps, forward_and_loss

_SEED_STATE = "seed_generator_state"
_SEED_STRIDE = 7919  # replica i's seed generators draw from seed + i * _SEED_STRIDE


def slice_weights(sizes, total: int) -> list:
    """Each replica's share ``n_i / total`` of the global batch."""
    return [n / total for n in sizes]


def _distribution():
    """``keras.distribution.distribution()`` (the current Distribution or None)."""
    return global_state.get_global_attribute("distribution")


def replicated_steps(model):
    """The model's :class:`ReplicatedSteps` for the current distribution, or None when
    its steps run as usual (no distribution, or one device that holds the Variables)."""
    dist = _distribution()
    store = distribution_lib.dist_store()
    if dist is None:
        return None
    cached = getattr(model, "_kbackend_replicated", None)
    if cached is not None and cached.distribution is dist and cached.store is store:
        return cached if cached.active else None
    steps = ReplicatedSteps(model, dist, store)
    model._kbackend_replicated = steps
    return steps if steps.active else None


def _contexts_of(dist) -> list:
    from keras.src.distribution import DataParallel

    if not isinstance(dist, DataParallel):
        devices = np.asarray(dist.device_mesh.devices).reshape(-1)
        if devices.size > 1:
            raise ValueError(
                f"kbackend: fit/evaluate/predict under {type(dist).__name__} over {devices.size} "
                f"devices: the kbackend backend trains with data parallelism only "
                f"(keras.distribution.DataParallel); variables cannot be sharded")
    contexts = distribution_lib.local_contexts(dist.device_mesh.devices)
    if not contexts:
        raise ValueError(f"kbackend: the distribution's devices "
                         f"{list(np.asarray(dist.device_mesh.devices).reshape(-1))} include "
                         f"none of process {distribution_lib.process_id()}'s")
    return contexts


class ReplicatedSteps:
    """Train/test/predict steps of one model, split over the devices of a distribution.

    Args:
        model: the Keras model.
        dist: the ``keras.distribution`` Distribution.
        store: the ``dist_sync`` store of a multi-process run, or None.
    """

    def __init__(self, model, dist, store):
        self.model = model
        self.distribution = dist
        self.store = store
        self.contexts = _contexts_of(dist)
        first = next(iter(model.variables), None)
        self.home = first.value.context if first is not None else _context.current_context()
        # One device that already holds the Variables: the ordinary step does it.
        self.active = store is not None or self.contexts != [self.home]
        self.buffers: dict = {}
        self.compiled: dict = {}
        self.synced = False

    # ------------------------------------------------------------------ state
    def _state_variables(self):
        seen, out = set(), []
        for v in list(self.model.variables) + list(self.model.metrics_variables):
            if id(v) not in seen:
                seen.add(id(v))
                out.append(v)
        return out

    def _replica_value(self, v, r: int, ctx, trainable: bool):
        """Replica ``r``'s array for Variable ``v``: a copy of its value on ``ctx`` (the
        Variable's own array for a trainable one already there)."""
        master = v._value
        if trainable and r == 0 and master.context == ctx:
            return master
        key = (id(v), ctx)
        buf = self.buffers.get(key)
        if buf is None or buf.shape != master.shape or buf.dtype != master.dtype:
            buf = master.copyto(ctx).detach()
            self.buffers[key] = buf
        else:
            master.copyto(buf)
        if r and v.name == _SEED_STATE and buf.shape == (2,) and buf.dtype.kind in "iu":
            seed = buf.asnumpy()
            seed[0] = (int(seed[0]) + r * _SEED_STRIDE) % (1 << 30)
            buf[...] = _cnp.array(seed).as_in_context(ctx)
        return buf

    def _sync_processes(self) -> None:
        """Process 0's Variables everywhere (the first step of a multi-process run)."""
        with _autograd.pause():
            for i, v in enumerate(self._state_variables()):
                if id(v) not in self._metric_ids():
                    _through_store(self.store.broadcast, f"kbackend/{i}", [v._value],
                                   [v._value])
            self.count = _cnp.zeros((1,), dtype="float64", ctx=self.home)
            self.store.broadcast("kbackend/count", self.count, out=[self.count])
        self.synced = True

    def _metric_ids(self) -> set:
        return {id(v) for v in self.model.metrics_variables}

    def _global_batch(self, n: int) -> int:
        if self.store is None:
            return n
        self.count[...] = float(n)
        self.store.pushpull("kbackend/count", [self.count], out=[self.count])
        return round(float(self.count.asnumpy()[0]))

    # ------------------------------------------------------------------ steps
    def _compiled(self, ctx):
        if compiled_steps(self.model) is None:
            return None
        steps = self.compiled.get(ctx)
        if steps is None:
            steps = self.compiled[ctx] = CompiledSteps(self.model)
        return steps

    def _outputs(self, ctx, kind, x, y, sample_weight):
        steps = self._compiled(ctx)
        res = steps.run(kind, x, y, sample_weight) if steps is not None else None
        if steps is not None and steps.failed is not None:
            for other in self.compiled.values():  # warned once: all replicas eager
                other.failed = other.failed or steps.failed
        return res if res is not None else forward_and_loss(self.model, kind, x, y,
                                                            sample_weight)

    def run(self, kind: str, data):
        """One step of ``kind`` (``'train'``, ``'test'``, ``'predict'``) on ``data``.

        Returns:
            ``(y_pred, loss)``: the whole batch's predictions (on the Variables'
            device) and its mean loss (None for ``'predict'``).
        """
        model = self.model
        x, y, sample_weight = data_adapter_utils.unpack_x_y_sample_weight(data)
        variables = self._state_variables()
        training = kind == "train"
        if training and self.store is not None and not self.synced:
            self._sync_processes()
        n = _batch_size(x)
        contexts = self.contexts[:n]
        parts = _split((x, y, sample_weight), contexts)
        sizes = [_batch_size(p[0]) for p in parts]
        weights = slice_weights(sizes, self._global_batch(n) if training else n)
        trainable = list(model.trainable_weights)
        trainable_ids = {id(v) for v in trainable}
        masters = {id(v): v._value for v in variables}
        results, grads, after = [], [], []
        for r, (ctx, (xr, yr, swr)) in enumerate(zip(contexts, parts)):
            values = {id(v): self._replica_value(v, r, ctx, id(v) in trainable_ids)
                      for v in variables}
            try:
                for v in variables:
                    v._value = values[id(v)]
                with ctx:
                    results.append(self._replica(kind, ctx, xr, yr, swr, trainable,
                                                 weights[r], grads))
                after.append({id(v): v._value for v in variables})
            finally:
                for v in variables:
                    v._value = masters[id(v)]
        with _autograd.pause():
            if training and trainable:
                reduced = self._allreduce(trainable, grads)
            self._merge(variables, masters, after, weights, trainable_ids, training)
            if training and trainable:
                model.optimizer.apply(reduced, trainable)
            elif training:
                warnings.warn("The model does not have any trainable weights.")
            y_pred = _concat([res[0] for res in results], self.home)
            if kind == "predict":
                return y_pred, None
            losses = [w * res[1].detach().as_in_context(self.home)
                      for w, res in zip(slice_weights(sizes, n), results)]
            loss = sum(losses[1:], losses[0])
        return y_pred, loss

    def _replica(self, kind, ctx, x, y, sample_weight, trainable, weight, grads):
        if kind != "train":
            return self._outputs(ctx, kind, x, y, sample_weight)
        from .trainer import _gradients, mark_trainable

        marked = mark_trainable(trainable)
        optimizer = self.model.optimizer
        with _autograd.record():
            y_pred, loss = self._outputs(ctx, kind, x, y, sample_weight)
            scaled = optimizer.scale_loss(loss) if optimizer is not None else loss
            scaled = scaled * weight
        grads.append(_gradients(scaled, marked))
        return y_pred, loss

    def _allreduce(self, trainable, grads) -> list:
        """The summed gradients, on the Variables' device."""
        per_param = [list(g) for g in zip(*grads)]
        outs = []
        for g, v in zip(per_param, trainable):
            home = v._value.context
            outs.append([g[0] if g[0].context == home else _cnp.zeros_like(v._value)])
        if self.store is None:
            _parallel.allreduce_grads(None, per_param, out=outs)
        else:
            index = self._index
            for v, g, o in zip(trainable, per_param, outs):
                _through_store(
                    lambda k, g1, o1: _parallel.allreduce_grads(self.store, [g1], [o1], [k]),
                    f"kbackend/{index[id(v)]}", g, o)
        reduced = [o[0] for o in outs]
        for g in reduced:
            _settle(g)
        return reduced

    @property
    def _index(self) -> dict:
        return {id(v): i for i, v in enumerate(self._state_variables())}

    def _merge(self, variables, masters, after, weights, trainable_ids, training) -> None:
        """Fold the replicas' changes to the Variables' state into the Variables."""
        metric_ids = self._metric_ids()
        index = self._index
        for v in variables:
            vid, before = id(v), masters[id(v)]
            news = [a[vid] for a in after]
            if vid in trainable_ids and all(n is before for n in news):
                continue  # the usual case: weights are only read by the forward pass
            if vid not in metric_ids and before.dtype.kind not in "fc":
                if news[0] is not before:
                    before[...] = news[0].as_in_context(before.context)
                continue
            deltas = [n.as_in_context(before.context) - before for n in news]
            if vid in metric_ids:
                total = sum(deltas[1:], deltas[0])
            else:
                total = sum((w * d for w, d in zip(weights[1:], deltas[1:])),
                            weights[0] * deltas[0])
                if self.store is not None and training:
                    total = total.astype(before.dtype)
                    _through_store(lambda k, t, o: self.store.pushpull(k, t, out=o),
                                   f"kbackend/{index[vid]}", [total], [total])
            before[...] = (before + total).astype(before.dtype)


def _through_store(call, key, values, outs) -> None:
    """``call(key, values, outs)`` with 0-d arrays sent as shape (1,), then every
    output settled (the dist store's MPI broadcast returns 0-d arrays as 1-d)."""
    flat = [v.reshape((1,)) if v.ndim == 0 else v for v in values]
    flat_outs = [o.reshape((1,)) if o.ndim == 0 else o for o in outs]
    call(key, flat, flat_outs)
    for o, f in zip(outs, flat_outs):
        _settle(f)
        if f is not o:
            o[...] = f.reshape(())


def _settle(array) -> None:
    """Wait for pending engine work on ``array`` (kernels below read its buffer)."""
    wait = getattr(array, "wait_to_read", None)
    if wait is not None:
        wait()


def _batch_size(x) -> int:
    return next(i for i in tree.flatten(x) if i is not None).shape[0]


def _split(structure, contexts) -> list:
    """Per context, ``structure`` with every array leaf's slice on that context."""
    leaves = tree.flatten(structure)
    sliced = [None if a is None else
              _parallel.split_batch(convert_to_tensor(a), contexts, even_split=False)
              for a in leaves]
    return [tree.pack_sequence_as(structure, [None if s is None else s[r] for s in sliced])
            for r in range(len(contexts))]


def _concat(structures, home):
    """The replicas' outputs joined along axis 0 on ``home`` (outside autograd)."""
    def join(*parts):
        if not isinstance(parts[0], NDArray):
            return parts[0]
        parts = [p.detach().as_in_context(home) for p in parts]
        return parts[0] if len(parts) == 1 else _cnp.concatenate(parts, axis=0)

    return tree.map_structure(join, *structures)
