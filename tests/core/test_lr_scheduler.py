"""Learning-rate schedulers: values at given update counts, warm-up, argument checks."""
import math

import pytest

import core
from core import lr_scheduler
from core.optimizer import lr_scheduler as lrs


def test_reexported_as_core_lr_scheduler():
    assert lr_scheduler.FactorScheduler is lrs.FactorScheduler
    assert core.optimizer.lr_scheduler is lrs


def test_factor_scheduler_values():
    s = lr_scheduler.FactorScheduler(step=3, factor=0.5, base_lr=1.0)
    got = [s(n) for n in range(1, 11)]
    # the rate drops after update count + step: 1..3 -> 1, 4..6 -> 0.5, 7..9 -> 0.25
    assert got == [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.125]


def test_factor_scheduler_stop_and_jump():
    s = lr_scheduler.FactorScheduler(step=1, factor=0.1, stop_factor_lr=1e-3, base_lr=1.0)
    assert s(100) == 1e-3  # a later update count applies every reduction at once
    assert s(101) == 1e-3


def test_factor_scheduler_warmup_linear_and_constant():
    s = lr_scheduler.FactorScheduler(step=5, factor=0.5, base_lr=1.0, warmup_steps=4,
                                     warmup_begin_lr=0.2)
    assert [s(n) for n in range(4)] == pytest.approx([0.2, 0.4, 0.6, 0.8])
    assert s(4) == 1.0 and s(6) == 0.5
    c = lr_scheduler.FactorScheduler(step=5, base_lr=1.0, warmup_steps=3, warmup_begin_lr=0.1,
                                     warmup_mode="constant")
    assert [c(n) for n in range(4)] == [0.1, 0.1, 0.1, 1.0]


def test_multifactor_scheduler_values():
    s = lr_scheduler.MultiFactorScheduler(step=[3, 5], factor=0.1, base_lr=1.0,
                                          warmup_steps=2, warmup_begin_lr=0.5)
    got = [s(n) for n in range(8)]
    assert got == pytest.approx([0.5, 0.75, 1.0, 1.0, 0.1, 0.1, 0.01, 0.01])


def test_poly_scheduler_values():
    s = lr_scheduler.PolyScheduler(max_update=12, base_lr=1.0, pwr=2, final_lr=0.1,
                                   warmup_steps=2, warmup_begin_lr=0.0)
    want = {0: 0.0, 1: 0.5, 2: 1.0, 7: 0.1 + 0.9 * 0.5 ** 2, 12: 0.1, 20: 0.1}
    for n, lr in want.items():
        assert s(n) == pytest.approx(lr), n


def test_cosine_scheduler_values():
    s = lr_scheduler.CosineScheduler(max_update=8, base_lr=2.0, final_lr=0.5, warmup_steps=4,
                                     warmup_begin_lr=1.0)
    assert [s(n) for n in range(4)] == pytest.approx([1.0, 1.25, 1.5, 1.75])
    for n in (4, 5, 6, 8):
        want = 0.5 + 1.5 * (1 + math.cos(math.pi * (n - 4) / 4)) / 2
        assert s(n) == pytest.approx(want)
    assert s(100) == pytest.approx(0.5)


@pytest.mark.parametrize("make", [
    lambda: lr_scheduler.LRScheduler(base_lr=0.1, warmup_begin_lr=0.2, warmup_steps=2),
    lambda: lr_scheduler.LRScheduler(warmup_steps=-1),
    lambda: lr_scheduler.LRScheduler(warmup_mode="exp"),
    lambda: lr_scheduler.FactorScheduler(step=0),
    lambda: lr_scheduler.FactorScheduler(step=2, factor=1.5),
    lambda: lr_scheduler.MultiFactorScheduler(step=[3, 3]),
    lambda: lr_scheduler.MultiFactorScheduler(step=[0, 3]),
    lambda: lr_scheduler.MultiFactorScheduler(step=[]),
    lambda: lr_scheduler.PolyScheduler(max_update=0),
    lambda: lr_scheduler.CosineScheduler(max_update=0),
])
def test_invalid_arguments(make):
    with pytest.raises(ValueError):
        make()


def test_non_integer_counts_are_type_errors():
    with pytest.raises(TypeError):
        lr_scheduler.LRScheduler(warmup_steps=1.5)
    with pytest.raises(TypeError):
        lr_scheduler.PolyScheduler(max_update=10.0)


def test_base_class_call_is_abstract():
    with pytest.raises(NotImplementedError):
        lr_scheduler.LRScheduler()(1)
