"""Gradient graphs, built from the same VJP rules the imperative autograd runs.

:func:`gradients` extends a forward graph with the backward computation: each
operator's ``vjp`` rule (written with core operators) is *traced* against stand-ins
for the forward values, so the backward pass becomes ordinary graph nodes that the
optimizer passes and the memory planner see. A rule that reads values (a few index
operators look at their integer indices) cannot be traced; it becomes one opaque node
that runs the rule imperatively at execution time, so every differentiable operator
works.
"""
from __future__ import annotations

from collections.abc import Sequence

from .. import autograd as _ag
from ..ndarray import AbstractValueError, NDArray
from ..ops.registry import Aval, OpDef
from .graph import TRAIN, Entry, Graph, Node, map_graph
from .trace import Tracer


def specialize(graph: Graph, is_train: bool) -> Graph:
    """``graph`` with every :data:`~core.symbol.graph.TRAIN` attribute set to ``is_train``."""

    def rebuild(n: Node, inputs):
        if n.op is None and inputs == n.inputs:
            return n
        attrs = {k: (is_train if v is TRAIN else v) for k, v in n.attrs.items()}
        return Node(n.op, n.name, inputs, attrs, n.num_outputs, n.avals, n.user_attrs,
                    n.value, n.ctx)

    return map_graph(graph, rebuild)


class _NodeView:
    """What a VJP rule reads as ``ctx.node`` (see ``core.autograd.Node``)."""

    __slots__ = ("attrs", "checks", "ctx", "freed", "in_data", "in_meta", "op", "out_data",
                 "out_meta", "out_refs", "parents")


class _TracedVjpContext:
    """``core.autograd.VjpContext`` for tracing: inputs and outputs are stand-ins."""

    __slots__ = ("_inputs", "_outputs", "create_graph", "node")

    def __init__(self, view, inputs, outputs):
        self.node = view
        self._inputs = inputs
        self._outputs = outputs
        self.create_graph = False

    attrs = property(lambda self: self.node.attrs)
    in_shapes = property(lambda self: tuple(m[0] if m is not None else None
                                            for m in self.node.in_meta))
    in_dtypes = property(lambda self: tuple(m[1] if m is not None else None
                                            for m in self.node.in_meta))
    out_shapes = property(lambda self: tuple(m[0] for m in self.node.out_meta))
    inputs = property(lambda self: self._inputs)
    outputs = property(lambda self: self._outputs)
    out = property(lambda self: self._outputs[0])


_NEEDED = (None, 0)  # any non-None value marks "this input needs a gradient"


def _aval(e: Entry):
    avals = e.node.avals
    if avals is None:
        raise ValueError(f"gradients: node {e.node.name!r} ({e.node.op_name}) has no inferred "
                         "shape; run shape inference before building gradients")
    return avals[e.index]


def _ctx_of(n: Node, default):
    return n.ctx if n.ctx is not None else default


def gradients(graph: Graph, wrt: Sequence[Node], ctx) -> tuple[Graph, list[Node]]:
    """The joint forward-and-backward graph of ``graph``.

    Args:
        graph: a forward graph whose nodes have avals (shapes and dtypes), without
            :data:`TRAIN` attributes (see :func:`specialize`).
        wrt: variable nodes of ``graph`` to differentiate with respect to.
        ctx: the context of nodes without one.

    Returns:
        ``(joint, head_vars)``: ``joint`` has the forward outputs followed by one
        gradient per ``wrt`` variable as outputs (and the forward updates); its new
        variables ``head_vars`` (one per forward output, named ``_head_grad<i>``) carry
        the gradients flowing into the outputs.
    """
    topo = graph.topo()
    wrt_ids = {v.id for v in wrt}
    needs: set[int] = set()
    for n in topo:
        if n.id in wrt_ids or n.op is not None and n.op.differentiable and any(
                isinstance(e, Entry) and e.node.id in needs for e in n.inputs):
            needs.add(n.id)
    grads: dict[tuple[int, int], list] = {}
    stand_ins: dict[tuple[int, int], NDArray] = {}
    head_vars: list[Node] = []
    with Tracer(prefix="_bwd_") as t:

        def stand(e: Entry) -> NDArray:
            key = (e.node.id, e.index)
            x = stand_ins.get(key)
            if x is None:
                x = t.stand_in(e, _aval(e), _ctx_of(e.node, ctx))
                stand_ins[key] = x
            return x

        for i, e in enumerate(graph.outputs):
            a = _aval(e)
            hv = t.variable(f"_head_grad{i}", a.shape, a.dtype, _ctx_of(e.node, ctx))
            head_vars.append(t.entry_of(hv).node)
            if e.node.id in needs:
                grads.setdefault((e.node.id, e.index), []).append(hv)
        for n in reversed(topo):
            if n.op is None or n.id not in needs:
                continue
            gs = [_sum(grads.pop((n.id, i), None)) for i in range(n.num_outputs)]
            if all(g is None for g in gs):
                continue
            in_grads = _node_vjp(t, n, gs, stand, needs, ctx)
            for e, gx in zip(n.inputs, in_grads):
                if isinstance(e, Entry) and e.node.id in needs and gx is not None:
                    grads.setdefault((e.node.id, e.index), []).append(gx)
        outs = []
        for v in wrt:
            g = _sum(grads.pop((v.id, 0), None))
            if g is None:
                from ..ops.registry import F

                g = F.zeros_like(stand(Entry(v, 0)))
            outs.append(g)
        grad_entries = [t.entry_of(g) for g in outs]
    joint = Graph(list(graph.outputs) + grad_entries, graph.updates)
    return joint, head_vars


