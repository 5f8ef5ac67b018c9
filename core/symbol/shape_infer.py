"""Shape and dtype inference over a graph (MXNet's ``InferShape``/``InferType`` passes).

:func:`infer_graph` fills in what it can learn of every entry's shape and dtype:

- forward, through each operator's ``infer`` rule (the same rule eager calls use);
  when some input dimensions are unknown, the rule runs twice with two different
  stand-in sizes, and the output dimensions that agree are known (so a batch size
  of 0, "unknown", flows through dense and convolution layers as MXNet's does);
- backward, as MXNet's operators do: parameters get their shapes from the data and
  the attributes (``FullyConnected`` weight ``(num_hidden, in_units)``, convolution
  weights from ``num_filter``/``kernel``/``num_group``/``layout``, normalization
  scales, ``Embedding``'s table, PReLU's gamma, the fused RNN's flat parameter vector
  and states), an elementwise binary operator's unknown operand takes the other's
  shape, and a shape-preserving unary operator's input takes its output's shape.
  Each operator declares its backward rule in its own ``defop`` block (``param_shapes=``,
  a :class:`~core.ops.param_shapes.ParamShapes`).

Shapes are tuples whose unknown dimensions are None (None for an unknown rank);
the MXNet 1.x convention "0 means unknown" is accepted in given shapes and in a
variable's ``__shape__`` attribute. Dtypes are numpy dtypes or None. Once any dtype is
known, variables left without one default to float32 (MXNet).

Example:
    >>> import numpy
    >>> from core.ops.registry import REGISTRY
    >>> from core.symbol.graph import Entry, Graph, Node
    >>> x = Node(None, "x")
    >>> w = Node(None, "w")
    >>> fc = Node(REGISTRY["FullyConnected"], "fc", [Entry(x, 0), Entry(w, 0), None],
    ...           {"num_hidden": 4, "no_bias": True, "flatten": True})
    >>> r = infer_graph(Graph([Entry(fc, 0)]), {"x": (2, 3)}, {"x": numpy.float32})
    >>> r.shape(Entry(w, 0)), r.shape(Entry(fc, 0))
    ((4, 3), (2, 4))
"""
from __future__ import annotations

import numbers

import numpy

from ..ops.infer import UNKNOWN_DIM_PROBES, agreed_dims, fill_unknown
from ..ops.registry import Aval
from .graph import TRAIN, Entry, Graph, Node
from .json_mxnet import MX_DTYPE_CODES, MX_DTYPE_NAMES  # __dtype__ holds these codes

_F32 = numpy.dtype("float32")


def _merge(old, new: tuple):
    """``new`` with its unknown (None) dimensions filled from ``old``; None when the two
    disagree (rank, or a dimension both know)."""
    if old is None:
        return new
    if len(old) != len(new) or any(a is not None and b is not None and a != b
                                   for a, b in zip(old, new)):
        return None
    return tuple(a if a is not None else b for a, b in zip(old, new))


def _read_shape(text: str) -> tuple:
    """``"(2, 0)"``/``"[2,3]"``/``"4"`` -> a tuple of ints (json_io's strict parser, no eval)."""
    # Imported when needed: json_io imports .symbol lazily, and .symbol imports this module,
    # so a module-level import here would be one edit away from an import cycle.
    from .json_io import parse_value

    t = text.strip()
    if t[:1] not in ("(", "["):
        t = f"({t})"  # "4", "2, 3" and "" read as "(4)", "(2, 3)" and "()"
    bad = ValueError(f"cannot read shape {text!r}: expected a tuple like '(2, 3)'")
    try:
        v = parse_value(t)
    except ValueError:
        raise bad from None
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        v = (v,)
    if not isinstance(v, (tuple, list)) or \
            not all(isinstance(d, numbers.Integral) and not isinstance(d, bool) for d in v):
        raise bad
    return tuple(int(d) for d in v)


