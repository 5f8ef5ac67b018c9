"""Graphs to and from JSON in MXNet's symbol layout (``*-symbol.json``).

The file is MXNet 1.x's symbol JSON::

    {"nodes": [{"op": "FullyConnected", "name": "fc0",
                "attrs": {"num_hidden": "128", "no_bias": "False"},
                "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]}, ...],
     "arg_nodes": [0, 1, 2], "node_row_ptr": [0, 1, 2, 3, 4],
     "heads": [[3, 0, 0]],
     "attrs": {"mxnet_version": ["int", 10901], "kbackend_version": ["int", 1]}}

Nodes come inputs first; ``op`` is the registry name (``"null"`` for variables and
constants); an input or head ``[node, output, 0]`` names one output of an earlier node.
Attribute values are strings written as MXNet writes them (``"128"``, ``"(3, 3)"``,
``"True"``, ``"None"``, ``"relu"``, ``"0.9"``) and read back by a small strict parser
(:func:`parse_value`; no ``eval``, no pickle): ints, floats (``inf``, ``nan``), bools,
None, quoted strings, tuples and lists (nested), ``slice(a, b, c)``, ``Ellipsis``,
integer index arrays ``array([0, 2], 'int64')`` (in indexing keys), and
``"__is_train__"`` for :data:`~core.symbol.graph.TRAIN`. Other text is a plain string.
(The value parser lives in :mod:`.json_values`, the MXNet 1.x names in :mod:`.json_mxnet`.)

What MXNet's layout has no place for goes into reserved attributes:

- literal inputs (a Python scalar or None in an input slot, as in ``x + 1``): the node's
  ``"__literals__"`` holds a JSON object ``{"position": "value"}`` (NumPy scalars as
  ``["dtype", "value"]``); ``inputs`` lists only the array inputs;
- constants (arrays captured while tracing): ``"null"`` nodes with ``"__const__": "1"``,
  ``"__shape__"``, ``"__dtype__"`` and ``"__value__"``, the bytes in little-endian order,
  base64-encoded (bfloat16 and float8 as their bits);
- ``Graph.updates``: the top-level ``"kbackend_updates": ["list_int", [variable node,
  node, output, ...]]`` (flat triples; a type MXNet's loader knows).

Variables keep their ``user_attrs`` (``__shape__``, ``__dtype__``, ``__lr_mult__``, ...)
as their attributes. Shapes of other nodes are not stored: shape inference recomputes
them.

Reading validates everything and raises ValueError naming the node (index, name, op):
malformed JSON, missing keys, unknown operators (MXNet 1.x spellings that are exactly
one of ours are accepted, e.g. ``Flatten``, ``elemwise_add``, ``_plus_scalar``),
unknown attributes, values that do not parse, and references to nodes or outputs that
do not exist or come later. Files written by MXNet get its conventions: attribute
values convert to the type of the operator's default (``"[3, 3]"`` to a tuple, ``"1"``
to ``1.0`` or ``True``), and mode-dependent operators without a ``training`` attribute
(Dropout, BatchNorm) take :data:`TRAIN`.

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

from ..dtypes import as_dtype, bfloat16, float8_e4m3fn, float8_e5m2
from ..ops.registry import REGISTRY, Aval
from .graph import TRAIN, Entry, Graph, Node
from .json_lower import Emitter, Unsupported, lower_node
from .json_mxnet import EXPANSIONS, HIDDEN_KEYS, MX_DTYPE_NAMES, _resolve_op
from .json_values import ParseError, coerce, format_value, parse_value

MXNET_VERSION = 10901
FORMAT_VERSION = 2  # 1: every node in our spelling; 2: MXNet's, ours marked _MARK
LITERALS = "__literals__"
_MARK = "__kbackend__"
_CONST_KEYS = ("__const__", "__shape__", "__dtype__", "__value__")
_UPDATES = "kbackend_updates"
_BITS = {bfloat16: numpy.dtype("<u2"), float8_e4m3fn: numpy.dtype("u1"),
         float8_e5m2: numpy.dtype("u1")}

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


# =========================================================================== reading
class _Loader:
    def __init__(self, doc: dict):
        self.doc = doc
        top = doc.get("attrs", {})
        if not isinstance(top, dict):
            raise ValueError("graph JSON: 'attrs' must be an object")  # noqa: TRY004
        self.top = top
        version = _top_int(top, "kbackend_version")
        self.all_ours = version == 1  # v2 marks our own nodes one by one
        self.ours = version is not None
        mx_version = _top_int(top, "mxnet_version")
        # MXNet upgrades files older than itself (src/nnvm/legacy_json_util.cc); a file
        # without a version is 0.8.0's.
        self.legacy = None if self.ours else (800 if mx_version is None else mx_version)
        self.nodes: list[Node] = []
        self.aux: dict[Node, Entry] = {}

    def fail(self, i, nj, msg):
        name = nj.get("name") if isinstance(nj, dict) else None
        op = nj.get("op") if isinstance(nj, dict) else None
        raise ValueError(f"graph JSON: node {i} ({name!r}, op {op!r}): {msg}")

    # ------------------------------------------------------------ outputs per node
    def output_counts(self, nodes_json) -> list[int]:
        row_ptr = self.doc.get("node_row_ptr")
        n = len(nodes_json)
        if row_ptr is not None:
            ok = (isinstance(row_ptr, list) and len(row_ptr) == n + 1
                  and all(type(r) is int for r in row_ptr) and row_ptr[0] == 0
                  and all(b > a for a, b in itertools.pairwise(row_ptr)))
            if not ok:
                raise ValueError(f"graph JSON: 'node_row_ptr' must list {n + 1} increasing "
                                 "integers from 0 (outputs per node)")
            return [b - a for a, b in itertools.pairwise(row_ptr)]
        counts = [1] * n
        refs = [r for nj in nodes_json if isinstance(nj, dict)
                for r in (nj.get("inputs") or [])]
        refs += list(self.doc.get("heads") or [])
        for r in refs:
            if (isinstance(r, list) and len(r) >= 2 and type(r[0]) is int
                    and type(r[1]) is int and 0 <= r[0] < n and r[1] >= counts[r[0]]):
                counts[r[0]] = r[1] + 1
        return counts

    # ------------------------------------------------------------ references
    def ref(self, r, limit: int, what: str, fail):
        if not (isinstance(r, list) and len(r) in (2, 3)
                and all(type(x) is int for x in r)):
            fail(f"{what} {r!r} must be [node, output, version]")
        src, idx = r[0], r[1]
        if src < 0 or src >= len(self.doc["nodes"]):
            fail(f"{what} {r!r} refers to node {src}, out of range "
                 f"(the graph has {len(self.doc['nodes'])} nodes)")
        if src >= limit:
            fail(f"{what} {r!r} refers to node {src}, which does not come before it "
                 "(nodes must be listed inputs first)")
        node = self.nodes[src]
        if idx < 0 or idx >= node.num_outputs:
            fail(f"{what} {r!r} refers to output {idx} of node {src} ({node.name!r}, op "
                 f"{node.op_name!r}), which has {node.num_outputs} output(s)")
        return Entry(node, idx)

    # ------------------------------------------------------------ one node
    def node(self, i: int, nj, num_outputs: int) -> Node:
        def fail(msg):
            self.fail(i, nj, msg)

        if not isinstance(nj, dict):
            fail(f"must be an object, got {type(nj).__name__}")
        for key in ("op", "name"):
            if key not in nj:
                fail(f"missing key {key!r}")
            if not isinstance(nj[key], str):
                fail(f"{key!r} must be a string")
        attrs: dict[str, str] = {}
        for key in ("param", "attr", "attrs"):  # MXNet < 0.9 used "param" and "attr"
            a = nj.get(key, {})
            if not isinstance(a, dict):
                fail(f"{key!r} must be an object")
            for k, v in a.items():
                if not isinstance(v, str):
                    fail(f"attribute {k!r} must be a string, got {json.dumps(v)}")
            attrs.update(a)
        mine = self.all_ours or (self.ours and attrs.pop(_MARK, None) == "1")
        inputs = nj.get("inputs", [] if nj["op"] == "null" else None)
        if not isinstance(inputs, list):
            fail("missing key 'inputs'" if inputs is None else "'inputs' must be a list")
        if nj["op"] == "null":
            if inputs:
                fail("a variable or constant has no inputs")
            if attrs.get("__const__") in ("1", "True"):
                return self.constant(attrs, nj["name"], fail)
            if self.legacy is not None and self.legacy < MXNET_VERSION:
                attrs = {(f"__{k}__" if k in HIDDEN_KEYS else k): v for k, v in attrs.items()}
            return Node(None, nj["name"], user_attrs=attrs)
        return self.op_node(i, nj, attrs, inputs, num_outputs, fail, mine)

    def constant(self, attrs, name, fail) -> Node:
        for k in _CONST_KEYS[1:]:
            if k not in attrs:
                fail(f"a constant needs attribute {k!r}")
        try:
            shape = parse_value(attrs["__shape__"])
            dt = as_dtype(attrs["__dtype__"])
            raw = base64.b64decode(attrs["__value__"].encode("ascii"), validate=True)
        except (ParseError, TypeError, ValueError) as e:
            fail(f"bad constant: {e}")
        if not (isinstance(shape, tuple) and all(type(d) is int and d >= 0 for d in shape)):
            fail(f"bad constant shape {attrs['__shape__']!r}")
        stored = _BITS.get(dt, dt.newbyteorder("<"))
        count = int(numpy.prod(shape, dtype=numpy.int64))
        if len(raw) != count * stored.itemsize:
            fail(f"constant of shape {shape} and dtype {dt.name} needs "
                 f"{count * stored.itemsize} bytes, got {len(raw)}")
        arr = numpy.frombuffer(raw, dtype=stored).reshape(shape)
        arr = arr.view(dt) if dt in _BITS else arr.astype(dt)
        user = {k: v for k, v in attrs.items() if k not in _CONST_KEYS}
        return Node(None, name, avals=[Aval(shape, dt)], user_attrs=user, value=arr.copy())

    def op_node(self, i, nj, attrs, inputs, num_outputs, fail, mine) -> Node:
        if not mine and nj["op"] in EXPANSIONS and nj["op"] not in REGISTRY:
            entries = [self.ref(r, i, "input", fail) for r in inputs]
            user = {k: attrs.pop(k) for k in list(attrs) if k.startswith("__")}
            if len(entries) != 1:
                fail(f"has {len(entries)} inputs, but {nj['op']!r} takes one (data)")
            try:
                node = EXPANSIONS[nj["op"]](nj["name"], attrs, entries[0])
            except ValueError as e:
                fail(str(e))
            node.user_attrs.update(user)
            return node
        op, defaults, scalar_pos, ignore = _resolve_op(nj["op"], mine)
        if op is None:
            fail(f"unknown operator {nj['op']!r} (not in the registry, and not an MXNet "
                 "1.x name of one of its operators)")
        entries = [self.ref(r, i, "input", fail) for r in inputs]
        if self.legacy is not None and self.legacy < MXNET_VERSION:
            attrs = _upgrade(op, nj["name"], attrs, entries, self.legacy)
        if op.name == "RNN" and not mine and len(entries) == 4 and \
                attrs.get("mode", "").strip("'\"") != "lstm":
            entries.insert(3, None)  # sequence_length without state_cell (not LSTM)
        literals = {}
        if LITERALS in attrs:
            literals = self.literals(attrs.pop(LITERALS), len(entries), fail)
        if scalar_pos is not None:
            literals[scalar_pos] = self.scalar(attrs, fail)
        given, user = {}, {}
        for k, text in attrs.items():
            if k in op.attrs:
                given[k] = self.value(op, k, text, defaults.get(k, op.attrs[k]), fail, mine)
            elif k.startswith("__") and k.endswith("__") and len(k) > 4:
                user[k] = text
            elif k in ignore or (k == "ctx" and op.needs_ctx and not mine):
                continue  # MXNet's creation operators name their device; ours take ctx
            else:
                accepted = ", ".join(op.attrs) or "none"
                fail(f"unknown attribute {k!r} (operator {op.name!r} accepts: {accepted})")
        full = dict(op.attrs)
        full.update(defaults)
        full.update(given)
        if "training" in op.attrs and "training" not in given:
            full["training"] = TRAIN  # MXNet: follows the executor's is_train
        if self.legacy is not None and self.legacy < 900:
            entries = self.missing_inputs(op, nj["name"], entries, literals, user)
        slots = self.slots(op, entries, literals, fail)
        if op.name == "RNN" and not mine:
            slots = _batch_sized_states(slots)
        if not mine:  # MXNet may count outputs differently (BatchNorm: 3, ours 5)
            num_outputs = max(num_outputs, _op_outputs(op, full))
        node = Node(op, nj["name"], slots, full, num_outputs=num_outputs, user_attrs=user)
        if not mine:  # MXNet updates auxiliary states in place (moving statistics)
            for pos, out in (op.updates or {}).items():
                e = slots[pos] if pos < len(slots) else None
                if isinstance(e, Entry) and e.node.is_variable and out < num_outputs:
                    self.aux[e.node] = Entry(node, out)
        return node

    def missing_inputs(self, op, name, entries, literals, user) -> list:
        """MXNet before 0.9 did not store auxiliary states: MXNet adds a variable named
        ``<node>_<input>`` for each missing input, with the node's hidden attributes."""
        if op.variadic:
            return entries
        have = len(entries) + len(literals)
        extra = [Entry(Node(None, f"{name}_{arg}", user_attrs=dict(user)), 0)
                 for arg in op.inputs[have:] if not arg.endswith("?")]
        if op.name == "BatchNorm":  # its moving statistics' initializers (MXNet 0.9.4)
            for e, pos in zip(extra, range(have, len(op.inputs))):
                init = {3: '["zero", {}]', 4: '["one", {}]'}.get(pos)
                if init:
                    e.node.user_attrs.setdefault("__init__", init)
        return entries + extra

    def value(self, op, key, text, default, fail, mine):
        try:
            v = parse_value(text)
            return v if mine else coerce(v, default)
        except (ParseError, TypeError) as e:
            fail(f"attribute {key}={text!r} does not parse: {e}")

    def literals(self, text, n_entries, fail) -> dict:
        try:
            m = json.loads(text)
        except json.JSONDecodeError as e:
            fail(f"{LITERALS} is not valid JSON: {e}")
        if not isinstance(m, dict):
            fail(f"{LITERALS} must be a JSON object {{position: value}}")
        out = {}
        for k, v in m.items():
            if not k.isdigit() or int(k) > n_entries + len(m):
                fail(f"{LITERALS}: bad input position {k!r}")
            try:
                if isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v):
                    val = as_dtype(v[0]).type(parse_value(v[1]))
                elif isinstance(v, str):
                    val = parse_value(v)
                    if val is TRAIN or isinstance(val, (tuple, list, slice)):
                        raise ParseError("a literal input is a scalar, a string or None")
                else:
                    raise ParseError("must be a string or [dtype, value]")
            except (ParseError, TypeError, ValueError) as e:
                fail(f"{LITERALS}: input {k}: {json.dumps(v)} does not parse: {e}")
            out[int(k)] = val
        return out

    def scalar(self, attrs, fail):
        text = attrs.pop("scalar", None)
        is_int = attrs.pop("is_int", None)
        if text is None:
            fail("missing attribute 'scalar'")
        try:
            v = parse_value(text)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ParseError("expected a number")
        except ParseError as e:
            fail(f"attribute scalar={text!r} does not parse: {e}")
        if is_int is None:
            # MXNet before is_int cast the scalar to the array's dtype: an integral
            # scalar is an int (weak with float arrays, exact with int arrays).
            return int(v) if isinstance(v, float) and v.is_integer() else v
        return int(v) if is_int.strip() in ("1", "True", "true") else v

    def slots(self, op, entries, literals, fail) -> list:
        total = len(entries) + len(literals)
        if any(p >= total for p in literals):
            fail(f"{LITERALS}: positions {sorted(literals)} do not fit {total} inputs")
        it = iter(entries)
        slots = [literals[p] if p in literals else next(it) for p in range(total)]
        if op.variadic:
            return slots
        names = op.inputs
        if total > len(names):
            fail(f"has {total} inputs, but {op.name!r} takes at most {len(names)} "
                 f"({', '.join(names)})")
        missing = names[total:]
        if not all(m.endswith("?") for m in missing):
            fail(f"has {total} inputs, but {op.name!r} needs {', '.join(names)}")
        return slots + [None] * len(missing)

    # ------------------------------------------------------------ whole graph
    def load(self) -> Graph:
        doc = self.doc
        for key in ("nodes", "heads"):
            if key not in doc:
                raise ValueError(f"graph JSON: missing key {key!r}")
            if not isinstance(doc[key], list):
                raise ValueError(f"graph JSON: {key!r} must be a list")  # noqa: TRY004
        nodes_json = doc["nodes"]
        counts = self.output_counts(nodes_json)
        for i, nj in enumerate(nodes_json):
            self.nodes.append(self.node(i, nj, counts[i]))
        n = len(self.nodes)
        outputs = []
        for k, r in enumerate(doc["heads"]):
            def fail(msg, k=k):
                raise ValueError(f"graph JSON: head {k}: {msg}")
            outputs.append(self.ref(r, n, "head", fail))
        arg_nodes = doc.get("arg_nodes", [])
        if not isinstance(arg_nodes, list) or not all(
                type(a) is int and 0 <= a < n and self.nodes[a].op is None for a in arg_nodes):
            raise ValueError("graph JSON: 'arg_nodes' must list indices of 'null' nodes")
        return Graph(outputs, self.updates())

    def updates(self) -> dict:
        spec = self.top.get(_UPDATES)
        if spec is None:
            return self.aux
        out = dict(self.aux)
        flat = spec[1] if isinstance(spec, list) and len(spec) == 2 \
            and isinstance(spec[0], str) else spec
        if isinstance(flat, list) and all(isinstance(t, list) for t in flat):
            flat = [x for t in flat for x in t]
        if not (isinstance(flat, list) and len(flat) % 3 == 0
                and all(type(x) is int for x in flat)):
            raise ValueError(f"graph JSON: {_UPDATES!r} must be ['list_int', [variable node, "
                             "node, output, ...]]")
        n = len(self.nodes)
        for v, src, idx in zip(flat[0::3], flat[1::3], flat[2::3]):
            if not (0 <= v < n and self.nodes[v].is_variable):
                raise ValueError(f"graph JSON: {_UPDATES}: node {v} is not a variable")
            if not (0 <= src < n and 0 <= idx < self.nodes[src].num_outputs):
                raise ValueError(f"graph JSON: {_UPDATES}: [{src}, {idx}] is not an output "
                                 "of a node of the graph")
            out[self.nodes[v]] = Entry(self.nodes[src], idx)
        return out


