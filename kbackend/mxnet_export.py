"""``save_mxnet_model``: a Keras model as an MXNet 1.9 checkpoint (symbol + params).

Keras-MXNet's ``keras.models.save_mxnet_model(model, prefix, epoch)``, on kbackend: the
model's inference pass (:mod:`kbackend.graph_export`: traced with ``training=False``,
batch-size independent) is written as ``prefix-symbol.json`` in MXNet 1.9's JSON layout
and its weights as ``prefix-%04d.params`` (``arg:<name>``, MXNet's NDArray format), so
real MXNet's ``mx.mod.Module`` (``load_checkpoint``, ``bind``, ``set_params``,
``predict``), ``mx.gluon.SymbolBlock.imports`` and our own ``gluon.SymbolBlock.imports``
load the files and predict what the Keras model predicts.

Before writing, the graph is rewritten where MXNet's CPU operators need it:

- channels-last convolutions, transposed convolutions and poolings (Keras' default
  ``data_format``) run as MXNet's channels-first ones between two ``transpose`` nodes
  (MXNet implements ``NHWC`` on GPUs only); their weights are transposed in the graph;
- Keras' per-side padding becomes MXNet's symmetric ``pad`` (an explicit ``Pad`` before
  a 2-D or 3-D convolution when the sides differ);
- 0-d constants in arithmetic become MXNet's scalar operators (MXNet 1.x arrays have
  no 0-d shape), and the other constants become parameters.

Parameter names are the Keras variables' paths below the model, with ``/`` as ``_``
(``dense/kernel`` -> ``dense_kernel``); each variable of the symbol carries its
``__shape__``. A BatchNormalization layer is MXNet's ``BatchNorm`` node, so its moving
statistics are auxiliary states (``aux:<name>``). The data names are the model's
``Input`` layers' names.
"""
from __future__ import annotations

import os

import numpy

from core import serialization
from core.ndarray import array as _nd_array
from core.symbol.graph import Entry, Graph, Node, map_graph
from core.symbol.json_io import graph_to_json
from core.symbol.json_lower import RULES

from .graph_export import ExportedGraph, ExportError, _make, model_inputs, trace_model

__all__ = ["save_mxnet_model"]

_CHANNELS_FIRST = {1: "NCW", 2: "NCHW", 3: "NCDHW"}
_CHANNELS_LAST = {"NWC", "NHWC", "NDHWC"}
_BINARY_OPS = {"add", "subtract", "multiply", "divide", "power", "maximum", "minimum",
               "mod", "equal", "not_equal", "greater", "greater_equal", "less", "less_equal"}


def save_mxnet_model(model, prefix: str, epoch: int = 0) -> tuple[list, list]:
    """Write ``model`` as an MXNet 1.9 checkpoint: ``prefix-symbol.json`` and
    ``prefix-%04d.params`` (Keras-MXNet's ``save_mxnet_model``).

    The model's inference pass (``training=False``: Dropout is an identity,
    BatchNormalization uses its moving statistics) is traced into a graph that does not
    depend on the batch size, so a Module bound at any batch size predicts what
    ``model.predict`` gives.

    Args:
        model: a built Sequential or functional Keras model (kbackend backend).
        prefix: the files' prefix (a path without the ``-symbol.json`` ending).
        epoch: the number in the parameter file's name.

    Returns:
        ``(data_names, data_shapes)`` as Keras-MXNet returned them: the input names as
        they appear in the symbol, and ``[(name, shape), ...]`` with the batch axis of
        size 1, ready for ``mod.bind(data_shapes=...)`` (change the first axis to bind
        at another batch size).

    Raises:
        ValueError: a layer or operator that MXNet 1.9 cannot express (the message
            names it), or a model without symbolic inputs.

    Example:
        A Keras model, then MXNet (in its own environment)::

            data_names, data_shapes = kbackend.save_mxnet_model(model, "mlp")
            sym, arg_params, aux_params = mx.model.load_checkpoint("mlp", 0)
            mod = mx.mod.Module(sym, data_names=data_names, label_names=None)
            mod.bind(data_shapes=data_shapes, for_training=False)
            mod.set_params(arg_params, aux_params)
    """
    inputs = model_inputs(model)
    for spec in inputs:
        if any(d is None for d in spec.shape[1:]):
            raise ExportError(
                f"save_mxnet_model: model '{model.name}': input {spec.name!r} has the shape "
                f"{spec.shape}; only the batch axis (the first) may be None, since MXNet's "
                "Module binds data of known shapes (give the other axes a size)")
    exported = trace_model(model, inputs)
    graph, arrays = mxnet_graph(exported, model.name)
    for n in graph.topo():
        if n.op is not None and n.op.name not in RULES:
            raise ExportError(
                f"save_mxnet_model: model '{model.name}': {_where(n)}: the operator "
                f"{n.op.name!r} has no MXNet 1.9 equivalent, so the model cannot be "
                "written as an MXNet symbol (build it from layers MXNet has)")
    try:
        text = graph_to_json(graph, strict=True)
    except ValueError as e:
        why = str(e).replace("; export it with mxnet_compatible=False (a file only kbackend "
                             "reads), or build the model from operators MXNet has", "")
        raise ExportError(f"save_mxnet_model: model '{model.name}': {why}") from None
    sym_file = f"{prefix}-symbol.json"
    param_file = f"{prefix}-{int(epoch):04d}.params"
    os.makedirs(os.path.dirname(os.path.abspath(sym_file)), exist_ok=True)
    data = text.encode("utf-8")
    serialization.atomic_write(sym_file, lambda f: f.write(data))
    serialization.save(param_file, {k: _nd_array(v) for k, v in arrays.items()})
    data_names = [s.name for s in exported.inputs]
    data_shapes = [(s.name, (1,) + tuple(s.shape[1:])) for s in exported.inputs]
    return data_names, data_shapes


