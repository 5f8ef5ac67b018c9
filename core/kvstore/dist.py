"""The ``dist_sync`` store: synchronous data parallelism over processes, through MPI.

Launch one process per worker with MPI (``mpirun -np 2 python train.py``, on one
machine or on many with a host file); each creates ``kvstore.create('dist_sync')``.
``rank`` and ``num_workers`` come from MPI. The store behaves as MXNet's
``dist_sync`` with every worker holding a replica of the server's values:

- ``init`` (and ``broadcast``) check that every worker gives each key the same shape
  and dtype (a mismatch raises ``ValueError`` on every worker, naming the key, the
  ranks and the shapes), then set the value to rank 0's on every worker, so all
  workers start from the same parameters.
- ``push`` sums the pushed arrays over the process' contexts (as ``local``), then sums
  those over the workers with an MPI all-reduce; with an optimizer set
  (``set_optimizer``) every worker applies the same update to its replica of the
  value, otherwise the sum becomes the value. ``pull`` copies the value out (no
  communication: the replicas are identical). ``pushpull`` is both.
- ``push``/``pushpull`` run on the engine's communication worker (:mod:`core.engine`):
  they return at once and overlap with compute; reading an output waits for them.
  The store's collectives run in call order (``priority`` orders them only among
  other communication work), since every worker must issue them in the same order.
- Every worker must make the same calls with the same keys in the same order (a
  checksum travels with each all-reduce, and a mismatch raises ``DistError``); a
  collective that does not complete within ``KBACKEND_DIST_TIMEOUT`` seconds (default
  60) raises ``DistTimeoutError`` instead of hanging (see :mod:`core.kvstore.mpi`).
  Errors of pushed work surface at the next sync point (``wait_to_read``,
  ``asnumpy``, an operator reading the array, ``core.waitall``) as an ``EngineError``
  whose ``__cause__`` is the ``DistError``.

Values travel through host memory (NumPy buffers) for CPU arrays. When every value
of a push lives on one GPU of the process and CuPy has NCCL, the sums go through
NCCL instead, device to device (:class:`core.kvstore.nccl.ProcessGroup`, created at
the first such push: rank 0's NCCL unique id is broadcast over MPI); the key-order
check still travels over MPI. ``KBACKEND_DIST_NCCL=0`` keeps the host path. Gradient
compression: only ``{'type': 'none'}``; ``set_gradient_compression`` refuses MXNet's
``'2bit'`` and ``'1bit'`` schemes, which are not implemented.

Example (a script run as ``mpirun -np 2 python script.py``; not a doctest, since it
needs an MPI job)::

    from core import kvstore, nd
    kv = kvstore.create('dist_sync')
    kv.init('w', nd.ones((2,)) * (kv.rank + 1))   # rank 0's value on every worker
    g = nd.ones((2,))
    kv.pushpull('w', g)                           # the sum over the workers
    assert g.asnumpy().tolist() == [2.0, 2.0]
"""
from __future__ import annotations

import contextlib
import json
import os

import numpy

from .. import autograd, engine, nd, profiler
from . import nccl
from .base import KVStoreBase, key_value_pairs
from .comm import copy_to_all, reduce_sum
from .local import LocalKVStore
from .mpi import DistError, DistTimeoutError, MPIComm, on_exit

__all__ = ["DistError", "DistSyncKVStore", "DistTimeoutError"]


def _submit(store, fn, name: str, priority: int, reads=(), writes=()) -> None:
    """Push communication work ``fn()`` to the engine's communication worker.

    Every piece of the store's work also writes the store's order variable, so it runs
    in call order: MPI collectives must be issued in the same order on every worker,
    and ``priority`` only orders it among other work of that worker.
    """
    engine.push(fn, read_vars=reads, write_vars=(*writes, store._order), ctx=engine.COMM,
                priority=priority, name=name)


def _describe(k, arr) -> list:
    return [type(k).__name__, k, list(arr.shape), arr.dtype.name]


def _fmt(desc) -> str:
    return f"shape {tuple(desc[2])} {desc[3]}"


