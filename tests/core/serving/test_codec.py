"""Request decoding and response encoding (no server)."""
from __future__ import annotations

import gzip
import json
import struct

import ml_dtypes
import numpy
import pytest

from core.serving.codec import (
    HEADER_LENGTH,
    InferRequest,
    OutputRequest,
    classify,
    decode_request,
    decompress,
    encode_response,
)
from core.serving.datatypes import array_to_bytes, bytes_to_array, to_datatype, to_dtype
from core.serving.errors import InferenceError
from core.serving.model import TensorSpec


class _Model:
    def __init__(self):
        self.name, self.version, self.labels = "m", "1", ["zero", "one", "two"]
        self.outputs = [TensorSpec("y", "FP32", (-1, 3)), TensorSpec("z", "INT64", (-1,))]

    def output_spec(self, name):
        for t in self.outputs:
            if t.name == name:
                return t
        raise InferenceError(400, f"model 'm' has no output {name!r}")


@pytest.mark.parametrize("datatype", ["BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8",
                                      "INT16", "INT32", "INT64", "FP16", "FP32", "FP64",
                                      "BF16"])
def test_binary_round_trip_every_datatype(datatype):
    a = (numpy.arange(6) % 2 if datatype == "BOOL" else numpy.arange(6)).astype(
        to_dtype(datatype)).reshape(2, 3)
    raw = array_to_bytes(a, datatype)
    assert len(raw) == 6 * to_dtype(datatype).itemsize
    b = bytes_to_array(raw, datatype, [2, 3])
    assert b.dtype == a.dtype and numpy.array_equal(b, a)
    assert to_datatype(a.dtype) == datatype


def test_binary_is_little_endian_row_major():
    assert array_to_bytes(numpy.array([[1, 2]], "int32"), "INT32") == \
        struct.pack("<ii", 1, 2)
    assert to_datatype(ml_dtypes.bfloat16) == "BF16"


def test_bad_binary_sizes_and_datatypes():
    with pytest.raises(ValueError, match="12 byte"):
        bytes_to_array(b"\0" * 12, "FP32", [2, 2])
    with pytest.raises(ValueError, match="says 9 bytes"):
        bytes_to_array(struct.pack("<I", 9) + b"ab", "BYTES", [1])
    with pytest.raises(ValueError, match="unknown datatype 'FLOAT'"):
        to_dtype("FLOAT")
    with pytest.raises(ValueError, match="complex64"):
        to_datatype(numpy.complex64)


def test_decode_json_and_binary_inputs_in_order():
    a = numpy.arange(4, dtype="float32").reshape(2, 2)
    b = numpy.array([[1], [0]], dtype="int64")
    raw = array_to_bytes(a, "FP32")
    head = json.dumps({"id": "x", "inputs": [
        {"name": "a", "shape": [2, 2], "datatype": "FP32",
         "parameters": {"binary_data_size": len(raw)}},
        {"name": "b", "shape": [2, 1], "datatype": "INT64", "data": [[1], [0]]},
        {"name": "c", "shape": [1], "datatype": "BYTES", "data": ["hé"]}],
        "outputs": [{"name": "y", "parameters": {"binary_data": True}},
                    {"name": "z", "parameters": {"classification": 2}}]}).encode()
    req = decode_request(head + raw, str(len(head)), "m")
    assert req.id == "x"
    assert numpy.array_equal(req.inputs["a"][1], a) and req.inputs["a"][0] == "FP32"
    assert numpy.array_equal(req.inputs["b"][1], b) and req.inputs["b"][1].dtype == "int64"
    assert req.inputs["c"][1].tolist() == ["hé".encode()]
    assert req.outputs == [OutputRequest("y", True, None), OutputRequest("z", None, 2)]


