"""Sums over several axes around a kept block (core/ops/reduce_kernels.py): the kernel
against NumPy's sum, through nd.sum, sum_to and a convolution's bias gradient."""
from __future__ import annotations

import numpy as np
import pytest

from core import autograd, cpu_kernels, nd
from core.ops import F, reduce_kernels

pytestmark = pytest.mark.skipif(not cpu_kernels.enabled(), reason="numba kernels are off")

CASES = [((6, 5, 32), (0, 2)), ((4, 3, 5, 7, 8), (0, 3, 4)), ((2, 3, 4, 40), (0, 1, 3)),
         ((7, 50), (0,)), ((3, 4, 64), (2,))]


@pytest.mark.parametrize(("shape", "axes"), CASES, ids=[str(c) for c in CASES])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("keepdims", [False, True])
def test_sum_over_several_axes_matches_numpy(shape, axes, dtype, keepdims):
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    got = nd.sum(nd.array(x, dtype=dtype), axis=axes, keepdims=keepdims).asnumpy()
    want = x.astype(np.float64).sum(axis=axes, keepdims=keepdims)
    assert got.dtype == np.dtype(dtype) and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == "float32" else 1e-13,
                               atol=1e-5 if dtype == "float32" else 1e-12)


def test_which_sums_take_the_kernel():
    x = np.ones((4, 3, 32), np.float32)
    assert reduce_kernels.sum_around(np, x, (0, 2), x.dtype) is not None
    assert reduce_kernels.sum_around(np, x, (1,), x.dtype) is None  # kept axes not a block
    assert reduce_kernels.sum_around(np, x[:, :, ::2], (0, 2), x.dtype) is None  # strided
    assert reduce_kernels.sum_around(np, x.astype(np.int32), (0, 2), np.int32) is None
    assert reduce_kernels.sum_around(np, np.ones((4, 3, 8), np.float32), (0, 2),
                                     np.float32) is None  # short runs: NumPy's loops
    with cpu_kernels.disabled():
        assert reduce_kernels.sum_around(np, x, (0, 2), x.dtype) is None


def test_float32_sums_accumulate_in_float64():
    x = np.full((4, 2, 1 << 16), 0.1, np.float32)
    got = nd.sum(nd.array(x), axis=(0, 2)).asnumpy()
    exact = x.astype(np.float64).sum(axis=(0, 2))
    np.testing.assert_allclose(got, exact, rtol=1e-7)


def test_sum_to_and_convolution_bias_gradient():
    rng = np.random.default_rng(1)
    g = rng.standard_normal((8, 5, 6, 6))
    np.testing.assert_allclose(F.sum_to(nd.array(g, dtype=g.dtype), shape=(5, 1, 1)).asnumpy(),
                               g.sum(axis=(0, 2, 3)).reshape(5, 1, 1), rtol=1e-12)
    x = nd.array(rng.standard_normal((8, 3, 8, 8)), dtype="float64")
    w = nd.array(rng.standard_normal((5, 3, 3, 3)), dtype="float64")
    b = nd.array(np.zeros(5), dtype="float64")
    b.attach_grad()
    with autograd.record():
        y = nd.Convolution(x, w, b, kernel=(3, 3), num_filter=5)
    y.backward(nd.array(g, dtype=g.dtype))
    np.testing.assert_allclose(b.grad.asnumpy(), g.sum(axis=(0, 2, 3)), rtol=1e-12)
