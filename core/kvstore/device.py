"""The ``device`` store: sums on the devices themselves, spread over them (MXNet's ``device``).

MXNet's ``local`` store reduces every key on one place (the CPU), its ``device``
store on the devices: each key's pushed arrays are summed on one of the contexts
they come from, and the keys are spread over the contexts so that no device sums
them all. Here each key gets, at its first push, the context (among those it is
pushed from) that has the fewest bytes of keys assigned so far; its value then lives
there. The sums are the same as the ``local`` store's, to the bit (the arrays are
added in the same order); only the place differs. On GPUs the copies between
devices go through CuPy (peer to peer where the hardware allows); several CPU
contexts share the host, so there it is the placement, not the speed, that differs.

On two or more distinct GPUs (and CuPy with NCCL), a key's arrays are summed with
one NCCL all-reduce instead (:mod:`core.kvstore.nccl`: one communicator set per
device set, created at its first use): every device then holds the sum, the value
on the key's device is the stored one, and ``pushpull`` writes each device's sum
into the outputs on that device without another copy.

Example:
    >>> from core import nd, cpu, kvstore
    >>> kv = kvstore.create('device')
    >>> big = [nd.ones((4, 4), ctx=cpu(0)), nd.ones((4, 4), ctx=cpu(1))]
    >>> small = [nd.ones((2,), ctx=cpu(0)), nd.ones((2,), ctx=cpu(1))]
    >>> kv.pushpull('big', big)
    >>> kv.pushpull('small', small)
    >>> kv.merge_context('big'), kv.merge_context('small')   # spread over the devices
    (cpu(0), cpu(1))
    >>> small[0].asnumpy().tolist()
    [2.0, 2.0]
"""
from __future__ import annotations

from .. import autograd
from ..context import Context
from . import nccl
from .base import KVStoreBase
from .comm import copy_to_all
from .local import LocalKVStore

__all__ = ["DeviceKVStore"]


@KVStoreBase.register
class DeviceKVStore(LocalKVStore):
    """A store that sums each key on one of its devices (``create('device')``).

    The interface and the results are the local store's (:class:`LocalKVStore`);
    ``create('nccl')`` gives this store too.
    """

    names = ("device", "nccl", "local_allreduce_device")

    def __init__(self):
        super().__init__()
        self._where: dict = {}   # key -> the context its values are summed on
        self._load: dict = {}    # context -> bytes of the keys assigned to it
        self._cliques = None     # the NCCL communicators (made at the first GPU key)
        self._sums: dict = {}    # key -> {context: its NCCL sum} of the last push

    @property
    def type(self) -> str:
        """The name the store was created with: ``'device'`` (or ``'nccl'``, MXNet 1.x's
        ``'local_allreduce_device'``)."""
        return getattr(self, "_kv_type", "device")

    def merge_context(self, key) -> Context:
        """The context that key ``key`` is summed on (assigned at its first push).

        Raises:
            KeyError: the key was never pushed.
        """
        if key not in self._where:
            raise KeyError(f"kvstore.merge_context: key {key!r} has not been pushed yet")
        return self._where[key]

    def _push_one(self, k, vals) -> None:
        ctx = self._where.get(k)
        if ctx is None:
            candidates = list(dict.fromkeys(v.context for v in vals))
            ctx = min(candidates, key=lambda c: self._load.get(c, 0))
            self._where[k] = ctx
            self._load[ctx] = self._load.get(ctx, 0) + vals[0].size * vals[0].dtype.itemsize
        stored = self._store.get(k)
        if stored is not None and stored.context != ctx:
            stored = self._store[k] = stored.copyto(ctx).detach()  # moves to its device
        self._sums.pop(k, None)
        devices = nccl.devices_of(v.context for v in vals)
        if devices is None or getattr(vals[0], "stype", "default") != "default":
            super()._push_one(k, vals)
            return
        self._check_push_shape(k, stored, vals)
        sums = self._nccl_sums(devices, vals)
        self._sums[k] = {v.context: s for v, s in zip(vals, sums)}
        self._apply_merged(k, sums[[v.context for v in vals].index(ctx)], stored)

    def _nccl_sums(self, devices, vals) -> list:
        """One NCCL all-reduce of ``vals`` (one per device): new arrays, each the sum."""
        if self._cliques is None:
            self._cliques = nccl.DeviceCliques()
        return nccl.sum_arrays(self._cliques, devices, vals)

    def push(self, key, value, priority: int = 0) -> None:
        """Sum ``value``'s arrays into ``key`` (the local store's ``push``; on several
        GPUs with one NCCL all-reduce)."""
        try:
            super().push(key, value, priority)
        finally:
            self._sums.clear()  # only pushpull hands the per-device sums out

    def pushpull(self, key, value, out=None, priority: int = 0) -> None:
        """:meth:`push` then :meth:`pull` (the local store's); keys summed with NCCL write
        each device's sum into the outputs on that device."""
        from .base import key_value_pairs

        pairs = key_value_pairs(key, value)
        outs = pairs if out is None else key_value_pairs(key, out, what="out")
        for k, vals in pairs:
            self._push_one(k, vals)
        for (k, _), (_, o) in zip(pairs, outs):
            sums = self._sums.pop(k, None) if self._updater is None else None
            rest = []
            with autograd.pause():
                for arr in o:
                    s = None if sums is None else sums.get(arr.context)
                    if s is not None and s.dtype == arr.dtype and s.shape == arr.shape:
                        arr[...] = s
                    else:
                        rest.append(arr)
            if rest:
                copy_to_all(self._store[k], rest)

    def _merge_context(self, k, vals, stored):
        return self._where[k]