def _top_int(top: dict, key: str):
    """A top-level ``["int", n]`` attribute (None when absent)."""
    v = top.get(key)
    if v is None:
        return None
    if isinstance(v, list) and len(v) == 2 and v[0] == "int" and type(v[1]) is int:
        return v[1]
    if type(v) is int:
        return v
    raise ValueError(f"graph JSON: top-level attribute {key!r} must be [\"int\", n], got "
                     f"{json.dumps(v)}")


def _batch_sized_states(slots: list) -> list:
    """MXNet's Gluon RNN layers export their zero begin states as ``_zeros`` of shape
    ``(layers * directions, 0, hidden)``: the 0 is the batch size, which MXNet's shape
    inference fills from the data. Ours: the zeros broadcast to the data's batch axis."""
    out = list(slots)
    for pos in (2, 3):
        e = out[pos] if pos < len(out) else None
        if not (isinstance(e, Entry) and e.node.op is not None
                and e.node.op.name in ("zeros", "ones")):
            continue
        shape = tuple(e.node.attrs.get("shape") or ())
        if len(shape) != 3 or shape[1] != 0:
            continue
        one = e.node.op
        small = Node(one, e.node.name, [], dict(e.node.attrs, shape=(shape[0], 1, shape[2])),
                     user_attrs=e.node.user_attrs)
        like = REGISTRY["broadcast_like"]
        out[pos] = Entry(Node(like, f"{e.node.name}_like_data", [Entry(small, 0), out[0]],
                              dict(like.attrs, lhs_axes=(1,), rhs_axes=(1,))), 0)
    return out


