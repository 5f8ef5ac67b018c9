"""gluon.nn convolution, pooling and padding layers: shapes in both layouts, deferred
initialization, values, gradients, names, repr, hybridize, saving and loading."""
import numpy
import pytest

from core import autograd, nd
from core.test_utils import assert_almost_equal
from gluon import nn
from gluon.block import NameManager

from . import check_hybridize, check_layer_grad, check_save_load

CONV = {1: nn.Conv1D, 2: nn.Conv2D, 3: nn.Conv3D}
DECONV = {1: nn.Conv1DTranspose, 2: nn.Conv2DTranspose, 3: nn.Conv3DTranspose}
LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}
MAXPOOL = {1: nn.MaxPool1D, 2: nn.MaxPool2D, 3: nn.MaxPool3D}
AVGPOOL = {1: nn.AvgPool1D, 2: nn.AvgPool2D, 3: nn.AvgPool3D}
GMAX = {1: nn.GlobalMaxPool1D, 2: nn.GlobalMaxPool2D, 3: nn.GlobalMaxPool3D}
GAVG = {1: nn.GlobalAvgPool1D, 2: nn.GlobalAvgPool2D, 3: nn.GlobalAvgPool3D}


def _rand(shape, seed=0, low=-1.0, high=1.0):
    return numpy.random.default_rng(seed).uniform(low, high, size=shape)


def _to_last(x):
    return numpy.moveaxis(x, 1, -1)


def _conv_ref(x, w, b, stride, pad):
    """Direct 2-D convolution, NCHW, weight (F, C, kh, kw)."""
    x = numpy.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, wd = x.shape
    f, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = numpy.zeros((n, f, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = numpy.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3]))
    return out + b.reshape(1, -1, 1, 1)


# --------------------------------------------------------------------------- convolution
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("last", [False, True])
def test_conv_shapes_deferred(n, last):
    layout = LAYOUTS[n][last]
    conv = CONV[n](6, kernel_size=3, strides=2, padding=1, layout=layout)
    conv.initialize()
    for size in (5, 8):
        shape = (2, 4) + (size,) * n
        x = nd.array(_rand(shape))
        if last:
            x = nd.array(_to_last(x.asnumpy()))
        y = conv(x)
        out = (size + 2 - 3) // 2 + 1
        expect = (2, 6) + (out,) * n
        assert y.shape == (tuple(numpy.moveaxis(numpy.empty(expect), 1, -1).shape)
                           if last else expect)
    wshape = (6,) + (3,) * n + (4,) if last else (6, 4) + (3,) * n
    assert conv.weight.shape == wshape and conv.bias.shape == (6,)


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("last", [False, True])
def test_conv_transpose_shapes(n, last):
    layout = LAYOUTS[n][last]
    up = DECONV[n](4, kernel_size=3, strides=2, padding=1, output_padding=1, layout=layout,
                   groups=2)
    up.initialize()
    shape = (2, 6) + (5,) * n
    x = _rand(shape)
    y = up(nd.array(_to_last(x) if last else x))
    expect = (2, 4) + ((5 - 1) * 2 - 2 + 3 + 1,) * n
    assert y.shape == (_to_last(numpy.empty(expect)).shape if last else expect)
    wshape = (6,) + (3,) * n + (2,) if last else (6, 2) + (3,) * n
    assert up.weight.shape == wshape


def test_conv2d_values_and_layouts_agree():
    conv = nn.Conv2D(3, kernel_size=(2, 3), strides=2, padding=1, in_channels=2)
    conv.initialize()
    x = _rand((2, 2, 5, 6))
    y = conv(nd.array(x))
    w, b = conv.weight.data().asnumpy(), conv.bias.data().asnumpy()
    assert_almost_equal(y, _conv_ref(x, w, b, stride=2, pad=1), rtol=1e-5, atol=1e-5)

    last = nn.Conv2D(3, kernel_size=(2, 3), strides=2, padding=1, layout="NHWC")
    last.initialize()
    last(nd.array(_to_last(x)))
    last.weight.set_data(nd.array(numpy.moveaxis(w, 1, -1)))
    last.bias.set_data(nd.array(b))
    assert_almost_equal(last(nd.array(_to_last(x))), _to_last(y.asnumpy()), rtol=1e-5,
                        atol=1e-5)


def test_conv_groups_dilation_activation():
    conv = nn.Conv2D(4, 3, dilation=2, groups=2, activation="relu", use_bias=False)
    conv.initialize()
    y = conv(nd.array(_rand((1, 6, 7, 7))))
    assert y.shape == (1, 4, 3, 3) and conv.weight.shape == (4, 3, 3, 3)
    assert conv.bias is None and (y.asnumpy() >= 0).all()
    depthwise = nn.Conv2D(6, 3, padding=1, groups=6, in_channels=6)
    depthwise.initialize()
    assert depthwise.weight.shape == (6, 1, 3, 3)
    assert depthwise(nd.ones((1, 6, 4, 4))).shape == (1, 6, 4, 4)
    with pytest.raises(ValueError, match="groups"):
        nn.Conv2D(5, 3, groups=2)
    with pytest.raises(ValueError, match="divisible by groups"):
        bad = nn.Conv2D(4, 3, groups=2)
        bad.initialize()
        bad(nd.ones((1, 3, 4, 4)))


