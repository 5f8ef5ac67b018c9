"""``keras.distribution.DataParallel`` for kbackend: one batch split over several devices.

When a ``DataParallel`` distribution is set (``keras.distribution.set_distribution``
or ``with distribution.scope():``), the built-in train, test and predict steps of
``model.fit``/``evaluate``/``predict`` run through :class:`ReplicatedSteps`:

1. The batch of ``n`` samples is split along axis 0 over this process' devices of
   the mesh (``core.parallel.split_batch``; uneven batches give the first devices one
   sample more, and a batch smaller than the number of devices uses the first ``n``).
2. Each replica runs the model on its slice on its own device, with its own copy of
   every Variable of the model (and of its metrics), eagerly or through its own
   compiled program under ``jit_compile`` (one :class:`kbackend.jit.CompiledSteps`
   per device).
3. Replica ``i``'s loss, a mean over its ``n_i`` samples, is scaled by ``n_i / N``
   (``N``: the global batch, all processes); backward and the gradients' sum run
   through ``core.parallel.forward_backward``: each Variable's gradient is summed over
   the devices (and across processes by the ``dist_sync`` store after
   ``keras.distribution.initialize()``) on the engine's communication worker as soon
   as it is final on every replica, the first layers first. That is the gradient of
   the mean loss over the whole batch; the optimizer applies it once to the
   Variables, and the replicas copy the new values at the next step.
4. State the replicas changed is merged into the Variables: float non-trainable
   state (BatchNormalization's moving statistics) by the ``n_i / N``-weighted mean of
   the replicas' changes, integer state (seed generators) from the first replica,
   metric accumulators by the sum of the replicas' changes.

So a model without batch-dependent layers trains as on one device with the whole
batch, up to float rounding. Two layers differ, as in MXNet's and PyTorch's data
parallelism: BatchNormalization normalizes each slice with the slice's statistics
(the moving mean is still the batch mean; the moving variance is the mean of the
slices' variances) unless it is ``BatchNormalization(synchronized=True)``, whose
statistics (and their gradients) are the global batch's (:mod:`kbackend.sync_moments`:
the replicas meet at each such layer; steps that run the replicas in turn, and every
step under ``jit_compile``, run on one device with the whole batch instead, the same
result; across processes the statistics are each process' own), and Dropout draws each replica's mask from its own stream (seed
generator state offset by the replica's index). Losses are assumed to be means over
the batch (Keras' default reduction); a loss normalized by a data-dependent count (a
masked sequence loss divides by the unmasked steps) is weighted by samples, not by
that count.

Where the replicas run: a training step runs them concurrently, one piece of engine
work per device on that device's worker thread; each runs under a
``keras.StatelessScope`` that maps the Variables to its copies (Keras' own mechanism
for per-call values: assignments land in the scope), with the calling thread's Keras
global state installed for its duration (:func:`keras_state`: dtype policy,
distribution, autocast and name scopes are per-thread in Keras). Under ``jit_compile``
a replica's compiled program is one node on the tape, so its gradients are final only
at its end: the replicas still overlap each other, and the all-reduces start when the
slowest replica finishes, in priority order. These steps run in turn in the calling
thread instead, with the Variables' arrays swapped per replica (the gradient sums are
the same, pushed in the same order): the first training step (it builds what Keras
creates lazily), under ``jit_compile`` the warm-up and trace steps of each input
signature (tracing reads the Variables' own arrays), every step of a model whose
layers call ``add_loss`` (that bookkeeping lives on the layers), test and predict
steps, and every step once ``ReplicatedSteps.sequential_reason`` is set to a reason
(``model._kbackend_replicated``; ``step_reason`` says why the last step ran in turn).
On CPU the replicas share the interpreter lock, so concurrency gains little there.

In several processes, the logged loss and metrics are this process' (its data); the
weights are the same in every process (process 0's are broadcast at the first step).

Example:
    >>> from core import cpu
    >>> slice_weights([3, 2], 5)
    [0.6, 0.4]
"""
from __future__ import annotations

import warnings
from contextlib import contextmanager

import numpy as np
from keras.src import tree
from keras.src.backend.common import global_state
from keras.src.backend.common.stateless_scope import StatelessScope
from keras.src.trainers.data_adapters import data_adapter_utils

from core import autograd as _autograd
from core import context as _context
from core import np as _cnp
from core import parallel as _parallel
from core.dtypes import is_float
from core.ndarray import NDArray

from . import distribution_lib, sync_moments
from .core import convert_to_tensor
from .jit import CompiledSteps, compiled_steps, forward_and_loss

_SEED_STATE = "seed_generator_state"
_SEED_STRIDE = 7919  # replica i's seed generators draw from seed + i * _SEED_STRIDE


def slice_weights(sizes, total: int) -> list:
    """Each replica's share ``n_i / total`` of the global batch."""
    return [n / total for n in sizes]


