"""ONNX export of Symbol graphs: MXNet 1.9's ``mx.onnx.export_model``.

:func:`export_model` writes a file from a Symbol (or ``-symbol.json``) and its parameters
(a dict, ``[arg_params, aux_params]`` or a ``.params`` file); :func:`export_graph` builds
the in-memory ``onnx.ModelProto`` (what :func:`export_model` and kbackend's Keras export
use); :func:`get_operator_support` lists the operators with a rule.

How a graph is exported:

1. the parameters become initializers named as the variables, every other variable a
   graph input (in graph order, MXNet's), the training flag is resolved to inference;
2. shapes and dtypes are inferred at ``in_shapes``; with ``dynamic=True`` a second
   inference at other sizes of the dynamic dimensions tells which dimensions vary, so
   reshapes keep them open (MXNet's special reshape codes are resolved here);
3. operators that depend only on parameters are computed now and become initializers
   (the RNN layers' packed parameter vector, ``zeros`` states);
4. each remaining operator is written by its rule (:mod:`core.onnx.export_ops`); an
   operator without one raises :class:`ExportError` naming the node and the operator.

Example:
    >>> import numpy as np
    >>> from core import nd, sym
    >>> from core.onnx import export_graph
    >>> y = sym.FullyConnected(sym.var("data"), num_hidden=2, name="fc")
    >>> params = {"fc_weight": nd.ones((2, 3)), "fc_bias": nd.zeros((2,))}
    >>> model = export_graph(y, params, [(1, 3)])
    >>> [i.name for i in model.graph.input], [o.name for o in model.graph.output]
    (['data'], ['fc'])
"""
from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence

import numpy
import onnx
from onnx import helper

from ..symbol.graph import Entry, Graph, resolve_attrs
from . import export_prep as prep
from .export_emit import Emitter, ExportError, onnx_dtype
from .export_ops import RULES

__all__ = ["DEFAULT_OPSET", "ExportError", "export_graph", "export_model",
           "get_operator_support"]

DEFAULT_OPSET = 17
"""The opset written when none is asked for (onnxruntime 1.16+ runs it; it has
LayerNormalization)."""
MIN_OPSET = 13
_PROTO_LIMIT = 2**31 - 1  # protobuf's message size limit

_log = logging.getLogger(__name__)

# Loss heads: their label input is not a graph input at inference (MXNet's output_label).
_LABEL_OPS = {"SoftmaxOutput": 1, "LinearRegressionOutput": 1, "LogisticRegressionOutput": 1,
              "MAERegressionOutput": 1}


def get_operator_support(opset_version: int | None = None) -> list[str]:
    """The operators :func:`export_model` writes, sorted: our registry names and the
    MXNet 1.9 names (``Concat``, ``Reshape``, ``broadcast_add``, ``_plus_scalar``,
    ``LayerNorm``, ...) that files and MXNet code use for them.

    Args:
        opset_version: the target opset (default :data:`DEFAULT_OPSET`); below
            :data:`MIN_OPSET` nothing is supported.

    Returns:
        A sorted list of operator names.

    Example:
        >>> from core.onnx import get_operator_support
        >>> "Convolution" in get_operator_support()
        True
    """
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if opset < MIN_OPSET:
        return []
    from ..symbol import json_mxnet

    names = set(RULES)
    for mx_name, (op, *_rest) in json_mxnet._mxnet_aliases().items():
        if op is not None and op.name in RULES:
            names.add(mx_name)
    names.update(n for n, rule_of in (("SoftmaxActivation", "softmax"),) if rule_of in RULES)
    return sorted(names)


# --------------------------------------------------------------------------- inputs
def _load_params(params) -> dict[str, numpy.ndarray]:
    """``{name: array}`` from a dict, ``[arg, aux]`` or a ``.params`` path."""
    if isinstance(params, (str, os.PathLike)):
        from ..serialization import load

        params = load(os.fspath(params))
    if isinstance(params, (list, tuple)):
        if len(params) != 2 or not all(isinstance(p, dict) for p in params):
            raise ValueError("export: params as a list must be [arg_params, aux_params]")
        merged = {}
        merged.update(params[0])
        merged.update(params[1])
        params = merged
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise TypeError(f"export: params must be a dict, [arg_params, aux_params] or a "
                        f".params path, got {type(params).__name__}")
    out = {}
    for k, v in params.items():
        name = k.split(":", 1)[1] if k.startswith(("arg:", "aux:")) else k
        out[name] = prep.as_numpy(v)
    return out


