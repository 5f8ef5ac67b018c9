"""gluon.nn basic layers: Dense, Dropout, the normalization layers, Embedding, Flatten,
Identity, Concatenate; shapes, values, gradients, names, hybridize, saving and loading,
and a small CNN trained on two contexts."""
import warnings

import numpy
import pytest

from core import autograd, cpu, initializer, nd
from core.test_utils import assert_almost_equal
from gluon import nn
from gluon.block import NameManager

from . import check_hybridize, check_layer_grad, check_save_load


def _rand(shape, seed=0, low=-1.0, high=1.0):
    return numpy.random.default_rng(seed).uniform(low, high, size=shape)


def test_namespace_exports():
    for name in ["Block", "HybridBlock", "Sequential", "HybridSequential", "Lambda",
                 "HybridLambda", "Dense", "Dropout", "BatchNorm", "SyncBatchNorm", "LayerNorm",
                 "InstanceNorm", "GroupNorm", "Embedding", "Flatten", "Identity", "Activation",
                 "LeakyReLU", "PReLU", "ELU", "SELU", "GELU", "Swish", "SiLU", "Conv1D",
                 "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose",
                 "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D", "AvgPool3D",
                 "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D", "GlobalAvgPool1D",
                 "GlobalAvgPool2D", "GlobalAvgPool3D", "ReflectionPad2D"]:
        assert name in nn.__all__ and hasattr(nn, name), name
    import gluon
    assert gluon.nn.Dense is nn.Dense and nn.HybridSequential is gluon.HybridSequential


# --------------------------------------------------------------------------- Dense
@pytest.mark.parametrize("shape,flatten,out", [
    ((4, 3), True, (4, 5)),
    ((4, 2, 3), True, (4, 5)),
    ((4, 2, 3), False, (4, 2, 5)),
    ((2, 3, 2, 3), False, (2, 3, 2, 5)),
])
def test_dense_deferred_shapes(shape, flatten, out):
    layer = nn.Dense(5, flatten=flatten)
    assert layer.weight.shape == (5, 0)
    layer.initialize()
    x = _rand(shape)
    y = layer(nd.array(x))
    assert y.shape == out
    in_units = int(numpy.prod(shape[1:])) if flatten else shape[-1]
    assert layer.weight.shape == (5, in_units)
    w = layer.weight.data().asnumpy()
    b = layer.bias.data().asnumpy()
    x2 = x.reshape(shape[0], -1) if flatten else x
    assert_almost_equal(y, (x2 @ w.T + b).reshape(out), rtol=1e-5, atol=1e-6)


def test_dense_default_initialization():
    layer = nn.Dense(50, in_units=40)
    layer.initialize()  # the global default, Uniform(0.07), for the weight; zeros for bias
    w = layer.weight.data().asnumpy()
    assert w.shape == (50, 40) and numpy.abs(w).max() <= 0.07 and w.std() > 0.02
    assert (layer.bias.data().asnumpy() == 0).all()
    layer = nn.Dense(3, in_units=2, weight_initializer="ones", bias_initializer="ones")
    layer.initialize(initializer.Xavier())
    assert (layer.weight.data().asnumpy() == 1).all() and (layer.bias.data().asnumpy() == 1).all()


def test_dense_names_repr_and_options():
    with NameManager():
        a, b = nn.Dense(10, activation="relu"), nn.Dense(4, use_bias=False, in_units=3)
    assert list(a.collect_params().keys()) == ["dense0_weight", "dense0_bias"]
    assert list(a._collect_params_with_prefix()) == ["weight", "bias"]
    assert a.act.name == "dense0_relu"
    assert list(b.collect_params().keys()) == ["dense1_weight"] and b.bias is None
    assert repr(a) == "Dense(None -> 10, Activation(relu))"
    assert repr(b) == "Dense(3 -> 4, linear)"
    b.initialize()
    y = b(nd.array(_rand((2, 3), low=-5, high=5)))
    assert y.shape == (2, 4)
    relu = nn.Dense(4, activation="relu", in_units=3)
    relu.initialize()
    assert (relu(nd.array(_rand((6, 3)))).asnumpy() >= 0).all()


