"""The collectives of data parallelism: split a batch, sum gradient replicas, copy
weights, update replicas (``gluon.Trainer`` and kbackend share them).

The arrays are grouped per parameter: ``grads[i]`` is the list of parameter ``i``'s
gradient replicas, one per context, and ``i`` (or ``keys[i]``) is its key in the
store. Without a store, gradients are summed directly (copied to the first context,
added in context order, copied back; on two or more distinct GPUs with NCCL, one
NCCL all-reduce: ``core.kvstore.nccl``). With one (``core.kvstore``), each parameter is
one ``pushpull`` with priority ``-i``. Each replica is then updated with its own
optimizer updater (:func:`update_replicas`: the same rule, the same gradient, the same
states, so replicas stay bitwise identical), or the update runs once on the store and
the new weights are copied to every replica (:func:`pushpull_update`).

Example:
    >>> from core import nd, cpu, parallel
    >>> g0, g1 = nd.array([1.0, 2.0], ctx=cpu(0)), nd.array([3.0, 4.0], ctx=cpu(1))
    >>> parallel.allreduce_grads(None, [[g0, g1]])
    >>> g0.asnumpy().tolist(), g1.asnumpy().tolist()
    ([4.0, 6.0], [4.0, 6.0])
"""
from __future__ import annotations

import itertools
import os
from collections.abc import Sequence

from .. import kvstore as kvs
from ..context import Context, as_context
from ..kvstore import nccl
from ..kvstore.base import write_bytes_atomic
from ..kvstore.comm import copy_to_all, reduce_sum
from ..ndarray import NDArray

__all__ = ["allreduce_grads", "broadcast_params", "create_kvstore", "load_states",
           "pushpull_update", "save_states", "split_batch", "split_data", "update_replicas"]


def split_data(data: NDArray, num_slice: int, batch_axis: int = 0,
               even_split: bool = True) -> list:
    """Split an NDArray into ``num_slice`` slices along ``batch_axis`` (MXNet's
    ``gluon.utils.split_data``).

    Args:
        data: the array to split.
        num_slice: the number of slices.
        batch_axis: the axis to split along.
        even_split: require the axis length to be a multiple of ``num_slice``; with
            False, the first slices get one element more.

    Returns:
        A list of ``num_slice`` NDArrays (on ``data``'s context).

    Raises:
        ValueError: when the data cannot be split as asked.

    Example:
        >>> from core import nd
        >>> from core.parallel import split_data
        >>> [s.shape for s in split_data(nd.zeros((5, 2)), 2, even_split=False)]
        [(3, 2), (2, 2)]
    """
    if not isinstance(num_slice, int) or num_slice < 1:
        raise ValueError(f"split_data: num_slice must be a positive int, got {num_slice!r}")
    ndim = len(data.shape)
    if not -ndim <= batch_axis < ndim:
        raise ValueError(f"split_data: batch_axis={batch_axis} is out of range for data of "
                         f"shape {tuple(data.shape)}")
    axis = batch_axis % ndim
    size = data.shape[axis]
    if even_split and size % num_slice != 0:
        raise ValueError(
            f"data with shape {tuple(data.shape)} cannot be evenly split into {num_slice} "
            f"slices along axis {batch_axis}. Use a batch size that's multiple of "
            f"{num_slice} or set even_split=False to allow uneven partitioning of data.")
    if size < num_slice:
        raise ValueError(f"Too many slices for data with shape {tuple(data.shape)}. Arguments "
                         f"are num_slice={num_slice} and batch_axis={batch_axis}.")
    step, extras = divmod(size, num_slice)
    sizes = [step + 1] * extras + [step] * (num_slice - extras)
    bounds = [0, *itertools.accumulate(sizes)]
    if num_slice == 1:
        return [data]
    lead = (slice(None),) * axis
    return [data[(*lead, slice(bounds[i], bounds[i + 1]))] for i in range(num_slice)]


def split_batch(data, ctx_list: Sequence[Context], batch_axis: int = 0,
                even_split: bool = True) -> list:
    """Split ``data`` along ``batch_axis`` into one slice per context, slice ``i`` on
    ``ctx_list[i]`` (``gluon.utils.split_and_load``).

    Args:
        data: an NDArray (or array-like; it becomes an NDArray with ``nd.array``'s
            dtype rules).
        ctx_list: the contexts.
        batch_axis: the axis to split.
        even_split: require the axis length to be a multiple of ``len(ctx_list)``; with
            False the first slices get one element more.

    Returns:
        A list of NDArrays, one per context.

    Raises:
        ValueError: an empty context list, or a batch that cannot be split as asked.

    Example:
        >>> from core import nd, cpu, parallel
        >>> parts = parallel.split_batch(nd.arange(10).reshape(5, 2), [cpu(0), cpu(1)],
        ...                              even_split=False)
        >>> [(p.shape, p.context) for p in parts]
        [((3, 2), cpu(0)), ((2, 2), cpu(1))]
    """
    from .. import nd

    if isinstance(ctx_list, (Context, str)):
        ctx_list = [ctx_list]
    ctx_list = [as_context(c) for c in ctx_list]
    if not ctx_list:
        raise ValueError("split_batch: ctx_list is empty; give at least one context")
    if not isinstance(data, NDArray):
        data = nd.array(data, ctx=ctx_list[0])
    n = len(ctx_list)
    if n == 1:
        return [data.as_in_context(ctx_list[0])]
    return [s.as_in_context(c) for s, c in zip(split_data(data, n, batch_axis, even_split),
                                                ctx_list)]


