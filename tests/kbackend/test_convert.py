"""kbackend convert_to_tensor: lists of tensors stay on the autograd tape."""
from __future__ import annotations

import keras
import numpy as np
import pytest
from keras import layers, ops

import core
from core import autograd


def test_list_of_tensors_keeps_gradients_and_regularizers_train():
    a = core.nd.array([1.0, 2.0])
    a.attach_grad()
    with autograd.record():
        s = ops.sum(ops.convert_to_tensor([[a[0] * 2], [a[1] * 3.0]]))
    s.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), [2.0, 3.0])
    assert ops.convert_to_tensor([[1, 2], [3, 4]]).dtype == "int32"
    assert ops.convert_to_tensor([a[0], 3]).dtype == "float32"

    # Keras sums the model loss and the regularizer losses as a Python list.
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), layers.Dense(3, kernel_regularizer="l2")])
    model.compile("sgd", "mse")
    x = np.random.rand(8, 4).astype("float32")
    y = np.random.rand(8, 3).astype("float32")
    w0 = model.layers[0].kernel.numpy().copy()
    hist = model.fit(x, y, epochs=2, verbose=0).history["loss"]
    assert hist[1] < hist[0], hist
    assert np.abs(model.layers[0].kernel.numpy() - w0).max() > 0


@pytest.mark.parametrize("bad, words", [
    (np.array(["a"]), "strings"), (["a", "b"], "string"), (np.array([1 + 2j]), "complex128"),
])
def test_strings_and_complex_are_refused_naming_the_op(bad, words):
    with pytest.raises(TypeError, match="convert_to_tensor") as info:
        ops.convert_to_tensor(bad)
    assert words in str(info.value)
