"""Keras preprocessing layers reach kbackend through Keras' DynamicBackend."""
from __future__ import annotations

import keras
import numpy as np
from keras import layers
from keras.src.utils.backend_utils import DynamicBackend


def test_preprocessing_layers_run_on_kbackend():
    assert DynamicBackend().numpy.add is keras.src.backend.numpy.add
    x = np.arange(12, dtype="float32").reshape(3, 4)
    norm = layers.Normalization()
    norm.adapt(x)
    y = keras.ops.convert_to_numpy(norm(x))
    np.testing.assert_allclose(y, (x - x.mean(0)) / x.std(0), rtol=1e-5, atol=1e-5)
    enc = layers.CategoryEncoding(num_tokens=4, output_mode="count")
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(enc([[0, 1, 1, 3]])),
                                  [[1, 2, 0, 1]])
    img = np.random.rand(2, 8, 8, 3).astype("float32")
    out = layers.Resizing(4, 4)(img)
    assert tuple(out.shape) == (2, 4, 4, 3)
