"""``mx.contrib.onnx`` through the mxnet alias: import_to_gluon gives a SymbolBlock that
runs (imperative and hybridized), matches onnxruntime and fine-tunes its imported weights."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from core import autograd, nd
from gluon.compat import mxnet as alias
from tests.core.onnx.test_import_models import cnn_model
from tests.core.onnx.test_import_nn import _rnn_model
from tests.core.onnx.test_import_ops import run_ort


@pytest.fixture(autouse=True)
def installed():
    """``import mxnet`` is kbackend's alias in these tests."""
    was = alias.is_installed()
    alias.install()
    yield
    if not was:
        alias.uninstall()


@pytest.fixture
def cnn_file(tmp_path):
    model, feeds = cnn_model()
    path = tmp_path / "cnn.onnx"
    onnx.save(model, str(path))
    return str(path), model, feeds


def test_alias_names():
    import mxnet as mx
    from mxnet.contrib import onnx as onnx_mxnet

    import gluon.compat.onnx as ours

    assert onnx_mxnet.import_model is ours.import_model
    assert mx.contrib.onnx.import_to_gluon is ours.import_to_gluon
    assert callable(onnx_mxnet.get_model_metadata)


@pytest.mark.parametrize("hybridize", [False, True])
def test_import_to_gluon_matches_onnxruntime(cnn_file, hybridize):
    from mxnet.contrib import onnx as onnx_mxnet

    path, model, feeds = cnn_file
    net = onnx_mxnet.import_to_gluon(path, ctx=None)
    if hybridize:
        net.hybridize()
    out = net(nd.array(feeds["data"])).asnumpy()
    np.testing.assert_allclose(out, run_ort(model, feeds)[0], rtol=1e-4, atol=1e-6)
    assert list(net.collect_params().keys()) == [
        "conv1.weight", "conv1.bias", "bn1.weight", "bn1.bias", "bn1.running_mean",
        "bn1.running_var", "fc.weight", "fc.bias"]


def test_import_to_gluon_fine_tunes(cnn_file):
    from mxnet import gluon
    from mxnet.contrib import onnx as onnx_mxnet

    path, _, feeds = cnn_file
    net = onnx_mxnet.import_to_gluon(path, ctx=None)
    net.hybridize()
    params = net.collect_params()
    fc, mean = params["fc.weight"], params["bn1.running_mean"]
    assert mean.grad_req == "null" and fc.grad_req == "write"
    before = fc.data().asnumpy().copy()
    trainer = gluon.Trainer(params, "sgd", {"learning_rate": 0.5})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss(from_logits=False, sparse_label=True)
    x, label = nd.array(feeds["data"]), nd.array([1, 7])
    with autograd.record():
        loss = loss_fn(nd.log(net(x)), label)
    loss.backward()
    assert np.abs(fc.grad().asnumpy()).sum() > 0
    trainer.step(2)
    assert not np.allclose(fc.data().asnumpy(), before)


def test_import_to_gluon_rnn_with_states(tmp_path):
    from mxnet.contrib import onnx as onnx_mxnet

    model, feeds = _rnn_model("LSTM", bidi=True, states=True)
    path = tmp_path / "lstm.onnx"
    onnx.save(model, str(path))
    meta = onnx_mxnet.get_model_metadata(str(path))
    assert [n for n, *_ in meta["input_tensor_data"]] == ["x", "h0", "c0"]
    net = onnx_mxnet.import_to_gluon(str(path), ctx=None)
    outs = net(nd.array(feeds["x"]), nd.array(feeds["h0"]), nd.array(feeds["c0"]))
    for got, want in zip(outs, run_ort(model, feeds)):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4, atol=1e-5)
    # the ONNX W/R/B are packed into the fused RNN's vector in the graph: grads reach them
    net.hybridize()
    params = net.collect_params()
    with autograd.record():
        y = net(nd.array(feeds["x"]), nd.array(feeds["h0"]), nd.array(feeds["c0"]))[0]
    y.backward()
    for name in ("W", "R", "B"):
        g = params[name].grad().asnumpy()
        assert g.shape == params[name].shape and np.count_nonzero(g) > g.size // 2, name


