"""MXNet's ``*_update`` operators (core.ops.optimizer_ops) with row_sparse gradients and
sparse weights: lazy updates touch only the gradient's rows; the rest falls back to a
dense update (MXNet 1.9.1's semantics), against NumPy."""
import numpy as np
import pytest

from core import nd

ROWS = [1, 3]


def _inputs():
    rng = np.random.default_rng(1)
    w = rng.uniform(-1, 1, (5, 2)).astype(np.float32)
    g = np.zeros_like(w)
    g[ROWS] = rng.uniform(-1, 1, (2, 2)).astype(np.float32)
    return w, g


def _rsp(a):
    return nd.array(a).tostype("row_sparse")


@pytest.mark.parametrize("lazy", [True, False])
def test_sgd_mom_update_lazy_rows_only(lazy):
    w, g = _inputs()
    weight, mom = nd.array(w), nd.zeros(w.shape)
    nd.sgd_mom_update(weight, _rsp(g), mom, out=weight, lr=0.1, momentum=0.9, wd=0.1,
                      lazy_update=lazy)
    want_mom = -0.1 * (g + 0.1 * w)
    if lazy:
        keep = [r for r in range(5) if r not in ROWS]
        want_mom[keep] = 0
    np.testing.assert_allclose(mom.asnumpy(), want_mom, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(weight.asnumpy(), w + want_mom, rtol=1e-6)


def test_sgd_update_out_none_and_other_out():
    w, g = _inputs()
    weight = nd.array(w)
    res = nd.sgd_update(weight, _rsp(g), lr=0.5, wd=0.2)
    want = w.copy()
    want[ROWS] = (1 - 0.5 * 0.2) * w[ROWS] - 0.5 * g[ROWS]
    np.testing.assert_allclose(res.asnumpy(), want, rtol=1e-6)
    np.testing.assert_array_equal(weight.asnumpy(), w)  # no out=: the weight is unchanged
    other = nd.zeros(w.shape)
    nd.sgd_update(weight, _rsp(g), lr=0.5, wd=0.2, out=other)
    np.testing.assert_allclose(other.asnumpy(), want, rtol=1e-6)


def test_adam_update_on_row_sparse_weight_keeps_its_storage():
    w, g = _inputs()
    weight, mean, var = _rsp(w), nd.zeros(w.shape), nd.zeros(w.shape)
    nd.adam_update(weight, _rsp(g), mean, var, out=weight, lr=0.01)
    assert weight.stype == "row_sparse"
    got = weight.asnumpy()
    keep = [r for r in range(5) if r not in ROWS]
    np.testing.assert_array_equal(got[keep], w[keep])
    m = 0.1 * g[ROWS]
    v = 0.001 * g[ROWS] ** 2
    np.testing.assert_allclose(got[ROWS], w[ROWS] - 0.01 * m / (np.sqrt(v) + 1e-8),
                               rtol=1e-5)


def test_ftrl_update_is_lazy_and_rmsprop_is_dense():
    w, g = _inputs()
    weight, z, n = nd.array(w), nd.zeros(w.shape), nd.zeros(w.shape)
    nd.ftrl_update(weight, _rsp(g), z, n, out=weight, lr=0.1)
    keep = [r for r in range(5) if r not in ROWS]
    np.testing.assert_array_equal(weight.asnumpy()[keep], w[keep])
    a, b = nd.array(w), nd.array(w)
    nd.rmsprop_update(a, _rsp(g), nd.zeros(w.shape), out=a, lr=0.1, wd=0.1)
    nd.rmsprop_update(b, nd.array(g), nd.zeros(w.shape), out=b, lr=0.1, wd=0.1)
    np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6)
