"""core/optimizer/_cpu.py: the compiled update rules against their NumPy twins.

Every rule runs once with kernels on and once in ``cpu_kernels.disabled()`` from the
same arrays; weights and states must agree to float rounding (they agree bit for bit,
except LAMB, whose norms the kernels sum in float64). Then whole optimizers (several
steps, schedules, weight decay, clipping, rescaling, multi-precision), a gluon Trainer
and a Keras fit step, each kernels-on against kernels-off.
"""
from __future__ import annotations

import numpy as np
import pytest

from core import cpu_kernels, nd, optimizer
from core.optimizer import _cpu
from core.optimizer.adagrad import adagrad_update, rmsprop_update, rmspropalex_update
from core.optimizer.adam import adam_update, adamw_update
from core.optimizer.lr_scheduler import FactorScheduler
from core.optimizer.sgd import nag_mom_update, sgd_mom_update, sgd_update

pytestmark = pytest.mark.skipif(not cpu_kernels.enabled(), reason="kernels are off")

# (rule, number of states, scalars after the states); each with and without clipping
RULES = {
    "sgd": (sgd_update, 0, (0.1, 0.01, 0.5)),
    "sgd_mom": (sgd_mom_update, 1, (0.1, 0.01, 0.9, 0.5)),
    "nag_mom": (nag_mom_update, 1, (0.1, 0.01, 0.9, 0.5)),
    "adam": (adam_update, 2, (0.1, 0.01, 0.9, 0.999, 1e-8, 0.5)),
    "adamw": (adamw_update, 2, (0.1, 0.01, 0.9, 0.999, 1e-8, 0.5)),
    "adagrad": (adagrad_update, 1, (0.1, 0.01, 1e-7, 0.5)),
    "rmsprop": (rmsprop_update, 1, (0.1, 0.01, 0.9, 1e-8, 0.5)),
    "rmspropalex": (rmspropalex_update, 3, (0.1, 0.01, 0.9, 0.9, 1e-8, 0.5)),
}
# (300, 400): several parallel chunks and a partial one, serial: several blocks
SHAPES = [(7,), (33, 65), (2, 3, 4, 5), (300, 400)]


@pytest.fixture(params=["serial", "parallel"])
def path(request, monkeypatch):
    """Run every tensor on the serial kernels, or on the parallel ones (two threads)."""
    if request.param == "parallel":
        monkeypatch.setattr(_cpu, "PARALLEL_MIN", 0)
        monkeypatch.setattr(cpu_kernels, "num_threads", lambda: 2)
    else:
        monkeypatch.setattr(_cpu, "PARALLEL_MIN", float("inf"))
    return request.param


def _states(rng, name, n, shape, dtype):
    states = [np.abs(rng.standard_normal(shape)).astype(dtype) for _ in range(n)]
    if name == "rmspropalex":  # sq >= gbar ** 2, as the rule keeps it
        states[1] = (rng.standard_normal(shape) * 0.1).astype(dtype)
        states[0] += states[1] * states[1]
    return states


def _grad(rng, shape, dtype, layout):
    if layout == "transposed":  # a non-contiguous view (an F-ordered array)
        return (rng.standard_normal(shape[::-1]) * 2).astype(dtype).T
    if layout == "strided":
        return (rng.standard_normal((2,) + shape) * 2).astype(dtype)[1, ...][..., ::1]
    return (rng.standard_normal(shape) * 2).astype(dtype)


def _run_both(rule, args):
    """The arrays after ``rule(*args)`` with kernels on, and with kernels off."""
    on = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    off = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    if isinstance(args[1], np.ndarray) and not args[1].flags.c_contiguous:
        on[1], off[1] = args[1], args[1]  # keep the gradient's layout
    rule(*on)
    with cpu_kernels.disabled():
        rule(*off)
    return on, off


def _assert_same(on, off, dtype, rtol=None):
    rtol = rtol if rtol is not None else (1e-6 if dtype == np.float32 else 1e-13)
    for a, b in zip(on, off):
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * 1e-3)


