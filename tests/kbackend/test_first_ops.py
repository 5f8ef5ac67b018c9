"""The first backend functions, through keras.ops, against NumPy (one subprocess)."""
from __future__ import annotations

from .conftest import check, run_python


def test_core_numpy_nn_ops(hook_installed):
    out = check(run_python("""
        import numpy as np
        import keras
        from keras import ops
        import core

        rng = np.random.default_rng(0)
        a = rng.standard_normal((2, 3)).astype("float32")
        b = rng.standard_normal((2, 3)).astype("float32")
        n = ops.convert_to_numpy

        def close(got, want, **kw):
            assert ops.is_tensor(got), type(got)
            np.testing.assert_allclose(n(got), want, rtol=1e-5, atol=1e-6, **kw)
            assert str(n(got).dtype) == str(np.asarray(want).dtype), (got.dtype, want)

        close(ops.add(a, b), a + b)
        close(ops.subtract(a, b), a - b)
        close(ops.multiply(a, 2.0), a * 2)
        close(ops.divide(a, 2.0), a / 2)
        close(ops.matmul(a, b.T), a @ b.T)
        close(ops.mean(a, axis=0), a.mean(axis=0))
        close(ops.sum(a, axis=1, keepdims=True), a.sum(axis=1, keepdims=True))
        close(ops.max(a), a.max())
        close(ops.reshape(a, (3, 2)), a.reshape(3, 2))
        close(ops.transpose(a), a.T)
        close(ops.exp(a), np.exp(a))
        close(ops.where(a > 0, a, b), np.where(a > 0, a, b))
        close(ops.concatenate([a, b], axis=0), np.concatenate([a, b]))
        close(ops.stack([a, b], axis=1), np.stack([a, b], axis=1))
        close(ops.zeros((2, 2)), np.zeros((2, 2), "float32"))
        close(ops.ones((3,), dtype="int32"), np.ones(3, "int32"))
        close(ops.relu(a), np.maximum(a, 0))
        close(ops.sigmoid(a), 1 / (1 + np.exp(-a)))
        e = np.exp(a - a.max(axis=-1, keepdims=True))
        close(ops.softmax(a), e / e.sum(axis=-1, keepdims=True))
        # Keras' dtype rules: ints become float32 in float functions and means.
        i = np.arange(4, dtype="int32")
        close(ops.mean(i), np.float32(1.5))
        close(ops.sqrt(i), np.sqrt(i).astype("float32"))
        close(ops.add(i, 1), i + 1)

        # core: conversion, cast, shape, control flow.
        t = ops.convert_to_tensor([[1, 2], [3, 4]])
        assert isinstance(t, core.NDArray) and str(t.dtype) == "int32", t.dtype
        assert ops.shape(t) == (2, 2)
        close(ops.cast(t, "float16"), np.array([[1, 2], [3, 4]], "float16"))
        assert int(n(ops.cond(True, lambda: 1, lambda: 2))) == 1
        assert int(n(ops.switch(1, [lambda x: x + 1, lambda x: x * 10], 3))) == 30
        assert int(n(ops.while_loop(lambda i: i < 5, lambda i: i + 1, 0))) == 5
        assert int(n(ops.fori_loop(0, 4, lambda i, v: v + i, 0))) == 6
        carry, ys = ops.scan(lambda c, x: (c + x, c * 2), np.float32(0),
                             np.arange(4, dtype="float32"))
        close(carry, np.float32(6)); close(ys, np.array([0, 0, 2, 6], "float32"))
        close(ops.map(lambda x: x * 2, np.arange(3, dtype="float32")),
              np.array([0, 2, 4], "float32"))
        parts = ops.unstack(a, axis=1)
        assert len(parts) == 3; close(parts[1], a[:, 1])
        close(ops.stop_gradient(a), a)

        # Variables hold core arrays and are assigned in place.
        v = keras.Variable(np.ones((2, 2), "float32"))
        held = v.value
        assert isinstance(held, core.NDArray)
        v.assign(np.full((2, 2), 3.0, "float32"))
        v.assign_add(np.ones((2, 2), "float32"))
        v.assign_sub(np.full((2, 2), 0.5, "float32"))
        assert v.value is held
        np.testing.assert_array_equal(n(held), np.full((2, 2), 3.5, "float32"))

        # compute_output_spec: symbolic shapes, unknown dimensions kept unknown.
        x = keras.KerasTensor((None, 3), "float32")
        y = ops.matmul(x, keras.KerasTensor((3, 5), "float32"))
        assert y.shape == (None, 5) and y.dtype == "float32", (y.shape, y.dtype)

        # A functional model's forward pass.
        inp = keras.Input((4,))
        model = keras.Model(inp, keras.layers.Dense(3, activation="relu")(inp))
        xs = rng.random((5, 4)).astype("float32")
        w, bias = model.layers[1].get_weights()
        close(model(xs), np.maximum(xs @ w + bias, 0))

        # Devices.
        with keras.device("cpu:1"):
            assert ops.ones((2,)).context == core.cpu(1)

        close(ops.slice(a, (0, 0), (1, 1)), a[:1, :1])
        print("ok")
    """, keras_backend="kbackend"))
    assert out.strip() == "ok"
