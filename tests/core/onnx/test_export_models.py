"""ONNX export of whole models (hybridized Gluon blocks, files), run with onnxruntime."""
from __future__ import annotations

import numpy
import pytest

from core import nd, sym
from core.onnx import export_graph, export_model
from gluon import nn, rnn
from tests.core.onnx.export_util import block_params, check, onnx, rand, run_onnx


def _trace(block, *shapes):
    block.initialize()
    block.hybridize()
    block(*[nd.array(numpy.abs(rand(*s))) for s in shapes])
    names = ["data"] if len(shapes) == 1 else [f"data{i}" for i in range(len(shapes))]
    return block(*[sym.var(n) for n in names])


def _warm_bn(net):
    """Give BatchNorm moving statistics that are not 0 and 1."""
    for name, p in net.collect_params().items():
        if name.endswith("running_mean"):
            p.set_data(nd.array(rand(*p.shape, seed=3) * 0.1))
        elif name.endswith("running_var"):
            p.set_data(nd.array(numpy.abs(rand(*p.shape, seed=4)) + 0.5))
        elif name.endswith("gamma"):
            p.set_data(nd.array(rand(*p.shape, seed=5) * 0.2 + 1))


def test_lenet_with_batchnorm():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(6, 5, padding=2), nn.BatchNorm(), nn.Activation("relu"),
            nn.MaxPool2D(2), nn.Conv2D(16, 5), nn.BatchNorm(), nn.Activation("tanh"),
            nn.AvgPool2D(2), nn.Flatten(), nn.Dense(32, activation="relu"), nn.Dropout(0.5),
            nn.Dense(10))
    s = _trace(net, (2, 1, 28, 28))
    _warm_bn(net)
    check(s, block_params(net), {"data": rand(2, 1, 28, 28)}, rtol=1e-4, atol=1e-5)


def test_grouped_dilated_conv_and_full_pooling():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=2, dilation=2, groups=2, in_channels=4),
            nn.MaxPool2D(3, strides=2, padding=1, ceil_mode=True),
            nn.AvgPool2D(3, strides=2, padding=1, ceil_mode=True),
            nn.AvgPool2D(2, strides=1, padding=1, count_include_pad=False),
            nn.GlobalAvgPool2D())
    s = _trace(net, (2, 4, 11, 11))
    check(s, block_params(net), {"data": rand(2, 4, 11, 11)})


def test_deconvolution():
    net = nn.HybridSequential()
    net.add(nn.Conv2DTranspose(3, 4, strides=2, padding=1, output_padding=1, in_channels=2),
            nn.Conv2DTranspose(2, 3, strides=1, groups=1, use_bias=False))
    s = _trace(net, (1, 2, 5, 5))
    check(s, block_params(net), {"data": rand(1, 2, 5, 5)})


@pytest.mark.parametrize("cls", [rnn.LSTM, rnn.GRU, rnn.RNN])
def test_rnn_bidirectional_two_layers(cls):
    layer = cls(6, num_layers=2, bidirectional=True, input_size=4)
    s = _trace(layer, (5, 3, 4))
    check(s, block_params(layer), {"data": rand(5, 3, 4)}, rtol=1e-4, atol=1e-5)


def test_lstm_states_in_and_out_ntc():
    layer = rnn.LSTM(5, num_layers=1, layout="NTC", input_size=3)
    layer.initialize()
    layer.hybridize()
    x, h, c = sym.var("data"), sym.var("h0"), sym.var("c0")
    out, (hn, cn) = layer(x, [h, c])
    s = sym.Group([out, hn, cn])
    feeds = {"data": rand(2, 4, 3), "h0": rand(1, 2, 5, seed=1), "c0": rand(1, 2, 5, seed=2)}
    check(s, block_params(layer), feeds, rtol=1e-4, atol=1e-5)


def test_text_model_embedding_dense():
    net = nn.HybridSequential()
    net.add(nn.Embedding(50, 8), nn.Dense(16, flatten=False, activation="relu"),
            nn.LayerNorm(), nn.Dense(4))
    s = _trace(net, (3, 7))
    idx = numpy.random.default_rng(0).integers(0, 50, (3, 7)).astype(numpy.float32)
    check(s, block_params(net), {"data": idx})


def test_dynamic_batch():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3), nn.BatchNorm(), nn.Activation("relu"), nn.Flatten(),
            nn.Dense(5))
    s = _trace(net, (2, 3, 6, 6))
    params = block_params(net)
    model = export_graph(s, params, [(2, 3, 6, 6)], dynamic=True,
                         dynamic_input_shapes=[(None, 3, 6, 6)])
    for batch in (1, 5):
        x = rand(batch, 3, 6, 6)
        got = run_onnx(model, {"data": x})[0]
        from tests.core.onnx.export_util import ours
        numpy.testing.assert_allclose(got, ours(s, params, {"data": x})[0], rtol=1e-5,
                                      atol=1e-5)


def test_reshape_codes_dynamic():
    x = sym.var("data")
    y = sym.reshape(x, shape=(0, -3, -2))      # (N, 2, 3, 4) -> (N, 6, 4)
    y = sym.reshape(y, shape=(-1, 4))           # (N * 6, 4)
    y = sym.reshape(y, shape=(-4, -1, 6, -2))   # (N, 6, 4)
    model = export_graph(y, {}, [(2, 2, 3, 4)], dynamic=True,
                         dynamic_input_shapes=[(None, 2, 3, 4)])
    for batch in (1, 3):
        v = rand(batch, 2, 3, 4)
        got = run_onnx(model, {"data": v})[0]
        numpy.testing.assert_allclose(got, v.reshape(batch, 6, 4))