def create_kvstore(kvstore, num_devices: int, update_on_kvstore: bool | None = None):
    """The store a data-parallel trainer uses, and whether updates run on it.

    As MXNet's ``model._create_kvstore``: a store name with one device and no
    ``dist`` in it means no store (nothing to sum). ``'device'`` reduces on the
    devices, ``'local'`` on the store's context: the same sums. Updates run on the
    workers (each replica) unless ``update_on_kvstore=True``.

    Args:
        kvstore: None, a store name (``'local'``, ``'device'``, ...) or a
            ``KVStoreBase``.
        num_devices: how many contexts the parameters live on.
        update_on_kvstore: run the optimizer on the store (True), on each replica
            (False) or choose (None: on the replicas).

    Returns:
        ``(store or None, update_on_kvstore)``; ``update_on_kvstore`` is False without
        a store.

    Raises:
        TypeError: ``kvstore`` is neither None, a string nor a store.
        ValueError: ``update_on_kvstore=True`` with a store that cannot run optimizers.

    Example:
        >>> from core import parallel
        >>> parallel.create_kvstore('device', 1)
        (None, False)
        >>> kv, on_kv = parallel.create_kvstore('local', 2)
        >>> kv.type, on_kv
        ('local', False)
    """
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, kvs.KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        kv = None if num_devices <= 1 and "dist" not in kvstore else kvs.create(kvstore)
    else:
        raise TypeError(f"kvstore must be None, a store name or a KVStoreBase, got "
                        f"{type(kvstore).__name__}")
    if kv is None:
        return None, False
    if update_on_kvstore and not kv.is_capable(kvs.KVStoreBase.OPTIMIZER):
        raise ValueError(f"update_on_kvstore=True, but the {kv.type!r} store cannot run "
                         "optimizers; set update_on_kvstore=False")
    return kv, bool(update_on_kvstore)


def _keys(keys, n):
    if keys is None:
        return list(range(n))
    keys = list(keys)
    if len(keys) != n:
        raise ValueError(f"got {len(keys)} keys for {n} parameters")
    return keys


def allreduce_grads(kvstore, grads: Sequence[Sequence[NDArray]], out=None, keys=None,
                    priorities=None) -> None:
    """Sum each parameter's gradient replicas and write the sum into every replica.

    Args:
        kvstore: a ``core.kvstore`` store, or None to sum directly in this process.
        grads: ``grads[i]`` is the list of parameter ``i``'s gradients, one per context
            (an empty list skips the parameter).
        out: where the sums go, shaped as ``grads`` (``out[i]`` may hold more arrays
            than ``grads[i]``: a replica whose gradient is left out of the sum still
            receives it). Default: ``grads`` itself (in place).
        keys: the store keys of the parameters (default ``0, 1, ...``).
        priorities: the store priorities of the parameters (default ``0, -1, ...``:
            the first parameters first).

    Example:
        >>> from core import nd, cpu, kvstore, parallel
        >>> g = [nd.ones((2,), ctx=cpu(0)), nd.ones((2,), ctx=cpu(1))]
        >>> parallel.allreduce_grads(kvstore.create('local'), [g])
        >>> g[1].asnumpy().tolist()
        [2.0, 2.0]
    """
    grads = list(grads)
    outs = grads if out is None else list(out)
    if len(outs) != len(grads):
        raise ValueError(f"allreduce_grads: out has {len(outs)} entries for {len(grads)} "
                         "parameters")
    if priorities is None:
        priorities = [-i for i in range(len(grads))]
    if kvstore is not None and "dist" in kvstore.type:
        # Collectives run in call order anyway: one call, one all-reduce per dtype.
        todo = [(k, list(g), list(o)) for k, g, o in zip(_keys(keys, len(grads)), grads, outs)
                if len(g)]
        if todo:
            ks, gs, os_ = zip(*todo)
            kvstore.pushpull(list(ks), list(gs), out=list(os_))
        return
    for key, prio, g, o in zip(_keys(keys, len(grads)), priorities, grads, outs):
        g, o = list(g), list(o)
        if not g:
            continue
        if kvstore is not None:
            kvstore.pushpull(key, g, out=o, priority=prio)
        elif len(g) > 1 or len(o) > 1 or o[0] is not g[0]:
            _sum_into(g, o)


