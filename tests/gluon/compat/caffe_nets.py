"""Small Caffe models for the converter's tests: prototxt text, a caffemodel with random
weights (written with the converter's own protobuf classes) and the conversion."""
from __future__ import annotations

import os

import numpy as np
from google.protobuf import text_format

from gluon.compat.caffe.schema import message_class


def parse_net(text: str):
    """A ``caffe.NetParameter`` from prototxt text."""
    return text_format.Parse(text, message_class("NetParameter")(), allow_unknown_field=True)


def make_weights(net, shapes: dict, seed: int = 0) -> dict:
    """``{layer: [arrays]}``: random arrays of ``shapes[layer]``, or the arrays given there
    (BatchNorm's statistics need positive variances)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, specs in shapes.items():
        out[name] = [np.asarray(s, dtype="float32") if not isinstance(s, tuple)
                     else rng.standard_normal(s).astype("float32") for s in specs]
    return out


def caffemodel_bytes(net, weights: dict, v1: bool = False, legacy_shape: bool = False):
    """The binary caffemodel: ``net``'s layers with ``weights`` as their blobs."""
    model = message_class("NetParameter")(name=net.name)
    for layer in net.layer:
        if v1:
            dst = model.layers.add(name=layer.name)
        else:
            dst = model.layer.add(name=layer.name, type=layer.type)
        for arr in weights.get(layer.name, []):
            blob = dst.blobs.add()
            blob.data.extend(arr.reshape(-1).tolist())
            if legacy_shape and arr.ndim <= 4:
                dims = (1,) * (4 - arr.ndim) + arr.shape
                blob.num, blob.channels, blob.height, blob.width = dims
            else:
                blob.shape.dim.extend(arr.shape)
    return model.SerializeToString()


def write_model(tmp_path, text: str, shapes: dict, seed: int = 0, **kw):
    """Write ``net.prototxt`` and ``net.caffemodel``; return (paths..., net, weights)."""
    net = parse_net(text)
    weights = make_weights(net, shapes, seed)
    proto, model = os.path.join(tmp_path, "net.prototxt"), os.path.join(tmp_path,
                                                                         "net.caffemodel")
    with open(proto, "w") as f:
        f.write(text)
    with open(model, "wb") as f:
        f.write(caffemodel_bytes(net, weights, **kw))
    return proto, model, net, weights


def header(shape, name="data") -> str:
    """A deploy prototxt's input declaration."""
    dims = " ".join(f"dim: {d}" for d in shape)
    return f'name: "t" input: "{name}" input_shape {{ {dims} }}\n'
