"""AMP (core.amp): op lists, init's casts, dynamic loss scaling with a Gluon Trainer."""
import json

import numpy as np
import pytest

from core import amp, autograd, cpu, nd
from core.amp import amp as amp_mod
from core.amp import lists
from core.amp.loss_scaler import LossScaler, grads_finite
from core.dtypes import bfloat16
from gluon import Trainer, nn
from gluon import loss as gloss
from tests.mxnet_ref import requires_mxnet, run_mxnet

F16, F32 = np.dtype("float16"), np.dtype("float32")

# overflowing steps are what the loss scaler is for: NumPy warns of them
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered", "ignore:invalid value encountered")


@pytest.fixture(params=["float16", "bfloat16"])
def amp_on(request):
    amp_mod._uninit()
    amp.init(request.param)
    yield np.dtype(request.param)
    amp_mod._uninit()


@pytest.fixture
def amp_f16():
    amp_mod._uninit()
    amp.init("float16")
    yield F16
    amp_mod._uninit()


# ------------------------------------------------------------------ lists
@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_lists_name_nd_functions_and_are_disjoint(dt):
    groups = {"lp16": amp.list_lp16_ops(dt), "fp32": amp.list_fp32_ops(dt),
              "lp16_fp32": amp.list_lp16_fp32_ops(dt),
              "cond": [c[0] for c in amp.list_conditional_fp32_ops(dt)]}
    for names in [*groups.values(), amp.list_widest_type_cast(dt),
                  amp.list_loss_output_functions(dt)]:
        missing = [n for n in names if not callable(getattr(nd, n, None))]
        assert not missing, missing
    assert not set(groups["lp16"]) & set(groups["fp32"])
    assert not set(groups["lp16"]) & set(groups["lp16_fp32"])
    assert not set(groups["fp32"]) & set(groups["lp16_fp32"])
    assert not set(groups["cond"]) & (set(groups["lp16"]) | set(groups["fp32"])
                                      | set(groups["lp16_fp32"]))
    assert not set(amp.list_widest_type_cast(dt)) & (set(groups["lp16"]) | set(groups["fp32"])
                                                   | set(groups["lp16_fp32"]))
    assert "FullyConnected" in groups["lp16"] and "softmax" in groups["fp32"]


def test_list_bad_dtype_and_bf16_fp32_params():
    with pytest.raises(ValueError, match="list_lp16_ops: target_dtype"):
        amp.list_lp16_ops("float64")
    assert amp.list_lp16_use_fp32_params("float16") is None
    assert amp.list_lp16_use_fp32_params("bfloat16")["BatchNorm"][:2] == ["", "gamma"]
    assert lists.symbol_bf16.BF16_FUNCS == amp.list_lp16_ops("bfloat16")


# ------------------------------------------------------------------ init's casts
def test_init_casts_by_list(amp_on):
    dt = amp_on
    x, w, b = nd.ones((2, 3)), nd.ones((4, 3)), nd.zeros((4,))
    y = nd.FullyConnected(x, w, b, num_hidden=4)
    assert y.dtype == dt
    np.testing.assert_array_equal(y.asnumpy().astype(np.float32), 3.0)
    assert nd.softmax(y).dtype == F32                       # float32 list
    assert nd.relu(y).dtype == dt                           # as given
    assert nd.Activation(y, act_type="softrelu").dtype == F32  # conditional
    assert nd.Activation(y, act_type="relu").dtype == dt
    assert nd.broadcast_add(y, nd.ones((2, 4))).dtype == F32  # widest
    assert nd.Concat(y, y, dim=1).dtype == dt


def test_init_gradients_reach_fp32_params_in_fp32(amp_on):
    x, w = nd.ones((2, 3)), nd.ones((4, 3))
    w.attach_grad()
    with autograd.record():
        y = nd.FullyConnected(x, w, no_bias=True, num_hidden=4)
        loss = nd.sum(y)  # float32 list: cast up
    loss.backward()
    assert y.dtype == amp_on and loss.dtype == F32
    assert w.grad.dtype == F32
    np.testing.assert_array_equal(w.grad.asnumpy(), 2.0)


