"""The ``local`` store: sums values over the contexts of one process (MXNet's ``local``).

Each key's value lives on one context: the context of the array it was initialized
with (or, for a key first pushed without ``init``, of the first pushed array). A push
copies the pushed arrays to that context and adds them in the order given
(:func:`~core.kvstore.comm.reduce_sum`); then, with an optimizer set, the stored value
is updated with the sum (``updater(key, sum, stored)``), and without one the sum
becomes the stored value. A pull copies the stored value into every output, so all
outputs are identical.

Example:
    >>> from core import nd, cpu, kvstore
    >>> kv = kvstore.create('local')
    >>> grads = [nd.ones((2,), ctx=cpu(0)), nd.ones((2,), ctx=cpu(1)) * 3]
    >>> kv.pushpull('w', grads)                  # all-reduce in place
    >>> [g.asnumpy().tolist() for g in grads]
    [[4.0, 4.0], [4.0, 4.0]]
"""
from __future__ import annotations

import os

from .. import autograd
from ..optimizer import Optimizer, get_updater
from .base import KVStoreBase, key_value_pairs, write_bytes_atomic
from .comm import copy_to_all, reduce_sum
from .sparse import KeyTypes, pull_outputs, row_sparse_pull_into, store_like

__all__ = ["LocalKVStore"]