@pytest.mark.parametrize("name", sorted(RULES))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("clip", [-1.0, 0.7], ids=["noclip", "clip"])
def test_rule_kernel_matches_twin(name, shape, dtype, layout, clip, path):
    rule, n_states, scalars = RULES[name]
    rng = np.random.default_rng(len(shape) + n_states)
    w = rng.standard_normal(shape).astype(dtype)
    g = _grad(rng, shape, dtype, layout)
    states = _states(rng, name, n_states, shape, dtype)
    extra = (clip, 1.2) if name.startswith("rmsprop") else (clip,)  # clip_weights
    args = (w, g, *states, *scalars, *extra)
    assert _cpu.takes(w, g, states)
    on, off = _run_both(rule, args)
    _assert_same(on, off, dtype)
    assert not np.array_equal(on[0], w)  # the weight did change


@pytest.mark.parametrize("name", ["sgd_mom", "adam", "adamw", "rmsprop"])
def test_rule_without_weight_decay_and_float64_scalars(name):
    rule, n_states, scalars = RULES[name]
    rng = np.random.default_rng(3)
    w = rng.standard_normal((50,)).astype(np.float32)
    g = _grad(rng, (50,), np.float32, "contiguous")
    states = _states(rng, name, n_states, (50,), np.float32)
    scalars = (scalars[0], 0.0) + scalars[2:]
    extra = (-1.0, -1.0) if name == "rmsprop" else (-1.0,)
    _assert_same(*_run_both(rule, (w, g, *states, *scalars, *extra)), np.float32)


def test_zero_denominators_give_numpys_inf_and_nan():
    # eps = 0 and a zero gradient: 0 / 0 in AdaGrad and Adam (numba would raise)
    w = np.array([1.0, -1.0, 0.0, 2.0], np.float32)
    g = np.array([0.0, 0.0, 0.0, 1.0], np.float32)
    with np.errstate(invalid="ignore", divide="ignore"):
        on, off = _run_both(adagrad_update, (w, g, np.zeros(4, np.float32), 0.1, 0.0, 0.0,
                                             1.0, -1.0))
        np.testing.assert_array_equal(on[0], off[0])
        assert np.isnan(on[0][:3]).all()
        on, off = _run_both(adam_update, (w, g, np.zeros(4, np.float32),
                                          np.zeros(4, np.float32), 0.1, 0.0, 0.9, 0.999, 0.0,
                                          1.0, -1.0))
        np.testing.assert_array_equal(on[0], off[0])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_and_odd_layouts_fall_back_to_the_twin(dtype):
    from core.dtypes import bfloat16

    dt = bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 6)).astype(dt)
    g = rng.standard_normal((8, 6)).astype(dt)
    mom = np.zeros((8, 6), dt)
    assert not _cpu.takes(w, g, (mom,))
    _assert_same(*_run_both(sgd_mom_update, (w, g, mom, 0.1, 0.01, 0.9, 1.0, -1.0)),
                 np.float64, rtol=0)
    w32 = rng.standard_normal((8, 6)).astype(np.float32)
    assert not _cpu.takes(w32[:, ::2], g[:, ::2].astype(np.float32), ())  # strided weight
    assert not _cpu.takes(w32, g, ())  # mixed dtypes
    assert not _cpu.takes(w32, w32.astype(np.float32), (np.zeros((8, 6), np.float64),))


# ---------------------------------------------------------------------- optimizers

OPTIMIZERS = [
    ("sgd", {}),
    ("sgd", {"momentum": 0.9}),
    ("nag", {"momentum": 0.9}),
    ("adam", {}),
    ("adamw", {}),
    ("rmsprop", {}),
    ("rmsprop", {"centered": True, "clip_weights": 1.5}),
    ("adagrad", {}),
    ("lamb", {}),
    ("lamb", {"lower_bound": 0.5, "upper_bound": 2.0}),
]


def _optimizer_steps(name, kwargs, shapes, dtype="float32", steps=3, mp=False):
    """The weights after ``steps`` multi-tensor updates (one Updater call per step)."""
    rng = np.random.default_rng(7)
    sched = FactorScheduler(step=2, factor=0.5, base_lr=0.05)
    opt = optimizer.create(name, learning_rate=0.05, lr_scheduler=sched, wd=0.01,
                           rescale_grad=0.5, clip_gradient=0.8, multi_precision=mp,
                           param_idx2name={i: f"p{i}_weight" for i in range(len(shapes))},
                           **kwargs)
    opt.set_lr_mult({1: 0.5})
    updater = optimizer.get_updater(opt)
    ws = [nd.array(rng.standard_normal(s), dtype=dtype) for s in shapes]
    for _ in range(steps):
        gs = [nd.array(rng.standard_normal(s) * 2, dtype=dtype) for s in shapes]
        gs[0] = nd.array(np.asfortranarray(gs[0].asnumpy()))  # a non-contiguous gradient
        updater(list(range(len(shapes))), gs, ws)
    return [w.asnumpy() for w in ws]


