"""export / SymbolBlock.imports round trips, and blocks called on Symbols."""
import os

import numpy as np
import pytest

import core
from core import autograd, nd, serialization, sym
from gluon import HybridBlock, SymbolBlock, nn
from gluon.model_zoo import vision
from gluon.model_zoo.vision import _models


def _cnn():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
            nn.MaxPool2D(2), nn.Flatten(), nn.Dropout(0.5), nn.Dense(3))
    net.initialize()
    return net


def test_export_needs_a_hybridized_forward(tmp_path):
    net = _cnn()
    with pytest.raises(RuntimeError, match="hybridize.*forward"):
        net.export(str(tmp_path / "net"))


def test_cnn_with_batchnorm_round_trip(tmp_path):
    x = nd.random.normal(shape=(2, 3, 6, 6))
    net = _cnn()
    net.hybridize()
    net(x)
    sym_file, param_file = net.export(str(tmp_path / "cnn"), epoch=7)
    assert sym_file.endswith("cnn-symbol.json") and param_file.endswith("cnn-0007.params")
    saved = serialization.load(param_file)
    aux = sorted(k for k in saved if k.startswith("aux:"))
    assert aux == sorted(f"aux:{p}" for p in net.collect_params() if "running" in p)
    assert all(k.startswith(("arg:", "aux:")) for k in saved)
    back = SymbolBlock.imports(sym_file, ["data"], param_file)
    assert sorted(back.collect_params()) == sorted(net.collect_params())
    np.testing.assert_array_equal(back(x).asnumpy(), net(x).asnumpy())  # inference

    # Training: the same batch statistics, moving-statistics updates and gradients.
    for hyb in (False, True):
        if hyb:
            back.hybridize()
        results = []
        for block in (net, back):
            core.random.seed(5)
            with autograd.record():
                out = block(x)
                (out * out).sum().backward()
            params = block.collect_params()
            results.append((out.asnumpy(),
                            {k: p.data().asnumpy().copy() for k, p in params.items()},
                            {k: p.grad().asnumpy().copy() for k, p in params.items()
                             if p.grad_req != "null"}))
        (o1, d1, g1), (o2, d2, g2) = results
        np.testing.assert_array_equal(o1, o2)
        for k in d1:
            np.testing.assert_array_equal(d1[k], d2[k])
        for k in g1:
            np.testing.assert_array_equal(g1[k], g2[k])


def test_imports_without_params_infers_shapes(tmp_path):
    net = nn.HybridSequential()
    net.add(nn.Dense(5, activation="relu"), nn.Dense(2))
    net.initialize()
    net.hybridize()
    x = nd.ones((3, 4))
    net(x)
    net(x)
    sym_file, _ = net.export(str(tmp_path / "mlp"))
    back = SymbolBlock.imports(sym_file, "data")
    back.initialize()
    assert back(x).shape == (3, 2)
    assert back.collect_params()[next(iter(net.collect_params()))].shape == (5, 4)


def test_symbol_block_from_composed_symbols():
    data = sym.var("data")
    fc = sym.FullyConnected(data, num_hidden=3, name="fc")
    out = sym.Activation(fc, act_type="tanh")
    block = SymbolBlock(out, data)
    block.initialize()
    x = nd.random.normal(shape=(2, 4))
    y = block(x)  # deferred initialization
    w, b = block.collect_params()["fc_weight"].data(), block.collect_params()["fc_bias"].data()
    np.testing.assert_allclose(y.asnumpy(),
                               np.tanh(x.asnumpy() @ w.asnumpy().T + b.asnumpy()), rtol=1e-6)


def test_block_called_on_a_symbol():
    net = nn.HybridSequential()
    net.add(nn.Dense(4, activation="relu"), nn.Dense(2))
    net.initialize()
    out = net(sym.var("data", shape=(3, 5)))
    assert out.list_arguments()[0] == "data"
    assert sorted(out.list_arguments()[1:]) == sorted(net.collect_params())
    assert out.infer_shape(data=(3, 5))[1] == [(3, 2)]
    shapeless = net(sym.var("data"))  # MXNet 1.x: shapes are inferred at bind time
    assert shapeless.infer_shape(data=(3, 5))[1] == [(3, 2)]


class _Twice(HybridBlock):
    def forward(self, x):
        return x * 2, x + 1


def test_multiple_outputs_round_trip(tmp_path):
    net = _Twice()
    net.hybridize()
    x = nd.ones((2,))
    net(x)
    back = SymbolBlock.imports(net.export(str(tmp_path / "two"))[0], ["data"])
    a, b = back(x)
    assert a.asnumpy().tolist() == [2.0, 2.0] and b.asnumpy().tolist() == [2.0, 2.0]


def _input_size(name):
    if "inception" in name:
        return 299
    if name.startswith(("densenet", "squeezenet")):
        return 224
    return 64 if name.startswith("alexnet") else 32


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_models))
def test_every_model_zoo_network_round_trips(name, tmp_path):
    core.random.seed(0)
    net = vision.get_model(name, classes=10)
    net.initialize()
    net.hybridize()
    size = _input_size(name)
    x = nd.random.normal(shape=(1, 3, size, size))
    net(x)
    y = net(x)
    sym_file, param_file = net.export(os.path.join(str(tmp_path), name))
    back = SymbolBlock.imports(sym_file, ["data"], param_file)
    np.testing.assert_array_equal(back(x).asnumpy(), y.asnumpy())