def _as_graph(obj) -> Graph:
    if isinstance(obj, (str, os.PathLike)):
        from .. import symbol as _symbol

        obj = _symbol.load(os.fspath(obj))
    if isinstance(obj, Graph):
        return obj
    if hasattr(obj, "graph") and isinstance(obj.graph, Graph):
        return obj.graph
    raise TypeError(f"export: expected a Symbol, a Graph or a -symbol.json path, got "
                    f"{type(obj).__name__}")


def _from_block(block, n_inputs: int):
    """A hybridized HybridBlock-like object: its traced Symbol and its parameters."""
    from .. import symbol as _symbol

    names = ["data"] if n_inputs == 1 else [f"data{i}" for i in range(n_inputs)]
    out = block(*[_symbol.var(nm) for nm in names])
    if isinstance(out, (list, tuple)):
        out = _symbol.Group(list(out))
    params = {}
    for name, p in block.collect_params().items():
        params[name] = p.data()
    return out, params


def _label_variables(graph: Graph, params) -> set[int]:
    labels = set()
    for n in graph.topo():
        pos = _LABEL_OPS.get(n.op_name)
        if pos is not None and pos < len(n.inputs) and isinstance(n.inputs[pos], Entry):
            v = n.inputs[pos].node
            if v.is_variable and v.name not in params:
                labels.add(v.id)
    return labels


# --------------------------------------------------------------------------- naming
def _graph_output_names(graph: Graph) -> list[str]:
    """MXNet's ONNX output names: ``list_outputs()`` without ``_output``."""
    from ..symbol.symbol import entry_name

    names = []
    for e in graph.outputs:
        name = entry_name(e)
        if name.endswith("_state_output"):
            name = name[:-len("_state_output")] + "1"
        elif name.endswith("_statecell_output"):
            name = name[:-len("_statecell_output")] + "2"
        elif name.endswith("_output"):
            name = name[:-len("_output")]
        elif re.search(r"_output[0-9]+$", name):
            m = re.search(r"_output([0-9]+)$", name)
            name = name[:m.start()] + m.group(1)
        names.append(name)
    return names


