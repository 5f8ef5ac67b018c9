"""Backward mirroring: recompute cheap forward values in the backward phase.

A training program keeps every forward value the backward phase reads. Some of those
are cheap to recompute from values that are kept anyway: the output of
``relu(BatchNorm(conv))`` can be rebuilt from the convolution's output (which
BatchNorm's gradient needs in any case). :func:`run` duplicates such cheap chains
into the backward phase (MXNet's ``MXNET_BACKWARD_DO_MIRROR``), where the executor
computes them just before use, so the forward phase no longer keeps their outputs.

A chain is mirrored only when it lowers what is kept: every value it starts from
must be kept already (or be a parameter), so recomputation never adds a saved value.
Random operators are never recomputed (a new draw would differ). Results are
unchanged: the same kernels run on the same inputs.

Set the environment variable ``KBACKEND_BACKWARD_MIRROR=0`` to turn it off.
"""
from __future__ import annotations

import os

from .graph import Entry, Graph, Node, is_random, reachable

MAX_CHAIN = 6  # the most nodes one mirrored value may recompute
# Values smaller than this are kept: recomputing them saves too little memory to pay
# for the extra kernel calls.
MIN_BYTES = 64 * 1024


def enabled() -> bool:
    return os.environ.get("KBACKEND_BACKWARD_MIRROR", "1") not in ("0", "false", "False")


def _size(e: Entry) -> int:
    a = e.node.avals[e.index] if e.node.avals is not None else None
    if a is None:
        return 0
    n = a.dtype.itemsize
    for d in a.shape:
        n *= d
    return n


def run(graph: Graph, n_forward_outputs: int) -> Graph:
    """Mirror cheap forward chains into the backward phase of a joint graph.

    Args:
        graph: a joint forward-and-backward graph (outputs: the forward outputs, then
            gradients), with avals.
        n_forward_outputs: how many leading outputs are forward outputs.

    Returns:
        The graph with backward consumers of mirrored values reading recomputed copies
        (the same graph when nothing is worth mirroring). ``pass_stats`` on the result
        says how many values were mirrored and how many bytes they held.
    """
    topo = graph.topo()
    fwd = reachable([e.node for e in graph.outputs[:n_forward_outputs]]
                    + [e.node for e in graph.updates.values()] + list(graph.updates))
    saved: dict[tuple[int, int], Entry] = {}
    for n in topo:
        if n.id in fwd:
            continue
        for e in n.inputs:
            if isinstance(e, Entry) and e.node.id in fwd and e.node.op is not None:
                saved[(e.node.id, e.index)] = e
    keep: set[tuple[int, int]] = set()
    plans: dict[tuple[int, int], list[Node]] = {}
    order = {n.id: i for i, n in enumerate(topo)}
    for key in sorted(saved, key=lambda k: (order[k[0]], k[1])):
        e = saved[key]
        if _size(e) < MIN_BYTES:
            keep.add(key)
            continue
        chain = _closure(e, fwd, saved, keep, plans)
        if chain is None:
            keep.add(key)
        else:
            plans[key] = chain
    if not plans:
        return graph
    return _rewrite(graph, topo, fwd, plans, saved)


def _closure(e: Entry, fwd, saved, keep, plans):
    """The nodes to recompute ``e`` from kept values, or None when not worth it."""
    n = e.node
    if not _cheap(n):
        return None
    nodes: list[Node] = []
    seen: set[int] = set()
    stack = [n]
    while stack:
        m = stack.pop()
        if m.id in seen:
            continue
        seen.add(m.id)
        nodes.append(m)
        if len(nodes) > MAX_CHAIN:
            return None
        for x in m.inputs:
            if not isinstance(x, Entry) or x.node.op is None:
                continue  # literals, parameters and constants are always at hand
            k = (x.node.id, x.index)
            if k in keep:
                continue
            if k in plans or not (x.node.id in fwd and _cheap(x.node)):
                return None  # would need a value that is not kept
            stack.append(x.node)
    return nodes


def _cheap(n: Node) -> bool:
    """Whether ``n``'s operator is cheap enough to run twice (``defop(..., recompute=True)``:
    elementwise work, BatchNorm's two passes) and draws no random numbers."""
    return n.op is not None and bool(n.op.recompute) and not is_random(n.op)


def _rewrite(graph: Graph, topo, fwd, plans, saved) -> Graph:
    dup: dict[int, Node] = {}
    order = {n.id: i for i, n in enumerate(topo)}

    def copy_of(m: Node) -> Node:
        c = dup.get(m.id)
        if c is None:
            c = Node(m.op, f"{m.name}_mirror", (), m.attrs, m.num_outputs, m.avals,
                     m.user_attrs, None, m.ctx)
            dup[m.id] = c
        return c

    mirrored_ids: set[int] = set()
    for chain in plans.values():
        for m in chain:
            mirrored_ids.add(m.id)
    for m in sorted((n for n in topo if n.id in mirrored_ids), key=lambda n: order[n.id]):
        c = copy_of(m)
        c.inputs = tuple(Entry(copy_of(x.node), x.index)
                         if isinstance(x, Entry) and x.node.id in mirrored_ids else x
                         for x in m.inputs)
    nbytes = sum(_size(saved[k]) for k in plans)

    # Backward nodes read the copies of mirrored values (and of their chains).
    replaced: dict[int, Node] = {}

    def remap(x):
        if isinstance(x, Entry) and (x.node.id, x.index) in plans:
            return Entry(dup[x.node.id], x.index)
        return x

    for n in topo:
        if n.id in fwd or n.op is None:
            continue
        new_inputs = tuple(remap(x) for x in n.inputs)
        if new_inputs != n.inputs:
            replaced[n.id] = n
            n_copy = Node(n.op, n.name, new_inputs, n.attrs, n.num_outputs, n.avals,
                          n.user_attrs, n.value, n.ctx)
            replaced[n.id] = n_copy
    from .graph import map_graph

    def rebuild(n: Node, inputs):
        src = replaced.get(n.id, n)
        ins = tuple(remap(x) if n.id not in fwd else x for x in inputs)
        if ins == n.inputs and src is n:
            return n
        return Node(n.op, n.name, ins, n.attrs, n.num_outputs, n.avals, n.user_attrs,
                    n.value, n.ctx)

    out = map_graph(graph, rebuild)
    out.pass_stats = {"mirrored_values": len(plans), "mirrored_bytes": nbytes}
    return out
