"""Block names (MXNet Gluon 1.9): the :class:`NameManager` counters of top-level blocks
(``dense0``, ``dense1``, ...) and the ``name_scope()`` of a block, in which its children
get its prefix and counters of their own."""
from __future__ import annotations

import threading

from .parameter import ParameterDict

__all__ = ["NameManager"]


class NameManager:
    """Counters for the names of top-level blocks (``dense0``, ``dense1``, ...).

    Blocks created outside any ``name_scope()`` are numbered by the current manager;
    entering a new one (``with NameManager():``) starts the counts again, e.g. to build
    a model twice with identical parameter names.

    Example:
        >>> from gluon.block import NameManager
        >>> from gluon import Block
        >>> with NameManager():
        ...     a, b = Block(), Block()
        >>> a.name, b.name
        ('block0', 'block1')
    """

    _local = threading.local()

    def __init__(self):
        self._counter: dict = {}
        self._old = None

    @classmethod
    def current(cls) -> NameManager:
        cur = getattr(cls._local, "value", None)
        if cur is None:
            cur = cls._local.value = NameManager()
        return cur

    def get(self, hint: str) -> str:
        """The next name for ``hint``: ``hint`` followed by its count."""
        count = self._counter.get(hint, 0)
        self._counter[hint] = count + 1
        return f"{hint}{count}"

    def __enter__(self):
        self._old = NameManager.current()
        NameManager._local.value = self
        return self

    def __exit__(self, *exc) -> None:
        NameManager._local.value = self._old


class _BlockScope:
    """The naming scope of a block: its children get its prefix and their own counters."""

    _current = threading.local()

    def __init__(self, block):
        self._block = block
        self._counter: dict = {}
        self._old_scope = None

    @staticmethod
    def create(prefix, params, hint):
        """The prefix and ParameterDict of a new block."""
        current = getattr(_BlockScope._current, "value", None)
        if current is None:
            if prefix is None:
                prefix = NameManager.current().get(hint) + "_"
            params = ParameterDict(prefix) if params is None else \
                ParameterDict(params.prefix, params)
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = f"{hint}{count}_"
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self):
        if self._block._empty_prefix:
            return self
        self._old_scope = getattr(_BlockScope._current, "value", None)
        _BlockScope._current.value = self
        return self

    def __exit__(self, *exc) -> None:
        if self._block._empty_prefix:
            return
        _BlockScope._current.value = self._old_scope
        self._old_scope = None
