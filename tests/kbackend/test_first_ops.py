"""The first backend functions, through keras.ops, against NumPy."""
from __future__ import annotations

import keras
import numpy as np
import pytest
from keras import ops

import core

n = ops.convert_to_numpy
_rng = np.random.default_rng(0)
A = _rng.standard_normal((2, 3)).astype("float32")
B = _rng.standard_normal((2, 3)).astype("float32")
XS = _rng.random((5, 4)).astype("float32")  # the model's input, drawn after A and B
I = np.arange(4, dtype="int32")  # noqa: E741


def close(got, want, **kw):
    assert ops.is_tensor(got), type(got)
    np.testing.assert_allclose(n(got), want, rtol=1e-5, atol=1e-6, **kw)
    assert str(n(got).dtype) == str(np.asarray(want).dtype), (got.dtype, want)


def _softmax(a):
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("got, want", [
    pytest.param(lambda: ops.add(A, B), lambda: A + B, id="add"),
    pytest.param(lambda: ops.subtract(A, B), lambda: A - B, id="subtract"),
    pytest.param(lambda: ops.multiply(A, 2.0), lambda: A * 2, id="multiply"),
    pytest.param(lambda: ops.divide(A, 2.0), lambda: A / 2, id="divide"),
    pytest.param(lambda: ops.matmul(A, B.T), lambda: A @ B.T, id="matmul"),
    pytest.param(lambda: ops.mean(A, axis=0), lambda: A.mean(axis=0), id="mean"),
    pytest.param(lambda: ops.sum(A, axis=1, keepdims=True),
                 lambda: A.sum(axis=1, keepdims=True), id="sum"),
    pytest.param(lambda: ops.max(A), lambda: A.max(), id="max"),
    pytest.param(lambda: ops.reshape(A, (3, 2)), lambda: A.reshape(3, 2), id="reshape"),
    pytest.param(lambda: ops.transpose(A), lambda: A.T, id="transpose"),
    pytest.param(lambda: ops.exp(A), lambda: np.exp(A), id="exp"),
    pytest.param(lambda: ops.where(A > 0, A, B), lambda: np.where(A > 0, A, B), id="where"),
    pytest.param(lambda: ops.concatenate([A, B], axis=0), lambda: np.concatenate([A, B]),
                 id="concatenate"),
    pytest.param(lambda: ops.stack([A, B], axis=1), lambda: np.stack([A, B], axis=1),
                 id="stack"),
    pytest.param(lambda: ops.zeros((2, 2)), lambda: np.zeros((2, 2), "float32"), id="zeros"),
    pytest.param(lambda: ops.ones((3,), dtype="int32"), lambda: np.ones(3, "int32"),
                 id="ones"),
    pytest.param(lambda: ops.relu(A), lambda: np.maximum(A, 0), id="relu"),
    pytest.param(lambda: ops.sigmoid(A), lambda: 1 / (1 + np.exp(-A)), id="sigmoid"),
    pytest.param(lambda: ops.softmax(A), lambda: _softmax(A), id="softmax"),
    # Keras' dtype rules: ints become float32 in float functions and means.
    pytest.param(lambda: ops.mean(I), lambda: np.float32(1.5), id="int_mean"),
    pytest.param(lambda: ops.sqrt(I), lambda: np.sqrt(I).astype("float32"), id="int_sqrt"),
    pytest.param(lambda: ops.add(I, 1), lambda: I + 1, id="int_add"),
    pytest.param(lambda: ops.stop_gradient(A), lambda: A, id="stop_gradient"),
    pytest.param(lambda: ops.slice(A, (0, 0), (1, 1)), lambda: A[:1, :1], id="slice"),
])
def test_numpy_nn_ops_against_numpy(got, want):
    close(got(), want())


def test_conversion_cast_shape_and_control_flow():
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
    close(carry, np.float32(6))
    close(ys, np.array([0, 0, 2, 6], "float32"))
    close(ops.map(lambda x: x * 2, np.arange(3, dtype="float32")),
          np.array([0, 2, 4], "float32"))
    parts = ops.unstack(A, axis=1)
    assert len(parts) == 3
    close(parts[1], A[:, 1])


def test_variables_hold_core_arrays_assigned_in_place():
    v = keras.Variable(np.ones((2, 2), "float32"))
    held = v.value
    assert isinstance(held, core.NDArray)
    v.assign(np.full((2, 2), 3.0, "float32"))
    v.assign_add(np.ones((2, 2), "float32"))
    v.assign_sub(np.full((2, 2), 0.5, "float32"))
    assert v.value is held
    np.testing.assert_array_equal(n(held), np.full((2, 2), 3.5, "float32"))


def test_compute_output_spec_keeps_unknown_dimensions():
    x = keras.KerasTensor((None, 3), "float32")
    y = ops.matmul(x, keras.KerasTensor((3, 5), "float32"))
    assert y.shape == (None, 5) and y.dtype == "float32", (y.shape, y.dtype)


def test_functional_model_forward():
    inp = keras.Input((4,))
    model = keras.Model(inp, keras.layers.Dense(3, activation="relu")(inp))
    w, bias = model.layers[1].get_weights()
    close(model(XS), np.maximum(XS @ w + bias, 0))


def test_device_scope_places_arrays():
    with keras.device("cpu:1"):
        assert ops.ones((2,)).context == core.cpu(1)
