"""Reading MXNet symbol JSON into a graph: the loader behind
:func:`core.symbol.json_io.graph_from_json` (see that module's doc for the format).

:class:`_Loader` validates every node and reference and names the node (index, name,
operator) in its errors; nodes in MXNet's spelling map to our operators through
:mod:`.json_mxnet`, nodes marked as ours (``"__kbackend__": "1"``, or every node of a
format-version-1 file) are read as written. Files older than MXNet 1.9.1 get MXNet's own
upgrades (``src/nnvm/legacy_json_util.cc``): hidden keys spelled without underscores,
auxiliary inputs missing before 0.9, ``argmax(axis=-1)`` before 0.9.5; Gluon RNN layers'
zero begin states of batch size 0 are broadcast to the data's batch.
"""
from __future__ import annotations

import base64
import itertools
import json

import numpy

from ..dtypes import as_dtype, bfloat16, float8_e4m3fn, float8_e5m2
from ..ops.registry import REGISTRY, Aval
from .graph import TRAIN, Entry, Graph, Node
from .json_mxnet import EXPANSIONS, HIDDEN_KEYS, _resolve_op
from .json_values import ParseError, coerce, parse_value

MXNET_VERSION = 10901
FORMAT_VERSION = 2  # 1: every node in our spelling; 2: MXNet's, ours marked _MARK
LITERALS = "__literals__"
_MARK = "__kbackend__"
_CONST_KEYS = ("__const__", "__shape__", "__dtype__", "__value__")
_UPDATES = "kbackend_updates"
_BITS = {bfloat16: numpy.dtype("<u2"), float8_e4m3fn: numpy.dtype("u1"),
         float8_e5m2: numpy.dtype("u1")}


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
