"""Graphs to and from JSON in MXNet's symbol layout (``*-symbol.json``).

The file is MXNet 1.x's symbol JSON::

    {"nodes": [{"op": "FullyConnected", "name": "fc0",
                "attrs": {"num_hidden": "128", "no_bias": "False"},
                "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]}, ...],
     "arg_nodes": [0, 1, 2], "node_row_ptr": [0, 1, 2, 3, 4],
     "heads": [[3, 0, 0]],
     "attrs": {"mxnet_version": ["int", 10901], "kbackend_version": ["int", 2]}}

Nodes come inputs first (``"null"`` for variables and constants); an input or head
``[node, output, 0]`` names one output of an earlier node. Operator nodes are written
in MXNet 1.9's spelling (:mod:`.json_lower`: MXNet's operator names, only its
attributes, no training-mode attribute), so real MXNet loads the file; a node MXNet has
no operator for is an error with ``strict=True`` (``HybridBlock.export``) and otherwise
is written under our registry name with ``"__kbackend__": "1"`` (only we read it).
Attribute values are strings written as MXNet writes them (``"128"``, ``"(3, 3)"``,
``"True"``, ``"None"``, ``"relu"``, ``"0.9"``) and read back by a small strict parser
(:func:`parse_value`; no ``eval``, no pickle): ints, floats (``inf``, ``nan``), bools,
None, quoted strings, tuples and lists (nested), ``slice(a, b, c)``, ``Ellipsis``,
integer index arrays ``array([0, 2], 'int64')`` (in indexing keys), and
``"__is_train__"`` for :data:`~core.symbol.graph.TRAIN`. Other text is a plain string.
(The value parser lives in :mod:`.json_values`, the MXNet 1.x names in :mod:`.json_mxnet`.)

What MXNet's layout has no place for goes into reserved attributes:

- literal inputs of our own nodes (a Python scalar or None in an input slot): the
  node's ``"__literals__"`` holds a JSON object ``{"position": "value"}`` (NumPy scalars
  as ``["dtype", "value"]``); ``inputs`` lists only the array inputs (MXNet's spelling
  uses its scalar operators instead: ``x + 1`` is ``_plus_scalar``);
- constants (arrays captured while tracing): ``"null"`` nodes with ``"__const__": "1"``,
  ``"__shape__"``, ``"__dtype__"`` and ``"__value__"``, the bytes in little-endian order,
  base64-encoded (bfloat16 and float8 as their bits); ``export`` makes them parameters;
- ``Graph.updates`` that MXNet's in-place auxiliary states (BatchNorm's moving
  statistics) do not imply: the top-level ``"kbackend_updates": ["list_int", [variable
  node, node, output, ...]]`` (flat triples; a type MXNet's loader knows).

Variables keep their ``user_attrs`` (``__shape__``, ``__dtype__``, ``__lr_mult__``, ...)
as their attributes. Shapes of other nodes are not stored: shape inference recomputes
them.

Reading validates everything and raises ValueError naming the node (index, name, op):
malformed JSON, missing keys, unknown operators (MXNet 1.x spellings of ours are
accepted, e.g. ``Flatten``, ``elemwise_add``, ``_plus_scalar``, ``LayerNorm``),
unknown attributes, values that do not parse, and references to nodes or outputs that
do not exist or come later. Files written by MXNet get its conventions: attribute
values convert to the type of the operator's default (``"[3, 3]"`` to a tuple, ``"1"``
to ``1.0`` or ``True``), mode-dependent operators without a ``training`` attribute
(Dropout, BatchNorm, RNN) take :data:`TRAIN`, and files older than MXNet 1.9.1 get
MXNet's own upgrades (hidden keys without underscores, missing auxiliary inputs before
0.9). Files of format version 1 (every node in our spelling) still load.

Example:
    >>> from core import nd
    >>> from core.symbol.trace import Tracer
    >>> from core.symbol.json_io import graph_from_json, graph_to_json
    >>> with Tracer() as t:
    ...     x = t.variable("x", (2, 3), "float32")
    ...     y = nd.relu(x * 2 + 1)
    >>> text = graph_to_json(t.graph([y]))
    >>> g = graph_from_json(text)
    >>> [(n.op_name, n.inputs[1:]) for n in g.op_nodes()]
    [('multiply', (2,)), ('add', (1,)), ('relu', ())]
"""
from __future__ import annotations

import base64
import itertools
import json
import os

import numpy