def _upgrade(op, name: str, attrs: dict, entries: list, version: int) -> dict:
    """MXNet's upgrade of a node of a file older than 1.9.1: hidden keys spelled without
    underscores (``ctx_group`` -> ``__ctx_group__``; ``weight_lr_mult`` goes to the
    ``weight`` input's variable as ``__lr_mult__``); before 0.9.5, argmax/argmin's
    ``axis=-1`` meant "all axes"."""
    out = {}
    for k, v in attrs.items():
        key = next((h for h in HIDDEN_KEYS if k == h or k.endswith("_" + h)), None)
        if key is None:
            out[k] = v
        elif k == key:
            out[f"__{key}__"] = v
        else:
            arg = k[:-len(key) - 1]
            pos = op.inputs.index(arg) if arg in op.inputs else \
                op.inputs.index(arg + "?") if arg + "?" in op.inputs else None
            e = entries[pos] if pos is not None and pos < len(entries) else None
            if isinstance(e, Entry) and e.node.is_variable:
                e.node.user_attrs[f"__{key}__"] = v
            else:
                out[f"__{k}__"] = v  # MXNet keeps it on the node
    if version < 905 and op.name in ("argmax", "argmin") and out.get("axis", "").strip() == "-1":
        del out["axis"]
    return out


def _op_outputs(op, attrs) -> int:
    """How many outputs ``op`` has (at least one past each updated output)."""
    least = max((out + 1 for out in (op.updates or {}).values()), default=1)
    try:
        from .symbol import op_num_outputs
    except ImportError:
        return least
    try:
        return max(least, int(op_num_outputs(op, attrs)))
    except (ValueError, TypeError):
        return least


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
