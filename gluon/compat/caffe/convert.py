"""Caffe network + weights to an MXNet Symbol and its ``arg:``/``aux:`` parameters.

The walk follows Caffe's ``Net`` set-up: layers in file order (those excluded from the
TEST phase by their ``include``/``exclude`` rules are dropped), blobs by name, a top that
reuses a bottom's name (in-place layers) replacing it; the net's outputs are the blobs no
later layer reads. A ``BatchNorm`` whose only reader is a ``Scale`` over the channels
becomes one MXNet ``BatchNorm`` with the Scale's factors as gamma/beta.
"""
from __future__ import annotations

import math
import os
import re

import numpy

from core import nd, sym

from .layers import CONVERTERS, CaffeConversionError, batch_norm, foldable_scale
from .reader import layers_of, read_caffemodel, read_prototxt

__all__ = ["Builder", "convert_model", "convert_symbol"]

#: layers whose tops are the net's data (inputs without a shape; a deploy net has none)
DATA_LAYERS = frozenset({"Data", "ImageData", "HDF5Data", "MemoryData", "WindowData",
                         "DummyData", "AnnotatedData"})
#: layers that only evaluate or silence blobs: skipped (their bottoms count as read)
SKIPPED_LAYERS = frozenset({"Accuracy", "Silence"})


def sanitize(name: str) -> str:
    """A Caffe name as a Symbol name (``/`` and ``-`` become ``_``, as MXNet's converter)."""
    return re.sub(r"[-/]", "_", name)


def blob_array(blob, where: str) -> numpy.ndarray:
    """A ``BlobProto``'s values as a float32 array in its shape (``shape`` or the old
    num/channels/height/width)."""
    values = blob.data if len(blob.data) else blob.double_data
    data = numpy.asarray(values, dtype="float32")
    if blob.HasField("shape"):
        shape = tuple(int(d) for d in blob.shape.dim)
    else:
        shape = tuple(int(d) for d in (blob.num, blob.channels, blob.height, blob.width))
        shape = shape if math.prod(shape) == data.size else (data.size,)
    if math.prod(shape) != data.size:
        raise CaffeConversionError(f"caffe: {where}: the blob's shape {shape} needs "
                                   f"{math.prod(shape)} values, it holds {data.size}")
    return data.reshape(shape)


