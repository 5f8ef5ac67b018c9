"""Optimizers against hand-written NumPy references, multi-precision, state save/load.

Every reference below is the optimizer's rule written out plainly in float64, applied
for two steps with weight decay, gradient rescaling and clipping, and per-weight
learning-rate and weight-decay multipliers.
"""
import io
import json
import pickle
import warnings

import numpy as np
import pytest

import core
from core import nd, optimizer
from core import optimizer as opt_mod
from core.optimizer import lr_scheduler

LR, WD, RS, CLIP = 0.1, 0.05, 0.5, 0.6
LR_MULT, WD_MULT = 0.5, 2.0
LR_E, WD_E = LR * LR_MULT, WD * WD_MULT  # what index 0 gets
SHAPE = (3, 4)


def _clip(x, c=CLIP):
    return np.clip(x, -c, c)


def _data(seed=0, steps=2):
    rng = np.random.default_rng(seed)
    w = rng.normal(0, 1, SHAPE).astype(np.float32)
    grads = [rng.normal(0, 1.5, SHAPE).astype(np.float32) for _ in range(steps)]
    return w, grads


# ---------------------------------------------------------------------- references (float64)

def ref_sgd(w, gs, momentum=0.0):
    mom = np.zeros_like(w)
    for g in gs:
        d = _clip(RS * g) + WD_E * w
        if momentum:
            mom = momentum * mom - LR_E * d
            w = w + mom
        else:
            w = w - LR_E * d
    return w, ([mom] if momentum else [])


def ref_nag(w, gs, momentum):
    mom = np.zeros_like(w)
    for g in gs:
        d = _clip(RS * g) + WD_E * w
        mom = momentum * mom - LR_E * d
        w = w + momentum * mom - LR_E * d
    return w, [mom]


def ref_signum(w, gs, momentum, wd_lh):
    mom = np.zeros_like(w)
    for g in gs:
        mom = momentum * mom - (1 - momentum) * (_clip(RS * g) + WD_E * w)
        w = (1 - LR_E * wd_lh) * w + LR_E * np.sign(mom)
    return w, [mom]


def ref_signsgd(w, gs):
    for g in gs:
        w = (1 - LR_E * WD_E) * w - LR_E * np.sign(g)
    return w, []


def ref_adam(w, gs, b1=0.9, b2=0.999, eps=1e-8):
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(gs, 1):
        d = _clip(RS * g + WD_E * w)
        m = b1 * m + (1 - b1) * d
        v = b2 * v + (1 - b2) * d * d
        w = w - LR_E * np.sqrt(1 - b2 ** t) / (1 - b1 ** t) * m / (np.sqrt(v) + eps)
    return w, [m, v]


def ref_adamw(w, gs, b1=0.9, b2=0.999, eps=1e-6, correct_bias=True):
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(gs, 1):
        d = _clip(RS * g)
        m = b1 * m + (1 - b1) * d
        v = b2 * v + (1 - b2) * d * d
        eta = LR_E * np.sqrt(1 - b2 ** t) / (1 - b1 ** t) if correct_bias else LR_E
        w = w - eta * (m / (np.sqrt(v) + eps) + WD_E * w)
    return w, [m, v]


def ref_adamax(w, gs, b1=0.9, b2=0.999):
    m, u = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(gs, 1):
        d = _clip(RS * g + WD_E * w)
        m = b1 * m + (1 - b1) * d
        u = np.maximum(b2 * u, np.abs(d))
        w = w - LR_E / (1 - b1 ** t) * m / u
    return w, [m, u]


def ref_nadam(w, gs, b1=0.9, b2=0.999, eps=1e-8, sd=0.004):
    m, v = np.zeros_like(w), np.zeros_like(w)
    sched = 1.0
    for t, g in enumerate(gs, 1):
        d = _clip(RS * g + WD_E * w)
        mu_t = b1 * (1 - 0.5 * 0.96 ** (t * sd))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * sd))
        sched = sched * mu_t
        m = b1 * m + (1 - b1) * d
        v = b2 * v + (1 - b2) * d * d
        m_bar = (1 - mu_t) * d / (1 - sched) + mu_next * m / (1 - sched * mu_next)
        w = w - LR_E * m_bar / (np.sqrt(v / (1 - b2 ** t)) + eps)
    return w, [m, v]