def parse_shape(s) -> tuple | None:
    """A shape from a tuple/list or MXNet's ``"(2, 0)"`` string; 0 or None dims unknown."""
    if s is None:
        return None
    if isinstance(s, str):
        s = _read_shape(s)
    if isinstance(s, numbers.Integral):
        s = (s,)
    if not isinstance(s, (tuple, list)):
        raise TypeError(f"a shape must be a tuple of ints, got {s!r}")
    out = []
    for d in s:
        if d is None or (isinstance(d, numbers.Integral) and int(d) <= 0):
            out.append(None)
        elif isinstance(d, numbers.Integral):
            out.append(int(d))
        else:
            raise TypeError(f"a shape must be a tuple of ints, got {tuple(s)!r}")
    return tuple(out)


def parse_dtype(d) -> numpy.dtype | None:
    """A numpy dtype from a dtype, a name, or MXNet's integer code (also as a string)."""
    if d is None:
        return None
    if isinstance(d, str) and d.strip().lstrip("-").isdigit():
        d = int(d)
    if isinstance(d, numbers.Integral) and not isinstance(d, bool):
        if int(d) < 0:
            return None
        if int(d) not in MX_DTYPE_NAMES:
            raise ValueError(f"unknown MXNet dtype code {d}")
        d = MX_DTYPE_NAMES[int(d)]
    if d == "bfloat16":
        from ..dtypes import as_dtype

        return as_dtype(d)
    return numpy.dtype(d)


def dtype_code(dtype) -> str:
    """MXNet's code for ``dtype`` as the string ``__dtype__`` attributes hold."""
    name = "bfloat16" if isinstance(dtype, str) and dtype == "bfloat16" else \
        parse_dtype(dtype).name
    if name not in MX_DTYPE_CODES:
        raise ValueError(f"dtype {name} has no MXNet type code")
    return str(MX_DTYPE_CODES[name])


def _complete(shape) -> bool:
    return shape is not None and all(d is not None for d in shape)


def _fmt(shape) -> str:
    if shape is None:
        return "unknown"
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + \
        ("," if len(shape) == 1 else "") + ")"


class InferResult:
    """What inference learned: ``shape(entry)``, ``dtype(entry)`` (None when unknown)."""

    def __init__(self):
        self.shapes: dict[tuple[int, int], tuple | None] = {}
        self.dtypes: dict[tuple[int, int], numpy.dtype | None] = {}

    def shape(self, e: Entry):
        return self.shapes.get((e.node.id, e.index))

    def dtype(self, e: Entry):
        return self.dtypes.get((e.node.id, e.index))

    def aval(self, e: Entry) -> Aval | None:
        """The entry's Aval when its shape and dtype are both fully known."""
        s, d = self.shape(e), self.dtype(e)
        return Aval(s, d) if _complete(s) and d is not None else None


