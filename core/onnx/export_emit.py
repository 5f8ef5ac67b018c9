"""The ONNX graph under construction while exporting (what the export rules write with).

:class:`Emitter` keeps the ONNX nodes, the initializers, every tensor's dtype (and value,
for initializers) and unique names. The rules of :mod:`core.onnx.export_ops` receive it
together with the node they translate and call :meth:`Emitter.op`, :meth:`Emitter.const`
and the shape facts (:meth:`Emitter.in_shape`, :meth:`Emitter.out_shape`, and which
dimensions vary with a dynamic input: :meth:`Emitter.in_dynamic`).
"""
from __future__ import annotations

import numpy
import onnx
from onnx import helper, numpy_helper

INT64_MAX = numpy.iinfo(numpy.int64).max
INT64_MIN = numpy.iinfo(numpy.int64).min


class ExportError(ValueError):
    """A node that cannot be written as ONNX (the message names the node and the op)."""


def onnx_dtype(dtype) -> int:
    """The ONNX ``TensorProto`` element type of a NumPy dtype."""
    dt = numpy.dtype(dtype)
    try:
        return helper.np_dtype_to_tensor_dtype(dt)
    except (KeyError, ValueError, TypeError) as e:
        raise ExportError(f"the dtype {dt} has no ONNX element type") from e