class Builder:
    """What the layer converters share: input shapes, weights and the parameters made.

    Args:
        input_shapes: ``{input name: shape}`` of the net's inputs.
        weights: ``{layer name: [BlobProto, ...]}`` from the caffemodel, or None to
            build the symbol only.
        source: the caffemodel's name (for messages).
    """

    def __init__(self, input_shapes: dict, weights: dict | None, source: str = ""):
        self.input_shapes = dict(input_shapes)
        self.weights = weights
        self.source = source
        self.arg_params: dict = {}
        self.aux_params: dict = {}
        self.unshaped: frozenset = frozenset()  # inputs without a shape (Data layer tops)

    def shape(self, s, layer) -> tuple:
        """The output shape of symbol ``s`` (an input of ``layer``)."""
        missing = [n for n in s.list_inputs() if n in self.unshaped]
        if missing:
            raise CaffeConversionError(
                f"caffe: layer {layer.name!r} ({layer.type}) needs the shape of "
                f"{', '.join(map(repr, missing))}, which the prototxt does not give (a Data "
                "layer's top); convert a deploy prototxt (input/input_shape/input_dim or an "
                "Input layer)")
        try:
            _, out, _ = s.infer_shape(**{k: v for k, v in self.input_shapes.items()
                                         if k in s.list_inputs()})
        except Exception as e:  # noqa: BLE001 - the message names the operator
            raise CaffeConversionError(f"caffe: the input of layer {layer.name!r} "
                                       f"({layer.type}) has no valid shape: {e}") from None
        return tuple(out[0])

    def _blobs(self, layer, count: int):
        blobs = self.weights.get(layer.name)
        if blobs is None:
            raise CaffeConversionError(f"caffe: layer {layer.name!r} ({layer.type}) has no "
                                       f"weights in {self.source or 'the caffemodel'}")
        if len(blobs) < count:
            raise CaffeConversionError(
                f"caffe: layer {layer.name!r} ({layer.type}) has {len(blobs)} blobs in "
                f"{self.source or 'the caffemodel'}, needs {count}")
        return blobs

    def _fetch(self, layer, index: int, shape: tuple) -> numpy.ndarray:
        blob = self._blobs(layer, index + 1)[index]
        arr = blob_array(blob, f"layer {layer.name!r} ({layer.type}) blob {index}")
        if arr.size != math.prod(shape):
            raise CaffeConversionError(
                f"caffe: layer {layer.name!r} ({layer.type}): blob {index} has shape "
                f"{arr.shape} ({arr.size} values); expected {tuple(shape)} from the layer's "
                "settings and its input shape")
        return arr.reshape(shape)

    def param(self, layer, index: int, name: str, shape: tuple, transform=None, aux=False):
        """A parameter variable from ``layer``'s blob ``index``, reshaped to ``shape``
        (then ``transform``-ed, e.g. transposed; its result's shape is the variable's)."""
        if self.weights is None:
            out_shape = tuple(shape[::-1]) if transform is numpy.transpose else tuple(shape)
            return sym.var(name, shape=out_shape)
        arr = self._fetch(layer, index, shape)
        if transform is not None:
            arr = numpy.ascontiguousarray(transform(arr))
        return self._store(name, arr, aux)

    def params_from(self, layer, indices, shapes, fn, names, aux=False):
        """Variables ``names`` from ``fn(blob arrays)`` (blobs ``indices`` in ``shapes``)."""
        if self.weights is None:
            return [sym.var(n, shape=s) for n, s in zip(names, shapes)]
        arrays = fn([self._fetch(layer, i, s) for i, s in zip(indices, shapes)])
        return [self._store(n, a, aux) for n, a in zip(names, arrays)]

    def constant(self, name: str, shape: tuple, value: float):
        """A parameter variable filled with ``value`` (Caffe has no blob for it)."""
        if self.weights is None:
            return sym.var(name, shape=tuple(shape))
        return self._store(name, numpy.full(shape, value, dtype="float32"), False)

    def _store(self, name, arr, aux):
        table = self.aux_params if aux else self.arg_params
        table[name] = nd.array(numpy.asarray(arr, dtype="float32"), dtype="float32")
        return sym.var(name, shape=tuple(arr.shape))


def _meets(rule, state) -> bool:
    """Caffe's ``Net::StateMeetsRule``."""
    if rule.HasField("phase") and rule.phase != state.phase:
        return False
    if rule.HasField("min_level") and state.level < rule.min_level:
        return False
    if rule.HasField("max_level") and state.level > rule.max_level:
        return False
    stages = set(state.stage)
    return all(s in stages for s in rule.stage) and not any(s in stages
                                                            for s in rule.not_stage)


def _included(layer, state) -> bool:
    if layer.include:
        return any(_meets(r, state) for r in layer.include)
    return not any(_meets(r, state) for r in layer.exclude)


def _net_inputs(net) -> dict:
    """``{name: shape}`` from ``input`` with ``input_shape`` or ``input_dim``."""
    names = list(net.input)
    if net.input_shape:
        if len(net.input_shape) != len(names):
            raise CaffeConversionError(f"caffe: net {net.name!r}: {len(names)} inputs but "
                                       f"{len(net.input_shape)} input_shape entries")
        return {n: tuple(int(d) for d in s.dim) for n, s in zip(names, net.input_shape)}
    dims = [int(d) for d in net.input_dim]
    if dims:
        if len(dims) != 4 * len(names):
            raise CaffeConversionError(f"caffe: net {net.name!r}: input_dim has {len(dims)} "
                                       f"values for {len(names)} inputs (4 per input)")
        return {n: tuple(dims[4 * i:4 * i + 4]) for i, n in enumerate(names)}
    if names:
        raise CaffeConversionError(f"caffe: net {net.name!r}: inputs {names} have no "
                                   "input_shape/input_dim")
    return {}


