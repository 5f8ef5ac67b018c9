"""gluon: the MXNet Gluon 1.x compatible Block API on top of ``core``.

``Block``/``HybridBlock`` (``block``), ``Parameter``/``ParameterDict``/``Constant``
(``parameter``), the containers ``Sequential``/``HybridSequential``/``Lambda``/
``HybridLambda`` (``containers``, re-exported by ``gluon.nn``), initializers
(``init``, the same as ``core.initializer``) and ``utils`` (``split_and_load``,
``clip_global_norm``). The layer, loss, trainer, data and model-zoo submodules
(``gluon.nn``, ``gluon.rnn``, ``gluon.loss``, ``gluon.Trainer``, ``gluon.data``,
``gluon.model_zoo``, ``gluon.metric``, ``gluon.compat``, ``gluon.contrib``) are imported on first
access, which keeps ``import gluon`` light. ``SymbolBlock``
(``symbol_block``) runs a ``core.sym`` Symbol, or a graph written by
``HybridBlock.export``, as a block.

Example:
    >>> import gluon
    >>> from core import nd
    >>> net = gluon.HybridSequential(prefix="net_")
    >>> with net.name_scope():
    ...     net.add(gluon.HybridLambda("relu"))
    >>> net(nd.array([-1.0, 1.0])).asnumpy().tolist()
    [0.0, 1.0]
"""
import importlib

from . import block, containers, init, parameter, utils
from .block import Block, HybridBlock
from .containers import HybridLambda, HybridSequential, Lambda, Sequential
from .parameter import Constant, DeferredInitializationError, Parameter, ParameterDict
from .symbol_block import SymbolBlock

__all__ = [
    "Block",
    "Constant",
    "DeferredInitializationError",
    "HybridBlock",
    "HybridLambda",
    "HybridSequential",
    "Lambda",
    "Parameter",
    "ParameterDict",
    "Sequential",
    "SymbolBlock",
    "block",
    "containers",
    "init",
    "parameter",
    "utils",
]

_LAZY_MODULES = ("nn", "rnn", "loss", "data", "model_zoo", "metric", "trainer", "compat",
                 "contrib")


def __getattr__(name: str):
    module = "trainer" if name == "Trainer" else name
    if module in _LAZY_MODULES:
        mod = importlib.import_module(f"{__name__}.{module}")
        return mod.Trainer if name == "Trainer" else mod
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
