"""Keras mixed precision on kbackend: the ``mixed_float16``/``mixed_bfloat16`` policies
train, and ``LossScaleOptimizer`` skips a step whose gradients overflow (the scale
halves, the weights stay) and grows the scale after ``dynamic_growth_steps`` clean ones.
"""
from __future__ import annotations

import keras
import numpy as np
import pytest
from keras import layers, ops

# overflowing steps are what loss scaling is for: NumPy warns of them
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered",
                                        "ignore:invalid value encountered")


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((192, 4)).astype("float32")
    y = (x[:, 0] > 0).astype("int32") + (x[:, 1] > 0).astype("int32")
    keras.utils.set_random_seed(0)
    return x, y


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
def test_mixed_policy_trains(policy):
    x, y = _data()
    keras.config.set_dtype_policy(policy)
    model = keras.Sequential([keras.Input((4,)), layers.Dense(16, activation="relu"),
                              layers.Dense(3, activation="softmax", dtype="float32")])
    model.compile(optimizer=keras.optimizers.Adam(0.02),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    if policy == "mixed_float16":  # Keras wraps the optimizer for float16 only
        assert type(model.optimizer).__name__ == "LossScaleOptimizer"
    hist = model.fit(x, y, epochs=6, batch_size=32, verbose=0).history
    assert hist["loss"][-1] < hist["loss"][0] * 0.7, hist
    assert hist["accuracy"][-1] > 0.8, hist
    hidden = model.layers[0]
    assert hidden.kernel.dtype == "float32"
    low = policy.split("_")[1]
    assert str(ops.convert_to_numpy(hidden(x[:2])).dtype) == low


def test_loss_scale_optimizer_skips_overflow_and_grows():
    v = keras.Variable(np.ones((2,), "float32"))
    opt = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.1), initial_scale=64.0,
                                              dynamic_growth_steps=2)
    opt.build([v])
    opt.apply([ops.convert_to_tensor(np.array([np.inf, 1.0], "float32"))], [v])
    np.testing.assert_array_equal(ops.convert_to_numpy(v), [1.0, 1.0])  # skipped
    assert float(ops.convert_to_numpy(opt.dynamic_scale)) == 32.0
    opt.apply([ops.convert_to_tensor(np.array([np.nan, 0.0], "float32"))], [v])
    assert float(ops.convert_to_numpy(opt.dynamic_scale)) == 16.0
    # two clean steps: applied (the gradients are divided by the scale), then the scale grows
    for _ in range(2):
        opt.apply([ops.convert_to_tensor(np.full((2,), 16.0, "float32"))], [v])
    np.testing.assert_allclose(ops.convert_to_numpy(v), [0.8, 0.8], rtol=1e-6)
    assert float(ops.convert_to_numpy(opt.dynamic_scale)) == 32.0


def test_mixed_float16_fit_survives_an_overflowing_start():
    """A loss scale far too large for float16 at first: fit halves it until steps apply."""
    x, y = _data()
    keras.config.set_dtype_policy("mixed_float16")
    model = keras.Sequential([keras.Input((4,)), layers.Dense(16, activation="relu"),
                              layers.Dense(3, activation="softmax", dtype="float32")])
    opt = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(0.02),
                                              initial_scale=2.0 ** 40)
    model.compile(optimizer=opt, loss="sparse_categorical_crossentropy")
    before = ops.convert_to_numpy(model.layers[0].kernel).copy()
    hist = model.fit(x, y, epochs=4, batch_size=32, verbose=0).history
    scale = float(ops.convert_to_numpy(opt.dynamic_scale))
    assert scale < 2.0 ** 40  # halved on the overflowing steps
    assert not np.array_equal(before, ops.convert_to_numpy(model.layers[0].kernel))
    assert np.isfinite(hist["loss"]).all() and hist["loss"][-1] < hist["loss"][0], hist
