"""kbackend.save_mxnet_model: Keras models as MXNet 1.9 checkpoints.

Each model is saved, loaded back with our gluon.SymbolBlock.imports and (one script for
all of them) with a real MXNet 1.9.1 Module, and run at batch sizes 1 and 7: both must
give what model.predict gives.
"""
from __future__ import annotations

import json
import os

import keras
import numpy as np
import pytest
from keras import layers

import kbackend
from core import nd, serialization
from gluon import SymbolBlock
from tests.mxnet_ref import requires_mxnet, run_mxnet

BATCHES = (1, 7)


def _cnn():
    return keras.Sequential([
        keras.Input((10, 10, 3)),
        layers.Conv2D(4, 3, padding="same", activation="relu"),
        layers.BatchNormalization(),
        layers.MaxPooling2D(),
        layers.Conv2D(6, 3, dilation_rate=2, groups=2),
        layers.Flatten(),
        layers.Dense(5, activation="gelu"),
        layers.Dropout(0.3),
        layers.Dense(3, activation="softmax"),
    ])


def _conv1d():
    return keras.Sequential([
        keras.Input((10, 4)),
        layers.Conv1D(4, 3, dilation_rate=2, groups=2, padding="same", activation="tanh"),
        layers.AveragePooling1D(2),
        layers.Conv1D(3, 3, strides=2),
        layers.GlobalMaxPooling1D(),
    ])


def _depthwise_transposed():
    return keras.Sequential([
        keras.Input((7, 7, 3)),
        layers.DepthwiseConv2D(3, depth_multiplier=2, activation="relu"),
        layers.Conv2DTranspose(2, 3, strides=2),
        layers.AveragePooling2D(2),
        layers.GlobalAveragePooling2D(),
    ])


def _activations():
    acts = ["relu", "sigmoid", "tanh", "elu", "selu", "swish", "softplus"]
    return keras.Sequential([keras.Input((6,))]
                            + [layers.Dense(6, activation=a) for a in acts]
                            + [layers.LeakyReLU(0.2), layers.Dense(2)])


def _norm_reshape():
    return keras.Sequential([
        keras.Input((4, 6)),
        layers.LayerNormalization(),
        layers.Permute((2, 1)),
        layers.Reshape((3, 8)),
        layers.Dense(5),
        layers.Flatten(),
    ])


def _embedding():
    return keras.Sequential([
        keras.Input((5,), dtype="int32"),
        layers.Embedding(10, 4),
        layers.Flatten(),
        layers.Dense(3),
    ])


def _functional():
    a = keras.Input((6,), name="left")
    b = keras.Input((6,), name="right")
    h = layers.Concatenate()([layers.Dense(4, activation="relu")(a), b])
    s = layers.Add()([layers.Dense(6)(h), a])
    m = layers.Multiply()([s, b])
    return keras.Model([a, b], [layers.Dense(2, name="out_a")(m),
                                layers.Dense(3, activation="sigmoid", name="out_b")(s)])


def _recurrent():
    return keras.Sequential([
        keras.Input((5, 4)),
        layers.LSTM(3, return_sequences=True),
        layers.GRU(2),
        layers.Dense(2),
    ])


def _channels_first():
    return keras.Sequential([
        keras.Input((3, 9, 9)),
        layers.BatchNormalization(axis=1, center=False, scale=False),
        layers.Conv2D(4, 3, strides=2, data_format="channels_first", activation="relu"),
        layers.MaxPooling2D(2, data_format="channels_first"),
        layers.Conv2DTranspose(2, 2, strides=2, data_format="channels_first"),
        layers.GlobalAveragePooling2D(data_format="channels_first"),
    ])


def _shared_nested():
    shared = layers.Dense(4, activation="relu", name="shared")
    inner = keras.Sequential([keras.Input((4,)), layers.Dense(3, name="inner_dense")],
                             name="inner")
    a, b = keras.Input((6,), name="a"), keras.Input((6,), name="b")
    return keras.Model([a, b], inner(layers.Add()([shared(a), shared(b)])))


def _bidirectional():
    inputs = keras.Input((4, 5))
    x = layers.Bidirectional(layers.LSTM(3, return_sequences=True), merge_mode="sum")(inputs)
    x = layers.Bidirectional(layers.GRU(2, return_sequences=True), merge_mode="concat")(x)
    return keras.Model(inputs, x)


