"""Key-value stores: gradient aggregation for data-parallel training (MXNet's ``mx.kvstore``).

:func:`create` builds a registered store by name; :class:`KVStoreBase` is the
interface and registers new stores with its ``register`` decorator. Registered here:

- ``local`` (:class:`LocalKVStore`): one process, any number of contexts; values
  pushed from several contexts are summed on one context and pulled back identical.
- ``device`` (:class:`DeviceKVStore`): as ``local``, but each key is summed on one of
  the devices it comes from, the keys spread over the devices (``nccl`` too).
- ``dist_sync`` (:class:`DistSyncKVStore`): several processes (one or many machines)
  launched with ``mpirun``; sums over the processes with MPI (mpi4py), with a timeout
  (``KBACKEND_DIST_TIMEOUT``) instead of hanging on a dead peer.
- MXNet 1.x's names: ``local_update_cpu`` and ``local_allreduce_cpu`` are ``local``,
  ``local_allreduce_device`` is ``device``; ``kv.type`` is the name given.
- ``teststore`` (:class:`TestStore`): MXNet's stateless store written in Python.

Example:
    >>> from core import nd, cpu, kvstore
    >>> kv = kvstore.create('local')
    >>> kv.init('w', nd.zeros((3,)))
    >>> kv.push('w', [nd.ones((3,), ctx=cpu(0)), nd.ones((3,), ctx=cpu(1))])
    >>> out = [nd.zeros((3,), ctx=cpu(0)), nd.zeros((3,), ctx=cpu(1))]
    >>> kv.pull('w', out=out)
    >>> out[1].asnumpy().tolist()
    [2.0, 2.0, 2.0]
"""
from .base import KVStoreBase, create
from .device import DeviceKVStore
from .dist import DistSyncKVStore
from .local import LocalKVStore
from .mpi import DistError, DistTimeoutError
from .teststore import TestStore

__all__ = ["DeviceKVStore", "DistError", "DistSyncKVStore", "DistTimeoutError", "KVStoreBase",
           "LocalKVStore", "TestStore", "create"]