def mxnet_graph(exported: ExportedGraph, model_name: str = "model") -> tuple[Graph, dict]:
    """The exported graph rewritten for MXNet's CPU operators, and its parameter arrays
    (``{"arg:name" or "aux:name": numpy array}``)."""
    graph = map_graph(exported.graph, lambda n, ins: _rewrite(n, ins, model_name))
    graph, consts = _constants_as_params(graph, set(exported.params)
                                         | {s.name for s in exported.inputs})
    used = {n.name for n in graph.topo() if n.is_variable}
    aux = _auxiliary_states(graph)
    arrays = {f"{'aux' if k in aux else 'arg'}:{k}": v for k, v in exported.params.items()
              if k in used}
    arrays.update({f"arg:{k}": v for k, v in consts.items()})
    return graph, arrays


def _auxiliary_states(graph: Graph) -> set:
    """The variables an operator updates in place (BatchNorm's moving statistics):
    MXNet's auxiliary states, saved as ``aux:<name>``."""
    aux = set()
    for n in graph.topo():
        for pos in (n.op.updates or {}) if n.op is not None else ():
            e = n.inputs[pos] if pos < len(n.inputs) else None
            if isinstance(e, Entry) and e.node.is_variable:
                aux.add(e.node.name)
    return aux


def _copy(n: Node, ins, **attrs) -> Node:
    return Node(n.op, n.name, ins, {**n.attrs, **attrs}, n.num_outputs, n.avals,
                n.user_attrs, n.value, n.ctx)


def _where(n: Node) -> str:
    layer = n.name.rsplit("/", 1)[0] if "/" in n.name else None
    return f"layer '{layer}' ({n.op_name} node {n.name!r})" if layer else f"node {n.name!r}"


def _rewrite(n: Node, ins: tuple, model_name: str):
    if n.op is None:
        return n
    if n.op_name in ("Convolution", "Deconvolution", "Pooling"):
        return _channels_first(n, ins, model_name)
    if n.op_name in _BINARY_OPS:
        return _copy(n, tuple(_scalar(e) for e in ins))
    return n if tuple(ins) == n.inputs else _copy(n, ins)


def _scalar(e):
    """A 0-d constant input as a Python number (MXNet's scalar operators)."""
    if not isinstance(e, Entry) or not e.node.is_constant:
        return e
    value = numpy.asarray(e.node.value)
    if value.shape != ():
        return e
    kind = value.dtype.kind
    return bool(value) if kind == "b" else int(value) if kind in "iu" else float(value)


def _symmetric_pad(n: Node, model_name: str):
    """``(pad, before, after)``: MXNet's symmetric pad, or the per-side pads when the
    sides differ."""
    pad = n.attrs.get("pad") or ()
    pairs = [tuple(p) if isinstance(p, (tuple, list)) else (p, p) for p in pad]
    if all(a == b for a, b in pairs):
        return tuple(a for a, _ in pairs), None
    return tuple(0 for _ in pairs), pairs