def test_dense_dtype_and_errors():
    layer = nn.Dense(3, in_units=2, dtype="float64")
    layer.initialize()
    assert layer.weight.dtype == numpy.float64 and layer.bias.dtype == numpy.float64
    assert layer(nd.ones((1, 2), dtype="float64")).dtype == numpy.float64
    with pytest.raises(ValueError, match="FullyConnected"):
        layer(nd.ones((1, 5), dtype="float64"))


@pytest.mark.parametrize("flatten", [True, False])
def test_dense_gradient(flatten):
    layer = nn.Dense(4, activation="tanh", flatten=flatten, dtype="float64")
    layer.initialize()
    check_layer_grad(layer, _rand((3, 2, 5)))


def test_dense_hybridize_and_save_load(tmp_path):
    x = nd.array(_rand((3, 6)))
    check_hybridize(lambda: nn.Dense(4, activation="relu"), x)
    _, fresh = check_save_load(lambda: nn.Dense(4), x, tmp_path)
    assert fresh.weight.shape == (4, 6)


# --------------------------------------------------------------------------- Dropout
def test_dropout_inference_is_identity():
    layer = nn.Dropout(0.5)
    x = nd.array(_rand((4, 5)))
    assert_almost_equal(layer(x), x, rtol=0, atol=0)
    with autograd.record(train_mode=False):
        y = layer(x)
    assert_almost_equal(y, x, rtol=0, atol=0)
    assert repr(layer) == "Dropout(p = 0.5, axes=())"


def test_dropout_training():
    layer = nn.Dropout(0.25)
    x = nd.ones((200, 50))
    x.attach_grad()
    with autograd.record():
        y = layer(x)
    head = nd.array(_rand((200, 50)))
    y.backward(head)
    yv = y.asnumpy()
    assert set(numpy.unique(yv)) <= {0.0, numpy.float32(1 / 0.75)}
    assert 0.2 < (yv == 0).mean() < 0.3
    # the gradient is the head gradient through the same mask
    assert_almost_equal(x.grad, head.asnumpy() * yv, rtol=1e-6, atol=1e-7)


def test_dropout_axes_and_rate_zero():
    with autograd.train_mode():
        y = nn.Dropout(0.5, axes=(2, 3))(nd.ones((4, 6, 3, 3))).asnumpy()
        z = nn.Dropout(0.0)(nd.ones((2, 3))).asnumpy()
    per_map = y.reshape(4, 6, 9)
    assert (per_map == per_map[:, :, :1]).all()  # one value per feature map
    assert (z == 1).all()
    with pytest.raises(ValueError, match="rate"):
        nn.Dropout(1.5)


def test_dropout_hybridize():
    check_hybridize(lambda: nn.Dropout(0.5), nd.array(_rand((3, 4))))


# --------------------------------------------------------------------------- BatchNorm
def _bn_ref(x, gamma, beta, mean, var, eps, axis=1):
    shape = [1] * x.ndim
    shape[axis] = -1
    r = [numpy.asarray(a, dtype=numpy.float64).reshape(shape) if numpy.ndim(a) else a
         for a in (gamma, beta, mean, var)]
    return (x - r[2]) / numpy.sqrt(r[3] + eps) * r[0] + r[1]


def test_batchnorm_names_shapes_and_repr():
    with NameManager():
        bn = nn.BatchNorm()
    assert list(bn.collect_params().keys()) == [
        "batchnorm0_gamma", "batchnorm0_beta", "batchnorm0_running_mean", "batchnorm0_running_var"]
    assert list(bn._collect_params_with_prefix()) == ["gamma", "beta", "running_mean",
                                                      "running_var"]
    assert bn.running_mean.grad_req == "null" and bn.running_var.grad_req == "null"
    assert bn.gamma.grad_req == "write"
    assert repr(bn) == ("BatchNorm(axis=1, eps=1e-05, momentum=0.9, fix_gamma=False, "
                        "use_global_stats=False, in_channels=None)")
    bn.initialize(initializer.Uniform(5.0))  # the parameters' own initializers win
    bn(nd.ones((2, 3, 4)))
    assert bn.gamma.shape == (3,)
    assert (bn.gamma.data().asnumpy() == 1).all() and (bn.beta.data().asnumpy() == 0).all()
    assert (bn.running_mean.data().asnumpy() == 0).all()
    assert (bn.running_var.data().asnumpy() == 1).all()
    assert "in_channels=3" in repr(bn)


