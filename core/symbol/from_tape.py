"""The recorded history of an array as a Symbol (MXNet's ``autograd.get_symbol``).

:func:`tape_symbol` walks the autograd tape back from an array computed under
``autograd.record()``: each recorded operator call becomes a node of the Symbol, each
array it started from (a variable with ``attach_grad``, or an array that was not
recorded) a variable ``var0``, ``var1``, ..., and each scalar operand a literal.
"""
from __future__ import annotations

from ..ndarray import NDArray
from ..ops.registry import REGISTRY
from ..tape import Node, VarNode
from .constructors import NameManager, compose, var
from .symbol import Symbol

__all__ = ["tape_symbol"]


def tape_symbol(x: NDArray) -> Symbol:
    """The Symbol of the operators recorded from ``x``'s inputs to ``x``.

    Args:
        x: an NDArray computed under ``autograd.record()`` (or a variable).

    Returns:
        A Symbol with one output; its arguments are the arrays the recording started from.

    Raises:
        TypeError: ``x`` is not an NDArray.
        ValueError: ``x`` has no recorded history, or the history holds a call that has
            no operator in the registry (a hybridized block's graph, a custom Function).
    """
    if not isinstance(x, NDArray):
        raise TypeError(f"get_symbol: expected an NDArray, got {type(x).__name__}")
    if x._node is None:
        raise ValueError(f"get_symbol: the array of shape {tuple(x.shape)} has no recorded "
                         "history; compute it under autograd.record() from arrays with "
                         "attach_grad()")
    built: dict = {}
    leaves: dict = {}
    with NameManager():
        head, index = x._node
        sym = _build(head, built, leaves)
    return sym[index] if len(sym) > 1 else sym


def _leaf(key, leaves) -> Symbol:
    if key not in leaves:
        leaves[key] = var(f"var{len(leaves)}")
    return leaves[key]


def _build(head, built: dict, leaves: dict) -> Symbol:
    """The Symbol of tape node ``head``: a post-order walk, inputs left to right (so the
    variables are numbered in argument order), iterative (deep tapes do not hit the
    recursion limit)."""
    stack = [(head, 0)]
    while stack:
        node, k = stack.pop()
        if id(node) in built:
            continue
        if isinstance(node, VarNode):
            built[id(node)] = _leaf(id(node), leaves)
            continue
        parents = node.parents
        while k < len(parents) and (parents[k] is None or id(parents[k][0]) in built):
            if parents[k] is None and node.in_meta[k] is not None:
                _leaf(("const", id(node), k), leaves)  # numbered where it is used
            k += 1
        if k < len(parents):
            stack.append((node, k))
            stack.append((parents[k][0], 0))
            continue
        built[id(node)] = _compose(node, built, leaves)
    return built[id(head)]


def _compose(node: Node, built: dict, leaves: dict) -> Symbol:
    op = node.op
    if REGISTRY.get(op.name) is not op:
        raise ValueError(f"get_symbol: the history holds a call of {op.name!r}, which is not "
                         "an operator of the registry (a hybridized block's graph or a "
                         "custom autograd.Function), so it cannot be a Symbol node")
    literals = node.in_data if node.in_data is not None else (None,) * len(node.parents)
    inputs = []
    for k, (p, meta) in enumerate(zip(node.parents, node.in_meta)):
        if p is not None:
            s = built[id(p[0])]
            inputs.append(s[p[1]] if len(s) > 1 else s)
        elif meta is not None:  # an array that was not recorded: an input of the graph
            inputs.append(_leaf(("const", id(node), k), leaves))
        else:
            inputs.append(literals[k])
    attrs = {k: v for k, v in node.attrs.items() if k in op.attrs}
    return compose(op, inputs, attrs)
