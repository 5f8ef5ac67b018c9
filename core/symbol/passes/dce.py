"""Dead-code elimination: keep only the nodes that an output or an update needs.

A :class:`~core.symbol.graph.Graph` is given by its heads (outputs and update values),
and :meth:`Graph.topo` walks back from them, so nodes nothing needs (including
constants no operator reads any more) are never visited: rebuilding a graph from its
heads is dead-code elimination. Other passes leave orphans behind (a node merged by
CSE, an operator folded into a constant, a double transpose removed); those orphans
are no longer reachable from the heads, and this pass drops them from the graph's
node list while keeping every reachable node (the same :class:`Node` objects).

The pass also counts the unused outputs of multi-output nodes (``dce_dead_outputs``):
an operator must still compute them, but their buffers can be freed at once.

Stats (``result.pass_stats``): ``dce_dead_outputs``. How many nodes a pass sequence
removed is counted by :func:`core.symbol.passes.optimize` (nodes before and after).

Example:
    >>> from core import nd
    >>> from core.symbol import Tracer
    >>> from core.symbol.passes import dce
    >>> with Tracer() as t:
    ...     x = t.variable("x", (2, 3), "float32")
    ...     unused = nd.exp(x)
    ...     y = nd.relu(x)
    >>> g = dce.run(t.graph([y]))
    >>> [n.op_name for n in g.topo()]
    ['null', 'relu']
"""
from __future__ import annotations

from ..graph import Entry, Graph, Node


def with_inputs(node: Node, inputs: tuple) -> Node:
    """``node`` itself when ``inputs`` are its inputs (same entries and literals),
    else a copy of it reading ``inputs`` (the original is never changed)."""
    old = node.inputs
    if len(old) == len(inputs) and all(_same_slot(a, b) for a, b in zip(old, inputs)):
        return node
    return Node(node.op, node.name, inputs, node.attrs, node.num_outputs, node.avals,
                node.user_attrs, node.value, node.ctx)


def _same_slot(a, b) -> bool:
    if isinstance(a, Entry) or isinstance(b, Entry):
        return (isinstance(a, Entry) and isinstance(b, Entry) and a.node is b.node
                and a.index == b.index)
    return a is b


def finish(graph: Graph, stats: dict) -> Graph:
    """``graph`` (a new Graph object, never the pass's input) with ``pass_stats`` set."""
    graph.pass_stats = dict(stats)
    return graph


def run(graph: Graph) -> Graph:
    """The graph restricted to the nodes its outputs and updates need.

    Args:
        graph: the graph (not changed).

    Returns:
        A new :class:`Graph` over the same reachable nodes (the same Node objects),
        outputs and updates in the same order; ``pass_stats`` holds
        ``dce_dead_outputs``.
    """
    order = graph.topo()
    used = {(e.node.id, e.index) for e in graph.heads()}
    for n in order:
        used.update((e.node.id, e.index) for e in n.input_entries())
    dead_outputs = sum(1 for n in order if n.num_outputs > 1
                       for i in range(n.num_outputs) if (n.id, i) not in used)
    return finish(Graph(graph.outputs, graph.updates), {"dce_dead_outputs": dead_outputs})
