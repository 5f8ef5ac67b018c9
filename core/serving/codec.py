"""Inference request and response bodies of the Open Inference Protocol (REST).

A request is JSON (``{"id", "parameters", "inputs": [{"name", "shape", "datatype",
"parameters", "data"}], "outputs": [{"name", "parameters"}]}``), or, with the binary
tensor extension, a JSON header of ``Inference-Header-Content-Length`` bytes followed
by the raw tensors of the inputs whose ``parameters`` hold ``binary_data_size``, in
the order of ``inputs``. ``data`` is row-major, flat or nested.

A response is ``{"model_name", "model_version", "id", "outputs": [{"name", "shape",
"datatype", "data"}]}``; outputs asked for with ``"parameters": {"binary_data": true}``
(or all outputs, with the request parameter ``binary_data_output``) come as raw bytes
after the JSON header instead, with ``binary_data_size`` in their parameters. An
output asked for with ``"parameters": {"classification": k}`` comes as a ``BYTES``
tensor of shape ``[batch, k]``: ``"score:index"`` or ``"score:index:label"`` strings,
best first, labels from the model's ``synset.txt``.

Example:
    >>> import json
    >>> from core.serving.codec import decode_request
    >>> body = json.dumps({"id": "7", "inputs": [{"name": "x", "shape": [1, 2],
    ...                    "datatype": "FP32", "data": [[1, 2]]}]}).encode()
    >>> req = decode_request(body, None, "m")
    >>> req.id, req.inputs["x"][0], req.inputs["x"][1].tolist()
    ('7', 'FP32', [[1.0, 2.0]])
"""
from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field

import numpy

from .datatypes import array_to_bytes, bytes_to_array, to_datatype, to_dtype
from .errors import InferenceError

__all__ = ["HEADER_LENGTH", "InferRequest", "OutputRequest", "body_too_large",
           "decode_request", "decompress", "encode_response"]

HEADER_LENGTH = "Inference-Header-Content-Length"


@dataclass
class OutputRequest:
    """An entry of the request's ``outputs``."""

    name: str
    binary: bool
    classification: int | None = None


@dataclass
class InferRequest:
    """A decoded request: ``inputs`` maps names to ``(datatype, numpy array)``."""

    id: str | None
    inputs: dict
    outputs: list | None
    binary_output: bool = False
    parameters: dict = field(default_factory=dict)


def _bad(model: str, what: str) -> InferenceError:
    return InferenceError(400, f"model {model!r}: {what}")


def body_too_large(model: str, limit: int) -> InferenceError:
    """The 413 of a request body over ``limit`` bytes."""
    return InferenceError(413, f"model {model!r}: the request body is larger than the "
                               f"server's limit of {limit} bytes (--max-request-mb)")


def decompress(body: bytes, encoding: str | None, model: str, limit: int | None = None) -> bytes:
    """``body`` decoded from its ``Content-Encoding`` (gzip or deflate, as Triton's
    clients send them), at most ``limit`` bytes once decoded (413 beyond)."""
    enc = (encoding or "identity").strip().lower()
    if enc in ("identity", ""):
        return body
    if enc not in ("gzip", "deflate"):
        raise InferenceError(415, f"model {model!r}: unsupported Content-Encoding "
                                  f"{encoding!r} (gzip, deflate or none)")
    d = zlib.decompressobj(16 + zlib.MAX_WBITS if enc == "gzip" else zlib.MAX_WBITS)
    try:
        out = d.decompress(body, (limit + 1) if limit else 0)
    except zlib.error as e:
        raise _bad(model, f"the {enc} request body does not decompress ({e})") from None
    if limit and (len(out) > limit or d.unconsumed_tail):
        raise body_too_large(model, limit)
    return out


