"""A Keras model's inference pass as a batch-size independent core Graph.

What :func:`kbackend.save_mxnet_model` and ``model.export(format="onnx")`` start from.
The model is traced (:class:`core.symbol.trace.Tracer`) in inference mode
(``training=False``) with its Variables bound as graph variables named after their
Keras paths and its inputs as graph variables named after the model's inputs; every
operator node is named ``<layer name>/<op><k>`` after the layer whose ``call`` made it,
so errors and files point at the layer.

Tracing bakes the input sizes into the graph wherever a layer computes with the input's
shape (``Flatten``'s and ``Reshape``'s target shapes, an RNN's zero initial states). The
model is therefore traced twice, with other sizes for every ``None`` axis of the inputs
(the batch: 2 and 3), and the graphs are compared node by node: a reshape target that
differs gets MXNet's codes (``0``: copy this axis of the input, ``-1``: infer it), a
constant that differs along one such axis and holds one value everywhere is rebuilt from
the input that has the axis (``zeros_like`` of a slice of it, plus the value), and any
other difference is an error naming the node and its layer.
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
        seen: set = set()
        self.layers = []
        for layer in model._flatten_layers(include_self=False):
            if id(layer) not in seen and "call" not in vars(layer):  # once per shared layer
                seen.add(id(layer))
                self.layers.append(layer)
        self.stack: list[str] = []

    def _wrap(self, layer):
        call = _inference_batch_norm(layer) or layer.call
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


def dynamic_axes(inputs: list[InputSpec]) -> dict:
    """``{(input index, axis): symbol}`` for every ``None`` axis of the inputs: the batch
    axes (axis 0) of all inputs share symbol 0, each other ``None`` axis has its own."""
    out, k = {}, 0
    for i, spec in enumerate(inputs):
        for a, d in enumerate(spec.shape):
            if d is None:
                if a == 0:
                    out[(i, a)] = 0
                else:
                    k += 1
                    out[(i, a)] = k
    return out


def trace_sizes(symbol: int) -> tuple[int, int]:
    """The sizes a dynamic axis has in the two traces: (2, 3) for the batch, and
    multiples of 8 (so strided windows divide them alike) for the other axes."""
    if symbol == 0:
        return TRACE_BATCHES
    return 16 + 8 * symbol, 24 + 8 * symbol


def _inference_batch_norm(layer):
    """For a Keras BatchNormalization: its inference call as one ``BatchNorm`` node with
    the moving statistics (MXNet's operator, whose auxiliary states they are), or None
    for any other layer."""
    from keras.src.layers.normalization.batch_normalization import BatchNormalization

    if not isinstance(layer, BatchNormalization) or getattr(layer, "renorm", False):
        return None
    call = layer.call

    def batch_norm_call(inputs, training=None, mask=None):
        from core import nd
        from core.ops import F

        dtype = numpy.dtype(inputs.dtype)
        if mask is not None or training or dtype != numpy.float32:
            return call(inputs, training=training, mask=mask)
        channels = layer.moving_mean.shape[0]
        gamma = layer.gamma._value if layer.scale else nd.ones((channels,), dtype=dtype)
        beta = layer.beta._value if layer.center else nd.zeros((channels,), dtype=dtype)
        out = F.BatchNorm(inputs, gamma, beta, layer.moving_mean._value,
                          layer.moving_variance._value, eps=float(layer.epsilon),
                          momentum=float(layer.momentum), fix_gamma=False,
                          use_global_stats=True, axis=int(layer.axis) % len(inputs.shape),
                          training=False)
        return out[0] if isinstance(out, (tuple, list)) else out

    return batch_norm_call


def _trace(model, inputs: list[InputSpec], which: int, param_names: dict, structure=None):
    """The model's inference graph with every dynamic axis at its ``which`` trace size."""
    from keras.src import tree

    dyn = dynamic_axes(inputs)
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
            for i, spec in enumerate(inputs):
                shape = tuple(trace_sizes(dyn[(i, a)])[which] if d is None else d
                              for a, d in enumerate(spec.shape))
                stand.append(t.variable(spec.name, shape, spec.dtype))
            with _LayerScopes(model, t):
                kwargs = {"training": False} if model._call_has_training_arg else {}
                if structure is None:
                    y = model(_trace_inputs_struct(model, stand), **kwargs)
                else:
                    args = tree.pack_sequence_as(structure, stand)
                    y = model(args[0], **kwargs) if len(args) == 1 else model(*args, **kwargs)
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


def trace_model(model, inputs: list[InputSpec] | None = None,
                structure=None) -> ExportedGraph:
    """The inference graph of ``model``, independent of the sizes of the inputs'
    ``None`` axes (see the module doc).

    Args:
        model: a built Keras model (Sequential, functional, or subclassed with
            ``inputs`` given).
        inputs: the inputs to trace with (default: :func:`model_inputs`); ``None``
            axes are dynamic.
        structure: how the flat inputs are passed (Keras' ``input_signature``:
            ``model(*pack_sequence_as(structure, inputs))``); default: as the model's
            own inputs are structured.

    Returns:
        An :class:`ExportedGraph`.

    Raises:
        ExportError: a layer whose graph depends on the size of a dynamic axis in a
            way no reshape code or fill can express, or an inference pass that
            writes variables.
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
    g1, y = _trace(model, inputs, 0, param_names, structure)
    g2, _ = _trace(model, inputs, 1, param_names, structure)
    graph = _generalize(model, g1, g2, inputs)
    from keras.src import tree

    outs = tree.flatten(y)
    out_names = []
    out_taken: set = set()
    symbolic = getattr(model, "outputs", None) if structure is None else None
    for k, o in enumerate(symbolic or outs):
        history = getattr(o, "_keras_history", None)
        layer = getattr(history, "operation", None)
        out_names.append(_unique(sanitize(getattr(layer, "name", None) or f"output_{k}"),
                                 out_taken))
    return ExportedGraph(graph, list(inputs), out_names, params, variables)


# --------------------------------------------------------------------------- dynamic axes
def _where(n: Node) -> str:
    layer = n.name.rsplit("/", 1)[0] if "/" in n.name else None
    return (f"layer '{layer}' (node {n.name!r}, op {n.op_name!r})" if layer
            else f"node {n.name!r} (op {n.op_name!r})")


def _dynamic_axes_of(s1, s2, pairs: dict) -> list[int] | None:
    """The axes where shapes ``s1`` and ``s2`` differ, each by a dynamic axis' sizes."""
    if len(s1) != len(s2):
        return None
    axes = []
    for a, (d1, d2) in enumerate(zip(s1, s2)):
        if d1 == d2:
            continue
        if (d1, d2) not in pairs:
            return None
        axes.append(a)
    return axes


def _reshape_codes(n1, n2, pairs: dict):
    """The reshape target of ``n1`` with MXNet codes where it differs from ``n2``'s."""
    key = "shape" if n1.attrs.get("shape") is not None else "newshape"
    t1, t2 = n1.attrs.get(key), n2.attrs.get(key)
    t1 = (t1,) if isinstance(t1, int) else tuple(t1)
    t2 = (t2,) if isinstance(t2, int) else tuple(t2)
    if len(t1) != len(t2) or any(d == 0 or d < -1 for d in t1):
        return None  # NumPy's 0 (a size) cannot be kept next to MXNet's codes
    src = n1.inputs[0].node.avals[n1.inputs[0].index].shape
    src2 = n2.inputs[0].node.avals[n2.inputs[0].index].shape
    out, rest = list(t1), []
    for a, (d1, d2) in enumerate(zip(t1, t2)):
        if d1 == d2:
            continue
        if a < len(src) and (src[a], src2[a]) == (d1, d2):
            out[a] = 0  # copy the input's axis
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


def _fill(template: Entry, t_axis: int, shape: tuple, axis: int, dtype, value,
          name: str) -> Node:
    """An array of ``shape`` holding ``value`` whose axis ``axis`` has the size of the
    template's axis ``t_axis``: ``zeros_like`` of the template cut to that axis,
    reshaped into place, plus a constant that broadcasts it to the other axes."""
    node = template
    rank_t = len(template.node.avals[template.index].shape)
    for k in range(rank_t):
        if k != t_axis:
            node = Entry(_make("slice_axis", f"{name}_cut{k}", [node], axis=k, begin=0,
                               end=1), 0)
    node = Entry(_make("zeros_like", f"{name}_zeros", [node]), 0)
    if numpy.dtype(node.node.avals[0].dtype) != numpy.dtype(dtype):
        node = Entry(_make("cast", f"{name}_cast", [node], dtype=numpy.dtype(dtype).name), 0)
    rank = len(shape)
    node = Entry(_make("reshape", f"{name}_axis", [node],
                       newshape=(1,) * axis + (-1,) + (1,) * (rank - axis - 1),
                       mx_codes=True), 0)
    rest = tuple(1 if a == axis else d for a, d in enumerate(shape))
    if rest == (1,) * rank and value == 0:
        return node.node
    const = numpy.full(rest, value, dtype=dtype)
    c = Node(None, f"{name}_value", avals=[Aval(const.shape, const.dtype)], value=const,
             ctx=template.node.ctx)
    return _make("add", name, [node, Entry(c, 0)])


def _generalize(model, g1: Graph, g2: Graph, inputs: list[InputSpec]) -> Graph:
    """``g1`` (the first trace) made independent of the dynamic axes' sizes by
    comparing it with ``g2`` (the second)."""
    dyn = dynamic_axes(inputs)
    nodes1, nodes2 = list(g1.topo()), list(g2.topo())
    if [n.op_name for n in nodes1] != [n.op_name for n in nodes2]:
        raise ExportError(f"model '{model.name}': its graph has different operators for "
                          "different input sizes, so it cannot be exported with dynamic "
                          "axes")
    # each dynamic axis' trace sizes -> where a graph input has it (the fill's template)
    pairs: dict = {}
    by_name = {n.name: n for n in nodes1 if n.is_variable}
    for (i, a), symbol in dyn.items():
        pairs.setdefault(trace_sizes(symbol), (Entry(by_name[inputs[i].name], 0), a))
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
                                  "with the size of a dynamic input axis")
            axes = _dynamic_axes_of(v1.shape, v2.shape, pairs)
            flat = v1.reshape(-1)
            if (axes is None or len(axes) != 1 or flat.size == 0
                    or not (flat == flat[0]).all() or not (v2 == flat[0]).all()):
                raise ExportError(
                    f"model '{model.name}': the constant {n1.name!r} of shape {v1.shape} "
                    f"depends on the input sizes (shape {v2.shape} in a second trace) and "
                    "is not one value repeated along one dynamic axis, so the graph cannot "
                    "be exported with dynamic axes")
            a = axes[0]
            fixes[n1.id] = ("fill", a, pairs[(v1.shape[a], v2.shape[a])], v1.dtype,
                            flat[0].item())
            continue
        if n1.attrs == n2.attrs:
            continue
        keys = sorted(k for k in n1.attrs if n1.attrs.get(k) != n2.attrs.get(k))
        new = _reshape_codes(n1, n2, pairs) if n1.op_name == "reshape" else None
        if new is None:
            raise ExportError(
                f"model '{model.name}': {_where(n1)} has {keys[0]}={n1.attrs[keys[0]]!r} in "
                f"one trace and {n2.attrs[keys[0]]!r} in another with other sizes of the "
                "dynamic (None) input axes; the exported graph must not depend on them "
                "(give those axes a fixed size)")
        fixes[n1.id] = ("attrs", new)
    if not fixes:
        return g1

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
        _, axis, (template, t_axis), dtype, value = fix
        return _fill(template, t_axis, tuple(n.avals[0].shape), axis, dtype, value,
                     n.name.lstrip("_") + "_dynamic")

    return map_graph(g1, rebuild)