def ref_rmsprop(w, gs, g1=0.9, eps=1e-8, clip_weights=None):
    n = np.zeros_like(w)
    for g in gs:
        d = _clip(RS * g + WD_E * w)
        n = (1 - g1) * d * d + g1 * n
        w = w - LR_E * d / np.sqrt(n + eps)
        if clip_weights:
            w = np.clip(w, -clip_weights, clip_weights)
    return w, [n]


def ref_rmsprop_centered(w, gs, g1=0.9, g2=0.9, eps=1e-8):
    n, gb, delta = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for g in gs:
        d = _clip(RS * g + WD_E * w)
        n = (1 - g1) * d * d + g1 * n
        gb = (1 - g1) * d + g1 * gb
        delta = g2 * delta - LR_E * d / np.sqrt(n - gb * gb + eps)
        w = w + delta
    return w, [n, gb, delta]


def ref_adagrad(w, gs, eps=1e-7):
    h = np.zeros_like(w)
    for g in gs:
        d = _clip(RS * g)
        h = h + d * d
        w = w - LR_E * (d / np.sqrt(h + eps) + WD_E * w)
    return w, [h]


def ref_adadelta(w, gs, rho=0.9, eps=1e-5):
    acc_g, acc_d = np.zeros_like(w), np.zeros_like(w)
    for g in gs:
        d = _clip(RS * g)
        acc_g = rho * acc_g + (1 - rho) * d * d
        delta = np.sqrt(acc_d + eps) / np.sqrt(acc_g + eps) * d
        acc_d = rho * acc_d + (1 - rho) * delta * delta
        w = w - delta - WD_E * w  # AdaDelta has no learning rate
    return w, [acc_g, acc_d]


def ref_ftrl(w, gs, lamda1=0.01, beta=1.0):
    z, n = np.zeros_like(w), np.zeros_like(w)
    for g in gs:
        d = _clip(RS * g)
        z = z + d - (np.sqrt(n + d * d) - np.sqrt(n)) * w / LR_E
        n = n + d * d
        w = (np.sign(z) * lamda1 - z) / ((beta + np.sqrt(n)) / LR_E + WD_E) * (np.abs(z) > lamda1)
    return w, [z, n]


def ref_ftml(w, gs, b1=0.6, b2=0.999, eps=1e-8):
    dprev, v, z = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(gs, 1):
        d = _clip(RS * g + WD_E * w)
        v = b2 * v + (1 - b2) * d * d
        d_t = (1 - b1 ** t) / LR_E * (np.sqrt(v / (1 - b2 ** t)) + eps)
        z = b1 * z + (1 - b1) * d - (d_t - b1 * dprev) * w
        dprev = d_t
        w = -z / d_t
    return w, [dprev, v, z]


def ref_lamb(w, gs, b1=0.9, b2=0.999, eps=1e-6, lower=None, upper=None):
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(gs, 1):
        d = _clip(RS * g)
        m = b1 * m + (1 - b1) * d
        v = b2 * v + (1 - b2) * d * d
        upd = (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps) + WD_E * w
        r1 = np.linalg.norm(w)
        if lower:
            r1 = max(r1, lower)
        if upper:
            r1 = min(r1, upper)
        r2 = np.linalg.norm(upd)
        ratio = r1 / r2 if r1 > 0 and r2 > 0 else 1.0
        w = w - LR_E * ratio * upd
    return w, [m, v]


def ref_lars(w, gs, momentum=0.9, eta=0.5, eps=0.0):
    mom = np.zeros_like(w)
    for g in gs:
        wn, gn = np.linalg.norm(w), np.linalg.norm(RS * g)
        lr = LR_E * eta * wn / (gn + WD_E * wn + eps)
        mom = momentum * mom - lr * (_clip(RS * g) + WD_E * w)
        w = w + mom
    return w, [mom]


