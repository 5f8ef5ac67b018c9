"""core.symbol: the symbolic graph mode (MXNet's ``mx.symbol``), Symbol's one home.

The user-facing API is MXNet 1.x's: ``var``, every operator of ``core.nd`` callable on
Symbols (``core.symbol.FullyConnected(...)``), ``Group``, ``load``, ``load_json``,
``AttrScope``, ``NameManager``/``Prefix``, ``Symbol.bind``/``simple_bind`` giving an
:class:`~core.symbol.executor.Executor`. ``core.sym`` is a thin alias of this package
(``core.sym.<name>`` is ``core.symbol.<name>``).

Underneath, one graph IR serves Symbols, ``HybridBlock.hybridize`` and kbackend's
``jit_compile``:

- :mod:`.graph`: the IR (``Node``, ``Entry``, ``Graph``) and the reference interpreter
  ``evaluate``;
- :mod:`.trace`: recording Python code that calls operators into a graph;
- :mod:`.symbol`, :mod:`.constructors`, :mod:`.compose`: Symbols, their constructors
  (variables, groups, loading, adding a node) and the operator functions on Symbols;
- :mod:`.shape_infer`, :mod:`.json_io`: shape/type inference, MXNet's JSON format;
- :mod:`.autodiff`: gradient graphs from the operators' VJP rules;
- :mod:`.passes`: the optimizer (simplification, constant folding, common
  subexpressions, dead code, elementwise fusion);
- :mod:`.mirror`, :mod:`.memory`: recomputation of cheap values in backward, liveness,
  early release and in-place execution;
- :mod:`.executor`, :mod:`.cached_op`: compiled programs and the imperative bridge.

The operator functions are made on first use (after every operator is registered).

Example:
    >>> from core import symbol
    >>> x = symbol.var("data")
    >>> net = symbol.FullyConnected(x, num_hidden=3, name="fc1")
    >>> net.list_arguments()
    ['data', 'fc1_weight', 'fc1_bias']
"""
from .cached_op import CachedOp
from .constructors import (
    AttrScope,
    Group,
    NameManager,
    Prefix,
    Variable,
    load,
    load_json,
    var,
)
from .executor import Executor
from .graph import TRAIN, Entry, Graph, Node, evaluate
from .symbol import NotImplementedForSymbol, Symbol
from .trace import Tracer

__all__ = ["TRAIN", "AttrScope", "CachedOp", "Entry", "Executor", "Graph", "Group",
           "NameManager", "Node", "NotImplementedForSymbol", "Prefix", "Symbol", "Tracer",
           "Variable", "evaluate", "load", "load_json", "var"]

_SUBMODULES = ("contrib", "linalg", "random")
_functions: dict | None = None


def operator_functions() -> dict:
    """``{name: function}``: every operator on Symbols under its ``core.nd`` name, with
    MXNet's overrides (``BatchNorm``, ``concat``, ``BlockGrad``/``stop_gradient``, ...);
    made once, when first asked for."""
    global _functions
    if _functions is None:
        import importlib

        importlib.import_module("core.ops")  # registers the operators
        compose = importlib.import_module(f"{__name__}.compose")
        fns = compose.namespace("")
        fns.update(BlockGrad=compose.BlockGrad, stop_gradient=compose.BlockGrad,
                   concat=compose.concat, Concat=compose.concat, stack=compose.stack)
        # the constructors win (``var`` is MXNet's variable, not the variance operator)
        _functions = {k: v for k, v in fns.items() if k not in __all__}
    return _functions


def __getattr__(name: str):
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    fn = operator_functions().get(name) if not name.startswith("__") else None
    if fn is None:
        raise AttributeError(f"module 'core.symbol' has no attribute {name!r}")
    return fn


def __dir__():
    return sorted(set(globals()) | set(operator_functions()) | set(_SUBMODULES))
