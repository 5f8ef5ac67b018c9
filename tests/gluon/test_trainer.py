"""gluon.Trainer: updates against NumPy, multi-context training, stale gradients, states."""
import numpy as np
import pytest

import gluon
from core import autograd, cpu, initializer, nd, optimizer
from gluon import HybridBlock, HybridSequential, Parameter, Trainer
from gluon.trainer import StaleGradientError
from gluon.utils import clip_global_norm, split_and_load

CTX2 = [cpu(0), cpu(1)]


class Dense(HybridBlock):
    """A dense layer on nd.FullyConnected (gluon.nn is written elsewhere)."""

    def __init__(self, units, in_units, activation=None, dtype="float64", **kwargs):
        super().__init__(**kwargs)
        self._units, self._act = units, activation
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(units, in_units), dtype=dtype)
            self.bias = self.params.get("bias", shape=(units,), dtype=dtype,
                                        init=initializer.Normal(0.5))

    def hybrid_forward(self, F, x, weight, bias):
        y = F.FullyConnected(x, weight, bias, num_hidden=self._units)
        return F.tanh(y) if self._act == "tanh" else y


def _mlp(ctx, seed=0):
    net = HybridSequential(prefix="mlp_")
    with net.name_scope():
        net.add(Dense(5, 3, activation="tanh"), Dense(2, 5))
    net.initialize(initializer.Normal(0.5), ctx=ctx)
    rng = np.random.default_rng(seed)
    for p in net.collect_params().values():
        p.set_data(nd.array(rng.standard_normal(p.shape), dtype="float64"))
    return net


def _data(n=8, seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 3)), rng.standard_normal((n, 2))


def _train_step(net, trainer, x, y, ctx):
    xs, ys = split_and_load(nd.array(x, dtype="float64"), ctx), \
        split_and_load(nd.array(y, dtype="float64"), ctx)
    with autograd.record():
        losses = [((net(a) - b) ** 2).sum() / 2 for a, b in zip(xs, ys)]
    autograd.backward(losses)
    trainer.step(x.shape[0])


def _params_np(net, ctx=None):
    return {k[len(net.prefix):]: (p.data(ctx) if ctx else p.data()).asnumpy()
            for k, p in net.collect_params().items()}


# ---------------------------------------------------------------------- NumPy references

def _linear_grads(w, b, x, y):
    """Gradients of sum((x w^T + b - y)^2) / 2."""
    r = x @ w.T + b - y
    return r.T @ x, r.sum(0)


def _one_layer():
    layer = Dense(2, 3, prefix="lin_")
    layer.initialize(ctx=cpu(0))
    rng = np.random.default_rng(3)
    w0, b0 = rng.standard_normal((2, 3)), rng.standard_normal(2)
    layer.weight.set_data(nd.array(w0, dtype="float64"))
    layer.bias.set_data(nd.array(b0, dtype="float64"))
    return layer, w0, b0


def test_sgd_momentum_wd_two_steps_match_numpy():
    layer, w, b = _one_layer()
    trainer = Trainer(layer.collect_params(), "sgd",
                      {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01})
    x, y = _data(4)
    mw, mb = np.zeros_like(w), np.zeros_like(b)
    for _ in range(2):
        _train_step(layer, trainer, x, y, [cpu(0)])
        gw, gb = _linear_grads(w, b, x, y)
        mw = 0.9 * mw - 0.1 * (gw / 4 + 0.01 * w)
        mb = 0.9 * mb - 0.1 * (gb / 4 + 0.01 * b)
        w, b = w + mw, b + mb
    np.testing.assert_allclose(layer.weight.data().asnumpy(), w, rtol=1e-12)
    np.testing.assert_allclose(layer.bias.data().asnumpy(), b, rtol=1e-12)