class _Inferrer:
    def __init__(self, graph: Graph, partial: bool):
        self.graph = graph
        self.partial = partial
        self.r = InferResult()
        self.changed = False
        self.from_open: set[int] = set()  # second round: nodes fed by open creation nodes
        self.preserving: dict[int, bool] = {}

    # ------------------------------------------------------------ knowledge
    def get(self, e):
        k = (e.node.id, e.index)
        return self.r.shapes.get(k), self.r.dtypes.get(k)

    def set_shape(self, e: Entry, shape, node: Node, why: str) -> None:
        if shape is None:
            return
        k = (e.node.id, e.index)
        old = self.r.shapes.get(k)
        new = _merge(old, tuple(shape))
        if new is None:
            raise ValueError(
                f"infer_shape: node {node.name!r} ({node.op_name}): {why} gives "
                f"{e.node.name!r}[{e.index}] the shape {_fmt(tuple(shape))}, but it has shape "
                f"{_fmt(old)}")
        if new != old:
            self.r.shapes[k] = new
            self.changed = True

    def suggest_shape(self, e: Entry, shape) -> None:
        """Fill unknown dimensions of ``e`` from a backward rule's ``shape``; a rule that
        disagrees with what is known is ignored (the operator's own ``infer`` decides,
        e.g. MXNet 1.x's per-group GroupNorm scales or PReLU's single slope)."""
        k = (e.node.id, e.index)
        old = self.r.shapes.get(k)
        new = _merge(old, tuple(shape))
        if new is not None and new != old:
            self.r.shapes[k] = new
            self.changed = True

    def set_dtype(self, e: Entry, dtype, node: Node, why: str) -> None:
        if dtype is None:
            return
        k = (e.node.id, e.index)
        dtype = numpy.dtype(dtype)
        old = self.r.dtypes.get(k)
        if old is not None:
            if old != dtype:
                raise TypeError(
                    f"infer_type: node {node.name!r} ({node.op_name}): {why} gives "
                    f"{e.node.name!r}[{e.index}] the dtype {dtype.name}, but it has dtype "
                    f"{old.name}")
            return
        self.r.dtypes[k] = dtype
        self.changed = True

    # ------------------------------------------------------------ forward
    def forward(self, n: Node) -> None:
        if unshaped_random(n):  # its shape comes from the operators that use it
            self._attr_dtype(n)
            if (n.id, 0) not in self.r.dtypes:
                self.set_dtype(Entry(n, 0), _F32, n, "the default dtype")
            return
        held = open_creation_shape(n)
        if held is not None:  # sym.zeros(shape=(0, 100)): the 0 is filled by inference
            self.set_shape(Entry(n, 0), held, n, "the shape attribute")
            self._attr_dtype(n)
            if (n.id, 0) not in self.r.dtypes:
                self.set_dtype(Entry(n, 0), _F32, n, "the default dtype")
            return
        if all(_complete(self.r.shapes.get((n.id, i))) and (n.id, i) in self.r.dtypes
               for i in range(n.num_outputs)):
            return  # nothing left to learn
        infos = []
        for x in n.inputs:
            infos.append(self.get(x) if isinstance(x, Entry) else None)
        arrays = [i for i in infos if i is not None]
        dtypes_known = all(d is not None for _, d in arrays)
        if any(s is None for s, _ in arrays):
            if dtypes_known:
                self._fallback_dtype(n, [d for _, d in arrays])
            else:
                self._attr_dtype(n)
            return
        full = all(_complete(s) for s, _ in arrays)
        attrs = {k: (False if v is TRAIN else v) for k, v in n.attrs.items()}
        if full:
            outs = self._run(n, infos, attrs, None, raise_value=True, dtypes_known=dtypes_known)
            if outs is None:
                if dtypes_known:
                    self._fallback_dtype(n, [d for _, d in arrays])
                return
            for i, a in enumerate(outs[:n.num_outputs]):
                self.set_shape(Entry(n, i), a.shape, n, "the operator's inference")
                if dtypes_known:
                    self.set_dtype(Entry(n, i), a.dtype, n, "the operator's inference")
            return
        p, q = UNKNOWN_DIM_PROBES
        a = self._run(n, infos, attrs, p, raise_value=False, dtypes_known=dtypes_known)
        b = self._run(n, infos, attrs, q, raise_value=False, dtypes_known=dtypes_known)
        if a is None or b is None:
            if dtypes_known:
                self._fallback_dtype(n, [d for _, d in arrays])
            return
        for i, (oa, ob) in enumerate(zip(a[:n.num_outputs], b[:n.num_outputs])):
            if len(oa.shape) == len(ob.shape):
                shape = agreed_dims(oa.shape, ob.shape)
                self.set_shape(Entry(n, i), shape, n, "the operator's inference")
            if dtypes_known and oa.dtype == ob.dtype:
                self.set_dtype(Entry(n, i), oa.dtype, n, "the operator's inference")

    def _run(self, n, infos, attrs, probe, raise_value, dtypes_known):
        avals = []
        for x, info in zip(n.inputs, infos):
            if info is None:
                avals.append(x)
                continue
            s, d = info
            if probe is not None:
                s = fill_unknown(s, probe)
            avals.append(Aval(s, d if d is not None else _F32))
        try:
            out = n.op.infer(*avals, **attrs)
        except TypeError as e:
            if dtypes_known and raise_value:
                raise TypeError(f"infer: node {n.name!r} ({n.op.name}): {e}") from None
            return None
        except (ValueError, IndexError) as e:
            if raise_value:
                shapes = ", ".join(_fmt(i[0]) if i is not None else repr(x)
                                   for x, i in zip(n.inputs, infos))
                raise ValueError(f"infer_shape: node {n.name!r} ({n.op.name}): {e} "
                                 f"(input shapes: {shapes})") from None
            return None
        except Exception:
            if raise_value:
                raise
            return None
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        for o in outs:
            if not all(isinstance(d, numbers.Integral) for d in o.shape):
                return None  # value-dependent output shape
        return outs

    def _attr_dtype(self, n: Node) -> None:
        """Output dtypes from a ``dtype`` attribute alone (``Cast``), inputs' unknown."""
        dt = n.attrs.get("dtype")
        if isinstance(dt, (str, numpy.dtype, type)) and n.num_outputs == 1:
            try:
                out = parse_dtype(dt)
            except (TypeError, ValueError):
                return
            self.set_dtype(Entry(n, 0), out, n, "the dtype attribute")

    def _fallback_dtype(self, n: Node, in_dtypes) -> None:
        """Output dtypes when shapes are unknown: the ``dtype`` attribute, bool for
        comparisons, else the first array input's (MXNet's elementwise type rule)."""
        dt = n.attrs.get("dtype")
        if isinstance(dt, (str, numpy.dtype, type)) and dt is not None:
            try:
                out = parse_dtype(dt)
            except (TypeError, ValueError):
                return
        elif n.op.name in _COMPARISONS:
            out = numpy.dtype(bool)
        elif in_dtypes:
            out = in_dtypes[0]
        else:
            return
        for i in range(n.num_outputs):
            self.set_dtype(Entry(n, i), out, n, "the operator's type rule")

    # ------------------------------------------------------------ backward
    def backward(self, n: Node) -> None:
        ps = n.op.param_shapes
        if ps is None:
            return
        ins = [x if isinstance(x, Entry) else None for x in n.inputs]
        if ps.rule is not None and ins and ins[0] is not None:
            shape, dtype = self.get(ins[0])
            attrs = _attrs(n)
            # An unknown data rank tells nothing, as in MXNet (whose operators return
            # "not inferred" then): a weight's shape is not guessed from attributes alone.
            fills = ps.rule(shape, attrs, len(ins)) if shape is not None else None
            if fills:
                for pos, want in fills.items():
                    if pos < len(ins) and ins[pos] is not None and want is not None:
                        self.suggest_shape(ins[pos], want)
            if dtype is not None and ps.params:
                pdt = dtype if ps.dtype is None else parse_dtype(ps.dtype(dtype, attrs))
                for pos in ps.params:
                    e = ins[pos] if pos < len(ins) else None
                    if e is not None and e.node.is_variable and self.get(e)[1] is None:
                        self.set_dtype(e, pdt, n, f"input {_input_name(n, pos)!r}")
        if ps.operands and len(ins) == 2 and all(e is not None for e in ins):
            (sa, da), (sb, db) = self.get(ins[0]), self.get(ins[1])
            if sa is None and sb is not None:
                self.set_shape(ins[0], sb, n, "the other operand")
            elif sb is None and sa is not None:
                self.set_shape(ins[1], sa, n, "the other operand")
            elif sa is not None and sb is not None and len(sa) == len(sb):
                # MXNet's elementwise rule: an unknown dimension is the other operand's
                # (a known size above 1: broadcasting could only have taken it from there)
                # in the second round, a size 1 too for an operand computed from an open
                # creation node (an RNN cell's begin state: MXNet's Symbol ``a + b`` is
                # elementwise, its operands of one shape)
                for mine, other, e in ((sa, sb, ins[0]), (sb, sa, ins[1])):
                    if None in mine:
                        least = 0 if e.node.id in self.from_open else 1
                        self.suggest_shape(e, tuple(o if m is None and o is not None and
                                                    o > least else m
                                                    for m, o in zip(mine, other)))
            if da is None and db is not None and ins[0].node.is_variable:
                self.set_dtype(ins[0], db, n, "the other operand")
            elif db is None and da is not None and ins[1].node.is_variable:
                self.set_dtype(ins[1], da, n, "the other operand")

    def reverse(self, n: Node) -> None:
        """A shape-preserving one-input operator: its input takes its output's shape.
        Any operator whose inputs miss one dimension in all: it is solved from the known
        output shape (:meth:`solve_backward`)."""
        ins = [x for x in n.inputs if isinstance(x, Entry)]
        if ins and n.num_outputs >= 1:
            self.solve_backward(n)
        if len(ins) != 1 or n.num_outputs != 1:
            return
        out_shape = self.get(Entry(n, 0))[0]
        in_shape = self.get(ins[0])[0]
        if out_shape is None or (in_shape is not None and _complete(in_shape)):
            return
        keep = self.preserving.get(n.id)
        if keep is None:
            keep = self.preserving[n.id] = _preserves_shape(n)
        if keep:
            self.suggest_shape(ins[0], out_shape)

    def solve_backward(self, n: Node) -> None:
        """Unknown input dimensions solved from known output shapes (MXNet's operators
        infer backwards: ``FullyConnected``'s batch from its output, ``Convolution``'s
        batch and spatial sizes, ``Concat``'s and ``SliceChannel``'s inputs, ``Reshape``,
        the fused RNN's parameter concat), for any operator, by probing its ``infer``.

        Each unknown dimension (a "unit"; dimensions that cannot differ, such as the
        batch sizes of concatenated inputs, form one unit) is varied alone: the output
        dimensions that move with it are ``a + b * d``. A unit that alone moves some known
        output dimension is solved from it; the solution is kept only if a run with
        every unit solved gives the known outputs exactly."""
        known = [(i, self.get(Entry(n, i))[0]) for i in range(n.num_outputs)]
        known = [(i, s) for i, s in known if _complete(s)]
        if not known:
            return
        infos = [self.get(x) if isinstance(x, Entry) else None for x in n.inputs]
        if any(i is not None and i[0] is None for i in infos):
            return
        holes = [(k, j) for k, i in enumerate(infos) if i is not None
                 for j, d in enumerate(i[0]) if d is None]
        if not holes or len(holes) > 8:
            return
        attrs = {a: (False if v is TRAIN else v) for a, v in n.attrs.items()}

        def run(values):
            trial = list(infos)
            for (k, j), d in values.items():
                s, dt = trial[k]
                trial[k] = (tuple(d if i == j else x for i, x in enumerate(s)), dt)
            r = self._run(n, trial, attrs, None, raise_value=False, dtypes_known=False)
            if r is None or len(r) < n.num_outputs:
                return None
            return {i: tuple(r[i].shape) for i, _ in known}

        p, q = UNKNOWN_DIM_PROBES
        base = run(dict.fromkeys(holes, p))
        if base is None or any(len(base[i]) != len(s) for i, s in known):
            return
        if len(holes) > 1 and _same_pattern(n, infos, holes, self.get):
            units = [tuple(holes)]
        else:
            units, tied = [], []
            for h in holes:
                (units if run(_vary(holes, p, (h,), q)) is not None else tied).append((h,))
            if tied:
                units.append(tuple(h for (h,) in tied))
        moves = []
        for unit in units:
            r = run(_vary(holes, p, unit, q))
            if r is None:
                return
            moves.append({(i, d): (r[i][d] - base[i][d]) / (q - p) for i, s in known
                          for d in range(len(s)) if r[i][d] != base[i][d]})
        solved = {}
        for u, unit in enumerate(units):
            for (i, d), slope in moves[u].items():
                if any((i, d) in m for v, m in enumerate(moves) if v != u):
                    continue  # moved by several units: it cannot tell them apart
                want = dict(known)[i][d]
                value = p + (want - base[i][d]) / slope
                if value != int(value) or value < 1 or solved.get(u, value) != value:
                    return
                solved[u] = int(value)
        if len(solved) != len(units):
            return
        values = {h: solved[u] for u, unit in enumerate(units) for h in unit}
        if run(values) != dict(known):
            return
        for (k, j), v in values.items():
            s = self.get(n.inputs[k])[0]
            self.suggest_shape(n.inputs[k], tuple(v if i == j else x for i, x in enumerate(s)))

    # ------------------------------------------------------------ driver
    def run(self, nodes) -> None:
        ops = [n for n in nodes if n.op is not None]
        for _ in range(2 * len(ops) + 4):
            self.changed = False
            for n in ops:
                self.backward(n)
                self.forward(n)
            for n in reversed(ops):
                self.reverse(n)
            if not self.changed:
                return