# --------------------------------------------------------------------------- the export
def export_graph(graph_or_symbol, params, in_shapes, in_types=numpy.float32,
                 input_names: Sequence[str] | None = None,
                 output_names: Sequence[str] | None = None, dynamic: bool = False,
                 dynamic_input_shapes: Sequence | None = None,
                 opset_version: int | None = None,
                 keep_initializers_as_inputs: bool = False) -> onnx.ModelProto:
    """Build the ONNX model of a Symbol (or Graph) and its parameters, in memory.

    Args:
        graph_or_symbol: a Symbol, a :class:`~core.symbol.graph.Graph` or a
            ``-symbol.json`` path.
        params: ``{name: array}`` (NDArrays or NumPy; ``arg:``/``aux:`` prefixes
            allowed), ``[arg_params, aux_params]`` or a ``.params`` path. Variables
            named here become initializers, the others graph inputs.
        in_shapes: the graph inputs' shapes, in graph order (or ``{name: shape}``).
        in_types: one dtype for all inputs, one per input or ``{name: dtype}``.
        input_names: ONNX names for the graph inputs (default: the variables' names).
        output_names: ONNX names for the outputs (default: MXNet's, the output node's
            name; ``name1``, ``name2`` for further outputs).
        dynamic: leave dimensions open: those that are None in
            ``dynamic_input_shapes``, or every dimension when it is not given (MXNet).
        dynamic_input_shapes: per input, a shape with None for each open dimension.
        opset_version: the ONNX opset (default :data:`DEFAULT_OPSET`; at least 13).
        keep_initializers_as_inputs: list the weights among the graph inputs too (as
            MXNet 1.9's exporter does; MXNet's importer needs it), not only as
            initializers.

    Returns:
        An ``onnx.ModelProto`` that ``onnx.checker.check_model`` accepts.

    Raises:
        ExportError: an operator has no ONNX form (the message names the node and the
            operator) or the shapes do not allow one.
        ValueError: inconsistent arguments.

    Example:
        >>> from core import sym
        >>> from core.onnx import export_graph
        >>> y = sym.reshape(sym.var("x"), shape=(0, -1), name="r")
        >>> model = export_graph(y, {}, [(2, 3, 4)], dynamic=True,
        ...                      dynamic_input_shapes=[(None, 3, 4)])
        >>> [d.dim_param or d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
        ['r_dim0', 12]
    """
    max_opset = onnx.defs.onnx_opset_version()
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if not MIN_OPSET <= opset <= max_opset:
        raise ValueError(f"export: opset_version={opset} is outside the supported range "
                         f"{MIN_OPSET}..{max_opset} (the installed onnx's newest)")
    # Inference only: the auxiliary-state updates (moving statistics) are not exported.
    graph = prep.unfuse(Graph(_as_graph(graph_or_symbol).outputs))
    values = _load_params(params)
    labels = _label_variables(graph, values)
    variables = [n for n in graph.topo() if n.is_variable]
    inputs = [v for v in variables if v.name not in values and v.id not in labels]
    if isinstance(in_shapes, dict):
        missing = [v.name for v in inputs if v.name not in in_shapes]
        if missing:
            raise ValueError(f"export: no shape given for the input(s) {missing}")
        in_shapes = [in_shapes[v.name] for v in inputs]
    if in_shapes is not None and len(in_shapes) and all(
            isinstance(d, (int, numpy.integer)) for d in in_shapes):
        in_shapes = [in_shapes]  # one shape given bare
    in_shapes = [] if in_shapes is None else [tuple(int(d) for d in s) for s in in_shapes]
    if len(in_shapes) != len(inputs):
        raise ValueError(f"export: {len(in_shapes)} input shape(s) for the {len(inputs)} "
                         f"graph input(s) {[v.name for v in inputs]} (variables that are "
                         "not parameters)")
    if isinstance(in_types, dict):
        in_types = [in_types.get(v.name, numpy.float32) for v in inputs]
    if isinstance(in_types, (list, tuple)):
        if len(in_types) != len(inputs):
            raise ValueError(f"export: {len(in_types)} input type(s) for {len(inputs)} inputs")
        in_dts = [numpy.dtype(t) for t in in_types]
    else:
        in_dts = [numpy.dtype(in_types)] * len(inputs)
    if dynamic_input_shapes is not None and not dynamic:
        raise ValueError("export: dynamic_input_shapes needs dynamic=True")
    if dynamic:
        if dynamic_input_shapes is None:
            dyn_flags = [(True,) * len(s) for s in in_shapes]
        else:
            if len(dynamic_input_shapes) != len(in_shapes):
                raise ValueError("export: dynamic_input_shapes needs one shape per input")
            dyn_flags = []
            for s, d in zip(in_shapes, dynamic_input_shapes):
                if len(d) != len(s):
                    raise ValueError(f"export: dynamic shape {tuple(d)} and shape {s} differ "
                                     "in rank")
                dyn_flags.append(tuple(v is None for v in d))
    else:
        dyn_flags = [(False,) * len(s) for s in in_shapes]

    shapes = {v.name: s for v, s in zip(inputs, in_shapes)}
    dtypes = {v.name: d for v, d in zip(inputs, in_dts)}
    for name, arr in values.items():
        shapes[name] = tuple(arr.shape)
        dtypes[name] = arr.dtype
    if labels:  # a loss head's label takes its data's shape (unused at inference)
        heads = [n for n in graph.topo() if _LABEL_OPS.get(n.op_name) is not None
                 and n.inputs[_LABEL_OPS[n.op_name]].node.id in labels]
        first = prep.infer(Graph([n.inputs[0] for n in heads]), shapes, dtypes)
        for n in heads:
            shapes[n.inputs[_LABEL_OPS[n.op_name]].node.name] = first.shape(n.inputs[0])
    base = prep.infer(graph, shapes, dtypes)
    batches = {s[0] for s, f in zip(in_shapes, dyn_flags) if s and f[0]}
    if batches:
        graph = prep.open_batch(graph, base, batches, {v.id for v in inputs})
        base = prep.infer(graph, shapes, dtypes)
    dyn = prep.dynamic_dims(graph, shapes, dtypes,
                        {v.name: f for v, f in zip(inputs, dyn_flags)}, base)

    b = Emitter(opset, base.shapes, dyn, base.dtypes)
    env: dict[tuple[int, int], object] = {}
    onnx_inputs = []
    in_names = list(input_names) if input_names is not None else [v.name for v in inputs]
    if len(in_names) != len(inputs):
        raise ValueError(f"export: {len(in_names)} input_names for {len(inputs)} inputs")
    for v, name, s, dt, flags in zip(inputs, in_names, in_shapes, in_dts, dyn_flags):
        b.taken.add(name)
        b.dtypes[name] = dt
        env[(v.id, 0)] = name
        dims = [f"{name}_dim{i}" if f else d for i, (d, f) in enumerate(zip(s, flags))]
        onnx_inputs.append(helper.make_tensor_value_info(name, onnx_dtype(dt), dims))
    for v in variables:
        if v.name in values:
            b.taken.discard(v.name)
            env[(v.id, 0)] = b.const(values[v.name], name=v.name)
        elif v.id in labels:
            env[(v.id, 0)] = None
    prep.fold(graph, b, env, values, inputs)

    for n in graph.topo():
        if n.op is None or (n.id, 0) in env:
            if n.is_constant and (n.id, 0) not in env:
                env[(n.id, 0)] = b.const(prep.as_numpy(n.value), name=n.name)
            continue
        _emit_node(b, n, env)

    out_names = list(output_names) if output_names is not None else \
        _graph_output_names(graph)
    if len(out_names) != len(graph.outputs):
        raise ValueError(f"export: {len(out_names)} output_names for {len(graph.outputs)} "
                         "outputs")
    onnx_outputs = []
    for e, name in zip(graph.outputs, out_names):
        t = env.get((e.node.id, e.index))
        if t is None:
            raise ExportError(f"output {name!r} ({e}) has no ONNX value")
        b.node = None
        if t != name:
            if name in b.taken:
                raise ExportError(f"export: the output name {name!r} is already a tensor's")
            b.taken.add(name)
            b.nodes.append(helper.make_node("Identity", [t], [name], name=b.fresh(
                f"{name}_identity")))
        s = base.shapes.get((e.node.id, e.index))
        flags = dyn.get((e.node.id, e.index)) or (False,) * len(s)
        dims = [f"{name}_dim{i}" if f else d for i, (d, f) in enumerate(zip(s, flags))]
        onnx_outputs.append(helper.make_tensor_value_info(
            name, onnx_dtype(base.dtypes[(e.node.id, e.index)]), dims))
    read = {t for node in b.nodes for t in node.input} | {o.name for o in onnx_outputs}
    initializers = [t for t in b.initializers if t.name in read]
    if keep_initializers_as_inputs:
        onnx_inputs = list(onnx_inputs) + [
            helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
            for t in initializers]
    g = helper.make_graph(b.nodes, "mxnet_converted_model", onnx_inputs, onnx_outputs,
                          initializer=initializers)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="kbackend")
    model.ir_version = min(model.ir_version, _ir_version(opset))
    if model.ByteSize() < _PROTO_LIMIT:  # larger ones are checked as files (large_model)
        onnx.checker.check_model(model)
    return model


