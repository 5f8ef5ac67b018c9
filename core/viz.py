"""Seeing a graph: MXNet's ``plot_network`` (graphviz) and ``print_summary`` (a text table).

Both take a :class:`~core.symbol.symbol.Symbol` or a :class:`~core.symbol.graph.Graph`
and an optional ``shape={input name: shape}``. Shapes come from shape inference over
the graph (``core.symbol.shape_infer`` when present, which also derives parameter
shapes from the layers' attributes; otherwise each operator's ``infer`` rule, forward,
from the inputs' shapes and the shapes the trace recorded).

A variable is a *parameter* (hidden by ``hide_weights``, counted in "Param #") when it
fills a weight-like input of an operator (``weight``, ``bias``, ``gamma``, ``beta``,
the moving statistics, the RNN's ``parameters``), when its name ends like one
(``fc1_weight``, ``dense0.bias``), or when it is an auxiliary state updated by the
graph; inputs named in ``shape`` never are.

Example:
    >>> from core import nd
    >>> from core.symbol.trace import Tracer
    >>> from core.viz import print_summary
    >>> with Tracer() as t:
    ...     x = t.variable("data", (1, 4), "float32")
    ...     w = t.variable("fc_weight", (3, 4), "float32")
    ...     y = nd.relu(nd.FullyConnected(x, w, None, num_hidden=3, no_bias=True))
    >>> print_summary(t.graph([y]), line_length=80)
    ________________________________________________________________________________
    Layer (type)                       Output Shape    Param # Previous Layer
    ================================================================================
    data(null)                         4               0
    ________________________________________________________________________________
    fullyconnected0(FullyConnected)    3               12      data
    ________________________________________________________________________________
    relu0(relu)                        3               0       fullyconnected0
    ================================================================================
    Total params: 12
    ________________________________________________________________________________
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from .ops.registry import Aval
from .symbol.graph import Entry, Graph, Node, resolve_attrs

__all__ = ["plot_network", "print_summary"]

_PARAM_SLOTS = ("weight", "bias", "gamma", "beta", "moving_mean", "moving_var", "parameters")
_PARAM_SUFFIXES = ("weight", "bias", "gamma", "beta", "moving_mean", "moving_var",
                   "running_mean", "running_var")
# MXNet's plot colours (ColorBrewer Set3).
_COLORS = ("#8dd3c7", "#fb8072", "#ffffb3", "#bebada", "#80b1d3", "#fdb462", "#b3de69",
           "#fccde5")


def _as_graph(symbol) -> Graph:
    g = getattr(symbol, "graph", symbol)
    if not isinstance(g, Graph):
        raise TypeError(f"expects a Symbol or a Graph, got {type(symbol).__name__}")
    return g


# ------------------------------------------------------------------ shapes
def _infer(graph: Graph, shape: dict | None, dtype: dict | None) -> dict:
    """``{(node id, output): shape tuple (None for unknown dims) or None}``."""
    shape = dict(shape or {})
    names = {n.name for n in graph.variables()}
    unknown = sorted(set(shape) - names)
    if unknown:
        raise ValueError(f"no input named {', '.join(map(repr, unknown))} in the graph "
                         f"(inputs: {', '.join(sorted(names))})")
    try:
        from .symbol.shape_infer import infer_graph
    except ImportError:
        infer_graph = None
    if infer_graph is not None:
        try:
            return dict(infer_graph(graph, shape, dict(dtype or {}), partial=True).shapes)
        except (ValueError, TypeError):
            if shape:
                raise  # the given shapes contradict the graph: say where
            # otherwise show what the forward rules and the trace's shapes give
    return _forward_shapes(graph, shape, dict(dtype or {}))


def _forward_shapes(graph: Graph, shape: dict, dtype: dict) -> dict:
    from .symbol.json_io import variable_aval

    avals: dict[tuple[int, int], Aval | None] = {}
    for n in graph.topo():
        if n.op is None:
            a = None
            if n.is_constant:
                a = Aval(n.value.shape, n.value.dtype)
            elif n.name in shape:
                d = dtype.get(n.name) or (n.avals[0].dtype if n.avals else "float32")
                a = Aval(shape[n.name], d)
            elif n.avals:
                a = n.avals[0]
            else:
                a = variable_aval(n)
            if a is not None and n.name in dtype:
                a = Aval(a.shape, dtype[n.name])
            avals[(n.id, 0)] = a
            continue
        ins = [avals.get((e.node.id, e.index)) if isinstance(e, Entry) else e
               for e in n.inputs]
        outs = None
        if all(a is not None for a, e in zip(ins, n.inputs) if isinstance(e, Entry)):
            try:
                out = n.op.infer(*ins, **resolve_attrs(n.attrs, False))
                outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
            except Exception:  # noqa: BLE001 - an unknown shape is shown as such
                outs = None
        if outs is None and not shape and n.avals:
            outs = n.avals
        for i in range(n.num_outputs):
            avals[(n.id, i)] = outs[i] if outs is not None and i < len(outs) else None
    return {k: (tuple(a.shape) if a is not None else None) for k, a in avals.items()}


def _size(shp) -> int | None:
    if shp is None or any(d is None for d in shp):
        return None
    return math.prod(int(d) for d in shp)


def _params(graph: Graph, shape: dict | None) -> set[int]:
    """Ids of the variables that are parameters (see the module doc)."""
    given = set(shape or {})
    out = {v.id for v in graph.updates}
    for n in graph.topo():
        if n.is_variable and n.name not in given and \
                n.name.lower().replace(".", "_").endswith(_PARAM_SUFFIXES):
            out.add(n.id)
        if n.op is None or n.op.variadic:
            continue
        for pos, e in enumerate(n.inputs):
            if isinstance(e, Entry) and e.node.is_variable and pos < len(n.op.inputs) and \
                    n.op.inputs[pos].rstrip("?") in _PARAM_SLOTS and e.node.name not in given:
                out.add(e.node.id)
    return out


def _param_counts(graph: Graph, params: set[int], shapes: dict) -> dict[int, int]:
    """``{op node id: number of parameter elements it is the first to use}``."""
    counted: set[int] = set()
    out: dict[int, int] = {}
    for n in graph.topo():
        if n.op is None:
            continue
        total = 0
        for e in n.inputs:
            if isinstance(e, Entry) and e.node.id in params and e.node.id not in counted:
                counted.add(e.node.id)
                total += _size(shapes.get((e.node.id, 0))) or 0
        out[n.id] = total
    return out


def _fmt_shape(shp, drop_batch: bool = True) -> str:
    if shp is None:
        return "?"
    dims = ["?" if d is None else str(d) for d in shp]
    if drop_batch and len(dims) > 1:
        dims = dims[1:]
    return "x".join(dims) if dims else "scalar"


# ------------------------------------------------------------------ plot
def _xs(v) -> str:
    if v is None or v == ():
        return "1"
    if isinstance(v, (tuple, list)):
        return "x".join(str(d) for d in v)
    return str(v)


def _label(n: Node) -> tuple[str, str]:
    """MXNet's label and colour for an operator node."""
    a, op = n.attrs, n.op_name
    if op == "Convolution":
        geometry = f"{_xs(a.get('kernel'))}/{_xs(a.get('stride'))}"
        return f"Convolution\n{geometry}, {a.get('num_filter')}", _COLORS[1]
    if op == "FullyConnected":
        return f"FullyConnected\n{a.get('num_hidden')}", _COLORS[1]
    if "BatchNorm" in op or op.endswith("batch_norm") or op.startswith("_batch_norm"):
        return op, _COLORS[3]
    if op in ("Activation", "LeakyReLU"):
        return f"{op}\n{a.get('act_type')}", _COLORS[2]
    if op == "Pooling":
        if a.get("global_pool"):
            return f"Pooling\nglobal {a.get('pool_type')}", _COLORS[4]
        geometry = f"{_xs(a.get('kernel'))}/{_xs(a.get('stride'))}"
        return f"Pooling\n{a.get('pool_type')}, {geometry}", _COLORS[4]
    if op in ("concatenate", "Concat", "flatten", "Flatten", "reshape", "Reshape"):
        return op, _COLORS[5]
    if op in ("softmax", "SoftmaxOutput", "log_softmax"):
        return op, _COLORS[6]
    return op, _COLORS[7]