def test_conv_names_and_repr():
    with NameManager():
        c = nn.Conv2D(16, 3)
        t = nn.Conv2DTranspose(8, 3, strides=2, output_padding=1, in_channels=4)
        act = nn.Conv1D(8, 5, padding=2, dilation=2, activation="relu", use_bias=False)
    assert list(c.collect_params().keys()) == ["conv0_weight", "conv0_bias"]
    assert list(t.collect_params().keys()) == ["conv1_weight", "conv1_bias"]
    assert list(c._collect_params_with_prefix()) == ["weight", "bias"]
    assert repr(c) == "Conv2D(None -> 16, kernel_size=(3, 3), stride=(1, 1))"
    assert repr(t) == ("Conv2DTranspose(4 -> 8, kernel_size=(3, 3), stride=(2, 2), "
                       "output_padding=(1, 1))")
    assert repr(act) == ("Conv1D(None -> 8, kernel_size=(5,), stride=(1,), padding=(2,), "
                         "dilation=(2,), bias=False, Activation(relu))")
    assert act.act.name == "conv2_relu"
    c.initialize()
    c(nd.ones((1, 3, 5, 5)))
    assert repr(c).startswith("Conv2D(3 -> 16,")


def test_conv_errors():
    with pytest.raises(ValueError, match="layout"):
        nn.Conv2D(4, 3, layout="NCW")
    with pytest.raises(ValueError, match="kernel_size"):
        nn.Conv2D(4, (3, 3, 3))
    conv = nn.Conv2D(4, 3)
    conv.initialize()
    with pytest.raises(ValueError, match="4-D input"):
        conv(nd.ones((1, 3, 5)))


@pytest.mark.parametrize("make,shape", [
    (lambda: nn.Conv1D(3, 3, strides=2, padding=1), (2, 2, 7)),
    (lambda: nn.Conv2D(3, (2, 3), padding=(1, 0), dilation=(1, 2)), (2, 2, 5, 6)),
    (lambda: nn.Conv2D(4, 3, groups=2, layout="NHWC", activation="tanh"), (2, 5, 5, 4)),
    (lambda: nn.Conv3D(2, 2, in_channels=2), (1, 2, 3, 3, 3)),
    (lambda: nn.Conv1DTranspose(2, 3, strides=2, output_padding=1), (2, 3, 4)),
    (lambda: nn.Conv2DTranspose(2, 3, strides=2, padding=1), (1, 2, 3, 3)),
    (lambda: nn.Conv2DTranspose(4, 2, groups=2, layout="NHWC"), (1, 3, 3, 4)),
    (lambda: nn.Conv3DTranspose(2, 2), (1, 2, 2, 2, 2)),
])
def test_conv_gradients(make, shape):
    layer = make()
    layer.initialize()
    layer.cast("float64")
    if layer.bias is not None:  # non-zero, so the bias enters the check
        layer(nd.ones(shape, dtype="float64"))
        layer.bias.set_data(nd.array(_rand(layer.bias.shape, seed=9), dtype="float64"))
    check_layer_grad(layer, _rand(shape, seed=1))


@pytest.mark.parametrize("make,shape", [
    (lambda: nn.Conv2D(4, 3, padding=1, activation="relu"), (2, 3, 5, 5)),
    (lambda: nn.Conv2D(4, 3, layout="NHWC"), (2, 5, 5, 3)),
    (lambda: nn.Conv1DTranspose(3, 3, strides=2), (2, 2, 4)),
])
def test_conv_hybridize_save_load(make, shape, tmp_path):
    x = nd.array(_rand(shape))
    check_hybridize(make, x)
    layer, fresh = check_save_load(make, x, tmp_path)
    assert fresh.weight.shape == layer.weight.shape


# --------------------------------------------------------------------------- pooling
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("last", [False, True])
def test_pool_shapes(n, last):
    layout = LAYOUTS[n][last]
    shape = (2, 3) + (7,) * n
    x = _rand(shape)
    xin = nd.array(_to_last(x) if last else x)

    def expect(size):
        s = (2, 3) + (size,) * n
        return _to_last(numpy.empty(s)).shape if last else s

    assert MAXPOOL[n](layout=layout)(xin).shape == expect(3)
    assert MAXPOOL[n](layout=layout, ceil_mode=True)(xin).shape == expect(4)
    assert AVGPOOL[n](pool_size=3, strides=1, padding=1, layout=layout)(xin).shape == expect(7)
    assert GMAX[n](layout=layout)(xin).shape == expect(1)
    gavg = GAVG[n](layout=layout)(xin)
    assert gavg.shape == expect(1)
    axes = tuple(range(2, 2 + n))
    assert_almost_equal(gavg.asnumpy().reshape(2, 3), x.mean(axis=axes), rtol=1e-5, atol=1e-6)
    gmax = GMAX[n](layout=layout)(xin)
    assert_almost_equal(gmax.asnumpy().reshape(2, 3), x.max(axis=axes), rtol=1e-6, atol=0)


