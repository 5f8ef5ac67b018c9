"""The compiled CPU kernels of the nn operators against their NumPy twins.

Covers ``core/ops/nn/norm_kernels.py`` (LayerNorm, BatchNorm forward and backward) and the
dropout kernel in ``core/ops/nn/dropout.py``: values and gradients with kernels on and
under ``cpu_kernels.disabled()`` (the twin), over several shapes, layouts, non-contiguous
inputs and dtypes; float16/bfloat16 run the twin on both paths.
"""
from __future__ import annotations

import numpy as np
import pytest

from core import autograd, cpu_kernels, nd
from core import random as core_random
from core.ops import F
from core.ops.nn import dropout as dropout_mod
from core.ops.nn import norm_kernels

from .kernel_checks import both as _both
from .kernel_checks import calls as _calls

pytestmark = pytest.mark.skipif(not cpu_kernels.enabled(),
                                reason="kernels are switched off (KBACKEND_NUMBA=0)")

_TOL = {"float32": dict(rtol=2e-5, atol=2e-5), "float64": dict(rtol=1e-12, atol=1e-12)}


def _close(got, want, dtype):
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, **_TOL.get(dtype, dict(rtol=0, atol=0)))


def _data(rng, shape, dtype, noncontig):
    if noncontig:  # a transposed view of a fresh array, same logical shape
        base = rng.standard_normal(shape[::-1]) * 2 + 0.5
        return nd.array(base, dtype=dtype).transpose(tuple(range(len(shape)))[::-1])
    return nd.array(rng.standard_normal(shape) * 2 + 0.5, dtype=dtype)


# ----------------------------------------------------------------------------- LayerNorm
def _layer_norm_run(x_np, gamma, beta, head, dtype, stats_grad, noncontig):
    x = nd.array(x_np, dtype=dtype)
    if noncontig:
        x = nd.array(np.ascontiguousarray(x_np.T), dtype=dtype).T
    ps = [x, nd.array(gamma, dtype=dtype), nd.array(beta, dtype=dtype)]
    for p in ps:
        p.attach_grad()
    with autograd.record():
        out, mean, std = nd.LayerNorm(*ps, output_mean_var=True)
        loss = (out * nd.array(head, dtype=dtype)).sum()
        if stats_grad:
            loss = loss + (mean * 0.7).sum() + (std * std).sum()
    loss.backward()
    return [out.asnumpy(), mean.asnumpy(), std.asnumpy()] + [p.grad.asnumpy() for p in ps]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(7, 33), (2, 3, 65), (1, 5), (40, 8)])
@pytest.mark.parametrize("stats_grad", [False, True])
def test_layer_norm_kernel_matches_twin(monkeypatch, dtype, shape, stats_grad):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape) * 3 + 1
    gamma, beta = rng.uniform(0.5, 2, shape[-1]), rng.uniform(-1, 1, shape[-1])
    head = rng.standard_normal(shape)
    noncontig = len(shape) == 2
    seen = _calls(monkeypatch, norm_kernels, "_rows_gx")
    on, off = _both(lambda: _layer_norm_run(x, gamma, beta, head, dtype, stats_grad,
                                            noncontig))
    assert seen == ["_rows_gx"]  # one backward on the kernel path, none on the twin's
    _close(on, off, dtype)


def test_layer_norm_other_axis_and_half_precision_use_the_twin(monkeypatch):
    seen = _calls(monkeypatch, norm_kernels, "_rows_affine")
    rng = np.random.default_rng(2)
    for dtype, axis in (("float32", 1), ("float16", -1)):
        x = nd.array(rng.standard_normal((4, 6, 5)), dtype=dtype)
        c = x.shape[axis]
        g, b = nd.ones((c,), dtype=dtype), nd.zeros((c,), dtype=dtype)
        on, off = _both(lambda: nd.LayerNorm(x, g, b, axis=axis).asnumpy())
        np.testing.assert_array_equal(on, off)
    assert seen == []


# ----------------------------------------------------------------------------- BatchNorm
def _batch_norm_run(x_np, gamma, beta, head, dtype, axis, fix_gamma, noncontig, stats_grad):
    x = nd.array(x_np, dtype=dtype) if not noncontig else nd.array(
        np.ascontiguousarray(x_np.T), dtype=dtype).T
    c = x_np.shape[axis]
    ps = [x, nd.array(gamma, dtype=dtype), nd.array(beta, dtype=dtype)]
    mm, mv = nd.zeros((c,), dtype=dtype), nd.ones((c,), dtype=dtype)
    for p in ps:
        p.attach_grad()
    with autograd.record():
        out, mean, inv_std = nd.BatchNorm(*ps, mm, mv, fix_gamma=fix_gamma, axis=axis,
                                          output_mean_var=True)
        loss = (out * nd.array(head, dtype=dtype)).sum()
        if stats_grad:
            loss = loss + (mean * 0.3).sum() + inv_std.sum()
    loss.backward()
    return ([out.asnumpy(), mean.asnumpy(), inv_std.asnumpy(), mm.asnumpy(), mv.asnumpy()]
            + [p.grad.asnumpy() for p in ps])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,axis", [((4, 3, 5, 6), 1), ((4, 5, 6, 3), -1), ((9, 5), 1),
                                        ((6, 4, 7), 1), ((3, 8), 0)])
