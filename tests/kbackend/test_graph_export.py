"""kbackend.graph_export: a Keras model's inference graph, independent of its None axes.

The exported graph is run by core's own executor (Symbol.eval) at sizes other than the
traced ones and must give what model.predict gives.
"""
from __future__ import annotations

import keras
import numpy as np
import pytest
from keras import layers

from core import nd
from core.symbol.symbol import Symbol
from kbackend.graph_export import ExportError, trace_model


def _run(exported, feeds):
    s = Symbol.from_graph(exported.graph)
    args = {k: nd.array(v) for k, v in exported.params.items()}
    args.update({k: nd.array(v) for k, v in feeds.items()})
    return [o.asnumpy() for o in s.eval(**args)]


def test_dynamic_batch_sequence_and_image_axes():
    keras.utils.set_random_seed(0)
    a = keras.Input((None, 6), name="text")
    b = keras.Input((None, None, 3), name="image")
    t = layers.GlobalAveragePooling1D()(layers.Dense(4, activation="relu")(a))
    i = layers.GlobalMaxPooling2D()(layers.Conv2D(5, 3, padding="same")(b))
    seq = layers.LSTM(3)(a)  # zero initial states of the traced batch size
    model = keras.Model([a, b], layers.Dense(2)(layers.Concatenate()([t, i, seq])))
    exported = trace_model(model)
    assert [s.name for s in exported.inputs] == ["text", "image"]
    assert exported.inputs[1].shape == (None, None, None, 3)
    rng = np.random.default_rng(0)
    for n, steps, h, w in [(1, 4, 5, 7), (5, 9, 8, 8)]:
        xa = rng.standard_normal((n, steps, 6)).astype("float32")
        xb = rng.standard_normal((n, h, w, 3)).astype("float32")
        (got,) = _run(exported, {"text": xa, "image": xb})
        np.testing.assert_allclose(got, model.predict([xa, xb], verbose=0), rtol=1e-5,
                                   atol=1e-6)


def test_nodes_and_params_are_named_after_layers():
    model = keras.Sequential([keras.Input((4,)), layers.Dense(3, name="hidden"),
                              layers.Dense(2, name="head")])
    exported = trace_model(model)
    assert set(exported.params) == {"hidden_kernel", "hidden_bias", "head_kernel",
                                    "head_bias"}
    assert exported.variables["hidden_kernel"] == "sequential/hidden/kernel"
    ops = [n.name for n in exported.graph.topo() if n.op is not None]
    assert ops and all(n.split("/")[0] in ("hidden", "head") for n in ops)
    assert exported.output_names == ["head"]


def test_a_constant_that_depends_on_the_batch_is_refused():
    def add_row_index(x):
        return x + keras.ops.expand_dims(
            keras.ops.arange(keras.ops.shape(x)[0], dtype="float32"), -1)

    model = keras.Sequential([keras.Input((3,)), layers.Lambda(add_row_index)])
    with pytest.raises(ExportError, match="depends on the input sizes"):
        trace_model(model)
