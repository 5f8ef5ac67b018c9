"""The real server (``python -m core.serving`` in a subprocess) over real HTTP."""
from __future__ import annotations

import asyncio
import gzip
import json
import re
import shutil
import subprocess

import numpy
import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")
pytest.importorskip("starlette")

from core.serving.datatypes import array_to_bytes, bytes_to_array

from .helpers import LABELS, Server, conv_forward, export_conv, export_mlp, mlp_forward

HEADER = "Inference-Header-Content-Length"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    mlp = export_mlp(str(d / "mlp"))
    conv = export_conv(str(d / "conv"))
    server = Server("--model", f"mlp={d / 'mlp'}:0", "--model", f"conv={d / 'conv'}",
                    "--max-batch-size", "16", "--max-latency-ms", "20", "--workers", "2")
    try:
        with httpx.Client(base_url=server.url, timeout=30.0) as client:
            yield client, mlp, conv, server
    finally:
        server.stop()


def _infer(client, model, body, **kw):
    return client.post(f"/v2/models/{model}/infer", content=json.dumps(body), **kw)


def _x(n, seed=0):
    return numpy.random.default_rng(seed).standard_normal((n, 4)).astype("float32")


def _binary_response(r) -> tuple[dict, bytes]:
    n = int(r.headers[HEADER])
    return json.loads(r.content[:n]), r.content[n:]


# ---------------------------------------------------------------- metadata and health
def test_server_metadata(served):
    client, *_ = served
    r = client.get("/v2")
    assert r.status_code == 200
    doc = r.json()
    assert doc["name"] == "kbackend" and doc["version"]
    assert {"binary_tensor_data", "classification"} <= set(doc["extensions"])


def test_health(served):
    client, *_ = served
    for path in ("/v2/health/live", "/v2/health/ready", "/v2/models/mlp/ready",
                 "/v2/models/mlp/versions/1/ready"):
        assert client.get(path).status_code == 200, path


def test_model_metadata(served):
    client, *_ = served
    doc = client.get("/v2/models/mlp").json()
    assert doc == {"name": "mlp", "versions": ["1"], "platform": "kbackend_mxnet_symbol",
                   "inputs": [{"name": "data", "datatype": "FP32", "shape": [-1, 4]}],
                   "outputs": [{"name": "prob_output", "datatype": "FP32",
                                "shape": [-1, 3]}]}
    assert client.get("/v2/models/mlp/versions/1").json() == doc
    conv = client.get("/v2/models/conv").json()
    assert conv["inputs"] == [{"name": "data", "datatype": "FP32", "shape": [-1, 2, -1, -1]}]
    assert conv["outputs"][0]["shape"] == [-1, 3, -1, -1]


def test_triton_model_config(served):
    client, *_ = served
    assert client.get("/v2/models/mlp/config").json() == {
        "name": "mlp", "platform": "kbackend_mxnet_symbol", "backend": "kbackend",
        "max_batch_size": 16,
        "input": [{"name": "data", "data_type": "TYPE_FP32", "dims": [4]}],
        "output": [{"name": "prob_output", "data_type": "TYPE_FP32", "dims": [3]}],
        "dynamic_batching": {"max_queue_delay_microseconds": 20000}}
    assert client.get("/v2/models/conv/versions/1/config").json()["input"][0]["dims"] == \
        [2, -1, -1]
    assert client.get("/v2/models/nope/config").status_code == 404


def test_unknown_model_and_version_are_404(served):
    client, *_ = served
    for r in (client.get("/v2/models/nope"), client.get("/v2/models/nope/ready"),
              _infer(client, "nope", {"inputs": []}),
              client.get("/v2/models/mlp/versions/2"),
              client.post("/v2/models/mlp/versions/2/infer", content=b"{}")):
        assert r.status_code == 404
        assert "nope" in r.json()["error"] or "version '2'" in r.json()["error"]


def test_unknown_endpoint_and_method(served):
    client, *_ = served
    r = client.get("/v2/nothing")
    assert r.status_code == 404 and "GET /v2/nothing" in r.json()["error"]
    r = client.get("/v2/models/mlp/infer")
    assert r.status_code == 405 and "error" in r.json()


# ---------------------------------------------------------------- inference
def test_infer_json_flat_and_nested(served):
    client, mlp, *_ = served
    x = _x(3)
    for data in (x.reshape(-1).tolist(), x.tolist()):
        r = _infer(client, "mlp", {"id": "req-1", "inputs": [
            {"name": "data", "shape": [3, 4], "datatype": "FP32", "data": data}]})
        assert r.status_code == 200, r.text
        assert r.headers["content-type"].startswith("application/json")
        doc = r.json()
        assert doc["model_name"] == "mlp" and doc["model_version"] == "1"
        assert doc["id"] == "req-1"
        (out,) = doc["outputs"]
        assert out["name"] == "prob_output" and out["datatype"] == "FP32"
        assert out["shape"] == [3, 3]
        numpy.testing.assert_allclose(numpy.array(out["data"]).reshape(3, 3),
                                      mlp_forward(mlp, x), rtol=1e-5, atol=1e-6)


