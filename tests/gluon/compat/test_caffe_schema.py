"""The Caffe schema (caffe.proto and the table it is built from), the readers, and the
converter's errors."""
from __future__ import annotations

import os
import re
import struct

import numpy as np
import pytest

pytest.importorskip("google.protobuf")

from gluon.compat.caffe import (
    CaffeConversionError,
    CaffeFormatError,
    convert_model,
    read_caffemodel,
    read_prototxt,
    schema,
)
from tests.gluon.compat.caffe_nets import header, write_model

PROTO = os.path.join(os.path.dirname(schema.__file__), "caffe.proto")


def _parse_proto(text):
    """``({message: {(label, type, name, number, default, packed)}}, {enum: values})`` of
    a proto2 file (the syntax caffe.proto uses: messages, nested enums, fields)."""
    text = re.sub(r"//[^\n]*", "", text)
    toks = re.findall(r'"[^"]*"|[A-Za-z_][\w.]*|-?[\d.]+(?:e-?\d+)?|[{}\[\]=;,]', text)
    msgs, enums, stack, i = {}, {}, [], 0
    while i < len(toks):
        t = toks[i]
        if t in ("syntax", "package"):
            i = toks.index(";", i) + 1
        elif t in ("message", "enum"):
            full = ".".join([s[1] for s in stack] + [toks[i + 1]])
            (msgs if t == "message" else enums)[full] = set()
            stack.append((t, full))
            i += 3
        elif t == "}":
            stack.pop()
            i += 1
        elif stack[-1][0] == "enum":
            enums[stack[-1][1]].add((t, int(toks[i + 2])))
            i += 4
        else:
            label, typ, name, num = toks[i], toks[i + 1], toks[i + 2], int(toks[i + 4])
            i += 5
            opts = {}
            if toks[i] == "[":
                j = toks.index("]", i)
                o = toks[i + 1:j]
                opts = {o[k]: o[k + 2].strip('"') for k in range(0, len(o), 4)}
                i = j + 1
            i += 1
            msgs[stack[-1][1]].add((label, typ, name, num, opts.get("default"),
                                    opts.get("packed") == "true"))
    return msgs, enums


def test_proto_file_and_table_agree():
    with open(PROTO) as f:
        msgs, enums = _parse_proto(f.read())
    table = {m: {({"o": "optional", "r": "repeated"}[f[0]], f[1], f[2], f[3],
                  f[4] if len(f) > 4 else None, "packed" in f[5:])
                 for f in fields} for m, fields in schema.MESSAGES.items()}
    assert table == msgs
    assert {k: set(v) for k, v in schema.ENUMS.items()} == enums
    assert "NetParameter" in msgs and len(msgs) == len(schema.MESSAGES)


def test_defaults_are_caffes():
    conv = schema.message_class("ConvolutionParameter")()
    pool = schema.message_class("PoolingParameter")()
    bn = schema.message_class("BatchNormParameter")()
    lrn = schema.message_class("LRNParameter")()
    assert (conv.bias_term, conv.group, pool.stride, pool.round_mode) == (True, 1, 1, 0)
    assert np.float32(bn.eps) == np.float32(1e-5) and bn.moving_average_fraction == \
        pytest.approx(0.999)
    assert (lrn.local_size, lrn.alpha, lrn.beta, lrn.k) == (5, 1.0, 0.75, 1.0)
    assert schema.message_class("NetState")().phase == 1  # TEST


def _varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def _ld(field, payload):  # a length-delimited field
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def test_binary_with_caffes_field_numbers_parses(tmp_path):
    """Wire bytes written by hand with caffe.proto's numbers (NetParameter.layer = 100,
    LayerParameter name 1 / type 2 / blobs 7, BlobProto shape 7 / data 5 packed, BlobShape
    dim 1 packed), independent of the schema's code."""
    dims = _ld(1, _varint(2) + _varint(3))
    data = _ld(5, struct.pack("<6f", *range(6)))
    blob = _ld(7, dims) + data
    layer = _ld(1, b"fc") + _ld(2, b"InnerProduct") + _ld(7, blob)
    path = tmp_path / "m.caffemodel"
    path.write_bytes(_ld(100, layer) + _ld(1, b"net"))
    net = read_caffemodel(str(path))
    assert net.name == "net" and net.layer[0].type == "InnerProduct"
    assert list(net.layer[0].blobs[0].shape.dim) == [2, 3]
    assert list(net.layer[0].blobs[0].data) == [0, 1, 2, 3, 4, 5]


