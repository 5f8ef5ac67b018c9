"""Keras ``BatchNormalization(synchronized=True)`` under ``keras.distribution.DataParallel``
on kbackend: the global batch's statistics, equal to one device with the whole batch."""
from __future__ import annotations

import keras
import numpy as np
import pytest

from kbackend import distribution_lib as d
from kbackend import sync_moments

pytestmark = pytest.mark.multi_device

_rng = np.random.default_rng(7)
X = (_rng.normal(size=(16, 5)) * [1.0, 3.0, 0.5, 2.0, 1.0] + 2.0).astype("float32")
Y = _rng.integers(0, 3, 16)
DEVICES = ["cpu:0", "cpu:1", "cpu:2"]


@pytest.fixture(autouse=True)
def three_cpu_devices(monkeypatch):
    monkeypatch.setenv(d.NUM_CPU_ENV, "3")


def _model(synchronized=True, jit=False, conv=False):
    keras.utils.set_random_seed(3)
    if conv:
        layers = [keras.Input((4, 4, 2)), keras.layers.Conv2D(3, 3, padding="same"),
                  keras.layers.BatchNormalization(momentum=0.5, synchronized=synchronized),
                  keras.layers.Flatten()]
    else:
        layers = [keras.Input((5,)), keras.layers.Dense(8),
                  keras.layers.BatchNormalization(momentum=0.5, synchronized=synchronized)]
    m = keras.Sequential(layers + [keras.layers.Dense(3)])
    m.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              jit_compile=jit)
    return m


def _maxdiff(a, b):
    return max(float(np.abs(np.asarray(u) - np.asarray(v)).max()) for u, v in zip(a, b))


@pytest.mark.parametrize("conv", [False, True])
def test_synchronized_batchnorm_equals_one_device_on_the_whole_batch(conv):
    x = X if not conv else _rng.normal(size=(16, 4, 4, 2)).astype("float32") + 1.0
    batches = [(x[:8], Y[:8]), (x[8:], Y[8:]), (x[3:11], Y[3:11])]  # 8 over 3: 3/3/2
    one = _model(conv=conv)
    for b in batches:
        one.train_on_batch(*b)
    dist = keras.distribution.DataParallel(devices=DEVICES)
    paths = []
    with dist.scope():
        dp = _model(conv=conv)
        for b in batches:
            dp.train_on_batch(*b)
            paths.append(dp._kbackend_replicated.last_path)
    # the first step builds lazily (one device, whole batch); then the replicas run
    # concurrently and meet at the layer
    assert paths == ["in turn", "engine", "engine"]
    assert _maxdiff(one.get_weights(), dp.get_weights()) < 1e-5
    bn1, bn2 = one.layers[1], dp.layers[1]
    assert _maxdiff([bn1.moving_variance], [bn2.moving_variance]) < 1e-6
    assert _maxdiff([bn1.moving_mean], [bn2.moving_mean]) < 1e-6


def test_unsynchronized_batchnorm_differs_and_jit_runs_on_one_device():
    dist = keras.distribution.DataParallel(devices=DEVICES[:2])
    one = _model()
    for _ in range(2):
        one.train_on_batch(X[:8], Y[:8])
    with dist.scope():
        plain = _model(synchronized=False)
        jit = _model(jit=True)
        for _ in range(2):
            plain.train_on_batch(X[:8], Y[:8])
            jit.train_on_batch(X[:8], Y[:8])
    # per-slice statistics: the moving variance misses the spread between the slices
    assert _maxdiff([one.layers[1].moving_variance], [plain.layers[1].moving_variance]) > 1e-4
    rep = jit._kbackend_replicated
    assert rep.last_path == "in turn" and "synchronized=True" in rep.step_reason
    assert _maxdiff(one.get_weights(), jit.get_weights()) < 1e-5


def test_synchronized_batchnorm_layer_config_and_plain_moments_outside_a_step():
    bn = keras.layers.BatchNormalization(synchronized=True)
    assert bn.get_config()["synchronized"] is True
    assert keras.layers.BatchNormalization.from_config(bn.get_config()).synchronized
    assert sync_moments.current() is None
    mean, var = keras.ops.moments(X, axes=[0], synchronized=True)
    np.testing.assert_allclose(np.asarray(mean), X.mean(0), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(var), X.var(0), rtol=1e-4)
