"""The graph optimizer: passes ``Graph -> Graph`` that never change results.

Each pass is a module with ``run(graph) -> Graph``: pure (the input graph and its
nodes are never changed), keeping the variable nodes (the same objects) and the order
of the outputs and updates, and recording what it did in ``result.pass_stats``.

- :mod:`.simplify`: exact algebraic rewrites (``x*1``, ``x+0``, double transpose,
  reshape of reshape, ...);
- :mod:`.fold`: constant folding of what depends on no input;
- :mod:`.cse`: common-subexpression elimination;
- :mod:`.dce`: dead-code elimination;
- :mod:`.fusion` (when present): elementwise fusion, run once at the end.

The memory planner (``core.symbol.memory``) is not a pass: the executor runs it on
the optimized graph.

Order: simplification first (it removes nodes that would otherwise be folded or
merged one by one), then folding (constants it creates may be equal: CSE merges
them), then CSE, then DCE. Each step can open new chances for an earlier one
(``x * (c - c + 1)`` only simplifies once the constant is folded), so the sequence
repeats until a round changes nothing, at most :data:`MAX_ROUNDS` times.

Example:
    >>> from core import nd
    >>> from core.symbol import Tracer
    >>> from core.symbol.passes import optimize
    >>> with Tracer() as t:
    ...     x = t.variable("x", (2, 3), "float32")
    ...     y = nd.exp(x * 1) + nd.exp(x)
    >>> g = optimize(t.graph([y]))
    >>> g.pass_stats["simplify_identity"], g.pass_stats["cse_merged"]
    (1, 1)
"""
from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

from ...context import Context
from ..graph import Graph
from . import cse, dce, fold, simplify

try:  # the elementwise fusion pass, when its module exists
    from . import fusion
except ModuleNotFoundError as _e:  # pragma: no cover - depends on the checkout
    if _e.name != f"{__name__}.fusion":
        raise
    fusion = None

# The passes repeated until nothing changes (each a module with ``run``).
DEFAULT_PASSES = [simplify, fold, cse, dce]
# Passes run once after the loop; the fusion pass goes here (it must see the final
# graph, and the other passes need not understand fused nodes).
FINAL_PASSES = [fusion] if fusion is not None else []
MAX_ROUNDS = 3

# Stats that describe the graph rather than count changes (the last value is kept).
_INFO_STATS = frozenset({"dce_dead_outputs", "fold_skipped_large"})


def _runner(p) -> Callable:
    fn = getattr(p, "run", p)
    if not callable(fn):
        raise TypeError(f"optimize: a pass must be a module with run(graph) or a function, "
                        f"got {p!r}")
    return fn


def _call(fn, graph: Graph, ctx) -> Graph:
    if ctx is not None:
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            params = {}
        if "ctx" in params:
            return fn(graph, ctx=ctx)
    return fn(graph)


def _add_stats(totals: dict, g: Graph) -> bool:
    """Add ``g.pass_stats`` into ``totals``; whether they count any change."""
    changed = False
    for k, v in getattr(g, "pass_stats", {}).items():
        if not isinstance(v, (int, float)):
            continue
        if k in _INFO_STATS:
            totals[k] = v
        else:
            totals[k] = totals.get(k, 0) + v
            changed = changed or bool(v)
    return changed


def optimize(graph: Graph, passes: Sequence | None = None,
             ctx: Context | None = None) -> Graph:
    """Run the optimizer passes on ``graph``.

    Args:
        graph: the graph (not changed).
        passes: the passes to repeat (modules with ``run(graph)`` or functions);
            default :data:`DEFAULT_PASSES` followed once by :data:`FINAL_PASSES`.
            An explicit list is repeated as given, with no final passes.
        ctx: the context the graph will run on; passes that accept ``ctx=`` get it
            (constant folding uses it for nodes without a context of their own).

    Returns:
        The optimized graph. Its ``pass_stats`` dict sums the passes' stats over the
        rounds and adds ``nodes_before``, ``nodes_after`` and ``rounds``.
    """
    loop = list(DEFAULT_PASSES if passes is None else passes)
    final = list(FINAL_PASSES) if passes is None else []
    totals: dict[str, int] = {"nodes_before": len(graph.topo())}
    g = graph
    rounds = 0
    for _ in range(MAX_ROUNDS):
        rounds += 1
        changed = False
        for p in loop:
            g = _call(_runner(p), g, ctx)
            changed = _add_stats(totals, g) or changed
        if not changed:
            break
    for p in final:
        g = _call(_runner(p), g, ctx)
        _add_stats(totals, g)
    if g is graph:
        g = Graph(graph.outputs, graph.updates)
    totals["nodes_after"] = len(g.topo())
    totals["rounds"] = rounds
    g.pass_stats = totals
    return g


__all__ = ["DEFAULT_PASSES", "FINAL_PASSES", "MAX_ROUNDS", "cse", "dce", "fold", "optimize",
           "simplify"]
