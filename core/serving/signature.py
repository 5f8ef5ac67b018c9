"""Where a served model's per-sample input shapes come from.

An exported graph (``PREFIX-symbol.json``) does not record the shapes of its data
inputs, and the server must know them to publish metadata and check requests. In
order of precedence:

1. ``--input-shape [MODEL/]INPUT=D1,D2,...`` on the command line (per sample, without
   the batch dimension; ``-1`` for a dimension of any size);
2. ``PREFIX-signature.json`` beside the symbol file, written by :func:`write_signature`:
   ``{"inputs": [{"name": "data", "datatype": "FP32", "shape": [-1, 1, 8, 8]}]}``
   (the shape with the batch dimension first, as ``-1``);
3. the parameters: an input that feeds (directly, or through shape-keeping operators
   such as Activation, BatchNorm, Dropout) a ``Convolution`` takes ``(C, -1, -1)``
   (channels from the weight; spatial sizes free), one that feeds a flattening
   ``FullyConnected`` takes ``(in_units,)``. Anything else is not guessed: loading
   fails and names the two ways to say it.

Example:
    >>> from core import sym
    >>> from core.serving.signature import infer_sample_shapes
    >>> net = sym.FullyConnected(sym.relu(sym.var("data")), num_hidden=3, name="fc")
    >>> infer_sample_shapes(net, ["data"], {"fc_weight": (3, 64), "fc_bias": (3,)})
    {'data': (64,)}
"""
from __future__ import annotations

import json
import os

from .datatypes import to_datatype, to_dtype

__all__ = ["infer_sample_shapes", "parse_shape", "read_signature", "signature_path",
           "write_signature"]

# Operators whose first output has the shape of their first input.
_SHAPE_KEEPING = {
    "Activation", "relu", "sigmoid", "tanh", "softsign", "LeakyReLU", "BatchNorm",
    "Dropout", "identity", "_copy", "Cast", "cast", "clip", "abs", "negative", "exp",
    "log", "sqrt", "square", "_mul_scalar", "_div_scalar", "_plus_scalar", "_minus_scalar",
    "_rminus_scalar", "_rdiv_scalar", "_power_scalar", "InstanceNorm", "LayerNorm",
    "BlockGrad", "stop_gradient", "hard_sigmoid", "softrelu", "erf", "gelu",
}


def signature_path(prefix: str) -> str:
    """``PREFIX-signature.json``."""
    return f"{prefix}-signature.json"


def parse_shape(text: str, what: str) -> tuple[int, ...]:
    """``"1,8,8"`` -> ``(1, 8, 8)``; ``-1`` stands for any size.

    Raises:
        ValueError: not a comma-separated list of positive integers or -1 (names ``what``).
    """
    try:
        dims = tuple(int(t) for t in text.split(","))
    except ValueError:
        dims = None
    if not dims or any(d == 0 or d < -1 for d in dims):
        raise ValueError(f"{what}: {text!r} is not a shape (comma-separated sizes, -1 for "
                         "any size, e.g. 1,8,8)")
    return dims


def read_signature(prefix: str) -> dict[str, tuple[tuple[int, ...], str | None]] | None:
    """``{input: (per-sample shape, datatype or None)}`` from ``PREFIX-signature.json``,
    or None if there is no such file.

    Raises:
        ValueError: the file is not a signature (the message names the file and the field).
    """
    path = signature_path(prefix)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        try:
            doc = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not JSON ({e})") from None
    inputs = doc.get("inputs") if isinstance(doc, dict) else None
    if not isinstance(inputs, list) or not inputs:
        raise ValueError(f"{path}: expected {{\"inputs\": [{{\"name\", \"datatype\", "
                         f"\"shape\"}}, ...]}}")
    out = {}
    for i, spec in enumerate(inputs):
        name = spec.get("name") if isinstance(spec, dict) else None
        shape = spec.get("shape") if isinstance(spec, dict) else None
        if not isinstance(name, str) or not isinstance(shape, list) or not shape or \
                not all(isinstance(d, int) and (d > 0 or d == -1) for d in shape):
            raise ValueError(f"{path}: inputs[{i}] needs a \"name\" and a \"shape\" of sizes "
                             f"(-1 for any), got {spec!r}")
        if shape[0] != -1:
            raise ValueError(f"{path}: inputs[{i}] ({name!r}): the first dimension is the "
                             f"batch and must be -1, got shape {shape}")
        datatype = spec.get("datatype")
        if datatype is not None:
            to_dtype(datatype)  # validates
        out[name] = (tuple(shape[1:]), datatype)
    return out