def _shape(spec: dict, where: str, model: str) -> tuple:
    shape = spec.get("shape")
    if not isinstance(shape, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise _bad(model, f"{where}: \"shape\" must be a list of sizes, got {shape!r}")
    return tuple(shape)


def _tensor_from_json(spec: dict, shape: tuple, datatype: str, where: str, model: str):
    if "data" not in spec:
        raise _bad(model, f"{where}: neither \"data\" nor a binary_data_size parameter")
    data = spec["data"]
    count = int(numpy.prod(shape, dtype=numpy.int64))
    try:
        if datatype == "BYTES":
            flat = numpy.array(data, dtype=object).reshape(-1)
            arr = numpy.empty(flat.size, dtype=object)
            arr[:] = [v.encode("utf-8") if isinstance(v, str) else v for v in flat]
        else:
            if not isinstance(data, (list, int, float)):
                raise ValueError(f"expected numbers, got {type(data).__name__}")
            arr = numpy.asarray(data, dtype=to_dtype(datatype)).reshape(-1)
    except (ValueError, TypeError, OverflowError) as e:
        raise _bad(model, f"{where}: \"data\" is not {datatype} values ({e})") from None
    if arr.size != count:
        raise _bad(model, f"{where}: \"data\" holds {arr.size} value(s), shape "
                          f"{list(shape)} needs {count}")
    return arr.reshape(shape)


def decode_request(body: bytes, header_length, model: str) -> InferRequest:
    """Decode a request body (JSON, or JSON plus binary tensors).

    Args:
        body: the (decompressed) request body.
        header_length: the ``Inference-Header-Content-Length`` header, or None.
        model: the model's name (for the messages).

    Raises:
        InferenceError: 400 for a malformed body, naming the model and the field.
    """
    if header_length is not None:
        try:
            n = int(header_length)
        except ValueError:
            n = -1
        if not 0 <= n <= len(body):
            raise _bad(model, f"{HEADER_LENGTH} is {header_length!r}, the body has "
                              f"{len(body)} bytes")
        head, rest = body[:n], memoryview(body)[n:]
    else:
        head, rest = body, memoryview(b"")
    try:
        doc = json.loads(head)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise _bad(model, f"the request body is not JSON ({e})") from None
    if not isinstance(doc, dict):
        raise _bad(model, f"the request must be a JSON object, got {type(doc).__name__}")
    rid = doc.get("id")
    if rid is not None and not isinstance(rid, str):
        raise _bad(model, f"\"id\" must be a string, got {rid!r}")
    params = doc.get("parameters") or {}
    if not isinstance(params, dict):
        raise _bad(model, f"\"parameters\" must be an object, got {params!r}")
    specs = doc.get("inputs")
    if not isinstance(specs, list) or not specs:
        raise _bad(model, "the request needs \"inputs\": a non-empty list of tensors")
    inputs, offset = {}, 0
    for i, spec in enumerate(specs):
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            raise _bad(model, f"inputs[{i}] must be an object with a \"name\"")
        name = spec["name"]
        where = f"input {name!r}"
        if name in inputs:
            raise _bad(model, f"{where} is given twice")
        datatype = spec.get("datatype")
        try:
            to_dtype(datatype)
        except ValueError as e:
            raise _bad(model, f"{where}: {e}") from None
        shape = _shape(spec, where, model)
        p = spec.get("parameters") or {}
        size = p.get("binary_data_size") if isinstance(p, dict) else None
        if size is not None:
            if not isinstance(size, int) or size < 0 or offset + size > len(rest):
                raise _bad(model, f"{where}: binary_data_size {size!r} runs past the "
                                  f"{len(rest)} binary byte(s) of the body")
            try:
                arr = bytes_to_array(bytes(rest[offset:offset + size]), datatype, shape)
            except ValueError as e:
                raise _bad(model, f"{where}: {e}") from None
            offset += size
        else:
            arr = _tensor_from_json(spec, shape, datatype, where, model)
        inputs[name] = (datatype, arr)
    if offset != len(rest):
        raise _bad(model, f"{len(rest) - offset} binary byte(s) after the last input's "
                          "binary_data_size")
    outputs = _decode_outputs(doc.get("outputs"), model)
    binary = params.get("binary_data_output", False)
    if not isinstance(binary, bool):
        raise _bad(model, f"parameter binary_data_output must be true or false, got {binary!r}")
    return InferRequest(rid, inputs, outputs, binary, params)


def _decode_outputs(specs, model: str) -> list | None:
    if specs is None:
        return None
    if not isinstance(specs, list):
        raise _bad(model, f"\"outputs\" must be a list, got {specs!r}")
    out = []
    for i, spec in enumerate(specs):
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            raise _bad(model, f"outputs[{i}] must be an object with a \"name\"")
        p = spec.get("parameters") or {}
        if not isinstance(p, dict):
            raise _bad(model, f"output {spec['name']!r}: \"parameters\" must be an object")
        binary = p.get("binary_data")
        k = p.get("classification")
        if binary is not None and not isinstance(binary, bool):
            raise _bad(model, f"output {spec['name']!r}: binary_data must be true or false")
        if k is not None and (not isinstance(k, int) or isinstance(k, bool) or k < 1):
            raise _bad(model, f"output {spec['name']!r}: classification must be a positive "
                              f"integer, got {k!r}")
        out.append(OutputRequest(spec["name"], binary, k))
    return out


def classify(scores: numpy.ndarray, k: int, labels) -> numpy.ndarray:
    """``[batch, k]`` BYTES of ``"score:index[:label]"``, best first per sample.

    Example:
        >>> classify(numpy.array([[0.1, 0.7, 0.2]], "float32"), 2, ["a", "b", "c"]).tolist()
        [[b'0.7:1:b', b'0.2:2:c']]
    """
    flat = scores.reshape(scores.shape[0], -1)
    k = min(k, flat.shape[1])
    order = numpy.argsort(-flat.astype(numpy.float64), axis=1, kind="stable")[:, :k]
    out = numpy.empty((flat.shape[0], k), dtype=object)
    for b in range(flat.shape[0]):
        for j, idx in enumerate(order[b]):
            v = flat[b, idx]
            text = numpy.format_float_positional(v, trim="-") if v.dtype.kind == "f" \
                else str(v)
            text = f"{text}:{idx}"
            if labels is not None and idx < len(labels):
                text += f":{labels[idx]}"
            out[b, j] = text.encode("utf-8")
    return out


def _json_data(arr: numpy.ndarray, datatype: str) -> list:
    flat = arr.reshape(-1)
    if datatype == "BYTES":
        return [v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) for v in flat]
    if datatype == "BF16":
        flat = flat.astype(numpy.float32)
    return flat.tolist()