# MXNet 1.x's creation operators on Symbols read a 0 in ``shape`` as "unknown" (the
# batch size of an RNN cell's ``sym.zeros(shape=(0, hidden))`` begin state), which shape
# inference fills from the operators that use them.
_CREATION = ("zeros", "ones", "full", "empty")


def open_creation_shape(n: Node) -> tuple | None:
    """A composed creation node's shape with its 0 dims as None; None for any other node
    (a traced node, whose avals hold a real zero-size shape, included)."""
    if n.op is None or n.op.name not in _CREATION or n.avals is not None or n.inputs:
        return None
    shape = n.attrs.get("shape")
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or \
            not all(isinstance(d, numbers.Integral) for d in shape) or 0 not in shape:
        return None
    return tuple(None if d == 0 else int(d) for d in shape)


def unshaped_random(n: Node) -> bool:
    """A composed random creation node given ``shape=()`` outside NumPy shape semantics:
    MXNet 1.x reads that shape as unknown (``sym.random.normal(shape=()) + x`` takes
    ``x``'s shape), which inference fills as for :func:`open_creation_shape`."""
    if n.op is None or not n.op.random or n.avals is not None or n.input_entries():
        return False
    shape = n.attrs.get("shape")
    if not isinstance(shape, (tuple, list)) or len(shape) or "shape" not in n.op.attrs:
        return False
    from ..np._mode import is_np_shape

    return not is_np_shape()


