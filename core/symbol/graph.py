"""The graph IR of the symbolic mode: nodes, entries and graphs.

A :class:`Graph` is a DAG of :class:`Node` objects. A node is one of

- an operator call: ``op`` is an :class:`~core.ops.registry.OpDef` from the registry,
  ``attrs`` its keyword attributes, ``inputs`` its positional inputs;
- a variable (``op is None and value is None``): a named input of the graph (data,
  a parameter, an auxiliary state, a head gradient);
- a constant (``op is None and value is not None``): an array captured while tracing.

An input slot holds either an :class:`Entry` (output ``index`` of ``node``) or a Python
literal (a scalar or None) that the operator takes in that position. ``avals`` caches
the outputs' shapes and dtypes when they are known (tracing fills them in; symbols
composed by hand get them from ``infer_shape``).

Attribute values may be :data:`TRAIN`, which stands for "the executor's ``is_train``":
mode-dependent operators (Dropout, BatchNorm, the fused RNN's dropout) carry it so one
graph serves training and inference.

``Graph.updates`` maps variable nodes (auxiliary states such as BatchNorm's moving
statistics) to the entries whose values they take after each forward run: tracing
turns in-place writes into these.

Passes (``core.symbol.passes``) are functions ``Graph -> Graph`` that never change
results; :func:`evaluate` is the plain reference interpreter that their tests compare
against.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any, NamedTuple


class _TrainFlag:
    """The attribute value "the executor's ``is_train``" (a singleton)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "TRAIN"

    def __bool__(self):
        raise TypeError("TRAIN (the executor's is_train) must be resolved before use: "
                        "core.symbol.graph.resolve_attrs or autodiff.specialize")

    def __reduce__(self):
        return (_TrainFlag, ())


TRAIN = _TrainFlag()

_ids = itertools.count()


class Entry(NamedTuple):
    """Output ``index`` of ``node``."""

    node: Node
    index: int

    def __repr__(self) -> str:
        return f"{self.node.name}[{self.index}]"


class Node:
    """One node of a graph (operator call, variable or constant); see the module doc."""

    __slots__ = ("attrs", "avals", "ctx", "id", "inputs", "name", "num_outputs", "op",
                 "user_attrs", "value")

    def __init__(self, op, name: str, inputs: Iterable = (), attrs: dict | None = None,
                 num_outputs: int = 1, avals=None, user_attrs: dict | None = None,
                 value=None, ctx=None):
        self.id = next(_ids)
        self.op = op
        self.name = name
        self.inputs = tuple(inputs)
        self.attrs = dict(attrs or {})
        self.num_outputs = num_outputs
        self.avals = tuple(avals) if avals is not None else None
        self.user_attrs = dict(user_attrs or {})
        self.value = value
        self.ctx = ctx

    @property
    def is_variable(self) -> bool:
        return self.op is None and self.value is None

    @property
    def is_constant(self) -> bool:
        return self.op is None and self.value is not None

    @property
    def op_name(self) -> str:
        """The operator's registry name, ``'null'`` for variables and constants (MXNet)."""
        return "null" if self.op is None else self.op.name

    def entries(self) -> list[Entry]:
        return [Entry(self, i) for i in range(self.num_outputs)]

    def input_entries(self) -> list[Entry]:
        return [e for e in self.inputs if isinstance(e, Entry)]

    def __repr__(self) -> str:
        return f"<Node {self.name} op={self.op_name}>"


class Graph:
    """A DAG given by its output entries (and the auxiliary-state updates).

    Args:
        outputs: the entries the graph computes, in order.
        updates: ``{variable node: entry}``: after a forward run, each variable takes
            the value of its entry (in-place writes found while tracing).
    """

    def __init__(self, outputs: Iterable[Entry], updates: dict | None = None):
        self.outputs = list(outputs)
        self.updates = dict(updates or {})

    def heads(self) -> list[Entry]:
        """Every entry the graph must produce: outputs, then update values."""
        return self.outputs + list(self.updates.values())

    def topo(self) -> list[Node]:
        """All nodes reachable from the heads (and the updated variables), inputs first.

        Variables appear in order of first use; the order is deterministic.
        """
        order: list[Node] = []
        seen: set[int] = set()
        roots = [e.node for e in self.heads()] + list(self.updates)
        for root in roots:
            if root.id in seen:
                continue
            stack = [(root, False)]
            while stack:
                node, done = stack.pop()
                if done:
                    order.append(node)
                    continue
                if node.id in seen:
                    continue
                seen.add(node.id)
                stack.append((node, True))
                for e in reversed(node.inputs):
                    if isinstance(e, Entry) and e.node.id not in seen:
                        stack.append((e.node, False))
        return order

    def variables(self) -> list[Node]:
        return [n for n in self.topo() if n.is_variable]

    def op_nodes(self) -> list[Node]:
        return [n for n in self.topo() if n.op is not None]

    def consumers(self) -> dict[int, list[tuple[Node, int]]]:
        """``{node id: [(consumer node, input position), ...]}`` over the whole graph."""
        out: dict[int, list[tuple[Node, int]]] = {}
        for n in self.topo():
            for pos, e in enumerate(n.inputs):
                if isinstance(e, Entry):
                    out.setdefault(e.node.id, []).append((n, pos))
        return out

    def copy(self) -> Graph:
        """A structural copy (new Node objects; attrs copied, constants shared)."""
        return map_graph(self, lambda n, inputs: _clone(n, inputs))

    def __repr__(self) -> str:
        return f"<Graph {len(self.op_nodes())} ops, {len(self.outputs)} outputs>"


