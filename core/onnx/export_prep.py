"""Graph preparation for the ONNX export (:mod:`core.onnx.export`).

- :func:`unfuse`: ``_fused_elemwise`` nodes of optimized graphs as their program's nodes;
- :func:`open_batch`: with a dynamic batch, what tracing at a fixed batch baked in opened
  up (reshapes to the batch size, all-zero RNN states and broadcast-only zero constants);
- :func:`dynamic_dims`: which dimensions vary with the dynamic input dimensions (a
  second shape inference at other sizes);
- :func:`fold`: operators of parameters and constants only, computed at export.
"""
from __future__ import annotations

import numpy

from ..symbol.graph import Entry, Graph, evaluate, is_random
from ..symbol.shape_infer import infer_graph
from .export_emit import Emitter, ExportError


def infer(graph, shapes, dtypes):
    """Shapes and dtypes of every entry (partial: unknown ones stay None)."""
    return infer_graph(graph, shapes, dtypes, partial=True)


def as_numpy(v) -> numpy.ndarray:
    if hasattr(v, "asnumpy"):
        return v.asnumpy()
    return numpy.asarray(v)


def entry_tensor_name(e: Entry) -> str:
    """The ONNX name of a node's output: the node's name, ``name<i>`` for output i."""
    return e.node.name if e.index == 0 else f"{e.node.name}{e.index}"


def unfuse(graph: Graph) -> Graph:
    """The graph with each ``_fused_elemwise`` node (an optimized graph's) written out as
    the operator nodes of its program, so each step gets its own rule."""
    from ..ops.registry import REGISTRY
    from ..symbol.graph import Node, map_graph

    if not any(n.op is not None and n.op.name == "_fused_elemwise" for n in graph.topo()):
        return graph

    def rebuild(n, ins):
        if n.op is None or n.op.name != "_fused_elemwise":
            return n
        steps = []
        for j, step in enumerate(n.attrs["program"]):
            opname, args = step[0], step[1]
            attrs = dict(REGISTRY[opname].attrs)
            attrs.update(dict(step[2]) if len(step) > 2 else {})
            slots = []
            for a in args:
                if isinstance(a, tuple) and len(a) == 2 and a[0] == "in":
                    slots.append(ins[a[1]])
                elif isinstance(a, tuple) and len(a) == 2 and a[0] == "step":
                    slots.append(steps[a[1]])
                else:
                    slots.append(a)
            steps.append(Entry(Node(REGISTRY[opname], f"{n.name}_{opname}{j}", slots, attrs), 0))
        outs = n.attrs.get("outputs")
        picks = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        return [steps[k] for k in picks]

    return map_graph(graph, rebuild)


def open_batch(graph: Graph, base, batches: set, input_ids: set) -> Graph:
    """The graph with the batch size that tracing baked in opened up where that is
    unambiguous: a reshape to ``(batch, ...)`` of a ``(batch, ...)`` input keeps the
    batch (MXNet's 0, NumPy's -1), all-zero constant RNN states are dropped (ONNX and
    ``RNN`` both start from zeros), and all-zero ``(batch, ...)`` constants that are only
    broadcast against batch-sized values become ``(1, ...)``."""
    from ..symbol.graph import Node, map_graph

    live = set(input_ids)
    for n in graph.topo():
        if n.op is not None and any(e.node.id in live for e in n.input_entries()):
            live.add(n.id)

    consumers = graph.consumers()
    shrink = {n.id for n in graph.topo() if n.is_constant and _batch_zeros(n, batches)
              and _broadcast_safe(n, consumers, live)}

    def rebuild(n, ins):
        if n.id in shrink:  # zeros (batch, ...) that only broadcast: (1, ...) does as well
            value = numpy.zeros((1,) + tuple(n.value.shape[1:]), dtype=n.value.dtype)
            return Node(None, n.name, (), {}, 1, None, n.user_attrs, value, n.ctx)
        if n.op is None:
            return n
        attrs = n.attrs
        if n.op.name == "reshape" and n.id in live:
            key = "shape" if attrs.get("shape") is not None else "newshape"
            spec = attrs.get(key)
            ish, osh = base.shape(n.inputs[0]), base.shape(Entry(n, 0))
            if (isinstance(spec, (tuple, list)) and spec and ish and osh and ish[0] == osh[0]
                    and osh[0] in batches and spec[0] == osh[0]):
                rest = list(spec[1:])
                if attrs.get("mx_codes", True):
                    attrs = {**attrs, key: tuple([0] + rest)}
                elif -1 not in rest:
                    attrs = {**attrs, key: tuple([-1] + rest)}
        if n.op.name == "RNN":
            ins = list(ins)
            for pos in (2, 3):
                e = ins[pos] if pos < len(ins) else None
                if isinstance(e, Entry) and e.node.is_constant and not numpy.any(
                        as_numpy(e.node.value)):
                    ins[pos] = None
        return Node(n.op, n.name, ins, attrs, n.num_outputs, None, n.user_attrs, n.value,
                    n.ctx)

    return map_graph(graph, rebuild)


