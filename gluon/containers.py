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
from .utils import _indent

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


def _repr_children(self) -> str:
    modstr = "\n".join(f"  ({key}): {_indent(repr(block), 2)}"
                       for key, block in self._children.items())
    return f"{type(self).__name__}(\n{modstr}\n)"


class Sequential(Block):
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

    def __init__(self, prefix: str | None = None, params=None):
        super().__init__(prefix=prefix, params=params)

    def add(self, *blocks: Block) -> None:
        """Append blocks (in order)."""
        for block in blocks:
            self.register_child(block)

    def forward(self, x, *args):
        return _chain(self._children.values(), x, args)

    __repr__ = _repr_children

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

    def hybridize(self, active: bool = True, **kwargs) -> None:
        """Hybridize the children (see :meth:`HybridBlock.hybridize`)."""
        if self._children and all(isinstance(c, HybridBlock)
                                  for c in self._children.values()):
            warnings.warn(f"All children of this Sequential layer '{self.prefix}' are "
                          "HybridBlocks. Consider using HybridSequential for the best "
                          "performance.", stacklevel=2)
        super().hybridize(active, **kwargs)


class HybridSequential(HybridBlock):
    """HybridBlocks run one after the other.

    Args:
        prefix: see :class:`Block`.
        params: see :class:`Block`.
    """

    def __init__(self, prefix: str | None = None, params=None):
        super().__init__(prefix=prefix, params=params)

    def add(self, *blocks: HybridBlock) -> None:
        """Append HybridBlocks (in order)."""
        for block in blocks:
            self.register_child(block)

    def hybrid_forward(self, F, x, *args):
        return _chain(self._children.values(), x, args)

    __repr__ = _repr_children

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


def _lookup(namespace, function: str):
    fn = getattr(namespace, function, None)
    if fn is None or not callable(fn):
        raise ValueError(f"Function name {function} is not found in ndarray (core.nd).")
    return fn


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
        if isinstance(function, str):
            self._func_impl = _lookup(nd, function)
            self._func_name = function
        elif callable(function):
            self._func_impl = function
            self._func_name = getattr(function, "__name__", type(function).__name__)
        else:
            raise ValueError(  # noqa: TRY004 - MXNet raises ValueError here
                f"Unrecognized function in lambda: {function} of type {type(function)}")

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
        if isinstance(function, str):
            _lookup(nd, function)
            name = function
            self._func = lambda F, *args: getattr(F, name)(*args)
            self._func_name = function
        elif callable(function):
            self._func = function
            self._func_name = getattr(function, "__name__", type(function).__name__)
        else:
            raise ValueError(  # noqa: TRY004 - MXNet raises ValueError here
                f"Unrecognized function in lambda: {function} of type {type(function)}")

    def hybrid_forward(self, F, x, *args):
        return self._func(F, x, *args)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._func_name})"