@pytest.mark.parametrize("axis,shape", [(1, (4, 3, 5)), (1, (6, 2)), (-1, (2, 4, 4, 3)),
                                        (3, (2, 4, 4, 3))])
def test_batchnorm_training_updates_running_stats(axis, shape):
    bn = nn.BatchNorm(axis=axis, momentum=0.8, epsilon=1e-3)
    bn.initialize()
    x = _rand(shape, low=-3, high=5)
    red = tuple(i for i in range(len(shape)) if i != axis % len(shape))
    mean, var = x.mean(axis=red), x.var(axis=red)
    with autograd.record():
        y = bn(nd.array(x))
    assert_almost_equal(y, _bn_ref(x, 1, 0, mean, var, 1e-3, axis), rtol=1e-4, atol=1e-4)
    assert_almost_equal(bn.running_mean.data(), 0.2 * mean, rtol=1e-5, atol=1e-6)
    assert_almost_equal(bn.running_var.data(), 0.8 + 0.2 * var, rtol=1e-5, atol=1e-6)
    # inference uses (and keeps) the running statistics
    rm, rv = bn.running_mean.data().asnumpy(), bn.running_var.data().asnumpy()
    y = bn(nd.array(x))
    assert_almost_equal(y, _bn_ref(x, 1, 0, rm, rv, 1e-3, axis), rtol=1e-4, atol=1e-5)
    assert_almost_equal(bn.running_mean.data(), rm, rtol=0, atol=0)


def test_batchnorm_global_stats_scale_center():
    bn = nn.BatchNorm(use_global_stats=True, scale=False, center=False, in_channels=2)
    bn.initialize()
    assert bn.gamma.grad_req == "null" and bn.beta.grad_req == "null"
    bn.gamma.set_data(nd.array([3.0, 3.0]))  # fix_gamma: ignored
    bn.running_mean.set_data(nd.array([1.0, 2.0]))
    x = _rand((4, 2))
    with autograd.record():
        y = bn(nd.array(x))
    assert_almost_equal(y, _bn_ref(x, 1, 0, numpy.array([1.0, 2.0]), 1, 1e-5), rtol=1e-5)
    assert_almost_equal(bn.running_mean.data(), [1.0, 2.0], rtol=0, atol=0)


@pytest.mark.parametrize("train", [True, False])
def test_batchnorm_gradient(train):
    bn = nn.BatchNorm(in_channels=3)
    bn.initialize()
    bn.cast("float64")
    bn.gamma.set_data(nd.array(_rand(3, seed=2) + 1.5, dtype="float64"))
    bn.beta.set_data(nd.array(_rand(3, seed=3), dtype="float64"))
    bn.running_var.set_data(nd.array(_rand(3, seed=4) + 2, dtype="float64"))
    check_layer_grad(bn, _rand((4, 3, 2, 2), low=-2, high=3), train=train)


def test_batchnorm_hybridize_save_load(tmp_path):
    x = nd.array(_rand((4, 3, 2)))
    check_hybridize(lambda: nn.BatchNorm(), x, train=True)
    layer = nn.BatchNorm()
    layer.initialize()
    with autograd.record():
        layer(x)  # running statistics move away from their initial values
    fname = str(tmp_path / "bn.params")
    layer.save_parameters(fname)
    fresh = nn.BatchNorm()
    fresh.load_parameters(fname)
    assert_almost_equal(fresh.running_mean.data(), layer.running_mean.data(), rtol=0, atol=0)
    assert_almost_equal(fresh(x), layer(x), rtol=0, atol=0)


def test_batchnorm_cast_keeps_float16_parameters_float32():
    bn = nn.BatchNorm(in_channels=2)
    bn.initialize()
    bn.cast("float16")
    assert bn.gamma.dtype == numpy.float32
    bn.cast("float64")
    assert bn.running_var.dtype == numpy.float64


