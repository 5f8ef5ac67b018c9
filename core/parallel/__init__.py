"""Data parallelism in one process (and, through a ``dist`` kvstore, across processes):
the one trainer core that ``gluon.Trainer`` and kbackend's Keras distribution share.

A model is replicated on several contexts; each replica gets a slice of the batch
(:func:`split_batch`); :func:`forward_backward` runs every replica's forward and
backward on its context's engine worker and sums each parameter's gradient replicas
(:func:`allreduce_grads`) as soon as backward has finished with that parameter on
every replica, on the engine's communication worker, overlapping the rest of
backward (priority ``-i``: the first layers, needed first by the next forward, go
first). Then every replica is updated with its own updater (:func:`update_replicas`:
the same rule, summed gradient and states, so the replicas stay bitwise identical),
or the update runs once on the store (:func:`pushpull_update`, ``update_on_kvstore``).

Modules: ``collective`` (split, all-reduce, broadcast, update, optimizer states) and
``step`` (the overlapped forward/backward).

Example:
    >>> from core import nd, cpu, parallel
    >>> g0, g1 = nd.array([1.0, 2.0], ctx=cpu(0)), nd.array([3.0, 4.0], ctx=cpu(1))
    >>> parallel.allreduce_grads(None, [[g0, g1]])
    >>> g0.asnumpy().tolist(), g1.asnumpy().tolist()
    ([4.0, 6.0], [4.0, 6.0])
"""
from __future__ import annotations

from .collective import (
    allreduce_grads,
    broadcast_params,
    create_kvstore,
    load_states,
    pushpull_update,
    save_states,
    split_batch,
    split_data,
    update_replicas,
)
from .step import Step, forward_backward, replica_mode

__all__ = ["Step", "allreduce_grads", "broadcast_params", "create_kvstore",
           "forward_backward", "load_states", "pushpull_update", "replica_mode",
           "save_states", "split_batch", "split_data", "update_replicas"]
