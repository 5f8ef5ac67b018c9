"""Fused elementwise programs as one compiled CPU kernel (core/ops/fused_cpu.py): the
same results as the NumPy ufunc passes, bit for bit, or the passes when a program does
not qualify."""
from __future__ import annotations

import os

import numpy as np
import pytest

from core import autograd, cpu_kernels, nd
from core.ops import F, fused_cpu

pytestmark = [pytest.mark.skipif(not cpu_kernels.enabled(), reason="numba kernels are off"),
              pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")]

I0, I1, I2 = ("in", 0), ("in", 1), ("in", 2)

PROGRAMS = [
    ("relu_grad", (("greater", (I0, 0.0)), ("multiply", (I1, ("step", 0)))), 1),
    ("chain", (("multiply", (I0, I1)), ("add", (("step", 0), 1.5)), ("relu", (("step", 1),)),
               ("subtract", (("step", 2), I2)), ("divide", (("step", 3), 3.0))), 4),
    ("minmax", (("maximum", (I0, I1)), ("minimum", (("step", 0), I2)),
                ("abs", (("step", 1),)), ("sqrt", (("step", 2),))), 3),
    ("compare", (("less_equal", (I0, I1)), ("not_equal", (I1, I2)),
                 ("equal", (("step", 0), ("step", 1)))), 2),
    ("two_outputs", (("square", (I0,)), ("negative", (I1,)), ("add", (("step", 0), I2))),
     (0, 2)),
]


def _inputs(dtype, rng, n=3, shape=(7, 33)):
    xs = [rng.standard_normal(shape).astype(dtype) for _ in range(n)]
    for x in xs:  # signed zeros, NaN, infinities, ties between inputs
        x.flat[::11] = 0.0
        x.flat[1::11] = -0.0
        if x.dtype.kind == "f":
            x.flat[2::17] = np.nan
            x.flat[3::19] = np.inf
            x.flat[4::23] = -np.inf
    xs[1].flat[::5] = xs[0].flat[::5]
    return xs


def _both(xs, prog, outputs):
    args = [nd.array(x, dtype=x.dtype) for x in xs]
    ran = []
    real = fused_cpu.run

    def spy(*a, **k):
        res = real(*a, **k)
        ran.append(res is not None)
        return res

    fused_cpu.run = spy
    try:
        fast = F._fused_elemwise(*args, program=prog, outputs=outputs)
    finally:
        fused_cpu.run = real
    compiled = ran == [True]
    with cpu_kernels.disabled():
        slow = F._fused_elemwise(*args, program=prog, outputs=outputs)
    fast = fast if isinstance(fast, tuple) else (fast,)
    slow = slow if isinstance(slow, tuple) else (slow,)
    return [a.asnumpy() for a in fast], [a.asnumpy() for a in slow], compiled


@pytest.mark.parametrize(("name", "prog", "outputs"), PROGRAMS, ids=[p[0] for p in PROGRAMS])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_kernel_equals_the_ufunc_passes_bit_for_bit(name, prog, outputs, dtype):
    xs = _inputs(dtype, np.random.default_rng(0))
    fast, slow, compiled = _both(xs, prog, outputs)
    assert compiled, "the program ran its NumPy passes, not a kernel"
    for a, b in zip(fast, slow):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
        assert (np.signbit(a) == np.signbit(b)).all() if a.dtype.kind == "f" else True


def test_integer_and_mixed_dtypes_promote_as_numpy():
    rng = np.random.default_rng(1)
    a = rng.integers(-5, 5, (6, 8)).astype(np.int32)
    b = rng.standard_normal((6, 8)).astype(np.float32)
    c = rng.standard_normal((6, 8))  # float64
    prog = (("multiply", (I0, 2)), ("add", (("step", 0), I1)), ("multiply", (("step", 1), I2)))
    fast, slow, compiled = _both([a, b, c], prog, 2)
    assert compiled and fast[0].dtype == np.float64
    np.testing.assert_array_equal(fast[0], slow[0])


def test_a_program_is_compiled_once_and_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("KBACKEND_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(fused_cpu, "_kernels", {})
    monkeypatch.setattr(fused_cpu, "_by_program", {})
    xs = _inputs("float32", np.random.default_rng(2), n=2)
    prog = (("subtract", (I0, I1)), ("multiply", (("step", 0), 0.25)))
    _both(xs, prog, 1)
    files = sorted(os.listdir(tmp_path / "fused_cpu"))
    assert any(f.startswith("fused_") and f.endswith(".py") for f in files)
    assert len(fused_cpu._kernels) == 1
    _both(xs, prog, 1)
    assert len(fused_cpu._kernels) == 1


@pytest.mark.parametrize("case", ["broadcast", "noncontiguous", "exp"])
def test_programs_that_do_not_qualify_run_the_passes(case):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 8)).astype(np.float32)
    y = rng.standard_normal((6, 8)).astype(np.float32)
    prog = (("multiply", (I0, I1)), ("add", (("step", 0), 1.0)))
    if case == "broadcast":
        y = y[:1]
    elif case == "exp":  # transcendental: NumPy's SIMD rounding is kept
        prog = (("exp", (I0,)), ("add", (("step", 0), I1)))
    args = [nd.array(x), nd.array(y)]
    if case == "noncontiguous":
        from core.test_utils import view_of

        args = [view_of(x), view_of(y)]
    n_before = len(fused_cpu._kernels)
    out = F._fused_elemwise(*args, program=prog, outputs=1).asnumpy()
    want = (np.exp(x) if case == "exp" else x * y) + (y if case == "exp" else 1.0)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    assert len(fused_cpu._kernels) == n_before  # nothing compiled


def test_hybridized_training_equals_with_and_without_kernels():
    from gluon import nn

    def run():
        net = nn.HybridSequential()
        net.add(nn.Dense(16, activation="relu", in_units=8), nn.Dense(4, in_units=16))
        net.initialize()
        for p in net.collect_params().values():
            p.set_data(nd.array(np.random.default_rng(p.shape[0]).standard_normal(p.shape)
                                .astype(np.float32)))
        net.hybridize()
        x = nd.array(np.random.default_rng(9).standard_normal((32, 8)).astype(np.float32))
        with autograd.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
        return [p.grad().asnumpy() for p in net.collect_params().values()]

    fast = run()
    with cpu_kernels.disabled():
        slow = run()
    for a, b in zip(fast, slow):
        np.testing.assert_array_equal(a, b)
