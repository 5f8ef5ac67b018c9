"""Every Gluon layer composes into a Symbol (``layer(sym.var(..., shape=...))``) whose
inferred shapes match the layer's imperative output, and whose graph runs."""
import numpy as np
import pytest

from core import nd, sym
from core.symbol import evaluate
from gluon import nn, rnn

X2, X3, X4, X5 = (2, 6), (2, 3, 8), (2, 3, 8, 8), (2, 3, 4, 6, 6)

LAYERS = [
    (lambda: nn.Dense(5), X2),
    (lambda: nn.Dense(5, activation="tanh", flatten=False), X3),
    (lambda: nn.Dropout(0.3), X2),
    (lambda: nn.Embedding(10, 4), (2, 5)),
    (lambda: nn.Flatten(), X4),
    (lambda: nn.Identity(), X2),
    (lambda: nn.Activation("sigmoid"), X2),
    (lambda: nn.LeakyReLU(0.1), X2),
    (lambda: nn.PReLU(), X2),
    (lambda: nn.ELU(), X2),
    (lambda: nn.SELU(), X2),
    (lambda: nn.GELU(), X2),
    (lambda: nn.Swish(), X2),
    (lambda: nn.SiLU(), X2),
    (lambda: nn.Conv1D(4, 3), X3),
    (lambda: nn.Conv2D(4, 3, padding=1, strides=2), X4),
    (lambda: nn.Conv3D(2, 3), X5),
    (lambda: nn.Conv1DTranspose(4, 3), X3),
    (lambda: nn.Conv2DTranspose(4, 3, strides=2), X4),
    (lambda: nn.Conv3DTranspose(2, 2), X5),
    (lambda: nn.MaxPool1D(2), X3),
    (lambda: nn.MaxPool2D(2), X4),
    (lambda: nn.MaxPool3D(2), X5),
    (lambda: nn.AvgPool1D(2), X3),
    (lambda: nn.AvgPool2D(3, strides=1, padding=1), X4),
    (lambda: nn.AvgPool3D(2), X5),
    (lambda: nn.GlobalMaxPool1D(), X3),
    (lambda: nn.GlobalMaxPool2D(), X4),
    (lambda: nn.GlobalMaxPool3D(), X5),
    (lambda: nn.GlobalAvgPool1D(), X3),
    (lambda: nn.GlobalAvgPool2D(), X4),
    (lambda: nn.GlobalAvgPool3D(), X5),
    (lambda: nn.ReflectionPad2D(1), X4),
    (lambda: nn.BatchNorm(), X4),
    (lambda: nn.BatchNormReLU(), X4),
    (lambda: nn.SyncBatchNorm(num_devices=1), X4),
    (lambda: nn.InstanceNorm(), X4),
    (lambda: nn.LayerNorm(), X3),
    (lambda: nn.GroupNorm(num_groups=3), X4),
    (lambda: nn.HybridLambda(lambda F, x: F.relu(x) * 2), X2),
    (lambda: rnn.RNN(5, num_layers=2), X3),
    (lambda: rnn.LSTM(5, bidirectional=True), X3),
    (lambda: rnn.GRU(5, layout="NTC"), X3),
]


def _seq(*layers):
    net = nn.HybridSequential()
    net.add(*layers)
    return net


LAYERS += [
    (lambda: _seq(nn.Conv2D(4, 3), nn.BatchNorm(), nn.Activation("relu"), nn.MaxPool2D(2),
                  nn.Flatten(), nn.Dense(3)), X4),
]


@pytest.mark.parametrize("make, shape", LAYERS,
                         ids=[f"{i}-{m().__class__.__name__}" for i, (m, _) in enumerate(LAYERS)])
def test_layer_on_a_symbol(make, shape):
    layer = make()
    layer.initialize()
    dtype = "int32" if isinstance(layer, nn.Embedding) else "float32"
    x = nd.array(np.random.default_rng(0).integers(0, 10, shape) if dtype == "int32"
                 else np.random.default_rng(0).standard_normal(shape), dtype=dtype)
    expected = layer(x)  # completes deferred initialization
    out = layer(sym.var("data", shape=shape, dtype=dtype))
    args = out.list_arguments()
    assert args[0] == "data"
    params = layer.collect_params()
    assert set(args[1:]) | set(out.list_auxiliary_states()) <= set(params)
    arg_shapes, out_shapes, aux_shapes = out.infer_shape(data=shape)
    assert out_shapes[0] == tuple(expected.shape)
    for name, s in zip(args[1:], arg_shapes[1:]):
        assert s == params[name].shape, name
    for name, s in zip(out.list_auxiliary_states(), aux_shapes):
        assert s == params[name].shape, name
    values = {"data": x, **{n: p.data() for n, p in params.items()}}
    (got, *_), _ = evaluate(out.graph, values)
    np.testing.assert_allclose(got.asnumpy(), expected.asnumpy(), rtol=1e-5, atol=1e-6)
