"""BatchNorm's running statistics and modes, and the normalization operators' errors.

Values and gradients of every normalization operator are in the op table
(tests/core/ops/specs_norm.py).
"""
import numpy as np
import pytest

from core import autograd, nd
from core.ops.nn.batchnorm import MIN_EPS, min_eps_adjust


def _arr(a, dtype="float64"):
    return nd.array(a, dtype=dtype)


def _setup(rng, c=3):
    gamma = _arr(rng.uniform(0.5, 2.0, c))
    beta = _arr(rng.uniform(-1.0, 1.0, c))
    return gamma, beta, nd.zeros((c,), dtype="float64"), nd.ones((c,), dtype="float64")


@pytest.mark.parametrize("layout", ["NCHW", "NHWC", "NC"])
def test_running_statistics_after_three_steps(layout):
    rng = np.random.default_rng(0)
    gamma, beta, mm, mv = _setup(rng)
    shapes = {"NCHW": (4, 3, 2, 5), "NHWC": (4, 2, 5, 3), "NC": (6, 3)}
    axis = -1 if layout == "NHWC" else 1
    momentum = 0.8
    want_m, want_v = np.zeros(3), np.ones(3)
    for step in range(3):
        x = rng.normal(step, 1.0 + step, shapes[layout])
        xa = _arr(x)
        xa.attach_grad()
        with autograd.record():
            y = nd.BatchNorm(xa, gamma, beta, mm, mv, momentum=momentum, axis=axis,
                             fix_gamma=False)
            loss = (y * y).sum()
        loss.backward()
        axes = tuple(i for i in range(x.ndim) if i != axis % x.ndim)
        want_m = want_m * momentum + x.mean(axis=axes) * (1 - momentum)
        want_v = want_v * momentum + x.var(axis=axes) * (1 - momentum)  # biased, as MXNet
        np.testing.assert_allclose(mm.asnumpy(), want_m, rtol=1e-12)
        np.testing.assert_allclose(mv.asnumpy(), want_v, rtol=1e-12)
        # the update is not part of the graph
        assert mm._node is None and mv._node is None


def test_inference_uses_and_keeps_running_statistics():
    rng = np.random.default_rng(1)
    gamma, beta, _, _ = _setup(rng)
    mm = _arr(rng.normal(size=3))
    mv = _arr(rng.uniform(0.5, 2.0, 3))
    before = (mm.asnumpy().copy(), mv.asnumpy().copy())
    x = rng.normal(size=(4, 3, 2))
    for mode in (autograd.predict_mode, autograd.pause):
        with mode():
            y = nd.BatchNorm(_arr(x), gamma, beta, mm, mv, eps=1e-5, fix_gamma=False)
        b = (1, 3, 1)
        want = (x - before[0].reshape(b)) / np.sqrt(before[1].reshape(b) + 1e-5) * \
            gamma.asnumpy().reshape(b) + beta.asnumpy().reshape(b)
        np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-12)
    # record(train_mode=False) is inference too
    with autograd.record(train_mode=False):
        nd.BatchNorm(_arr(x), gamma, beta, mm, mv)
    np.testing.assert_array_equal(mm.asnumpy(), before[0])
    np.testing.assert_array_equal(mv.asnumpy(), before[1])


def test_use_global_stats_in_training():
    rng = np.random.default_rng(2)
    gamma, beta, _, _ = _setup(rng)
    mm, mv = _arr(rng.normal(size=3)), _arr(rng.uniform(0.5, 2.0, 3))
    before = (mm.asnumpy().copy(), mv.asnumpy().copy())
    x = _arr(rng.normal(size=(5, 3)))
    x.attach_grad()
    with autograd.record():
        y = nd.BatchNorm(x, gamma, beta, mm, mv, use_global_stats=True, fix_gamma=False)
        loss = y.sum()
    np.testing.assert_array_equal(mm.asnumpy(), before[0])
    np.testing.assert_array_equal(mv.asnumpy(), before[1])
    loss.backward()
    with autograd.predict_mode():
        want = nd.BatchNorm(x, gamma, beta, mm, mv, fix_gamma=False)
    np.testing.assert_allclose(y.asnumpy(), want.asnumpy(), rtol=1e-12)
    # with global statistics the data gradient is gamma / sqrt(var + eps)
    np.testing.assert_allclose(
        x.grad.asnumpy(), np.broadcast_to(gamma.asnumpy() / np.sqrt(before[1] + 1e-3), (5, 3)),
        rtol=1e-12)
    # a training call of the same layer later in the graph updates the statistics in
    # place; the earlier global-statistics call still differentiates with the old ones
    with autograd.record():
        y = nd.BatchNorm(x, gamma, beta, mm, mv, use_global_stats=True, fix_gamma=False)
        y2 = nd.BatchNorm(x, gamma, beta, mm, mv, fix_gamma=False)
        loss = y.sum() + (y2 * 0).sum()
    assert not np.allclose(mm.asnumpy(), before[0])
    loss.backward()
    np.testing.assert_allclose(
        x.grad.asnumpy(), np.broadcast_to(gamma.asnumpy() / np.sqrt(before[1] + 1e-3), (5, 3)),
        rtol=1e-12)


