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
from .json_mxnet import MX_DTYPE_NAMES, _resolve_op
from .json_values import ParseError, coerce, format_value, parse_value

MXNET_VERSION = 10901
FORMAT_VERSION = 1
LITERALS = "__literals__"
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


def graph_to_json(graph, indent: int | None = 2) -> str:
    """The graph as MXNet symbol JSON (see the module doc).

    Args:
        graph: a :class:`~core.symbol.graph.Graph` (or an object with a ``.graph``).
        indent: JSON indentation (None: one line).

    Returns:
        The JSON text.

    Raises:
        ValueError: naming the node, for operators that are not in the registry
            (fused kernels: save before fusion) and attributes that cannot be written.

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
    nodes = graph.topo()
    index = {n.id: i for i, n in enumerate(nodes)}
    out = []
    row_ptr = [0]
    for i, n in enumerate(nodes):
        out.append(_node_json(i, n, index))
        row_ptr.append(row_ptr[-1] + n.num_outputs)
    attrs = {"mxnet_version": ["int", MXNET_VERSION], "kbackend_version": ["int", FORMAT_VERSION]}
    if graph.updates:
        flat = []
        for var, e in graph.updates.items():
            if not var.is_variable:
                raise ValueError(f"graph_to_json: {_where(index[var.id], var)} is updated "
                                 "but is not a variable")
            flat += [index[var.id], index[e.node.id], e.index]
        attrs[_UPDATES] = ["list_int", flat]
    doc = {"nodes": out,
           "arg_nodes": [i for i, n in enumerate(nodes) if n.op is None],
           "node_row_ptr": row_ptr,
           "heads": [[index[e.node.id], e.index, 0] for e in graph.outputs],
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


def _node_json(i: int, n: Node, index: dict) -> dict:
    where = _where(i, n)
    attrs: dict[str, str] = {}
    if n.op is not None:
        if REGISTRY.get(n.op.name) is not n.op:
            raise ValueError(f"graph_to_json: {where}: the operator is not in the registry "
                             "(a fused kernel or a local operator), so the graph cannot be "
                             "saved; save it before optimize() fuses operators")
        for k, v in n.attrs.items():
            if k not in n.op.attrs:
                raise ValueError(f"graph_to_json: {where}: attribute {k!r} is not one of the "
                                 f"operator's ({', '.join(n.op.attrs) or 'none'}), so the "
                                 "file would not load")
            attrs[k] = _fmt_attr(where, k, v)
    elif n.is_constant:
        attrs.update(_const_attrs(where, n.value))
    for k, v in n.user_attrs.items():
        if k in attrs or k == LITERALS or (n.is_constant and k in _CONST_KEYS):
            raise ValueError(f"graph_to_json: {where}: user attribute {k!r} collides with "
                             "an operator or reserved attribute")
        attrs[k] = v if isinstance(v, str) else _fmt_attr(where, k, v)
    inputs = []
    literals = {}
    for pos, e in enumerate(n.inputs):
        if isinstance(e, Entry):
            inputs.append([index[e.node.id], e.index, 0])
        else:
            literals[str(pos)] = _fmt_literal(where, pos, e)
    if literals:
        attrs[LITERALS] = json.dumps(literals)
    d = {"op": n.op_name, "name": n.name}
    if attrs:
        d["attrs"] = attrs
    d["inputs"] = inputs
    return d


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
        self.ours = "kbackend_version" in top
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
        inputs = nj.get("inputs", [] if nj["op"] == "null" else None)
        if not isinstance(inputs, list):
            fail("missing key 'inputs'" if inputs is None else "'inputs' must be a list")
        if nj["op"] == "null":
            if inputs:
                fail("a variable or constant has no inputs")
            if attrs.get("__const__") in ("1", "True"):
                return self.constant(attrs, nj["name"], fail)
            return Node(None, nj["name"], user_attrs=attrs)
        return self.op_node(i, nj, attrs, inputs, num_outputs, fail)

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

    def op_node(self, i, nj, attrs, inputs, num_outputs, fail) -> Node:
        op, defaults, scalar_pos = _resolve_op(nj["op"], self.ours)
        if op is None:
            fail(f"unknown operator {nj['op']!r} (not in the registry, and not an MXNet "
                 "1.x name of one of its operators)")
        entries = [self.ref(r, i, "input", fail) for r in inputs]
        literals = {}
        if LITERALS in attrs:
            literals = self.literals(attrs.pop(LITERALS), len(entries), fail)
        if scalar_pos is not None:
            literals[scalar_pos] = self.scalar(attrs, fail)
        given, user = {}, {}
        for k, text in attrs.items():
            if k in op.attrs:
                given[k] = self.value(op, k, text, defaults.get(k, op.attrs[k]), fail)
            elif k.startswith("__") and k.endswith("__") and len(k) > 4:
                user[k] = text
            elif k == "ctx" and op.needs_ctx and not self.ours:
                continue  # MXNet's creation operators name their device; ours take ctx
            else:
                accepted = ", ".join(op.attrs) or "none"
                fail(f"unknown attribute {k!r} (operator {op.name!r} accepts: {accepted})")
        full = dict(op.attrs)
        full.update(defaults)
        full.update(given)
        if "training" in op.attrs and "training" not in given:
            full["training"] = TRAIN  # MXNet: follows the executor's is_train
        slots = self.slots(op, entries, literals, fail)
        if not self.ours:  # MXNet may count outputs differently (BatchNorm: 3, ours 5)
            num_outputs = max(num_outputs, _op_outputs(op, full))
        node = Node(op, nj["name"], slots, full, num_outputs=num_outputs, user_attrs=user)
        if not self.ours:  # MXNet updates auxiliary states in place (moving statistics)
            for pos, out in (op.updates or {}).items():
                e = slots[pos] if pos < len(slots) else None
                if isinstance(e, Entry) and e.node.is_variable and out < num_outputs:
                    self.aux[e.node] = Entry(node, out)
        return node

    def value(self, op, key, text, default, fail):
        try:
            v = parse_value(text)
            return v if self.ours else coerce(v, default)
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
        flat = spec[1] if isinstance(spec, list) and len(spec) == 2 \
            and isinstance(spec[0], str) else spec
        if isinstance(flat, list) and all(isinstance(t, list) for t in flat):
            flat = [x for t in flat for x in t]
        if not (isinstance(flat, list) and len(flat) % 3 == 0
                and all(type(x) is int for x in flat)):
            raise ValueError(f"graph JSON: {_UPDATES!r} must be ['list_int', [variable node, "
                             "node, output, ...]]")
        out = {}
        n = len(self.nodes)
        for v, src, idx in zip(flat[0::3], flat[1::3], flat[2::3]):
            if not (0 <= v < n and self.nodes[v].is_variable):
                raise ValueError(f"graph JSON: {_UPDATES}: node {v} is not a variable")
            if not (0 <= src < n and 0 <= idx < self.nodes[src].num_outputs):
                raise ValueError(f"graph JSON: {_UPDATES}: [{src}, {idx}] is not an output "
                                 "of a node of the graph")
            out[self.nodes[v]] = Entry(self.nodes[src], idx)
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