_BROADCASTING = {"add", "subtract", "multiply", "maximum", "minimum"}


def _batch_zeros(n, batches: set) -> bool:
    shape = getattr(n.value, "shape", ())
    return len(shape) >= 1 and shape[0] in batches and shape[0] > 1 and not numpy.any(
        as_numpy(n.value))


def _broadcast_safe(n, consumers: dict, live: set, depth: int = 0) -> bool:
    """Whether every use of ``n``'s output broadcasts it against a batch-sized operand
    (elementwise), possibly after matrix products on its left (``h0 @ U`` in an
    unrolled RNN), so its batch axis may be 1."""
    uses = consumers.get(n.id, [])
    if not uses or depth > 8:
        return False
    for c, pos in uses:
        if c.op is None:
            return False
        if c.op.name in _BROADCASTING:
            other = c.inputs[1 - pos] if len(c.inputs) == 2 else None
            if not (isinstance(other, Entry) and other.node.id in live):
                return False
        elif c.op.name == "matmul" and pos == 0 and len(c.inputs) == 2:
            if c.id in live or not _broadcast_safe(c, consumers, live, depth + 1):
                return False
        else:
            return False
    return True


def dynamic_dims(graph, shapes, dtypes, dyn_inputs: dict, base):
    """``(node id, output) -> tuple of bool``: dimensions that differ at other sizes of
    the dynamic input dimensions; ``{}`` when there are none."""
    if not any(any(v) for v in dyn_inputs.values()):
        return {}
    tries = [lambda d: 2 * d + 1, lambda d: 2 * d, lambda d: d + 1]
    why = ""
    for only_batch in (False, True):
        for f in tries:
            moved = dict(shapes)
            for name, flags in dyn_inputs.items():
                s = list(shapes[name])
                for i, v in enumerate(flags):
                    if v and (not only_batch or i == 0):
                        s[i] = f(s[i])
                moved[name] = tuple(s)
            try:
                other = infer(graph, moved, dtypes)
            except (ValueError, TypeError) as e:
                why = why or str(e)
                continue
            out = {}
            ok = True
            for k, s in base.shapes.items():
                t = other.shapes.get(k)
                if s is None or t is None or len(s) != len(t):
                    ok = ok and (s is None) == (t is None)
                    continue
                out[k] = tuple(a != b for a, b in zip(s, t))
            if ok:
                return out
    raise ExportError("dynamic=True: the graph's shapes do not infer at other sizes of "
                      f"the dynamic input dimensions (export with fixed shapes): {why}")


def fold(graph: Graph, b: Emitter, env: dict, values: dict, inputs) -> None:
    """Compute the operators that depend on parameters and constants only; their
    outputs that the rest of the graph reads become initializers."""
    from ..ndarray import NDArray

    live = {v.id for v in inputs}
    foldable: set[int] = set()
    for n in graph.topo():
        if n.op is None:
            continue
        deps = [e.node for e in n.input_entries()]
        if (is_random(n.op) or any(d.id in live for d in deps)
                or any(d.is_variable and d.name not in values for d in deps)):
            live.add(n.id)
            continue
        foldable.add(n.id)
    if not foldable:
        return
    needed = []
    for n in graph.topo():
        if n.id in foldable:
            continue
        for e in n.input_entries():
            if e.node.id in foldable and e not in needed:
                needed.append(e)
    for e in graph.outputs:
        if e.node.id in foldable and e not in needed:
            needed.append(e)
    if not needed:
        return
    sub = Graph(needed)
    feed = {v.name: NDArray(values[v.name]) for v in sub.topo() if v.is_variable}
    outs, _ = evaluate(sub, feed, is_train=False)
    for e, val in zip(needed, outs):
        b.node = e.node
        env[(e.node.id, e.index)] = b.const(as_numpy(val), name=entry_tensor_name(e))