def ref_dcasgd(w, gs, momentum=0.9, lamda=0.04):
    mom, prev = np.zeros_like(w), w.copy()
    for g in gs:
        d = _clip(RS * g)
        upd = -LR_E * (d + WD_E * w + lamda * d * d * (w - prev))
        mom = momentum * mom + upd
        prev = w
        w = w + mom
    return w, [mom, prev]


def ref_test(w, gs):
    for g in gs:
        w = w + g * RS
    return w, [w]


# (case id, optimizer name, its arguments, reference, reference arguments)
CASES = [
    ("sgd", "sgd", {}, ref_sgd, {}),
    ("sgd_momentum", "sgd", {"momentum": 0.9}, ref_sgd, {"momentum": 0.9}),
    ("ccsgd", "ccSGD", {"momentum": 0.5}, ref_sgd, {"momentum": 0.5}),
    ("nag", "nag", {"momentum": 0.9}, ref_nag, {"momentum": 0.9}),
    ("nag_plain", "nag", {}, ref_sgd, {}),
    ("signum", "signum", {"momentum": 0.8, "wd_lh": 0.1}, ref_signum,
     {"momentum": 0.8, "wd_lh": 0.1}),
    ("signsgd", "signum", {"momentum": 0.0}, ref_signsgd, {}),
    ("adam", "adam", {}, ref_adam, {}),
    ("adam_betas", "Adam", {"beta1": 0.8, "beta2": 0.9, "epsilon": 1e-3}, ref_adam,
     {"b1": 0.8, "b2": 0.9, "eps": 1e-3}),
    ("adamw", "adamw", {}, ref_adamw, {}),
    ("adamw_nobias", "adamw", {"correct_bias": False}, ref_adamw, {"correct_bias": False}),
    ("adamax", "adamax", {}, ref_adamax, {}),
    ("nadam", "nadam", {}, ref_nadam, {}),
    ("rmsprop", "rmsprop", {}, ref_rmsprop, {}),
    ("rmsprop_clipw", "rmsprop", {"clip_weights": 0.3}, ref_rmsprop, {"clip_weights": 0.3}),
    ("rmsprop_centered", "rmsprop", {"centered": True, "gamma2": 0.8}, ref_rmsprop_centered,
     {"g2": 0.8}),
    ("adagrad", "adagrad", {}, ref_adagrad, {}),
    ("adadelta", "adadelta", {}, ref_adadelta, {}),
    ("ftrl", "ftrl", {"lamda1": 0.05}, ref_ftrl, {"lamda1": 0.05}),
    ("ftml", "ftml", {}, ref_ftml, {}),
    ("lamb", "lamb", {}, ref_lamb, {}),
    ("lamb_bounds", "lamb", {"lower_bound": 5.0, "upper_bound": 6.0}, ref_lamb,
     {"lower": 5.0, "upper": 6.0}),
    ("lars", "lars", {"momentum": 0.9, "eta": 0.5}, ref_lars, {}),
    ("dcasgd", "dcasgd", {"momentum": 0.9}, ref_dcasgd, {}),
    ("test", "test", {}, ref_test, {}),
]


def _make(name, kwargs, **extra):
    opt = optimizer.create(name, learning_rate=LR, wd=WD, rescale_grad=RS,
                           clip_gradient=CLIP, **kwargs, **extra)
    opt.set_lr_mult({0: LR_MULT})
    opt.set_wd_mult({0: WD_MULT})
    return opt


def _flat_states(state):
    if state is None:
        return []
    if isinstance(state, core.NDArray):
        return [state]
    return [a for s in state for a in _flat_states(s)]