def test_pool_values():
    x = numpy.arange(16.0).reshape(1, 1, 4, 4)
    y = nn.MaxPool2D()(nd.array(x)).asnumpy()
    assert y.tolist() == [[[[5.0, 7.0], [13.0, 15.0]]]]
    y = nn.AvgPool2D(pool_size=3, strides=3, ceil_mode=True)(nd.array(x)).asnumpy()
    assert y.shape == (1, 1, 2, 2) and y[0, 0, 0, 0] == 5.0
    ones = nd.ones((1, 1, 2, 2))
    inc = nn.AvgPool2D(pool_size=2, strides=1, padding=1)(ones).asnumpy()
    exc = nn.AvgPool2D(pool_size=2, strides=1, padding=1, count_include_pad=False)(ones)
    assert inc[0, 0, 0, 0] == 0.25 and (exc.asnumpy() == 1).all()
    assert nn.MaxPool1D(3, strides=1)(nd.array([[[1.0, 3.0, 2.0, 0.0]]])).asnumpy().tolist() \
        == [[[3.0, 3.0]]]


def test_pool_names_repr():
    with NameManager():
        p, q = nn.MaxPool2D(), nn.GlobalAvgPool1D()
    assert (p.name, q.name) == ("pool0", "pool1")
    assert not p.collect_params()
    assert repr(p) == ("MaxPool2D(size=(2, 2), stride=(2, 2), padding=(0, 0), ceil_mode=False, "
                       "global_pool=False, pool_type=max, layout=NCHW)")
    assert repr(nn.AvgPool1D(3, strides=1, ceil_mode=True, layout="NWC")) == (
        "AvgPool1D(size=(3,), stride=(1,), padding=(0,), ceil_mode=True, global_pool=False, "
        "pool_type=avg, layout=NWC)")
    assert "global_pool=True" in repr(nn.GlobalMaxPool3D())
    with pytest.raises(ValueError, match="layout"):
        nn.MaxPool2D(layout="NCW")


@pytest.mark.parametrize("make,shape", [
    (lambda: nn.MaxPool2D(pool_size=2, strides=1), (2, 2, 4, 4)),
    (lambda: nn.MaxPool1D(3, padding=1, layout="NWC"), (2, 6, 3)),
    (lambda: nn.AvgPool2D(3, strides=2, padding=1, count_include_pad=False, ceil_mode=True),
     (1, 2, 5, 5)),
    (lambda: nn.AvgPool3D(2), (1, 2, 4, 4, 4)),
    (lambda: nn.GlobalMaxPool2D(layout="NHWC"), (2, 3, 3, 2)),
    (lambda: nn.GlobalAvgPool1D(), (2, 3, 5)),
])
def test_pool_gradients(make, shape):
    layer = make()
    check_layer_grad(layer, _rand(shape, seed=4))


def test_pool_hybridize():
    check_hybridize(lambda: nn.MaxPool2D(3, strides=2, padding=1),
                    nd.array(_rand((2, 3, 6, 6))))
    check_hybridize(lambda: nn.GlobalAvgPool2D(), nd.array(_rand((2, 3, 4, 4))))


# --------------------------------------------------------------------------- padding
def test_reflection_pad2d():
    x = numpy.arange(12.0).reshape(1, 1, 3, 4)
    y = nn.ReflectionPad2D(1)(nd.array(x)).asnumpy()
    assert_almost_equal(y, numpy.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="reflect"),
                        rtol=0, atol=0)
    pw = (0, 0, 0, 0, 2, 1, 0, 2)
    y = nn.ReflectionPad2D(pw)(nd.array(x)).asnumpy()
    assert_almost_equal(y, numpy.pad(x, ((0, 0), (0, 0), (2, 1), (0, 2)), mode="reflect"),
                        rtol=0, atol=0)
    with pytest.raises(ValueError, match="8 ints"):
        nn.ReflectionPad2D((1, 1))
    check_layer_grad(nn.ReflectionPad2D(2), _rand((2, 2, 3, 3)))
    check_hybridize(lambda: nn.ReflectionPad2D(1), nd.array(x))


def test_conv_block_in_training_step():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(3, 3, padding=1, layout="NHWC"), nn.BatchNorm(axis=-1),
                nn.Activation("relu"), nn.MaxPool2D(layout="NHWC"), nn.GlobalAvgPool2D("NHWC"),
                nn.Flatten(), nn.Dense(2))
    net.initialize()
    x = nd.array(_rand((3, 4, 4, 2)))
    with autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    assert net[0].weight.shape == (3, 3, 3, 2) and net[1].gamma.shape == (3,)
    assert numpy.abs(net[0].weight.grad().asnumpy()).sum() > 0