def test_infer_versioned_path_and_no_id(served):
    client, *_ = served
    x = _x(1, 3)
    r = client.post("/v2/models/mlp/versions/1/infer", json={"inputs": [
        {"name": "data", "shape": [1, 4], "datatype": "FP32", "data": x.tolist()}]})
    assert r.status_code == 200 and "id" not in r.json()


def test_infer_binary_output(served):
    client, mlp, *_ = served
    x = _x(2, 1)
    r = _infer(client, "mlp", {"inputs": [
        {"name": "data", "shape": [2, 4], "datatype": "FP32", "data": x.tolist()}],
        "outputs": [{"name": "prob_output", "parameters": {"binary_data": True}}]})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/octet-stream"
    head, raw = _binary_response(r)
    (out,) = head["outputs"]
    assert "data" not in out and out["parameters"]["binary_data_size"] == len(raw) == 24
    numpy.testing.assert_allclose(bytes_to_array(raw, "FP32", out["shape"]),
                                  mlp_forward(mlp, x), rtol=1e-5, atol=1e-6)


def test_infer_binary_input_and_binary_data_output(served):
    client, mlp, *_ = served
    x = _x(5, 2)
    raw = array_to_bytes(x, "FP32")
    head = json.dumps({"parameters": {"binary_data_output": True}, "inputs": [
        {"name": "data", "shape": [5, 4], "datatype": "FP32",
         "parameters": {"binary_data_size": len(raw)}}]}).encode()
    r = client.post("/v2/models/mlp/infer", content=head + raw,
                    headers={HEADER: str(len(head)),
                             "Content-Type": "application/octet-stream"})
    assert r.status_code == 200, r.text
    doc, out_raw = _binary_response(r)
    numpy.testing.assert_allclose(bytes_to_array(out_raw, "FP32", [5, 3]),
                                  mlp_forward(mlp, x), rtol=1e-5, atol=1e-6)
    assert doc["outputs"][0]["parameters"]["binary_data_size"] == 60


def test_infer_gzip_body(served):
    client, mlp, *_ = served
    x = _x(2, 4)
    body = gzip.compress(json.dumps({"inputs": [
        {"name": "data", "shape": [2, 4], "datatype": "FP32", "data": x.tolist()}]}).encode())
    r = client.post("/v2/models/mlp/infer", content=body,
                    headers={"Content-Encoding": "gzip"})
    assert r.status_code == 200, r.text
    numpy.testing.assert_allclose(numpy.array(r.json()["outputs"][0]["data"]).reshape(2, 3),
                                  mlp_forward(mlp, x), rtol=1e-5, atol=1e-6)