@pytest.mark.parametrize("doc, words", [
    ({"inputs": [{"shape": [1], "datatype": "FP32", "data": [1]}]}, ["inputs[0]", "name"]),
    ({"inputs": [{"name": "a", "shape": [-1], "datatype": "FP32", "data": [1]}]}, ["shape"]),
    ({"inputs": [{"name": "a", "shape": [1], "datatype": "FP32"}]}, ["neither"]),
    ({"inputs": [{"name": "a", "shape": [1], "datatype": "FP32", "data": {"x": 1}}]},
     ["not FP32"]),
    ({"inputs": [{"name": "a", "shape": [2], "datatype": "FP32", "data": [[1], [2, 3]]}]},
     ["not FP32"]),
    ({"inputs": [{"name": "a", "shape": [1], "datatype": "FP32", "data": [1]},
                 {"name": "a", "shape": [1], "datatype": "FP32", "data": [1]}]}, ["twice"]),
    ({"id": 3, "inputs": [{"name": "a", "shape": [1], "datatype": "FP32", "data": [1]}]},
     ["\"id\""]),
    ({"inputs": [{"name": "a", "shape": [1], "datatype": "FP32", "data": [1]}],
      "parameters": {"binary_data_output": "yes"}}, ["binary_data_output"]),
    ({"inputs": [{"name": "a", "shape": [1], "datatype": "FP32", "data": [1]}],
      "outputs": {"name": "y"}}, ["\"outputs\""]),
])
def test_malformed_requests(doc, words):
    with pytest.raises(InferenceError) as e:
        decode_request(json.dumps(doc).encode(), None, "m")
    assert e.value.status == 400 and "model 'm'" in e.value.message
    for w in words:
        assert w in e.value.message, (w, e.value.message)


def test_decompress():
    assert decompress(gzip.compress(b"abc"), "gzip", "m") == b"abc"
    with pytest.raises(InferenceError, match="does not decompress"):
        decompress(b"abc", "gzip", "m")
    with pytest.raises(InferenceError) as e:
        decompress(b"abc", "br", "m")
    assert e.value.status == 415
    assert decompress(gzip.compress(b"x" * 10), "gzip", "m", limit=10) == b"x" * 10
    with pytest.raises(InferenceError) as e:
        decompress(gzip.compress(b"x" * 11), "gzip", "m", limit=10)
    assert e.value.status == 413 and "limit of 10 bytes" in e.value.message


def test_encode_json_binary_and_classification():
    y = numpy.array([[0.1, 0.7, 0.2], [0.5, 0.25, 0.25]], "float32")
    z = numpy.array([4, 5], "int64")
    req = InferRequest("r", {}, [OutputRequest("y", None, 2), OutputRequest("z", True)])
    body, headers = encode_response(_Model(), req, {"y": y, "z": z})
    n = int(headers[HEADER_LENGTH])
    assert headers["content-type"] == "application/octet-stream"
    doc = json.loads(body[:n])
    assert doc["model_name"] == "m" and doc["model_version"] == "1" and doc["id"] == "r"
    cls, zz = doc["outputs"]
    assert cls == {"name": "y", "datatype": "BYTES", "shape": [2, 2],
                   "data": ["0.7:1:one", "0.2:2:two", "0.5:0:zero", "0.25:1:one"]}
    assert zz["parameters"] == {"binary_data_size": 16} and "data" not in zz
    assert numpy.array_equal(bytes_to_array(body[n:], "INT64", zz["shape"]), z)
    body, headers = encode_response(_Model(), InferRequest(None, {}, None), {"y": y, "z": z})
    assert headers == {"content-type": "application/json"}
    doc = json.loads(body)
    assert "id" not in doc and [o["name"] for o in doc["outputs"]] == ["y", "z"]
    assert doc["outputs"][1] == {"name": "z", "datatype": "INT64", "shape": [2], "data": [4, 5]}


def test_binary_data_output_and_per_output_override():
    y = numpy.ones((1, 3), "float32")
    z = numpy.ones((1,), "int64")
    req = InferRequest(None, {}, [OutputRequest("y", False), OutputRequest("z", None)],
                       binary_output=True)
    body, headers = encode_response(_Model(), req, {"y": y, "z": z})
    doc = json.loads(body[:int(headers[HEADER_LENGTH])])
    assert "data" in doc["outputs"][0] and "data" not in doc["outputs"][1]


def test_an_empty_outputs_list_means_every_output():
    y, z = numpy.ones((1, 3), "float32"), numpy.ones((1,), "int64")
    body, _ = encode_response(_Model(), InferRequest(None, {}, []), {"y": y, "z": z})
    assert [o["name"] for o in json.loads(body)["outputs"]] == ["y", "z"]


def test_classify_without_labels_clips_k():
    out = classify(numpy.array([[3, 1]], "int64"), 5, None)
    assert out.tolist() == [[b"3:0", b"1:1"]]