MODELS = {"cnn": _cnn, "conv1d": _conv1d, "depthwise_transposed": _depthwise_transposed,
          "activations": _activations, "norm_reshape": _norm_reshape,
          "embedding": _embedding, "functional": _functional, "recurrent": _recurrent,
          "bidirectional": _bidirectional, "channels_first": _channels_first,
          "shared_nested": _shared_nested}


def _inputs(model, batch, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for t in model.inputs:
        shape = (batch,) + tuple(t.shape[1:])
        if "int" in str(t.dtype):
            out.append(rng.integers(0, 10, shape).astype("int32"))
        else:
            out.append(rng.standard_normal(shape).astype("float32"))
    return out


def _build(name):
    keras.utils.set_random_seed(1)
    model = MODELS[name]()
    # Non-trivial BatchNormalization statistics, so inference mode shows.
    for layer in model.layers:
        if isinstance(layer, layers.BatchNormalization):
            c = layer.moving_mean.shape[0]
            layer.moving_mean.assign(np.linspace(-0.5, 0.5, c).astype("float32"))
            layer.moving_variance.assign(np.linspace(0.5, 2.0, c).astype("float32"))
    return model


def _predict(model, xs):
    y = model.predict(xs if len(xs) > 1 else xs[0], verbose=0)
    return [np.asarray(v) for v in (y if isinstance(y, list) else [y])]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Every model saved once: name -> (prefix, data_names, data_shapes, inputs, refs)."""
    root = tmp_path_factory.mktemp("mxnet_models")
    out = {}
    for name in MODELS:
        keras.backend.clear_session()
        model = _build(name)
        xs = _inputs(model, max(BATCHES))
        prefix = str(root / name)
        data_names, data_shapes = kbackend.save_mxnet_model(model, prefix)
        out[name] = (prefix, data_names, data_shapes, xs, _predict(model, xs))
        np.savez(prefix + "-check.npz", *xs, *out[name][4])
    return out


@pytest.mark.parametrize("name", list(MODELS))
def test_symbol_block_imports_predicts_as_keras(saved, name):
    prefix, data_names, _, xs, refs = saved[name]
    net = SymbolBlock.imports(f"{prefix}-symbol.json", data_names, f"{prefix}-0000.params")
    for batch in BATCHES:
        out = net(*[nd.array(x[:batch]) for x in xs])
        outs = out if isinstance(out, (list, tuple)) else [out]
        assert len(outs) == len(refs)
        for got, ref in zip(outs, refs):
            np.testing.assert_allclose(got.asnumpy(), ref[:batch], rtol=1e-5, atol=1e-6)


def test_return_value_and_files(saved):
    prefix, data_names, data_shapes, _, _ = saved["functional"]
    assert data_names == ["left", "right"]
    assert data_shapes == [("left", (1, 6)), ("right", (1, 6))]
    prefix, data_names, data_shapes, _, _ = saved["cnn"]
    assert data_shapes == [(data_names[0], (1, 10, 10, 3))]
    params = serialization.load(f"{prefix}-0000.params")
    # Readable names: the Keras variables' paths below the model.
    assert {"arg:conv2d_kernel", "arg:conv2d_bias", "arg:dense_kernel",
            "arg:batch_normalization_gamma", "arg:batch_normalization_beta"} <= set(params)
    # BatchNormalization is MXNet's BatchNorm; its moving statistics are auxiliary states
    assert {"aux:batch_normalization_moving_mean",
            "aux:batch_normalization_moving_variance"} <= set(params)
    with open(f"{prefix}-symbol.json") as f:
        doc = json.load(f)
    names = [n["name"] for n in doc["nodes"]]
    assert any(n.startswith("conv2d/") for n in names)  # nodes named after their layer
    ops = {n["op"] for n in doc["nodes"]}
    assert {"Convolution", "BatchNorm"} <= ops and "Dropout" not in ops  # inference pass
    # Variables carry their shapes; the data has none (any batch size).
    var = {n["name"]: n.get("attrs", {}) for n in doc["nodes"] if n["op"] == "null"}
    assert var["conv2d_kernel"]["__shape__"] == "(3, 3, 3, 4)"
    assert "__shape__" not in var[data_names[0]]
    leftovers = [f for f in os.listdir(os.path.dirname(prefix)) if f.startswith(".")]
    assert leftovers == []  # atomic writes leave no temporary files


def test_epoch_names_the_params_file(tmp_path):
    model = keras.Sequential([keras.Input((3,)), layers.Dense(2)])
    kbackend.save_mxnet_model(model, str(tmp_path / "sub" / "m"), epoch=12)
    assert sorted(os.listdir(tmp_path / "sub")) == ["m-0012.params", "m-symbol.json"]


def test_recurrent_states_do_not_bake_the_batch(saved):
    prefix = saved["recurrent"][0]
    with open(f"{prefix}-symbol.json") as f:
        doc = json.load(f)
    assert "RNN" in {n["op"] for n in doc["nodes"]}
    shapes = [n.get("attrs", {}).get("__shape__", "") for n in doc["nodes"]]
    assert not any(s.startswith("(1, 2,") for s in shapes)  # no (layers, traced batch, h)


@requires_mxnet
def test_real_mxnet_module_predicts_as_keras(saved):
    cases = {name: (p, dn, ds) for name, (p, dn, ds, _, _) in saved.items()}
    script = f"""
import json, mxnet as mx, numpy as np
cases = {json.dumps(cases)}
for name, (prefix, data_names, data_shapes) in cases.items():
    arrays = np.load(prefix + "-check.npz")
    arrays = [arrays["arr_%d" % i] for i in range(len(arrays.files))]
    xs, refs = arrays[:len(data_names)], arrays[len(data_names):]
    sym, arg_params, aux_params = mx.model.load_checkpoint(prefix, 0)
    for batch in {list(BATCHES)}:
        mod = mx.mod.Module(sym, data_names=data_names, label_names=None, context=mx.cpu())
        mod.bind(data_shapes=[(n, (batch,) + tuple(s[1:])) for n, s in data_shapes],
                 for_training=False)
        mod.set_params(arg_params, aux_params)
        mod.forward(mx.io.DataBatch([mx.nd.array(x[:batch]) for x in xs]), is_train=False)
        outs = mod.get_outputs()
        assert len(outs) == len(refs), (name, len(outs))
        for got, ref in zip(outs, refs):
            np.testing.assert_allclose(got.asnumpy(), ref[:batch], rtol=1e-5, atol=1e-6,
                                       err_msg=name)
    print(name, "ok")
"""
    out = run_mxnet(script)
    assert out.split() == [w for name in MODELS for w in (name, "ok")]


def test_layer_mxnet_cannot_express_is_named(tmp_path):
    model = keras.Sequential([keras.Input((6,)), layers.Dense(4),
                              layers.Lambda(lambda x: keras.ops.cumsum(x, axis=-1),
                                            name="running_total")])
    with pytest.raises(ValueError, match=r"running_total.*cumsum|cumsum.*running_total"):
        kbackend.save_mxnet_model(model, str(tmp_path / "m"))
    assert not list(tmp_path.iterdir())


def test_uneven_padding_of_a_pooling_is_refused_naming_the_layer(tmp_path):
    model = keras.Sequential([keras.Input((6, 6, 2)),
                              layers.MaxPooling2D(2, strides=2, padding="same", name="pool")])
    model.predict(np.zeros((1, 6, 6, 2), "float32"), verbose=0)
    model2 = keras.Sequential([keras.Input((5, 5, 2)),
                               layers.MaxPooling2D(2, strides=2, padding="same",
                                                   name="odd_pool")])
    kbackend.save_mxnet_model(model, str(tmp_path / "even"))  # even: no padding
    with pytest.raises(ValueError, match="odd_pool"):
        kbackend.save_mxnet_model(model2, str(tmp_path / "odd"))


def test_subclassed_model_without_inputs_is_refused(tmp_path):
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = layers.Dense(2)

        def call(self, x):
            return self.dense(x)

    net = Net()
    net(np.zeros((1, 3), "float32"))
    with pytest.raises(ValueError, match="no symbolic inputs"):
        kbackend.save_mxnet_model(net, str(tmp_path / "net"))
