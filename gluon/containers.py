"""Container and wrapper blocks: ``Sequential``, ``HybridSequential``, ``Lambda``,
``HybridLambda`` (MXNet Gluon 1.9's ``gluon.nn`` containers; ``gluon.nn`` re-exports
them).

Example:
    >>> from core import nd
    >>> from gluon.containers import HybridSequential, HybridLambda
    >>> net = HybridSequential(prefix="net_")
    >>> with net.name_scope():
    ...     net.add(HybridLambda("relu"), HybridLambda(lambda F, x: x * 2))
    >>> net(nd.array([-1.0, 2.0])).asnumpy().tolist()
    [0.0, 4.0]
    >>> len(net), type(net[1:]).__name__, net[0].name
    (2, 'HybridSequential', 'net_hybridlambda0')
"""
from __future__ import annotations

import warnings

from core import nd

from .block import Block, HybridBlock

__all__ = ["HybridLambda", "HybridSequential", "Lambda", "Sequential"]


def _chain(blocks, x, args):
    """Feed ``x`` through ``blocks``; a block returning a tuple passes all of it on."""
    for block in blocks:
        x = block(x, *args)
        args = []
        if isinstance(x, (tuple, list)):
            args = x[1:]
            x = x[0]
    if args:
        x = (x, *args)
    return x


class _Sequence:
    """What :class:`Sequential` and :class:`HybridSequential` share: ``add``, indexing
    and slicing, ``len``."""

    def __init__(self, prefix: str | None = None, params=None):
        super().__init__(prefix=prefix, params=params)

    def add(self, *blocks: Block) -> None:
        """Append blocks (in order; HybridBlocks only in a HybridSequential)."""
        for block in blocks:
            self.register_child(block)

    def __getitem__(self, key):
        layers = list(self._children.values())[key]
        if isinstance(layers, list):
            net = type(self)(prefix=self._prefix)
            with net.name_scope():
                net.add(*layers)
            return net
        return layers

    def __len__(self) -> int:
        return len(self._children)


class Sequential(_Sequence, Block):
    """Blocks run one after the other.

    Args:
        prefix: see :class:`Block`.
        params: see :class:`Block`.

    Example:
        >>> from core import nd
        >>> from gluon.containers import Sequential, Lambda
        >>> net = Sequential()
        >>> net.add(Lambda("relu"), Lambda(lambda x: x + 1))
        >>> net(nd.array([-2.0, 2.0])).asnumpy().tolist()
        [1.0, 3.0]
    """

    def forward(self, x, *args):
        return _chain(self._children.values(), x, args)

    def hybridize(self, active: bool = True, **kwargs) -> None:
        """Hybridize the children (see :meth:`HybridBlock.hybridize`)."""
        if self._children and all(isinstance(c, HybridBlock)
                                  for c in self._children.values()):
            warnings.warn(f"All children of this Sequential layer '{self.prefix}' are "
                          "HybridBlocks. Consider using HybridSequential for the best "
                          "performance.", stacklevel=2)
        super().hybridize(active, **kwargs)


class HybridSequential(_Sequence, HybridBlock):
    """HybridBlocks run one after the other.

    Args:
        prefix: see :class:`Block`.
        params: see :class:`Block`.
    """

    def hybrid_forward(self, F, x, *args):
        return _chain(self._children.values(), x, args)


def _lookup(namespace, function: str):
    fn = getattr(namespace, function, None)
    if fn is None or not callable(fn):
        raise ValueError(f"Function name {function} is not found in ndarray (core.nd).")
    return fn


def _function_name(function) -> str:
    """The name shown by the repr of a (Hybrid)Lambda wrapping ``function``: a
    ``core.nd`` function's name (checked) or a callable.

    Raises:
        ValueError: an unknown function name, or neither a name nor a callable.
    """
    if isinstance(function, str):
        _lookup(nd, function)
        return function
    if callable(function):
        return getattr(function, "__name__", type(function).__name__)
    raise ValueError(  # MXNet raises ValueError here
        f"Unrecognized function in lambda: {function} of type {type(function)}")


class Lambda(Block):
    """A Block wrapping a function of NDArrays.

    Args:
        function: a callable ``f(*inputs)``, or the name of a ``core.nd`` function
            (``'tanh'``).
        prefix: see :class:`Block`.

    Example:
        >>> from core import nd
        >>> from gluon.containers import Lambda
        >>> Lambda("tanh")
        Lambda(tanh)
        >>> Lambda(lambda x: x * 3)(nd.ones((2,))).asnumpy().tolist()
        [3.0, 3.0]
    """

    def __init__(self, function, prefix: str | None = None):
        super().__init__(prefix=prefix)
        self._func_name = _function_name(function)
        self._func_impl = getattr(nd, function) if isinstance(function, str) else function

    def forward(self, *args):
        return self._func_impl(*args)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._func_name})"


class HybridLambda(HybridBlock):
    """A HybridBlock wrapping a function ``f(F, *inputs)``.

    Args:
        function: a callable taking the operator namespace ``F`` first, or the name of
            an operator (``'relu'``), called as ``F.<name>(*inputs)``.
        prefix: see :class:`Block`.

    Example:
        >>> from core import nd
        >>> from gluon.containers import HybridLambda
        >>> HybridLambda(lambda F, x: F.relu(x))(nd.array([-1.0, 1.0])).asnumpy().tolist()
        [0.0, 1.0]
    """

    def __init__(self, function, prefix: str | None = None):
        super().__init__(prefix=prefix)
        self._func_name = _function_name(function)
        if isinstance(function, str):
            self._func = lambda F, *args: getattr(F, function)(*args)
        else:
            self._func = function

    def hybrid_forward(self, F, x, *args):
        return self._func(F, x, *args)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._func_name})"