from ..dtypes import as_dtype
from ..np._mode import is_np_shape
from ..ops.registry import REGISTRY, Aval
from .graph import Entry, Graph, Node
from .json_lower import Emitter, Unsupported, lower_node
from .json_mxnet import MX_DTYPE_NAMES
from .json_read import (
    _BITS,
    _CONST_KEYS,
    _MARK,
    _UPDATES,
    FORMAT_VERSION,
    LITERALS,
    MXNET_VERSION,
    _Loader,
)
from .json_values import ParseError, format_value, parse_value

# ParseError, format_value and parse_value live in json_values; re-exported here.
__all__ = ["ParseError", "format_value", "graph_from_json", "graph_to_json", "load_graph",
           "parse_value", "save_graph"]


# =========================================================================== writing
def _where(i: int, node) -> str:
    return f"node {i} ({node.name!r}, op {node.op_name!r})"


def graph_to_json(graph, indent: int | None = 2, *, strict: bool = False) -> str:
    """The graph as MXNet symbol JSON (see the module doc).

    Operator nodes are written in MXNet 1.9's spelling (:mod:`.json_lower`), so real
    MXNet loads the file. A node MXNet has no operator for is an error when ``strict``
    (``HybridBlock.export``); otherwise it is written in our own spelling, marked
    ``"__kbackend__": "1"``, and the file loads here only.

    Args:
        graph: a :class:`~core.symbol.graph.Graph` (or an object with a ``.graph``).
        indent: JSON indentation (None: one line).
        strict: refuse what real MXNet 1.9 could not load.

    Returns:
        The JSON text.

    Raises:
        ValueError: naming the node, for operators that are not in the registry
            (fused kernels: save before fusion), attributes that cannot be written, and
            (``strict``) operators MXNet 1.9 does not have.

    Example:
        >>> import json
        >>> from core.ops.registry import REGISTRY
        >>> from core.symbol.graph import Entry, Graph, Node
        >>> x = Node(None, "x", user_attrs={"__shape__": "(2, 3)"})
        >>> act = Node(REGISTRY["Activation"], "act0", [Entry(x, 0)], {"act_type": "tanh"})
        >>> doc = json.loads(graph_to_json(Graph([Entry(act, 0)])))
        >>> doc["nodes"][1]["attrs"], doc["nodes"][1]["inputs"], doc["heads"]
        ({'act_type': 'tanh'}, [[0, 0, 0]], [[1, 0, 0]])
    """
    graph = getattr(graph, "graph", graph)
    if not isinstance(graph, Graph):
        raise TypeError(f"graph_to_json: expects a Graph, got {type(graph).__name__}")
    w = _Writer(strict)
    for i, n in enumerate(graph.topo()):
        w.node(i, n)
    attrs = {"mxnet_version": ["int", MXNET_VERSION], "kbackend_version": ["int", FORMAT_VERSION]}
    if is_np_shape():  # MXNet marks graphs saved under NumPy shape semantics (0: a size)
        attrs["is_np_shape"] = ["int", 1]
    flat = w.updates(graph.updates)
    if flat:
        attrs[_UPDATES] = ["list_int", flat]
    doc = {"nodes": w.nodes,
           "arg_nodes": [i for i, d in enumerate(w.nodes) if d["op"] == "null"],
           "node_row_ptr": list(itertools.accumulate(w.counts, initial=0)),
           "heads": [w.ref(e, "a head") + [0] for e in graph.outputs],
           "attrs": attrs}
    return _dumps(doc, indent)


def _dumps(v, indent, level=0) -> str:
    """JSON with MXNet's layout: lists of numbers (references) stay on one line."""
    if indent is None:
        return json.dumps(v)
    flat = isinstance(v, list) and all(
        isinstance(x, (int, str)) or (isinstance(x, list) and all(isinstance(y, int) for y in x))
        for x in v)
    if flat or not isinstance(v, (list, dict)) or not v:
        return json.dumps(v)
    pad = "\n" + " " * (indent * (level + 1))
    if isinstance(v, list):
        items = [_dumps(x, indent, level + 1) for x in v]
        return "[" + ",".join(pad + x for x in items) + "\n" + " " * (indent * level) + "]"
    items = [json.dumps(k) + ": " + _dumps(x, indent, level + 1) for k, x in v.items()]
    return "{" + ",".join(pad + x for x in items) + "\n" + " " * (indent * level) + "}"


