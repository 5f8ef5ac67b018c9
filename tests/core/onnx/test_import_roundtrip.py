"""Round trips: a Gluon model exported by our ``core.onnx.export_model`` and imported back
gives the model's own outputs (and onnxruntime agrees on the file); where the MXNet venv
has onnx, real MXNet 1.9.1's ``mx.contrib.onnx.import_model`` reads our file too."""
from __future__ import annotations

import json

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("core.onnx.export", reason="the exporter (core.onnx.export) is absent")

from core import nd
from core.onnx import export_model, import_model
from gluon import nn, rnn
from tests.core.onnx.test_import_ops import run_ort, run_ours
from tests.mxnet_ref import run_mxnet

RNG = np.random.default_rng(3)


def _cnn():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(6, 3, padding=1, in_channels=3), nn.BatchNorm(in_channels=6),
            nn.Activation("relu"), nn.MaxPool2D(2), nn.Conv2D(8, 3, strides=2, groups=2,
                                                              in_channels=6),
            nn.GlobalAvgPool2D(), nn.Flatten(), nn.Dense(10, in_units=8))
    net.initialize()
    for name, p in net.collect_params().items():
        if name.endswith("running_var"):
            p.set_data(nd.array(RNG.uniform(0.5, 1.5, p.shape)))
        elif name.endswith(("running_mean", "beta")):
            p.set_data(nd.array(RNG.uniform(-0.5, 0.5, p.shape)))
    return net, RNG.standard_normal((2, 3, 10, 10)).astype(np.float32)


class _Seq(nn.HybridBlock):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell
        self.fc = nn.Dense(3, flatten=False)

    def hybrid_forward(self, F, x):
        return self.fc(self.rnn(x))


def _lstm():
    net = _Seq(rnn.LSTM(5, bidirectional=True, input_size=4))
    net.initialize()
    return net, RNG.standard_normal((6, 2, 4)).astype(np.float32)


def _gru():
    net = _Seq(rnn.GRU(5, input_size=4))
    net.initialize()
    return net, RNG.standard_normal((6, 2, 4)).astype(np.float32)


MODELS = {"cnn": _cnn, "lstm": _lstm, "gru": _gru}


def _export(tmp_path, name):
    net, x = MODELS[name]()
    net.hybridize()
    want = net(nd.array(x)).asnumpy()
    prefix = str(tmp_path / name)
    net.export(prefix)
    path = export_model(prefix + "-symbol.json", prefix + "-0000.params", [x.shape],
                        [np.float32], str(tmp_path / f"{name}.onnx"))
    return path, x, want


@pytest.mark.parametrize("name", sorted(MODELS))
def test_export_then_import(tmp_path, name):
    path, x, want = _export(tmp_path, name)
    model = onnx.load(path)
    feeds = {model.graph.input[0].name: x}
    np.testing.assert_allclose(run_ort(model, feeds)[0], want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(run_ours(model, feeds)[0], want, rtol=1e-4, atol=1e-5)
    sym, args, aux = import_model(path)
    assert set(sym.list_arguments()) == {model.graph.input[0].name, *args}
    if name == "cnn":  # BatchNorm's running statistics come back as auxiliary states
        assert len(aux) == 2 and all("running" in k for k in aux)


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("opset", [13, 17, 21])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_block_export_opsets_and_dynamic_batch(tmp_path, name, opset, dynamic):
    """export_model(block, dynamic=...) at several opsets, imported back; a dynamic batch
    runs at two batch sizes (the RNNs' batch is axis 1)."""
    net, x = MODELS[name]()
    net.hybridize()
    net(nd.array(x))
    path = export_model(net, None, [x.shape], [np.float32], str(tmp_path / "m.onnx"),
                        dynamic=dynamic, opset_version=opset)
    sym, args, aux = import_model(path)
    data = sym.list_arguments()[0]
    batches = [x] + ([np.concatenate([x] * 2, axis=0 if name == "cnn" else 1)]
                     if dynamic else [])
    for xx in batches:
        exe = sym.bind(None, args={data: nd.array(xx), **args}, aux_states=aux,
                       grad_req="null")
        np.testing.assert_allclose(exe.forward(is_train=False)[0].asnumpy(),
                                   net(nd.array(xx)).asnumpy(), rtol=1e-5, atol=1e-6)


_REAL = r"""
import json, sys
import numpy as np
import mxnet as mx
try:
    import onnx  # noqa: F401
except ImportError:
    print(json.dumps({"skip": "no onnx in the MXNet venv"})); sys.exit(0)
from mxnet.contrib import onnx as onnx_mxnet
path, xpath = sys.argv[1], sys.argv[2]
sym, args, aux = onnx_mxnet.import_model(path)
name = onnx_mxnet.get_model_metadata(path)["input_tensor_data"][0][0]
exe = sym.bind(mx.cpu(), args={name: mx.nd.array(np.load(xpath)), **args},
               aux_states=aux, grad_req="null")
print(json.dumps({"out": exe.forward(is_train=False)[0].asnumpy().tolist()}))
"""


def test_real_mxnet_imports_our_cnn(tmp_path):
    path, x, want = _export(tmp_path, "cnn")
    # MXNet 1.9's importer finds initializers only among the graph inputs: export_model
    # lists them there, as MXNet's exporter does
    model = onnx.load(path)
    assert {t.name for t in model.graph.initializer} <= {i.name for i in model.graph.input}
    xpath = str(tmp_path / "x.npy")
    np.save(xpath, x)
    script = tmp_path / "real.py"
    script.write_text(_REAL)
    out = run_mxnet(f"import sys; sys.argv = ['r', {path!r}, {xpath!r}]; "
                    f"exec(open({str(script)!r}).read())")
    real = json.loads(out.strip().splitlines()[-1])
    if "skip" in real:
        pytest.skip(real["skip"])
    np.testing.assert_allclose(np.array(real["out"]), want, rtol=1e-4, atol=1e-5)
