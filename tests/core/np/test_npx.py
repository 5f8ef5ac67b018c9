"""core.npx: the parts the op table (tests/core/ops/specs_npx.py) does not cover —
modes, devices, training-mode layers, list results, errors."""
import numpy as onp
import pytest

from core import autograd, nd, np, npx
from core.context import cpu


@pytest.fixture(autouse=True)
def _reset():
    yield
    npx.reset_np()


def test_set_np_flags_and_use_np():
    assert not npx.is_np_array() and not npx.is_np_shape()
    npx.set_np()
    assert npx.is_np_array() and npx.is_np_shape() and not npx.is_np_default_dtype()
    npx.reset_np()
    assert not npx.is_np_array()
    with pytest.raises(ValueError, match="set_np"):
        npx.set_np(shape=False, array=True)

    @npx.use_np
    class Model:
        def flag(self):
            return npx.is_np_array()

    assert Model().flag() is True and not npx.is_np_array()


def test_default_dtype_switch():
    npx.set_np(dtype=True)
    assert np.zeros(2).dtype == onp.float64
    assert np.ones((1,)).dtype == onp.float64
    assert np.array([1.5]).dtype == onp.float64
    assert np.arange(3).dtype == onp.int64
    assert np.arange(0.0, 1.0, 0.5).dtype == onp.float64
    assert np.linspace(0, 1, 3).dtype == onp.float64
    assert np.eye(2).dtype == onp.float64
    assert np.full((2,), 0.5).dtype == onp.float64
    assert np.random.uniform(size=2).dtype == onp.float64
    assert np.random.normal(size=2).dtype == onp.float64
    assert npx.set_np_default_dtype(False) is True
    assert np.zeros(2).dtype == onp.float32
    npx.reset_np()
    assert np.arange(3).dtype == onp.float32 and np.array([1.5]).dtype == onp.float32


def test_devices():
    assert npx.cpu() == cpu(0) and npx.cpu(1).device_id == 1
    assert npx.gpu(0).device_type == "gpu"
    assert isinstance(npx.num_gpus(), int)
    assert npx.current_device() == cpu(0) and npx.current_context is npx.current_device
    with npx.cpu(1):
        assert npx.current_device() == cpu(1)
        assert np.zeros(2).context == cpu(1)
    npx.waitall()


def test_gpu_memory_info_raises_clearly_without_gpu():
    if npx.num_gpus():
        free, total = npx.gpu_memory_info(0)
        assert 0 < free <= total
        return
    with pytest.raises(ValueError, match="no GPU 0"):
        npx.gpu_memory_info(0)


def test_seed_and_save_load(tmp_path):
    npx.seed(3)
    a = np.random.normal(size=4)
    npx.seed(3)
    assert (np.random.normal(size=4) == a).all()
    f = str(tmp_path / "x.npz")
    npx.save(f, {"a": a})
    assert onp.array_equal(npx.load(f)["a"].asnumpy(), a.asnumpy())


def test_softmax_length_arguments_checked():
    x = np.ones((2, 3))
    with pytest.raises(ValueError, match="use_length=True needs"):
        npx.softmax(x, use_length=True)
    with pytest.raises(ValueError, match="use_length=False"):
        npx.log_softmax(x, length=np.array([1, 2]))


def test_masked_log_softmax_gradient_skips_masked_entries():
    x = np.array([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]], dtype="float64")
    mask = np.array([[1, 0, 1], [1, 1, 1]], dtype="bool")
    x.attach_grad()
    with autograd.record():
        y = npx.masked_log_softmax(x, mask)
        loss = np.where(mask, y, 0.0).sum()
    loss.backward()
    g = x.grad.asnumpy()
    assert g[0, 1] == 0.0
    # unmasked rows: d/dx sum(log_softmax) = 1 - n * softmax
    sm = onp.exp(y.asnumpy()[1]) / onp.exp(y.asnumpy()[1]).sum()
    onp.testing.assert_allclose(g[1], 1 - 3 * sm, rtol=1e-10)
    assert onp.isneginf(y.asnumpy()[0, 1])


def test_batch_norm_training_updates_running_stats_and_returns_lists():
    x = np.array([[1.0, 2.0], [3.0, 6.0]])
    mean, var = np.zeros(2), np.ones(2)
    with autograd.train_mode():
        out = npx.batch_norm(x, np.ones(2), np.zeros(2), mean, var, eps=0.0, momentum=0.5)
    onp.testing.assert_allclose(out.asnumpy(), [[-1, -1], [1, 1]], atol=1e-6)
    onp.testing.assert_allclose(mean.asnumpy(), [1.0, 2.0])
    res = npx.batch_norm(x, np.ones(2), np.zeros(2), mean, var, output_mean_var=True)
    assert isinstance(res, list) and len(res) == 3
    res = npx.layer_norm(x, np.ones(2), np.zeros(2), output_mean_var=True)
    assert isinstance(res, list) and len(res) == 3
    assert isinstance(npx.topk(x, k=1, ret_typ="both"), list)


def test_dropout_modes():
    x = np.ones((200,))
    assert npx.dropout(x, p=0.5) is x
    with autograd.train_mode():
        y = npx.dropout(x, p=0.5).asnumpy()
    assert set(onp.unique(y)) <= {0.0, 2.0} and 0 < (y == 0).sum() < 200
    y = npx.dropout(x, p=0.5, mode="always").asnumpy()
    assert (y == 0).any()