class _Writer(Emitter):
    """Graph nodes to JSON nodes; ``refs[node id]`` holds each output's ``[index, out]``."""

    def __init__(self, strict: bool):
        self.strict = strict
        self.nodes: list[dict] = []
        self.counts: list[int] = []
        self.refs: dict[int, list] = {}
        self.lowered: set[int] = set()
        self.where = ""

    def emit(self, op, name, attrs, inputs, num_outputs, raw=None) -> int:
        d = {"op": op, "name": name}
        text = {k: _fmt_attr(self.where, k, v) for k, v in attrs.items()}
        text.update(raw or {})
        if text:
            d["attrs"] = text
        d["inputs"] = [[j, k, 0] for j, k in inputs]
        self.nodes.append(d)
        self.counts.append(num_outputs)
        return len(self.nodes) - 1

    def ref(self, e: Entry, what: str) -> list:
        r = self.refs[e.node.id][e.index]
        if r is None:
            raise ValueError(f"graph_to_json: {self.where}: {what} uses output {e.index} of "
                             f"{e.node.name!r} (op {e.node.op_name!r}), which MXNet's "
                             "operator does not have")
        return list(r)

    def node(self, i: int, n: Node) -> None:
        self.where = where = _where(i, n)
        user = {}
        for k, v in n.user_attrs.items():
            if k == LITERALS or k == _MARK or (n.is_constant and k in _CONST_KEYS):
                raise ValueError(f"graph_to_json: {where}: user attribute {k!r} collides "
                                 "with a reserved attribute")
            user[k] = v if isinstance(v, str) else _fmt_attr(where, k, v)
        if n.op is None:
            attrs = _const_attrs(where, n.value) if n.is_constant else {}
            j = self.emit("null", n.name, {}, [], 1, raw={**attrs, **user})
            self.refs[n.id] = [[j, 0]]
            return
        if REGISTRY.get(n.op.name) is not n.op:
            raise ValueError(f"graph_to_json: {where}: the operator is not in the registry "
                             "(a fused kernel or a local operator), so the graph cannot be "
                             "saved; save it before optimize() fuses operators")
        for k in n.attrs:
            if k not in n.op.attrs:
                raise ValueError(f"graph_to_json: {where}: attribute {k!r} is not one of the "
                                 f"operator's ({', '.join(n.op.attrs) or 'none'}), so the "
                                 "file would not load")
        ins = [self.ref(e, f"input {p}") if isinstance(e, Entry) else e
               for p, e in enumerate(n.inputs)]
        start = len(self.nodes)
        try:
            outs = lower_node(self, n, ins)
        except Unsupported as e:
            del self.nodes[start:], self.counts[start:]
            if self.strict:
                raise ValueError(
                    f"graph_to_json: {where}: MXNet 1.9 cannot load this node: {e}; export "
                    "it with mxnet_compatible=False (a file only kbackend reads), or build "
                    "the model from operators MXNet has") from None
            outs = self.ours(n, ins)
        else:
            self.lowered.add(n.id)
            if user:
                self.nodes[-1].setdefault("attrs", {}).update(user)
        self.refs[n.id] = outs

    def ours(self, n: Node, ins: list) -> list:
        """``n`` in our own spelling (only kbackend reads it)."""
        attrs = {k: _fmt_attr(self.where, k, v) for k, v in n.attrs.items()}
        attrs[_MARK] = "1"
        literals = {str(p): _fmt_literal(self.where, p, v)
                    for p, v in enumerate(ins) if not isinstance(v, list)}
        if literals:
            attrs[LITERALS] = json.dumps(literals)
        attrs.update({k: v if isinstance(v, str) else _fmt_attr(self.where, k, v)
                      for k, v in n.user_attrs.items()})
        j = self.emit(n.op.name, n.name, {}, [v for v in ins if isinstance(v, list)],
                      n.num_outputs, raw=attrs)
        return [[j, k] for k in range(n.num_outputs)]

    def updates(self, updates: dict) -> list:
        """``Graph.updates`` that MXNet's in-place auxiliary states do not imply."""
        flat = []
        for var, e in updates.items():
            if not var.is_variable:
                raise ValueError(f"graph_to_json: {var.name!r} is updated but is not a "
                                 "variable")
            node = e.node
            if node.id in self.lowered and node.op is not None and any(
                    out == e.index and pos < len(node.inputs)
                    and node.inputs[pos] == Entry(var, 0)
                    for pos, out in (node.op.updates or {}).items()):
                continue
            src = self.refs[node.id][e.index]
            if src is None or self.strict:
                raise ValueError(f"graph_to_json: the update of variable {var.name!r} by "
                                 f"{node.name!r} (op {node.op_name!r}) has no MXNet spelling "
                                 "(MXNet updates only operators' auxiliary states)")
            flat += [self.refs[var.id][0][0], *src]
        return flat