@KVStoreBase.register
class LocalKVStore(KVStoreBase):
    """A key-value store for the devices of one process (``create('local')``).

    ``rank`` is 0 and ``num_workers`` 1. Values are dense NDArrays on any contexts
    (CPU and GPU); the ``priority`` arguments are accepted and ignored (operations run
    in call order).

    Example:
        >>> from core import nd, cpu, kvstore, optimizer
        >>> kv = kvstore.create('local')
        >>> kv.init(0, nd.zeros((2,)))
        >>> kv.set_optimizer(optimizer.SGD(learning_rate=0.5))
        >>> kv.push(0, [nd.ones((2,), ctx=cpu(0)), nd.ones((2,), ctx=cpu(1))])
        >>> out = nd.zeros((2,), ctx=cpu(1))
        >>> kv.pull(0, out=out)
        >>> out.asnumpy().tolist()            # 0 - 0.5 * (1 + 1)
        [-1.0, -1.0]
    """

    names = ("local", "local_update_cpu", "local_allreduce_cpu")

    def __init__(self):
        self._store: dict = {}
        self._updater = None
        self._compression = {"type": "none"}
        self._key_types = KeyTypes()

    # ------------------------------------------------------------------ properties
    @property
    def type(self) -> str:
        """The name the store was created with: ``'local'`` (or MXNet 1.x's
        ``'local_update_cpu'``/``'local_allreduce_cpu'``, which are the same store here)."""
        return getattr(self, "_kv_type", "local")

    @property
    def rank(self) -> int:
        """0: one process."""
        return 0

    @property
    def num_workers(self) -> int:
        """1: one process."""
        return 1

    def is_capable(self, capability: str) -> bool:
        """True for ``'optimizer'`` (updates can run on the store).

        Raises:
            ValueError: an unknown capability.
        """
        if str(capability).lower() == KVStoreBase.OPTIMIZER:
            return True
        raise ValueError(f"is_capable: unknown capability {capability!r}; known: "
                         f"{KVStoreBase.OPTIMIZER!r}")

    # ------------------------------------------------------------------ data
    def init(self, key, value) -> None:
        """Initialize ``key`` with a copy of ``value`` (on ``value``'s context).

        Args:
            key: an int or str, or a list of them.
            value: an NDArray (for a list of keys, a list with one per key). A list
                of NDArrays for one key initializes it with the first.

        Raises:
            ValueError: the key is initialized already.
        """
        self._key_types.check(key, "init")
        pairs = key_value_pairs(key, value)
        for k, _ in pairs:
            if k in self._store:
                raise ValueError(f"kvstore.init: key {k!r} is initialized already (use "
                                 "broadcast or push to change its value)")
        for k, vals in pairs:
            self._store[k] = _copy(vals[0])

    def push(self, key, value, priority: int = 0) -> None:
        """Sum ``value`` over its arrays into ``key``.

        With an optimizer set (:meth:`set_optimizer`), the stored value is updated with
        the sum; without one, the sum replaces it.

        Args:
            key: an int or str, or a list of them.
            value: an NDArray or a list of NDArrays (one per device) for one key; for a
                list of keys, a list with one such entry per key.
            priority: ignored (operations run in order).

        Raises:
            KeyError: with an optimizer set, the key was never initialized.
        """
        self._key_types.check(key, "push")
        for k, vals in key_value_pairs(key, value):
            self._push_one(k, vals)

    def _push_one(self, k, vals) -> None:
        stored = self._store.get(k)
        self._check_push_shape(k, stored, vals)
        self._apply_merged(k, reduce_sum(vals, self._merge_context(k, vals, stored)), stored)

    @staticmethod
    def _check_push_shape(k, stored, vals) -> None:
        if stored is not None and stored.shape != vals[0].shape:
            raise ValueError(f"kvstore.push: key {k!r} holds shape {stored.shape}, but the "
                             f"pushed value has shape {vals[0].shape}")

    def _apply_merged(self, k, merged, stored) -> None:
        """Run the optimizer on key ``k``'s stored value with the summed ``merged``, or
        (without one) store ``merged`` as the key's value."""
        if self._updater is not None:
            if stored is None:
                raise KeyError(f"kvstore.push: key {k!r} has not been initialized; call "
                               "init (or broadcast) before pushing to a store with an "
                               "optimizer")
            with autograd.pause():
                self._updater(k, merged, stored)
        else:
            if stored is not None and merged.dtype != stored.dtype:
                merged = merged.astype(stored.dtype)
            self._store[k] = store_like(merged, stored)

    def _merge_context(self, k, vals, stored):
        """Where key ``k``'s pushed arrays are summed: the stored value's context (the
        first pushed array's for a new key)."""
        return vals[0].context if stored is None else stored.context

    def pull(self, key, out=None, priority: int = 0, ignore_sparse: bool = True) -> None:
        """Copy the value of ``key`` into ``out``.

        Args:
            key: an int or str, or a list of them.
            out: an NDArray or a list of NDArrays (for a list of keys, one entry per
                key); all receive the same value.
            priority: ignored.
            ignore_sparse: skip sparse outputs (MXNet's default); False writes the
                whole value into them too.

        Raises:
            KeyError: the key has no value.
        """
        if out is None:
            raise ValueError("kvstore.pull: give the output array(s) with out=")
        self._key_types.check(key, "pull")
        for k, outs in key_value_pairs(key, out, what="out"):
            copy_to_all(self._get(k, "pull"), pull_outputs(outs, ignore_sparse))

    def row_sparse_pull(self, key, out=None, priority: int = 0, row_ids=None) -> None:
        """Copy the rows ``row_ids`` of ``key``'s value into row_sparse outputs (MXNet's
        ``row_sparse_pull``; the other rows of the outputs become zero).

        Args:
            key: an int or str, or a list of them.
            out: a RowSparseNDArray or a list of them (for a list of keys, one entry per
                key).
            priority: ignored.
            row_ids: an NDArray of row ids (any order, repeats allowed) for all
                outputs, or a list with one per output (for a list of keys, one entry
                per key).

        Raises:
            core.ops.dispatch.MXNetError: an output is not row_sparse, or the key's kind
                (int/str) differs from the store's.
            KeyError: the key has no value.
        """
        if out is None or row_ids is None:
            raise ValueError("kvstore.row_sparse_pull: give out= and row_ids=")
        self._key_types.check(key, "row_sparse_pull")
        pairs = key_value_pairs(key, out, what="out")
        if isinstance(key, (list, tuple)):
            if not isinstance(row_ids, (list, tuple)) or len(row_ids) != len(pairs):
                raise ValueError(f"kvstore.row_sparse_pull: {len(pairs)} keys need "
                                 f"{len(pairs)} row_ids entries (one per key)")
            ids = list(row_ids)
        else:
            ids = [row_ids]
        for (k, outs), r in zip(pairs, ids):
            row_sparse_pull_into(self._get(k, "row_sparse_pull"), outs, r, k)

    def pushpull(self, key, value, out=None, priority: int = 0) -> None:
        """:meth:`push` ``value``, then :meth:`pull` into ``out`` (default ``value``).

        Without an optimizer this is an all-reduce: every output receives the sum of
        ``value``'s arrays. ``value`` and ``out`` may hold different numbers of arrays.

        Args:
            key: an int or str, or a list of them.
            value: as for :meth:`push`.
            out: as for :meth:`pull`; None writes the result into ``value``.
            priority: ignored.
        """
        pairs = key_value_pairs(key, value)
        outs = pairs if out is None else key_value_pairs(key, out, what="out")
        # every key is pushed before any is pulled, as in MXNet: with a list of keys
        # whose values share arrays, results written into one key's arrays are not
        # summed again by the next key
        for k, vals in pairs:
            self._push_one(k, vals)
        for (k, _), (_, o) in zip(pairs, outs):
            copy_to_all(self._store[k], o)

    def broadcast(self, key, value, out, priority: int = 0) -> None:
        """Set ``key`` to a copy of ``value`` and copy it into ``out``.

        An uninitialized key is initialized on ``value``'s context; an existing key's
        value is replaced (the optimizer states on the store are kept).

        Args:
            key: an int or str, or a list of them.
            value: an NDArray (for a list of keys, a list with one per key).
            out: an NDArray or a list of NDArrays (for a list of keys, one entry per key).
            priority: ignored.
        """
        pairs = key_value_pairs(key, value)
        outs = key_value_pairs(key, out, what="out")
        for (k, vals), (_, o) in zip(pairs, outs):
            stored = self._store.get(k)
            if stored is None or stored.shape != vals[0].shape \
                    or stored.dtype != vals[0].dtype:
                self._store[k] = _copy(vals[0])
            else:
                copy_to_all(vals[0], [stored])
            copy_to_all(self._store[k], o)

    def _get(self, k, what: str):
        stored = self._store.get(k)
        if stored is None:
            raise KeyError(f"kvstore.{what}: key {k!r} has not been initialized (call init, "
                           "push or broadcast first)")
        return stored

    # ------------------------------------------------------------------ optimizer
    def set_optimizer(self, optimizer: Optimizer) -> None:
        """Update stored values with ``optimizer`` on every push.

        Each push then runs ``optimizer``'s update rule on the stored value with the
        summed gradient (the key is the optimizer's weight index); pulls return the
        updated value. States are created on the values' contexts.

        Args:
            optimizer: a ``core.optimizer.Optimizer``.

        Raises:
            TypeError: ``optimizer`` is not an Optimizer.
        """
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"set_optimizer: expected a core.optimizer.Optimizer, got "
                            f"{type(optimizer).__name__}")
        self._updater = get_updater(optimizer)

    def _set_updater(self, updater) -> None:
        """Use ``updater(key, summed_value, stored_value)`` on pushes (MXNet's private hook);
        None turns updates off."""
        if updater is not None and not callable(updater):
            raise TypeError("_set_updater: the updater must be callable")
        self._updater = updater

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        """Save the store's optimizer states (and the optimizer) to ``fname``, atomically.

        The file holds ``Updater.get_states`` bytes (an ``.npz`` archive, no pickle).

        Args:
            fname: the file.
            dump_optimizer: also save the optimizer's hyper-parameters and update counts.

        Raises:
            RuntimeError: no optimizer is set on the store.
        """
        updater = self._require_updater("save_optimizer_states")
        data = updater.get_states(dump_optimizer=dump_optimizer)
        write_bytes_atomic(fname, data)

    def load_optimizer_states(self, fname: str) -> None:
        """Load states saved by :meth:`save_optimizer_states` (never unpickles).

        Raises:
            RuntimeError: no optimizer is set on the store.
            ValueError: the file does not hold optimizer states.
        """
        updater = self._require_updater("load_optimizer_states")
        with open(os.fspath(fname), "rb") as f:
            updater.set_states(f.read())

    def _require_updater(self, what: str):
        if self._updater is None or not hasattr(self._updater, "get_states"):
            raise RuntimeError(f"kvstore.{what}: no optimizer is set on the store; call "
                               "set_optimizer first")
        return self._updater

    def set_gradient_compression(self, compression_params: dict) -> None:
        """Set gradient compression; only ``{'type': 'none'}`` is supported.

        Args:
            compression_params: a dict with a ``'type'`` entry.

        Raises:
            NotImplementedError: ``'2bit'`` or ``'1bit'`` compression (not implemented).
            ValueError: another type, or no ``'type'``.
        """
        if not isinstance(compression_params, dict) or "type" not in compression_params:
            raise ValueError("set_gradient_compression: compression_params must be a dict "
                             f"with a 'type' entry, got {compression_params!r}")
        kind = str(compression_params["type"]).lower()
        if kind == "none":
            self._compression = dict(compression_params)
            return
        if kind in ("2bit", "1bit"):
            raise NotImplementedError(
                f"set_gradient_compression: {kind} gradient compression is not implemented "
                "in kbackend; use {'type': 'none'} (or no compression_params)")
        raise ValueError(f"set_gradient_compression: unknown compression type "
                         f"{compression_params['type']!r}; MXNet knows 'none', '1bit' and "
                         "'2bit', and kbackend supports 'none'")


def _copy(value):
    """A detached copy of ``value`` on its own context."""
    with autograd.pause():
        return value.copyto(value.context).detach()