def _clone(n: Node, inputs) -> Node:
    c = Node(n.op, n.name, inputs, n.attrs, n.num_outputs, n.avals, n.user_attrs, n.value,
             n.ctx)
    return c


def map_graph(graph: Graph, rebuild) -> Graph:
    """Rebuild ``graph`` node by node, inputs first.

    ``rebuild(node, new_inputs) -> Node | Entry | list[Entry]`` receives each node with
    its inputs already rewritten and returns its replacement: a new node (its outputs
    replace the old ones), one entry (a one-output node replaced by an existing value)
    or a list of entries (one per output). Variables are passed to ``rebuild`` too and
    are usually returned as they are.
    """
    remap: dict[tuple[int, int], Entry] = {}
    node_map: dict[int, Node] = {}
    for n in graph.topo():
        ins = tuple(remap[(e.node.id, e.index)] if isinstance(e, Entry) else e
                    for e in n.inputs)
        r = rebuild(n, ins)
        if isinstance(r, Node):
            node_map[n.id] = r
            for i in range(n.num_outputs):
                remap[(n.id, i)] = Entry(r, i)
        elif isinstance(r, Entry):
            remap[(n.id, 0)] = r
        else:
            for i, e in enumerate(r):
                remap[(n.id, i)] = e
    outputs = [remap[(e.node.id, e.index)] for e in graph.outputs]
    updates = {}
    for var, e in graph.updates.items():
        new_var = node_map.get(var.id, var)
        updates[new_var] = remap[(e.node.id, e.index)]
    return Graph(outputs, updates)


def reachable(nodes) -> set[int]:
    """Ids of ``nodes`` and of every node they depend on."""
    seen: set[int] = set()
    stack = list(nodes)
    while stack:
        n = stack.pop()
        if n.id in seen:
            continue
        seen.add(n.id)
        stack.extend(e.node for e in n.inputs if isinstance(e, Entry))
    return seen


def resolve_attrs(attrs: dict, is_train: bool) -> dict:
    """``attrs`` with every :data:`TRAIN` replaced by ``is_train``."""
    if not any(v is TRAIN for v in attrs.values()):
        return attrs
    return {k: (is_train if v is TRAIN else v) for k, v in attrs.items()}


def is_random(op) -> bool:
    """Whether operator ``op`` draws random numbers (never folded nor merged)."""
    return bool(getattr(op, "random", False))


def evaluate(graph: Graph, values: dict[str, Any], ctx=None, is_train: bool = False,
             monitor=None):
    """Run ``graph`` node by node through the dispatcher (the reference interpreter).

    Args:
        graph: the graph.
        values: ``{variable name: NDArray}`` for every variable.
        ctx: the context of operators without array inputs (default: current).
        is_train: the value of :data:`TRAIN` attributes.
        monitor: ``monitor(node, inputs, outputs)`` after each operator node (Gluon's
            ``register_op_hook``), or None.

    Returns:
        ``(outputs, updates)``: a list of NDArrays, and ``{variable name: NDArray}``.
    """
    from ..ndarray import NDArray
    from ..ops.dispatch import invoke

    env: dict[tuple[int, int], Any] = {}
    for n in graph.topo():
        if n.is_variable:
            if n.name not in values:
                raise ValueError(f"evaluate: no value given for variable {n.name!r}")
            env[(n.id, 0)] = values[n.name]
            continue
        if n.is_constant:
            v = n.value
            env[(n.id, 0)] = v if isinstance(v, NDArray) else NDArray(v, ctx=n.ctx or ctx)
            continue
        ins = [env[(e.node.id, e.index)] if isinstance(e, Entry) else e for e in n.inputs]
        attrs = resolve_attrs(n.attrs, is_train)
        out = invoke(n.op, ins, attrs, n.ctx or ctx)
        outs = out if isinstance(out, tuple) else (out,)
        for i, o in enumerate(outs):
            env[(n.id, i)] = o
        if monitor is not None:
            monitor(n, ins, outs)
    outputs = [env[(e.node.id, e.index)] for e in graph.outputs]
    updates = {v.name: env[(e.node.id, e.index)] for v, e in graph.updates.items()}
    return outputs, updates
