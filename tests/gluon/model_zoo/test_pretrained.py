"""model_zoo ``pretrained=True``: weights from a local file with MXNet's names and layout
(``{root}/{name}-{short sha1}.params``, checked, or ``{root}/{name}.params``; root from
``root=``, ``$MXNET_HOME/models`` or ``~/.mxnet/models``), never downloaded; a missing
file says where we looked. Real MXNet's model-zoo weights file loads and predicts as in
MXNet."""
import hashlib
import json
import os

import numpy
import pytest

from core import cpu, nd
from gluon.model_zoo import model_store, vision
from tests.mxnet_ref import requires_mxnet, run_mxnet

NAME = "mobilenetv2_0.25"


def _saved(tmp_path, file_name, legacy_names=False):
    """A small zoo model with random weights, saved as ``tmp_path/file_name``; returns the
    model and a batch."""
    net = vision.get_model(NAME, classes=10)
    net.initialize()
    x = nd.array(numpy.random.default_rng(0).standard_normal((2, 3, 32, 32)))
    net(x)
    path = str(tmp_path / file_name)
    if legacy_names:
        net.collect_params().save(path, strip_prefix=net.prefix)
    else:
        net.save_parameters(path)
    return net, x


def _same_predictions(a, b, x):
    numpy.testing.assert_allclose(a(x).asnumpy(), b(x).asnumpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("legacy_names", [False, True])
def test_plain_name_in_root_loads(tmp_path, legacy_names):
    net, x = _saved(tmp_path, f"{NAME}.params", legacy_names)
    back = vision.get_model(NAME, pretrained=True, root=str(tmp_path), classes=10)
    _same_predictions(net, back, x)
    back = vision.mobilenet_v2_0_25(pretrained=True, root=str(tmp_path), classes=10)
    _same_predictions(net, back, x)


def test_mxnet_file_name_is_checked_against_its_sha1(tmp_path, monkeypatch):
    short = model_store.short_hash(NAME)
    assert short == "ae8f9392"  # MXNet 1.9's model store
    net, x = _saved(tmp_path, f"{NAME}-{short}.params")
    with pytest.raises(ValueError, match=rf"{NAME}-{short}\.params has SHA-1 [0-9a-f]{{40}}, "
                                         r"not the published file's ae8f9392.*rename it to "
                                         rf"{NAME}\.params"):
        vision.get_model(NAME, pretrained=True, root=str(tmp_path), classes=10)
    with open(tmp_path / f"{NAME}-{short}.params", "rb") as f:
        digest = hashlib.sha1(f.read()).hexdigest()
    monkeypatch.setitem(model_store._model_sha1, NAME, short + digest[8:])
    with pytest.raises(ValueError, match="SHA-1"):
        vision.get_model(NAME, pretrained=True, root=str(tmp_path), classes=10)
    monkeypatch.setitem(model_store._model_sha1, NAME, digest)
    os.replace(tmp_path / f"{NAME}-{short}.params",
               tmp_path / f"{NAME}-{digest[:8]}.params")
    back = vision.get_model(NAME, pretrained=True, root=str(tmp_path), classes=10)
    _same_predictions(net, back, x)


def test_default_root_is_mxnet_home_models(tmp_path, monkeypatch):
    models = tmp_path / "models"
    models.mkdir()
    net, x = _saved(models, f"{NAME}.params")
    monkeypatch.setenv("MXNET_HOME", str(tmp_path))
    assert model_store.default_root() == str(models)
    _same_predictions(net, vision.get_model(NAME, pretrained=True, classes=10), x)
    monkeypatch.delenv("MXNET_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert model_store.default_root() == os.path.join(str(tmp_path / "home"), ".mxnet",
                                                      "models")


@pytest.mark.parametrize("make", [
    lambda root: vision.get_model("resnet50_v2", pretrained=True, root=root),
    lambda root: vision.resnet18_v1(pretrained=True, root=root),
    lambda root: vision.vgg16_bn(pretrained=True, root=root),
    lambda root: vision.alexnet(pretrained=True, root=root),
    lambda root: vision.densenet121(pretrained=True, root=root),
    lambda root: vision.squeezenet1_0(pretrained=True, root=root),
    lambda root: vision.inception_v3(pretrained=True, root=root),
    lambda root: vision.mobilenet0_5(pretrained=True, root=root),
    lambda root: vision.get_model("mobilenetv2_0.75", pretrained=True, root=root),
])
def test_missing_file_says_where_it_looked_and_that_nothing_is_downloaded(tmp_path, make):
    with pytest.raises(FileNotFoundError) as info:
        make(str(tmp_path))
    msg = str(info.value)
    name = msg.split("'")[1]
    assert msg.startswith(f"no pretrained weights for '{name}': looked for "
                          f"{tmp_path}{os.sep}{name}-{model_store.short_hash(name)}.params and "
                          f"{tmp_path}{os.sep}{name}.params; kbackend never downloads weights")


def test_wrong_weights_name_the_parameter(tmp_path):
    _saved(tmp_path, f"{NAME}.params")
    with pytest.raises(ValueError, match=r"shape"):
        vision.get_model(NAME, pretrained=True, root=str(tmp_path))  # classes=1000


@pytest.mark.multi_device
def test_ctx_places_the_weights(tmp_path):
    _saved(tmp_path, f"{NAME}.params")
    back = vision.get_model(NAME, pretrained=True, root=str(tmp_path), classes=10, ctx=cpu(1))
    assert all(p.list_ctx() == [cpu(1)] for p in back.collect_params().values())


def test_model_store_helpers(tmp_path):
    with pytest.raises(ValueError, match="Pretrained model for resnet_18 is not available"):
        model_store.short_hash("resnet_18")
    (tmp_path / "a.params").write_bytes(b"x")
    (tmp_path / "keep.txt").write_bytes(b"x")
    model_store.purge(str(tmp_path))
    assert os.listdir(tmp_path) == ["keep.txt"]


@requires_mxnet
def test_real_mxnet_model_zoo_file_loads_and_predicts_as_in_mxnet(tmp_path):
    """MXNet's own model-zoo net saves its weights under the model store's file name
    layout; our pretrained=True loads that file and predicts what MXNet predicts."""
    code = f"""
import json
import numpy as np
import mxnet as mx
from mxnet.gluon.model_zoo import vision
net = vision.get_model("{NAME}", classes=10)
net.initialize(mx.init.Xavier())
x = mx.nd.array(np.random.RandomState(0).randn(2, 3, 32, 32))
y = net(x)
net.save_parameters("{NAME}.params")
mx.nd.save("io.params", {{"x": x, "y": y}})
print(json.dumps("ok"))
"""
    assert json.loads(run_mxnet(code, cwd=str(tmp_path)).strip().splitlines()[-1]) == "ok"
    io = nd.load(str(tmp_path / "io.params"))
    net = vision.get_model(NAME, pretrained=True, root=str(tmp_path), classes=10)
    numpy.testing.assert_allclose(net(io["x"]).asnumpy(), io["y"].asnumpy(), rtol=1e-4,
                                  atol=1e-5)
