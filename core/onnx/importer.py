"""ONNX models to Symbol graphs: MXNet 1.9's ``mx.contrib.onnx.import_model``.

:func:`import_model` reads an ``.onnx`` file (or takes an ``onnx.ModelProto``) and returns
``(sym, arg_params, aux_params)`` as MXNet does: the graph's inputs without an initializer
stay variables under their own names; initializers (and constants that feed tensors) become
variables whose values are in ``arg_params``, except BatchNormalization's running mean and
variance, which are ``aux_params``. Each ONNX operator is translated by a rule from the
family tables (:mod:`core.onnx.import_math`, :mod:`~core.onnx.import_shape`,
:mod:`~core.onnx.import_nn`, :mod:`~core.onnx.import_rnn`). A node whose inputs are all
constant is evaluated at import (``onnx.reference``), so shape computations
(``Shape -> Gather -> Concat -> Reshape``) fold away.

Example (needs the ``onnx`` package):
    >>> from onnx import TensorProto, helper
    >>> from core.onnx import import_graph
    >>> g = helper.make_graph(
    ...     [helper.make_node("Relu", ["x"], ["y"])], "g",
    ...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
    ...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    >>> s, args, aux = import_graph(helper.make_model(g))
    >>> s.list_arguments()
    ['x']
"""
from __future__ import annotations

import os
from typing import Any

import numpy

from .. import ndarray as _nd
from .. import sym as _sym
from ..symbol.symbol import Symbol

_OPSET_MIN, _OPSET_MAX = 7, 21  # the translated range; newer opsets read with 21's rules
# a dimension unknown at import (a dim_param such as the batch) reads, in a Shape value, as
# a placeholder -(_DYN_BASE + k): it may travel through data movement (Gather, Concat, ...)
# and become Reshape's 0 ("copy this dimension"), but nothing may compute with it
_DYN_BASE = 2 ** 30
_DYN_MOVES = {"Gather", "Concat", "Unsqueeze", "Squeeze", "Slice", "Identity", "Reshape",
              "Cast", "Split"}
_DYN_READERS = {"Reshape", "ConstantOfShape", "Expand"}  # rules that turn placeholders into graph ops
# nodes never folded at import even with constant inputs (their value differs per run)
_NO_FOLD = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
            "Multinomial", "Bernoulli", "Dropout"}


class OnnxImportError(ValueError):
    """An ONNX model that cannot be translated (names the node and the reason)."""


def _onnx():
    try:
        import onnx
    except ModuleNotFoundError as e:  # pragma: no cover - onnx is in the [onnx] extra
        raise ModuleNotFoundError("ONNX import needs the onnx package: pip install "
                                  "'kbackend[onnx]'") from e
    return onnx


def _load(model_file) -> Any:
    onnx = _onnx()
    if isinstance(model_file, onnx.ModelProto):
        return model_file
    if isinstance(model_file, (bytes, bytearray)):
        return onnx.load_from_string(bytes(model_file))
    path = os.fspath(model_file)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"ONNX import: no such file {path!r}")
    return onnx.load(path)


def _opset(model) -> int:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return int(imp.version)
    return _OPSET_MAX


def _attrs(node) -> dict:
    from onnx import helper

    return {a.name: _attr_value(helper.get_attribute_value(a)) for a in node.attribute}


def _attr_value(v):
    if isinstance(v, bytes):
        return v.decode("utf-8")
    if isinstance(v, list):
        return tuple(x.decode("utf-8") if isinstance(x, bytes) else x for x in v)
    return v


def _shape_of(value_info) -> tuple | None:
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim)


def _dim_list(value_info) -> tuple:
    """MXNet's metadata form: unknown dimensions read as 0."""
    shape = _shape_of(value_info)
    return tuple(0 if d is None else d for d in (shape or ()))