@KVStoreBase.register
class DistSyncKVStore(LocalKVStore):
    """The store of synchronous multi-process training (``create('dist_sync')``).

    Creating it is a collective: every MPI process must create its store at the same
    point. ``dist_device_sync`` is the same store (values travel through the host).

    Raises:
        ImportError: mpi4py is missing (``pip install mpi4py mpich``).
        DistTimeoutError: not every process created its store within the timeout.

    Example (in each process of ``mpirun -np 2 python script.py``)::

        from core import kvstore, nd, optimizer
        kv = kvstore.create('dist_sync')
        kv.init(0, nd.zeros((2,)))
        kv.set_optimizer(optimizer.SGD(learning_rate=0.5))
        kv.push(0, nd.ones((2,)))                  # every worker pushes ones
        out = nd.zeros((2,))
        kv.pull(0, out=out)                        # 0 - 0.5 * (1 + 1) on both workers
        assert out.asnumpy().tolist() == [-1.0, -1.0]
    """

    names = ("dist_sync", "dist_device_sync")

    def __init__(self):
        super().__init__()
        self._comm = MPIComm()
        self._ordinal: dict = {}  # key -> its position in init order (the checksum)
        self._order = engine.new_var("kvstore.dist_sync")
        self._nccl = None  # the NCCL process group (made at the first push of GPU values)
        on_exit(self._drain_at_exit)

    @property
    def type(self) -> str:
        """``'dist_sync'``."""
        return "dist_sync"

    @property
    def rank(self) -> int:
        """This process' rank in the MPI job, in ``[0, num_workers)``."""
        return self._comm.rank

    @property
    def num_workers(self) -> int:
        """The number of processes in the MPI job."""
        return self._comm.size

    @property
    def timeout(self) -> float:
        """Seconds a collective may take before :class:`DistTimeoutError`
        (``KBACKEND_DIST_TIMEOUT``; ``inf`` for none)."""
        return self._comm.timeout

    def barrier(self) -> None:
        """Wait until every worker reaches this call (MXNet's ``_barrier``).

        Raises:
            DistTimeoutError: not every worker arrived within the timeout.
        """
        self._drain()
        self._comm.barrier("kvstore.barrier")

    _barrier = barrier  # MXNet's name

    def _drain(self) -> None:
        """Wait for the store's pushed communication (it raises that work's failure)."""
        engine.wait_to_write(self._order)

    def _drain_at_exit(self) -> None:
        # A failure seen only now marks the communicator broken: the exit then aborts.
        with contextlib.suppress(Exception):
            self._drain()

    # ------------------------------------------------------------------ init/broadcast
    def init(self, key, value) -> None:
        """Initialize ``key`` on every worker with rank 0's ``value``.

        Every worker must call it with the same keys, in the same order, with values
        of the same shapes and dtypes (the values themselves may differ: rank 0's win).

        Args:
            key: an int or str, or a list of them.
            value: an NDArray (for a list of keys, a list with one per key); a list of
                NDArrays for one key initializes it with the first.

        Raises:
            ValueError: the key is initialized already, or the workers disagree on the
                keys, shapes or dtypes (raised on every worker).
        """
        pairs = key_value_pairs(key, value)
        for k, _ in pairs:
            if k in self._store:
                raise ValueError(f"kvstore.init: key {k!r} is initialized already (use "
                                 "broadcast or push to change its value)")
        self._sync_values(pairs, "init")

    def broadcast(self, key, value, out, priority: int = 0) -> None:
        """Set ``key`` to rank 0's ``value`` on every worker and copy it into ``out``.

        Args:
            key: an int or str, or a list of them.
            value: an NDArray (for a list of keys, a list with one per key).
            out: an NDArray or a list of NDArrays (for a list of keys, one entry per key).
            priority: ignored.

        Raises:
            ValueError: the workers disagree on the keys, shapes or dtypes.
        """
        pairs = key_value_pairs(key, value)
        outs = key_value_pairs(key, out, what="out")
        self._sync_values(pairs, "broadcast")
        for (k, _), (_, o) in zip(pairs, outs):
            copy_to_all(self._store[k], o)

    def _sync_values(self, pairs, what: str) -> None:
        """Check the keys/shapes/dtypes across workers, then store rank 0's values.

        Runs in the calling thread, after the store's pushed work (so that errors are
        raised here, on every worker).
        """
        self._drain()
        self._check_agreement(pairs, what)
        for k, vals in pairs:
            src = vals[0]
            label = f"key {k!r} ({_fmt(_describe(k, src))})"
            with profiler.scope(f"kvstore.{what} {k!r}"):
                data = self._comm.bcast(src.asnumpy(), label)
            with autograd.pause():
                value = nd.array(data, ctx=src.context, dtype=src.dtype)
            stored = self._store.get(k)
            if stored is not None and stored.shape == value.shape \
                    and stored.dtype == value.dtype:
                copy_to_all(value, [stored])
            else:
                self._store[k] = value
            self._ordinal.setdefault(k, len(self._ordinal) + 1)

    def _check_agreement(self, pairs, what: str) -> None:
        mine = [_describe(k, vals[0]) for k, vals in pairs]
        blobs = self._comm.allgather_bytes(json.dumps(mine).encode(),
                                           f"the keys and shapes of kvstore.{what}")
        everyone = [json.loads(b.decode()) for b in blobs]
        problems = []
        ref = everyone[0]
        for r, theirs in enumerate(everyone[1:], 1):
            if [d[:2] for d in theirs] != [d[:2] for d in ref]:
                problems.append(f"rank 0 gives keys {[d[1] for d in ref]} but rank {r} gives "
                                f"{[d[1] for d in theirs]}")
                continue
            for d0, dr in zip(ref, theirs):
                if d0 != dr:
                    problems.append(f"key {d0[1]!r} has {_fmt(d0)} on rank 0 but {_fmt(dr)} "
                                    f"on rank {r}")
        if problems:
            raise ValueError(f"kvstore.{what} (dist_sync): the {self.num_workers} workers "
                             "disagree on the parameters: " + "; ".join(problems) +
                             ". Every worker must build the same model (the same shapes "
                             "and dtypes) and initialize the keys in the same order.")

    # ------------------------------------------------------------------ optimizer
    def set_optimizer(self, optimizer) -> None:
        """Update every worker's replica of the values with ``optimizer`` on each push
        (all workers apply the same update to the same summed gradient).

        Raises:
            TypeError: ``optimizer`` is not a ``core.optimizer.Optimizer``.
        """
        self._drain()
        super().set_optimizer(optimizer)

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        """Save the optimizer states (identical on every worker: saving on rank 0 is
        enough) to ``fname``, atomically, after the pending updates.

        Raises:
            RuntimeError: no optimizer is set on the store.
        """
        self._drain()
        super().save_optimizer_states(fname, dump_optimizer)

    def load_optimizer_states(self, fname: str) -> None:
        """Load states saved by :meth:`save_optimizer_states` (on every worker).

        Raises:
            RuntimeError: no optimizer is set on the store.
            ValueError: the file does not hold optimizer states.
        """
        self._drain()
        super().load_optimizer_states(fname)

    # ------------------------------------------------------------------ push
    def push(self, key, value, priority: int = 0) -> None:
        """Sum ``value`` over this process' arrays and over the workers into ``key``.

        The communication is pushed to the engine (it overlaps with compute); the
        stored value is ready for :meth:`pull` and for reads once it completes.

        Args:
            key: an int or str, or a list of them (initialized on every worker).
            value: an NDArray or a list of NDArrays (one per device) per key.
            priority: the engine priority of the communication among other work of the
                communication worker (the store's own collectives run in call order).

        Raises:
            KeyError: the key was not initialized.
            ValueError: the pushed shape differs from the key's.
        """
        self._push_many([(k, vals, []) for k, vals in key_value_pairs(key, value)], priority)

    def pushpull(self, key, value, out=None, priority: int = 0) -> None:
        """:meth:`push` ``value``, then copy the new value into ``out`` (default
        ``value``): an all-reduce over contexts and workers without an optimizer.

        A list of keys travels in one MPI all-reduce (per dtype) instead of one per
        key, which saves the per-message latency for many small parameters.

        Args:
            key: an int or str, or a list of them.
            value: as for :meth:`push`.
            out: an NDArray or a list of them per key; None writes into ``value``.
            priority: as for :meth:`push`.
        """
        pairs = key_value_pairs(key, value)
        outs = pairs if out is None else key_value_pairs(key, out, what="out")
        self._push_many([(k, vals, o) for (k, vals), (_, o) in zip(pairs, outs)], priority)

    def _push_many(self, entries, priority: int) -> None:
        """One pushed piece of work: sum each entry's arrays here, all entries over the
        workers in one all-reduce, then update or replace each value and copy it out."""
        reads, writes, items = [], [], []
        for k, vals, outs in entries:
            stored = self._store.get(k)
            if stored is None:
                raise KeyError(f"kvstore.push (dist_sync): key {k!r} has not been "
                               "initialized; call init (or broadcast) first, on every worker")
            for v in vals:
                if v.shape != stored.shape:
                    raise ValueError(f"kvstore.push: key {k!r} holds shape {stored.shape}, "
                                     f"but a pushed value has shape {v.shape}")
            for o in outs:
                if o.shape != stored.shape:
                    raise ValueError(f"kvstore.pushpull: key {k!r} holds shape "
                                     f"{stored.shape}, but an output has shape {o.shape}")
            vals, outs = list(vals), list(outs)
            items.append((k, vals, outs, stored))
            reads += [v for v in vals if all(v is not o for o in outs)]
            writes += [stored, *outs]
        if not items:
            return
        check = 0
        for k, *_ in items:  # the keys' order, as one number every worker must agree on
            check = (check * 1000003 + self._ordinal[k]) % (2 ** 61 - 1)
        keys = [k for k, *_ in items]
        name = "pushpull" if any(outs for _, _, outs, _ in items) else "push"

        def work():
            locals_ = [reduce_sum(vals, stored.context) for _, vals, _, stored in items]
            if len(items) == 1:
                label = f"key {keys[0]!r} ({_fmt(_describe(keys[0], locals_[0]))})"
            else:
                label = f"keys {keys} ({sum(a.size for a in locals_)} values)"
            with profiler.scope(f"kvstore.allreduce {keys[0]!r}" if len(keys) == 1
                                else f"kvstore.allreduce {len(keys)} keys"):
                totals = self._nccl_allreduce(locals_, label, check)
                if totals is None:
                    totals = self._comm.allreduce_sum([a.asnumpy() for a in locals_], label,
                                                      check=check)
            with autograd.pause():
                for (k, _, outs, stored), local, total in zip(items, locals_, totals):
                    merged = total if total is local else \
                        nd.array(total, ctx=stored.context, dtype=local.dtype)
                    if self._updater is not None:
                        self._updater(k, merged, stored)
                    else:
                        copy_to_all(merged, [stored])
                    if outs:
                        copy_to_all(stored, outs)

        label = repr(keys[0]) if len(keys) == 1 else repr(keys)
        _submit(self, work, f"kvstore.{name}({label})", priority, reads=reads, writes=writes)

    def _nccl_allreduce(self, locals_, label: str, check: int):
        """Sum ``locals_`` (new arrays, summed in place) over the workers with NCCL, or
        None when they are not all on one GPU (or NCCL is off or missing)."""
        device = nccl.dist_device([a.context for a in locals_])
        if device is None or os.environ.get("KBACKEND_DIST_NCCL", "1").strip() == "0" or \
                any(a.dtype.name not in nccl.DTYPES for a in locals_):
            return None
        if self._nccl is None:
            self._nccl = nccl.ProcessGroup(self._comm, device)
        elif self._nccl.device != device:
            return None  # one communicator per process, on the GPU it was made on
        # the key-order check alone over MPI (a few bytes), the values through NCCL
        self._comm.allreduce_sum([numpy.zeros(0, numpy.float32)], label, check=check)
        for a in locals_:
            a.wait_to_read()
        self._nccl.allreduce_sum([a._data for a in locals_])
        return locals_