def _sum(gs):
    if not gs:
        return None
    total = gs[0]
    for g in gs[1:]:
        total = total + g
    return total


def _node_vjp(t: Tracer, n: Node, gs, stand, needs, ctx):
    """Trace ``n.op.vjp``; fall back to an opaque node when the rule reads values."""
    from ..ops.registry import F

    op = n.op
    ins = tuple(stand(e) if isinstance(e, Entry) else e for e in n.inputs)
    outs = tuple(stand(Entry(n, i)) for i in range(n.num_outputs))
    gs = [g if g is not None else F.zeros_like(outs[i]) for i, g in enumerate(gs)]
    view = _view(n, ins, outs, needs, _ctx_of(n, ctx))
    try:
        res = op.vjp(_TracedVjpContext(view, ins, outs), gs[0] if n.num_outputs == 1
                     else tuple(gs))
    except AbstractValueError:  # the rule needs values: run it at execution time
        return _opaque(t, n, ins, outs, gs, view)
    res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
    if len(res) != len(n.inputs):
        raise RuntimeError(f"{op.name}: VJP returned {len(res)} gradients for "
                           f"{len(n.inputs)} inputs")
    return res


class _Unreadable:
    """A forward value's raw data while tracing a VJP rule: any use raises."""

    def __getattr__(self, name):
        if name.startswith("__"):  # introspection (doctest, copy) is not a read
            raise AttributeError(name)
        raise AbstractValueError("a VJP rule read raw forward data while its gradient "
                                 "graph was traced")

    def __array__(self, *a, **k):
        raise AbstractValueError("a VJP rule read raw forward data while its gradient "
                                 "graph was traced")

    def __getitem__(self, key):
        raise AbstractValueError("a VJP rule indexed raw forward data while tracing")


_UNREADABLE = _Unreadable()


def _view(n: Node, ins, outs, needs, ctx) -> _NodeView:
    v = _NodeView()
    v.op = n.op
    v.attrs = _vjp_attrs(n, ctx)
    v.parents = tuple(_NEEDED if isinstance(e, Entry) and e.node.id in needs else None
                      for e in n.inputs)
    v.in_meta = tuple((x.shape, x.dtype) if isinstance(x, NDArray) else None for x in ins)
    v.out_meta = tuple((o.shape, o.dtype) for o in outs)
    # The raw forward values are not known while tracing: a rule that reads them
    # (instead of using ctx.inputs) must run at execution time (the opaque fallback).
    v.in_data = tuple(_UNREADABLE if isinstance(x, NDArray) else x for x in ins)
    v.out_data = tuple(_UNREADABLE for _ in outs)
    v.ctx = ctx
    v.checks = v.out_refs = ()
    v.freed = False
    return v


def _opaque(t: Tracer, n: Node, ins, outs, gs, view):
    """One node that runs ``n.op.vjp`` imperatively on the forward values."""
    need = [i for i, p in enumerate(view.parents) if p is not None]
    op = _opaque_op(n, view, need)
    res = op(*[x for x in ins if isinstance(x, NDArray)], *outs, *gs)
    res = res if isinstance(res, tuple) else (res,)
    grads = [None] * len(n.inputs)
    for k, i in enumerate(need):
        grads[i] = res[k]
    return grads


def _vjp_attrs(n: Node, ctx) -> dict:
    """The attributes a VJP rule sees: as recorded, plus ``_from`` (the input context)
    for operators that move data between contexts, as the dispatcher passes it."""
    if n.op.place is None:
        return n.attrs
    src = next((e.node.ctx for e in n.inputs if isinstance(e, Entry)), None)
    return dict(n.attrs, _from=src if src is not None else ctx)


def _opaque_op(n: Node, view: _NodeView, need: list[int]) -> OpDef:
    op, attrs = n.op, dict(view.attrs)
    n_arr = sum(1 for m in view.in_meta if m is not None)
    n_out = len(view.out_meta)
    in_meta, out_meta, parents = view.in_meta, view.out_meta, view.parents
    literals = [None if m is not None else x for m, x in zip(in_meta, view.in_data)]

    def infer(*avals, **_):
        return tuple(Aval(*in_meta[i]) for i in need)

    def forward(xp, *raw, ctx=None):
        it = iter(raw[:n_arr])
        in_data = tuple(next(it) if m is not None else lit for m, lit in zip(in_meta, literals))
        out_data = raw[n_arr:n_arr + n_out]
        g_raw = raw[n_arr + n_out:]
        node = _ag.Node()
        node.op, node.attrs, node.parents = op, attrs, parents
        node.in_meta, node.out_meta = in_meta, out_meta
        node.in_data, node.out_data = in_data, tuple(out_data)
        node.ctx, node.checks, node.out_refs, node.freed = ctx, (), (), False
        g = tuple(NDArray._make(x, ctx, None) for x in g_raw)
        with _ag.pause():
            res = op.vjp(_ag.VjpContext(node, False), g[0] if n_out == 1 else g)
        res = res if isinstance(res, (tuple, list)) else (res,)
        out = []
        for i in need:
            r = res[i]
            out.append(xp.zeros(*in_meta[i]) if r is None else
                       r._data if isinstance(r, NDArray) else xp.asarray(r))
        return tuple(out)

    return OpDef(name=f"_vjp_{op.name}", forward=forward, infer=infer, vjp=None, inputs=(),
                 attrs={}, nd=(), np=(), variadic=True, needs_ctx=True,
                 differentiable=False, save=False, place=None, random=False, updates={},
                 visible_outputs=None, doc=f"the VJP of {op.name}, run imperatively")