def plot_network(symbol, title: str = "plot", save_format: str = "pdf",
                 shape: dict | None = None, dtype: dict | None = None,
                 node_attrs: dict | None = None, hide_weights: bool = True):
    """Draw the graph as MXNet's ``mx.viz.plot_network`` does.

    One box per operator (its name and key attributes: kernel/stride/filters of a
    convolution, hidden units, activation type, pooling) and its parameter count; one
    oval per data input. Edges carry the output shape of their source (without the
    batch dimension, as MXNet shows it) when shapes are known.

    Args:
        symbol: a Symbol or a Graph.
        title: the graph's name (the file name when rendered).
        save_format: graphviz's output format (``"pdf"``, ``"png"``, ``"svg"``...).
        shape: ``{input name: shape}``, to show output shapes.
        dtype: ``{input name: dtype}`` (default float32).
        node_attrs: graphviz node attributes overriding the defaults
            (e.g. ``{"shape": "oval", "fixedsize": "false"}``).
        hide_weights: leave out parameter variables and constants.

    Returns:
        A ``graphviz.Digraph``; ``.render()`` writes the file, ``.source`` is the DOT
        text, ``.pipe(format="svg")`` the drawing (the last two need graphviz's ``dot``
        program).

    Raises:
        ImportError: the ``graphviz`` Python package is missing.

    Example:
        >>> from core import nd
        >>> from core.symbol.trace import Tracer
        >>> from core.viz import plot_network
        >>> with Tracer() as t:
        ...     y = nd.Activation(t.variable("data", (2, 3), "float32"), act_type="tanh")
        >>> dot = plot_network(t.graph([y]), save_format="svg")
        >>> "Activation\\ntanh" in dot.source
        True
    """
    try:
        import graphviz
    except ImportError as e:
        raise ImportError("plot_network needs the graphviz package: pip install graphviz "
                          "(and graphviz's dot program to render)") from e
    graph = _as_graph(symbol)
    shapes = _infer(graph, shape, dtype)
    params = _params(graph, shape)
    counts = _param_counts(graph, params, shapes)
    base = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034",
            "style": "filled"}
    base.update(node_attrs or {})
    dot = graphviz.Digraph(name=title, format=save_format)
    ids: dict[int, str] = {}
    used: set[str] = set()
    for n in graph.topo():
        if n.op is None and hide_weights and (n.id in params or n.is_constant):
            continue
        ident = n.name
        k = 1
        while ident in used:
            ident, k = f"{n.name}#{k}", k + 1
        used.add(ident)
        ids[n.id] = ident
        attr = dict(base)
        if n.op is None:
            label, attr["fillcolor"] = n.name, _COLORS[0]
            attr["shape"] = "oval"
        else:
            label, attr["fillcolor"] = _label(n)
            if counts.get(n.id):
                label += f"\n{counts[n.id]:,} params"
        attr["tooltip"] = n.name
        dot.node(name=ident, label=label, **attr)
    for n in graph.topo():
        if n.op is None:
            continue
        for e in n.inputs:
            if not isinstance(e, Entry) or e.node.id not in ids:
                continue
            attr = {"dir": "back", "arrowtail": "open"}
            s = shapes.get((e.node.id, e.index))
            if s is not None:
                attr["label"] = _fmt_shape(s)
            dot.edge(tail_name=ids[n.id], head_name=ids[e.node.id], **attr)
    return dot


