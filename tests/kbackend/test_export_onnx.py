"""model.export(path, format="onnx") on kbackend: onnxruntime predicts what Keras does.

The import hook adds kbackend's branch to Keras' export_onnx; the file is written by
kbackend.onnx_export through core.onnx.export_graph. Keras' own onnx_test.py runs at the
end with its backend skip lifted (it needs absl; skipped where absl is missing).
"""
from __future__ import annotations

import importlib.util

import keras
import numpy as np
import pytest
from keras import layers

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")
if importlib.util.find_spec("core.onnx.export") is None:
    pytest.skip("core.onnx.export (the ONNX exporter) is not in this tree",
                allow_module_level=True)

BATCHES = (1, 5)


def _session(path):
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def _check(model, path, xs_by_batch, rtol=1e-5, atol=1e-6):
    sess = _session(path)
    names = [i.name for i in sess.get_inputs()]
    for xs in xs_by_batch:
        want = model.predict(xs if len(xs) > 1 else xs[0], verbose=0)
        want = want if isinstance(want, list) else [want]
        got = sess.run(None, dict(zip(names, xs)))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, np.asarray(w), rtol=rtol, atol=atol)
    return sess


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


def test_hook_patches_keras_export_onnx():
    from keras.src.export import onnx as keras_onnx

    assert type(keras_onnx.__spec__.loader).__name__ == "PatchingLoader"


def test_sequential_mlp_batch_1_and_5(tmp_path):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((10,)), layers.Dense(10, activation="relu"),
                              layers.BatchNormalization(), layers.Dropout(0.5),
                              layers.Dense(1, activation="sigmoid")])
    model.layers[1].moving_mean.assign(np.linspace(-1, 1, 10).astype("float32"))
    model(_rand(1, 10))
    path = tmp_path / "mlp.onnx"
    model.export(str(path), format="onnx", verbose=False)
    sess = _check(model, path, [[_rand(b, 10, seed=b)] for b in BATCHES])
    (inp,) = sess.get_inputs()
    assert inp.shape[0] == "batch" and inp.shape[1:] == [10]


def test_cnn_channels_last(tmp_path):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([
        keras.Input((12, 12, 3)),
        layers.Conv2D(4, 3, padding="same", activation="relu"),
        layers.MaxPooling2D(),
        layers.DepthwiseConv2D(3),
        layers.Conv2DTranspose(2, 3, strides=2),
        layers.AveragePooling2D(2),
        layers.Flatten(),
        layers.Dense(8, activation="gelu"),
        layers.Dense(3, activation="softmax"),
    ])
    model(_rand(1, 12, 12, 3))  # Keras exports only models that have been called
    path = tmp_path / "cnn.onnx"
    model.export(str(path), format="onnx", verbose=False)
    _check(model, path, [[_rand(b, 12, 12, 3, seed=b)] for b in BATCHES])


def test_functional_multi_input_multi_output_names(tmp_path):
    keras.utils.set_random_seed(0)
    a = keras.Input((6,), name="left")
    b = keras.Input((6,), name="right")
    h = layers.Concatenate()([layers.Dense(4, activation="swish")(a), b])
    s = layers.Add()([layers.Dense(6, activation="elu")(h), a])
    model = keras.Model([a, b], [layers.Dense(2)(layers.Multiply()([s, b])),
                                 layers.LayerNormalization()(s)])
    model([_rand(1, 6), _rand(1, 6)])
    path = tmp_path / "multi.onnx"
    model.export(str(path), format="onnx", verbose=False)
    sess = _check(model, path, [[_rand(n, 6, seed=n), _rand(n, 6, seed=n + 9)]
                                for n in BATCHES])
    assert [i.name for i in sess.get_inputs()] == ["left", "right"]