def test_bf16_batchnorm_keeps_fp32_params():
    amp_mod._uninit()  # MXNet's bfloat16 list passes BatchNorm through; put it in bfloat16
    amp.init("bfloat16", target_precision_ops=["FullyConnected", "BatchNorm"])
    try:
        x = nd.ones((2, 3))
        g, b, m, v = nd.ones(3), nd.zeros(3), nd.zeros(3), nd.ones(3)
        seen = []
        orig = amp_mod._cast_nd
        amp_mod._cast_nd = lambda a, dtype: seen.append(a.shape) or orig(a, dtype=dtype)
        try:
            out = nd.BatchNorm(x, g, b, m, v)
        finally:
            amp_mod._cast_nd = orig
        assert out.dtype == bfloat16
        assert seen == [(2, 3)]  # only the data was cast
    finally:
        amp_mod._uninit()


def test_uninit_restores_and_init_twice_is_a_no_op():
    amp_mod._uninit()
    fc = nd.FullyConnected
    amp.init("float16")
    assert nd.FullyConnected is not fc and amp.target_dtype() == F16
    amp.init("bfloat16")  # MXNet: a second init does nothing
    assert amp.target_dtype() == F16
    amp_mod._uninit()
    assert nd.FullyConnected is fc and not amp.is_initialized()
    y = nd.FullyConnected(nd.ones((1, 2)), nd.ones((1, 2)), no_bias=True, num_hidden=1)
    assert y.dtype == F32


def test_init_errors():
    amp_mod._uninit()
    with pytest.raises(ValueError, match="init: target_dtype"):
        amp.init("int8")
    with pytest.raises(ValueError, match="two lists"):
        amp.init("float16", target_precision_ops=["dot"], fp32_ops=["dot"])
    with pytest.raises(ValueError, match="no function 'no_such_op'"):
        amp.init("float16", target_precision_ops=["no_such_op"])
    assert not amp.is_initialized()
    assert nd.dot(nd.ones((1, 1)), nd.ones((1, 1))).dtype == F32  # rolled back
    net = nn.Dense(1, in_units=1)
    net.initialize()
    t = Trainer(net.collect_params(), "sgd")
    with pytest.raises(RuntimeError, match="amp.init()"):
        amp.init_trainer(t)
    with pytest.raises(RuntimeError, match="init_trainer"), amp.scale_loss(nd.ones(1), t):
        pass


def test_init_trainer_refuses_optimizers(amp_f16):
    from core import optimizer

    with pytest.raises(TypeError, match="only compatible with Gluon Trainer"):
        amp.init_trainer(optimizer.SGD())
    with pytest.raises(TypeError, match="should be a Gluon Trainer"):
        amp.init_trainer(object())


def test_loss_output_grad_scale(amp_f16):
    x = nd.array([[1.0, 2.0, 3.0]])
    x.attach_grad()
    with autograd.record():
        out = nd.SoftmaxOutput(x, nd.array([0.0]))
    out.backward()
    p = np.exp([1.0, 2.0, 3.0]) / np.exp([1.0, 2.0, 3.0]).sum()
    expect = (p - [1, 0, 0]) * amp_mod._state["scaler"].loss_scale
    np.testing.assert_allclose(x.grad.asnumpy()[0], expect, rtol=1e-5)


# ------------------------------------------------------------------ loss scaler
def test_loss_scaler_halves_and_grows():
    s = LossScaler(init_scale=16.0, scale_window=3, max_scale=32.0)
    assert s.update(True) and s.loss_scale == 8.0
    for _ in range(2):
        assert not s.update(False)
    assert s.loss_scale == 8.0
    s.update(False)
    assert s.loss_scale == 16.0
    for _ in range(9):
        s.update(False)
    assert s.loss_scale == 32.0  # capped
    assert s.skipped_steps == 1
    with pytest.raises(ValueError, match="scale_factor > 1"):
        LossScaler(scale_factor=1.0)


