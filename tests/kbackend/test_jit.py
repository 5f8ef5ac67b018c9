"""jit_compile: Keras steps through compiled graphs give the eager results."""
from __future__ import annotations

import warnings

import keras
import numpy as np
from keras import layers, ops


def _fit_bn_model(jit, x, y):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((8,)), layers.Dense(16, activation="relu"),
                              layers.BatchNormalization(), layers.Dense(3)])
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"], jit_compile=jit)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback warning
        hist = model.fit(x, y, epochs=3, batch_size=16, verbose=0, shuffle=False)
    steps = getattr(model, "_kbackend_compiled", None)
    assert (steps is not None) == jit, steps
    if jit:
        assert steps.failed is None and len(steps.cache) >= 1, steps.failed
    return (hist.history["loss"], model.evaluate(x, y, verbose=0),
            model.predict(x[:5], verbose=0), [v.numpy() for v in model.variables])


def test_jit_compile_gives_the_eager_results():
    rng = np.random.RandomState(0)
    x = rng.rand(64, 8).astype("float32")
    y = rng.randint(0, 3, 64)
    (l1, e1, p1, v1), (l2, e2, p2, v2) = (_fit_bn_model(jit, x, y) for jit in (False, True))
    np.testing.assert_allclose(l1, l2, rtol=1e-6)
    np.testing.assert_allclose(e1, e2, rtol=1e-6)
    np.testing.assert_allclose(p1, p2, rtol=1e-5, atol=1e-6)
    for a, b in zip(v1, v2):  # weights and BatchNormalization's moving statistics
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


class Peek(layers.Layer):
    def call(self, x):
        if float(ops.convert_to_numpy(ops.sum(x))) > 0:  # control flow on values
            return x * 2
        return x


def test_untraceable_model_falls_back_with_one_warning():
    model = keras.Sequential([keras.Input((2,)), Peek(), layers.Dense(1)])
    model.compile("sgd", "mse", jit_compile=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=2, verbose=0)
    msgs = [str(m.message) for m in w if "jit_compile" in str(m.message)]
    assert len(msgs) == 1 and "run eagerly" in msgs[0], msgs
    assert model._kbackend_compiled.failed


def test_auto_jit_compile_is_on():
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    assert model.jit_compile is True
    x, y = np.ones((4, 2), "float32"), np.ones((4, 1), "float32")
    model.fit(x, y, verbose=0)
    steps = model._kbackend_compiled
    assert not steps.ready("train", x, y)  # one batch: warmed up only
    model.fit(x, y, batch_size=2, verbose=0)  # second batch traces
    assert steps.failed is None and steps.ready("train", x[:2], y[:2])
    assert not steps.ready("train", x[:3], y[:3])  # another signature
    model.compile("sgd", "mse", run_eagerly=True)
    model.fit(np.ones((4, 2)), np.ones((4, 1)), verbose=0)