def test_fix_gamma():
    rng = np.random.default_rng(3)
    x = _arr(rng.normal(size=(4, 3, 2)))
    gamma, beta, mm, mv = _setup(rng)
    gamma.attach_grad()
    beta.attach_grad()
    with autograd.record():
        y = nd.BatchNorm(x, gamma, beta, mm, mv)  # fix_gamma=True by default, as MXNet
        (y * _arr(rng.normal(size=(4, 3, 2)))).sum().backward()
    with autograd.train_mode():
        ones = nd.BatchNorm(x, nd.ones((3,), dtype="float64"), beta, mm.copy(), mv.copy(),
                            fix_gamma=False)
    np.testing.assert_allclose(y.asnumpy(), ones.asnumpy(), rtol=1e-12)
    np.testing.assert_array_equal(gamma.grad.asnumpy(), np.zeros(3))
    assert np.abs(beta.grad.asnumpy()).sum() > 0
    np.testing.assert_array_equal(gamma.asnumpy() != 1.0, True)  # gamma is not overwritten
    # inference too ignores gamma
    with autograd.predict_mode():
        a = nd.BatchNorm(x, gamma, beta, mm, mv)
        b = nd.BatchNorm(x, gamma * 3, beta, mm, mv)
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def test_output_mean_var_and_eps_exact():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(8, 2))
    gamma, beta, mm, mv = _setup(rng, 2)
    with autograd.train_mode():
        out, mean, inv_std = nd.BatchNorm(_arr(x), gamma, beta, mm, mv, eps=1e-9,
                                          output_mean_var=True)
    np.testing.assert_allclose(mean.asnumpy(), x.mean(0), rtol=1e-12)
    np.testing.assert_allclose(inv_std.asnumpy(), 1 / np.sqrt(x.var(0) + 1e-9), rtol=1e-12)
    # eps is used as given (no clamping to a backend minimum on NumPy)
    assert "numpy" not in MIN_EPS
    with autograd.train_mode():
        tiny = nd.BatchNorm(_arr(x * 1e-4), gamma, beta, mm, mv, eps=1e-17)
    np.testing.assert_allclose(tiny.asnumpy(), out.asnumpy(), rtol=1e-9)


def test_min_eps_adjust():
    var = np.array([0.0, 1e-7, 2.0])
    v, e = min_eps_adjust(var, 1e-8, 1e-5)
    assert e == 1e-5
    np.testing.assert_allclose(1 / np.sqrt(v + e), 1 / np.sqrt(var + 1e-8), rtol=1e-12)
    v2, e2 = min_eps_adjust(var, 1e-3, 1e-5)
    assert v2 is var and e2 == 1e-3
    assert min_eps_adjust(var, 1e-8, None) == (var, 1e-8)


def test_float16_batch_norm_keeps_statistics_in_float32():
    rng = np.random.default_rng(5)
    x = nd.array(rng.normal(size=(4, 3, 2)), dtype="float16")
    mm, mv = nd.zeros((3,)), nd.ones((3,))
    with autograd.train_mode():
        y, mean, _ = nd.BatchNorm(x, nd.ones((3,)), nd.zeros((3,)), mm, mv,
                                  output_mean_var=True)
    assert y.dtype == np.float16 and mean.dtype == np.float32 and mm.dtype == np.float32
    ref = x.asnumpy().astype(np.float64)
    ref = (ref - ref.mean((0, 2), keepdims=True)) / np.sqrt(ref.var((0, 2), keepdims=True) + 1e-3)
    np.testing.assert_allclose(y.asnumpy(), ref, rtol=2e-3, atol=2e-3)


def test_layer_group_norm_float16():
    rng = np.random.default_rng(6)
    x = nd.array(rng.normal(size=(2, 4, 3)), dtype="float16")
    out, mean, std = nd.LayerNorm(x, nd.ones((3,)), nd.zeros((3,)), output_mean_var=True)
    assert (out.dtype, mean.dtype, std.dtype) == (np.float16,) * 3
    assert mean.shape == (2, 4, 1)
    out, mean, std = nd.GroupNorm(x, nd.ones((4,)), nd.zeros((4,)), num_groups=2,
                                  output_mean_var=True)
    assert out.dtype == np.float16 and mean.shape == (2, 2)