@pytest.mark.parametrize("case", OPTIMIZERS, ids=lambda c: f"{c[0]}{c[1] or ''}")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_optimizer_steps_kernels_match_twins(case, dtype, path):
    # (0-d weights: the twins' ``clip(..., out=)`` needs arrays; kbackend reshapes them)
    shapes = [(30, 20), (20,), (300, 300), (1,)]
    on = _optimizer_steps(*case, shapes, dtype)
    with cpu_kernels.disabled():
        off = _optimizer_steps(*case, shapes, dtype)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    for a, b in zip(on, off):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * 1e-2)


@pytest.mark.parametrize("case", OPTIMIZERS[:5], ids=lambda c: f"{c[0]}{c[1] or ''}")
def test_multi_precision_float16_kernels_match_twins(case):
    shapes = [(30, 20), (20,)]
    on = _optimizer_steps(*case, shapes, "float16", mp=True)
    with cpu_kernels.disabled():
        off = _optimizer_steps(*case, shapes, "float16", mp=True)
    for a, b in zip(on, off):
        assert a.dtype == np.float16
        np.testing.assert_allclose(a.astype(np.float32), b.astype(np.float32), rtol=2e-3,
                                   atol=1e-3)


def test_multi_tensor_update_equals_one_by_one_updates():
    def run(multi):
        rng = np.random.default_rng(1)
        opt = optimizer.Adam(learning_rate=0.01, wd=0.1)
        up = optimizer.get_updater(opt)
        ws = [nd.array(rng.standard_normal(s), dtype="float32") for s in [(4, 3), (5,)]]
        for _ in range(3):
            gs = [nd.array(rng.standard_normal(w.shape), dtype="float32") for w in ws]
            if multi:
                up([0, 1], gs, ws)
            else:
                for i in range(2):
                    up(i, gs[i], ws[i])
        return [w.asnumpy() for w in ws], opt.num_update

    (a, na), (b, nb) = run(True), run(False)
    assert na == nb == 3
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


# ---------------------------------------------------------------------- gluon and Keras

def _trainer_steps(name, kwargs):
    from core import autograd
    from gluon import Trainer, nn

    net = nn.HybridSequential()
    net.add(nn.Dense(32, activation="relu", in_units=16), nn.Dense(4, in_units=32))
    net.initialize()
    rng = np.random.default_rng(0)
    for p in net.collect_params().values():
        p.set_data(nd.array(rng.standard_normal(p.shape) * 0.3, dtype="float32"))
    trainer = Trainer(net.collect_params(), name, kwargs, kvstore=None)
    x = nd.array(rng.standard_normal((8, 16)), dtype="float32")
    for _ in range(3):
        with autograd.record():
            loss = (net(x) ** 2).mean()
        loss.backward()
        trainer.step(8)
    return [p.data().asnumpy() for p in net.collect_params().values()]


@pytest.mark.parametrize("name,kwargs", [("sgd", {"learning_rate": 0.1, "momentum": 0.9}),
                                         ("adam", {"learning_rate": 0.01, "wd": 1e-3})])
def test_gluon_trainer_step_kernels_match_twins(name, kwargs, monkeypatch):
    calls = []
    call = _cpu.CpuRule.__call__
    monkeypatch.setattr(_cpu.CpuRule, "__call__",
                        lambda self, *a: (calls.append(self), call(self, *a))[1])
    on = _trainer_steps(name, kwargs)
    assert len(calls) == 3 * 4  # 3 steps, 4 parameters, each through its kernel
    with cpu_kernels.disabled():
        off = _trainer_steps(name, kwargs)
    for a, b in zip(on, off):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_a_subclass_with_a_one_weight_update_gets_one_weight_at_a_time():
    seen = []

    class MySGD(optimizer.SGD):
        def update(self, index, weight, grad, state):
            seen.append(index)
            assert not isinstance(index, list)
            super().update(index, weight, grad, state)

    up = optimizer.get_updater(MySGD(learning_rate=0.1))
    ws = [nd.ones((2,)), nd.ones((3,))]
    up([0, 1], [nd.ones((2,)), nd.ones((3,))], ws)
    assert seen == [0, 1]
    np.testing.assert_allclose(ws[1].asnumpy(), [0.9, 0.9, 0.9], rtol=1e-6)
