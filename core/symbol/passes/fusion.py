"""Elementwise fusion: groups of elementwise nodes become one ``_fused_elemwise`` node.

A group is a set of fusable nodes (see :func:`core.ops.fused.can_fuse`: unary and
binary elementwise operators, broadcasting included, with scalar literals; no random
operator, no :data:`~core.symbol.graph.TRAIN` attribute, one output each) with one
root whose output leaves the group; every other member's output is read only inside
the group and is neither a graph output nor an update. Groups are grown greedily from
the roots (last node first) towards the inputs, so they are maximal for this rule and
never create a cycle: a member's value can only reach the outside through the root.
Each group of two or more operators becomes one node running the group's program (on
CPU in-place NumPy ufuncs with the unfused results bit for bit; on GPU one generated
CuPy kernel).

The pass is pure: nodes outside the groups are kept (or copied when their inputs
change), variables keep their identity and the outputs their order. The result carries
``pass_stats = {"fusion_groups": n, "fusion_ops": m}`` (groups made, operators fused).

Example:
    >>> from core import nd
    >>> from core.symbol.trace import Tracer
    >>> from core.symbol.passes import fusion
    >>> with Tracer() as t:
    ...     x = t.variable("x", (2, 3), "float32")
    ...     y = nd.relu(x * 2 + 1)
    >>> g = fusion.run(t.graph([y]))
    >>> [n.op_name for n in g.topo()], g.pass_stats
    (['null', '_fused_elemwise'], {'fusion_groups': 1, 'fusion_ops': 3})
"""
from __future__ import annotations

from ...ops.fused import can_fuse
from ...ops.registry import REGISTRY
from ..graph import TRAIN, Entry, Graph, Node, is_random, map_graph

_FUSED = "_fused_elemwise"


def _in_aval(e):
    if isinstance(e, Entry):
        avals = e.node.avals
        return avals[e.index] if avals is not None and e.index < len(avals) else None
    return e


def _fusable(n: Node) -> bool:
    if n.op is None or n.num_outputs != 1 or is_random(n.op) or n.avals is None:
        return False
    if n.op.name == _FUSED or any(v is TRAIN for v in n.attrs.values()):
        return False
    args = [_in_aval(e) for e in n.inputs]
    if any(a is None for a in args):
        return False
    return can_fuse(n.op.name, args, n.attrs)


def _groups(graph: Graph, topo: list[Node]) -> list[list[Node]]:
    """Maximal groups (members in topological order, root last) of two or more nodes."""
    consumers = graph.consumers()
    heads = {e.node.id for e in graph.heads()}
    fusable = {n.id for n in topo if _fusable(n)}
    order = {n.id: k for k, n in enumerate(topo)}
    grouped: set[int] = set()
    groups = []
    for root in reversed(topo):
        if root.id not in fusable or root.id in grouped:
            continue
        members = {root.id: root}
        work = [root]
        while work:
            m = work.pop()
            for e in m.input_entries():
                p = e.node
                if (p.id in members or p.id in grouped or p.id not in fusable
                        or p.id in heads or p.ctx != root.ctx):
                    continue
                if all(c.id in members for c, _pos in consumers.get(p.id, ())):
                    members[p.id] = p
                    work.append(p)
        if len(members) >= 2:
            grouped.update(members)
            groups.append(sorted(members.values(), key=lambda n: order[n.id]))
    return groups


def _program(members: list[Node]):
    """``(program, external input entries)`` of a group (members root last)."""
    index = {n.id: k for k, n in enumerate(members)}
    # Inputs in the order a depth-first walk from the root meets them, as Graph.topo()
    # does: the fused graph then lists its variables in the original order.
    externals: list[Entry] = []
    where: dict[tuple[int, int], int] = {}
    seen = {members[-1].id}
    stack = [iter(members[-1].input_entries())]
    while stack:
        e = next(stack[-1], None)
        if e is None:
            stack.pop()
        elif e.node.id not in index:
            where.setdefault((e.node.id, e.index), len(where))
        elif e.node.id not in seen:
            seen.add(e.node.id)
            stack.append(iter(e.node.input_entries()))
    steps = []
    for n in members:
        args = []
        for e in n.inputs:
            if not isinstance(e, Entry):
                args.append(e)
            elif e.node.id in index:
                args.append(("step", index[e.node.id]))
            else:
                args.append(("in", where[(e.node.id, e.index)]))
                externals.append(e)
        step = (n.op.name, tuple(args))
        if n.attrs:  # only Activation's act_type: can_fuse rejects other attributes
            step += (tuple(sorted(n.attrs.items())),)
        steps.append(step)
    firsts = {(e.node.id, e.index): e for e in externals}
    return tuple(steps), sorted(firsts.values(), key=lambda e: where[(e.node.id, e.index)])


def _same_inputs(old, new) -> bool:
    for a, b in zip(old, new):
        if a is b:
            continue
        if isinstance(a, Entry) and isinstance(b, Entry) and a.node is b.node \
                and a.index == b.index:
            continue
        return False
    return True


def run(graph: Graph) -> Graph:
    """Fuse the graph's elementwise groups (see the module doc).

    Args:
        graph: the graph; it is not modified.

    Returns:
        A new graph with one ``_fused_elemwise`` node per group and ``pass_stats``.
    """
    topo = graph.topo()
    groups = _groups(graph, topo)
    fused_op = REGISTRY[_FUSED]
    names = {n.name for n in topo}
    by_root = {}
    inner = set()
    counter = 0
    for members in groups:
        program, externals = _program(members)
        while f"fused_elemwise{counter}" in names:
            counter += 1
        name = f"fused_elemwise{counter}"
        names.add(name)
        root = members[-1]
        by_root[root.id] = (name, program, externals)
        inner.update(n.id for n in members[:-1])

    remap: dict[tuple[int, int], Entry] = {}

    def rebuild(n: Node, ins):
        for e, new in zip(n.inputs, ins):
            if isinstance(e, Entry):
                remap[(e.node.id, e.index)] = new
        hit = by_root.get(n.id)
        if hit is not None:
            name, program, externals = hit
            return Node(fused_op, name, [remap[(e.node.id, e.index)] for e in externals],
                        {"program": program, "outputs": len(program) - 1},
                        num_outputs=1, avals=n.avals, ctx=n.ctx)
        if n.id in inner or n.op is None or _same_inputs(n.inputs, ins):
            return n  # inner members end up unreachable
        return Node(n.op, n.name, ins, n.attrs, n.num_outputs, n.avals, n.user_attrs,
                    n.value, n.ctx)

    result = map_graph(graph, rebuild)
    result.pass_stats = {"fusion_groups": len(groups),
                         "fusion_ops": sum(len(m) for m in groups)}
    return result