def _mlp(ctx=None, hybridize=False):
    net = nn.HybridSequential()
    net.add(nn.Dense(16, activation="relu", in_units=4), nn.Dense(3, in_units=16))
    net.initialize(ctx=ctx)
    if hybridize:
        net.hybridize()
    return net


def _amp_step(net, trainer, x, y, loss_fn):
    with autograd.record():
        out = net(x)
        loss = loss_fn(out, y)
        with amp.scale_loss(loss, trainer) as scaled:
            autograd.backward(scaled)
    trainer.step(x.shape[0])
    return out, loss


def _weights(net):
    return [p.data().asnumpy().copy() for p in net.collect_params().values()]


def test_overflow_skips_step_and_halves_scale(amp_on):
    net = _mlp()
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    amp.init_trainer(trainer, LossScaler(init_scale=2.0 ** 130))  # inf even in float32
    x, y = nd.ones((8, 4)), nd.zeros((8,))
    before = _weights(net)
    _amp_step(net, trainer, x, y, gloss.SoftmaxCrossEntropyLoss())
    for a, b in zip(before, _weights(net)):
        np.testing.assert_array_equal(a, b)
    assert trainer._amp_loss_scaler.loss_scale == 2.0 ** 129
    assert trainer._amp_loss_scaler.skipped_steps == 1


def test_injected_inf_is_detected(amp_f16):
    net = _mlp()
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    amp.init_trainer(trainer, LossScaler(init_scale=4.0))
    x = nd.ones((2, 4))
    with autograd.record():
        loss = gloss.L2Loss()(net(x), nd.zeros((2, 3)))
        with amp.scale_loss(loss, trainer) as s:
            autograd.backward(s)
    params = list(net.collect_params().values())
    assert grads_finite(params)
    params[0].grad()[0, 0] = float("nan")
    assert not grads_finite(params)
    before = _weights(net)
    trainer.step(2)
    for a, b in zip(before, _weights(net)):
        np.testing.assert_array_equal(a, b)
    assert trainer._amp_loss_scaler.loss_scale == 2.0


def test_scale_grows_after_scale_window_clean_steps(amp_f16):
    net = _mlp()
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    amp.init_trainer(trainer, LossScaler(init_scale=4.0, scale_window=3))
    x, y = nd.ones((4, 4)), nd.zeros((4,))
    loss_fn = gloss.SoftmaxCrossEntropyLoss()
    for i in range(3):
        before = _weights(net)
        _amp_step(net, trainer, x, y, loss_fn)
        assert any((a != b).any() for a, b in zip(before, _weights(net)))
        assert trainer._amp_loss_scaler.loss_scale == (4.0 if i < 2 else 8.0)


def test_scaled_step_equals_unscaled_step():
    """Pure loss scaling (empty op lists): the update equals a plain fp32 step."""
    amp_mod._uninit()
    amp.init("float16", target_precision_ops=[], fp32_ops=[], conditional_fp32_ops=[])
    try:
        x = nd.array(np.random.RandomState(0).rand(6, 4))
        y = nd.array([0, 1, 2, 0, 1, 2])
        loss_fn = gloss.SoftmaxCrossEntropyLoss()
        nets = [_mlp(), _mlp()]
        for p, q in zip(nets[0].collect_params().values(), nets[1].collect_params().values()):
            q.set_data(p.data())
        ta, tb = (Trainer(n.collect_params(), "sgd", {"learning_rate": 0.5}) for n in nets)
        amp.init_trainer(ta, LossScaler(init_scale=1024.0))
        _amp_step(nets[0], ta, x, y, loss_fn)
        with autograd.record():
            loss = loss_fn(nets[1](x), y)
        loss.backward()
        tb.step(6)
        for a, b in zip(_weights(nets[0]), _weights(nets[1])):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    finally:
        amp_mod._uninit()