# ------------------------------------------------------------------ summary
def print_summary(symbol, shape: dict | None = None, line_length: int = 120,
                  positions: Sequence[float] = (.44, .64, .74, 1.)) -> None:
    """Print MXNet's summary table of a network (``mx.viz.print_summary``).

    One row per data input and operator: ``Layer (type)``, ``Output Shape`` (without
    the batch dimension), ``Param #`` and ``Previous Layer``; then the total
    parameter count.

    Args:
        symbol: a Symbol or a Graph.
        shape: ``{input name: shape}``; without it, the shapes the trace recorded.
        line_length: the table's width.
        positions: where each column ends, as fractions of ``line_length``.
    """
    graph = _as_graph(symbol)
    if len(positions) != 4:
        raise ValueError(f"print_summary: positions needs 4 column ends, got {positions!r}")
    ends = [int(line_length * p) if p <= 1 else int(p) for p in positions]
    shapes = _infer(graph, shape, None)
    params = _params(graph, shape)
    counts = _param_counts(graph, params, shapes)

    def row(fields):
        line = ""
        for field, end in zip(fields, ends):
            line += str(field)
            line = line[:end - 1]  # MXNet cuts at the column's end; we keep one space
            line += " " * (end - len(line))
        print(line.rstrip())

    print("_" * line_length)
    row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"])
    print("=" * line_length)
    shown = [n for n in graph.topo() if n.op is not None or
             (n.is_variable and n.id not in params)]
    total = 0
    for k, n in enumerate(shown):
        prev = [e.node.name for e in n.inputs if isinstance(e, Entry)
                and e.node.id not in params and not e.node.is_constant]
        count = counts.get(n.id, 0)
        total += count
        row([f"{n.name}({n.op_name})", _fmt_shape(shapes.get((n.id, 0))), count,
             prev[0] if prev else ""])
        for p in prev[1:]:
            row(["", "", "", p])
        print(("=" if k == len(shown) - 1 else "_") * line_length)
    print(f"Total params: {total}")
    print("_" * line_length)
