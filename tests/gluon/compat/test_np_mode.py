"""MXNet 2.0-style Gluon code: NumPy mode (npx.set_np), blocks with ``forward(self, x)``
only, parameters used with ``np`` functions, layers against their ``npx`` formulas,
transforms on ``np`` arrays, ``split_and_load(device=...)``."""
import numpy
import pytest

from core import autograd, cpu, nd, np, npx
from gluon import HybridBlock, Parameter, data, init, nn, rnn
from gluon.data.vision import transforms
from gluon.utils import split_and_load


@pytest.fixture
def np_mode():
    npx.set_np()
    yield
    npx.reset_np()


def _close(a, b, tol=1e-5):
    numpy.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=tol, atol=tol)


class _Mlp(HybridBlock):
    """MXNet 2.0 style: no prefix/params arguments, no hybrid_forward, np/npx inside."""

    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(8, in_units=4)
        self.scale = Parameter("scale", shape=(8,), init=init.One())

    def forward(self, x):
        return np.tanh(npx.relu(self.dense(x)) * self.scale.data())


def test_forward_only_block_hybridizes_and_trains(np_mode):
    net = _Mlp()
    net.initialize()
    names = sorted(net.collect_params())
    assert names[-1] == "scale" and [n.split("_")[-1] for n in names[:2]] == ["bias", "weight"]
    x = np.random.normal(size=(3, 4))
    eager = net(x)
    grads = []
    for hybrid in (False, True):
        net.hybridize(hybrid)
        with autograd.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
        grads.append({k: p.grad().asnumpy() for k, p in net.collect_params().items()})
        _close(net(x), eager)
    for k in grads[0]:
        numpy.testing.assert_allclose(grads[0][k], grads[1][k], rtol=1e-5, atol=1e-6)


# Layers built the same way give the same outputs and gradients in NumPy and nd mode.
_LAYERS = {
    "Dense": (lambda: nn.Dense(5, activation="relu"), (4, 3)),
    "Dense_noflatten": (lambda: nn.Dense(5, flatten=False), (2, 3, 4)),
    "Conv2D": (lambda: nn.Conv2D(4, 3, padding=1, strides=2), (2, 3, 7, 7)),
    "Conv1D": (lambda: nn.Conv1D(4, 3), (2, 3, 9)),
    "MaxPool2D": (lambda: nn.MaxPool2D(2), (2, 3, 6, 6)),
    "AvgPool2D": (lambda: nn.AvgPool2D(2), (2, 3, 6, 6)),
    "GlobalAvgPool2D": (lambda: nn.GlobalAvgPool2D(), (2, 3, 6, 6)),
    "BatchNorm": (lambda: nn.BatchNorm(), (4, 3, 5, 5)),
    "LayerNorm": (lambda: nn.LayerNorm(), (4, 6)),
    "Embedding": (lambda: nn.Embedding(10, 4), (3, 5)),
    "Dropout": (lambda: nn.Dropout(0.5), (4, 6)),
    "Flatten": (lambda: nn.Flatten(), (2, 3, 4)),
    "RNN": (lambda: rnn.RNN(6, num_layers=2), (5, 2, 3)),
    "LSTM": (lambda: rnn.LSTM(6, bidirectional=True), (5, 2, 3)),
    "GRU": (lambda: rnn.GRU(6), (5, 2, 3)),
}


def _run(layer, x, train):
    x = x.copy()
    x.attach_grad()
    with autograd.record(train_mode=train):
        y = layer(x)
    y.backward()
    return y, x.grad, {k: p.grad().asnumpy() for k, p in layer.collect_params().items()
                       if p.grad_req != "null"}


@pytest.mark.parametrize("name", sorted(_LAYERS))
def test_layers_equal_in_np_and_nd_mode(name):
    make, shape = _LAYERS[name]
    layer = make()
    layer.initialize(init.Xavier() if name != "Embedding" else init.Uniform())
    rng = numpy.random.default_rng(0)
    raw = (rng.integers(0, 10, shape) if name == "Embedding" else rng.normal(size=shape)).astype(
        "float32")
    npx.reset_np()
    out_nd = _run(layer, nd.array(raw), train=False)
    npx.set_np()
    try:
        out_np = _run(layer, np.array(raw), train=False)
    finally:
        npx.reset_np()
    _close(out_np[0], out_nd[0])
    if name != "Embedding":
        _close(out_np[1], out_nd[1])
    for k, g in out_nd[2].items():
        numpy.testing.assert_allclose(out_np[2][k], g, rtol=1e-5, atol=1e-6)