def test_large_responses_are_gzipped_for_clients_that_accept_it(served):
    client, _, conv, _ = served
    x = numpy.random.default_rng(7).standard_normal((1, 2, 20, 20)).astype("float32")
    body = {"inputs": [{"name": "data", "shape": list(x.shape), "datatype": "FP32",
                        "data": x.reshape(-1).tolist()}],
            "outputs": [{"name": "conv_output", "parameters": {"binary_data": True}}]}
    plain = _infer(client, "conv", body, headers={"Accept-Encoding": "identity"})
    packed = _infer(client, "conv", body, headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in plain.headers
    assert packed.headers["content-encoding"] == "gzip"
    assert packed.content == plain.content  # httpx decodes; the header length still holds
    head, raw = _binary_response(packed)
    numpy.testing.assert_allclose(bytes_to_array(raw, "FP32", head["outputs"][0]["shape"]),
                                  conv_forward(conv, x), rtol=1e-4, atol=1e-4)


def test_classification_extension_uses_synset_labels(served):
    client, mlp, *_ = served
    x = _x(2, 5)
    r = _infer(client, "mlp", {"inputs": [
        {"name": "data", "shape": [2, 4], "datatype": "FP32", "data": x.tolist()}],
        "outputs": [{"name": "prob_output", "parameters": {"classification": 2}}]})
    assert r.status_code == 200, r.text
    (out,) = r.json()["outputs"]
    assert out["datatype"] == "BYTES" and out["shape"] == [2, 2]
    probs = mlp_forward(mlp, x)
    for b in range(2):
        best = numpy.argsort(-probs[b])[:2]
        for j, idx in enumerate(best):
            score, index, label = out["data"][2 * b + j].split(":")
            assert int(index) == idx and label == LABELS[idx]
            assert float(score) == pytest.approx(probs[b, idx], rel=1e-5)


def test_free_spatial_dims(served):
    client, _, conv, _ = served
    for h, w in ((5, 6), (4, 4)):
        x = numpy.random.default_rng(h).standard_normal((2, 2, h, w)).astype("float32")
        r = _infer(client, "conv", {"inputs": [
            {"name": "data", "shape": list(x.shape), "datatype": "FP32",
             "data": x.reshape(-1).tolist()}]})
        assert r.status_code == 200, r.text
        (out,) = r.json()["outputs"]
        assert out["shape"] == [2, 3, h - 2, w - 2]
        numpy.testing.assert_allclose(numpy.array(out["data"]).reshape(out["shape"]),
                                      conv_forward(conv, x), rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize("body, words", [
    (b"{not json", ["mlp", "not JSON"]),
    (b"[1, 2]", ["JSON object"]),
    (b"{}", ["\"inputs\""]),
    (json.dumps({"inputs": [{"name": "data", "shape": [2, 5], "datatype": "FP32",
                             "data": [0.0] * 10}]}).encode(),
     ["mlp", "'data'", "[-1, 4]", "[2, 5]"]),
    (json.dumps({"inputs": [{"name": "data", "shape": [1, 4], "datatype": "INT64",
                             "data": [1, 2, 3, 4]}]}).encode(),
     ["mlp", "'data'", "FP32", "INT64"]),
    (json.dumps({"inputs": [{"name": "data", "shape": [2, 4], "datatype": "FP32",
                             "data": [1.0, 2.0]}]}).encode(), ["2 value(s)", "needs 8"]),
    (json.dumps({"inputs": [{"name": "data", "shape": [1, 4], "datatype": "FP32",
                             "data": ["a", "b", "c", "d"]}]}).encode(), ["not FP32"]),
    (json.dumps({"inputs": [{"name": "data", "shape": [1, 4], "datatype": "FP99",
                             "data": [1, 2, 3, 4]}]}).encode(), ["FP99"]),
    (json.dumps({"inputs": [{"name": "pixels", "shape": [1, 4], "datatype": "FP32",
                             "data": [1, 2, 3, 4]}]}).encode(), ["no input 'pixels'"]),
    (json.dumps({"inputs": [{"name": "data", "shape": [1, 4], "datatype": "FP32",
                             "data": [1, 2, 3, 4]}],
                 "outputs": [{"name": "logits"}]}).encode(), ["no output 'logits'"]),
    (json.dumps({"inputs": [{"name": "data", "shape": [1, 4], "datatype": "FP32",
                             "data": [1, 2, 3, 4]}],
                 "outputs": [{"name": "prob_output",
                              "parameters": {"classification": 0}}]}).encode(),
     ["classification"]),
    (json.dumps({"inputs": [{"name": "data", "shape": [0, 4], "datatype": "FP32",
                             "data": []}]}).encode(), ["[0, 4]"]),
])
def test_bad_requests_are_400_and_name_the_problem(served, body, words):
    client, *_ = served
    r = client.post("/v2/models/mlp/infer", content=body)
    assert r.status_code == 400, r.text
    message = r.json()["error"]
    for w in words:
        assert w in message, (w, message)


def test_bad_binary_sizes_are_400(served):
    client, *_ = served
    head = json.dumps({"inputs": [{"name": "data", "shape": [1, 4], "datatype": "FP32",
                                   "parameters": {"binary_data_size": 16}}]}).encode()
    r = client.post("/v2/models/mlp/infer", content=head + b"\0" * 8,
                    headers={HEADER: str(len(head))})
    assert r.status_code == 400 and "binary_data_size" in r.json()["error"]
    r = client.post("/v2/models/mlp/infer", content=head + b"\0" * 20,
                    headers={HEADER: str(len(head))})
    assert r.status_code == 400 and "4 binary byte(s)" in r.json()["error"]
    r = client.post("/v2/models/mlp/infer", content=head, headers={HEADER: "99999"})
    assert r.status_code == 400 and HEADER in r.json()["error"]


def test_shape_that_does_not_fit_the_graph_is_400(served):
    client, *_ = served
    r = _infer(client, "conv", {"inputs": [
        {"name": "data", "shape": [1, 2, 2, 2], "datatype": "FP32", "data": [0.0] * 8}]})
    assert r.status_code == 400
    assert "conv" in r.json()["error"] and "[1, 2, 2, 2]" in r.json()["error"]


def test_still_serving_after_errors(served):
    client, mlp, *_ = served
    client.post("/v2/models/mlp/infer", content=b"garbage")
    x = _x(1, 9)
    r = _infer(client, "mlp", {"inputs": [
        {"name": "data", "shape": [1, 4], "datatype": "FP32", "data": x.tolist()}]})
    assert r.status_code == 200
    numpy.testing.assert_allclose(numpy.array(r.json()["outputs"][0]["data"]),
                                  mlp_forward(mlp, x)[0], rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_curl(served):
    _, mlp, _, server = served
    body = json.dumps({"id": "curl", "inputs": [
        {"name": "data", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]})
    out = subprocess.run(["curl", "-sS", "-X", "POST", "-H", "Content-Type: application/json",
                          "-d", body, f"{server.url}/v2/models/mlp/infer"],
                         capture_output=True, text=True, timeout=30, check=True).stdout
    doc = json.loads(out)
    assert doc["id"] == "curl"
    numpy.testing.assert_allclose(
        doc["outputs"][0]["data"],
        mlp_forward(mlp, numpy.array([[1, 2, 3, 4]], "float32"))[0], rtol=1e-5, atol=1e-6)
    code = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                           f"{server.url}/v2/health/ready"], capture_output=True, text=True,
                          timeout=30, check=True).stdout
    assert code == "200"


# ---------------------------------------------------------------- load and metrics
def _metric(text: str, name: str, **labels) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    total = 0.0
    for line in text.splitlines():
        m = re.match(r"^(\w+)(\{[^}]*\})? (\S+)$", line)
        if m and m.group(1) == name:
            have = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
            if all(have.get(k) == str(v) for k, v in labels.items()):
                total += float(m.group(3))
    return total


def test_concurrent_load_is_batched_and_every_answer_is_right(served):
    client, mlp, _, server = served
    before = client.get("/metrics").text
    n_requests, concurrency = 300, 16
    xs = [_x(1 + i % 3, 100 + i) for i in range(n_requests)]

    async def run():
        limits = httpx.Limits(max_connections=concurrency)
        sem = asyncio.Semaphore(concurrency)
        async with httpx.AsyncClient(base_url=server.url, limits=limits,
                                     timeout=60.0) as ac:
            async def one(i):
                async with sem:
                    r = await ac.post("/v2/models/mlp/infer", json={"id": str(i), "inputs": [
                        {"name": "data", "shape": list(xs[i].shape), "datatype": "FP32",
                         "data": xs[i].reshape(-1).tolist()}]})
                return i, r

            return await asyncio.gather(*[one(i) for i in range(n_requests)])

    for i, r in asyncio.run(run()):
        assert r.status_code == 200, r.text
        doc = r.json()
        assert doc["id"] == str(i)
        out = numpy.array(doc["outputs"][0]["data"]).reshape(doc["outputs"][0]["shape"])
        numpy.testing.assert_allclose(out, mlp_forward(mlp, xs[i]), rtol=1e-5, atol=1e-6)
    after = client.get("/metrics").text
    samples = sum(x.shape[0] for x in xs)
    runs = (_metric(after, "kbackend_execution_count_total", model="mlp")
            - _metric(before, "kbackend_execution_count_total", model="mlp"))
    inferred = (_metric(after, "kbackend_inference_count_total", model="mlp")
                - _metric(before, "kbackend_inference_count_total", model="mlp"))
    ok = (_metric(after, "kbackend_requests_total", model="mlp", endpoint="infer",
                  status="200")
          - _metric(before, "kbackend_requests_total", model="mlp", endpoint="infer",
                    status="200"))
    assert inferred == samples and ok == n_requests
    assert runs < n_requests, f"no batching: {runs} runs for {n_requests} requests"
    assert _metric(after, "kbackend_batch_size_bucket", model="mlp", le="1") < \
        _metric(after, "kbackend_batch_size_count", model="mlp")


def test_metrics_text_format(served):
    client, *_ = served
    r = client.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    types = {}
    for line in r.text.splitlines():
        if line.startswith("# TYPE"):
            _, _, name, kind = line.split()
            types[name] = kind
        elif line and not line.startswith("#"):
            assert re.match(r'^\w+(\{(\w+="[^"]*",?)*\})? [0-9.e+-]+$', line), line
    assert types["kbackend_requests_total"] == "counter"
    assert types["kbackend_batch_size"] == "histogram"
    assert types["kbackend_request_duration_seconds"] == "histogram"
    assert _metric(r.text, "kbackend_model_ready", model="conv") == 1
    assert _metric(r.text, "kbackend_requests_total", model="mlp", status="400") > 0
