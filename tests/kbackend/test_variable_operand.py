"""A Keras Variable on the right of a core operator (``ndarray * variable``) stays
differentiable: core unwraps it through ``__core_ndarray__``, eager and traced."""
from __future__ import annotations

import keras
import numpy as np
import pytest

import core
from kbackend import trainer


def test_tensor_times_variable_reaches_the_variable():
    v = keras.Variable(np.ones(3, "float32"))
    (arr,) = trainer.mark_trainable([v])
    x = keras.ops.ones((3,)) * 2
    with core.autograd.record():
        loss = (x * v).sum() + (x + v).sum() + (x - v).sum()
    assert core.autograd.grad(loss, [arr])[0].asnumpy().tolist() == [2.0, 2.0, 2.0]


class Scale(keras.layers.Layer):
    def build(self, shape):
        self.a = self.add_weight(shape=(), initializer="ones")

    def call(self, x):
        return x * self.a  # the tensor on the left


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_layer_computing_tensor_times_weight_trains_it(jit):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((2,)), Scale()])
    model.compile("sgd", "mse", jit_compile=jit)
    model.fit(np.ones((8, 2)), np.zeros((8, 2)), batch_size=4, epochs=2, verbose=0)
    a = float(model.layers[0].a.numpy())
    assert abs(a - 0.98 ** 4) < 1e-6, (jit, a)
    if jit:
        assert model._kbackend_compiled.failed is None