def capture_keras_state() -> tuple:
    """This thread's Keras global state (``keras.src.backend.common.global_state``:
    dtype policy, distribution, autocast and name scopes, ...), to install in another
    thread with :func:`keras_state`. Lists (scope stacks) are copied: each thread
    pushes and pops its own."""
    def grab(tracker):
        return {k: list(v) if isinstance(v, list) else v for k, v in vars(tracker).items()}

    return (grab(global_state.GLOBAL_STATE_TRACKER),
            grab(global_state.GLOBAL_SETTINGS_TRACKER))


@contextmanager
def keras_state(captured: tuple):
    """Scope in which this thread's Keras global state is ``captured`` (from
    :func:`capture_keras_state`, with fresh copies of its lists); the thread's own
    state comes back at the end.

    Example:
        >>> import threading
        >>> from keras.src.backend.common import global_state
        >>> global_state.set_global_attribute("kbackend_doc", 1)
        >>> state, seen = capture_keras_state(), []
        >>> def work():
        ...     with keras_state(state):
        ...         seen.append(global_state.get_global_attribute("kbackend_doc"))
        ...     seen.append(global_state.get_global_attribute("kbackend_doc"))
        >>> t = threading.Thread(target=work); t.start(); t.join()
        >>> seen
        [1, None]
    """
    trackers = (global_state.GLOBAL_STATE_TRACKER, global_state.GLOBAL_SETTINGS_TRACKER)
    saved = [dict(vars(t)) for t in trackers]
    for t, values in zip(trackers, captured):
        vars(t).clear()
        vars(t).update({k: list(v) if isinstance(v, list) else v for k, v in values.items()})
    try:
        yield
    finally:
        for t, values in zip(trackers, saved):
            vars(t).clear()
            vars(t).update(values)


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
        self.scalar_keys: set = set()  # the store keys of 0-d Variables' gradients
        self.warmed: set = set()  # the step kinds that have run once
        # why every later training step runs its replicas in turn (None: it need not);
        # set it to a string to force the sequential path
        self.sequential_reason: str | None = None
        self.step_reason: str | None = None  # why the last step ran in turn, if it did
        self.last_path: str | None = None  # 'engine' or 'in turn'

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
        self.last_path = self._path(kind, contexts, parts)
        if training and len(contexts) > 1 and self._whole_batch_on_one_device():
            contexts = [self.home]
            parts = _split((x, y, sample_weight), contexts)
        sizes = [_batch_size(p[0]) for p in parts]
        weights = slice_weights(sizes, self._global_batch(n) if training else n)
        trainable = list(model.trainable_weights) if training else []
        trainable_ids = {id(v) for v in model.trainable_weights}
        masters = {id(v): v._value for v in variables}
        values = [{id(v): self._replica_value(v, r, ctx, id(v) in trainable_ids)
                   for v in variables} for r, ctx in enumerate(contexts)]
        if self.last_path == "engine":
            with sync_moments.step_scope(len(contexts)):
                results, after, reduced = self._train(contexts, parts, variables,
                                                      trainable, values, weights, None)
        else:
            results, after, reduced = self._in_turn(kind, contexts, parts, variables,
                                                    trainable, values, weights, masters)
        self.warmed.add(kind)
        with _autograd.pause():
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

    def _path(self, kind, contexts, parts) -> str:
        """``'engine'`` when this step runs its replicas concurrently on the engine's
        device workers, else ``'in turn'`` (in the calling thread), with the reason in
        :attr:`step_reason`."""
        reason = None
        if kind != "train":
            reason = "test and predict steps run the replicas in turn (no gradients to overlap)"
        elif self.sequential_reason is not None:
            reason = self.sequential_reason
        elif kind not in self.warmed:
            reason = "the first step builds what Keras creates lazily (in the calling thread)"
        elif any(getattr(layer, "_losses", None) for layer in self.model._flatten_layers()):
            self.sequential_reason = reason = (
                "layers add losses (add_loss): that bookkeeping lives on the layers, "
                "shared by concurrent replicas")
        elif not all(self._compiled_ready(ctx, kind, part)
                     for ctx, part in zip(contexts, parts)):
            reason = ("jit_compile: the step's programs are being built (warm-up or trace, "
                      "which reads the Variables' own arrays)")
        self.step_reason = reason
        return "in turn" if reason else "engine"

    def _synchronized_bn(self) -> bool:
        """The model has a ``BatchNormalization(synchronized=True)``."""
        return any(getattr(layer, "synchronized", False) is True
                   for layer in self.model._flatten_layers())

    def _whole_batch_on_one_device(self) -> bool:
        """A training step of a model with synchronized BatchNormalization that cannot
        synchronize across replicas runs on the Variables' device with the whole batch
        (the same result): its replicas would run in turn, or under ``jit_compile``
        (a compiled program cannot meet the other replicas halfway). Sets the path."""
        if not self._synchronized_bn():
            return False
        if self.last_path == "engine" and compiled_steps(self.model) is None:
            return False
        why = self.step_reason or "jit_compile"
        self.step_reason = (f"BatchNormalization(synchronized=True) cannot synchronize "
                            f"replicas run in turn ({why}): the step runs on one device "
                            "with the whole batch")
        self.last_path = "in turn"
        return True

    def _compiled_ready(self, ctx, kind, part) -> bool:
        """True unless ``ctx``'s compiled steps would warm up or trace for ``part``."""
        steps = self._compiled(ctx)
        return steps is None or steps.failed is not None or steps.ready(kind, *part)

    def _in_turn(self, kind, contexts, parts, variables, trainable, values, weights,
                 masters):
        """The replicas one after the other in the calling thread, each with the
        Variables' arrays swapped for its own (``values[r]``)."""
        after: list = [None] * len(contexts)

        def swapped(r, ctx, part, work):
            try:
                for v in variables:
                    v._value = values[r][id(v)]
                with ctx:
                    out = work(ctx, part)
                after[r] = {id(v): v._value for v in variables}
                return out
            finally:
                for v in variables:
                    v._value = masters[id(v)]

        if kind == "train" and trainable:
            results, _, reduced = self._train(contexts, parts, variables, trainable, values,
                                              weights, swapped)
            return results, after, reduced
        results = [swapped(r, ctx, part, lambda c, p: self._outputs(c, kind, *p))
                   for r, (ctx, part) in enumerate(zip(contexts, parts))]
        return results, after, None

    def _train(self, contexts, parts, variables, trainable, values, weights, swapped):
        """A training step through :func:`core.parallel.forward_backward`: each replica's
        forward and backward, and each Variable's gradient all-reduce started as soon as
        it is final on every replica (on the engine's communication worker, the first
        layers first).

        With ``swapped`` None the replicas run concurrently on their devices' engine
        workers, each under a ``keras.StatelessScope`` that maps the Variables to its
        arrays and with the caller's Keras thread state (:func:`keras_state`); else
        in the calling thread through ``swapped`` (see :meth:`_in_turn`).

        Returns:
            ``(results, after, reduced)``: per replica ``(y_pred, loss)`` and (engine
            path) the Variables' arrays after it; the summed gradients on the
            Variables' devices.
        """
        from .trainer import _marked

        optimizer = self.model.optimizer
        marked = [[_marked(vals[id(v)]) for v in trainable] for vals in values]
        results: list = [None] * len(contexts)
        after: list = [None] * len(contexts)
        state = capture_keras_state() if swapped is None else None

        def forward(r, ctx, part):
            y_pred, loss = self._outputs(ctx, "train", *part)
            results[r] = (y_pred, loss)
            scaled = optimizer.scale_loss(loss) if optimizer is not None else loss
            return scaled * weights[r]

        def replica(r, ctx, part):
            def in_turn(*_batch):
                return swapped(r, ctx, part, lambda c, p: forward(r, c, p))

            def on_worker(*_batch):
                mapping = [(v, values[r][id(v)]) for v in variables]
                with keras_state(state), StatelessScope(
                        mapping, collect_losses=True, initialize_variables=False) as scope:
                    out = forward(r, ctx, part)
                after[r] = {id(v): scope.get_current_value(v) for v in variables}
                return out

            return on_worker if swapped is None else in_turn

        keys = None if self.store is None else self._grad_keys(trainable)
        params = [list(reps) for reps in zip(*marked)]
        step = _parallel.forward_backward(
            [replica(r, ctx, part) for r, (ctx, part) in enumerate(zip(contexts, parts))],
            [tuple(a for a in tree.flatten(part) if isinstance(a, NDArray)) for part in parts],
            params, kvstore=self.store, keys=keys, inline=swapped is not None)
        step.wait()
        reduced = []
        for i, v in enumerate(trainable):
            home = v._value.context
            if step.reduced[i] or any(step.fresh[i]):
                g = params[i][0].grad
                reduced.append(g if g.context == home else g.as_in_context(home))
            else:  # no replica's loss depends on it (Keras: a zero gradient)
                reduced.append(_cnp.zeros_like(v._value))
        return results, after, reduced

    def _grad_keys(self, trainable) -> list:
        """The store keys of the Variables' gradients: the Variables' own keys, but for
        a 0-d Variable, whose key holds shape (1,) (see :func:`_through_store`), its own
        0-d key (initialized the first time, at the same step on every process)."""
        index, keys = self._index, []
        for v in trainable:
            key = f"kbackend/{index[id(v)]}"
            if v._value.ndim == 0:
                key += "/grad"
                if key not in self.scalar_keys:
                    self.store.init(key, _cnp.zeros((), dtype=v._value.dtype, ctx=self.home))
                    self.scalar_keys.add(key)
            keys.append(key)
        return keys

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
            if vid not in metric_ids and not is_float(before.dtype):
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
