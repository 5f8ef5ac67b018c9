"""core.cpu_parallel: passes split over threads give exactly the unsplit results."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from core import autograd, cpu_kernels, cpu_parallel, nd


@pytest.fixture
def split_everything(monkeypatch):
    """Split every pass (no size threshold) over 3 threads, even on a 1-core machine."""
    monkeypatch.setattr(cpu_parallel, "MIN_ELEMENTS", 0)
    monkeypatch.setattr(cpu_kernels, "num_threads", lambda: 3)


def test_chunks_cover_the_range_once(split_everything):
    seen = []
    lock = threading.Lock()

    def fn(lo, hi):
        with lock:
            seen.append((lo, hi, threading.current_thread().name))

    cpu_parallel.run_chunks(10, fn)
    spans = sorted((lo, hi) for lo, hi, _ in seen)
    assert spans == [(0, 3), (3, 6), (6, 10)]
    assert len({name for *_, name in seen}) >= 2  # the caller and the workers


def test_small_or_single_item_passes_run_whole(monkeypatch):
    monkeypatch.setattr(cpu_kernels, "num_threads", lambda: 4)
    calls = []
    cpu_parallel.run_chunks(8, lambda lo, hi: calls.append((lo, hi)), elements=10)
    cpu_parallel.run_chunks(1, lambda lo, hi: calls.append((lo, hi)))
    assert calls == [(0, 8), (0, 1)]


def test_errors_in_any_chunk_reach_the_caller(split_everything):
    def fn(lo, hi):
        if lo > 0:
            raise ValueError(f"chunk {lo}")

    with pytest.raises(ValueError, match="chunk"):
        cpu_parallel.run_chunks(9, fn)


def test_nested_splits_run_inline(split_everything):
    inner = []

    def outer(lo, hi):
        cpu_parallel.run_chunks(4, lambda a, b: inner.append(threading.current_thread().name))

    cpu_parallel.run_chunks(3, outer)
    # workers never wait on the pool they belong to
    assert len(inner) >= 3


@pytest.mark.parametrize("make", [
    lambda a: a[:, ::2],
    lambda a: a.transpose(2, 0, 1),
    lambda a: a[::-1],
])
def test_copy_matches_numpy(split_everything, make):
    a = np.arange(7 * 6 * 5, dtype=np.float32).reshape(7, 6, 5)
    src = make(a)
    dst = np.empty(src.shape, src.dtype)
    cpu_parallel.copy(dst, src)
    np.testing.assert_array_equal(dst, src)


def _assert_split_equals_unsplit(monkeypatch, step):
    """``step()`` on one thread, then with every pass split over 3 threads: the returned
    arrays bit-identical."""
    monkeypatch.setattr(cpu_kernels, "num_threads", lambda: 1)
    whole = step()
    monkeypatch.setattr(cpu_parallel, "MIN_ELEMENTS", 0)
    monkeypatch.setattr(cpu_kernels, "num_threads", lambda: 3)
    split = step()
    for a, b in zip(whole, split, strict=True):
        np.testing.assert_array_equal(a, b)


CONVS = [
    dict(shape=(4, 3, 12, 12), kernel=(3, 3), num_filter=5, pad=(1, 1), stride=(1, 1)),
    dict(shape=(5, 4, 9, 10), kernel=(5, 5), num_filter=6, pad=(0, 0), stride=(1, 1)),
    dict(shape=(3, 6, 11, 11), kernel=(3, 3), num_filter=4, pad=(2, 1), stride=(2, 2),
         num_group=2),
    dict(shape=(4, 9, 9, 3), kernel=(3, 3), num_filter=5, pad=(1, 1), stride=(1, 1),
         layout="NHWC"),
    dict(shape=(2, 3, 20), kernel=(4,), num_filter=2, pad=(1,), stride=(2,)),
]


def _conv_step(kw):
    kw = dict(kw)
    shape = kw.pop("shape")
    rng = np.random.default_rng(0)
    layout = kw.get("layout")
    c = shape[-1] if layout == "NHWC" else shape[1]
    g = kw.get("num_group", 1)
    k = kw["kernel"]
    wshape = ((kw["num_filter"],) + k + (c // g,)) if layout == "NHWC" else \
        ((kw["num_filter"], c // g) + k)
    x = nd.array(rng.standard_normal(shape))
    w = nd.array(rng.standard_normal(wshape))
    b = nd.array(rng.standard_normal(kw["num_filter"]))
    for a in (x, w, b):
        a.attach_grad()
    with autograd.record():
        y = nd.Convolution(x, w, b, **kw)
    y.backward(nd.array(rng.standard_normal(y.shape)))
    return [a.asnumpy() for a in (y, x.grad, w.grad, b.grad)]


@pytest.mark.parametrize("kw", CONVS, ids=[str(c["shape"]) for c in CONVS])
def test_convolution_split_equals_unsplit(monkeypatch, kw):
    """im2col copies, the output gradient's reorder and col2im's scatter-adds split over
    threads: forward and every gradient bit-identical to the one-thread run."""
    _assert_split_equals_unsplit(monkeypatch, lambda: _conv_step(kw))


POOLS = [
    dict(shape=(5, 3, 9, 9), kernel=(2, 2), stride=(2, 2), pool_type="max"),
    dict(shape=(5, 3, 9, 9), kernel=(3, 3), stride=(1, 1), pad=(1, 1), pool_type="max"),
    dict(shape=(4, 8, 8, 3), kernel=(2, 2), stride=(2, 2), pool_type="avg", layout="NHWC"),
    dict(shape=(4, 3, 7, 7), kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="sum",
         pooling_convention="full"),
    dict(shape=(3, 2, 11), kernel=(3,), stride=(2,), pool_type="lp", p_value=2),
]


def _pool_step(kw):
    kw = dict(kw)
    shape = kw.pop("shape")
    rng = np.random.default_rng(1)
    xv = rng.standard_normal(shape)
    xv.flat[::5] = xv.flat[1::5][: xv.flat[::5].size]  # ties
    x = nd.array(xv)
    x.attach_grad()
    with autograd.record():
        y = nd.Pooling(x, **kw)
        (g,) = autograd.grad(y, [x], head_grads=nd.array(rng.standard_normal(y.shape)),
                             create_graph=True)
        z = (g * g).sum() + (y * y).sum()  # connected to x also where g is linear
    z.backward()
    return [a.asnumpy() for a in (y, g, x.grad)]


@pytest.mark.parametrize("kw", POOLS, ids=[f"{c['pool_type']}{c['shape']}" for c in POOLS])
def test_pooling_split_equals_unsplit(monkeypatch, kw):
    """Pooling, its gradients (route/spread) and max pooling's second order (gather),
    split over the samples: bit-identical to the one-thread run."""
    _assert_split_equals_unsplit(monkeypatch, lambda: _pool_step(kw))