def test_reader_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.prototxt"):
        read_prototxt(str(tmp_path / "nope.prototxt"))
    bad = tmp_path / "bad.prototxt"
    bad.write_text('layer { name: "x" type: ')
    with pytest.raises(CaffeFormatError, match="bad.prototxt.*does not parse"):
        read_prototxt(str(bad))
    binary = tmp_path / "b.prototxt"
    binary.write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(CaffeFormatError, match="not a text prototxt"):
        read_prototxt(str(binary))
    junk = tmp_path / "junk.caffemodel"
    junk.write_bytes(b"\x0a\xff\xff\xff")
    with pytest.raises(CaffeFormatError, match="junk.caffemodel"):
        read_caffemodel(str(junk))
    text = tmp_path / "t.caffemodel"
    text.write_text('name: "x"')
    with pytest.raises(CaffeFormatError, match="t.caffemodel"):
        read_caffemodel(str(text))


_CONV = ('layer { name: "c" type: "Convolution" bottom: "data" top: "c" '
         'convolution_param { num_output: 2 kernel_size: 3 %s } }\n')


@pytest.mark.parametrize("body,shapes,match", [
    ('layer { name: "odd" type: "SPP" bottom: "data" top: "o" }\n', {},
     r"layer 'odd' has type 'SPP'.*not support"),
    (_CONV % "", {"c": [(2, 3, 2, 2), (2,)]},
     r"layer 'c' \(Convolution\): blob 0 has shape \(2, 3, 2, 2\).*expected \(2, 3, 3, 3\)"),
    (_CONV % "", {}, r"layer 'c' \(Convolution\) has no weights"),
    (_CONV % "", {"c": [(2, 3, 3, 3)]}, r"layer 'c' \(Convolution\) has 1 blobs.*needs 2"),
    (_CONV % "group: 2", {"c": [(2, 1, 3, 3), (2,)]}, r"group=2 must divide.*\(3\)"),
    ('layer { name: "r" type: "ReLU" bottom: "nope" top: "r" }\n', {},
     r"layer 'r' \(ReLU\) reads blob\(s\) \['nope'\]"),
    (('layer { name: "p" type: "Pooling" bottom: "data" top: "p" pooling_param { '
     'pool: STOCHASTIC kernel_size: 2 } }\n'), {}, "STOCHASTIC"),
    (('layer { name: "p" type: "Pooling" bottom: "data" top: "p" pooling_param { '
     'pool: MAX } }\n'), {}, r"layer 'p' \(Pooling\): kernel_size .* is required"),
    (('layer { name: "p" type: "Pooling" bottom: "data" top: "p" pooling_param { '
      'kernel_size: 2 stride_h: 2 } }\n'), {}, "stride_h and stride_w go together"),
    (_CONV % "stride_h: 2", {"c": [(2, 3, 3, 3), (2,)]}, r"stride \(2, 0\).*positive"),
    (('layer { name: "e" type: "Eltwise" bottom: "data" bottom: "data" top: "e" '
     'eltwise_param { coeff: 1 } }\n'), {}, "2 bottoms"),
])
def test_conversion_errors_name_the_layer(tmp_path, body, shapes, match):
    proto, cm, *_ = write_model(tmp_path, header((1, 3, 5, 5)) + body, shapes)
    with pytest.raises(CaffeConversionError, match=match):
        convert_model(proto, cm)


_RELU = 'layer { name: "r" type: "ReLU" bottom: "data" top: "r" }\n'


def test_input_without_shape_and_data_layer_tops(tmp_path):
    proto, cm, *_ = write_model(tmp_path, 'input: "data"\n' + _RELU, {})
    with pytest.raises(CaffeConversionError, match="no input_shape/input_dim"):
        convert_model(proto, cm)
    body = ('layer { name: "d" type: "Data" top: "data" }\n'
            'layer { name: "c" type: "InnerProduct" bottom: "data" top: "c" '
            'inner_product_param { num_output: 2 } }\n')
    proto, cm, *_ = write_model(tmp_path, body, {"c": [(2, 3), (2,)]})
    with pytest.raises(CaffeConversionError, match=r"layer 'c'.*needs the shape of 'data'"):
        convert_model(proto, cm)


def test_failed_conversion_writes_nothing(tmp_path):
    proto, cm, *_ = write_model(tmp_path, header((1, 3, 5, 5)) + _CONV % "", {})
    prefix = str(tmp_path / "out")
    with pytest.raises(CaffeConversionError):
        convert_model(proto, cm, prefix)
    assert not [p for p in os.listdir(tmp_path) if p.startswith("out")]


def test_missing_output_directory_is_named_before_converting(tmp_path):
    proto, cm, *_ = write_model(tmp_path, header((1, 3)) + _RELU, {})
    with pytest.raises(FileNotFoundError, match="output directory .*nowhere"):
        convert_model(proto, cm, str(tmp_path / "nowhere" / "x"))
