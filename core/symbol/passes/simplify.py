"""Algebraic simplification, exact rewrites only.

Rewrites (each applies only when the node's output aval, shape and dtype, equals the
aval of the value that replaces it, so no broadcasting or dtype promotion is lost):

- identities: ``x * 1``, ``1 * x``, ``x + 0``, ``0 + x``, ``x - 0``, ``x / 1``,
  ``x ** 1`` -> ``x``; the 1 or 0 is a literal or a constant whose every element
  is 1 (or 0);
- ``negative(negative(x))`` -> ``x``;
- permutations (``transpose``, ``swapaxes``, ``moveaxis``): one that keeps every
  axis in place -> ``x``; two in a row -> one ``transpose`` with the composed axes,
  or ``x`` when they cancel;
- pure reshapes (``reshape``, ``expand_dims``, ``squeeze``, ``flatten``, C-order
  ``ravel``): one that keeps the shape -> ``x``; two in a row -> one ``reshape`` to
  the final shape, written out explicitly (``mx_codes=False``, so MXNet's special
  codes 0/-1/-2/-3/-4 never need re-reading), or ``x`` when the shape comes back.

Every rewrite gives equal values. One caveat, IEEE's signed zero: ``-0.0 + 0`` is
``+0.0``, so ``x + 0 -> x`` keeps a ``-0.0`` the original turned into ``+0.0`` (equal
under ``==``; the bits differ). Set :data:`STRICT_SIGNED_ZERO` to True to apply
additive identities on floating-point values only when they keep the sign of zero
too (``x + (-0.0)``, ``x - 0.0``). ``copy`` is never removed (it may be there to
break aliasing).

Stats (``result.pass_stats``): ``simplify_identity``, ``simplify_negative``,
``simplify_transpose``, ``simplify_reshape`` (rewrites of each kind).

Example:
    >>> from core import nd
    >>> from core.symbol import Tracer
    >>> from core.symbol.passes import simplify
    >>> with Tracer() as t:
    ...     x = t.variable("x", (2, 3), "float32")
    ...     y = nd.relu(nd.transpose(nd.transpose(x * 1 + 0)))
    >>> g = simplify.run(t.graph([y]))
    >>> [n.op_name for n in g.topo()]
    ['null', 'relu']
"""
from __future__ import annotations

import numbers

import numpy

from ...dtypes import is_float
from ...ops.registry import REGISTRY, Aval
from ..graph import Entry, Graph, Node, map_graph
from .dce import finish, with_inputs

# True: additive identities on floating-point values only where the sign of a zero
# result is kept as well (see the module doc).
STRICT_SIGNED_ZERO = False

# op name -> (input positions where the identity may sit, the identity)
_IDENTITIES = {
    "multiply": ((0, 1), 1),
    "add": ((0, 1), 0),
    "subtract": ((1,), 0),
    "divide": ((1,), 1),
    "power": ((1,), 1),
}
_PERMUTATIONS = frozenset({"transpose", "swapaxes", "moveaxis"})
_RESHAPES = frozenset({"reshape", "expand_dims", "squeeze", "flatten", "ravel"})
# Constants larger than this are not scanned for all-ones/all-zeros.
_MAX_SCAN = 1 << 20


def _aval(e) -> Aval | None:
    if not isinstance(e, Entry) or e.node.avals is None or e.index >= len(e.node.avals):
        return None
    return e.node.avals[e.index]


def _out_aval(n: Node) -> Aval | None:
    return n.avals[0] if n.avals is not None and n.num_outputs == 1 else None


def _raw(value):
    from ...ndarray import NDArray
    return value._data if isinstance(value, NDArray) else value


def _is_identity(slot, ident, op_name: str, dtype) -> bool:
    """Whether input ``slot`` (a literal or an entry) is everywhere the identity."""
    strict = (STRICT_SIGNED_ZERO and ident == 0 and op_name in ("add", "subtract")
              and is_float(dtype))
    want_neg = op_name == "add"  # x + (-0.0) and x - (+0.0) keep every bit
    if isinstance(slot, Entry):
        src = slot.node
        if not src.is_constant or src.num_outputs != 1:
            return False
        v = _raw(src.value)
        # bfloat16/float8 constants (kind "V") are not scanned either: kept as they are
        if getattr(v, "size", _MAX_SCAN + 1) > _MAX_SCAN or v.dtype.kind in "OSUV":
            return False
        if not bool((v == ident).all()):
            return False
        if not strict:
            return True
        if v.dtype.kind == "f":
            host = v if isinstance(v, numpy.ndarray) else v.get()
            return bool((numpy.signbit(host) == want_neg).all())
        return v.dtype.kind in "iub" and not want_neg  # integer zeros act as +0
    if isinstance(slot, (bool, numbers.Number)) and not isinstance(slot, complex):
        if slot != ident:
            return False
        if strict:
            return bool(numpy.signbit(float(slot))) == want_neg
        return True
    return False


