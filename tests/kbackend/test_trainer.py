"""model.fit / evaluate / predict on kbackend: Sequential, functional and subclassed
models (a custom train_step), optimizers checked against NumPy, progress bar,
validation and callbacks, the *_on_batch methods, jit_compile, mixed precision,
steps_per_execution, the in-place loss tracker, and steps whose loss is constant or
which assign a variable."""
from __future__ import annotations

import keras
import numpy as np
import pytest
from keras import layers, ops

import core
from core import autograd
from kbackend.trainer import mark_trainable, update_loss_tracker


@pytest.fixture
def data():
    """256 samples of 4 features; three classes, separable by the signs of the first two."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 4)).astype("float32")
    y = ((x[:, 0] > 0).astype("int32") + (x[:, 1] > 0).astype("int32"))
    keras.utils.set_random_seed(0)
    return x, y


def test_sequential_fit_evaluate_predict(data):
    x, y = data
    model = keras.Sequential([keras.Input((4,)), layers.Dense(16, activation="relu"),
                              layers.Dense(3, activation="softmax")])
    model.compile(optimizer=keras.optimizers.Adam(0.02),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    kernel = model.layers[0].kernel
    before = ops.convert_to_numpy(kernel).copy()
    array = kernel.value
    h = model.fit(x, y, epochs=8, batch_size=32, verbose=0)
    loss, acc = h.history["loss"], h.history["accuracy"]
    assert len(loss) == 8 and loss[-1] < loss[0] * 0.5, loss
    assert acc[-1] > 0.9, acc
    # The optimizer updated the variable's core array in place.
    assert kernel.value is array
    assert isinstance(kernel.value, core.NDArray)
    assert not np.allclose(ops.convert_to_numpy(kernel), before)
    ev = model.evaluate(x, y, batch_size=64, verbose=0)
    assert len(ev) == 2 and ev[1] > 0.9, ev
    d = model.evaluate(x, y, verbose=0, return_dict=True)
    assert set(d) == {"loss", "accuracy"}, d
    p = model.predict(x[:50], batch_size=16, verbose=0)
    assert isinstance(p, np.ndarray) and p.shape == (50, 3), p.shape
    np.testing.assert_allclose(p.sum(axis=1), 1, rtol=1e-5)
    assert (p.argmax(1) == y[:50]).mean() > 0.85


def test_fit_progress_bar_validation_and_callbacks(data):
    x, y = data
    model = keras.Sequential([keras.Input((4,)), layers.Dense(8, activation="relu"),
                              layers.Dense(3)])
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    seen = []
    cb = keras.callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: seen.append((epoch, sorted(logs))))
    target = np.eye(3, dtype="float32")[y]
    h = model.fit(x, target, epochs=2, batch_size=64, validation_split=0.25,
                  callbacks=[cb], verbose=1)
    assert [e for e, _ in seen] == [0, 1], seen
    assert seen[0][1] == ["loss", "mae", "val_loss", "val_mae"], seen
    assert h.history["loss"][1] < h.history["loss"][0], h.history
    # train_on_batch / test_on_batch / predict_on_batch.
    logs = model.train_on_batch(x[:8], target[:8], return_dict=True)
    assert set(logs) == {"loss", "mae"}, logs
    assert len(model.test_on_batch(x[:8], target[:8])) == 2
    assert model.predict_on_batch(x[:5]).shape == (5, 3)


def test_functional_model_sgd_momentum(data):
    x, y = data
    inputs = keras.Input((4,))
    h = layers.Dense(16, activation="relu")(inputs)
    outputs = layers.Dense(3, activation="softmax")(h)
    model = keras.Model(inputs, outputs)
    opt = keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)
    model.compile(optimizer=opt, loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    hist = model.fit(x, y, epochs=8, batch_size=32, verbose=0).history
    assert hist["loss"][-1] < hist["loss"][0] * 0.5, hist["loss"]
    assert hist["accuracy"][-1] > 0.9, hist["accuracy"]
    assert int(opt.iterations.numpy()) == 8 * 8, opt.iterations
    assert model.predict(x, verbose=0).shape == (256, 3)


def test_sgd_momentum_matches_numpy(data):
    # One linear layer, MSE, two SGD-with-momentum steps, checked by hand.
    x, y = data
    model = keras.Sequential([keras.Input((4,)),
                              layers.Dense(1, use_bias=False, kernel_initializer="ones")])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01, momentum=0.9),
                  loss="mse")
    xb, yb = x[:16], y[:16, None].astype("float32")
    w = np.ones((4, 1), "float32")
    m = np.zeros_like(w)
    for _ in range(2):
        model.train_on_batch(xb, yb)
        g = 2 * xb.T @ (xb @ w - yb) / len(xb)
        m = 0.9 * m - 0.01 * g
        w = w + m
    np.testing.assert_allclose(ops.convert_to_numpy(model.layers[0].kernel), w,
                               rtol=1e-4, atol=1e-6)


def test_custom_train_step(data):
    x, y = data

    class Custom(keras.Model):
        steps = 0

        def train_step(self, data):
            xb, yb = data
            Custom.steps += 1
            weights = self.trainable_weights
            mark_trainable(weights)
            with autograd.record():
                pred = self(xb, training=True)
                loss = self.compute_loss(x=xb, y=yb, y_pred=pred)
            grads = autograd.grad(loss, [v.value for v in weights])
            self.optimizer.apply(grads, weights)
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(yb, pred)
            return {m.name: m.result() for m in self.metrics}

    inputs = keras.Input((4,))
    outputs = layers.Dense(3, activation="softmax")(
        layers.Dense(16, activation="relu")(inputs))
    model = Custom(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(0.02),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    hist = model.fit(x, y, epochs=6, batch_size=32, verbose=0).history
    assert Custom.steps == 6 * 8, Custom.steps
    assert hist["loss"][-1] < hist["loss"][0], hist
    assert model.evaluate(x, y, verbose=0)[1] > 0.85


def test_jit_compile_is_accepted(data):
    x, _ = data
    model = keras.Sequential([keras.Input((4,)), layers.Dense(3)])
    model.compile(optimizer="sgd", loss="mse", jit_compile=True)
    model.fit(x, np.zeros((256, 3), "float32"), epochs=1, verbose=0)
    assert model.predict(x, verbose=0).shape == (256, 3)


def test_mixed_precision_and_unused_weight(data):
    x, y = data
    keras.config.set_dtype_policy("mixed_float16")

    class WithUnused(layers.Layer):
        def build(self, input_shape):
            self.unused = self.add_weight(shape=(2,), initializer="ones")

        def call(self, inputs):
            return inputs

    model = keras.Sequential([keras.Input((4,)), layers.Dense(16, activation="relu"),
                              WithUnused(),
                              layers.Dense(3, activation="softmax", dtype="float32")])
    model.compile(optimizer=keras.optimizers.Adam(0.02),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    assert type(model.optimizer).__name__ == "LossScaleOptimizer"
    hist = model.fit(x, y, epochs=5, batch_size=32, verbose=0).history
    assert hist["loss"][-1] < hist["loss"][0], hist
    assert model.layers[0].kernel.dtype == "float32"
    # A weight the loss does not depend on gets a zero gradient: unchanged.
    np.testing.assert_array_equal(ops.convert_to_numpy(model.layers[1].unused), [1, 1])


def test_loss_tracker_in_place_matches_keras_mean(data):
    x, y = data
    ref, fast = keras.metrics.Mean(), keras.metrics.Mean()
    for value, n in [(1.5, 128), (2.25, 96), (0.3, 7)]:
        loss = ops.convert_to_tensor(np.float32(value))
        ref.update_state(loss, sample_weight=n)
        update_loss_tracker(fast, loss, n)
    for a, b in [(ref.total, fast.total), (ref.count, fast.count)]:
        np.testing.assert_allclose(ops.convert_to_numpy(a), ops.convert_to_numpy(b),
                                   rtol=1e-6)
    np.testing.assert_allclose(float(ref.result()), float(fast.result()), rtol=1e-6)

    # Any other tracker (here a Sum) takes Keras' own update_state.
    other = keras.metrics.Sum()
    update_loss_tracker(other, ops.convert_to_tensor(np.float32(2.0)), 10)
    assert float(other.result()) == 20.0

    # fit's loss history is the sample-weighted mean of the batch losses.
    model = keras.Sequential([keras.Input((4,)), layers.Dense(3, activation="softmax")])
    model.compile(optimizer=keras.optimizers.SGD(0.0),
                  loss="sparse_categorical_crossentropy")
    h = model.fit(x[:100], y[:100], batch_size=32, epochs=1, verbose=0, shuffle=False)
    ev = model.evaluate(x[:100], y[:100], batch_size=100, verbose=0)
    np.testing.assert_allclose(h.history["loss"][0], ev, rtol=1e-5)


def test_steps_per_execution_runs_every_batch(data):
    x, y = data

    def train(spe):
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input((4,)), layers.Dense(3, activation="softmax")])
        model.compile(optimizer=keras.optimizers.SGD(0.1),
                      loss="sparse_categorical_crossentropy", steps_per_execution=spe)
        h = model.fit(x[:100], y[:100], batch_size=10, epochs=2, verbose=0,
                      shuffle=False)
        return model, h.history["loss"]

    m1, l1 = train(1)
    m3, l3 = train(3)  # 10 batches per epoch: groups of 3, 3, 3 and 1
    assert int(m3.optimizer.iterations.numpy()) == 20
    for a, b in zip(m1.get_weights(), m3.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(l1, l3, rtol=1e-6)
    p1 = m1.predict(x, batch_size=16, verbose=0)
    p3 = m3.predict(x, batch_size=16, verbose=0)
    assert p3.shape == (256, 3)
    np.testing.assert_allclose(p1, p3, rtol=1e-6, atol=1e-7)
    e1 = m1.evaluate(x, y, batch_size=16, verbose=0)
    e3 = m3.evaluate(x, y, batch_size=16, verbose=0)
    np.testing.assert_allclose(e1, e3, rtol=1e-6)


def test_constant_loss_gives_zero_gradients_and_assign_inside_a_step(data):
    x, y = data

    # A loss that does not depend on the weights: zero gradients, as on TF/JAX/torch.
    class Constant(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = layers.Dense(2)

        def call(self, inputs):
            return self.dense(inputs)

        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None,
                         training=True):
            return keras.ops.convert_to_tensor(1.5)

    model = Constant()
    model.compile(optimizer=keras.optimizers.SGD(0.1))
    model(x[:2])
    w0 = [w.copy() for w in model.get_weights()]
    h = model.fit(x[:20], y[:20], batch_size=10, epochs=1, verbose=0)
    assert h.history["loss"][0] == 1.5
    for a, b in zip(w0, model.get_weights()):
        np.testing.assert_array_equal(a, b)

    # SpectralNormalization assigns its kernel inside the recorded step.
    keras.utils.set_random_seed(0)
    sn = keras.Sequential([keras.Input((4,)),
                           layers.SpectralNormalization(layers.Dense(3))])
    sn.compile(optimizer="sgd", loss="mse")
    hist = sn.fit(x[:64], np.ones((64, 3), "float32"), epochs=3, verbose=0)
    assert all(np.isfinite(hist.history["loss"])), hist.history
    kernel = sn.layers[0].layer.kernel.numpy()
    # power-iteration estimate, then one SGD step
    assert np.linalg.norm(kernel, 2) < 1.5, np.linalg.norm(kernel, 2)