# ----------------------------------------------------------------- errors
def test_batch_norm_wrong_number_of_features():
    x = nd.ones((2, 3, 4, 4))
    g4, ones3, zeros3 = nd.ones((4,)), nd.ones((3,)), nd.zeros((3,))
    for mode in (autograd.train_mode, autograd.predict_mode):
        with mode(), pytest.raises(ValueError, match=r"BatchNorm: gamma has shape \(4,\) .*"
                                                     r"\(2, 3, 4, 4\)"):
            nd.BatchNorm(x, g4, zeros3, zeros3, ones3)
    with pytest.raises(ValueError, match=r"BatchNorm: beta has shape \(1,\).*\(2, 3, 4, 4\)"):
        nd.BatchNorm(x, ones3, nd.zeros((1,)), zeros3, ones3)
    with autograd.train_mode(), pytest.raises(ValueError, match=r"BatchNorm: moving_var has "
                                                                r"shape \(4,\)"):
        nd.BatchNorm(x, ones3, zeros3, zeros3, nd.ones((4,)))
    # channels-last: gamma must match the last axis
    with pytest.raises(ValueError, match=r"BatchNorm: gamma has shape \(3,\) .*4 channels on "
                                         r"axis -1"):
        nd.BatchNorm(x, ones3, zeros3, zeros3, ones3, axis=-1)
    with pytest.raises(ValueError, match=r"BatchNorm: axis=4 is out of range .*\(2, 3, 4, 4\)"):
        nd.BatchNorm(x, ones3, zeros3, zeros3, ones3, axis=4)
    with autograd.train_mode(), pytest.raises(TypeError, match=r"BatchNorm: moving_mean must "
                                                               r"be an NDArray"):
        nd.BatchNorm(x, ones3, zeros3, np.zeros(3), ones3)
    with pytest.raises(TypeError, match=r"BatchNorm: expects floating-point data"):
        nd.BatchNorm(nd.ones((2, 3), dtype="int32"), ones3, zeros3, zeros3, ones3)


def test_layer_norm_mismatched_gamma():
    x = nd.ones((2, 3, 5))
    with pytest.raises(ValueError, match=r"LayerNorm: gamma has shape \(3,\) but must have "
                                         r"shape \(5,\).*\(2, 3, 5\)"):
        nd.LayerNorm(x, nd.ones((3,)), nd.zeros((5,)))
    with pytest.raises(ValueError, match=r"LayerNorm: beta has shape \(5,\) .*shape \(3,\)"):
        nd.LayerNorm(x, nd.ones((3,)), nd.zeros((5,)), axis=1)
    with pytest.raises(TypeError, match=r"LayerNorm: gamma must be an array"):
        nd.LayerNorm(x, 1.0, nd.zeros((5,)))


def test_other_errors():
    x = nd.ones((2, 6, 3))
    with pytest.raises(ValueError, match=r"GroupNorm: the 6 channels .* num_groups=4"):
        nd.GroupNorm(x, nd.ones((6,)), nd.zeros((6,)), num_groups=4)
    with pytest.raises(ValueError, match=r"GroupNorm: gamma has shape \(5,\) but must have "
                                         r"shape \(6,\)"):
        nd.GroupNorm(x, nd.ones((5,)), nd.zeros((5,)), num_groups=2)
    with pytest.raises(ValueError, match=r"GroupNorm: beta has shape \(6,\) but must have "
                                         r"shape \(2,\)"):
        nd.GroupNorm(x, nd.ones((2,)), nd.zeros((6,)), num_groups=2)
    with pytest.raises(ValueError, match=r"InstanceNorm: data must have at least 3 dim"):
        nd.InstanceNorm(nd.ones((2, 3)), nd.ones((3,)), nd.zeros((3,)))
    with pytest.raises(ValueError, match=r"InstanceNorm: gamma has shape \(2,\)"):
        nd.InstanceNorm(x, nd.ones((2,)), nd.zeros((6,)))
    with pytest.raises(ValueError, match=r"L2Normalization: mode must be one of"):
        nd.L2Normalization(x, mode="batch")
    with pytest.raises(ValueError, match=r"L2Normalization: mode='spatial' needs data with at "
                                         r"least 3"):
        nd.L2Normalization(nd.ones((2, 3)), mode="spatial")
    with pytest.raises(TypeError, match=r"LRN: nsize .* is required"):
        nd.LRN(x)
    with pytest.raises(ValueError, match=r"LRN: nsize must be a positive odd int"):
        nd.LRN(x, nsize=4)
