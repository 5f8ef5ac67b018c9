"""The app in this process (uvicorn on a thread, real HTTP): a failing model, a model
whose outputs do not split by sample, and lifespan start/stop."""
from __future__ import annotations

import asyncio
import contextlib
import threading
import time

import numpy
import pytest

httpx = pytest.importorskip("httpx")
uvicorn = pytest.importorskip("uvicorn")
pytest.importorskip("starlette")

from core import model as ckpt
from core import nd, sym
from core.serving import ServedModel, create_app, load_model

from .helpers import export_mlp, free_port, mlp_forward


@contextlib.contextmanager
def serving(app):
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


class Flaky(ServedModel):
    """Raises on batches holding a negative first value."""

    def run(self, arrays):
        if (arrays["data"][:, 0] < 0).any():
            raise RuntimeError("boom: negative input")
        return super().run(arrays)


def _flaky(prefix):
    base = load_model("mlp", prefix)
    return Flaky("mlp", base.symbol, base.arg_params, base.aux_params,
                 {"data": (4,)}, {"data": numpy.dtype("float32")}, labels=base.labels)


def _body(x):
    return {"inputs": [{"name": "data", "shape": list(x.shape), "datatype": "FP32",
                        "data": x.reshape(-1).tolist()}]}


def test_model_failure_is_500_and_the_server_keeps_serving(tmp_path):
    params = export_mlp(str(tmp_path / "mlp"))
    app = create_app([_flaky(str(tmp_path / "mlp"))], max_batch_size=1)
    with serving(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        r = client.post("/v2/models/mlp/infer", json=_body(-numpy.ones((1, 4), "float32")))
        assert r.status_code == 500
        assert r.json()["error"] == "model 'mlp' failed: RuntimeError: boom: negative input"
        x = numpy.ones((2, 4), "float32")
        r = client.post("/v2/models/mlp/infer", json=_body(x))
        assert r.status_code == 200
        numpy.testing.assert_allclose(numpy.array(r.json()["outputs"][0]["data"]),
                                      mlp_forward(params, x).reshape(-1), rtol=1e-5)
        text = client.get("/metrics").text
        assert 'kbackend_execution_failures_total{model="mlp"} 1' in text
        assert 'kbackend_requests_total{model="mlp",endpoint="infer",status="500"} 1' in text


def test_a_failing_batch_fails_only_its_requests(tmp_path):
    export_mlp(str(tmp_path / "mlp"))
    app = create_app([_flaky(str(tmp_path / "mlp"))], max_batch_size=64,
                     max_latency_ms=50)

    async def run(url):
        async with httpx.AsyncClient(base_url=url, timeout=30) as ac:
            bad = ac.post("/v2/models/mlp/infer", json=_body(-numpy.ones((1, 4), "float32")))
            goods = [ac.post("/v2/models/mlp/infer", json=_body(numpy.ones((1, 4), "float32")))
                     for _ in range(4)]
            return await asyncio.gather(bad, *goods)

    with serving(app) as url:
        rs = asyncio.run(run(url))
        assert rs[0].status_code == 500
        # the good ones either shared the failing batch (500) or ran apart (200); a
        # later request is served either way
        assert all(r.status_code in (200, 500) for r in rs[1:])
        r = httpx.post(url + "/v2/models/mlp/infer", json=_body(numpy.ones((3, 4), "f4")))
        assert r.status_code == 200 and r.json()["outputs"][0]["shape"] == [3, 3]


def test_outputs_that_do_not_split_by_sample_run_per_request(tmp_path):
    prefix = str(tmp_path / "total")
    net = sym.sum(sym.FullyConnected(sym.var("data"), num_hidden=2, name="fc"), axis=0)
    ckpt.save_checkpoint(prefix, 0, net, {"fc_weight": nd.ones((2, 3)),
                                          "fc_bias": nd.zeros((2,))}, {})
    m = load_model("total", prefix)
    assert not m.batchable
    app = create_app([m], max_batch_size=32, max_latency_ms=50)

    async def run(url):
        async with httpx.AsyncClient(base_url=url, timeout=30) as ac:
            xs = [numpy.full((k, 3), k, "float32") for k in (1, 2, 3, 4)]
            rs = await asyncio.gather(*[ac.post("/v2/models/total/infer", json=_body(x))
                                        for x in xs])
            return xs, rs

    with serving(app) as url:
        xs, rs = asyncio.run(run(url))
        for x, r in zip(xs, rs):
            assert r.status_code == 200, r.text
            assert r.json()["outputs"][0]["data"] == [float(x.sum()), float(x.sum())]


def test_ready_reflects_the_lifespan(tmp_path):
    export_mlp(str(tmp_path / "mlp"))
    app = create_app([load_model("mlp", str(tmp_path / "mlp"))])
    with serving(app) as url:
        assert httpx.get(url + "/v2/health/ready").status_code == 200
        assert httpx.get(url + "/v2/models/mlp/ready").status_code == 200


def test_two_models_with_one_name_are_refused(tmp_path):
    export_mlp(str(tmp_path / "mlp"))
    m = load_model("mlp", str(tmp_path / "mlp"))
    with pytest.raises(ValueError, match="two models are named 'mlp'"):
        create_app([m, m])


class Slow(ServedModel):
    def run(self, arrays):
        time.sleep(0.5)
        return super().run(arrays)


def test_shutdown_finishes_requests_in_flight(tmp_path):
    params = export_mlp(str(tmp_path / "mlp"))
    base = load_model("mlp", str(tmp_path / "mlp"))
    slow = Slow("mlp", base.symbol, base.arg_params, base.aux_params, {"data": (4,)},
                {"data": numpy.dtype("float32")})
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app([slow]), host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    result = {}
    x = numpy.ones((1, 4), "float32")

    def call():
        result["r"] = httpx.post(f"http://127.0.0.1:{port}/v2/models/mlp/infer",
                                 json=_body(x), timeout=30)

    caller = threading.Thread(target=call)
    caller.start()
    time.sleep(0.2)  # the request is running
    server.should_exit = True
    caller.join(timeout=30)
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert result["r"].status_code == 200
    numpy.testing.assert_allclose(numpy.array(result["r"].json()["outputs"][0]["data"]),
                                  mlp_forward(params, x)[0], rtol=1e-5)


def test_request_bodies_over_the_limit_are_413(tmp_path):
    import gzip

    export_mlp(str(tmp_path / "mlp"))
    app = create_app([load_model("mlp", str(tmp_path / "mlp"))], max_request_bytes=2000)
    with serving(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        big = _body(numpy.ones((1000, 4), "float32"))
        r = client.post("/v2/models/mlp/infer", json=big)
        assert r.status_code == 413 and "limit of 2000 bytes" in r.json()["error"]

        def chunks():  # no Content-Length: counted while it streams in
            yield b'{"inputs": ['
            yield b" " * 3000

        r = client.post("/v2/models/mlp/infer", content=chunks())
        assert r.status_code == 413
        bomb = gzip.compress(b'{"inputs": []' + b" " * 100_000 + b"}")
        assert len(bomb) < 2000
        r = client.post("/v2/models/mlp/infer", content=bomb,
                        headers={"Content-Encoding": "gzip"})
        assert r.status_code == 413, r.text
        r = client.post("/v2/models/mlp/infer", json=_body(numpy.ones((2, 4), "float32")))
        assert r.status_code == 200