def write_signature(prefix: str, inputs: dict, dtype="float32") -> str:
    """Write ``PREFIX-signature.json`` (atomically) for an exported model.

    Args:
        prefix: the export prefix (``PREFIX-symbol.json`` beside it).
        inputs: ``{input name: per-sample shape}`` (no batch dimension; -1 for any size).
        dtype: the inputs' dtype (a NumPy dtype or name, or a protocol datatype such as
            ``"FP32"``), or a dict of them by input name.

    Returns:
        The path written.

    Example:
        >>> import os, tempfile
        >>> from core.serving.signature import read_signature, write_signature
        >>> prefix = os.path.join(tempfile.mkdtemp(), "digits")
        >>> os.path.basename(write_signature(prefix, {"data": (1, 8, 8)}))
        'digits-signature.json'
        >>> read_signature(prefix)
        {'data': ((1, 8, 8), 'FP32')}
    """
    from ..serialization import atomic_write

    def datatype(name):
        d = dtype.get(name, "float32") if isinstance(dtype, dict) else dtype
        return d if isinstance(d, str) and d.isupper() else to_datatype(d)

    doc = {"inputs": [{"name": n, "datatype": datatype(n), "shape": [-1, *map(int, s)]}
                      for n, s in inputs.items()]}
    text = json.dumps(doc, indent=2).encode("utf-8")
    path = signature_path(prefix)
    atomic_write(path, lambda f: f.write(text))
    return path


def _flag(v, default: bool) -> bool:
    if v is None:
        return default
    if isinstance(v, str):
        return v.strip().lower() in ("1", "true")
    return bool(v)


def _from_consumer(node, shapes: dict) -> tuple[int, ...] | None:
    """The per-sample shape of ``node``'s data input implied by its weight, or None."""
    weight = node.input_entries()[1].node if len(node.input_entries()) > 1 else None
    w = shapes.get(weight.name) if weight is not None and weight.is_variable else None
    if w is None:
        return None
    if node.op_name == "Convolution" and len(w) >= 3:
        channels = int(w[1]) * int(node.attrs.get("num_group") or 1)
        spatial = (-1,) * (len(w) - 2)
        layout = node.attrs.get("layout") or ""
        return (*spatial, channels) if str(layout).endswith("C") else (channels, *spatial)
    if node.op_name == "FullyConnected" and len(w) == 2 and \
            _flag(node.attrs.get("flatten"), True):
        return (int(w[1]),)
    return None


def infer_sample_shapes(symbol, inputs, param_shapes: dict) -> dict:
    """``{input: per-sample shape or None}`` read from the weights the inputs feed.

    Args:
        symbol: the network.
        inputs: the names of its data inputs.
        param_shapes: ``{parameter name: shape}``.

    Returns:
        For each input, the shape without the batch dimension (``-1`` where any size
        fits), or None where the graph does not tell it.
    """
    graph = symbol.graph
    consumers: dict[int, list] = {}
    for n in graph.topo():
        if n.is_variable or n.is_constant:
            continue
        for pos, e in enumerate(n.input_entries()):
            consumers.setdefault(e.node.id, []).append((n, pos, e.index))
    by_name = {n.name: n for n in graph.topo() if n.is_variable}
    out = {}
    for name in inputs:
        found = set()
        todo, seen = [by_name[name]], set()
        while todo:
            node = todo.pop()
            if node.id in seen:
                continue
            seen.add(node.id)
            for user, pos, index in consumers.get(node.id, []):
                if index != 0 or pos != 0:
                    continue
                if user.op_name in ("Convolution", "FullyConnected"):
                    s = _from_consumer(user, param_shapes)
                    if s is not None:
                        found.add(s)
                elif user.op_name in _SHAPE_KEEPING:
                    todo.append(user)
        out[name] = found.pop() if len(found) == 1 else None
    return out