def test_export_model_from_files(tmp_path):
    net = nn.HybridSequential()
    net.add(nn.Conv2D(3, 3), nn.BatchNorm(), nn.Dense(4))
    s = _trace(net, (1, 2, 5, 5))
    _warm_bn(net)
    prefix = str(tmp_path / "net")
    net.export(prefix)
    path = export_model(prefix + "-symbol.json", prefix + "-0000.params", [(1, 2, 5, 5)],
                        numpy.float32, str(tmp_path / "net.onnx"))
    model = onnx.load(path)
    onnx.checker.check_model(model)
    x = rand(1, 2, 5, 5)
    from tests.core.onnx.export_util import ours
    numpy.testing.assert_allclose(run_onnx(model, {"data": x})[0],
                                  ours(s, block_params(net), {"data": x})[0], rtol=1e-5,
                                  atol=1e-5)


def test_export_model_from_block_and_list_params(tmp_path):
    net = nn.HybridSequential()
    net.add(nn.Dense(3, activation="sigmoid"), nn.Dense(2))
    _trace(net, (2, 4))
    path = export_model(net, None, [(2, 4)], onnx_file_path=str(tmp_path / "b.onnx"))
    got = run_onnx(onnx.load(path), {"data": rand(2, 4)})[0]
    numpy.testing.assert_allclose(got, net(nd.array(rand(2, 4))).asnumpy(), rtol=1e-5,
                                  atol=1e-6)


def test_unsupported_operator_names_node_and_op():
    x = sym.var("data")
    y = sym.erfinv(x, name="strange")
    with pytest.raises(ValueError, match=r"strange.*erfinv"):
        export_graph(y, {}, [(2, 3)])


@pytest.mark.parametrize("name", ["resnet18_v1", "mobilenetv2_0.25"])
def test_model_zoo_dynamic_batch(name, tmp_path):
    from gluon.model_zoo import vision

    net = vision.get_model(name, classes=10)
    net.initialize()
    net.hybridize()
    x = rand(2, 3, 32, 32)
    want = net(nd.array(x)).asnumpy()
    path = export_model(net, None, [x.shape], onnx_file_path=str(tmp_path / "m.onnx"),
                        dynamic=True)  # every dimension open, as MXNet's dynamic=True
    model = onnx.load(path)
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param
    numpy.testing.assert_allclose(run_onnx(model, {"data": x})[0], want, rtol=1e-4,
                                  atol=1e-5)
    one = run_onnx(model, {"data": x[:1]})[0]
    numpy.testing.assert_allclose(one, want[:1], rtol=1e-4, atol=1e-5)


def test_rnn_dynamic_sequence_and_batch():
    layer = rnn.GRU(6, num_layers=2, bidirectional=True, input_size=4)
    s = _trace(layer, (5, 3, 4))
    model = export_graph(s, block_params(layer), [(5, 3, 4)], dynamic=True,
                         dynamic_input_shapes=[(None, None, 4)])
    for shape in ((5, 1, 4), (2, 7, 4)):
        x = rand(*shape)
        numpy.testing.assert_allclose(run_onnx(model, {"data": x})[0],
                                      layer(nd.array(x)).asnumpy(), rtol=1e-4, atol=1e-5)


def test_traced_batch_constants_open_with_dynamic_batch():
    """What tracing at batch 2 leaves (Keras): a reshape to (2, 4) and zeros (2, 4) that
    are only broadcast; with a dynamic batch both follow the input's batch."""
    from core.ops.registry import REGISTRY
    from core.symbol.graph import Entry, Node

    x = sym.var("data")
    zeros = sym.Symbol([Entry(Node(None, "h0", value=numpy.zeros((2, 4), numpy.float32)), 0)])
    u = sym.Symbol([Entry(Node(None, "u", value=rand(4, 4, seed=1)), 0)])
    flat = sym.reshape(x, newshape=(2, 4), mx_codes=False)
    mm = Node(REGISTRY["matmul"], "mm", [zeros.outputs[0], u.outputs[0]],
              dict(REGISTRY["matmul"].attrs))
    y = sym.relu(flat + sym.Symbol([Entry(mm, 0)]))
    model = export_graph(y, {}, [(2, 2, 2)], dynamic=True,
                         dynamic_input_shapes=[(None, 2, 2)])
    v = rand(5, 2, 2)
    numpy.testing.assert_allclose(run_onnx(model, {"data": v})[0],
                                  numpy.maximum(v.reshape(5, -1), 0), rtol=1e-6)


def test_mxnet_code_runs_unchanged_through_the_alias(tmp_path):
    """``mx.onnx.export_model`` of MXNet 1.9 code, through ``gluon.compat.mxnet``."""
    from gluon.compat import mxnet as alias

    was = alias.is_installed()
    alias.install(force=True)
    try:
        import mxnet as mx

        net = mx.gluon.nn.HybridSequential()
        net.add(mx.gluon.nn.Dense(4, activation="relu"), mx.gluon.nn.Dense(2))
        net.initialize()
        net.hybridize()
        x = rand(1, 3)
        want = net(mx.nd.array(x)).asnumpy()
        prefix = str(tmp_path / "mx")
        net.export(prefix)
        path = mx.onnx.export_model(prefix + "-symbol.json", prefix + "-0000.params",
                                    [(1, 3)], numpy.float32, str(tmp_path / "mx.onnx"))
        assert "FullyConnected" in mx.onnx.get_operator_support()
    finally:
        if not was:
            alias.uninstall()
    numpy.testing.assert_allclose(run_onnx(onnx.load(path), {"data": x})[0], want,
                                  rtol=1e-5, atol=1e-6)
