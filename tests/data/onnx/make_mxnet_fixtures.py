"""Write the ONNX fixtures exported by real MXNet 1.9.1 (run with its venv's Python:
``~/.cache/kbackend/mxnet-1.9.1/bin/python tests/data/onnx/make_mxnet_fixtures.py``;
needs onnx==1.14.1 there, see tests/mxnet_venv.sh).

For each model: ``<name>.onnx`` (MXNet's ``mx.onnx.export_model``), ``<name>_in.npy``
(the input) and ``<name>_out.npy`` (MXNet's own output for it), all small.
"""
import os

import mxnet as mx
import numpy as np
import onnx.defs

# MXNet 1.9 exports at onnx's newest opset; its LSTM converter writes opset-13 Split nodes
# (no sizes), invalid from opset 18: export at 13, what MXNet 1.9 was released against
onnx.defs.onnx_opset_version = lambda: 13

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(7)


def cnn():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Conv2D(6, 3, padding=1, in_channels=3),
            mx.gluon.nn.BatchNorm(in_channels=6), mx.gluon.nn.Activation("relu"),
            mx.gluon.nn.MaxPool2D(2), mx.gluon.nn.Conv2D(8, 3, strides=2, groups=2,
                                                         in_channels=6),
            mx.gluon.nn.AvgPool2D(2, padding=1), mx.gluon.nn.Flatten(),
            mx.gluon.nn.Dense(10, in_units=8 * 2 * 2), mx.gluon.nn.Dropout(0.5))
    net.initialize(mx.init.Xavier())
    for p in net.collect_params().values():  # non-trivial BatchNorm statistics
        if p.name.endswith(("running_mean", "gamma", "beta")):
            p.set_data(mx.nd.array(rng.uniform(-0.5, 0.5, p.shape) + (1 if "gamma" in
                                                                       p.name else 0)))
        elif p.name.endswith("running_var"):
            p.set_data(mx.nd.array(rng.uniform(0.5, 1.5, p.shape)))
    return net, rng.standard_normal((2, 3, 12, 12)).astype("float32")


def lstm():
    class Net(mx.gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.rnn = mx.gluon.rnn.LSTM(5, num_layers=1, bidirectional=True, input_size=4)
            self.fc = mx.gluon.nn.Dense(3, flatten=False, in_units=10)

        def hybrid_forward(self, F, x):
            return F.softmax(self.fc(self.rnn(x)), axis=-1)

    net = Net()
    net.initialize(mx.init.Uniform(0.5))
    return net, rng.standard_normal((6, 2, 4)).astype("float32")


def gru2():
    # MXNet's exporter writes stacked layers correctly only when input size == hidden size
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.rnn.GRU(5, num_layers=2, input_size=5))
    net.initialize(mx.init.Uniform(0.5))
    return net, rng.standard_normal((6, 2, 5)).astype("float32")


def rnn_relu():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.rnn.RNN(5, activation="relu", input_size=4))
    net.initialize(mx.init.Uniform(0.5))
    return net, rng.standard_normal((6, 2, 4)).astype("float32")


for name, build in (("mxnet_cnn", cnn), ("mxnet_lstm", lstm), ("mxnet_gru2", gru2),
                    ("mxnet_rnn_relu", rnn_relu)):
    net, x = build()
    net.hybridize()
    out = net(mx.nd.array(x)).asnumpy()
    prefix = os.path.join(HERE, name)
    net.export(prefix)
    mx.onnx.export_model(prefix + "-symbol.json", prefix + "-0000.params", [x.shape],
                         [np.float32], prefix + ".onnx")
    os.remove(prefix + "-symbol.json")
    os.remove(prefix + "-0000.params")
    np.save(prefix + "_in.npy", x)
    np.save(prefix + "_out.npy", out)
    print(name, x.shape, out.shape, os.path.getsize(prefix + ".onnx"))