def _fmt_attr(where, key, v) -> str:
    try:
        return format_value(v)
    except TypeError as e:
        raise ValueError(f"graph_to_json: {where}: attribute {key!r} cannot be saved: {e}") \
            from None


def _fmt_literal(where, pos, v):
    if isinstance(v, numpy.generic):
        return [v.dtype.name, format_value(v.item())]
    if v is None or isinstance(v, (bool, int, float, str)):
        return format_value(v)
    raise ValueError(f"graph_to_json: {where}: input {pos} is a {type(v).__name__}, "
                     "which cannot be saved (only arrays, scalars and None)")


def _const_attrs(where, value) -> dict:
    if hasattr(value, "asnumpy"):
        arr = value.asnumpy()
    elif hasattr(value, "get") and not isinstance(value, numpy.ndarray):
        arr = value.get()  # CuPy
    else:
        arr = numpy.asarray(value)
    try:
        dt = as_dtype(arr.dtype)
    except TypeError:
        raise ValueError(f"graph_to_json: {where}: a constant of dtype {arr.dtype} cannot "
                         "be saved") from None
    stored = arr.view(_BITS[dt]) if dt in _BITS else arr
    stored = numpy.ascontiguousarray(stored, dtype=stored.dtype.newbyteorder("<"))
    return {"__const__": "1", "__shape__": format_value(tuple(arr.shape)),
            "__dtype__": dt.name,
            "__value__": base64.b64encode(stored.tobytes()).decode("ascii")}


def save_graph(graph, path) -> None:
    """Write the graph's JSON to ``path`` atomically (temporary file, fsync, rename).

    Args:
        graph: the graph (see :func:`graph_to_json`).
        path: the file name (``*-symbol.json``).

    Example:
        >>> import os, tempfile
        >>> from core.ops.registry import REGISTRY
        >>> from core.symbol.graph import Entry, Graph, Node
        >>> x = Node(None, "x")
        >>> g = Graph([Entry(Node(REGISTRY["exp"], "exp0", [Entry(x, 0)]), 0)])
        >>> path = os.path.join(tempfile.mkdtemp(), "net-symbol.json")
        >>> save_graph(g, path)
        >>> [n.op_name for n in load_graph(path).topo()]
        ['null', 'exp']
    """
    from ..serialization import atomic_write

    data = graph_to_json(graph).encode("utf-8")
    atomic_write(os.fspath(path), lambda f: f.write(data))


def load_graph(path) -> Graph:
    """Read a graph written by :func:`save_graph` (or by MXNet 1.x).

    Args:
        path: the file name.

    Returns:
        The graph.

    Raises:
        ValueError: naming the file and the node for anything invalid.
    """
    with open(os.fspath(path), "rb") as f:
        data = f.read()
    try:
        return graph_from_json(data)
    except ValueError as e:
        raise ValueError(f"{os.fspath(path)}: {e}") from None


def graph_from_json(text) -> Graph:
    """Read a graph from MXNet symbol JSON (ours or MXNet 1.x's); see the module doc.

    Args:
        text: the JSON text (str or bytes).

    Returns:
        The graph (node ``avals`` unknown except for constants).

    Raises:
        ValueError: malformed JSON, missing keys, unknown operators or attributes,
            attribute values that do not parse, bad references; the message names the
            node by index, name and operator.
    """
    if isinstance(text, (bytes, bytearray)):
        text = text.decode("utf-8")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"graph JSON: malformed JSON: {e}") from None
    if not isinstance(doc, dict):
        raise ValueError(  # noqa: TRY004 - a malformed file, not a caller's type error
            f"graph JSON: expected an object with 'nodes' and 'heads', got {type(doc).__name__}")
    return _Loader(doc).load()


def variable_aval(node: Node):
    """The shape and dtype a variable's ``__shape__``/``__dtype__`` attributes give, or
    None when they do not give a complete shape (MXNet writes unknown dims as 0)."""
    text = node.user_attrs.get("__shape__")
    if text is None:
        return None
    try:
        shape = parse_value(text)
    except ParseError:
        return None
    if not (isinstance(shape, (tuple, list)) and all(type(d) is int and d > 0 for d in shape)):
        return None
    dt = node.user_attrs.get("__dtype__", "float32")
    if isinstance(dt, str) and dt.strip().isdigit():
        dt = MX_DTYPE_NAMES.get(int(dt), "float32")
    try:
        return Aval(shape, as_dtype(dt))
    except TypeError:
        return None