def _fold_plan(layers) -> dict:
    """``{BatchNorm index: Scale index}`` for each BatchNorm read by one foldable Scale."""
    current, readers = {}, {}
    for j, layer in enumerate(layers):
        for bottom in layer.bottom:
            if bottom in current:
                readers.setdefault((current[bottom], bottom), []).append(j)
        for top in layer.top:
            current[top] = j
    plan = {}
    for i, layer in enumerate(layers):
        if layer.type == "BatchNorm" and len(layer.top) == 1:
            r = readers.get((i, layer.top[0]), [])
            if len(r) == 1 and foldable_scale(layers[r[0]]):
                plan[i] = r[0]
    return plan


def build(net, weights: dict | None, source: str = ""):
    """``(symbol, arg_params, aux_params, input_shapes)`` from a parsed prototxt."""
    state = net.state if net.HasField("state") else type(net.state)(phase=1)
    layers = [la for la in layers_of(net) if _included(la, state)]
    shapes = _net_inputs(net)
    blobs = {n: sym.var(sanitize(n)) for n in shapes}
    b = Builder({sanitize(n): s for n, s in shapes.items()}, weights, source)
    unshaped = set()
    unread = {}  # the blobs no layer has read yet -> symbol, in order of production
    plan = _fold_plan(layers)
    folded = {j: i for i, j in plan.items()}
    for j, layer in enumerate(layers):
        if layer.type in DATA_LAYERS:
            for top in layer.top:
                blobs[top] = sym.var(sanitize(top))
                unshaped.add(sanitize(top))
            continue
        if layer.type == "Input":
            specs = list(layer.input_param.shape)
            if len(specs) not in (1, len(layer.top)):
                raise CaffeConversionError(
                    f"caffe: layer {layer.name!r} (Input): {len(specs)} shapes for "
                    f"{len(layer.top)} tops")
            for k, top in enumerate(layer.top):
                dims = specs[k if len(specs) > 1 else 0].dim if specs else None
                if dims is None:
                    raise CaffeConversionError(f"caffe: layer {layer.name!r} (Input) gives "
                                               "no input_param.shape")
                shapes[top] = tuple(int(d) for d in dims)
                b.input_shapes[sanitize(top)] = shapes[top]
                blobs[top] = sym.var(sanitize(top))
            continue
        missing = [x for x in layer.bottom if x not in blobs]
        if missing:
            raise CaffeConversionError(f"caffe: layer {layer.name!r} ({layer.type}) reads "
                                       f"blob(s) {missing} that no earlier layer makes")
        bottoms = [blobs[x] for x in layer.bottom]
        for x in layer.bottom:
            unread.pop(x, None)
        if layer.type in SKIPPED_LAYERS:
            continue
        b.unshaped = frozenset(unshaped)
        name = sanitize(layer.name)
        if j in folded:
            outs = bottoms  # the BatchNorm before it already applied it
        elif j in plan:
            outs = batch_norm(b, layer, bottoms, name, scale_layer=layers[plan[j]])
        elif layer.type in CONVERTERS:
            if not bottoms:
                raise CaffeConversionError(f"caffe: layer {layer.name!r} ({layer.type}) has "
                                           "no bottom")
            outs = CONVERTERS[layer.type](b, layer, bottoms, name)
        else:
            raise CaffeConversionError(
                f"caffe: layer {layer.name!r} has type {layer.type!r}, which the converter "
                f"does not support (supported: {', '.join(sorted(CONVERTERS))}, Input; "
                f"skipped: {', '.join(sorted(DATA_LAYERS | SKIPPED_LAYERS))})")
        if len(outs) != len(layer.top):
            raise CaffeConversionError(f"caffe: layer {layer.name!r} ({layer.type}) has "
                                       f"{len(layer.top)} tops, the converter makes "
                                       f"{len(outs)}")
        for top, out in zip(layer.top, outs):
            blobs[top] = out
            unread.pop(top, None)
            unread[top] = out
    if not unread:
        raise CaffeConversionError(f"caffe: net {net.name!r} has no output (no layer makes "
                                   "a blob that nothing reads)")
    outs = list(unread.values())
    symbol = outs[0] if len(outs) == 1 else sym.Group(outs)
    return symbol, b.arg_params, b.aux_params, shapes