@pytest.mark.parametrize("fix_gamma", [False, True])
@pytest.mark.parametrize("noncontig", [False, True])
def test_batch_norm_kernel_matches_twin(monkeypatch, dtype, shape, axis, fix_gamma, noncontig):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape) * 2 - 1
    c = shape[axis]
    gamma, beta = rng.uniform(0.5, 2, c), rng.uniform(-1, 1, c)
    head = rng.standard_normal(shape)
    seen = _calls(monkeypatch, norm_kernels, "_chan_gx")
    on, off = _both(lambda: _batch_norm_run(x, gamma, beta, head, dtype, axis, fix_gamma,
                                            noncontig, stats_grad=not fix_gamma))
    assert seen == ["_chan_gx"]
    _close(on, off, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batch_norm_inference_and_graph_operator_match_twin(dtype):
    rng = np.random.default_rng(5)
    x = nd.array(rng.standard_normal((4, 3, 5)), dtype=dtype)
    g = nd.array(rng.uniform(0.5, 2, 3), dtype=dtype)
    b = nd.array(rng.uniform(-1, 1, 3), dtype=dtype)
    mm = nd.array(rng.standard_normal(3), dtype=dtype)
    mv = nd.array(rng.uniform(1, 2, 3), dtype=dtype)

    def run():
        x.attach_grad()
        with autograd.record():  # the registry operator: stat_kind "rstd"
            outs = F.BatchNorm(x, g, b, mm, mv, fix_gamma=False, training=True)
            loss = (outs[0] * outs[0]).sum() + outs[2].sum()
        loss.backward()
        inf = nd.BatchNorm(x, g, b, mm, mv, fix_gamma=False)  # moving statistics
        return [o.asnumpy() for o in outs] + [x.grad.asnumpy(), inf.asnumpy()]

    on, off = _both(run)
    _close(on, off, dtype)


def test_batch_norm_half_precision_uses_the_twin(monkeypatch):
    seen = _calls(monkeypatch, norm_kernels, "_chan_affine")
    x = nd.array(np.random.default_rng(6).standard_normal((4, 3, 5)), dtype="float16")
    g, b = nd.ones((3,), dtype="float16"), nd.zeros((3,), dtype="float16")
    mm, mv = nd.zeros((3,), dtype="float16"), nd.ones((3,), dtype="float16")
    with autograd.train_mode():
        on, off = _both(lambda: nd.BatchNorm(x, g, b, mm, mv).asnumpy())
    np.testing.assert_array_equal(on, off)
    assert seen == []


# ----------------------------------------------------------------------------- Dropout
def _dropout_run(x, p, axes=()):
    core_random.seed(123)
    x.attach_grad()
    with autograd.record():
        out, mask = F.Dropout(x, p=p, axes=axes)
        loss = (out * out).sum()
    loss.backward()
    return [out.asnumpy(), mask.asnumpy(), x.grad.asnumpy()]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(7, 33), (2, 3, 65), (1,), (64, 130)])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.3])
@pytest.mark.parametrize("noncontig", [False, True])
def test_dropout_kernel_matches_twin_exactly(monkeypatch, dtype, shape, p, noncontig):
    seen = _calls(monkeypatch, dropout_mod, "_dropout_apply")
    x = _data(np.random.default_rng(7), shape, dtype, noncontig)
    on, off = _both(lambda: _dropout_run(x, p))
    assert seen == ["_dropout_apply"]
    for a, b in zip(on, off):  # the same draw: bit-identical masks and outputs
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype,axes", [("float16", ()), ("float32", (1,))])
def test_dropout_half_precision_and_shared_masks_use_the_twin(monkeypatch, dtype, axes):
    seen = _calls(monkeypatch, dropout_mod, "_dropout_apply")
    x = nd.array(np.random.default_rng(8).standard_normal((6, 10)), dtype=dtype)
    on, off = _both(lambda: _dropout_run(x, 0.4, axes))
    assert seen == []
    for a, b in zip(on, off):
        np.testing.assert_array_equal(a, b)
