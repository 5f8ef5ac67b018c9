"""A Keras model's inference pass as a batch-size independent core Graph.

What :func:`kbackend.save_mxnet_model` and ``model.export(format="onnx")`` start from.
The model is traced (:class:`core.symbol.trace.Tracer`) in inference mode
(``training=False``) with its Variables bound as graph variables named after their
Keras paths and its inputs as graph variables named after the model's inputs; every
operator node is named ``<layer name>/<op><k>`` after the layer whose ``call`` made it,
so errors and files point at the layer.

Tracing bakes the batch size into the graph wherever a layer computes with the input's
shape (``Flatten``'s and ``Reshape``'s target shapes, an RNN's zero initial states). The
model is therefore traced at two batch sizes and the graphs are compared node by node:
a reshape target that differs gets MXNet's codes (``0``: copy this axis of the input,
``-1``: infer it), a constant that differs only along batch axes and holds one value
everywhere is rebuilt from the first input's batch axis (``zeros_like`` + ``broadcast_to``
with ``0``: keep), and any other difference is an error naming the node and its layer.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy

from core import autograd as _autograd
from core.ops.registry import REGISTRY, Aval
from core.symbol.graph import Entry, Graph, Node, map_graph
from core.symbol.json_mxnet import MX_DTYPE_CODES
from core.symbol.trace import Tracer

# The batch sizes of the two traces: different from each other and from 1, so a size-1
# axis is never mistaken for the batch axis.
TRACE_BATCHES = (2, 3)


class ExportError(ValueError):
    """A Keras model (or one of its layers) that the exporter cannot express."""


@dataclass
class InputSpec:
    """One model input: its graph name, shape (``None`` for the batch) and dtype."""

    name: str
    shape: tuple
    dtype: str


@dataclass
class ExportedGraph:
    """A traced model: the graph (batch-size independent), its inputs, outputs, params.

    ``params`` maps each variable of the graph that is not an input to its value;
    ``variables`` maps the same names to the Keras Variables' paths.
    """

    graph: Graph
    inputs: list[InputSpec]
    output_names: list[str]
    params: dict[str, numpy.ndarray] = field(default_factory=dict)
    variables: dict[str, str] = field(default_factory=dict)


def sanitize(name: str) -> str:
    """``name`` with every character but letters, digits, ``_``, ``-`` and ``.`` as ``_``.

    Example:
        >>> sanitize("sequential/dense/kernel")
        'sequential_dense_kernel'
    """
    out = re.sub(r"[^0-9A-Za-z_.\-]", "_", str(name))
    return out or "_"


def _unique(name: str, taken: set) -> str:
    base, k = name, 0
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name


def model_inputs(model) -> list[InputSpec]:
    """The inputs of a built Sequential or functional model (names: the Input layers')."""
    inputs = getattr(model, "inputs", None)
    if not inputs:
        raise ExportError(
            f"model '{model.name}' has no symbolic inputs (a subclassed model, or a "
            "Sequential model without an Input); build it as a Sequential model with "
            "keras.Input(...) first, or a functional keras.Model(inputs, outputs)")
    taken: set = set()
    specs = []
    for t in inputs:
        history = getattr(t, "_keras_history", None)
        layer = getattr(history, "operation", None)
        name = getattr(layer, "name", None) or t.name
        specs.append(InputSpec(_unique(sanitize(name), taken), tuple(t.shape),
                               str(t.dtype)))
    return specs


def _trace_inputs_struct(model, stand: list):
    struct = getattr(model, "_inputs_struct", None)
    if struct is None or len(stand) == 1 and not isinstance(struct, (list, tuple, dict)):
        return stand[0] if len(stand) == 1 else list(stand)
    from keras.src import tree

    return tree.pack_sequence_as(struct, stand)


class _LayerScopes:
    """While active, operator nodes are named ``<layer>/<op><k>`` after the layer calling."""

    def __init__(self, model, tracer: Tracer):
        self.tracer = tracer
        self.layers = [layer for layer in model._flatten_layers(include_self=False)
                       if "call" not in vars(layer)]
        self.stack: list[str] = []

    def _wrap(self, layer):
        call = layer.call
        scopes = self

        def scoped_call(*args, **kwargs):
            scopes.stack.append(sanitize(layer.name) + "/")
            scopes.tracer._prefix = scopes.stack[-1]
            try:
                return call(*args, **kwargs)
            finally:
                scopes.stack.pop()
                scopes.tracer._prefix = scopes.stack[-1] if scopes.stack else ""

        return scoped_call

    def __enter__(self):
        for layer in self.layers:
            object.__setattr__(layer, "call", self._wrap(layer))
        return self

    def __exit__(self, *exc):
        for layer in self.layers:
            object.__delattr__(layer, "call")


def _trace(model, inputs: list[InputSpec], batch: int, param_names: dict):
    """The model's inference graph with every batch axis of size ``batch``."""
    from keras.src import tree

    variables = [(param_names[id(v)], v) for v in model.variables]
    originals = [v._value for _, v in variables]
    try:
        with _autograd.pause(train_mode=False), Tracer() as t:
            for name, v in variables:
                attrs = {"__shape__": str(tuple(v.shape))}
                code = MX_DTYPE_CODES.get(numpy.dtype(v._value.dtype).name)
                if code is not None:  # MXNet's type inference reads the variable's code
                    attrs["__dtype__"] = str(code)
                t.bind(v._value, name, **attrs)
            stand = []
            for spec in inputs:
                shape = tuple(batch if d is None else d for d in spec.shape[:1]) + tuple(
                    spec.shape[1:])
                if any(d is None for d in shape):
                    raise ExportError(
                        f"model '{model.name}': input {spec.name!r} has the shape "
                        f"{spec.shape}: only the batch axis (the first) may be None; give "
                        "the other axes a size (keras.Input(shape=...))")
                stand.append(t.variable(spec.name, shape, spec.dtype))
            with _LayerScopes(model, t):
                x = _trace_inputs_struct(model, stand)
                y = model(x, training=False) if model._call_has_training_arg else model(x)
            outs = list(tree.flatten(y))
            graph = t.graph(outs)
    finally:
        for (_, v), value in zip(variables, originals):
            v._value = value
    if graph.updates:
        names = ", ".join(sorted(n.name for n in graph.updates))
        raise ExportError(f"model '{model.name}': its inference pass writes the variables "
                          f"{names}, which an exported graph cannot do")
    return graph, y


def trace_model(model, inputs: list[InputSpec] | None = None) -> ExportedGraph:
    """The batch-size independent inference graph of ``model`` (see the module doc).

    Args:
        model: a built Keras model (Sequential, functional, or subclassed with
            ``inputs`` given).
        inputs: the inputs to trace with (default: :func:`model_inputs`).

    Returns:
        An :class:`ExportedGraph`.

    Raises:
        ExportError: an input with an unknown non-batch axis, a layer whose graph
            depends on the batch size in a way no reshape code or fill can express,
            or an inference pass that writes variables.
    """
    inputs = model_inputs(model) if inputs is None else inputs
    taken = {spec.name for spec in inputs}
    param_names, variables, params = {}, {}, {}
    prefix = f"{model.name}/"
    for v in model.variables:
        if id(v) in param_names:
            continue
        path = v.path.removeprefix(prefix)
        name = _unique(sanitize(path), taken)
        param_names[id(v)] = name
        variables[name] = v.path
        params[name] = numpy.asarray(v._value.asnumpy())
    b1, b2 = TRACE_BATCHES
    g1, y = _trace(model, inputs, b1, param_names)
    g2, _ = _trace(model, inputs, b2, param_names)
    graph = _generalize(model, g1, g2, b1, b2, inputs)
    from keras.src import tree

    outs = tree.flatten(y)
    out_names = []
    out_taken: set = set()
    for k, o in enumerate(getattr(model, "outputs", None) or outs):
        history = getattr(o, "_keras_history", None)
        layer = getattr(history, "operation", None)
        out_names.append(_unique(sanitize(getattr(layer, "name", None) or f"output_{k}"),
                                 out_taken))
    return ExportedGraph(graph, list(inputs), out_names, params, variables)


# --------------------------------------------------------------------------- batch
def _where(n: Node) -> str:
    layer = n.name.rsplit("/", 1)[0] if "/" in n.name else None
    return (f"layer '{layer}' (node {n.name!r}, op {n.op_name!r})" if layer
            else f"node {n.name!r} (op {n.op_name!r})")


def _batch_axes(s1, s2, b1, b2) -> list[int] | None:
    if len(s1) != len(s2):
        return None
    axes = []
    for a, (d1, d2) in enumerate(zip(s1, s2)):
        if d1 == d2:
            continue
        if (d1, d2) != (b1, b2):
            return None
        axes.append(a)
    return axes


def _reshape_codes(n1, n2, b1, b2):
    """The reshape target of ``n1`` with MXNet codes where it differs from ``n2``'s."""
    key = "shape" if n1.attrs.get("shape") is not None else "newshape"
    t1, t2 = n1.attrs.get(key), n2.attrs.get(key)
    t1 = (t1,) if isinstance(t1, int) else tuple(t1)
    t2 = (t2,) if isinstance(t2, int) else tuple(t2)
    if len(t1) != len(t2):
        return None
    src = n1.inputs[0].node.avals[n1.inputs[0].index].shape
    src2 = n2.inputs[0].node.avals[n2.inputs[0].index].shape
    if any(d == 0 or d < -1 for d in t1):
        return None  # NumPy's 0 (a size) cannot be kept next to MXNet's codes
    out = list(t1)
    rest = []
    for a, (d1, d2) in enumerate(zip(t1, t2)):
        if d1 == d2:
            continue
        if a < len(src) and (src[a], src2[a]) == (d1, d2) and (d1, d2) == (b1, b2):
            out[a] = 0  # copy the input's batch axis
        else:
            rest.append(a)
    if len(rest) > 1 or (rest and -1 in t1):
        return None
    for a in rest:
        out[a] = -1
    return {key: tuple(out), "mx_codes": True}


def _make(op_name: str, name: str, inputs: list, **attrs) -> Node:
    op = REGISTRY[op_name]
    avals = [e.node.avals[e.index] if isinstance(e, Entry) else e for e in inputs]
    out = op.infer(*avals, **attrs)
    return Node(op, name, inputs, attrs, avals=[Aval(out.shape, out.dtype)])


def _fill(template: Entry, shape: tuple, axis: int, dtype, value, name: str) -> Node:
    """A ``shape`` array of ``value`` whose axis ``axis`` is the template's batch axis."""
    flat = _make("reshape", f"{name}_flat", [template], newshape=(0, -1), mx_codes=True)
    col = _make("slice_axis", f"{name}_col", [Entry(flat, 0)], axis=1, begin=0, end=1)
    node = _make("zeros_like", f"{name}_zeros", [Entry(col, 0)])
    if numpy.dtype(node.avals[0].dtype) != numpy.dtype(dtype):
        node = _make("cast", f"{name}_cast", [Entry(node, 0)], dtype=numpy.dtype(dtype).name)
    rank = len(shape)
    node = _make("reshape", f"{name}_axis", [Entry(node, 0)],
                 newshape=(1,) * axis + (-1,) + (1,) * (rank - axis - 1), mx_codes=True)
    target = tuple(0 if a == axis else d for a, d in enumerate(shape))
    if target != (0,) * rank and rank > 0:
        node = _make("broadcast_to", f"{name}_bcast", [Entry(node, 0)], shape=target)
    if value != 0:
        lit = bool(value) if numpy.dtype(dtype).kind == "b" else (
            int(value) if numpy.dtype(dtype).kind in "iu" else float(value))
        node = _make("add", name, [Entry(node, 0), lit])
    return node


def _generalize(model, g1: Graph, g2: Graph, b1: int, b2: int,
                inputs: list[InputSpec]) -> Graph:
    """``g1`` (traced at batch ``b1``) made batch independent by comparing it with ``g2``."""
    nodes1, nodes2 = list(g1.topo()), list(g2.topo())
    if [n.op_name for n in nodes1] != [n.op_name for n in nodes2]:
        raise ExportError(f"model '{model.name}': its graph has different operators at batch "
                          f"sizes {b1} and {b2}, so it cannot be exported batch-independent")
    fixes: dict[int, object] = {}
    for n1, n2 in zip(nodes1, nodes2):
        if n1.is_variable:
            continue
        if n1.is_constant:
            v1, v2 = numpy.asarray(n1.value), numpy.asarray(n2.value)
            if v1.shape == v2.shape:
                if v1.dtype == v2.dtype and numpy.array_equal(v1, v2, equal_nan=True):
                    continue
                raise ExportError(f"model '{model.name}': the constant {n1.name!r} changes "
                                  f"with the batch size")
            axes = _batch_axes(v1.shape, v2.shape, b1, b2)
            flat = v1.reshape(-1)
            if (axes is None or len(axes) != 1 or flat.size == 0
                    or not (flat == flat[0]).all() or not (v2 == flat[0]).all()):
                raise ExportError(
                    f"model '{model.name}': the constant {n1.name!r} of shape {v1.shape} "
                    f"depends on the batch size (shape {v2.shape} at batch {b2}) and is not "
                    "one value repeated along the batch axis, so the graph cannot be "
                    "exported batch-independent")
            fixes[n1.id] = ("fill", axes[0], v1.dtype, flat[0].item())
            continue
        if n1.attrs == n2.attrs:
            continue
        keys = sorted(k for k in n1.attrs if n1.attrs.get(k) != n2.attrs.get(k))
        new = _reshape_codes(n1, n2, b1, b2) if n1.op_name == "reshape" else None
        if new is None:
            raise ExportError(
                f"model '{model.name}': {_where(n1)} has {keys[0]}={n1.attrs[keys[0]]!r} at "
                f"batch size {b1} and {n2.attrs[keys[0]]!r} at batch size {b2}; the "
                "exported graph must not depend on the batch size")
        fixes[n1.id] = ("attrs", new)
    if not fixes:
        return g1
    template = None
    for n in nodes1:
        if n.is_variable and any(n.name == s.name for s in inputs) and n.avals[0].shape:
            template = Entry(n, 0)
            break

    def rebuild(n, ins):
        fix = fixes.get(n.id)
        if fix is None:
            if tuple(ins) == n.inputs:
                return n
            return Node(n.op, n.name, ins, n.attrs, n.num_outputs, n.avals, n.user_attrs,
                        n.value, n.ctx)
        if fix[0] == "attrs":
            return Node(n.op, n.name, ins, {**n.attrs, **fix[1]}, n.num_outputs, n.avals,
                        n.user_attrs, n.value, n.ctx)
        if template is None:
            raise ExportError(f"model '{model.name}': the constant {n.name!r} depends on the "
                              "batch size and the model has no input to take it from")
        _, axis, dtype, value = fix
        return _fill(template, tuple(n.avals[0].shape), axis, dtype, value,
                     n.name.lstrip("_") + "_batch")

    return map_graph(g1, rebuild)