def _vary(holes, base, unit, value) -> dict:
    """``{hole: base}`` with the holes of ``unit`` at ``value``."""
    out = dict.fromkeys(holes, base)
    out.update(dict.fromkeys(unit, value))
    return out


def _same_pattern(n: Node, infos, holes, get) -> bool:
    """Several unknown dimensions solved as one value: only for the pieces of a
    ``concatenate`` made alike (the same operator on inputs of the same shape pattern:
    the fused RNN's layer-0 input weights of both directions, flattened, as MXNet's
    ``_rnn_param_concat`` infers them)."""
    if n.op.name != "concatenate" or len({k for k, _ in holes}) != len(holes):
        return False

    def origin(k):
        node = n.inputs[k].node
        ins = [x for x in node.inputs if isinstance(x, Entry)] if node.op is not None else []
        if len(ins) != 1:
            return None
        return node.op.name, repr(sorted(_attrs(node).items())), get(ins[0])[0]

    origins = {origin(k) for k, _ in holes}
    return len(origins) == 1 and None not in origins and \
        len({infos[k][0] for k, _ in holes}) == 1


def _attrs(n: Node) -> dict:
    a = dict(n.op.attrs)
    a.update({k: v for k, v in n.attrs.items() if v is not TRAIN})
    return a


def _input_name(n: Node, pos: int) -> str:
    names = n.op.inputs
    if pos < len(names):
        return names[pos].rstrip("?")
    return str(pos)


