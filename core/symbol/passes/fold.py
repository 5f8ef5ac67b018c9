"""Constant folding: compute once what depends on no graph input.

An operator node whose inputs are all constants or literals (so no variable is
reachable from it) is run once, through the same dispatcher and kernels as
:func:`~core.symbol.graph.evaluate`, and replaced by constant nodes holding its
outputs (one per output; ``value`` is the raw array, ``avals`` and ``ctx`` set).
Folding proceeds inputs first, so a whole constant subgraph collapses. Results are
bitwise equal to an unoptimized run on the same context.

Not folded:

- random operators (a graph draws anew on every run);
- operators with auxiliary-state updates, and nodes with a :data:`TRAIN` attribute
  (their result depends on the executor's mode);
- ``empty``/``empty_like`` (their values are arbitrary: nothing to compute);
- nodes whose outputs hold more than :data:`MAX_FOLD_ELEMENTS` elements in all: a
  folded constant stays in memory for the graph's lifetime, while an operator's
  result lives only while it is needed (``zeros((4096, 4096))`` stays an operator);
- nodes whose context is unknown: a node (or constant input) without ``ctx`` runs
  on the context the graph is evaluated on, so it is folded only when :func:`run`
  is given that context (``ctx=``); folding on another device could differ in the
  last bits;
- nodes whose operator fails on these inputs: the error is left to the run.

Stats (``result.pass_stats``): ``fold_folded`` (operator nodes replaced) and
``fold_skipped_large``.

Example:
    >>> from core.ops.registry import REGISTRY
    >>> from core.symbol import Graph, Node, Entry
    >>> from core.symbol.passes import fold
    >>> from core.context import cpu
    >>> ones = Node(REGISTRY["ones"], "ones0", (), {"shape": (2,), "dtype": "float32"},
    ...             ctx=cpu())
    >>> x = Node(None, "x")
    >>> y = Node(REGISTRY["add"], "add0", (Entry(x, 0), Entry(ones, 0)), ctx=cpu())
    >>> g = fold.run(Graph([Entry(y, 0)]))
    >>> [n.op_name for n in g.topo()], g.pass_stats["fold_folded"]
    (['null', 'null', 'add'], 1)
"""
from __future__ import annotations

import math

from ... import autograd
from ...context import Context
from ..graph import TRAIN, Entry, Graph, Node, is_random, map_graph
from .dce import finish, with_inputs

# Folded outputs larger than this (elements, all outputs together) stay operators.
MAX_FOLD_ELEMENTS = 1_000_000

_NEVER = frozenset({"empty", "empty_like"})


def _has_train(v) -> bool:
    if v is TRAIN:
        return True
    if isinstance(v, (tuple, list)):
        return any(_has_train(x) for x in v)
    if isinstance(v, dict):
        return any(_has_train(x) for x in v.values())
    return False


def _size(avals) -> int | None:
    try:
        return sum(math.prod(a.shape) for a in avals)
    except (TypeError, AttributeError):
        return None


def run(graph: Graph, ctx: Context | None = None) -> Graph:
    """Replace every foldable operator node by constants (see the module doc).

    Args:
        graph: the graph (not changed).
        ctx: the context the graph will run on; only needed for nodes and constants
            that have no ``ctx`` of their own (None: such nodes are not folded).

    Returns:
        A new graph (variables and untouched nodes are the same Node objects; outputs
        and updates in the same order); ``pass_stats`` holds ``fold_folded`` and
        ``fold_skipped_large``.
    """
    from ...ndarray import NDArray
    from ...ops.dispatch import invoke
    from ...ops.registry import Aval

    stats = {"fold_folded": 0, "fold_skipped_large": 0}

    def rebuild(n: Node, inputs):
        node = with_inputs(n, inputs) if n.op is not None else n
        if n.op is None or is_random(n.op) or n.op.updates or n.op.name in _NEVER:
            return node
        if any(_has_train(v) for v in n.attrs.values()):
            return node
        arrays = []
        for e in inputs:
            if not isinstance(e, Entry):
                arrays.append(e)
                continue
            src = e.node
            if not src.is_constant:
                return node
            v = src.value
            if not isinstance(v, NDArray):
                c = src.ctx if src.ctx is not None else ctx
                if c is None:
                    return node
                v = NDArray(v, ctx=c)
            arrays.append(v)
        run_ctx = n.ctx if n.ctx is not None else ctx
        if run_ctx is None and not any(isinstance(a, NDArray) for a in arrays):
            return node
        size = _size(n.avals) if n.avals is not None else None
        if size is not None and size > MAX_FOLD_ELEMENTS:
            stats["fold_skipped_large"] += 1
            return node
        try:
            with autograd.pause():
                out = invoke(n.op, arrays, n.attrs, run_ctx)
        except Exception:  # noqa: BLE001 - the run reports the error, as without folding
            return node
        outs = out if isinstance(out, tuple) else (out,)
        if sum(math.prod(o.shape) for o in outs) > MAX_FOLD_ELEMENTS:
            stats["fold_skipped_large"] += 1
            return node
        stats["fold_folded"] += 1
        entries = []
        for i, o in enumerate(outs):
            name = n.name if len(outs) == 1 else f"{n.name}_output{i}"
            c = Node(None, name, avals=[Aval(o.shape, o.dtype)], value=o._data, ctx=o.context)
            entries.append(Entry(c, 0))
        return entries

    return finish(map_graph(graph, rebuild), stats)