def test_batchnorm_relu_and_sync_batchnorm():
    x = nd.array(_rand((4, 3, 2), low=-2, high=2))
    bnr = nn.BatchNormReLU()
    bnr.initialize()
    bn = nn.BatchNorm()
    bn.initialize()
    with autograd.record():
        a, b = bnr(x), bn(x)
    assert_almost_equal(a, numpy.maximum(b.asnumpy(), 0), rtol=0, atol=0)
    with pytest.raises(ValueError, match="BatchNormReLU"):
        nn.BatchNorm(fuse_relu=True)

    with NameManager():
        sbn = nn.SyncBatchNorm(num_devices=1)
    assert sbn.name == "syncbatchnorm0" and "ndev=1" in repr(sbn)
    sbn.initialize()
    with autograd.record():
        c = sbn(x)
    assert_almost_equal(c, b, rtol=0, atol=0)
    assert_almost_equal(sbn.running_mean.data(), bn.running_mean.data(), rtol=0, atol=0)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        nn.SyncBatchNorm(in_channels=3)
    assert any("num_devices" in str(m.message) for m in w)


# --------------------------------------------------------------------------- other norms
def test_layernorm():
    with NameManager():
        ln = nn.LayerNorm()
    assert list(ln.collect_params().keys()) == ["layernorm0_gamma", "layernorm0_beta"]
    ln.initialize()
    x = _rand((2, 3, 5), low=-2, high=4)
    y = ln(nd.array(x))
    assert ln.gamma.shape == (5,)
    ref = (x - x.mean(-1, keepdims=True)) / numpy.sqrt(x.var(-1, keepdims=True) + 1e-5)
    assert_almost_equal(y, ref, rtol=1e-4, atol=1e-5)
    assert repr(ln) == "LayerNorm(eps=1e-05, axis=-1, center=True, scale=True, in_channels=5)"

    ln1 = nn.LayerNorm(axis=1, in_channels=3)
    ln1.initialize()
    ln1.cast("float64")
    ln1.gamma.set_data(nd.array([0.5, 1.0, 2.0], dtype="float64"))
    ln1.beta.set_data(nd.array([0.1, 0.2, 0.3], dtype="float64"))
    check_layer_grad(ln1, x)


def test_instancenorm():
    inorm = nn.InstanceNorm(scale=True)
    inorm.initialize()
    x = _rand((2, 3, 4, 2), low=-2, high=4)
    y = inorm(nd.array(x))
    m, v = x.mean(axis=(2, 3), keepdims=True), x.var(axis=(2, 3), keepdims=True)
    assert_almost_equal(y, (x - m) / numpy.sqrt(v + 1e-5), rtol=1e-4, atol=1e-5)
    assert inorm.gamma.shape == (3,) and inorm.gamma.grad_req == "write"
    assert nn.InstanceNorm().gamma.grad_req == "null"  # MXNet's default scale=False

    last = nn.InstanceNorm(axis=-1)  # channels last: normalized over axes 1 and 2
    last.initialize()
    xl = x.transpose(0, 2, 3, 1)
    assert_almost_equal(last(nd.array(xl)), y.asnumpy().transpose(0, 2, 3, 1), rtol=1e-5,
                        atol=1e-6)
    assert last.gamma.shape == (3,)
    inorm.cast("float64")
    inorm.gamma.set_data(nd.array([0.5, 1.0, 2.0], dtype="float64"))
    check_layer_grad(inorm, x)


def test_groupnorm():
    with NameManager():
        gn = nn.GroupNorm(num_groups=2)
    assert gn.gamma.shape == (2,) and list(gn.collect_params().keys()) == [
        "groupnorm0_gamma", "groupnorm0_beta"]
    gn.initialize()
    x = _rand((2, 4, 3), low=-2, high=4)
    y = gn(nd.array(x))
    g = x.reshape(2, 2, 6)
    ref = ((g - g.mean(-1, keepdims=True)) / numpy.sqrt(g.var(-1, keepdims=True) + 1e-5))
    assert_almost_equal(y, ref.reshape(x.shape), rtol=1e-4, atol=1e-5)
    assert repr(gn) == "GroupNorm(eps=1e-05, num_groups=2, center=True, scale=True)"
    gn.cast("float64")
    gn.gamma.set_data(nd.array([0.5, 2.0], dtype="float64"))
    gn.beta.set_data(nd.array([0.1, -0.2], dtype="float64"))
    check_layer_grad(gn, x)


@pytest.mark.parametrize("make", [lambda: nn.LayerNorm(), lambda: nn.InstanceNorm(),
                                  lambda: nn.GroupNorm(3)])