def _ir_version(opset: int) -> int:
    """The IR version that goes with ``opset`` (older runtimes refuse newer IRs)."""
    for ir, op in ((7, 13), (8, 16), (9, 19), (10, 21)):
        if opset <= op:
            return ir
    return onnx.IR_VERSION


def _emit_node(b: Emitter, n, env: dict) -> None:
    rule = RULES.get(n.op.name)
    if rule is None:
        raise ExportError(f"export: node {n.name!r} uses the operator {n.op.name!r}, which "
                          f"has no ONNX export rule; exportable operators: "
                          f"{', '.join(sorted(RULES))}")
    ins = []
    for e in n.inputs:
        if isinstance(e, Entry):
            ins.append(env.get((e.node.id, e.index)))
        else:
            ins.append(e)
    attrs = resolve_attrs(n.attrs, False)
    b.begin(n)
    try:
        outs = rule(b, n, ins, attrs)
    except ExportError as err:
        raise ExportError(f"export: node {n.name!r} (operator {n.op.name!r}): {err}") from err
    except (ValueError, TypeError, KeyError) as err:
        shapes = []
        for e in n.inputs:
            if isinstance(e, Entry):
                shapes.append(b._shapes.get((e.node.id, e.index)))
        raise ExportError(f"export: node {n.name!r} (operator {n.op.name!r}, input shapes "
                          f"{shapes}, attributes {attrs}): {err}") from err
    outs = list(outs) + [None] * (n.num_outputs - len(outs))
    for i, t in enumerate(outs[:n.num_outputs]):
        if t is None:
            continue
        want = prep.entry_tensor_name(Entry(n, i))
        if want not in b.taken:
            b.taken.add(want)
            if b.rename(t, want):
                t = want
            else:
                b.taken.discard(want)
        dt = b._entry_dtypes.get((n.id, i))
        if dt is not None and t not in b.values:
            b.dtypes[t] = dt
        env[(n.id, i)] = t