def _run(opt, w, grads, dtype="float32", index=0):
    weight = nd.array(w, dtype=dtype)
    state = opt.create_state_multi_precision(index, weight)
    for g in grads:
        opt.update_multi_precision(index, weight, nd.array(g, dtype=dtype), state)
    return weight, state


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_two_steps_match_reference(case):
    _, name, kwargs, ref, ref_kwargs = case
    w, grads = _data()
    opt = _make(name, kwargs)
    weight, state = _run(opt, w, grads)
    want_w, want_states = ref(w.astype(np.float64), [g.astype(np.float64) for g in grads],
                              **ref_kwargs)
    np.testing.assert_allclose(weight.asnumpy(), want_w, rtol=2e-5, atol=2e-6)
    got = _flat_states(state)
    if name != "test":
        assert len(got) == len(want_states)
        for s, want in zip(got, want_states):
            np.testing.assert_allclose(s.asnumpy(), want, rtol=2e-5, atol=2e-6)
    assert opt.num_update == 2 or name == "test"


def test_sgld_step_and_noise():
    core.random.seed(3)
    w = np.zeros((300, 300), np.float32)
    opt = optimizer.SGLD(learning_rate=0.01)
    weight = nd.array(w)
    opt.update(0, weight, nd.zeros(w.shape), opt.create_state(0, weight))
    noise = weight.asnumpy()
    assert abs(noise.mean()) < 2e-3 and abs(noise.std() - 0.1) < 2e-3  # N(0, sqrt(lr))
    # the deterministic half step: same seed, same noise
    core.random.seed(3)
    weight = nd.ones(w.shape)
    opt = optimizer.SGLD(learning_rate=0.01, wd=0.5, rescale_grad=2.0, clip_gradient=1.0)
    opt.update(0, weight, nd.ones(w.shape), None)
    want = 1.0 - 0.01 / 2 * (np.clip(2.0, -1, 1) + 0.5 * 1.0) + noise
    np.testing.assert_allclose(weight.asnumpy(), want, rtol=1e-6)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_multi_precision_float16_uses_float32_master(case):
    _, name, kwargs, _, _ = case
    w, grads = _data(1)
    w16, g16 = w.astype(np.float16), [g.astype(np.float16) for g in grads]
    weight, state = _run(_make(name, kwargs, multi_precision=True), w16, g16, "float16")
    w32, _ = _run(_make(name, kwargs), w16.astype(np.float32),
                  [g.astype(np.float32) for g in g16], "float32")
    first = name.lower() in ("sgd", "ccsgd", "nag", "lars")  # MXNet's (state, master) order
    master = state[1] if first else state[0]
    assert weight.dtype == np.float16 and master.dtype == np.float32
    assert all(s.dtype == np.float32 for s in _flat_states(state))
    np.testing.assert_array_equal(master.asnumpy(), w32.asnumpy())
    np.testing.assert_array_equal(weight.asnumpy(), w32.asnumpy().astype(np.float16))


def test_float16_without_multi_precision_warns_and_keeps_float16_states():
    w, grads = _data()
    opt = optimizer.Adam(learning_rate=0.01)
    weight = nd.array(w, dtype="float16")
    with pytest.warns(UserWarning, match="multi_precision"):
        state = opt.create_state_multi_precision(0, weight)
    assert all(s.dtype == np.float16 for s in state)
    opt.update_multi_precision(0, weight, nd.array(grads[0], dtype="float16"), state)
    assert weight.dtype == np.float16
    d = grads[0].astype(np.float64)
    want = w - 0.01 * np.sqrt(1 - 0.999) / (1 - 0.9) * (0.1 * d) / (np.sqrt(0.001 * d * d) + 1e-8)
    np.testing.assert_allclose(weight.asnumpy(), want, rtol=2e-3, atol=2e-3)


def test_update_is_in_place_and_bumps_version():
    w, grads = _data()
    weight = nd.array(w)
    buf, version = weight._data, weight._version
    opt = optimizer.SGD(learning_rate=0.1, momentum=0.9)
    opt.update(0, weight, nd.array(grads[0]), opt.create_state(0, weight))
    assert weight._data is buf and weight._version == version + 1


def test_lists_of_indices():
    w, grads = _data()
    opt = optimizer.Adam(learning_rate=0.1)
    ws = [nd.array(w), nd.array(w * 2)]
    states = [opt.create_state(i, x) for i, x in enumerate(ws)]
    opt.update([0, 1], ws, [nd.array(grads[0]), nd.array(grads[1])], states)
    single = optimizer.Adam(learning_rate=0.1)
    x = nd.array(w * 2)
    single.update(1, x, nd.array(grads[1]), single.create_state(1, x))
    np.testing.assert_array_equal(ws[1].asnumpy(), x.asnumpy())
    assert opt._index_update_count == {0: 1, 1: 1}


