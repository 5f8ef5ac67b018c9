"""``KVStoreBase``: the key-value store interface for data-parallel training, and its registry.

A store keeps one value per key (an ``int`` or a ``str``). Workers *push* values for
a key (one per device: the gradients of one parameter on every context), the store
sums them (and, after :meth:`~KVStoreBase.set_optimizer`, updates its value with the
sum), and workers *pull* the value back into arrays on their devices. ``pushpull`` is
both in one call, the all-reduce of data-parallel training.

Stores are classes registered with :meth:`KVStoreBase.register` and created by name
with ``core.kvstore.create(name)`` (MXNet 2.0's ``mx.kvstore``): ``local`` (one process,
sums across contexts), ``device`` (sums on the devices) and ``dist_sync`` (several
processes through MPI). MXNet 1.x's names are accepted too: ``local_update_cpu`` and
``local_allreduce_cpu`` create the ``local`` store, ``local_allreduce_device`` and
``nccl`` the ``device`` store (where a value is summed and updated differs in MXNet; the
results do not); ``kv.type`` is the name given. ``teststore`` is MXNet's example of a
store written in Python (:class:`~core.kvstore.teststore.TestStore`).

Example:
    >>> from core import kvstore
    >>> @kvstore.KVStoreBase.register
    ... class EchoStore(kvstore.KVStoreBase):
    ...     '''A store that does nothing (only to show registration).'''
    >>> type(kvstore.create('echostore')).__name__
    'EchoStore'
    >>> del kvstore.KVStoreBase.kv_registry['echostore']
"""
from __future__ import annotations

import warnings
from typing import ClassVar

from .. import serialization
from ..ndarray import NDArray

__all__ = ["KVStoreBase", "create", "write_bytes_atomic"]


class KVStoreBase:
    """The interface of all key-value stores (MXNet 2.0's ``mx.kvstore.KVStoreBase``).

    Subclasses implement the operations they support; the others raise
    ``NotImplementedError``. Keys are ints or strings; a value is an NDArray or, for one
    key pushed from several devices, a list of NDArrays (one per device).
    """

    OPTIMIZER = "optimizer"
    kv_registry: ClassVar[dict] = {}

    # ------------------------------------------------------------------ registry
    @staticmethod
    def register(klass: type) -> type:
        """Register a store class, so that ``create(name)`` builds it.

        The name is the class attribute ``names`` (a tuple of names, defined on the
        class itself) or else the lower-cased class name, as in MXNet.

        Args:
            klass: a subclass of :class:`KVStoreBase`.

        Returns:
            ``klass`` (usable as a decorator).

        Raises:
            TypeError: ``klass`` is not a KVStoreBase subclass.
        """
        if not isinstance(klass, type) or not issubclass(klass, KVStoreBase):
            raise TypeError(f"KVStoreBase.register: expected a subclass of KVStoreBase, got "
                            f"{klass!r}")
        names = klass.__dict__.get("names") or (klass.__name__.lower(),)
        for name in names:
            name = name.lower()
            old = KVStoreBase.kv_registry.get(name)
            if old is not None and old is not klass:
                warnings.warn(f"New kvstore {klass.__module__}.{klass.__name__} is overriding "
                              f"existing kvstore {old.__module__}.{old.__name__} "
                              f"(name {name!r})", stacklevel=2)
            KVStoreBase.kv_registry[name] = klass
        return klass

    # ------------------------------------------------------------------ the interface
    def init(self, key, value) -> None:
        """Initialize ``key`` (or each of a list of keys) with ``value``."""
        raise NotImplementedError(f"{type(self).__name__}.init is not implemented")

    def push(self, key, value, priority: int = 0) -> None:
        """Push ``value`` (an NDArray or one per device) to ``key``; the store sums them."""
        raise NotImplementedError(f"{type(self).__name__}.push is not implemented")

    def pull(self, key, out=None, priority: int = 0, ignore_sparse: bool = True) -> None:
        """Copy the value of ``key`` into ``out`` (an NDArray or a list of them)."""
        raise NotImplementedError(f"{type(self).__name__}.pull is not implemented")

    def pushpull(self, key, value, out=None, priority: int = 0) -> None:
        """Push ``value`` then pull the result into ``out`` (default: into ``value``).

        Without an optimizer on the store this is an all-reduce: every array of ``out``
        receives the sum of the arrays of ``value``.
        """
        raise NotImplementedError(f"{type(self).__name__}.pushpull is not implemented")

    def broadcast(self, key, value, out, priority: int = 0) -> None:
        """Set ``key`` to ``value`` (rank 0's in a distributed store) and copy it to ``out``."""
        raise NotImplementedError(f"{type(self).__name__}.broadcast is not implemented")

    def set_optimizer(self, optimizer) -> None:
        """Update the stored values with ``optimizer`` whenever gradients are pushed."""
        raise NotImplementedError(f"{type(self).__name__}.set_optimizer is not implemented")

    def is_capable(self, capability: str) -> bool:
        """Whether the store supports ``capability`` (``KVStoreBase.OPTIMIZER``)."""
        raise NotImplementedError(f"{type(self).__name__}.is_capable is not implemented")

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        """Save the optimizer states of the store's updater to ``fname``."""
        raise NotImplementedError(f"{type(self).__name__}.save_optimizer_states is not "
                                  "implemented")

    def load_optimizer_states(self, fname: str) -> None:
        """Load optimizer states saved by :meth:`save_optimizer_states`."""
        raise NotImplementedError(f"{type(self).__name__}.load_optimizer_states is not "
                                  "implemented")

    def set_gradient_compression(self, compression_params: dict) -> None:
        """Compress pushed gradients (only ``{'type': 'none'}`` is supported)."""
        raise NotImplementedError(f"{type(self).__name__}.set_gradient_compression is not "
                                  "implemented")

    @property
    def type(self) -> str:
        """The store's type name (``'local'``, ...)."""
        raise NotImplementedError(f"{type(self).__name__}.type is not implemented")

    @property
    def rank(self) -> int:
        """This worker's rank, in ``[0, num_workers)``."""
        raise NotImplementedError(f"{type(self).__name__}.rank is not implemented")

    @property
    def num_workers(self) -> int:
        """The number of worker processes."""
        raise NotImplementedError(f"{type(self).__name__}.num_workers is not implemented")

    def __repr__(self) -> str:
        try:
            kind = self.type
        except NotImplementedError:
            kind = type(self).__name__.lower()
        return f"<{type(self).__name__} type={kind!r}>"


