"""core.optimizer with sparse weights and gradients: MXNet 1.9.1's lazy updates (only a
row_sparse gradient's rows change) and its storage fallback (dense update), against
NumPy formulas."""
import numpy as np
import pytest

from core import nd, optimizer
from core.testing.compare import compare_optimizer

ROWS = [0, 2]  # the rows the row_sparse gradient holds (of 4)


def _arrays(dtype="float32"):
    rng = np.random.default_rng(0)
    w = rng.uniform(-1, 1, (4, 3)).astype(dtype)
    g = np.zeros((4, 3), dtype)
    g[ROWS] = rng.uniform(-1, 1, (2, 3)).astype(dtype)
    return w, g


def _rsp(a):
    return nd.array(a, dtype=a.dtype).tostype("row_sparse")


def _sgd_mom(w, g, mom, lr, wd, momentum, rescale=1.0):
    mom[:] = momentum * mom - lr * (rescale * g + wd * w)
    return w + mom


@pytest.mark.parametrize("w_stype", ["default", "row_sparse"])
@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_sgd_lazy_updates_only_the_gradient_rows(w_stype, momentum):
    w, g = _arrays()
    opt = optimizer.SGD(learning_rate=0.1, wd=0.05, momentum=momentum, rescale_grad=0.5)
    weight = nd.array(w) if w_stype == "default" else _rsp(w)
    state = opt.create_state(0, weight)
    opt.update(0, weight, _rsp(g), state)
    mom = np.zeros_like(w)
    want = w.copy()
    want[ROWS] = _sgd_mom(w[ROWS], g[ROWS], mom[ROWS], 0.1, 0.05, momentum, 0.5)
    assert weight.stype == w_stype
    np.testing.assert_allclose(weight.asnumpy(), want, rtol=1e-6)
    if momentum:
        want_mom = np.zeros_like(w)
        want_mom[ROWS] = -0.1 * (0.5 * g[ROWS] + 0.05 * w[ROWS])
        np.testing.assert_allclose(state.asnumpy(), want_mom, rtol=1e-6)


@pytest.mark.parametrize("w_stype", ["default", "row_sparse"])
def test_sgd_not_lazy_updates_every_row(w_stype):
    w, g = _arrays()
    opt = optimizer.SGD(learning_rate=0.1, wd=0.05, momentum=0.9, lazy_update=False)
    weight = nd.array(w) if w_stype == "default" else _rsp(w)
    opt.update(0, weight, _rsp(g), opt.create_state(0, weight))
    want = _sgd_mom(w, g, np.zeros_like(w), 0.1, 0.05, 0.9)
    np.testing.assert_allclose(weight.asnumpy(), want, rtol=1e-6)


def _adam(w, g, m, v, lr, wd, t, b1=0.9, b2=0.999, eps=1e-8):
    gr = g + wd * w
    m[:] = b1 * m + (1 - b1) * gr
    v[:] = b2 * v + (1 - b2) * gr * gr
    lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    return w - lr_t * m / (np.sqrt(v) + eps)


