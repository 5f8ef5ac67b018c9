"""``HybridBlock.export`` writes files real MXNet 1.9.1 loads and runs to our outputs.

Each model is exported (``-symbol.json`` and the ``.params`` file, as written), loaded
with ``mx.gluon.SymbolBlock.imports`` in real MXNet's own environment, run on the same
input, and compared with our output. Skips where real MXNet is not installed.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from core import nd
from gluon import HybridBlock, nn, rnn
from gluon.model_zoo import vision
from tests.mxnet_ref import requires_mxnet, run_mxnet

_RS = np.random.RandomState(0)


def _r(*shape):
    return nd.array(_RS.randn(*shape).astype("float32"))


def _seq(*layers):
    net = nn.HybridSequential()
    net.add(*layers)
    return net


class _Cat(HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.a = nn.Dense(4)
        self.b = nn.Dense(3)

    def hybrid_forward(self, F, x):
        return F.concat(self.a(x), self.b(x), dim=1)


class _Elem(HybridBlock):
    def hybrid_forward(self, F, x, y):
        z = (x + y) * 2 - 1 / (F.abs(y) + 1)
        z = F.maximum(z, 0.5) + F.exp(-x) ** 2 + 3 - x
        return (F.softmax(z, axis=-1), F.log_softmax(x * y), F.sum(z, axis=1),
                F.relu(z).reshape((0, -1)).transpose(), F.sigmoid(z) > 0.7)


class _Emb(HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.e = nn.Embedding(10, 4)
        self.d = nn.Dense(2, flatten=False)

    def hybrid_forward(self, F, x):
        return self.d(self.e(x))


def _rnn(layer, x):
    layer.initialize()
    batch = x.shape[0] if layer._layout == "NTC" else x.shape[1]
    states = [_r(*s.shape) for s in layer.begin_state(batch)]
    return layer, [x, states]


CASES = {
    "dense": lambda: (_seq(nn.Dense(5, activation="relu"),
                           nn.Dense(3, use_bias=False, activation="tanh")), _r(2, 7)),
    "conv2d_batchnorm_dropout": lambda: (_seq(
        nn.Conv2D(4, 3, in_channels=3), nn.BatchNorm(), nn.Activation("relu"),
        nn.MaxPool2D(), nn.Dropout(0.5), nn.Flatten(), nn.Dense(5)), _r(2, 3, 8, 8)),
    "conv1d_pool": lambda: (_seq(nn.Conv1D(4, 3, strides=2, padding=1), nn.AvgPool1D(),
                                 nn.GlobalMaxPool1D()), _r(2, 3, 9)),
    "conv3d_pool": lambda: (_seq(nn.Conv3D(2, 3, padding=1), nn.MaxPool3D(),
                                 nn.GlobalAvgPool3D()), _r(1, 2, 6, 6, 6)),
    "conv2d_transpose": lambda: (_seq(nn.Conv2DTranspose(3, 3, strides=2),
                                      nn.GlobalAvgPool2D(), nn.Flatten()), _r(1, 2, 5, 5)),
    "pooling": lambda: (_seq(nn.AvgPool2D(3, 2, 1), nn.MaxPool2D(3, 1, ceil_mode=True),
                             nn.GlobalMaxPool2D()), _r(1, 2, 9, 9)),
    "layer_norm": lambda: (_seq(nn.Dense(6), nn.LayerNorm(), nn.Dense(8)), _r(3, 5)),
    "instance_norm": lambda: (_seq(nn.InstanceNorm()), _r(2, 3, 4, 4)),
    "group_norm": lambda: (_seq(nn.GroupNorm(num_groups=2)), _r(2, 4, 3, 3)),
    "activations": lambda: (_seq(
        nn.Dense(6), nn.LeakyReLU(0.1), nn.Dense(6), nn.PReLU(), nn.Dense(6), nn.ELU(),
        nn.SELU(), nn.Swish(), nn.GELU(), nn.Activation("sigmoid"),
        nn.Activation("softrelu"), nn.Activation("softsign")), _r(3, 5)),
    "embedding": lambda: (_Emb(), nd.array([[1, 2, 3], [4, 5, 9]], dtype="float32")),
    "concat": lambda: (_Cat(), _r(2, 5)),
    "elementwise_and_heads": lambda: (_Elem(), [_r(2, 5), _r(2, 5)]),
    "rnn_relu": lambda: _rnn(rnn.RNN(6, 2, input_size=4), _r(5, 2, 4)),
    "lstm": lambda: _rnn(rnn.LSTM(6, 1, input_size=4), _r(5, 2, 4)),
    "gru_bidirectional": lambda: _rnn(rnn.GRU(6, 2, input_size=4, bidirectional=True),
                                      _r(5, 2, 4)),
    "lstm_ntc": lambda: _rnn(rnn.LSTM(6, layout="NTC", input_size=4), _r(2, 5, 4)),
    "reflection_pad": lambda: (_seq(nn.ReflectionPad2D(1), nn.Conv2D(2, 3)), _r(1, 2, 5, 5)),
    "resnet18_v2": lambda: (vision.resnet18_v2(classes=10), _r(1, 3, 32, 32)),
    "resnet18_v1": lambda: (vision.resnet18_v1(classes=10), _r(1, 3, 32, 32)),
    "mobilenet0_25": lambda: (vision.mobilenet0_25(classes=10), _r(1, 3, 32, 32)),
    "mobilenet_v2_0_25": lambda: (vision.mobilenet_v2_0_25(classes=10), _r(1, 3, 32, 32)),
}


def _flat(v):
    if isinstance(v, (list, tuple)):
        return [y for x in v for y in _flat(x)]
    return [v]


_MX_SCRIPT = """
import json, sys, numpy as np, mxnet as mx
sym_file, param_file, inputs_file, out_file = {args!r}
names = json.loads({names!r})
mx.sym.load(sym_file)  # the plain symbol loader accepts the file too
blk = mx.gluon.SymbolBlock.imports(sym_file, names, param_file)
z = np.load(inputs_file)
xs = [mx.nd.array(z[n], dtype=z[n].dtype) for n in names]
out = blk(*xs)
out = out if isinstance(out, (list, tuple)) else [out]
np.savez(out_file, *[o.asnumpy() for o in out])
print("ok")
"""


@requires_mxnet
@pytest.mark.parametrize("case", sorted(CASES))
def test_real_mxnet_runs_our_export(case, tmp_path):
    net, x = CASES[case]()
    net.initialize()
    net.hybridize()
    xs = x if isinstance(x, list) else [x]
    ours = [o.asnumpy() for o in _flat(net(*xs))]
    sym_file, param_file = net.export(os.fspath(tmp_path / "net"))
    with open(sym_file) as f:
        doc = json.load(f)
    assert all("training" not in n.get("attrs", {}) for n in doc["nodes"])
    assert not any(n["op"].startswith("_") and n["op"] not in _MX_INTERNAL for n in doc["nodes"])
    params = set(nd.load(param_file))
    names = [n["name"] for n in doc["nodes"] if n["op"] == "null"
             and f"arg:{n['name']}" not in params and f"aux:{n['name']}" not in params]
    flat_x = _flat(xs)
    assert len(names) == len(flat_x), (names, len(flat_x))
    np.savez(tmp_path / "inputs.npz", **{n: a.asnumpy() for n, a in zip(names, flat_x)})
    out_file = os.fspath(tmp_path / "mx_out.npz")
    run_mxnet(_MX_SCRIPT.format(args=(sym_file, param_file, os.fspath(tmp_path / "inputs.npz"),
                                      out_file), names=json.dumps(names)))
    theirs = np.load(out_file)
    theirs = [theirs[f"arr_{i}"] for i in range(len(theirs.files))]
    assert len(theirs) == len(ours)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        # MXNet 1.x's reductions to a scalar have shape (1,); ours ().
        assert a.size == b.size, (k, a.shape, b.shape)
        np.testing.assert_allclose(a.reshape(b.shape), b.astype(a.dtype), rtol=1e-4,
                                   atol=1e-5, err_msg=f"{case}: output {k}")


# MXNet operators whose names start with "_" (scalar forms, copies) that exports use.
_MX_INTERNAL = {"_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar",
                "_div_scalar", "_rdiv_scalar", "_power_scalar", "_rpower_scalar",
                "_maximum_scalar", "_minimum_scalar", "_mod_scalar", "_rmod_scalar",
                "_greater_scalar", "_lesser_scalar", "_equal_scalar", "_not_equal_scalar",
                "_greater_equal_scalar", "_lesser_equal_scalar", "_copy", "_hypot_scalar",
                "_logical_and_scalar", "_logical_or_scalar", "_logical_xor_scalar"}


def test_export_refuses_an_operator_mxnet_lacks(tmp_path):
    from core import np as knp

    class Einsum(HybridBlock):
        def forward(self, x):
            return knp.einsum("ij,jk->ik", x, x)

    net = Einsum()
    net.hybridize()
    x = _r(3, 3)
    y = net(x)
    with pytest.raises(ValueError, match=r"Einsum.*export.*op 'einsum'.*MXNet 1.9 cannot load"):
        net.export(os.fspath(tmp_path / "e"))
    sym_file, param_file = net.export(os.fspath(tmp_path / "e"), mxnet_compatible=False)
    from gluon import SymbolBlock

    back = SymbolBlock.imports(sym_file, ["data"], param_file)
    np.testing.assert_allclose(back(x).asnumpy(), y.asnumpy(), rtol=1e-6)


def test_export_round_trip_here_keeps_batchnorm_modes(tmp_path):
    from core import autograd
    from gluon import SymbolBlock

    net = _seq(nn.Dense(4, in_units=3), nn.BatchNorm(in_channels=4), nn.Dropout(0.5))
    net.initialize()
    net.hybridize()
    x = _r(5, 3)
    with autograd.record():
        net(x)  # updates the moving statistics
    y = net(x)
    sym_file, param_file = net.export(os.fspath(tmp_path / "bn"))
    back = SymbolBlock.imports(sym_file, ["data"], param_file)
    np.testing.assert_allclose(back(x).asnumpy(), y.asnumpy(), rtol=1e-5, atol=1e-6)
    mean = back.collect_params()[next(k for k in back.collect_params() if "running_mean" in k)]
    before = mean.data().asnumpy().copy()
    with autograd.record():
        back(x)
    assert not np.allclose(before, mean.data().asnumpy())  # training updates them
