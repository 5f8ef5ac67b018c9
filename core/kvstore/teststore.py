"""``TestStore``: MXNet's example of a key-value store written in Python (``'teststore'``).

It keeps nothing: ``broadcast`` copies the value into the outputs and ``pushpull``
writes the sum of the pushed values into the outputs (or back into the values). It has
no optimizer (``is_capable('optimizer')`` is False; ``set_optimizer`` raises
NotImplementedError). MXNet 1.x ships it in ``mx.kvstore`` and its tests create it with
``mx.kv.create('teststore')``; it is also the model for registering one's own store
with :meth:`KVStoreBase.register`.

Example:
    >>> from core import nd, cpu, kvstore
    >>> kv = kvstore.create('teststore')
    >>> vals = [nd.ones((2,), ctx=cpu(0)), nd.ones((2,), ctx=cpu(1))]
    >>> kv.pushpull(0, vals)
    >>> vals[1].asnumpy().tolist(), kv.type
    ([2.0, 2.0], 'teststore')
"""
from __future__ import annotations

from .base import KVStoreBase, key_value_pairs
from .comm import copy_to_all, reduce_sum

__all__ = ["TestStore"]


@KVStoreBase.register
class TestStore(KVStoreBase):
    """A store without state: broadcast copies, pushpull sums (MXNet's ``TestStore``)."""

    names = ("teststore",)
    __test__ = False  # not a pytest test class despite its name

    def broadcast(self, key, value, out, priority: int = 0) -> None:
        """Copy ``value`` into ``out`` (an NDArray or a list; per key for a list of keys)."""
        pairs = key_value_pairs(key, value)
        outs = key_value_pairs(key, out, what="out")
        for (_, vals), (_, o) in zip(pairs, outs):
            copy_to_all(vals[0], o)

    def pushpull(self, key, value, out=None, priority: int = 0) -> None:
        """Write the sum of ``value``'s arrays into ``out`` (default: into ``value``)."""
        pairs = key_value_pairs(key, value)
        outs = pairs if out is None else key_value_pairs(key, out, what="out")
        totals = [reduce_sum(vals, vals[0].context) for _, vals in pairs]  # all read first
        for total, (_, o) in zip(totals, outs):
            copy_to_all(total, o)

    @staticmethod
    def is_capable(capability: str) -> bool:
        """False for ``'optimizer'``.

        Raises:
            ValueError: an unknown capability.
        """
        if str(capability).lower() == KVStoreBase.OPTIMIZER:
            return False
        raise ValueError(f"TestStore.is_capable: unknown capability {capability!r}")

    @property
    def type(self) -> str:
        """``'teststore'``."""
        return "teststore"

    @property
    def rank(self) -> int:
        """0: one process."""
        return 0

    @property
    def num_workers(self) -> int:
        """1: one process."""
        return 1
