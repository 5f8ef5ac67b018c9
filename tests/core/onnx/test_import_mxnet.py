"""ONNX import checked against real MXNet 1.9.1.

- Files exported by real MXNet's ``mx.onnx.export_model`` (tests/data/onnx/, made by
  ``make_mxnet_fixtures.py`` there) import here and give MXNet's own stored outputs.
- Where the MXNet venv has ``onnx`` (tests/mxnet_venv.sh installs it), real MXNet's
  ``mx.contrib.onnx.import_model`` reads the same model as ours: the same argument and
  auxiliary names, the same metadata, the same outputs.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from core.onnx import get_model_metadata, import_model
from tests.core.onnx.test_import_models import cnn_model
from tests.core.onnx.test_import_ops import run_ort, run_ours
from tests.mxnet_ref import run_mxnet

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "data", "onnx")


@pytest.mark.parametrize("name", ["mxnet_cnn", "mxnet_lstm", "mxnet_gru2", "mxnet_rnn_relu"])
def test_files_exported_by_real_mxnet(name):
    model = onnx.load(os.path.join(DATA, name + ".onnx"))
    x = np.load(os.path.join(DATA, name + "_in.npy"))
    want = np.load(os.path.join(DATA, name + "_out.npy"))
    feeds = {get_model_metadata(model)["input_tensor_data"][0][0]: x}
    got = run_ours(model, feeds)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(run_ort(model, feeds)[0], want, rtol=1e-5, atol=1e-6)


def test_mxnet_cnn_file_params():
    sym, args, aux = import_model(os.path.join(DATA, "mxnet_cnn.onnx"))
    assert any(k.endswith("running_mean") for k in aux)
    assert any(k.endswith("running_var") for k in aux)
    assert all("running" not in k for k in args)
    assert sym.list_arguments()[0] == "data"


_REAL_IMPORT = r"""
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
meta = onnx_mxnet.get_model_metadata(path)
x = np.load(xpath)
exe = sym.bind(mx.cpu(), args={"data": mx.nd.array(x), **args}, aux_states=aux,
               grad_req="null")
out = exe.forward(is_train=False)[0].asnumpy()
print(json.dumps({"args": sorted(args), "aux": sorted(aux),
                  "inputs": sym.list_arguments()[:1],
                  "meta": [[n, list(s)] for n, s, *_ in meta["input_tensor_data"]],
                  "out": out.tolist()}))
"""


def test_real_mxnet_importer_agrees(tmp_path):
    model, feeds = cnn_model(opset=11)
    # MXNet 1.9's importer looks initializers up among the graph inputs (the IR < 4 form)
    for t in model.graph.initializer:
        model.graph.input.append(onnx.helper.make_tensor_value_info(t.name, t.data_type,
                                                                    t.dims))
    path, xpath = str(tmp_path / "cnn.onnx"), str(tmp_path / "x.npy")
    onnx.save(model, path)
    np.save(xpath, feeds["data"])
    script = tmp_path / "imp.py"
    script.write_text(_REAL_IMPORT)
    out = run_mxnet(f"import sys; sys.argv = ['imp', {path!r}, {xpath!r}]; "
                    f"exec(open({str(script)!r}).read())")
    real = json.loads(out.strip().splitlines()[-1])
    if "skip" in real:
        pytest.skip(real["skip"])
    sym, args, aux = import_model(path)
    assert sorted(args) == real["args"]
    assert sorted(aux) == real["aux"]
    assert sym.list_arguments()[:1] == real["inputs"]
    meta = get_model_metadata(path)
    assert [[n, list(s)] for n, s, _ in meta["input_tensor_data"]] == real["meta"]
    np.testing.assert_allclose(run_ours(model, feeds)[0], np.array(real["out"]),
                               rtol=1e-4, atol=1e-6)


_ZOO_EXPORT = r"""
import sys
import numpy as np
import mxnet as mx
try:
    import onnx.defs
except ImportError:
    print("skip: no onnx in the MXNet venv"); sys.exit(0)
onnx.defs.onnx_opset_version = lambda: 13  # what MXNet 1.9 was released against
from mxnet.gluon.model_zoo import vision
name, size, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
net = getattr(vision, name)(pretrained=False, classes=10)
net.initialize(mx.init.Xavier())
net.hybridize()
x = np.random.default_rng(0).standard_normal((1, 3, size, size)).astype("float32")
out = net(mx.nd.array(x)).asnumpy()
net.export(prefix)
mx.onnx.export_model(prefix + "-symbol.json", prefix + "-0000.params", [x.shape],
                     [np.float32], prefix + ".onnx")
np.save(prefix + "_in.npy", x)
np.save(prefix + "_out.npy", out)
print("ok")
"""


@pytest.mark.parametrize("name,size", [("mobilenet0_25", 64), ("mobilenet_v2_0_25", 64),
                                       ("squeezenet1_1", 224), ("resnet18_v2", 64)])
def test_model_zoo_exported_by_real_mxnet(tmp_path, name, size):
    """MXNet's own model zoo (random weights), exported by real MXNet, imports here and
    gives MXNet's outputs."""
    prefix = str(tmp_path / name)
    script = tmp_path / "zoo.py"
    script.write_text(_ZOO_EXPORT)
    out = run_mxnet(f"import sys; sys.argv = ['zoo', {name!r}, '{size}', {prefix!r}]; "
                    f"exec(open({str(script)!r}).read())")
    if out.strip().startswith("skip"):
        pytest.skip(out.strip())
    x, want = np.load(prefix + "_in.npy"), np.load(prefix + "_out.npy")
    model = onnx.load(prefix + ".onnx")
    np.testing.assert_allclose(run_ours(model, {"data": x})[0], want, rtol=1e-4,
                               atol=1e-5 * np.abs(want).max())