def test_adam_two_steps_match_numpy():
    layer, w, b = _one_layer()
    trainer = Trainer(layer.collect_params(), "adam", {"learning_rate": 0.05, "wd": 0.001})
    x, y = _data(4)
    b1, b2, eps = 0.9, 0.999, 1e-8
    state = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in (("w", w), ("b", b))}
    for t in (1, 2):
        _train_step(layer, trainer, x, y, [cpu(0)])
        gw, gb = _linear_grads(w, b, x, y)
        new = {}
        for k, p, g in (("w", w, gw), ("b", b, gb)):
            m, v = state[k]
            d = g / 4 + 0.001 * p
            m, v = b1 * m + (1 - b1) * d, b2 * v + (1 - b2) * d * d
            lr = 0.05 * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
            new[k] = p - lr * m / (np.sqrt(v) + eps)
            state[k] = (m, v)
        w, b = new["w"], new["b"]
    np.testing.assert_allclose(layer.weight.data().asnumpy(), w, rtol=1e-12)
    np.testing.assert_allclose(layer.bias.data().asnumpy(), b, rtol=1e-12)


# ---------------------------------------------------------------------- several contexts

@pytest.mark.multi_device
@pytest.mark.parametrize("opt, opt_params, kvstore, on_kv", [
    ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}, "device", None),
    ("adam", {"learning_rate": 0.02, "wd": 0.001}, "local", False),
    ("adam", {"learning_rate": 0.02}, "device", True),
    ("sgd", {"learning_rate": 0.1, "momentum": 0.5}, None, None),
])
def test_two_contexts_equal_one_context(opt, opt_params, kvstore, on_kv):
    ref, net = _mlp(cpu(0)), _mlp(CTX2)
    t_ref = Trainer(ref.collect_params(), opt, dict(opt_params))
    t2 = Trainer(net.collect_params(), opt, dict(opt_params), kvstore=kvstore,
                 update_on_kvstore=on_kv)
    for step in range(3):
        x, y = _data(8, seed=10 + step)
        _train_step(ref, t_ref, x, y, [cpu(0)])
        _train_step(net, t2, x, y, CTX2)
    assert t_ref._kvstore is None
    assert (t2._kvstore is None) == (kvstore is None)
    want, got0, got1 = _params_np(ref), _params_np(net, cpu(0)), _params_np(net, cpu(1))
    for k in want:
        np.testing.assert_allclose(got0[k], want[k], rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(got0[k], got1[k])  # replicas identical


@pytest.mark.multi_device
def test_allreduce_clip_update_path():
    net = _mlp(CTX2)
    ref = _mlp(cpu(0))
    params = list(net.collect_params().values())
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5},
                      update_on_kvstore=False)
    x, y = _data(8)
    xs = split_and_load(nd.array(x, dtype="float64"), CTX2)
    ys = split_and_load(nd.array(y, dtype="float64"), CTX2)
    with autograd.record():
        losses = [((net(a) - b) ** 2).sum() / 2 for a, b in zip(xs, ys)]
    autograd.backward(losses)
    trainer.allreduce_grads()
    norms = [clip_global_norm([p.grad(c) for p in params], 1.0) for c in CTX2]
    assert norms[0] == norms[1] > 1.0
    trainer.update(8)

    # reference: full-batch gradients on one context, clipped, SGD
    with autograd.record():
        loss = ((ref(nd.array(x, dtype="float64")) - nd.array(y, dtype="float64")) ** 2) \
            .sum() / 2
    loss.backward()
    rparams = list(ref.collect_params().values())
    grads = [p.grad().asnumpy() for p in rparams]
    norm = np.sqrt(sum((g * g).sum() for g in grads))
    np.testing.assert_allclose(norms[0], norm, rtol=1e-12)
    scale = min(1.0 / (norm + 1e-8), 1.0)
    for p, rp, g in zip(params, rparams, grads):
        want = rp.data().asnumpy() - 0.5 * g * scale / 8
        np.testing.assert_allclose(p.data(cpu(0)).asnumpy(), want, rtol=1e-12)
        np.testing.assert_array_equal(p.data(cpu(0)).asnumpy(), p.data(cpu(1)).asnumpy())