def test_unscale(amp_f16):
    net = nn.Dense(1, in_units=2, use_bias=False)
    net.initialize()
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 1.0})
    amp.init_trainer(trainer, LossScaler(init_scale=8.0))
    with autograd.record():
        loss = nd.sum(net(nd.ones((1, 2))))
        with amp.scale_loss(loss, trainer) as scaled:
            scaled.backward()
    np.testing.assert_allclose(net.weight.grad().asnumpy(), 8.0)
    amp.unscale(trainer)
    np.testing.assert_allclose(net.weight.grad().asnumpy(), 1.0)
    assert trainer._scale == 1.0
    w = net.weight.data().asnumpy().copy()
    trainer.step(1)
    np.testing.assert_allclose(net.weight.data().asnumpy(), w - 1.0, rtol=1e-6)


def test_scale_loss_list(amp_f16):
    net = nn.Dense(1, in_units=1)
    net.initialize()
    trainer = Trainer(net.collect_params(), "sgd")
    amp.init_trainer(trainer, LossScaler(init_scale=4.0))
    with amp.scale_loss([nd.ones(1), nd.ones(1) * 2], trainer) as scaled:
        assert [float(s.asscalar()) for s in scaled] == [4.0, 8.0]
    assert trainer._scale == pytest.approx(trainer._amp_original_scale / 4.0)


def _blobs(n=240, seed=0):
    rs = np.random.RandomState(seed)
    centers = np.array([[2, 0, 0, 0], [0, 2, 0, 0], [0, 0, 2, 0]], dtype=np.float32)
    y = rs.randint(0, 3, n)
    x = centers[y] + 0.5 * rs.randn(n, 4).astype(np.float32)
    return nd.array(x), nd.array(y.astype(np.float32))


@pytest.mark.parametrize("hybridize", [False, True])
def test_training_converges(amp_on, hybridize):
    x, y = _blobs()
    net = _mlp(hybridize=hybridize)
    trainer = Trainer(net.collect_params(), "adam", {"learning_rate": 0.02})
    amp.init_trainer(trainer)  # init's scaler: 2**16 to start, as MXNet's
    loss_fn = gloss.SoftmaxCrossEntropyLoss()
    first = None
    for epoch in range(6):
        for i in range(0, 240, 40):
            out, loss = _amp_step(net, trainer, x[i:i + 40], y[i:i + 40], loss_fn)
            assert out.dtype == amp_on and loss.dtype == F32  # the loss runs in float32
            first = first if first is not None else float(loss.mean().asscalar())
    pred = net(x).astype("float32").argmax(axis=1).asnumpy()
    acc = (pred == y.asnumpy()).mean()
    assert acc > 0.9, acc
    assert float(loss.mean().asscalar()) < first / 3
    assert all(p.data().dtype == F32 for p in net.collect_params().values())


@pytest.mark.parametrize("hybridize", [False, True])
def test_conv_net_step(amp_on, hybridize):
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, in_channels=1), nn.BatchNorm(in_channels=4),
            nn.Activation("relu"), nn.MaxPool2D(), nn.Flatten(), nn.Dense(3, in_units=36))
    net.initialize()
    if hybridize:
        net.hybridize()
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    amp.init_trainer(trainer, LossScaler(init_scale=1024.0))  # 2**16 overflows float16 here
    x = nd.array(np.random.RandomState(0).rand(4, 1, 8, 8))
    y = nd.array([0.0, 1.0, 2.0, 0.0])
    before = _weights(net)
    for _ in range(2):
        out, loss = _amp_step(net, trainer, x, y, gloss.SoftmaxCrossEntropyLoss())
    assert out.dtype == amp_on and net[0](x).dtype == amp_on and loss.dtype == F32
    assert trainer._amp_loss_scaler.skipped_steps == 0
    assert all((a != b).any() for a, b in zip(before, _weights(net)) if a.ndim > 1)
    assert all(p.data().dtype == F32 for p in net.collect_params().values())