class Emitter:
    """The ONNX nodes and initializers of one export; see the module doc.

    Args:
        opset: the ONNX opset version (default domain).
        shapes: ``(node id, output) -> shape`` inferred at the given input shapes.
        dynamic: ``(node id, output) -> tuple of bool``: which dimensions change with a
            dynamic input dimension.
        dtypes: ``(node id, output) -> numpy.dtype``.
    """

    def __init__(self, opset: int, shapes: dict, dynamic: dict, dtypes: dict):
        self.opset = opset
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.values: dict[str, numpy.ndarray] = {}
        self.dtypes: dict[str, numpy.dtype] = {}
        self.taken: set[str] = set()
        self._shapes, self._dynamic, self._entry_dtypes = shapes, dynamic, dtypes
        self._made_by: dict[str, tuple[onnx.NodeProto, int]] = {}
        self.node = None  # the graph node being translated
        self._first = 0  # index of its first ONNX node
        self._counter = 0

    # ------------------------------------------------------------ names
    def fresh(self, hint: str) -> str:
        """A tensor/node name not used yet, ``hint`` itself where free."""
        name = hint
        while name in self.taken:
            self._counter += 1
            name = f"{hint}_{self._counter}"
        self.taken.add(name)
        return name

    def _hint(self, suffix: str) -> str:
        base = self.node.name if self.node is not None else "onnx"
        return f"{base}_{suffix}"

    def begin(self, node) -> None:
        """Start translating graph node ``node``."""
        self.node = node
        self._first = len(self.nodes)

    # ------------------------------------------------------------ writing
    def op(self, op_type: str, inputs, n_out: int = 1, dtype=None, **attrs):
        """Add node ``op_type`` over tensor names ``inputs`` ('' for an omitted optional
        input); returns its output name (a list of names when ``n_out > 1``)."""
        outs = [self.fresh(self._hint(op_type.lower() if i == 0 else f"{op_type.lower()}{i}"))
                for i in range(n_out)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        node = helper.make_node(op_type, [str(t) for t in inputs], outs,
                                name=self.fresh(self._hint(op_type)), **attrs)
        self.nodes.append(node)
        for i, o in enumerate(outs):
            self._made_by[o] = (node, i)
            if dtype is not None:
                self.dtypes[o] = numpy.dtype(dtype)
        return outs[0] if n_out == 1 else outs

    def const(self, value, hint: str = "const", dtype=None, name: str | None = None) -> str:
        """An initializer holding ``value`` (a NumPy array or scalar); returns its name."""
        arr = numpy.asarray(value, dtype=dtype)
        if arr.dtype == numpy.float64 and dtype is None and not isinstance(value,
                                                                          numpy.ndarray):
            arr = arr.astype(numpy.float32)
        name = self.fresh(name if name is not None else self._hint(hint))
        self.initializers.append(numpy_helper.from_array(arr, name))
        self.values[name] = arr
        self.dtypes[name] = arr.dtype
        return name

    def ints(self, values, hint: str = "ints") -> str:
        """A 1-D int64 initializer (shapes, axes, starts/ends)."""
        return self.const(numpy.asarray(list(values), dtype=numpy.int64), hint)

    def rename(self, tensor: str, name: str) -> bool:
        """Give the output ``tensor`` of a node written for the current graph node the
        name ``name`` (taken already by the caller); False where it cannot be renamed."""
        made = self._made_by.pop(tensor, None)
        if made is None:
            return False
        node, i = made
        node.output[i] = name
        for other in self.nodes[self._first:]:  # nodes of the same rule that read it
            for j, t in enumerate(other.input):
                if t == tensor:
                    other.input[j] = name
        self._made_by[name] = made
        if tensor in self.dtypes:
            self.dtypes[name] = self.dtypes[tensor]
        return True

    # ------------------------------------------------------------ tensor facts
    def value(self, tensor) -> numpy.ndarray | None:
        """The value of an initializer (None for computed tensors)."""
        return self.values.get(tensor) if isinstance(tensor, str) else None

    def dtype(self, tensor) -> numpy.dtype | None:
        return self.dtypes.get(tensor)

    def cast(self, tensor: str, dtype) -> str:
        """``tensor`` as ``dtype`` (a Cast node only where it is another dtype)."""
        dt = numpy.dtype(dtype)
        if self.dtype(tensor) == dt:
            return tensor
        v = self.value(tensor)
        if v is not None:
            return self.const(v.astype(dt), "cast")
        return self.op("Cast", [tensor], to=onnx_dtype(dt), dtype=dt)

    def transpose(self, tensor: str, perm) -> str:
        """``tensor`` with its axes permuted (folded into a new initializer for constants)."""
        perm = [int(p) for p in perm]
        if perm == sorted(perm):
            return tensor
        v = self.value(tensor)
        if v is not None:
            return self.const(numpy.ascontiguousarray(v.transpose(perm)), "transposed")
        return self.op("Transpose", [tensor], perm=perm, dtype=self.dtype(tensor))

    def reshape(self, tensor: str, shape) -> str:
        """``tensor`` reshaped to ``shape`` (ONNX codes: 0 copies, -1 infers)."""
        v = self.value(tensor)
        if v is not None and 0 not in shape:
            return self.const(v.reshape(shape), "reshaped")
        return self.op("Reshape", [tensor, self.ints(shape, "shape")], dtype=self.dtype(tensor))

    def unsqueeze(self, tensor: str, axes) -> str:
        return self.op("Unsqueeze", [tensor, self.ints(axes, "axes")], dtype=self.dtype(tensor))

    def squeeze(self, tensor: str, axes) -> str:
        if not axes:
            return tensor
        return self.op("Squeeze", [tensor, self.ints(axes, "axes")], dtype=self.dtype(tensor))

    def reduce(self, op_type: str, tensor: str, axes, keepdims: bool) -> str:
        """``op_type`` (ReduceSum, ReduceMean, ...) over ``axes`` (None: all), in the form
        the opset has (axes as an input from opset 18, ReduceSum's from 13)."""
        keep = int(bool(keepdims))
        dt = self.dtype(tensor)
        if axes is None:
            return self.op(op_type, [tensor], keepdims=keep, dtype=dt)
        axes = [int(a) for a in axes]
        if op_type == "ReduceSum" or self.opset >= 18:
            return self.op(op_type, [tensor, self.ints(axes, "axes")], keepdims=keep, dtype=dt)
        return self.op(op_type, [tensor], axes=axes, keepdims=keep, dtype=dt)

    def shape_of(self, tensor: str) -> str:
        return self.op("Shape", [tensor], dtype=numpy.int64)

    # ------------------------------------------------------------ the current node
    def _entry(self, pos: int):
        from ..symbol.graph import Entry

        e = self.node.inputs[pos] if pos < len(self.node.inputs) else None
        if not isinstance(e, Entry):
            raise ExportError(f"input {pos} is not an array")
        return e.node.id, e.index

    def in_shape(self, pos: int = 0) -> tuple:
        """The inferred shape of the current node's input ``pos``."""
        return tuple(self._shapes[self._entry(pos)])

    def in_dynamic(self, pos: int = 0) -> tuple:
        """Which dimensions of input ``pos`` change with a dynamic input dimension."""
        k = self._entry(pos)
        return self._dynamic.get(k) or (False,) * len(self._shapes[k])

    def in_dtype(self, pos: int = 0) -> numpy.dtype:
        return self._entry_dtypes[self._entry(pos)]

    def out_shape(self, index: int = 0) -> tuple:
        return tuple(self._shapes[(self.node.id, index)])

    def out_dynamic(self, index: int = 0) -> tuple:
        k = (self.node.id, index)
        return self._dynamic.get(k) or (False,) * len(self._shapes[k])

    def out_dtype(self, index: int = 0) -> numpy.dtype:
        return self._entry_dtypes[(self.node.id, index)]
