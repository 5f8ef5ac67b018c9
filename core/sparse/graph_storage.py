"""Storage-type inference over a graph (MXNet's ``FInferStorageType`` pass).

A graph computes on dense values; what MXNet's executor adds is the storage type of
each output, inferred from the inputs' storage types with the same rules the
imperative operators follow (``core.sparse.ops``): an executor bound to a csr ``x``
and a row_sparse ``w`` gives ``elemwise_add(w, w)`` as row_sparse, ``dot(x, w)`` as
dense, and so on. :func:`output_stypes` runs the rules node by node; the executor
stores its outputs in those types.

Example:
    >>> from core import sym
    >>> from core.sparse.graph_storage import output_stypes
    >>> w = sym.var("w")
    >>> output_stypes((sym.elemwise_add(w, w) * 2).graph, {"w": "row_sparse"})
    ['row_sparse']
"""
from __future__ import annotations

from .ops import _dot_stype, _out_stype
from .unary_names import ZERO_PRESERVING

__all__ = ["node_stype", "output_stypes"]

_SPARSE = ("row_sparse", "csr")
_ARITH = ("add", "subtract", "multiply", "divide")


def node_stype(opname: str, attrs: dict, in_stypes: list, in_shapes: list) -> str:
    """The output storage type of operator ``opname`` for inputs of ``in_stypes``
    (``'scalar'`` for Python numbers); ``'default'`` for operators without a rule."""
    if not any(s in _SPARSE for s in in_stypes) and opname != "cast_storage":
        return "default"
    if opname in _ARITH and len(in_stypes) == 2:
        ls, rs = in_stypes
        same = None in in_shapes or in_shapes[0] == in_shapes[1]  # unknown: elementwise
        return _out_stype(opname, ls, rs, same)
    if opname == "dot" and len(in_stypes) == 2:
        return _dot_stype(in_stypes[0], in_stypes[1], attrs.get("transpose_a", False),
                          attrs.get("transpose_b", False), attrs.get("forward_stype"))
    if opname in ZERO_PRESERVING:
        return in_stypes[0] if in_stypes[0] in _SPARSE else "default"
    if opname == "cast_storage":
        return attrs.get("stype", "default")
    if opname == "_sparse_retain":
        return "row_sparse" if in_stypes[0] == "row_sparse" else "default"
    if opname == "_square_sum":
        axis = attrs.get("axis")
        axis = axis[0] if isinstance(axis, (tuple, list)) and len(axis) == 1 else axis
        ok = in_stypes[0] == "row_sparse" and axis in (1, -1) and attrs.get("keepdims")
        return "row_sparse" if ok else "default"
    if opname == "add_n":
        return "row_sparse" if all(s == "row_sparse" for s in in_stypes) else "default"
    return "default"


def output_stypes(graph, var_stypes: dict) -> list:
    """The storage type of each output of ``graph`` (a ``core.symbol.graph.Graph``) for
    variables of storage ``var_stypes`` (``{name: stype}``; others dense)."""
    st: dict = {}

    def of(e):
        node = getattr(e, "node", None)
        if node is None:
            return "scalar"
        return st.get((node.id, e.index), "default")

    def shape_of(e):
        node = getattr(e, "node", None)
        if node is None or not node.avals:
            return None
        return tuple(node.avals[e.index].shape)

    for node in graph.topo():
        if node.is_variable:
            st[(node.id, 0)] = var_stypes.get(node.name, "default")
            continue
        if node.op is None:  # a constant
            continue
        ins = [of(e) for e in node.inputs]
        st[(node.id, 0)] = node_stype(node.op.name, node.attrs, ins,
                                      [shape_of(e) for e in node.inputs])
    return [of(e) for e in graph.outputs]