def _preserves_shape(n: Node) -> bool:
    """Whether this node's (one-input) operator keeps its input's shape (probed)."""
    attrs = {k: (False if v is TRAIN else v) for k, v in n.attrs.items()}
    try:
        for shape in ((5, 7, 3), (4, 6)):
            avals = [Aval(shape, _F32) if isinstance(x, Entry) else x for x in n.inputs]
            out = n.op.infer(*avals, **attrs)
            if isinstance(out, (tuple, list)):
                if len(out) != 1:
                    return False
                out = out[0]
            if tuple(out.shape) != shape:
                return False
    except Exception:  # noqa: BLE001 - any failure: not shape-preserving
        return False
    return True


# --------------------------------------------------------------------------- dtype rules
_COMPARISONS = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                "logical_and", "logical_or", "logical_xor", "logical_not", "isnan", "isinf",
                "isfinite"}


# --------------------------------------------------------------------------- entry point
def _lookup(table, node):
    if not table:
        return None
    if node in table:
        return table[node]
    return table.get(node.name)


def infer_graph(graph: Graph, shapes: dict | None = None, dtypes: dict | None = None,
                partial: bool = False, default_float32: bool = True) -> InferResult:
    """Infer every entry's shape and dtype in ``graph``.

    Args:
        graph: the graph.
        shapes: ``{variable name or Node: shape}`` (0 or None dims unknown); variables
            not given use their ``__shape__`` attribute, then their ``avals``.
        dtypes: ``{variable name or Node: dtype}``; likewise ``__dtype__``, ``avals``.
        partial: the caller's intent (``infer_shape_partial``); inference is the same
            either way: it keeps going past operators whose inputs are not fully known
            (their outputs stay unknown or partly known) and raises only for shapes
            and dtypes that are known and contradict an operator.
        default_float32: once some dtype is known, give the variables still without
            one float32 (MXNet's binding default); False leaves them unknown (MXNet's
            ``infer_type_partial``).

    Returns:
        An :class:`InferResult`.

    Raises:
        ValueError/TypeError naming the node, its operator and the shapes when known
        shapes or dtypes contradict an operator.
    """
    nodes = graph.topo()
    inf = _Inferrer(graph, partial)
    for n in nodes:
        if n.is_constant:
            v = n.value
            inf.r.shapes[(n.id, 0)] = tuple(v.shape)
            inf.r.dtypes[(n.id, 0)] = numpy.dtype(v.dtype)
            continue
        if not n.is_variable:
            continue
        s = _lookup(shapes, n)
        if s is None:
            s = n.user_attrs.get("__shape__")
        if s is None and n.avals:
            s = n.avals[0].shape
        d = _lookup(dtypes, n)
        if d is None:
            d = n.user_attrs.get("__dtype__")
        if d is None and n.avals:
            d = n.avals[0].dtype
        shape = parse_shape(s)
        if shape is not None:
            inf.r.shapes[(n.id, 0)] = shape
        dt = parse_dtype(d)
        if dt is not None:
            inf.r.dtypes[(n.id, 0)] = dt
    inf.run(nodes)
    opened = {n.id for n in nodes if open_creation_shape(n) is not None}
    if opened and any(None in s for s in inf.r.shapes.values() if s is not None):
        # still unknown dimensions left by sym.zeros(shape=(0, ...)): their operands'
        # unknown dimensions facing a 1 are 1 (what broadcasting could not tell, MXNet's
        # elementwise operators require)
        for n in nodes:
            if n.id in opened or any(isinstance(e, Entry) and e.node.id in inf.from_open
                                     for e in n.inputs):
                inf.from_open.add(n.id)
        inf.run(nodes)
    if default_float32 and any(v is not None for v in inf.r.dtypes.values()):
        missing = [n for n in nodes if n.is_variable and inf.r.dtypes.get((n.id, 0)) is None]
        for n in missing:
            inf.r.dtypes[(n.id, 0)] = _F32
        if missing:
            inf.run(nodes)
    return inf.r


