"""Dynamic batching on its own (a fake model, no HTTP)."""
from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy
import pytest

from core.serving.batcher import Batcher


class Recorder:
    """Doubles its input; records the batch shapes it ran; slow enough to queue up."""

    name = "rec"

    def __init__(self, delay: float = 0.01):
        self.batchable, self.delay = True, delay
        self.shapes, self.lock = [], threading.Lock()

    def run(self, arrays):
        time.sleep(self.delay)
        with self.lock:
            self.shapes.append(arrays["x"].shape)
        return {"y": arrays["x"] * 2, "n": numpy.arange(arrays["x"].shape[0])}


def _serve(model, requests, **kw):
    async def main():
        with ThreadPoolExecutor(2) as pool:
            b = Batcher(model, pool, **kw)
            b.start()
            outs = await asyncio.gather(*[b.submit({"x": x}) for x in requests])
            await b.stop()
        return outs

    return asyncio.run(main())


def test_every_request_gets_its_own_rows():
    rng = numpy.random.default_rng(0)
    xs = [rng.standard_normal((1 + i % 4, 3)) for i in range(40)]
    model = Recorder()
    outs = _serve(model, xs, max_batch_size=8, max_latency_ms=20, workers=2)
    for x, o in zip(xs, outs):
        numpy.testing.assert_array_equal(o["y"], x * 2)
        assert o["n"].shape == (x.shape[0],)
    assert all(s[0] <= 8 for s in model.shapes)
    assert len(model.shapes) < len(xs)
    assert sum(s[0] for s in model.shapes) == sum(x.shape[0] for x in xs)


def test_different_sample_shapes_never_share_a_batch():
    xs = [numpy.ones((1, 2 + i % 2)) for i in range(12)]
    model = Recorder()
    outs = _serve(model, xs, max_batch_size=16, max_latency_ms=10)
    assert all(len(s) == 2 for s in model.shapes)
    for x, o in zip(xs, outs):
        assert o["y"].shape == x.shape


def test_a_request_bigger_than_the_batch_runs_alone():
    model = Recorder()
    (out,) = _serve(model, [numpy.ones((9, 2))], max_batch_size=4, max_latency_ms=0)
    assert out["y"].shape == (9, 2) and model.shapes == [(9, 2)]


def test_batch_size_one_disables_batching():
    model = Recorder(delay=0)
    _serve(model, [numpy.ones((1, 2))] * 6, max_batch_size=1, max_latency_ms=5)
    assert model.shapes == [(1, 2)] * 6


def test_model_errors_reach_every_request_of_the_batch():
    class Broken(Recorder):
        def run(self, arrays):
            raise RuntimeError("broken")

    with pytest.raises(RuntimeError, match="broken"):
        _serve(Broken(), [numpy.ones((1, 2))] * 3, max_batch_size=4, max_latency_ms=5)


def test_stop_fails_waiting_requests():
    async def main():
        with ThreadPoolExecutor(1) as pool:
            b = Batcher(Recorder(), pool)  # never started: requests wait
            fut = asyncio.ensure_future(b.submit({"x": numpy.ones((1, 1))}))
            await asyncio.sleep(0)
            await b.stop()
            with pytest.raises(RuntimeError, match="shutting down"):
                await fut

    asyncio.run(main())


def test_bad_settings():
    with pytest.raises(ValueError, match="max_batch_size"):
        Batcher(Recorder(), None, max_batch_size=0)
    with pytest.raises(ValueError, match="max_latency_ms"):
        Batcher(Recorder(), None, max_latency_ms=-1)