class GraphImporter:
    """The state of one import: values by ONNX name, constants, static shapes.

    Rules (``rule(ctx, node, attrs)``) read their inputs through :meth:`sym`,
    :meth:`const` and :meth:`shape`, and return one Symbol per ONNX output (a Symbol, or
    a list; ``None`` for an output that is not produced).
    """

    def __init__(self, model):
        self.model = model
        self.opset = _opset(model)
        self.graph = model.graph
        self.params: dict[str, numpy.ndarray] = {}  # name -> value, for tensors that are vars
        self._syms: dict[str, Symbol] = {}
        self._consts: dict[str, numpy.ndarray] = {}
        self._shapes: dict[str, tuple | None] = {}
        self._node = None
        self._dyn: list[tuple[str, int]] = []  # placeholder k -> (tensor, axis)
        self._inferred: set[str] = set()
        self._taken = {vi.name for vi in self.graph.input} | \
            {t.name for t in self.graph.initializer}
        self._named_node, self._node_label = None, None
        self._infer_shapes()

    # ---------------------------------------------------------------- setup
    def _infer_shapes(self) -> None:
        onnx = _onnx()
        try:
            inferred = onnx.shape_inference.infer_shapes(self.model, data_prop=True).graph
        except (onnx.shape_inference.InferenceError, ValueError, RuntimeError, TypeError):
            # shapes are a hint only: go on without them
            inferred = self.graph
        for vi in list(inferred.input) + list(inferred.value_info) + list(inferred.output):
            self._shapes[vi.name] = _shape_of(vi)

    # ---------------------------------------------------------------- what rules use
    def node_name(self, node) -> str | None:
        """The ONNX node's name (``None`` when empty: automatic naming); one that repeats
        a value's or an earlier node's name gets a ``_<k>`` suffix (names stay unique)."""
        name = node.name.strip()
        if not name:
            return None
        if node is not self._named_node:
            self._named_node = node
            base, k = name, 1
            while name in self._taken:
                name, k = f"{base}_{k}", k + 1
            self._taken.add(name)
            self._node_label = name
        return self._node_label

    def has(self, node, i: int) -> bool:
        """Whether the node's input ``i`` is given (ONNX leaves optional ones empty)."""
        return len(node.input) > i and node.input[i] != ""

    def const(self, name: str) -> numpy.ndarray | None:
        """The value of ``name`` when it is known at import (initializer, Constant, folded)."""
        return self._consts.get(name)

    def input_const(self, node, i: int, what: str, required: bool = True,
                    dynamic: bool = False):
        """Input ``i`` of ``node`` as a constant, or an error that says it must be one.

        ``dynamic``: the value may hold dimensions unknown at import (see
        :meth:`dynamic_dim`); otherwise they are an error."""
        if not self.has(node, i):
            if required:
                raise self.error(node, f"needs its input {i} ({what})")
            return None
        v = self.const(node.input[i])
        if v is None:
            raise self.error(node, f"its input {i} ({what}, {node.input[i]!r}) must be a "
                             "constant (an initializer or Constant, or computed from them); "
                             "it is computed from the graph's inputs")
        if not dynamic and self.dynamic_dims(v):
            raise self.error(node, f"its input {i} ({what}) depends on "
                             f"{self._describe(v)}, unknown when the model is imported")
        return v

    def shape_value(self, name: str) -> numpy.ndarray:
        """``Shape(name)`` at import: int64, with a placeholder for each unknown dimension."""
        shape = self.shape(name)
        if shape is None:
            raise self.error(self._node, f"reads the shape of {name!r}, whose rank is unknown")
        out = []
        for axis, d in enumerate(shape):
            if d is None:
                self._dyn.append((name, axis))
                d = -(_DYN_BASE + len(self._dyn) - 1)
            out.append(d)
        return numpy.asarray(out, dtype=numpy.int64)

    def dynamic_dims(self, v) -> list[tuple[int, str, int]]:
        """The placeholders in ``v``: ``(position, tensor, axis)`` for each."""
        v = numpy.asarray(v)
        if v.dtype.kind not in "i" or v.ndim > 1:
            return []
        flat = v.reshape(-1)
        return [(j, *self._dyn[-int(x) - _DYN_BASE]) for j, x in enumerate(flat)
                if x <= -_DYN_BASE and -int(x) - _DYN_BASE < len(self._dyn)]

    def _describe(self, v) -> str:
        return ", ".join(f"dimension {axis} of {name!r}" for _, name, axis in
                         self.dynamic_dims(v))

    def sym(self, name: str) -> Symbol:
        """The Symbol of an ONNX value (a constant becomes a parameter variable)."""
        if name in self._syms:
            return self._syms[name]
        if name in self._consts:
            value = self._consts[name]
            if self.dynamic_dims(value):
                raise self.error(self._node, f"uses {name!r} as a tensor; it holds "
                                 f"{self._describe(value)}, unknown when the model is "
                                 "imported")
            s = _sym.var(name, shape=value.shape, dtype=str(value.dtype))
            self.params[name] = value
            self._syms[name] = s
            return s
        raise self.error(self._node, f"reads {name!r}, which no earlier node produces")

    def inputs(self, node) -> list[Symbol | None]:
        """The Symbols of all inputs of ``node`` (``None`` for an omitted optional one)."""
        return [self.sym(n) if n else None for n in node.input]

    def shape(self, name: str) -> tuple | None:
        """The static shape of ``name`` (``None`` entries for unknown dimensions), or
        ``None`` when even the rank is unknown."""
        if name in self._consts:
            return tuple(self._consts[name].shape)
        shape = self._shapes.get(name)
        if (shape is None or None in shape) and name in self._syms and \
                name not in self._inferred:
            self._inferred.add(name)  # once per value: inference walks the graph so far
            shape = self._infer_symbol_shape(self._syms[name]) or shape
            self._shapes[name] = shape
        return shape

    def _infer_symbol_shape(self, s: Symbol) -> tuple | None:
        """What our own shape inference says where ONNX's gave up (e.g. after an LSTM)."""
        known = {}
        for n in s.list_arguments() + s.list_auxiliary_states():
            given = self.params[n].shape if n in self.params else self._shapes.get(n)
            if given is not None and None not in given:
                known[n] = tuple(given)
        try:
            _, outs, _ = s.infer_shape_partial(**known)
        except (ValueError, TypeError):
            return None
        if not outs or outs[0] is None:
            return None
        return tuple(d if d else None for d in outs[0])

    def rank(self, node, i: int) -> int:
        """The rank of input ``i`` (an error when the model does not say)."""
        s = self.shape(node.input[i])
        if s is None:
            raise self.error(node, f"needs the rank of its input {node.input[i]!r}, which "
                             "the model's shapes do not give")
        return len(s)

    def error(self, node, msg: str) -> OnnxImportError:
        """An error naming the node (name, op_type, domain) and the model's opset."""
        if node is None:
            return OnnxImportError(f"ONNX import: {msg}")
        dom = node.domain or "ai.onnx"
        return OnnxImportError(f"ONNX import: node {node.name!r} (op_type {node.op_type!r}, "
                            f"domain {dom!r}, opset {self.opset}) {msg}")

    # ---------------------------------------------------------------- the walk
    def run(self) -> tuple[Symbol, dict, dict]:
        onnx = _onnx()
        from onnx import numpy_helper

        from .import_rules import RULES

        if self.opset < _OPSET_MIN:  # newer opsets read with the latest rules (21's)
            raise OnnxImportError(f"ONNX import: the model's opset {self.opset} is older than "
                                  f"the oldest translated one ({_OPSET_MIN})")
        for t in self.graph.initializer:
            if not t.name.strip():
                raise OnnxImportError("ONNX import: an initializer has no name")
            self._consts[t.name] = numpy_helper.to_array(t)
        for vi in self.graph.input:
            if vi.name not in self._consts:
                elem = vi.type.tensor_type.elem_type
                dtype = onnx.helper.tensor_dtype_to_np_dtype(elem) if elem else None
                self._syms[vi.name] = _sym.var(vi.name, dtype=None if dtype is None
                                               else str(numpy.dtype(dtype)))
        for node in self.graph.node:
            self._node = node
            self._convert(node, RULES)
        self._node = None
        outs = [self.sym(o.name) for o in self.graph.output]
        out = outs[0] if len(outs) == 1 else _sym.Group(outs)
        used = set(out.list_arguments()) | set(out.list_auxiliary_states())
        aux = set(out.list_auxiliary_states())
        arg_params = {k: _nd.array(v, dtype=v.dtype) for k, v in self.params.items()
                      if k in used and k not in aux}
        aux_params = {k: _nd.array(v, dtype=v.dtype) for k, v in self.params.items()
                      if k in aux}
        return out, arg_params, aux_params

    def _convert(self, node, rules) -> None:
        if node.domain not in ("", "ai.onnx"):
            raise self.error(node, "is in a domain this importer does not translate "
                             "(only the default ai.onnx domain)")
        if self._fold(node, rules):
            return
        for n in node.input:  # placeholders of unknown dimensions: only Reshape reads them
            if n in self._consts and node.op_type not in _DYN_READERS and \
                    self.dynamic_dims(self._consts[n]):
                raise self.error(node, f"reads {self._describe(self._consts[n])} as data; "
                                 "it is unknown when the model is imported (export the "
                                 "model with static shapes)")
        rule = rules.get(node.op_type)
        if rule is None:
            raise self.error(node, "is not supported by the ONNX importer (see "
                             "docs/onnx.md for the operators it translates)")
        result = rule(self, node, _attrs(node))
        if isinstance(result, (Symbol, numpy.ndarray)):
            result = [result]
        result = list(result)
        for name, s in zip(node.output, result):
            if name and s is not None:
                if isinstance(s, numpy.ndarray):
                    self._consts[name] = s
                else:
                    self._syms[name] = s

    def _fold(self, node, rules) -> bool:
        """Evaluate a node with constant inputs at import (shape arithmetic)."""
        if node.op_type in _NO_FOLD or node.op_type == "Constant":
            if node.op_type == "Constant":
                self._consts[node.output[0]] = _constant_value(self, node)
                return True
            return False
        names = [n for n in node.input if n]
        if not names or not all(n in self._consts for n in names):
            return False
        dyn = [n for n in names if self.dynamic_dims(self._consts[n])]
        if dyn and node.op_type in _DYN_READERS:
            return False
        to_float = node.op_type == "Cast" and _attrs(node).get("to") not in (6, 7)
        if dyn and (node.op_type not in _DYN_MOVES or to_float):
            raise self.error(node, f"computes with {self._describe(self._consts[dyn[0]])}, "
                             "which is unknown when the model is imported (export the model "
                             "with static shapes)")
        if any(a.type in (5, 10) for a in node.attribute):  # GRAPH/GRAPHS: control flow
            return False
        from onnx.reference import ReferenceEvaluator

        onnx = _onnx()
        h = onnx.helper
        ins = [h.make_tensor_value_info(n, h.np_dtype_to_tensor_dtype(self._consts[n].dtype),
                                        self._consts[n].shape) for n in names]
        outs = [h.make_empty_tensor_value_info(n) for n in node.output if n]
        g = h.make_graph([node], "fold", ins, outs)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", self.opset)])
        try:
            values = ReferenceEvaluator(m).run(None, {n: self._consts[n] for n in names})
        except Exception as e:
            if node.op_type in rules and not dyn:  # translate it as a graph node instead
                return False
            raise self.error(node, f"could not be evaluated at import: {e}") from e
        for name, v in zip([n for n in node.output if n], values):
            self._consts[name] = numpy.asarray(v)
        return True


