"""core.ops.nn.batchnorm_cudnn: the cuDNN BatchNorm path and its epsilon compensation,
run on CPU with a fake cuDNN that refuses eps < 1e-5 as cuDNN does."""
import numpy as np
import pytest

from core import autograd, nd
from core.ops.nn import batchnorm_cudnn as bc


class _FakeCudnn:
    """cupyx.cudnn's batch_normalization_forward_inference, in NumPy, with cuDNN's check."""

    def __init__(self):
        self.eps_seen = []

    def batch_normalization_forward_inference(self, x, gamma, beta, mean, var, eps,
                                              is_for_conv2d, mode):
        if eps < bc.CUDNN_BN_MIN_EPSILON:
            raise ValueError("CUDNN_STATUS_BAD_PARAM: eps below CUDNN_BN_MIN_EPSILON")
        assert is_for_conv2d and mode == "spatial"
        self.eps_seen.append(eps)
        s = (1, -1) + (1,) * (x.ndim - 2)
        y = (x - mean.reshape(s)) / np.sqrt(var.reshape(s) + eps) * gamma.reshape(s) \
            + beta.reshape(s)
        return y.astype(x.dtype)


@pytest.fixture
def fake(monkeypatch):
    f = _FakeCudnn()
    monkeypatch.setattr(bc, "_fake_cudnn", (f, "spatial"))
    return f


@pytest.mark.parametrize("eps", [1e-3, 1e-5, 1e-8, 1e-12, 0.0])
def test_cudnn_eps_matches_the_plain_formula(eps):
    var = np.array([0.0, 1e-9, 1e-6, 0.5, 3.0])
    x = np.array([0.25, -1.0, 2.0, 0.1, -0.3])
    v, e = bc.cudnn_eps(var, eps)
    assert e == max(eps, 1e-5) and v.dtype == var.dtype
    plain = x / np.sqrt(var + eps) if eps > 0 else x / np.sqrt(var + 1e-300)
    if eps > 0:
        np.testing.assert_allclose(x / np.sqrt(v + e), plain, rtol=1e-9)
    if eps >= 1e-5:
        assert v is var


def _plain(x, gamma, beta, mean, var, eps):
    s = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean.reshape(s)) / np.sqrt(var.reshape(s) + eps) * gamma.reshape(s) \
        + beta.reshape(s)


@pytest.mark.parametrize("shape", [(4, 3, 2, 2), (2, 2, 3, 2, 2)])
def test_batchnorm_through_fake_cudnn_with_tiny_eps_is_the_plain_formula(fake, shape):
    # 4-d data goes through (fake) cuDNN; 5-d data through the elementwise path
    rng = np.random.default_rng(0)
    x = (rng.normal(size=shape) * 1e-3).astype("float64")  # var ~1e-6: eps matters
    gamma, beta = rng.uniform(0.5, 1.5, shape[1]), rng.normal(size=shape[1])
    mm = nd.array(rng.normal(size=shape[1]), dtype="float64")
    mv = nd.array(rng.uniform(1e-7, 1e-6, shape[1]), dtype="float64")
    args = [nd.array(a, dtype="float64") for a in (x, gamma, beta)]
    red = (0,) + tuple(range(2, x.ndim))
    with autograd.train_mode():
        y = nd.BatchNorm(*args, mm, mv, eps=1e-9, fix_gamma=False)
    np.testing.assert_allclose(y.asnumpy(), _plain(x, gamma, beta, x.mean(red), x.var(red),
                                                   1e-9), rtol=1e-9, atol=1e-12)
    mv_np, mm_np = mv.asnumpy(), mm.asnumpy()
    y = nd.BatchNorm(*args, mm, mv, eps=1e-9, fix_gamma=False)  # inference
    np.testing.assert_allclose(y.asnumpy(), _plain(x, gamma, beta, mm_np, mv_np, 1e-9),
                               rtol=1e-9, atol=1e-12)
    # cuDNN was given its minimum both times
    assert fake.eps_seen == ([1e-5, 1e-5] if len(shape) == 4 else [])


def test_fake_cudnn_path_equals_the_elementwise_path_with_gradients(monkeypatch):
    rng = np.random.default_rng(1)
    x0 = rng.normal(size=(3, 2, 2, 2))

    def run():
        x, g, b = nd.array(x0), nd.array([1.5, 0.5]), nd.array([0.1, -0.2])
        for a in (x, g, b):
            a.attach_grad()
        with autograd.record():
            y = nd.BatchNorm(x, g, b, nd.zeros(2), nd.ones(2), eps=1e-7, fix_gamma=False)
            (y * y * nd.arange(y.size).reshape(y.shape)).sum().backward()
        return [a.asnumpy() for a in (y, x.grad, g.grad, b.grad)]

    want = run()
    f = _FakeCudnn()
    monkeypatch.setattr(bc, "_fake_cudnn", (f, "spatial"))
    got = run()
    assert f.eps_seen == [1e-5]
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_layouts_cudnn_does_not_take_use_the_elementwise_path(fake):
    x = np.zeros((2, 3))
    assert bc.forward(np, x, np.ones(3), np.zeros(3), 1e-9, False, 1) is None  # 2-d
    x4 = np.zeros((2, 3, 2, 2))
    assert bc.forward(np, x4, np.ones(2), np.zeros(2), 1e-9, False, 3) is None  # NHWC
    assert bc.forward(np, x4.astype("int32"), np.ones(3), np.zeros(3), 1e-3, False,
                      1) is None
    assert fake.eps_seen == []


def test_no_cudnn_without_a_fake():
    assert bc.cudnn_module(np) is None
    cupy = pytest.importorskip("cupy")
    try:
        import cupyx.cudnn  # noqa: F401
    except Exception:  # noqa: BLE001 - CuPy 14 has no cuDNN: the elementwise path runs
        assert bc.cudnn_module(cupy) is None
    else:
        assert bc.cudnn_module(cupy) is not None
