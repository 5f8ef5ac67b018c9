"""``model.export(path, format="onnx")`` on kbackend.

Keras' ``export_onnx`` (``keras.src.export.onnx``) converts with another framework's
exporter per backend (tf2onnx, jax2onnx, torch.onnx); the import hook adds a
``"kbackend"`` branch to that chain which calls :func:`export_onnx` here. The model's
inference pass is traced into a core Graph (:mod:`kbackend.graph_export`: every
``None`` axis of the input signature stays dynamic), rewritten for channels-first
convolutions and scalar operators as for MXNet (:mod:`kbackend.mxnet_export`), and
converted by :func:`core.onnx.export_graph`. Inputs are named as Keras' other backends
name them (the input spec's ``name``, else ``input_<i>``) and dynamic axes as they do
(``batch`` for the first axis, ``dim_<input>_<axis>`` for the others).
"""
from __future__ import annotations

import os

import numpy

from core import serialization

from .graph_export import (
    ExportError,
    InputSpec,
    dynamic_axes,
    sanitize,
    trace_model,
    trace_sizes,
)
from .mxnet_export import mxnet_graph

__all__ = ["export_onnx"]


def _flat_specs(model, input_signature):
    from keras.src import tree
    from keras.src.export.export_utils import get_input_signature

    if input_signature is None:
        input_signature = get_input_signature(model)
        if not input_signature or not model._called:
            raise ValueError("The model provided has never called. ")
    return input_signature, tree.flatten(input_signature)


def _spec(spec, i: int, taken: set) -> InputSpec:
    from keras.src.backend import standardize_dtype

    name = getattr(spec, "name", None) or f"input_{i}"
    if name in taken:
        raise ValueError(f"export_onnx: two inputs are named {name!r}; give the input "
                         "specs distinct names")
    taken.add(name)
    shape = getattr(spec, "shape", None)
    if shape is None:
        raise ValueError(f"export_onnx: input {i} ({spec!r}) has no shape; pass an "
                         "input_signature of keras.InputSpec / KerasTensor / tensors")
    dtype = standardize_dtype(getattr(spec, "dtype", None) or "float32")
    return InputSpec(name, tuple(None if d is None else int(d) for d in shape), dtype)


def export_onnx(model, filepath, input_signature=None, *, opset_version: int | None = None,
                verbose: bool | None = None, input_names=None, **kwargs) -> str:
    """Write ``model``'s inference pass as an ONNX file (``model.export(...,
    format="onnx")`` on kbackend).

    Args:
        model: a built (and, if subclassed, called) Keras model.
        filepath: where the ``.onnx`` file goes (written atomically).
        input_signature: Keras' input signature (``keras.InputSpec``, KerasTensors or
            tensors, nested as the model is called); default: the model's own.
        opset_version: the ONNX opset (default: the exporter's).
        verbose: accepted for Keras' signature (Keras prints the message).
        input_names: the names Keras computed (unused: names come from the flat specs,
            as on Keras' torch and jax backends).
        **kwargs: no other options are understood.

    Returns:
        The file's path.

    Raises:
        ValueError: an unknown option, a model never called, or a layer the exporter
            cannot express (the message names it).
    """
    del verbose, input_names
    if kwargs:
        raise ValueError(f"export_onnx on kbackend: unknown options {sorted(kwargs)}")
    from core.onnx import export_graph

    structure, flat = _flat_specs(model, input_signature)
    taken: set = set()
    inputs = [_spec(s, i, taken) for i, s in enumerate(flat)]
    exported = trace_model(model, inputs, structure=structure)
    graph, arrays = mxnet_graph(exported, model.name)
    dynamic = any(d is None for s in inputs for d in s.shape)
    dyn = dynamic_axes(inputs)  # concrete shapes: the first trace's (valid for the model)
    concrete = {s.name: tuple(trace_sizes(dyn[(i, a)])[0] if d is None else d
                              for a, d in enumerate(s.shape)) for i, s in enumerate(inputs)}
    by_name = {s.name: s for s in inputs}
    # the exporter takes the inputs in graph order
    order = [n.name for n in graph.topo() if n.is_variable and n.name in by_name]
    try:
        proto = export_graph(graph, arrays, [concrete[k] for k in order],
                             [numpy.dtype(by_name[k].dtype) for k in order],
                             output_names=[sanitize(n) for n in exported.output_names],
                             dynamic=dynamic,
                             dynamic_input_shapes=([by_name[k].shape for k in order]
                                                   if dynamic else None),
                             opset_version=opset_version)
    except ValueError as e:
        raise ExportError(f"export_onnx: model '{model.name}': {e}") from None
    _name_dynamic_axes(proto, inputs)
    path = os.fspath(filepath)
    data = proto.SerializeToString()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    serialization.atomic_write(path, lambda f: f.write(data))
    return path


def _name_dynamic_axes(proto, inputs: list[InputSpec]) -> None:
    """Put the graph's inputs in the model's order and name their dynamic axes as
    Keras' jax and torch exports do."""
    by_name = {s.name: (i, s) for i, s in enumerate(inputs)}
    values = sorted(proto.graph.input, key=lambda v: by_name.get(v.name, (len(inputs),))[0])
    copies = [type(v)() for v in values]
    for c, v in zip(copies, values):
        c.CopyFrom(v)
    del proto.graph.input[:]
    proto.graph.input.extend(copies)
    for value in proto.graph.input:
        hit = by_name.get(value.name)
        if hit is None:
            continue
        i, spec = hit
        dims = value.type.tensor_type.shape.dim
        for a, d in enumerate(spec.shape):
            if d is None and a < len(dims):
                dims[a].dim_param = "batch" if a == 0 else f"dim_{i}_{a}"