@pytest.mark.multi_device
def test_update_on_kvstore_forbids_split_calls_and_follows_set_data():
    net = _mlp(CTX2)
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1},
                      update_on_kvstore=True)
    x, y = _data(4)
    _train_step(net, trainer, x, y, CTX2)
    assert trainer._update_on_kvstore is True
    with pytest.raises(RuntimeError, match="update_on_kvstore"):
        trainer.allreduce_grads()
    with pytest.raises(RuntimeError, match="update_on_kvstore"):
        trainer.update(4)
    # set_data while the store holds the weights: the store takes the new value
    p = net[1].bias
    p.set_data(nd.array([10.0, 20.0], dtype="float64"))
    with autograd.record():
        losses = [net(a).sum() * 0 for a in split_and_load(nd.array(x, dtype="float64"),
                                                           CTX2)]
    autograd.backward(losses)
    trainer.step(4)
    for c in CTX2:
        np.testing.assert_allclose(p.data(c).asnumpy(), [10.0, 20.0])


@pytest.mark.multi_device
def test_compression_params():
    net = _mlp(CTX2)
    x, y = _data(4)
    trainer = Trainer(net.collect_params(), "sgd", compression_params={"type": "2bit"})
    with pytest.raises(NotImplementedError, match="2bit"):
        _train_step(net, trainer, x, y, CTX2)
    trainer = Trainer(net.collect_params(), "sgd", compression_params={"type": "none"})
    _train_step(net, trainer, x, y, CTX2)


# ---------------------------------------------------------------------- stale gradients

def test_stale_gradient_error_and_ignore():
    a = Parameter("a_weight", shape=(2,), init="ones", dtype="float64")
    b = Parameter("b_weight", shape=(2,), init="ones", dtype="float64")
    for p in (a, b):
        p.initialize()
    trainer = Trainer([a, b], "sgd", {"learning_rate": 1.0})
    with autograd.record():
        loss = (a.data() * 3).sum()
    loss.backward()
    with pytest.raises(StaleGradientError, match=r"`b_weight` on context cpu\(0\).*"
                                                 r"ignore_stale_grad=True"):
        trainer.step(1)
    assert issubclass(StaleGradientError, UserWarning)
    assert a.data().asnumpy().tolist() == [1.0, 1.0]  # nothing changed
    trainer.step(1, ignore_stale_grad=True)
    assert a.data().asnumpy().tolist() == [-2.0, -2.0]
    assert b.data().asnumpy().tolist() == [1.0, 1.0]
    with pytest.raises(UserWarning, match="a_weight"):  # consumed by the last step
        trainer.step(1)
    trainer.step(1, ignore_stale_grad=True)  # nothing fresh: nothing moves
    assert a.data().asnumpy().tolist() == [-2.0, -2.0]


@pytest.mark.multi_device
def test_stale_replica_adds_nothing():
    w = Parameter("w", shape=(2,), init="zeros", dtype="float64")
    w.initialize(ctx=CTX2)
    trainer = Trainer([w], "sgd", {"learning_rate": 1.0})
    with autograd.record():
        loss = (w.data(cpu(0)) * nd.array([1.0, 2.0], dtype="float64")).sum()
    loss.backward()
    with pytest.raises(StaleGradientError, match=r"cpu\(1\)"):
        trainer.step(1)
    trainer.step(1, ignore_stale_grad=True)
    for c in CTX2:
        assert w.data(c).asnumpy().tolist() == [-1.0, -2.0]


def test_grad_req_null_and_shared_params():
    a = Parameter("a", shape=(2,), init="ones")
    c = Parameter("c", shape=(2,), init="ones", grad_req="null")
    a.initialize()
    c.initialize()
    trainer = Trainer([a, c, a], "sgd", {"learning_rate": 1.0})
    assert len(trainer._params) == 2
    with autograd.record():
        loss = (a.data() * c.data()).sum()
    loss.backward()
    trainer.step(1)
    assert a.data().asnumpy().tolist() == [0.0, 0.0]
    assert c.data().asnumpy().tolist() == [1.0, 1.0]


# ---------------------------------------------------------------------- states and API