def test_norm_hybridize_save_load(make, tmp_path):
    x = nd.array(_rand((2, 3, 4)))
    check_hybridize(make, x)
    check_save_load(make, x, tmp_path)


# --------------------------------------------------------------------------- Embedding
def test_embedding():
    with NameManager():
        emb = nn.Embedding(6, 3)
    assert list(emb.collect_params().keys()) == ["embedding0_weight"]
    assert repr(emb) == "Embedding(6 -> 3, float32)"
    emb.initialize()
    ids = nd.array([[0, 5, 2], [2, 2, 1]])
    y = emb(ids)
    w = emb.weight.data().asnumpy()
    assert y.shape == (2, 3, 3)
    assert_almost_equal(y, w[ids.asnumpy().astype(int)], rtol=0, atol=0)
    with autograd.record():
        y = emb(ids)
    head = _rand((2, 3, 3))
    y.backward(nd.array(head))
    expect = numpy.zeros((6, 3))
    numpy.add.at(expect, ids.asnumpy().astype(int), head)
    assert_almost_equal(emb.weight.grad(), expect, rtol=1e-6, atol=1e-6)
    sparse = nn.Embedding(4, 2, dtype="float64", sparse_grad=True)
    assert sparse.weight.grad_stype == "row_sparse" and sparse.weight.dtype == numpy.float64
    sparse.initialize()
    check_layer_grad(sparse, nd.array([[1, 3], [3, 0]], dtype="int32"), wrt_input=False)


def test_embedding_hybridize_save_load(tmp_path):
    ids = nd.array([[1, 2], [3, 0]])
    check_save_load(lambda: nn.Embedding(4, 5), ids, tmp_path)
    emb = nn.Embedding(4, 5)
    emb.initialize()
    a = emb(ids).asnumpy()
    emb.hybridize()
    numpy.testing.assert_array_equal(emb(ids).asnumpy(), a)


# --------------------------------------------------------------------------- small blocks
def test_flatten_identity_concatenate():
    x = nd.array(_rand((2, 3, 4)))
    assert nn.Flatten()(x).shape == (2, 12) and repr(nn.Flatten()) == "Flatten"
    assert_almost_equal(nn.Identity()(x), x, rtol=0, atol=0)
    check_hybridize(lambda: nn.Flatten(), x)
    for cls in (nn.Concatenate, nn.HybridConcatenate):
        net = cls(axis=1)
        with net.name_scope():
            net.add(nn.Dense(3), nn.Identity())
        net.initialize()
        assert net(nd.ones((2, 4))).shape == (2, 7)


# --------------------------------------------------------------------------- end to end
def _cnn():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(4, kernel_size=3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
                nn.MaxPool2D(), nn.Flatten(), nn.Dense(5))
    return net


@pytest.mark.multi_device
def test_cnn_on_two_contexts():
    ctxs = [cpu(0), cpu(1)]
    net = _cnn()
    net.initialize(ctx=ctxs)
    x = _rand((4, 3, 6, 6), seed=5)
    grads, outs = [], []
    for ctx in ctxs:
        data = nd.array(x, ctx=ctx)
        with autograd.record():
            out = net(data)
            loss = (out * out).sum()
        loss.backward()
        assert out.shape == (4, 5) and out.context == ctx
        outs.append(out.asnumpy())
        grads.append({k: p.grad(ctx).asnumpy() for k, p in net.collect_params().items()
                      if p.grad_req != "null"})
        assert net[1].running_mean.data(ctx).context == ctx
    assert_almost_equal(outs[0], outs[1], rtol=1e-6, atol=1e-6)
    assert grads[0].keys() == grads[1].keys() and len(grads[0]) == 6
    for k in grads[0]:
        assert numpy.abs(grads[0][k]).sum() > 0, k
        assert_almost_equal(grads[0][k], grads[1][k], rtol=1e-5, atol=1e-6)
    # each context updated its own running statistics, identically
    assert_almost_equal(net[1].running_mean.data(cpu(0)), net[1].running_mean.data(cpu(1)),
                        rtol=1e-6, atol=1e-7)
    assert list(net._collect_params_with_prefix())[:2] == ["0.weight", "0.bias"]
