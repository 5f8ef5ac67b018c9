"""kbackend/optimizer.py on core's compiled CPU kernels: a Keras fit step with kernels on
equals the same step with their NumPy twins (``cpu_kernels.disabled()``)."""
from __future__ import annotations

import keras
import numpy as np
import pytest

from core import cpu_kernels

pytestmark = pytest.mark.skipif(not cpu_kernels.enabled(), reason="kernels are off")

O = keras.optimizers  # noqa: E741
CASES = {
    "sgd": lambda: O.SGD(0.05),
    "sgd_momentum": lambda: O.SGD(0.05, momentum=0.9),
    "nesterov": lambda: O.SGD(0.05, momentum=0.9, nesterov=True),
    "adam": lambda: O.Adam(1e-3),
    "adamw": lambda: O.AdamW(1e-3, weight_decay=0.01),
    "rmsprop": lambda: O.RMSprop(1e-3),
    "rmsprop_centered": lambda: O.RMSprop(1e-3, centered=True, momentum=0.5),
    "adagrad": lambda: O.Adagrad(0.01),
    "adam_schedule_clipnorm": lambda: O.Adam(
        O.schedules.ExponentialDecay(1e-3, decay_steps=1, decay_rate=0.5), clipnorm=1.0),
}


def _fit(make_optimizer):
    keras.backend.clear_session()
    keras.utils.set_random_seed(0)
    # 784 x 128 = 100352 weights: more than one parallel chunk of the kernels
    model = keras.Sequential([keras.Input((784,)), keras.layers.Dense(128, activation="relu"),
                              keras.layers.Dense(10)])
    model.compile(optimizer=make_optimizer(), jit_compile=False,
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 784)).astype("float32")
    y = rng.integers(0, 10, 64)
    model.fit(x, y, batch_size=32, epochs=2, shuffle=False, verbose=0)
    return [np.asarray(keras.ops.convert_to_numpy(w)) for w in model.weights]


def _count_kernel_calls(monkeypatch):
    from core.optimizer import _cpu

    calls = []
    call = _cpu.CpuRule.__call__
    monkeypatch.setattr(_cpu.CpuRule, "__call__",
                        lambda self, *a: (calls.append(self), call(self, *a))[1])
    return calls


@pytest.mark.parametrize("name", sorted(CASES))
def test_fit_step_kernels_match_twins(name, monkeypatch):
    calls = _count_kernel_calls(monkeypatch)
    on = _fit(CASES[name])
    assert calls, "the compiled kernels did not run"
    with cpu_kernels.disabled():
        off = _fit(CASES[name])
    for a, b in zip(on, off):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