def test_recurrent_and_embedding(tmp_path):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((5, 4)), layers.LSTM(3, return_sequences=True),
                              layers.GRU(2), layers.Dense(2)])
    model(_rand(1, 5, 4))
    path = tmp_path / "rnn.onnx"
    model.export(str(path), format="onnx", verbose=False)
    _check(model, path, [[_rand(b, 5, 4, seed=b)] for b in BATCHES])
    emb = keras.Sequential([keras.Input((5,), dtype="int32"), layers.Embedding(10, 4),
                            layers.GlobalAveragePooling1D(), layers.Dense(2)])
    emb(np.zeros((1, 5), "int32"))
    path = tmp_path / "emb.onnx"
    emb.export(str(path), format="onnx", verbose=False)
    rng = np.random.default_rng(0)
    _check(emb, path, [[rng.integers(0, 10, (b, 5)).astype("int32")] for b in BATCHES])


def test_input_signature_names_and_subclassed_model(tmp_path):
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.hidden = layers.Dense(4, activation="tanh")
            self.out = layers.Dense(2)

        def call(self, x):
            return self.out(self.hidden(x))

    net = Net()
    net(_rand(2, 3))
    path = tmp_path / "net.onnx"
    spec = keras.InputSpec(name="custom_input", shape=(None, 3), dtype="float32")
    net.export(str(path), format="onnx", input_signature=[spec], verbose=False)
    sess = _check(net, path, [[_rand(b, 3, seed=b)] for b in BATCHES])
    assert [i.name for i in sess.get_inputs()] == ["custom_input"]
    path = tmp_path / "default.onnx"
    net.export(str(path), format="onnx", verbose=False)
    assert [i.name for i in _session(path).get_inputs()] == ["input_0"]


def test_dynamic_height_and_width(tmp_path):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((None, None, 3)),
                              layers.Conv2D(4, 3, padding="same", activation="relu"),
                              layers.GlobalAveragePooling2D(),
                              layers.Dense(3, activation="softmax")])
    model(_rand(1, 8, 8, 3))
    path = tmp_path / "dyn.onnx"
    model.export(str(path), format="onnx", verbose=False)
    sess = _check(model, path, [[_rand(1, 9, 7, 3)], [_rand(2, 16, 12, 3)]])
    assert sess.get_inputs()[0].shape[:3] == ["batch", "dim_0_1", "dim_0_2"]


def test_opset_version_and_message(tmp_path, capsys):
    import onnx

    model = keras.Sequential([keras.Input((3,)), layers.Dense(2)])
    model(_rand(1, 3))
    path = tmp_path / "m.onnx"
    model.export(str(path), format="onnx", opset_version=17)
    assert f"Saved artifact at '{path}'." in capsys.readouterr().out
    proto = onnx.load(str(path))
    assert max(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")) == 17
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_operator_without_onnx_form_names_the_layer(tmp_path):
    # ONNX has no cumulative product (CumSum only)
    model = keras.Sequential([keras.Input((6,)), layers.Dense(4),
                              layers.Lambda(lambda x: keras.ops.cumprod(x, axis=-1),
                                            name="running_product")])
    model(_rand(1, 6))
    with pytest.raises(ValueError, match=r"running_product/cumprod"):
        model.export(str(tmp_path / "m.onnx"), format="onnx", verbose=False)
    assert not list(tmp_path.iterdir())


def test_saved_model_still_unsupported(tmp_path):
    model = keras.Sequential([keras.Input((3,)), layers.Dense(2)])
    model(_rand(1, 3))
    with pytest.raises(NotImplementedError, match="tf_saved_model"):
        model.export(str(tmp_path / "sm"))


# --------------------------------------------------------------------------- Keras' own
def _keras_suite():
    """Keras' ExportONNXTest with its 'tensorflow, jax, torch only' skip lifted."""
    if importlib.util.find_spec("absl") is None:
        return None
    from keras.src.export import onnx_test

    cls = onnx_test.ExportONNXTest
    cls.pytestmark = [m for m in getattr(cls, "pytestmark", [])
                      if not (m.name == "skipif" and "tensorflow" in str(m.kwargs))]
    return cls


_suite = _keras_suite()
if _suite is not None:
    class TestKerasOnnxSuite(_suite):
        """keras/src/export/onnx_test.py on kbackend (all 16 of its tests)."""
del _suite  # a TestCase at module level would be collected a second time