def encode_response(model, request: InferRequest, results: dict) -> tuple[bytes, dict]:
    """The response body and its headers.

    Args:
        model: the :class:`~core.serving.model.ServedModel` (name, version, labels).
        request: the decoded request.
        results: ``{output name: numpy array}`` of this request's samples.

    Returns:
        ``(body, headers)``; with binary outputs the body is the JSON header followed by
        the raw tensors, and ``headers`` carries ``Inference-Header-Content-Length``.
    """
    wanted = request.outputs if request.outputs else \
        [OutputRequest(t.name, None) for t in model.outputs]
    outputs, blobs = [], []
    for o in wanted:
        model.output_spec(o.name)  # 400 for an unknown output
        arr = results[o.name]
        if o.classification is not None:
            arr = classify(arr, o.classification, model.labels)
        datatype = to_datatype(arr.dtype)
        entry = {"name": o.name, "datatype": datatype, "shape": list(arr.shape)}
        binary = request.binary_output if o.binary is None else o.binary
        if binary:
            raw = array_to_bytes(arr, datatype)
            entry["parameters"] = {"binary_data_size": len(raw)}
            blobs.append(raw)
        else:
            entry["data"] = _json_data(arr, datatype)
        outputs.append(entry)
    doc = {"model_name": model.name, "model_version": model.version}
    if request.id is not None:
        doc["id"] = request.id
    doc["outputs"] = outputs
    head = json.dumps(doc, separators=(",", ":")).encode("utf-8")
    if not blobs:
        return head, {"content-type": "application/json"}
    return head + b"".join(blobs), {"content-type": "application/octet-stream",
                                     HEADER_LENGTH: str(len(head))}