def test_bad_inputs_raise_clear_errors():
    opt = optimizer.SGD()
    w = nd.ones((2, 3))
    with pytest.raises(ValueError, match=r"gradient shape \(3, 2\)"):
        opt.update(0, w, nd.ones((3, 2)), None)
    with pytest.raises(ValueError, match="cpu\\(1\\)"):
        opt.update(0, w, nd.ones((2, 3), ctx=core.cpu(1)), None)
    with pytest.raises(ValueError, match="Cannot find optimizer 'nope'"):
        optimizer.create("nope")


# ---------------------------------------------------------------------- learning rates and multipliers

def test_learning_rate_defaults_and_scheduler():
    assert optimizer.Optimizer().learning_rate == 0.01
    assert optimizer.SGD().learning_rate == 0.01
    assert optimizer.Adam().learning_rate == 0.001
    sched = lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=1.0)
    opt = optimizer.SGD(lr_scheduler=sched)
    assert opt.learning_rate == 1.0  # learning_rate=None keeps the scheduler's rate
    with pytest.raises(UserWarning):
        opt.set_learning_rate(0.5)
    with pytest.raises(UserWarning):
        opt.learning_rate = 0.5
    w = nd.ones((2,))
    for _ in range(3):
        opt.update(0, w, nd.ones((2,)), None)
    # rates 1.0, 0.5, 0.25 at updates 1, 2, 3
    np.testing.assert_allclose(w.asnumpy(), 1.0 - 1.75)
    assert opt.learning_rate == 0.25
    plain = optimizer.SGD(learning_rate=0.2)
    plain.set_learning_rate(0.3)
    assert plain.learning_rate == 0.3
    plain.learning_rate = 0.4
    assert plain.lr == 0.4


def test_learning_rate_replaces_scheduler_base_lr():
    sched = lr_scheduler.CosineScheduler(max_update=10, base_lr=1.0, warmup_steps=2)
    with pytest.warns(UserWarning, match="overwritten"):
        opt = optimizer.SGD(learning_rate=0.5, lr_scheduler=sched)
    assert sched.base_lr == 0.5
    assert opt.lr_scheduler(2) == 0.5 and opt.lr_scheduler(1) == 0.25


def test_multipliers_by_name_index_and_param_dict():
    names = {0: "fc_weight", 1: "fc_bias", 2: "bn_gamma", 3: "bn_beta", 4: "emb"}
    opt = optimizer.SGD(learning_rate=1.0, wd=0.1, param_idx2name=names)
    # MXNet 1.9: only *_weight and *_gamma keep weight decay
    assert [opt._get_wd(i) for i in range(5)] == [0.1, 0.0, 0.1, 0.0, 0.0]
    opt.set_wd_mult({"fc_bias": 1.0, 4: 3.0})
    assert [opt._get_wd(i) for i in range(5)] == [0.1, 0.1, 0.1, 0.0, pytest.approx(0.3)]
    opt.set_lr_mult({"fc_weight": 0.5, 1: 2.0})
    assert [opt._get_lr(i) for i in range(3)] == [0.5, 2.0, 1.0]

    class Param:
        lr_mult, wd_mult = 0.25, 4.0

    opt.param_dict = {0: Param()}
    assert opt._get_lr(0) == 0.25 and opt._get_wd(0) == pytest.approx(0.4)


def test_update_counts_and_begin_num_update():
    opt = optimizer.Adam(begin_num_update=10)
    opt._update_count(0)
    opt._update_count([0, 1])
    assert opt._index_update_count == {0: 12, 1: 11} and opt.num_update == 12
    opt._set_current_context(1)
    opt._update_count(0)
    assert opt._index_update_count == {0: 11} and opt.num_update == 12
    opt._set_current_context(0)
    assert opt._index_update_count[0] == 12