@pytest.mark.parametrize("lazy", [True, False])
def test_adam_lazy_and_not(lazy):
    w, g = _arrays()
    opt = optimizer.Adam(learning_rate=0.01, wd=0.1, lazy_update=lazy)
    weight = nd.array(w)
    state = opt.create_state(0, weight)
    for t in (1, 2):
        opt.update(0, weight, _rsp(g), state)
    m, v, want = np.zeros_like(w), np.zeros_like(w), w.copy()
    for t in (1, 2):
        if lazy:
            mr, vr = m[ROWS], v[ROWS]
            want[ROWS] = _adam(want[ROWS], g[ROWS], mr, vr, 0.01, 0.1, t)
            m[ROWS], v[ROWS] = mr, vr
        else:
            want = _adam(want, g, m, v, 0.01, 0.1, t)
    np.testing.assert_allclose(weight.asnumpy(), want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(state[0].asnumpy(), m, rtol=1e-5, atol=1e-7)


def test_ftrl_and_adagrad_are_lazy():
    w, g = _arrays()
    for opt in (optimizer.Ftrl(learning_rate=0.1, lamda1=0.01),
                optimizer.AdaGrad(learning_rate=0.1)):
        weight = nd.array(w)
        opt.update(0, weight, _rsp(g), opt.create_state(0, weight))
        got = weight.asnumpy()
        others = [r for r in range(4) if r not in ROWS]
        np.testing.assert_array_equal(got[others], w[others])
        assert not np.allclose(got[ROWS], w[ROWS])


def test_adagrad_sparse_refuses_weight_decay():
    w, g = _arrays()
    opt = optimizer.AdaGrad(learning_rate=0.1, wd=0.1)
    weight = nd.array(w)
    with pytest.raises(ValueError, match="AdaGrad.update: the sparse .* weight decay"):
        opt.update(0, weight, _rsp(g), opt.create_state(0, weight))


def test_rmsprop_falls_back_to_a_dense_update():
    w, g = _arrays()
    dense_w, sparse_w = nd.array(w), nd.array(w)
    for weight, grad in ((dense_w, nd.array(g)), (sparse_w, _rsp(g))):
        opt = optimizer.RMSProp(learning_rate=0.1, wd=0.1)
        opt.update(0, weight, grad, opt.create_state(0, weight))
    np.testing.assert_allclose(sparse_w.asnumpy(), dense_w.asnumpy(), rtol=1e-6)


def test_csr_weight_and_gradient_fall_back_to_dense():
    w, g = _arrays()
    opt = optimizer.SGD(learning_rate=0.1, wd=0.05)
    weight = nd.array(w).tostype("csr")
    opt.update(0, weight, nd.array(g).tostype("csr"), None)
    assert weight.stype == "csr"
    np.testing.assert_allclose(weight.asnumpy(), (1 - 0.1 * 0.05) * w - 0.1 * g, rtol=1e-6)


def test_multi_precision_with_sparse_float16_weight_and_gradient():
    w, g = _arrays("float16")
    opt = optimizer.SGD(learning_rate=0.1, multi_precision=True)
    weight = _rsp(w)
    state = opt.create_state_multi_precision(0, weight)
    opt.update_multi_precision(0, weight, _rsp(g), state)
    want = w.astype(np.float32)
    want[ROWS] -= 0.1 * g[ROWS].astype(np.float32)
    assert weight.stype == "row_sparse" and weight.dtype == np.float16
    np.testing.assert_allclose(weight.asnumpy(), want.astype(np.float16), rtol=1e-3)
    np.testing.assert_allclose(state[1].asnumpy(), want, rtol=1e-6)


def test_update_of_sparse_gradient_checks_shape():
    w, g = _arrays()
    with pytest.raises(ValueError, match=r"SGD.update: gradient shape \(4, 2\)"):
        optimizer.SGD().update(0, nd.array(w), _rsp(g[:, :2]), None)


@pytest.mark.parametrize("w_stype,g_stype", [("row_sparse", "row_sparse"),
                                             ("default", "row_sparse"), ("csr", "csr")])
def test_compare_optimizer_takes_sparse_stypes(w_stype, g_stype):
    kw = {"learning_rate": 0.1, "wd": 0.03, "lazy_update": False}
    shape = (3, 4) if w_stype == "csr" else (3, 4, 5)
    compare_optimizer(optimizer.SGD(**kw), optimizer.SGD(**kw), shape, np.float32,
                      w_stype=w_stype, g_stype=g_stype)


def test_compare_optimizer_rejects_unknown_stype():
    with pytest.raises(ValueError, match="compare_optimizer: stype must be"):
        compare_optimizer(optimizer.SGD(), optimizer.SGD(), (2, 2), np.float32,
                          w_stype="coo")