def _identity(n: Node, inputs):
    rule = _IDENTITIES.get(n.op.name)
    out = _out_aval(n)
    if rule is None or out is None or len(inputs) != 2:
        return None
    positions, ident = rule
    for pos in positions:
        keep = inputs[1 - pos]
        if _aval(keep) == out and _is_identity(inputs[pos], ident, n.op.name, out.dtype):
            return keep
    return None


def _negative(n: Node, inputs):
    if n.op.name != "negative" or len(inputs) != 1 or not isinstance(inputs[0], Entry):
        return None
    inner = inputs[0].node
    if inner.op is None or inner.op.name != "negative" or len(inner.inputs) != 1:
        return None
    x = inner.inputs[0]
    return x if _aval(x) == _out_aval(n) and _out_aval(n) is not None else None


def _perm(n: Node, in_aval: Aval):
    """The axes ``p`` with ``n``'s output = ``x.transpose(p)``, found by running the
    operator's ``infer`` on a shape whose dimensions are all different."""
    nd = len(in_aval.shape)
    probe = Aval(tuple(range(2, 2 + nd)), in_aval.dtype)
    try:
        out = n.op.infer(probe, **n.attrs)
    except Exception:  # noqa: BLE001 - an unexpected attribute: leave the node alone
        return None
    shape = tuple(out.shape)
    if sorted(shape) != list(probe.shape):
        return None
    return tuple(d - 2 for d in shape)


def _transpose(n: Node, inputs):
    if n.op.name not in _PERMUTATIONS or len(inputs) != 1:
        return None
    x, out = inputs[0], _out_aval(n)
    x_aval = _aval(x)
    if x_aval is None or out is None:
        return None
    p2 = _perm(n, x_aval)
    if p2 is None:
        return None
    if p2 == tuple(range(len(p2))):
        return x
    inner = x.node
    if inner.op is None or inner.op.name not in _PERMUTATIONS or len(inner.inputs) != 1:
        return None
    base = inner.inputs[0]
    base_aval = _aval(base)
    if base_aval is None or base_aval.dtype != out.dtype:
        return None
    p1 = _perm(inner, base_aval)
    if p1 is None:
        return None
    q = tuple(p1[i] for i in p2)
    if q == tuple(range(len(q))):
        return base
    op = REGISTRY["transpose"]
    return Node(op, n.name, (base,), dict(op.attrs, axes=q), avals=n.avals, ctx=n.ctx)


def _is_reshape(n: Node) -> bool:
    if n.op is None or n.op.name not in _RESHAPES or len(n.inputs) != 1:
        return False
    if n.op.name == "ravel":
        return n.attrs.get("order", "C") in ("C", "A", "K")
    if n.op.name == "reshape":
        return n.attrs.get("order", "C") in ("C", "A", "K")
    return True


def _reshape(n: Node, inputs):
    if not _is_reshape(n):
        return None
    x, out = inputs[0], _out_aval(n)
    x_aval = _aval(x)
    if x_aval is None or out is None or x_aval.dtype != out.dtype:
        return None
    if x_aval.shape == out.shape:
        return x
    if not _is_reshape(x.node):
        return None
    base = x.node.inputs[0]
    base_aval = _aval(base)
    if base_aval is None or base_aval.dtype != out.dtype:
        return None
    if base_aval.shape == out.shape:
        return base
    op = REGISTRY["reshape"]
    attrs = dict(op.attrs, newshape=tuple(out.shape), mx_codes=False)
    return Node(op, n.name, (base,), attrs, avals=n.avals, ctx=n.ctx)


_RULES = (("simplify_identity", _identity), ("simplify_negative", _negative),
          ("simplify_transpose", _transpose), ("simplify_reshape", _reshape))


def run(graph: Graph) -> Graph:
    """Apply the exact rewrites of the module doc, inputs first.

    Args:
        graph: the graph (not changed).

    Returns:
        A new graph (variables and untouched nodes are the same Node objects; outputs
        and updates in the same order); ``pass_stats`` counts the rewrites by kind.
    """
    stats = {name: 0 for name, _ in _RULES}

    def rebuild(n: Node, inputs):
        if n.op is None:
            return n
        for name, rule in _RULES:
            r = rule(n, inputs)
            if r is not None:
                stats[name] += 1
                return r
        return with_inputs(n, inputs)

    return finish(map_graph(graph, rebuild), stats)