def test_rnn_matches_nd_rnn_and_lists_states():
    rng = onp.random.default_rng(0)
    n = 4 * 4 * 3 + 4 * 4 * 4 + 2 * 4 * 4
    args = [np.array(rng.standard_normal(s) * 0.3) for s in ((5, 2, 3), (n,), (1, 2, 4),
                                                              (1, 2, 4))]
    res = npx.rnn(*args, mode="lstm", state_size=4, num_layers=1, state_outputs=True)
    ref = nd.RNN(*args, mode="lstm", state_size=4, state_outputs=True)
    assert isinstance(res, list) and len(res) == 3
    for a, b in zip(res, ref):
        onp.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def test_layers_match_nd():
    rng = onp.random.default_rng(1)
    x = np.array(rng.standard_normal((1, 2, 4, 4)))
    w = np.array(rng.standard_normal((2, 3, 2, 2)))
    ref = nd.Deconvolution(x, w, kernel=(2, 2), num_filter=3, stride=(2, 2), no_bias=True)
    onp.testing.assert_array_equal(npx.deconvolution(x, w, stride=2, num_filter=3).asnumpy(),
                                   ref.asnumpy())
    v = np.array([-2.0, 3.0])
    assert npx.leaky_relu(v, act_type="elu", slope=1.0).tolist()[1] == 3.0
    assert npx.activation(v, act_type="tanh").shape == (2,)
    with pytest.raises(ValueError, match="num_hidden"):
        npx.fully_connected(np.ones((2, 3)), np.ones((4, 3)), num_hidden=5)
    out = npx.fully_connected(np.ones((2, 3)), np.ones((4, 3)), np.ones(4), no_bias=True)
    onp.testing.assert_array_equal(out.asnumpy(), onp.full((2, 4), 3.0))


def test_array_helpers():
    x = np.arange(6.0).reshape(3, 2)
    assert npx.sequence_last(x, np.array([1, 3]), use_sequence_length=True).tolist() == [0.0, 5.0]
    assert npx.sequence_reverse(x).tolist() == [[4.0, 5.0], [2.0, 3.0], [0.0, 1.0]]
    assert npx.broadcast_like(np.ones((1, 2)), x).shape == (3, 2)
    assert npx.arange_like(x).tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    assert npx.arange_like(np.zeros(5), start=1.0, repeat=2).tolist() == [1.0, 1.0, 2.0, 2.0,
                                                                          3.0]
    assert npx.smooth_l1(np.array([0.5, 2.0])).tolist() == [0.125, 1.5]
    y = np.array([1.0, 2.0])
    y.attach_grad()
    with autograd.record():
        z = (npx.stop_gradient(y) * y).sum()
    z.backward()
    assert y.grad.tolist() == [1.0, 2.0]
    assert npx.batch_flatten(np.ones((2, 3, 4))).shape == (2, 12)


@pytest.mark.parametrize(("shape", "code", "why"), [
    ((2, 3), (-1, -1), "only one -1"),
    ((2, 3), (-3, -2), "size 1"),
    ((6,), (-6, 4, -1), "cannot split"),
    ((2, 3), (4, 2), "do not fit"),
    ((2, 3), (-5, -5), "two input axes"),
    ((2, 3), (-7,), "not a valid"),
])
def test_reshape_errors_name_the_codes(shape, code, why):
    with pytest.raises(ValueError, match=why):
        npx.reshape(np.zeros(shape), code)


def test_reshape_order_and_gradient():
    with pytest.raises(ValueError, match="order='C'"):
        npx.reshape(np.zeros((2, 3)), (-1,), order="F")
    x = np.ones((2, 3, 4))
    x.attach_grad()
    with autograd.record():
        y = npx.reshape(x, (-5, 2, -1), reverse=False)
    assert y.shape == (6, 2, 2)
    y.backward()
    assert x.grad.shape == (2, 3, 4)


def test_group_norm_nonzero_slice():
    x = np.array(onp.arange(8.0).reshape(1, 4, 2))
    out = npx.group_norm(x, np.ones(4), np.zeros(4), num_groups=2, eps=0.0)
    g = onp.arange(8.0).reshape(2, 4)
    ref = ((g - g.mean(1, keepdims=True)) / g.std(1, keepdims=True)).reshape(1, 4, 2)
    onp.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5)
    assert npx.nonzero(np.array([0.0, 3.0, 1.0])).tolist() == [[1], [2]]
    assert npx.slice(np.arange(10.0), (1,), (8,), (3,)).tolist() == [1.0, 4.0, 7.0]


def test_npx_random():
    npx.seed(2)
    b = npx.random.bernoulli(0.3, size=(20000,))
    assert b.dtype == onp.float32 and abs(b.asnumpy().mean() - 0.3) < 0.02
    b = npx.random.bernoulli(logit=np.array([-50.0, 50.0]))
    assert b.tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match="exactly one"):
        npx.random.bernoulli(0.5, logit=0.0)
    u = npx.random.uniform_n(np.array([0.0, 10.0]), 11.0, batch_shape=(3,))
    assert u.shape == (3, 2) and (u.asnumpy()[:, 1] >= 10.0).all()
    assert npx.random.normal_n(0.0, 1.0, batch_shape=(2, 2)).shape == (2, 2)
