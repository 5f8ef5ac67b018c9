"""Automatic node names for Symbols (MXNet 1.x's ``mxnet.name``): ``NameManager`` and
``Prefix``.

A node created without ``name=`` is named ``"<hint><k>"`` by the current manager
(``relu0``, ``relu1``, ...); ``with NameManager():`` starts fresh counters for the
block, ``with Prefix("net_"):`` also puts ``net_`` before every name (explicit names
too, as in MXNet). ``core.sym.NameManager`` is this class.

Example:
    >>> from core import sym
    >>> from core.name import Prefix
    >>> with Prefix("net_"):
    ...     y = sym.relu(sym.var("x"))
    >>> y.name
    'net_relu0'
"""
from __future__ import annotations

import threading

__all__ = ["NameManager", "Prefix"]


class NameManager:
    """Gives nodes without a ``name=`` the name ``"<hint><k>"`` (MXNet's ``mx.name``).

    ``with NameManager():`` starts fresh counters for the block.

    Example:
        >>> with NameManager():
        ...     NameManager.current().get(None, "relu"), NameManager.current().get(None, "relu")
        ('relu0', 'relu1')
    """

    _tls = threading.local()

    def __init__(self):
        self._counter: dict[str, int] = {}
        self._old = None

    def get(self, name: str | None, hint: str) -> str:
        """``name`` when given, else ``hint`` and its next count.

        Args:
            name: the name asked for, or None.
            hint: the stem of an automatic name (the operator's name in lower case).

        Returns:
            The node's name.
        """
        if name:
            return name
        k = self._counter.get(hint, 0)
        self._counter[hint] = k + 1
        return f"{hint}{k}"

    def __enter__(self):
        self._old = NameManager.current()
        NameManager._tls.current = self
        return self

    def __exit__(self, *exc):
        NameManager._tls.current = self._old

    @staticmethod
    def current() -> NameManager:
        """The manager in effect in this thread (a default one when none was entered)."""
        cur = getattr(NameManager._tls, "current", None)
        if cur is None:
            cur = NameManager._tls.current = NameManager()
        return cur


class Prefix(NameManager):
    """A :class:`NameManager` that puts ``prefix`` before every name it gives.

    Args:
        prefix: the text put before each name.

    Example:
        >>> with Prefix("mynet_"):
        ...     NameManager.current().get(None, "fc"), NameManager.current().get("out", "fc")
        ('mynet_fc0', 'mynet_out')
    """

    def __init__(self, prefix: str):
        super().__init__()
        self._prefix = prefix

    def get(self, name, hint):
        return self._prefix + super().get(name, hint)
