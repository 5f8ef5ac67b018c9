"""Gluon and MXNet's parameter files both ways: real MXNet 1.9.1's save_parameters,
export and Module-checkpoint files (tests/data/mxnet/, from make_fixtures.py) load into
our same networks and predict what MXNet predicted; our save_parameters / export files
load in real MXNet, which predicts what we predict."""
import json
import os

import numpy
import pytest

from core import nd
from gluon import SymbolBlock, nn
from tests.mxnet_ref import requires_mxnet, run_mxnet

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "mxnet")


def fixture(name):
    return os.path.join(DATA, name)


def _net():
    """make_fixtures.py's net: Conv2D(4, 3) + BatchNorm + relu + Dense(3)."""
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, in_channels=2), nn.BatchNorm(in_channels=4),
            nn.Activation("relu"), nn.Dense(3, in_units=36))
    return net


@pytest.mark.parametrize("hybridize", [False, True])
def test_mxnet_save_parameters_file_predicts_as_in_mxnet(hybridize):
    io = nd.load(fixture("gluon_net_io.params"))
    net = _net()
    net.load_parameters(fixture("gluon_net.params"))
    if hybridize:
        net.hybridize()
    numpy.testing.assert_allclose(net(io["x"]).asnumpy(), io["y"].asnumpy(), rtol=1e-5,
                                  atol=1e-5)


def test_mxnet_export_params_hold_the_same_values():
    exported = nd.load(fixture("gluon_net-0000.params"))
    saved = nd.load(fixture("gluon_net.params"))
    assert [k.split(":")[0] for k in exported] == ["arg"] * 4 + ["aux"] * 2 + ["arg"] * 2
    assert [k.split("_", 1)[1] for k in exported] == [k.split(".")[1] for k in saved]
    net = _net()
    net.initialize()
    for p, v in zip(net.collect_params().values(), exported.values()):
        p.set_data(v)
    io = nd.load(fixture("gluon_net_io.params"))
    numpy.testing.assert_allclose(net(io["x"]).asnumpy(), io["y"].asnumpy(), rtol=1e-5,
                                  atol=1e-5)


def test_symbolblock_imports_mxnet_export():
    io = nd.load(fixture("gluon_net_io.params"))
    net = SymbolBlock.imports(fixture("gluon_net-symbol.json"), ["data"],
                              fixture("gluon_net-0000.params"))
    numpy.testing.assert_allclose(net(io["x"]).asnumpy(), io["y"].asnumpy(), rtol=1e-5,
                                  atol=1e-5)


def test_module_checkpoint_params_predict_as_in_mxnet():
    params = nd.load(fixture("module_net-0003.params"))
    assert sorted(params) == ["arg:fc1_bias", "arg:fc1_weight", "arg:fc2_bias",
                              "arg:fc2_weight"]
    io = nd.load(fixture("module_net_io.params"))
    h = nd.FullyConnected(io["data"], params["arg:fc1_weight"], params["arg:fc1_bias"],
                          num_hidden=5)
    y = nd.FullyConnected(nd.relu(h), params["arg:fc2_weight"], params["arg:fc2_bias"],
                          num_hidden=3)
    numpy.testing.assert_allclose(y.asnumpy(), io["out"].asnumpy(), rtol=1e-5, atol=1e-5)


def test_module_checkpoint_loads_with_load_checkpoint():
    from core import cpu, model

    sym, args, aux = model.load_checkpoint(fixture("module_net"), 3)
    assert sorted(args) == ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"] and aux == {}
    io = nd.load(fixture("module_net_io.params"))
    out = sym.bind(cpu(), dict(args, data=io["data"])).forward()[0]
    numpy.testing.assert_allclose(out.asnumpy(), io["out"].asnumpy(), rtol=1e-5, atol=1e-5)


_MXNET_NET = """
import json
import numpy as np
import mxnet as mx
from mxnet import gluon, nd
net = gluon.nn.HybridSequential()
net.add(gluon.nn.Conv2D(4, 3, in_channels=2), gluon.nn.BatchNorm(in_channels=4),
        gluon.nn.Activation("relu"), gluon.nn.Dense(3, in_units=36))
"""


@requires_mxnet
def test_real_mxnet_loads_our_save_parameters_and_export(tmp_path):
    rng = numpy.random.default_rng(3)
    net = _net()
    net.initialize()
    for p in net.collect_params().values():
        v = rng.standard_normal(p.shape)
        p.set_data(nd.array(numpy.abs(v) + 0.5 if "var" in p.name else v))
    x = nd.array(rng.standard_normal((2, 2, 5, 5)))
    y = net(x).asnumpy()
    net.save_parameters(str(tmp_path / "ours.params"))
    nd.save(str(tmp_path / "x.params"), [x])
    net.hybridize()
    net(x)
    _, param_file = net.export(str(tmp_path / "ours"))
    code = _MXNET_NET + (
        "net.load_parameters('ours.params')\n"
        "x = nd.load('x.params')[0]\n"
        "exported = nd.load('ours-0000.params')\n"
        "print(json.dumps({'y': net(x).asnumpy().tolist(),\n"
        "                  'names': list(exported),\n"
        "                  'values': [v.asnumpy().ravel().tolist() for v in exported.values()]}))")
    got = json.loads(run_mxnet(code, cwd=str(tmp_path)).strip().splitlines()[-1])
    numpy.testing.assert_allclose(numpy.array(got["y"]), y, rtol=1e-5, atol=1e-5)
    ours = nd.load(param_file)
    assert got["names"] == list(ours)
    for v, (k, a) in zip(got["values"], ours.items()):
        numpy.testing.assert_array_equal(numpy.array(v, numpy.float32), a.asnumpy().ravel(),
                                         err_msg=k)