@pytest.mark.multi_device
@pytest.mark.parametrize("ctx, on_kv", [([cpu(0)], None), (CTX2, False), (CTX2, True)])
def test_save_load_states_round_trip(tmp_path, ctx, on_kv):
    x, y = _data(4)
    net = _mlp(ctx)
    trainer = Trainer(net.collect_params(), "adam", {"learning_rate": 0.01},
                      update_on_kvstore=on_kv)
    for _ in range(2):
        _train_step(net, trainer, x, y, ctx)
    fname = str(tmp_path / "trainer.states")
    trainer.save_states(fname)
    with open(fname, "rb") as f:
        assert f.read(4) == b"PK\x03\x04"
    assert not [p for p in tmp_path.iterdir() if p.name != "trainer.states"]

    net2 = _mlp(ctx)
    for (_, p), (_, q) in zip(net.collect_params().items(), net2.collect_params().items()):
        q.set_data(p.data(ctx[0]))
    trainer2 = Trainer(net2.collect_params(), "adam", {"learning_rate": 0.5},
                       update_on_kvstore=on_kv)
    trainer2.load_states(fname)
    assert trainer2.learning_rate == 0.01
    assert trainer2.optimizer.param_dict[0] is trainer2._params[0]
    _train_step(net, trainer, x, y, ctx)
    _train_step(net2, trainer2, x, y, ctx)
    for c in ctx:
        a, b = _params_np(net, c), _params_np(net2, c)
        for k in a:
            np.testing.assert_array_equal(a[k], b[k])


def test_load_states_refuses_other_files(tmp_path):
    w = Parameter("w", shape=(2,))
    w.initialize()
    trainer = Trainer([w], "sgd")
    bad = tmp_path / "pickled.states"
    bad.write_bytes(b"\x80\x04\x95not optimizer states")
    with pytest.raises(ValueError, match="not optimizer states"):
        trainer.load_states(str(bad))


def test_learning_rate_and_arguments():
    w = Parameter("w", shape=(2,))
    w.initialize()
    sgd = optimizer.SGD(learning_rate=0.3)
    trainer = Trainer({"w": w}, sgd)
    assert trainer.optimizer is sgd and trainer.learning_rate == 0.3
    trainer.set_learning_rate(0.2)
    assert sgd.learning_rate == 0.2
    assert gluon.Trainer is Trainer
    with pytest.raises(ValueError, match="optimizer_params must be None"):
        Trainer([w], sgd, {"learning_rate": 0.1})
    with pytest.raises(ValueError, match="list or dict of Parameters"):
        Trainer(w, "sgd")
    with pytest.raises(ValueError, match="list or dict of Parameters"):
        Trainer([w, 3], "sgd")
    with pytest.raises(TypeError, match="kvstore"):
        Trainer([w], "sgd", kvstore=3)
    v = Parameter("v", shape=(2,))
    v.initialize(ctx=CTX2)
    with pytest.raises(ValueError, match="same set of contexts"):
        Trainer([w, v], "sgd")
    sched = Trainer([w], "sgd", {"lr_scheduler": optimizer.lr_scheduler.FactorScheduler(
        step=1, factor=0.5, base_lr=1.0)})
    with pytest.raises(UserWarning, match="LRScheduler"):
        sched.set_learning_rate(0.1)


def test_deferred_parameters():
    layer = Dense(2, 3)
    layer.weight.shape = (2, 0)
    layer.weight._allow_deferred_init = True
    layer.initialize()
    trainer = Trainer(layer.collect_params(), "sgd", {"learning_rate": 0.1})
    x = nd.ones((1, 3), dtype="float64")
    layer.weight.shape = (2, 3)
    layer.weight._finish_deferred_init()
    with autograd.record():
        loss = layer(x).sum()
    loss.backward()
    before = layer.weight.data().asnumpy()
    trainer.step(1)
    np.testing.assert_allclose(layer.weight.data().asnumpy(), before - 0.1)


# ---------------------------------------------------------------------- forward_backward

def _fb_step(net, trainer, x, y, overlap=True):
    """Trainer.forward_backward (replicas on engine workers, overlapped all-reduce)."""
    losses = trainer.forward_backward(lambda a, b: ((net(a) - b) ** 2).sum() / 2,
                                      nd.array(x, dtype="float64"),
                                      nd.array(y, dtype="float64"), overlap=overlap)
    trainer.step(x.shape[0])
    return losses