def test_register_custom_optimizer_works_with_updater():
    @optimizer.register
    class HalfStep(optimizer.Optimizer):
        def create_state(self, index, weight):
            return nd.zeros(weight.shape)

        def update(self, index, weight, grad, state):
            self._update_count(index)
            weight[:] = weight - 0.5 * self._get_lr(index) * grad
            state[:] = state + 1

    opt = optimizer.create("HALFSTEP", learning_rate=1.0)
    updater = optimizer.get_updater(opt)
    w = nd.ones((2,))
    updater(0, nd.ones((2,)), w)
    np.testing.assert_allclose(w.asnumpy(), [0.5, 0.5])
    restored = optimizer.get_updater(optimizer.create("halfstep"))
    restored.set_states(updater.get_states(dump_optimizer=True))
    assert restored.optimizer.num_update == 1
    np.testing.assert_allclose(restored.states[0].asnumpy(), [1.0, 1.0])


# ---------------------------------------------------------------------- Updater and its states

def _updater_run(name, kwargs, steps, w, grads, updater=None, ctx=None):
    updater = updater or optimizer.get_updater(_make(name, kwargs))
    ws = [nd.array(w, ctx=ctx), nd.array(-w, ctx=ctx)]
    for g in grads[:steps]:
        updater([0, 1], [nd.array(g, ctx=ctx), nd.array(g * 0.5, ctx=ctx)], ws)
    return updater, ws


@pytest.mark.parametrize("case", [c for c in CASES if c[1] != "test"], ids=lambda c: c[0])
def test_states_round_trip_without_pickle(case):
    _, name, kwargs, _, _ = case
    w, grads = _data(2, steps=3)
    core.random.seed(0)
    updater, ws = _updater_run(name, kwargs, 1, w, grads)
    blob = updater.get_states(dump_optimizer=True)
    assert isinstance(blob, bytes) and blob[:2] == b"PK"  # a zip (.npz), not a pickle
    with np.load(io.BytesIO(blob), allow_pickle=False) as z:
        header = json.loads(z["__header__"].tobytes())
    assert header["optimizer"]["attrs"]["num_update"] == 1
    # continue both: the original, and a fresh optimizer restored from the bytes
    fresh = optimizer.get_updater(optimizer.create(name))
    fresh.set_states(blob)
    assert fresh.optimizer.num_update == 1 and fresh.optimizer.lr == LR
    assert fresh.optimizer._get_lr(0) == LR_E and fresh.optimizer._get_wd(0) == WD_E
    ws2 = [nd.array(x.asnumpy()) for x in ws]
    for upd, weights in ((updater, ws), (fresh, ws2)):
        core.random.seed(1)
        for g in grads[1:]:
            upd([0, 1], [nd.array(g), nd.array(g * 0.5)], weights)
    for a, b in zip(ws, ws2):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    for i in (0, 1):
        for a, b in zip(_flat_states(updater.states[i]), _flat_states(fresh.states[i])):
            np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def test_states_without_optimizer_keep_the_optimizer():
    w, grads = _data()
    updater, _ = _updater_run("adam", {}, 1, w, grads)
    other = optimizer.Adam(learning_rate=0.5)
    fresh = optimizer.get_updater(other)
    fresh.set_states(updater.get_states())
    assert fresh.optimizer is other and other.num_update == 0 and other.lr == 0.5
    assert set(fresh.states) == {0, 1} and fresh.states_synced == {0: False, 1: False}


def test_set_states_restores_into_same_class_and_replaces_other_class():
    w, grads = _data()
    sched = lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=0.8)
    updater = optimizer.get_updater(optimizer.SGD(momentum=0.9, lr_scheduler=sched))
    ws = [nd.array(w)]
    for g in grads:
        updater(0, nd.array(g), ws[0])
    blob = updater.get_states(dump_optimizer=True)
    same = optimizer.SGD(param_dict={0: "kept"})
    target = optimizer.get_updater(same)
    target.set_states(blob)
    assert target.optimizer is same and same.param_dict == {0: "kept"}
    assert isinstance(same.lr_scheduler, lr_scheduler.FactorScheduler)
    assert same.lr_scheduler.base_lr == sched.base_lr == 0.4 and same.momentum == 0.9
    assert same.learning_rate == updater.optimizer.learning_rate
    other = optimizer.get_updater(optimizer.Adam())
    other.set_states(blob)
    assert type(other.optimizer) is optimizer.SGD and other.optimizer.param_dict == {}
    assert other.optimizer._index_update_count == {0: 2}