def test_layers_match_their_npx_formulas(np_mode):
    x = np.random.normal(size=(2, 3, 6, 6))
    conv = nn.Conv2D(4, 3, padding=1, in_channels=3)
    conv.initialize()
    _close(conv(x), npx.convolution(x, conv.weight.data(), conv.bias.data(), kernel=(3, 3),
                                    pad=(1, 1), num_filter=4))
    dense = nn.Dense(5, in_units=108)
    dense.initialize()
    _close(dense(x), np.dot(x.reshape(2, -1), dense.weight.data().T) + dense.bias.data())
    _close(dense(x), npx.fully_connected(x, dense.weight.data(), dense.bias.data(),
                                         num_hidden=5))
    bn = nn.BatchNorm(in_channels=3)
    bn.initialize()
    with autograd.record():  # training: batch statistics
        y = bn(x)
    mean = x.mean(axis=(0, 2, 3), keepdims=True)
    var = ((x - mean) ** 2).mean(axis=(0, 2, 3), keepdims=True)
    _close(y, (x - mean) / np.sqrt(var + 1e-5), tol=1e-4)
    _close(bn(x), npx.batch_norm(x, bn.gamma.data(), bn.beta.data(), bn.running_mean.data(),
                                 bn.running_var.data(), eps=1e-5, use_global_stats=True,
                                 fix_gamma=False), tol=1e-4)
    ln = nn.LayerNorm(in_channels=6)
    ln.initialize()
    _close(ln(x), npx.layer_norm(x, ln.gamma.data(), ln.beta.data(), axis=-1))
    emb = nn.Embedding(10, 4)
    emb.initialize()
    idx = np.array([[1, 2], [9, 0]])
    _close(emb(idx), emb.weight.data()[idx])
    _close(npx.relu(x), nn.Activation("relu")(x))
    _close(nn.MaxPool2D(2)(x), npx.pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max"))


def test_gru_layer_matches_npx_rnn_with_mxnet_parameter_packing(np_mode):
    layer = rnn.GRU(5, num_layers=2, input_size=3)
    layer.initialize(init.Uniform(0.3))
    x = np.random.normal(size=(4, 2, 3))
    h0 = np.random.normal(size=(2, 2, 5))
    out, (h,) = layer(x, [h0])
    params = {k[len(layer.prefix):]: p for k, p in layer.collect_params().items()}
    names = [f"l{i}_{k}" for i in range(2) for k in ("i2h_weight", "h2h_weight")]
    names += [f"l{i}_{k}" for i in range(2) for k in ("i2h_bias", "h2h_bias")]
    flat = np.concatenate([params[n].data().reshape(-1) for n in names])
    ref_out, ref_h = npx.rnn(x, flat, h0, mode="gru", state_size=5, num_layers=2,
                             state_outputs=True)
    _close(out, ref_out)
    _close(h, ref_h)


def test_parameters_work_with_np_functions(np_mode):
    net = nn.Dense(3, in_units=4)
    net.initialize(init.Constant(0.5))
    w = net.weight.data()
    assert isinstance(w, np.ndarray) and w.shape == (3, 4)
    assert float(np.linalg.norm(w)) == pytest.approx(numpy.sqrt(12 * 0.25))
    assert np.concatenate([w, w]).shape == (6, 4)
    net.weight.set_data(np.ones((3, 4)))
    net.weight.data()[:] = np.arange(12).reshape(3, 4)
    assert float(np.sum(net.weight.data())) == 66
    x = np.ones((2, 4))
    with autograd.record():
        y = net(x).sum()
    y.backward()
    g = net.weight.grad()
    assert isinstance(g, np.ndarray)
    numpy.testing.assert_allclose(np.dot(g, np.ones(4)).asnumpy(), [8, 8, 8])
    for p in net.collect_params().values():  # d2l's gradient clipping idiom
        p.data()[:] -= 0.1 * p.grad()
    assert float(net.bias.data()[0]) == pytest.approx(-0.2)


def test_transforms_on_np_arrays(np_mode):
    rng = numpy.random.default_rng(0)
    raw = rng.integers(0, 256, (9, 12, 3)).astype("uint8")
    img = np.array(raw)
    chain = transforms.Compose([transforms.Resize((8, 6)), transforms.ToTensor(),
                                transforms.Normalize(0.5, 0.25)])
    out = chain(img)
    assert isinstance(out, np.ndarray) and out.shape == (3, 6, 8) and out.dtype == numpy.float32
    numpy.testing.assert_allclose(out.asnumpy(), chain(raw), rtol=1e-6, atol=1e-6)
    batch = np.array(rng.integers(0, 256, (4, 9, 12, 3)).astype("uint8"))
    assert transforms.ToTensor()(batch).shape == (4, 3, 9, 12)
    flips = [transforms.RandomFlipLeftRight()(img).asnumpy() for _ in range(20)]
    assert {bool((f == raw[:, ::-1]).all()) for f in flips} == {True, False}
    assert all((f == raw).all() or (f == raw[:, ::-1]).all() for f in flips)
    dataset = data.ArrayDataset(np.array(rng.integers(0, 256, (6, 9, 12, 3)).astype("uint8")),
                                np.arange(6))
    loader = data.DataLoader(dataset.transform_first(transforms.ToTensor()), batch_size=4)
    X, y = next(iter(loader))
    assert X.shape == (4, 3, 9, 12) and float(X.max()) <= 1 and y.shape == (4,)


def test_split_and_load_device_names():
    devices = [cpu(0), cpu(1)]
    x = np.arange(8).reshape(4, 2)
    for kwargs in ({"device": devices}, {"device_list": devices}, {"ctx_list": devices}):
        parts = split_and_load(x, **kwargs)
        assert [p.context for p in parts] == devices
        assert [p.shape for p in parts] == [(2, 2), (2, 2)]
    assert [p.context for p in split_and_load(x, devices)] == devices
    (single,) = split_and_load(x, device=cpu(1))
    assert single.context == cpu(1) and single.shape == (4, 2)
    with pytest.raises(TypeError, match="give the devices once"):
        split_and_load(x, devices, device=devices)
    with pytest.raises(TypeError, match="got none"):
        split_and_load(x)


def test_init_has_mxnet2_names():
    for name in ("Initializer", "InitDesc", "Zero", "One", "Constant", "Uniform", "Normal",
                 "Orthogonal", "Xavier", "MSRAPrelu", "Bilinear", "LSTMBias", "Mixed", "Load",
                 "RNNFused", "register", "create"):
        assert hasattr(init, name), name
    assert init.create("zeros") == init.Zero() and init.create("ones") == init.One()
    net = nn.Dense(2, in_units=3, weight_initializer="ones", bias_initializer="zeros")
    net.initialize()
    assert net.weight.data().asnumpy().tolist() == [[1.0] * 3] * 2


def test_rnn_fused_fills_npx_rnn_layout():
    gh, h, c = 3 * 4, 4, 2  # GRU, hidden 4, input 2, two layers, bidirectional
    sizes = [gh * c, gh * h, gh * c, gh * h] + [gh * 2 * h, gh * h] * 2 + [gh] * 8
    fused = init.RNNFused("gru", 2, h, bidirectional=True,
                          i2h_weight_initializer=init.Constant(1),
                          h2h_weight_initializer=init.Constant(2),
                          i2h_bias_initializer=init.Constant(3), h2h_bias_initializer="ones")
    param = Parameter("rnn_param", shape=(sum(sizes),), init=fused)
    param.initialize()
    values = param.data().asnumpy()
    expected = numpy.concatenate([numpy.full(n, v) for n, v in zip(
        sizes, [1, 2, 1, 2, 1, 2, 1, 2, 3, 1, 3, 1, 3, 1, 3, 1])])
    numpy.testing.assert_array_equal(values, expected)
    out = npx.rnn(np.ones((5, 2, c)), param.data(), np.zeros((4, 2, h)), mode="gru",
                  state_size=h, num_layers=2, bidirectional=True)
    assert out.shape == (5, 2, 2 * h)
    default = init.RNNFused("lstm", 1, 3)
    assert init.create(default.dumps()) == default
    p = nd.zeros((4 * 3 * (5 + 3) + 2 * 4 * 3,))
    default("rnn_param", p)
    w = p.asnumpy()
    assert (abs(w[:96]) <= 0.07).all() and w[:96].std() > 0 and (w[96:] == 0).all()
    with pytest.raises(ValueError, match="fits no input size"):
        default("rnn_param", nd.zeros((7,)))
    with pytest.raises(ValueError, match="mode must be one of"):
        init.RNNFused("transformer", 1, 3)


@pytest.mark.multi_device
def test_gluon_device_names(np_mode):
    devices = [cpu(0), cpu(1)]
    net = nn.Dense(2, in_units=3)
    net.initialize(init.One(), device=devices)
    assert net.weight.list_device() == devices
    assert net.weight.data(device=cpu(1)).context == cpu(1)
    x = np.ones((2, 3), device=cpu(1))
    assert net(x).context == cpu(1)
    net.reset_device(cpu(0))
    assert net.weight.list_device() == [cpu(0)]
    assert float(net(x.to_device(cpu(0))).sum()) == 12


class _DeferredDense(HybridBlock):
    """MXNet 2.0's deferred initialization: unknown dims as -1, filled by infer_shape."""

    def __init__(self, units):
        super().__init__()
        self.weight = Parameter("weight", shape=(units, -1), allow_deferred_init=True)

    def infer_shape(self, x, *args):
        self.weight.shape = (self.weight.shape[0], x.shape[1])

    def forward(self, x):
        return np.dot(x, self.weight.data().T)


@pytest.mark.parametrize("hybrid", [False, True])
def test_deferred_shape_through_infer_shape(np_mode, hybrid):
    net = _DeferredDense(3)
    net.initialize(init.One())
    net.hybridize(hybrid)
    out = net(np.ones((2, 5)))
    assert net.weight.shape == (3, 5)
    assert out.asnumpy().tolist() == [[5.0] * 3] * 2