@pytest.mark.parametrize("store", [(None, None), ("device", True), ("device", False)])
def test_overflow_skip_over_two_contexts(amp_f16, store):
    ctxs = [cpu(0), cpu(1)]
    net = _mlp(ctx=ctxs)
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1}, kvstore=store[0],
                      update_on_kvstore=store[1])
    amp.init_trainer(trainer, LossScaler(init_scale=2.0 ** 130))
    before = _weights(net)
    loss_fn = gloss.SoftmaxCrossEntropyLoss()
    with autograd.record():
        losses = [loss_fn(net(nd.ones((2, 4), ctx=c)), nd.zeros((2,), ctx=c)) for c in ctxs]
        with amp.scale_loss(losses, trainer) as scaled:
            autograd.backward(scaled)
    trainer.step(4)
    for a, b in zip(before, _weights(net)):
        np.testing.assert_array_equal(a, b)
    assert trainer._amp_loss_scaler.loss_scale == 2.0 ** 129


def test_mxnet_names():
    from gluon.compat import mxnet as alias

    was = alias.is_installed()
    alias.install()
    try:
        import mxnet as mx
        from mxnet.contrib import amp as contrib
        from mxnet.contrib.amp import amp as contrib_amp
        from mxnet.contrib.amp.amp import bfloat16 as bf16

        assert contrib_amp.init is amp.init and contrib_amp.scale_loss is amp.scale_loss
        assert contrib.init_trainer is amp.init_trainer and bf16 == bfloat16
        assert mx.amp.init is amp.init and mx.contrib.amp.scale_loss is amp.scale_loss
        assert mx.amp.list_lp16_ops("float16") == amp.list_lp16_ops("float16")
    finally:
        if not was:
            alias.uninstall()


_INIT_CALLS = """
x = ND.ones((2, 3)); w = ND.ones((4, 3)); b = ND.zeros((4,))
fc = ND.FullyConnected(x, w, b, num_hidden=4)
img = ND.ones((1, 1, 4, 4)); k = ND.ones((2, 1, 3, 3))
res = {
    "fc": fc, "softmax": ND.softmax(fc), "relu": ND.relu(fc),
    "act_softrelu": ND.Activation(fc, act_type="softrelu"),
    "act_relu": ND.Activation(fc, act_type="relu"),
    "bcast_add_mixed": ND.broadcast_add(fc, ND.ones((2, 4))), "concat": ND.Concat(fc, fc, dim=1),
    "conv": ND.Convolution(img, k, no_bias=True, kernel=(3, 3), num_filter=2),
    "exp": ND.exp(fc), "flatten": ND.Flatten(fc), "sum": ND.sum(fc),
    "bn": ND.BatchNorm(fc, ND.ones(4), ND.zeros(4), ND.zeros(4), ND.ones(4)),
    "dot": ND.dot(fc, ND.ones((4, 2))),
}
"""


@requires_mxnet
def test_init_dtypes_match_mxnet_bfloat16():
    """After amp.init('bfloat16'), each call's output dtype is MXNet 1.9.1's (on CPU)."""
    code = ("import json, numpy as np, mxnet as mx\nfrom mxnet.contrib import amp\n"
            "amp.init('bfloat16')\nND = mx.nd\n" + _INIT_CALLS
            + "print(json.dumps({k: 'bfloat16' if v.dtype == amp.amp.bfloat16 else "
              "np.dtype(v.dtype).name for k, v in res.items()}))")
    theirs = json.loads(run_mxnet(code))
    amp_mod._uninit()
    amp.init("bfloat16")
    try:
        ns = {"ND": nd}
        exec(_INIT_CALLS, ns)  # noqa: S102 - our own test source
        ours = {k: str(v.dtype) for k, v in ns["res"].items()}
    finally:
        amp_mod._uninit()
    assert ours == theirs