def _constant_value(ctx: GraphImporter, node) -> numpy.ndarray:
    from onnx import numpy_helper

    a = _attrs(node)
    if "value" in a:
        return numpy_helper.to_array(a["value"])
    for key, dt in (("value_float", numpy.float32), ("value_floats", numpy.float32),
                    ("value_int", numpy.int64), ("value_ints", numpy.int64)):
        if key in a:
            return numpy.asarray(a[key], dtype=dt)
    raise ctx.error(node, f"has attributes {sorted(a)}; supported: value, value_float(s), "
                    "value_int(s)")


def import_graph(model_proto) -> tuple[Symbol, dict, dict]:
    """Translate an in-memory ONNX model to ``(sym, arg_params, aux_params)``.

    Args:
        model_proto: an ``onnx.ModelProto`` (or a path, or the serialized bytes).

    Returns:
        The Symbol of the graph's outputs (a Group for several), the parameters (name ->
        NDArray) and the auxiliary states (BatchNorm's running mean and variance).

    Raises:
        ValueError: an operator (or attribute) outside what the importer translates; the
            message names the node, its op_type, domain and the model's opset.
    """
    return GraphImporter(_load(model_proto)).run()


def import_model(model_file) -> tuple[Symbol, dict, dict]:
    """Import an ONNX file as MXNet's ``mx.contrib.onnx.import_model`` does.

    Args:
        model_file: the ``.onnx`` path (or an ``onnx.ModelProto``).

    Returns:
        ``(sym, arg_params, aux_params)``: bind ``sym`` with the model's inputs (by their
        ONNX names) plus ``arg_params`` and ``aux_params``.

    Example:
        >>> from core.onnx import import_model  # doctest: +SKIP
        >>> sym, arg_params, aux_params = import_model("resnet18.onnx")  # doctest: +SKIP
    """
    return import_graph(_load(model_file))


def get_model_metadata(model_file) -> dict:
    """The model's inputs and outputs, as MXNet's ``get_model_metadata`` returns them.

    Args:
        model_file: the ``.onnx`` path (or an ``onnx.ModelProto``).

    Returns:
        ``{'input_tensor_data': [(name, shape, elem_type), ...], 'output_tensor_data':
        [(name, shape), ...]}``; inputs with an initializer (weights) are left out; an
        unknown dimension reads as 0; ``elem_type`` is ONNX's TensorProto code (1 is
        float32), as in MXNet 1.9.
    """
    graph = _load(model_file).graph
    params = {t.name for t in graph.initializer}
    ins = [(vi.name, _dim_list(vi), vi.type.tensor_type.elem_type)
           for vi in graph.input if vi.name not in params]
    outs = [(vi.name, _dim_list(vi)) for vi in graph.output]
    return {"input_tensor_data": ins, "output_tensor_data": outs}
