"""Write the real-MXNet fixtures of tests/core/test_mxnet_format.py and
tests/gluon/model_zoo/test_pretrained.py (run once with MXNet 1.9.1; the files are
committed):

    /root/.cache/kbackend/mxnet-1.9.1/bin/python tests/data/mxnet/make_fixtures.py

Files (all tiny, seeded):
- ``list.params``: ``nd.save`` of a list (float32 2x3, int32 (4,), float64 (1,)).
- ``dtypes.params``: ``nd.save`` of a dict with one array per dtype MXNet 1.9 writes
  (float16/32/64, uint8, int8, int32, int64, bool, bfloat16) plus an empty (0, 3) array.
- ``np_shape.params``: ``nd.save`` under NumPy shape semantics (V3 arrays): a 0-d
  array, an empty (2, 0) array and a (2, 2) array.
- ``sparse.params``: a row_sparse (4, 2) and a csr (3, 4) array.
- ``gluon_net.params``: ``save_parameters`` of Conv2D(4, 3) + BatchNorm + relu + Dense(3)
  (HybridSequential, in_channels set), running statistics non-trivial;
  ``gluon_net_io.params``: its input ``x`` (2, 2, 5, 5) and output ``y`` (inference).
- ``gluon_net-symbol.json`` + ``gluon_net-0000.params``: ``export`` of the same net.
- ``module_net-symbol.json`` + ``module_net-0003.params``: ``mx.model.save_checkpoint``
  of a symbolic FullyConnected(5)-relu-FullyConnected(3) net at epoch 3;
  ``module_net_io.params``: its input ``data`` (2, 4) and output ``out``.

``legacy_ndarray.v0`` is not made here: it is MXNet's own legacy-format test file
(``tests/python/unittest/legacy_ndarray.v0`` in MXNet 1.9.1: six ``arange(128)``).
"""
import os

import numpy as np

import mxnet as mx
from mxnet import gluon, nd
from mxnet.contrib.amp.amp import bfloat16  # MXNet 1.9's NumPy stand-in for it

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.RandomState(0)


def path(name):
    return os.path.join(HERE, name)


def arrays():
    nd.save(path("list.params"), [
        nd.array(np.arange(6).reshape(2, 3), dtype="float32"),
        nd.array([1, -2, 3, 2 ** 30], dtype="int32"),
        nd.array([0.1], dtype="float64")])
    d = {
        "float16": nd.array(rng.randn(2, 3), dtype="float16"),
        "float32": nd.array(rng.randn(3, 2), dtype="float32"),
        "float64": nd.array(rng.randn(4), dtype="float64"),
        "uint8": nd.array([0, 1, 255], dtype="uint8"),
        "int8": nd.array([-128, 0, 127], dtype="int8"),
        "int32": nd.array([-2 ** 31, 0, 2 ** 31 - 1], dtype="int32"),
        "int64": nd.array([-2 ** 40, 0, 2 ** 40], dtype="int64"),
        "bool": nd.array([True, False, True], dtype="bool"),
        "bfloat16": nd.amp_cast(nd.array([1.5, -2.25, 3.0e38, 0.1]), dtype=bfloat16),
        "empty": nd.array(np.zeros((0, 3), np.float32)),
    }
    nd.save(path("dtypes.params"), d)
    with mx.util.np_shape(True):
        nd.save(path("np_shape.params"), {
            "scalar": mx.nd.array(np.array(2.5, dtype=np.float32)),
            "empty": mx.nd.array(np.zeros((2, 0), np.float32)),
            "matrix": mx.nd.array([[1, 2], [3, 4]], dtype="int64")})
    rsp = nd.sparse.row_sparse_array((np.array([[1, 2], [3, 4]], dtype=np.float32),
                                      np.array([1, 3])), shape=(4, 2))
    csr = nd.sparse.csr_matrix((np.array([5, 6, 7], dtype=np.float32), np.array([0, 3, 1]),
                                np.array([0, 2, 2, 3])), shape=(3, 4))
    nd.save(path("sparse.params"), {"rsp": rsp, "csr": csr})


def gluon_net():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(4, 3, in_channels=2), gluon.nn.BatchNorm(in_channels=4),
            gluon.nn.Activation("relu"), gluon.nn.Dense(3, in_units=36))
    net.initialize(mx.init.Normal(0.5))
    for name, p in net.collect_params().items():
        if "running_mean" in name:
            p.set_data(nd.array(rng.randn(*p.shape)))
        elif "running_var" in name:
            p.set_data(nd.array(rng.rand(*p.shape) + 0.5))
        elif "beta" in name or "bias" in name:
            p.set_data(nd.array(rng.randn(*p.shape) * 0.1))
    x = nd.array(rng.randn(2, 2, 5, 5))
    y = net(x)
    net.save_parameters(path("gluon_net.params"))
    nd.save(path("gluon_net_io.params"), {"x": x, "y": y})
    net.hybridize()
    net(x)
    net.export(path("gluon_net"))


def module_net():
    data = mx.sym.var("data")
    h = mx.sym.FullyConnected(data, num_hidden=5, name="fc1")
    h = mx.sym.Activation(h, act_type="relu", name="relu1")
    out = mx.sym.FullyConnected(h, num_hidden=3, name="fc2")
    shapes = dict(zip(out.list_arguments(), out.infer_shape(data=(2, 4))[0]))
    args = {k: nd.array(rng.randn(*s)) for k, s in shapes.items() if k != "data"}
    x = nd.array(rng.randn(2, 4))
    y = out.eval(ctx=mx.cpu(), data=x, **args)[0]
    mx.model.save_checkpoint(path("module_net"), 3, out, args, {})
    nd.save(path("module_net_io.params"), {"data": x, "out": y})


if __name__ == "__main__":
    arrays()
    gluon_net()
    module_net()
    print(sorted(os.listdir(HERE)))
