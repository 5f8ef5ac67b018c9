"""Reading Caffe files: ``.prototxt`` (protobuf text) and ``.caffemodel`` (binary).

Both give a ``caffe.NetParameter`` (see :mod:`.schema`) whose layers are in the current
(``layer``, string type) form: old files' ``V1LayerParameter`` layers (``layers``, enum
types) are rewritten into it by :func:`layers_of`.

Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "net.prototxt")
    >>> _ = open(path, "w").write('name: "n" input: "data" layer { name: "r" type: "ReLU" '
    ...                           'bottom: "data" top: "data" }')
    >>> [(l.name, l.type) for l in layers_of(read_prototxt(path))]
    [('r', 'ReLU')]
"""
from __future__ import annotations

import os

from .schema import message_class

__all__ = ["V1_TYPES", "CaffeFormatError", "layers_of", "read_caffemodel", "read_prototxt"]

#: V1LayerParameter's enum names -> the layer type strings of LayerParameter
V1_TYPES = {
    "ABSVAL": "AbsVal", "ACCURACY": "Accuracy", "ARGMAX": "ArgMax", "BNLL": "BNLL",
    "CONCAT": "Concat", "CONTRASTIVE_LOSS": "ContrastiveLoss", "CONVOLUTION": "Convolution",
    "DATA": "Data", "DECONVOLUTION": "Deconvolution", "DROPOUT": "Dropout",
    "DUMMY_DATA": "DummyData", "EUCLIDEAN_LOSS": "EuclideanLoss", "ELTWISE": "Eltwise",
    "EXP": "Exp", "FLATTEN": "Flatten", "HDF5_DATA": "HDF5Data", "HDF5_OUTPUT": "HDF5Output",
    "HINGE_LOSS": "HingeLoss", "IM2COL": "Im2col", "IMAGE_DATA": "ImageData",
    "INFOGAIN_LOSS": "InfogainLoss", "INNER_PRODUCT": "InnerProduct", "LRN": "LRN",
    "MEMORY_DATA": "MemoryData", "MULTINOMIAL_LOGISTIC_LOSS": "MultinomialLogisticLoss",
    "MVN": "MVN", "POOLING": "Pooling", "POWER": "Power", "RELU": "ReLU",
    "SIGMOID": "Sigmoid", "SIGMOID_CROSS_ENTROPY_LOSS": "SigmoidCrossEntropyLoss",
    "SILENCE": "Silence", "SOFTMAX": "Softmax", "SOFTMAX_LOSS": "SoftmaxWithLoss",
    "SPLIT": "Split", "SLICE": "Slice", "TANH": "TanH", "WINDOW_DATA": "WindowData",
    "THRESHOLD": "Threshold",
}

# V1 fields copied as they are into LayerParameter (same message types)
_V1_COPIED = ("concat_param", "convolution_param", "dropout_param", "eltwise_param",
              "inner_product_param", "lrn_param", "pooling_param", "power_param", "relu_param",
              "sigmoid_param", "slice_param", "softmax_param", "tanh_param",
              "transform_param")


class CaffeFormatError(ValueError):
    """A Caffe file that does not parse (the message names the file and the problem)."""


def _check_file(path: str, what: str) -> str:
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"caffe: the {what} file {path!r} does not exist")
    return path


def read_prototxt(path: str):
    """Parse a network definition (``deploy.prototxt``, protobuf text format).

    Fields outside the schema's subset (``data_param``, ``loss_param``, ...) are skipped.

    Args:
        path: the ``.prototxt`` file.

    Returns:
        A ``caffe.NetParameter``.

    Raises:
        FileNotFoundError: the file does not exist.
        CaffeFormatError: it is not protobuf text of a ``NetParameter`` (the message has
            the line and column).
    """
    from google.protobuf import text_format

    path = _check_file(path, "prototxt")
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CaffeFormatError(f"caffe: {path!r} is not a text prototxt ({e}); is it the "
                               "binary .caffemodel?") from None
    net = message_class("NetParameter")()
    try:
        text_format.Parse(text, net, allow_unknown_field=True)
    except text_format.ParseError as e:
        raise CaffeFormatError(f"caffe: {path!r} does not parse as a Caffe NetParameter "
                               f"prototxt: {e}") from None
    return net


def read_caffemodel(path: str):
    """Parse trained weights (``.caffemodel``, binary protobuf ``NetParameter``).

    Args:
        path: the ``.caffemodel`` file.

    Returns:
        A ``caffe.NetParameter`` whose layers hold the ``blobs``.

    Raises:
        FileNotFoundError: the file does not exist.
        CaffeFormatError: it is not a binary ``NetParameter``.
    """
    from google.protobuf.message import DecodeError

    path = _check_file(path, "caffemodel")
    with open(path, "rb") as f:
        raw = f.read()
    net = message_class("NetParameter")()
    try:
        net.MergeFromString(raw)
    except (DecodeError, ValueError) as e:
        raise CaffeFormatError(f"caffe: {path!r} ({len(raw)} bytes) does not parse as a "
                               f"binary Caffe NetParameter (.caffemodel): {e}") from None
    if not net.layer and not net.layers and raw:
        raise CaffeFormatError(f"caffe: {path!r} ({len(raw)} bytes) holds no layers; is it "
                               "a .caffemodel (a prototxt is text, a mean file is a "
                               "BlobProto)?")
    return net


def layers_of(net) -> list:
    """The layers of a ``NetParameter`` as ``LayerParameter`` messages.

    Args:
        net: a ``caffe.NetParameter`` from :func:`read_prototxt` or
            :func:`read_caffemodel`.

    Returns:
        ``net.layer`` as a list, or, for an old file, its ``V1LayerParameter`` layers
        rewritten (type enum to type string; name, bottoms, tops, blobs, include/exclude
        rules and the layer parameters copied).

    Raises:
        CaffeFormatError: the file mixes both forms.
    """
    if net.layer and net.layers:
        raise CaffeFormatError(f"caffe: net {net.name!r} has both 'layer' and the old "
                               "'layers' (V1) fields; upgrade it with Caffe's "
                               "upgrade_net_proto_text tool")
    if not net.layers:
        return list(net.layer)
    v1_enum = message_class("V1LayerParameter").DESCRIPTOR.enum_types_by_name["LayerType"]
    layer_cls = message_class("LayerParameter")
    out = []
    for v1 in net.layers:
        enum_name = v1_enum.values_by_number[v1.type].name if \
            v1.type in v1_enum.values_by_number else str(v1.type)
        layer = layer_cls(name=v1.name, type=V1_TYPES.get(enum_name, enum_name))
        layer.bottom.extend(v1.bottom)
        layer.top.extend(v1.top)
        layer.blobs.extend(v1.blobs)
        layer.include.extend(v1.include)
        layer.exclude.extend(v1.exclude)
        for field in _V1_COPIED:
            if v1.HasField(field):
                getattr(layer, field).CopyFrom(getattr(v1, field))
        out.append(layer)
    return out