def _channels_first(n: Node, ins: tuple, model_name: str):
    """A channels-last Convolution/Deconvolution/Pooling as MXNet's channels-first one."""
    layout = n.attrs.get("layout")
    data = ins[0]
    rank = len(data.node.avals[data.index].shape)
    pad, sides = _symmetric_pad(n, model_name)
    attrs = {"pad": pad} if "pad" in n.attrs else {}
    if layout not in _CHANNELS_LAST:
        if sides is not None:
            raise ExportError(f"save_mxnet_model: model '{model_name}': {_where(n)} pads its "
                              f"sides differently ({sides}); MXNet pads both sides alike")
        return _copy(n, ins, **attrs)
    if rank - 2 not in _CHANNELS_FIRST:
        raise ExportError(f"save_mxnet_model: model '{model_name}': {_where(n)} has a "
                          f"{rank}-D input; MXNet's operator takes 3-D to 5-D inputs")
    first = (0, rank - 1) + tuple(range(1, rank - 1))
    last = (0,) + tuple(range(2, rank)) + (1,)
    x = Entry(_make("transpose", f"{n.name}_to_channels_first", [data], axes=first), 0)
    if sides is not None:
        if n.op_name != "Convolution" or rank not in (4, 5):
            raise ExportError(
                f"save_mxnet_model: model '{model_name}': {_where(n)} pads its sides "
                f"differently ({sides}, Keras' padding='same' with an even window or "
                "stride); MXNet pads both sides alike, and its Pad operator takes 4-D and "
                "5-D convolution inputs only")
        flat = (0, 0, 0, 0) + tuple(v for pair in sides for v in pair)
        x = Entry(_make("pad", f"{n.name}_pad", [x], pad_width=flat, mode="constant",
                        constant_value=0.0), 0)
    rest = list(ins[1:])
    if rest and isinstance(rest[0], Entry):  # the weight, in the layout of our NHWC op
        rest[0] = _permuted(rest[0], first, f"{n.name}_weight_channels_first")
    attrs["layout"] = _CHANNELS_FIRST[rank - 2]
    node = _make(n.op_name, n.name, [x] + rest, **{**n.attrs, **attrs})
    return Entry(_make("transpose", f"{n.name}_to_channels_last", [Entry(node, 0)],
                       axes=last), 0)


def _permutation(n: Node, rank: int):
    """The axes permutation of a ``moveaxis``/``transpose`` node, or None."""
    if n.op_name == "transpose":
        axes = n.attrs.get("axes")
        return tuple(range(rank))[::-1] if axes is None else tuple(a % rank for a in axes)
    if n.op_name == "moveaxis":
        from core.ops.shape import _move

        return _move((0,) * rank, n.attrs.get("source", 0), n.attrs.get("destination", 0))
    return None


def _permuted(e: Entry, axes: tuple, name: str) -> Entry:
    """``transpose(e, axes)``, composed with ``e``'s own moveaxis/transpose (Keras'
    kernel layout to our NHWC weight) into one transpose of the Keras kernel."""
    inner = _permutation(e.node, len(axes)) if e.node.op is not None else None
    if inner is not None and len(e.node.inputs) == 1:
        axes = tuple(inner[a] for a in axes)
        e = e.node.inputs[0]
    return Entry(_make("transpose", name, [e], axes=axes), 0)


def _constants_as_params(graph: Graph, taken: set):
    """The graph with each constant node as a variable (MXNet's JSON has no constants),
    and the constants' values."""
    values: dict = {}
    names = set(taken)

    def rebuild(n, ins):
        if not n.is_constant:
            return n if tuple(ins) == n.inputs else _copy(n, ins)
        value = numpy.asarray(n.value)
        if value.shape == ():
            value = value.reshape(1)
        base = (n.name or "const").lstrip("_") or "const"
        name, k = base, 0
        while name in names:
            k += 1
            name = f"{base}{k}"
        names.add(name)
        values[name] = value
        return Node(None, name, user_attrs={"__shape__": str(tuple(value.shape))},
                    avals=n.avals, ctx=n.ctx)

    if not any(n.is_constant for n in graph.topo()):
        return graph, {}
    return map_graph(graph, rebuild), values