def create(name: str = "local") -> KVStoreBase:
    """A new key-value store of the registered type ``name`` (case-insensitive).

    Args:
        name: the store type: ``'local'``, ``'device'``, ``'dist_sync'`` (or another
            registered name).

    Returns:
        The store.

    Raises:
        TypeError: ``name`` is not a string.
        ValueError: no store is registered under ``name`` (the message lists those that
            are).

    Example:
        >>> from core import kvstore
        >>> kv = kvstore.create('local')
        >>> kv.type, kv.rank, kv.num_workers
        ('local', 0, 1)
    """
    if not isinstance(name, str):
        raise TypeError(f"kvstore.create: name must be a string, got {type(name).__name__}")
    key = name.lower()
    klass = KVStoreBase.kv_registry.get(key)
    if klass is None:
        known = ", ".join(repr(n) for n in sorted(KVStoreBase.kv_registry))
        hint = (" (asynchronous distributed training is not implemented; use 'dist_sync')"
                if key.startswith("dist") else "")
        raise ValueError(f"kvstore.create: unknown kvstore type {name!r}; registered types: "
                         f"{known}{hint}")
    store = klass()
    if key in klass.__dict__.get("names", ()):  # one class, several names: remember which
        store._kv_type = key
    return store


def _as_list(value, what: str) -> list:
    """``value`` (an NDArray or a list/tuple of them) as a list, checked."""
    arrays = [value] if isinstance(value, NDArray) else list(value) \
        if isinstance(value, (list, tuple)) else None
    if arrays is None:
        raise TypeError(f"kvstore: {what} must be an NDArray or a list of NDArrays, got "
                        f"{type(value).__name__}")
    for i, a in enumerate(arrays):
        if not isinstance(a, NDArray):
            raise TypeError(f"kvstore: {what}[{i}] must be an NDArray, got "
                            f"{type(a).__name__}")
    return arrays


def _check_key(key):
    if isinstance(key, bool) or not isinstance(key, (int, str)):
        raise TypeError(f"kvstore: a key must be an int or a str, got {type(key).__name__} "
                        f"{key!r}")
    return key


def key_value_pairs(key, value, what: str = "value", allow_none: bool = False) -> list:
    """``[(key, [arrays])]`` from MXNet's key/value argument forms.

    A single key takes an NDArray or a list of NDArrays (one per device). A list of
    keys takes a list with one entry per key, each an NDArray or a list of NDArrays.

    Args:
        key: an int/str key or a list of them.
        value: the value(s) as described.
        what: the argument's name, for error messages.
        allow_none: return ``[(key, None)]`` entries when ``value`` is None.
    """
    if isinstance(key, (list, tuple)):
        keys = [_check_key(k) for k in key]
        if value is None and allow_none:
            return [(k, None) for k in keys]
        if not isinstance(value, (list, tuple)) or len(value) != len(keys):
            got = len(value) if isinstance(value, (list, tuple)) else type(value).__name__
            raise ValueError(f"kvstore: {len(keys)} keys need {len(keys)} {what}s (one per "
                             f"key), got {got}")
        return [(k, _as_list(v, f"{what}[{i}]")) for i, (k, v) in enumerate(zip(keys, value))]
    key = _check_key(key)
    if value is None and allow_none:
        return [(key, None)]
    return [(key, _as_list(value, what))]


def write_bytes_atomic(fname: str, data: bytes) -> None:
    """Write ``data`` to ``fname`` atomically: a temporary file in the same directory,
    flushed and synced, then renamed over ``fname`` (``core.serialization``'s writer).

    Args:
        fname: the file.
        data: the bytes (e.g. ``Updater.get_states()``).
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"write_bytes_atomic: data must be bytes, got {type(data).__name__}")
    serialization.atomic_write(fname, lambda f: f.write(data))