def _sum_into(g, o) -> None:
    """Write the sum of ``g`` into every array of ``o``: NCCL on distinct GPUs, else
    summed on the first context and copied."""
    devices = nccl.devices_of(a.context for a in g)
    if devices is None or any(getattr(a, "stype", "default") != "default" for a in (*g, *o)):
        copy_to_all(reduce_sum(g), o)
        return
    sums = nccl.sum_arrays(nccl.process_cliques(), devices, g)
    by_ctx = {s.context: s for s in sums}
    for arr in o:
        copy_to_all(by_ctx.get(arr.context, sums[0]), [arr])


def pushpull_update(kvstore, grads: Sequence[Sequence[NDArray]],
                    weights: Sequence[Sequence[NDArray]], keys=None) -> None:
    """Update on the store (``update_on_kvstore``): push each parameter's gradients, the
    store sums them and runs its optimizer on its copy of the weight, and the new weight
    is pulled into every replica.

    Args:
        kvstore: a store with an optimizer set (``set_optimizer``) and the weights
            initialized (:func:`broadcast_params`).
        grads: per parameter, its gradient replicas (an empty list skips it).
        weights: per parameter, its weight replicas.
        keys: the store keys (default ``0, 1, ...``).
    """
    grads, weights = list(grads), list(weights)
    for i, (key, g, w) in enumerate(zip(_keys(keys, len(grads)), grads, weights)):
        if g:
            kvstore.pushpull(key, list(g), out=list(w), priority=-i)


def update_replicas(updaters: Sequence, grads: Sequence[Sequence[NDArray]],
                    weights: Sequence[Sequence[NDArray]], keys=None) -> None:
    """Update every replica with its own updater: ``updaters[r]`` gets, in one call,
    the keys, the gradients and the weights of context ``r`` (after
    :func:`allreduce_grads`, the same summed gradient on every context). Pending
    engine work on the gradients (an all-reduce) and weights finishes first (the
    optimizers wait for it: ``Optimizer.update_multi_precision``).

    Args:
        updaters: one ``core.optimizer.Updater`` per context.
        grads: per parameter, its gradient replicas (``grads[i][r]``).
        weights: per parameter, its weight replicas, updated in place.
        keys: the updaters' indices of the parameters (default ``0, 1, ...``): they
            key the optimizer states and ``lr_mult``/``wd_mult``.

    Raises:
        ValueError: a parameter whose replica count differs from ``len(updaters)``.

    Example:
        >>> from core import nd, cpu, optimizer, parallel
        >>> sgd = optimizer.SGD(learning_rate=0.5)
        >>> ups = [optimizer.get_updater(sgd) for _ in range(2)]
        >>> w = [nd.ones((2,), ctx=cpu(0)), nd.ones((2,), ctx=cpu(1))]
        >>> g = [nd.ones((2,), ctx=cpu(0)), nd.ones((2,), ctx=cpu(1))]
        >>> parallel.update_replicas(ups, [g], [w])
        >>> w[1].asnumpy().tolist()
        [0.5, 0.5]
    """
    grads, weights = list(grads), list(weights)
    keys = _keys(keys, len(grads))
    n = len(updaters)
    per_ctx = [([], [], []) for _ in range(n)]
    for key, g, w in zip(keys, grads, weights):
        g, w = list(g), list(w)
        if len(g) != n or len(w) != n:
            raise ValueError(f"update_replicas: parameter {key!r} has {len(w)} weight and "
                             f"{len(g)} gradient replicas for {n} updaters (one per context)")
        for (idx, gs, ws), gr, wr in zip(per_ctx, g, w):
            idx.append(key)
            gs.append(gr)
            ws.append(wr)
    for updater, (idx, gs, ws) in zip(updaters, per_ctx):
        if idx:
            updater(idx, gs, ws)


def broadcast_params(kvstore, weights: Sequence[Sequence[NDArray]], keys=None) -> None:
    """Copy each parameter's first replica into the store and into all its replicas.

    Args:
        kvstore: a store, or None (the first replica is copied into the others).
        weights: per parameter, its weight replicas.
        keys: the store keys (default ``0, 1, ...``).
    """
    weights = list(weights)
    for i, (key, w) in enumerate(zip(_keys(keys, len(weights)), weights)):
        w = list(w)
        if kvstore is not None:
            kvstore.broadcast(key, w[0], out=w, priority=-i)
        elif len(w) > 1:
            copy_to_all(w[0], w[1:])


def save_states(fname: str, updater, dump_optimizer: bool = True) -> None:
    """Write ``updater.get_states(dump_optimizer)`` to ``fname`` atomically (no pickle).

    Args:
        fname: the file.
        updater: a ``core.optimizer.Updater``.
        dump_optimizer: also save the optimizer's hyper-parameters and update counts.
    """
    write_bytes_atomic(fname, updater.get_states(dump_optimizer=dump_optimizer))


def load_states(fname: str, updaters: Sequence) -> None:
    """Load states written by :func:`save_states` into every updater of ``updaters``
    (each gets its own copies, moved to its weights' contexts on its next update).

    Raises:
        ValueError: the file does not hold optimizer states (pickled MXNet states are
            refused).
    """
    with open(os.fspath(fname), "rb") as f:
        data = f.read()
    for u in updaters:
        u.set_states(data)