def close_creation_shapes(graph: Graph, shapes: dict, dtypes: dict | None = None,
                          what: str = "bind") -> Graph:
    """``graph`` with the 0 ("unknown") dims of its creation nodes' shapes filled in.

    ``sym.zeros(shape=(0, 100))`` (MXNet 1.x's RNN begin states) learns its batch size
    from the graph once the inputs' shapes are given; this rewrites such nodes' ``shape``
    attribute with the inferred one, so they run as ordinary operators. Graphs without
    such nodes come back unchanged.

    Args:
        graph: the graph.
        shapes: ``{variable name: shape}`` of the bound inputs.
        dtypes: ``{variable name: dtype}``.
        what: the caller, named in errors.

    Returns:
        The graph, rewritten where needed.

    Raises:
        ValueError: a creation node whose unknown dims the given shapes do not determine.

    Example:
        >>> from core import sym
        >>> h = sym.zeros(shape=(0, 3), name="h")
        >>> y = sym.var("x") + h
        >>> g = close_creation_shapes(y.graph, {"x": (2, 3)})
        >>> [n.attrs["shape"] for n in g.topo() if n.op is not None and n.op.name == "zeros"]
        [(2, 3)]
    """
    open_nodes = [n for n in graph.topo()
                  if open_creation_shape(n) is not None or unshaped_random(n)]
    if not open_nodes:
        return graph
    r = infer_graph(graph, shapes, dtypes)
    filled = {}
    for n in open_nodes:
        s = r.shape(Entry(n, 0))
        if not _complete(s):
            raise ValueError(
                f"{what}: node {n.name!r} ({n.op.name}) has shape "
                f"{tuple(n.attrs.get('shape'))}, whose 0 dims are unknown, and the input "
                f"shapes given do not determine them (inferred {_fmt(s)}); give the shape "
                f"in full or connect it to an input of known shape")
        filled[n.id] = tuple(s)

    def rebuild(n, inputs):
        if n.id not in filled:
            if n.op is None or all(_same_input(a, b) for a, b in zip(inputs, n.inputs)):
                return n
            return Node(n.op, n.name, inputs, n.attrs, n.num_outputs, n.avals, n.user_attrs,
                        n.value, n.ctx)
        return Node(n.op, n.name, inputs, dict(n.attrs, shape=filled[n.id]), n.num_outputs,
                    None, n.user_attrs, n.value, n.ctx)

    from .graph import map_graph

    return map_graph(graph, rebuild)