def _weights_of(caffemodel: str) -> dict:
    model = read_caffemodel(caffemodel)
    return {layer.name: list(layer.blobs) for layer in layers_of(model) if len(layer.blobs)}


def convert_symbol(prototxt: str):
    """Convert a network definition to a Symbol (no weights).

    Args:
        prototxt: the ``deploy.prototxt`` file.

    Returns:
        ``(symbol, input_dim)``: the Symbol and the first input's shape.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: it does not parse, or a layer cannot be converted (the message names
            the layer and its type).
    """
    symbol, _, _, shapes = build(read_prototxt(prototxt), None)
    return symbol, _first_shape(shapes)


def _first_shape(shapes: dict):
    return list(next(iter(shapes.values()))) if shapes else None


def convert_model(prototxt: str, caffemodel: str, output_prefix: str | None = None):
    """Convert a Caffe model to an MXNet Symbol and parameters (MXNet's
    ``tools/caffe_converter/convert_model.py``).

    Args:
        prototxt: the network definition (``deploy.prototxt``, text).
        caffemodel: the trained weights (``.caffemodel``, binary).
        output_prefix: if given, write ``<prefix>-symbol.json`` and
            ``<prefix>-0000.params`` (``arg:``/``aux:`` names), atomically; load them
            with ``core.model.load_checkpoint(prefix, 0)``, a Module or
            ``gluon.SymbolBlock.imports`` (and real MXNet).

    Returns:
        ``(symbol, arg_params, aux_params, input_dim)``: the Symbol, ``{name: NDArray}``
        of its arguments and auxiliary states, and the first input's shape (a list).

    Raises:
        FileNotFoundError: a file does not exist.
        ValueError: a file does not parse, a layer cannot be converted, or its weights
            do not fit (the message names the layer, its type and the shapes).

    Example:
        >>> import os, tempfile
        >>> from gluon.compat.caffe.schema import message_class
        >>> d = tempfile.mkdtemp()
        >>> _ = open(os.path.join(d, "net.prototxt"), "w").write(
        ...     'input: "data" input_dim: 1 input_dim: 3 input_dim: 1 input_dim: 1 '
        ...     'layer { name: "fc" type: "InnerProduct" bottom: "data" top: "fc" '
        ...     'inner_product_param { num_output: 2 } }')
        >>> model = message_class("NetParameter")()
        >>> fc = model.layer.add(name="fc", type="InnerProduct")
        >>> fc.blobs.add(data=[1, 0, 0, 0, 1, 0]).shape.dim.extend([2, 3])
        >>> fc.blobs.add(data=[0.5, -0.5]).shape.dim.extend([2])
        >>> _ = open(os.path.join(d, "net.caffemodel"), "wb").write(model.SerializeToString())
        >>> s, args, aux, dim = convert_model(os.path.join(d, "net.prototxt"),
        ...                                   os.path.join(d, "net.caffemodel"))
        >>> s.list_arguments(), dim
        (['data', 'fc_weight', 'fc_bias'], [1, 3, 1, 1])
    """
    caffemodel = os.fspath(caffemodel)
    if output_prefix is not None:
        out_dir = os.path.dirname(os.path.abspath(os.fspath(output_prefix)))
        if not os.path.isdir(out_dir):
            raise FileNotFoundError(f"caffe: the output directory {out_dir!r} (of prefix "
                                    f"{os.fspath(output_prefix)!r}) does not exist")
    symbol, arg_params, aux_params, shapes = build(read_prototxt(prototxt),
                                                   _weights_of(caffemodel), caffemodel)
    if output_prefix is not None:
        from core.model import save_checkpoint

        save_checkpoint(os.fspath(output_prefix), 0, symbol, arg_params, aux_params)
    return symbol, arg_params, aux_params, _first_shape(shapes)