def test_contrib_export_model_warns(monkeypatch):
    """MXNet 1.9's contrib spelling warns and hands everything to core.onnx.export_model."""
    import sys
    import types

    from mxnet.contrib import onnx as onnx_mxnet

    seen = []
    fake = types.ModuleType("core.onnx.export")
    fake.export_model = lambda *a, **k: seen.append((a, k)) or "m.onnx"
    monkeypatch.setitem(sys.modules, "core.onnx.export", fake)
    with pytest.warns(DeprecationWarning, match="mx.onnx.export_model"):
        assert onnx_mxnet.export_model("s", "p", [(1, 3)], onnx_file_path="m.onnx") == "m.onnx"
    assert seen == [(("s", "p", [(1, 3)]), {"onnx_file_path": "m.onnx"})]


def test_imported_block_exports_for_real_mxnet(cnn_file, tmp_path):
    """ONNX -> import_to_gluon -> HybridBlock.export: real MXNet 1.9.1's SymbolBlock.imports
    runs the checkpoint and gives onnxruntime's outputs."""
    from mxnet.contrib import onnx as onnx_mxnet

    from tests.mxnet_ref import run_mxnet

    path, model, feeds = cnn_file
    net = onnx_mxnet.import_to_gluon(path, ctx=None)
    net.hybridize()
    net(nd.array(feeds["data"]))
    prefix = str(tmp_path / "imported")
    net.export(prefix)
    np.save(prefix + "_x.npy", feeds["data"])
    out = run_mxnet(
        "import mxnet as mx, numpy as np\n"
        f"net = mx.gluon.SymbolBlock.imports({prefix + '-symbol.json'!r}, ['data'], "
        f"{prefix + '-0000.params'!r})\n"
        f"y = net(mx.nd.array(np.load({prefix + '_x.npy'!r}))).asnumpy()\n"
        f"np.save({prefix + '_y.npy'!r}, y)\n")
    assert out is not None
    np.testing.assert_allclose(np.load(prefix + "_y.npy"), run_ort(model, feeds)[0],
                               rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name", ["mxnet_cnn", "mxnet_lstm"])
def test_import_to_gluon_of_files_real_mxnet_exported(name):
    """Real MXNet's exporter lists the weights among the graph inputs too; the block's
    inputs are the data only, and it gives MXNet's stored outputs."""
    import os

    from mxnet.contrib import onnx as onnx_mxnet

    data = os.path.join(os.path.dirname(__file__), "..", "..", "data", "onnx")
    net = onnx_mxnet.import_to_gluon(os.path.join(data, name + ".onnx"), ctx=None)
    net.hybridize()
    x = np.load(os.path.join(data, name + "_in.npy"))
    np.testing.assert_allclose(net(nd.array(x)).asnumpy(),
                               np.load(os.path.join(data, name + "_out.npy")),
                               rtol=1e-5, atol=1e-6)


def test_imported_dropout_is_active_only_in_training():
    """As MXNet's importer: ONNX Dropout becomes MXNet's Dropout(p=ratio)."""
    from mxnet.contrib import onnx as onnx_mxnet

    from tests.core.onnx.test_import_ops import one, rand

    x = rand(8, 200)
    net = onnx_mxnet.import_to_gluon(
        one("Dropout", {"x": x}, {"r": np.array(0.25, np.float32)}, 13), ctx=None)
    net.hybridize()
    np.testing.assert_array_equal(net(nd.array(x)).asnumpy(), x)
    with autograd.record():
        y = net(nd.array(x)).asnumpy()
    dropped = (y == 0).mean()
    assert 0.15 < dropped < 0.35
    kept = y != 0
    np.testing.assert_allclose(y[kept], x[kept] / 0.75, rtol=1e-6)