def _same_input(a, b) -> bool:
    if isinstance(a, Entry) and isinstance(b, Entry):
        return a.node is b.node and a.index == b.index
    return a is b


def annotate(graph: Graph, shapes: dict | None = None, dtypes: dict | None = None) -> Graph:
    """A copy of ``graph`` whose every node has ``avals`` (raises when some are unknown).

    Example:
        >>> from core.ops.registry import REGISTRY
        >>> from core.symbol.graph import Entry, Graph, Node
        >>> x = Node(None, "x")
        >>> g = annotate(Graph([Entry(Node(REGISTRY["relu"], "r", [Entry(x, 0)]), 0)]),
        ...              {"x": (2,)}, {"x": "float32"})
        >>> g.outputs[0].node.avals
        (Aval((2,), float32),)
    """
    r = infer_graph(graph, shapes, dtypes)
    missing = []

    def rebuild(n, inputs):
        if n.is_constant:
            avals = n.avals
        else:
            avals = [r.aval(e) for e in n.entries()]
            if any(a is None for a in avals):
                missing.append(n.name)
        c = Node(n.op, n.name, inputs, n.attrs, n.num_outputs, None, n.user_attrs, n.value,
                 n.ctx)
        if n.is_constant or not any(a is None for a in avals):
            c.avals = tuple(avals) if avals is not None else None
        return c

    from .graph import map_graph

    out = map_graph(graph, rebuild)
    if missing:
        raise ValueError(f"annotate: cannot infer the shapes of {', '.join(missing[:8])}"
                         f"{' ...' if len(missing) > 8 else ''}; give the input shapes")
    return out