@pytest.mark.multi_device
@pytest.mark.parametrize("opt, opt_params, kvstore, on_kv, overlap", [
    ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}, "device", None, True),
    ("adam", {"learning_rate": 0.02}, None, None, False),
    ("adam", {"learning_rate": 0.02}, "device", True, True),
])
def test_forward_backward_equals_sequential_step(opt, opt_params, kvstore, on_kv, overlap):
    seq, net, ref = _mlp(CTX2), _mlp(CTX2), _mlp(cpu(0))
    t_seq, t_fb, t_ref = (Trainer(n.collect_params(), opt, dict(opt_params),
                                  kvstore=kvstore, update_on_kvstore=on_kv)
                          for n in (seq, net, ref))
    for step in range(3):
        x, y = _data(8, seed=10 + step)
        _train_step(seq, t_seq, x, y, CTX2)
        losses = _fb_step(net, t_fb, x, y, overlap)
        _train_step(ref, t_ref, x, y, [cpu(0)])
        assert [loss.context for loss in losses] == CTX2
    want = _params_np(ref)
    for c in CTX2:  # bitwise the sequential path; the one-context run up to rounding
        got, seq_c = _params_np(net, c), _params_np(seq, c)
        for k in want:
            np.testing.assert_array_equal(got[k], seq_c[k])
            np.testing.assert_allclose(got[k], want[k], rtol=1e-10, atol=1e-12)


@pytest.mark.multi_device
def test_forward_backward_then_allreduce_clip_update_sums_once():
    net, seq = _mlp(CTX2), _mlp(CTX2)
    t_fb, t_seq = (Trainer(n.collect_params(), "sgd", {"learning_rate": 0.5},
                           update_on_kvstore=False)
                   for n in (net, seq))
    x, y = _data(8)
    t_fb.forward_backward(lambda a, b: ((net(a) - b) ** 2).sum() / 2,
                          nd.array(x, dtype="float64"), nd.array(y, dtype="float64"))
    t_fb.allreduce_grads()  # summed already: nothing more is added
    xs = split_and_load(nd.array(x, dtype="float64"), CTX2)
    ys = split_and_load(nd.array(y, dtype="float64"), CTX2)
    with autograd.record():
        losses = [((seq(a) - b) ** 2).sum() / 2 for a, b in zip(xs, ys)]
    autograd.backward(losses)
    t_seq.allreduce_grads()
    for p, q in zip(net.collect_params().values(), seq.collect_params().values()):
        for c in CTX2:
            np.testing.assert_array_equal(p.grad(c).asnumpy(), q.grad(c).asnumpy())
    params = list(net.collect_params().values())
    clip_global_norm([p.grad(cpu(0)) for p in params], 1.0)
    t_fb.update(8)
    with pytest.raises(StaleGradientError):
        t_fb.step(8)  # nothing new since the update


@pytest.mark.multi_device
def test_forward_backward_stale_replica_and_deferred_init():
    w = Parameter("w", shape=(2,), init="zeros", dtype="float64")
    w.initialize(ctx=CTX2)
    trainer = Trainer([w], "sgd", {"learning_rate": 1.0})
    x = nd.array([[1.0, 2.0], [5.0, 5.0]], dtype="float64")

    def fn(a):  # w is used on cpu(0) only
        return (w.data(a.context) * a).sum() if a.context == cpu(0) else a.sum()

    trainer.forward_backward(fn, x)
    with pytest.raises(StaleGradientError, match=r"cpu\(1\)"):
        trainer.step(1)
    trainer.forward_backward(fn, x)
    trainer.step(1, ignore_stale_grad=True)
    for c in CTX2:  # cpu(1)'s stale gradient added nothing to the sum
        assert w.data(c).asnumpy().tolist() == [-1.0, -2.0]

    layer = Dense(2, 3)
    layer.weight.shape = (2, 0)
    layer.weight._allow_deferred_init = True
    layer.initialize(ctx=CTX2)
    t = Trainer(layer.collect_params(), "sgd", {"learning_rate": 0.1})
    losses = t.forward_backward(lambda a: layer(a).sum(), nd.ones((4, 3), dtype="float64"))
    t.step(4)
    assert layer.weight.shape == (2, 3) and len(losses) == 2
    np.testing.assert_array_equal(layer.weight.data(cpu(0)).asnumpy(),
                                  layer.weight.data(cpu(1)).asnumpy())