def export_model(sym, params, in_shapes=None, in_types=numpy.float32,
                 onnx_file_path: str = "model.onnx", verbose: bool = False,
                 dynamic: bool = False, dynamic_input_shapes=None,
                 run_shape_inference: bool = False, input_type=None, input_shape=None,
                 large_model: bool = False, opset_version: int | None = None,
                 keep_initializers_as_inputs: bool = True) -> str:
    """Export a model to an ONNX file (MXNet 1.9's ``mx.onnx.export_model``).

    Args:
        sym: a Symbol, a ``-symbol.json`` path, or a hybridized HybridBlock (its
            parameters are used when ``params`` is None).
        params: ``{name: array}``, ``[arg_params, aux_params]`` or a ``.params`` path.
        in_shapes: the input shapes, e.g. ``[(1, 3, 224, 224)]``.
        in_types: one dtype or one per input (default float32).
        onnx_file_path: where to write the model (atomically).
        verbose: log each node as it is converted.
        dynamic: open dimensions (see :func:`export_graph`).
        dynamic_input_shapes: per input, None for each open dimension.
        run_shape_inference: run ONNX shape inference on the result.
        input_type: the old name of ``in_types``.
        input_shape: the old name of ``in_shapes``.
        large_model: store the weights as external data next to the file (models over
            2 GB).
        opset_version: the ONNX opset (default :data:`DEFAULT_OPSET`).
        keep_initializers_as_inputs: list the weights among the graph inputs too, as
            MXNet 1.9's exporter does, so real MXNet's ``mx.contrib.onnx.import_model``
            reads the file (default True; onnxruntime runs either form).

    Returns:
        ``onnx_file_path``.

    Example:
        >>> import os, tempfile
        >>> from core import nd, sym
        >>> from core.onnx import export_model
        >>> y = sym.Activation(sym.FullyConnected(sym.var("data"), num_hidden=2, name="fc"),
        ...                    act_type="relu", name="relu")
        >>> params = {"arg:fc_weight": nd.ones((2, 3)), "arg:fc_bias": nd.zeros((2,))}
        >>> path = export_model(y, params, [(1, 3)],
        ...                     onnx_file_path=os.path.join(tempfile.mkdtemp(), "fc.onnx"))
        >>> os.path.basename(path)
        'fc.onnx'
    """
    if input_type is not None:
        in_types = input_type
    if input_shape is not None:
        in_shapes = input_shape
    if in_shapes is None:
        raise ValueError("export_model: in_shapes is required (e.g. [(1, 3, 224, 224)])")
    if hasattr(sym, "collect_params") and hasattr(sym, "hybridize"):
        if in_shapes and all(isinstance(d, (int, numpy.integer)) for d in in_shapes):
            in_shapes = [in_shapes]
        block_sym, block_params = _from_block(sym, len(in_shapes))
        sym, params = block_sym, (block_params if params is None else params)
    if verbose:
        _log.setLevel(logging.INFO)
    model = export_graph(sym, params, in_shapes, in_types, dynamic=dynamic,
                         dynamic_input_shapes=dynamic_input_shapes,
                         opset_version=opset_version,
                         keep_initializers_as_inputs=keep_initializers_as_inputs)
    if verbose:
        for node in model.graph.node:
            _log.info("exported %s (%s)", node.name, node.op_type)
    if run_shape_inference:
        try:
            model = onnx.shape_inference.infer_shapes(model)
        except Exception as e:  # noqa: BLE001 - MXNet keeps the model when inference fails
            _log.info("ONNX shape inference failed (%s); the model is kept as it is", e)
    _save(model, os.fspath(onnx_file_path), large_model)
    if large_model:
        onnx.checker.check_model(os.fspath(onnx_file_path))
    return onnx_file_path


def _save(model: onnx.ModelProto, path: str, large_model: bool) -> None:
    """Write ``model`` atomically (with ``large_model``, its weights go to
    ``<file>.data`` beside it, written first, then renamed into place the same way)."""
    import tempfile

    from ..serialization import atomic_write

    directory = os.path.dirname(os.path.abspath(path))
    if not large_model:
        data = model.SerializeToString()
        atomic_write(path, lambda f: f.write(data))
        return
    location = os.path.basename(path) + ".data"
    with tempfile.TemporaryDirectory(dir=directory, prefix=".onnx-export-") as tmp:
        staged = os.path.join(tmp, os.path.basename(path))
        onnx.save_model(model, staged, save_as_external_data=True,
                        all_tensors_to_one_file=True, location=location, size_threshold=1024)
        if os.path.exists(os.path.join(tmp, location)):
            os.replace(os.path.join(tmp, location), os.path.join(directory, location))
        os.replace(staged, path)