def test_set_states_refuses_pickles_and_garbage():
    ran = []

    class Evil:
        def __reduce__(self):
            return (ran.append, ("ran",))

    updater = optimizer.get_updater(optimizer.SGD())
    with pytest.raises(ValueError, match="pickle"):
        updater.set_states(pickle.dumps({0: Evil()}))
    with pytest.raises(ValueError):
        updater.set_states(b"not states")
    with pytest.raises(TypeError):
        updater.set_states("a path?")
    assert ran == []


@pytest.mark.multi_device
def test_states_follow_the_weights_context():
    w, grads = _data()
    updater, _ = _updater_run("adam", {}, 1, w, grads)
    fresh = optimizer.get_updater(optimizer.create("adam"))
    fresh.set_states(updater.get_states())
    assert fresh.states[0][0].context == core.cpu(0)
    ws = [nd.array(w, ctx=core.cpu(1)), nd.array(-w, ctx=core.cpu(1))]
    fresh([0, 1], [nd.array(g, ctx=core.cpu(1)) for g in grads], ws)
    assert all(s.context == core.cpu(1) for s in _flat_states(fresh.states[0]))


def test_updater_creates_states_lazily_and_counts_per_device():
    w, grads = _data()
    updater = optimizer.get_updater(optimizer.SGD(momentum=0.9, learning_rate=0.1))
    weight = nd.array(w)
    updater(0, nd.array(grads[0]), weight)
    assert set(updater.states) == {0}
    updater(b"name", nd.array(grads[0]), nd.array(w))  # bytes keys become str, as MXNet
    assert set(updater.states) == {0, "name"}
    np.testing.assert_allclose(weight.asnumpy(), w - 0.1 * grads[0], rtol=1e-6)


def test_bfloat16_states_round_trip():
    opt = optimizer.SGD(momentum=0.9, learning_rate=0.1)
    updater = optimizer.get_updater(opt)
    w = nd.array([1.0, 2.0], dtype="bfloat16")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        updater(0, nd.array([1.0, 1.0], dtype="bfloat16"), w)
    fresh = optimizer.get_updater(optimizer.SGD(momentum=0.9))
    fresh.set_states(updater.get_states())
    assert fresh.states[0].dtype == core.dtypes.bfloat16
    np.testing.assert_array_equal(fresh.states[0].asnumpy().astype(np.float32),
                                  updater.states[0].asnumpy().astype(np.float32))


# ---------------------------------------------------------------------- GPU: fused kernels

@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype,mp", [("float32", False), ("float16", True), ("float64", False)])
def test_fused_kernels_match_xp_rules_on_gpu(case, dtype, mp, monkeypatch):
    _, name, kwargs, _, _ = case
    w, grads = _data(4)
    w, grads = w.astype(dtype), [g.astype(dtype) for g in grads]
    results = []
    for fused in (True, False):
        monkeypatch.setattr(opt_mod.optimizer, "_FUSED", fused)
        with core.gpu(0):
            weight, state = _run(_make(name, kwargs, multi_precision=mp), w, grads, dtype)
        results.append([weight.asnumpy()] + [s.asnumpy() for s in _flat_states(state)])
    cpu_weight, _ = _run(_make(name, kwargs, multi_precision=mp), w, grads, dtype)
    tol = 1e-3 if dtype == "float16" else 1e-5
    for a, b in zip(*results):
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=tol,
                                   atol=tol)
    np.testing.assert_allclose(results[0][0].astype(np.float64),
                               cpu_weight.asnumpy().astype(np.float64), rtol=tol, atol=tol)
