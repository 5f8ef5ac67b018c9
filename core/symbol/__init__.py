"""core.symbol: the symbolic graph mode (MXNet's ``mx.symbol``).

The user-facing API is MXNet 1.x's: ``core.sym.var``, every operator of ``core.nd``
callable on Symbols (``core.sym.FullyConnected(...)``), ``Group``, ``load``,
``Symbol.bind``/``simple_bind`` giving an :class:`~core.symbol.executor.Executor`.
``core.symbol.<name>`` reaches the same functions as ``core.sym.<name>``.

Underneath, one graph IR serves Symbols, ``HybridBlock.hybridize`` and kbackend's
``jit_compile``:

- :mod:`.graph`: the IR (``Node``, ``Entry``, ``Graph``) and the reference interpreter
  ``evaluate``;
- :mod:`.trace`: recording Python code that calls operators into a graph;
- :mod:`.symbol`, :mod:`.shape_infer`, :mod:`.json_io`: Symbols, shape/type inference,
  MXNet's JSON format;
- :mod:`.autodiff`: gradient graphs from the operators' VJP rules;
- :mod:`.passes`: the optimizer (simplification, constant folding, common
  subexpressions, dead code, elementwise fusion);
- :mod:`.mirror`, :mod:`.memory`: recomputation of cheap values in backward, liveness,
  early release and in-place execution;
- :mod:`.executor`, :mod:`.cached_op`: compiled programs and the imperative bridge.
"""
from .cached_op import CachedOp
from .executor import Executor
from .graph import TRAIN, Entry, Graph, Node, evaluate
from .symbol import Symbol
from .trace import Tracer

__all__ = ["TRAIN", "CachedOp", "Entry", "Executor", "Graph", "Node", "Symbol", "Tracer",
           "evaluate"]


def __getattr__(name: str):
    from .. import sym

    try:
        return getattr(sym, name)
    except AttributeError:
        raise AttributeError(f"module 'core.symbol' has no attribute {name!r}") from None
