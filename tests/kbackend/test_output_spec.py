"""``compute_output_spec``: abstract evaluation first, the concrete run as fallback."""
from __future__ import annotations

import keras
from keras import ops

from .conftest import check, run_python

_LAYERS = """
import os, sys
import numpy as np
import keras
from keras import layers, ops
from kbackend import core as kc

class Block(keras.layers.Layer):  # no compute_output_shape: Keras asks the backend
    def build(self, shape):
        self.conv = layers.Conv2D(8, 3, padding="same")
        self.norm = layers.BatchNormalization()
        self.dense = layers.Dense(5)
    def call(self, x):
        y = ops.relu(self.norm(self.conv(x)))
        y = ops.mean(y, axis=(1, 2))
        return self.dense(y), ops.cast(ops.argmax(y, axis=-1), "int32")

class ReadsValues(keras.layers.Layer):
    def call(self, x):
        n = int(ops.convert_to_numpy(ops.shape(x)[-1] + ops.sum(x * 0)))
        return ops.reshape(x, (-1, n))

class ValueShape(keras.layers.Layer):
    def call(self, x):
        return x[x > 0.5]

def specs(layer, *shapes):
    inputs = [keras.Input(s[1:], batch_size=s[0]) for s in shapes]
    outs = layer(*inputs)
    return [(tuple(o.shape), o.dtype) for o in keras.tree.flatten(outs)]

cases = [
    (Block(), (None, 16, 16, 3)),
    (Block(), (4, 9, 7, 2)),
    (ReadsValues(), (None, 6)),
    (ValueShape(), (None, 3)),
    (layers.Lambda(lambda t: ops.concatenate([t, t * 2], axis=1)), (None, 3)),
    (layers.LSTM(4, return_sequences=True), (None, 5, 3)),
]
for layer, shape in cases:
    print(type(layer).__name__, specs(layer, shape))
"""


def _run(abstract: bool):
    # A fresh interpreter: kbackend.core reads both variables once, at import.
    env = {"KBACKEND_ABSTRACT_OUTPUT_SPEC": "1" if abstract else "0",
           "KBACKEND_OUTPUT_SPEC_DEBUG": "1"}
    return run_python(_LAYERS, "kbackend", timeout=300, env=env)


def test_abstract_specs_equal_concrete_specs():
    abstract = _run(True)
    concrete = _run(False)
    out_a, out_c = check(abstract), check(concrete)
    assert out_a == out_c
    assert "Block [((None, 5), 'float32'), ((None,), 'int32')]" in out_a
    # the layers reading values or with value-dependent shapes fell back, no others
    fallbacks = [ln for ln in abstract.stderr.splitlines() if "concrete fallback" in ln]
    assert len(fallbacks) == 2, abstract.stderr
    assert "ReadsValues.call" in fallbacks[0] and "ValueShape.call" in fallbacks[1]
    assert "concrete fallback" not in concrete.stderr


class _Big(keras.layers.Layer):
    def call(self, x):
        return ops.softmax(ops.matmul(x, ops.transpose(x, (0, 2, 1))) * 0.5)


def test_huge_shapes_need_no_memory():
    # Concretely this would allocate 83 * 200000 * 200000 floats; abstractly nothing.
    y = _Big()(keras.Input((200000, 200000)))
    assert (tuple(y.shape), y.dtype) == ((None, 200000, 200000), "float32")