@pytest.mark.multi_device
def test_forward_backward_hybridized_equals_sequential():
    """A hybridized net's cached graphs deliver gradients early: the same sums."""
    seq, net = _mlp(CTX2), _mlp(CTX2)
    seq.hybridize()
    net.hybridize()
    t_seq, t_fb = (Trainer(n.collect_params(), "sgd", {"learning_rate": 0.1,
                                                       "momentum": 0.9})
                   for n in (seq, net))
    for step in range(2):
        x, y = _data(8, seed=30 + step)
        _train_step(seq, t_seq, x, y, CTX2)
        _fb_step(net, t_fb, x, y)
    for c in CTX2:
        got, want = _params_np(net, c), _params_np(seq, c)
        for k in want:
            np.testing.assert_array_equal(got[k], want[k])


# ---------------------------------------------------------------- MXNet 1.9.1's kvstore choice
def _two_ctx_trainer(**kwargs):
    w = Parameter("w", shape=(3,), init="zeros")
    w.initialize(ctx=CTX2)
    trainer = Trainer([w], "sgd", {"learning_rate": 0.1}, **kwargs)
    trainer._init_kvstore()
    return trainer


@pytest.mark.multi_device
def test_update_on_kvstore_default_is_mxnets(monkeypatch):
    monkeypatch.delenv("MXNET_UPDATE_ON_KVSTORE", raising=False)
    assert _two_ctx_trainer()._update_on_kvstore is True
    assert _two_ctx_trainer(kvstore="local")._update_on_kvstore is True
    assert _two_ctx_trainer(update_on_kvstore=False)._update_on_kvstore is False
    monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", "0")
    assert _two_ctx_trainer()._update_on_kvstore is False
    assert _two_ctx_trainer(update_on_kvstore=True)._update_on_kvstore is True
    # one context: no store at all
    w = Parameter("w", shape=(3,)); w.initialize()
    t = Trainer([w], "sgd")
    t._init_kvstore()
    assert t._kvstore is None and t._update_on_kvstore is None


@pytest.mark.multi_device
def test_update_on_kvstore_errors_are_mxnets_assertion_errors(monkeypatch):
    from gluon.trainer import UpdateOnKVStoreError
    monkeypatch.delenv("MXNET_UPDATE_ON_KVSTORE", raising=False)
    trainer = _two_ctx_trainer()
    for call in (trainer.allreduce_grads, lambda: trainer.update(1)):
        with pytest.raises(AssertionError, match="update_on_kvstore"):
            call()
        with pytest.raises(UpdateOnKVStoreError):
            call()


@pytest.mark.multi_device
def test_save_load_states_on_kvstore_keeps_param_dict(tmp_path, monkeypatch):
    # MXNet's test_trainer_save_load: the store's optimizer sees later lr_mult changes
    monkeypatch.delenv("MXNET_UPDATE_ON_KVSTORE", raising=False)
    x = Parameter("x", shape=(10,), lr_mult=1.0)
    x.initialize(ctx=CTX2, init="zeros")
    trainer = Trainer([x], "sgd", {"learning_rate": 0.1})
    with autograd.record():
        for w in x.list_data():
            (w + 1).backward()
    trainer.step(1)
    assert trainer._kvstore._updater.optimizer._get_lr(0) == pytest.approx(0.1)
    path = str(tmp_path / "t.states")
    trainer.save_states(path)
    trainer.load_states(path)
    x.lr_mult = 2.0
    assert trainer._kvstore._updater.optimizer._get_lr(0) == pytest.approx(0.2)
    np.testing.assert_allclose(x.data(cpu(1)).asnumpy(), -0.2 * np.ones(10), rtol=1e-6)
