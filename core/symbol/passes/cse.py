"""Common-subexpression elimination: compute each distinct value once.

Two operator nodes merge when they call the same operator with equal attributes (and
equal MXNet-style ``user_attrs``) on the same input entries and literals, on the same
context; two constants merge when
their values have the same type of array, context, dtype, shape and bytes. The later
node's consumers then read the earlier node's outputs. Results stay bitwise equal:
the merged nodes would have run the same kernel on the same data.

Equality is strict on purpose (:func:`value_key`): ``1``, ``1.0`` and ``True`` differ
(they give different result dtypes), as do ``0.0`` and ``-0.0``; a tuple differs
from a list (an indexing operator treats them differently); ``nan`` equals ``nan``
(same bits); NumPy arrays compare by dtype, shape and bytes; :data:`TRAIN` equals
itself only; any other object is equal only to itself.

Never merged: random operators (each call draws new numbers), operators with
auxiliary-state updates (BatchNorm), variables (distinct inputs).

Stats (``result.pass_stats``): ``cse_merged`` (operator nodes) and
``cse_constants_merged``.

Example:
    >>> from core import nd
    >>> from core.symbol import Tracer
    >>> from core.symbol.passes import cse
    >>> with Tracer() as t:
    ...     x = t.variable("x", (2, 3), "float32")
    ...     y = nd.exp(x) + nd.exp(x)
    >>> g = cse.run(t.graph([y]))
    >>> [n.op_name for n in g.topo()], g.pass_stats["cse_merged"]
    (['null', 'exp', 'add'], 1)
"""
from __future__ import annotations

import hashlib
import math

import numpy

from ...context import Context
from ..graph import TRAIN, Entry, Graph, Node, is_random, map_graph
from .dce import finish, with_inputs


def value_key(v: object) -> tuple:
    """A hashable key equal for two attribute values or literals only when an operator
    cannot tell them apart (see the module doc)."""
    if v is None or v is Ellipsis or v is TRAIN:
        return (repr(v),)
    t = type(v)
    if t is bool:
        return ("bool", v)
    if t is int:
        return ("int", v)
    if t is float:
        return ("float", v.hex() if not math.isnan(v) else repr(numpy.float64(v).tobytes()))
    if t is complex:
        return ("complex", value_key(v.real), value_key(v.imag))
    if t is str or t is bytes:
        return (t.__name__, v)
    if isinstance(v, numpy.generic):
        return ("npscalar", v.dtype.str, v.tobytes())
    if t is tuple or t is list:
        return (t.__name__, tuple(value_key(x) for x in v))
    if t is dict:
        return ("dict", tuple(sorted(((repr(k), value_key(x)) for k, x in v.items()),
                                     key=lambda kv: kv[0])))
    if t is slice:
        return ("slice", value_key(v.start), value_key(v.stop), value_key(v.step))
    if isinstance(v, numpy.dtype):
        return ("dtype", v.str)
    if isinstance(v, type):
        return ("type", v.__module__, v.__qualname__)
    if isinstance(v, numpy.ndarray):
        return ("ndarray", v.dtype.str, v.shape, numpy.ascontiguousarray(v).tobytes())
    if isinstance(v, Context):
        return ("ctx", str(v))
    return ("id", id(v))


def _ctx_key(ctx):
    return None if ctx is None else str(ctx)


def _const_key(n: Node):
    """(key, comparable bytes) of a constant node's value."""
    from ...ndarray import NDArray
    v = n.value
    if isinstance(v, NDArray):
        where = ("nd", str(v.context))
        v = v._data
    else:
        where = ("raw", type(v).__module__, _ctx_key(n.ctx))
    host = v.get() if hasattr(v, "get") and not isinstance(v, numpy.ndarray) else v
    data = numpy.ascontiguousarray(host).tobytes()
    digest = hashlib.sha1(data).hexdigest()
    return (where, v.dtype.str, tuple(v.shape), digest), data


def _node_key(n: Node, inputs):
    ins = tuple(("e", e.node.id, e.index) if isinstance(e, Entry) else value_key(e)
                for e in inputs)
    attrs = tuple(sorted((k, value_key(v)) for k, v in n.attrs.items()))
    user = tuple(sorted((k, value_key(v)) for k, v in n.user_attrs.items()))
    return (id(n.op), n.num_outputs, ins, attrs, user, _ctx_key(n.ctx))


def run(graph: Graph) -> Graph:
    """Merge operator nodes that compute the same values, and equal constants.

    Args:
        graph: the graph (not changed).

    Returns:
        A new graph (variables, and nodes nothing changed, are the same Node objects;
        outputs and updates in the same order); ``pass_stats`` holds ``cse_merged``
        and ``cse_constants_merged``.
    """
    seen: dict = {}
    consts: dict = {}
    stats = {"cse_merged": 0, "cse_constants_merged": 0}

    def rebuild(n: Node, inputs):
        if n.is_variable:
            return n
        if n.is_constant:
            key, data = _const_key(n)
            hit = consts.get(key)
            if hit is not None and hit[1] == data:
                stats["cse_constants_merged"] += 1
                return Entry(hit[0], 0)
            consts.setdefault(key, (n, data))
            return n
        node = with_inputs(n, inputs)
        if is_random(n.op) or n.op.updates:
            return node
        key = _node_key(n, inputs)
        hit = seen.get(key)
        if hit is not None:
            stats["cse_merged"] += 1
            return hit.entries()
        seen[key] = node
        return node

    return finish(map_graph(graph, rebuild), stats)
