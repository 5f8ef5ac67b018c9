"""gluon.nn activation layers: values against NumPy, gradients, names, repr, hybridize,
saving and loading."""
import math

import numpy
import pytest

from core import initializer, nd
from core.test_utils import assert_almost_equal
from gluon import nn
from gluon.block import NameManager

from . import check_hybridize, check_layer_grad, check_save_load

_SELU_A = 1.6732632423543772848170429916717
_SELU_L = 1.0507009873554804934193349852946
_erf = numpy.vectorize(math.erf)


def _sigmoid(x):
    return 1 / (1 + numpy.exp(-x))


def _gelu_tanh(x):
    return 0.5 * x * (1 + numpy.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


# (factory, NumPy reference)
CASES = {
    "relu": (lambda: nn.Activation("relu"), lambda x: numpy.maximum(x, 0)),
    "sigmoid": (lambda: nn.Activation("sigmoid"), _sigmoid),
    "tanh": (lambda: nn.Activation("tanh"), numpy.tanh),
    "softrelu": (lambda: nn.Activation("softrelu"), lambda x: numpy.log1p(numpy.exp(x))),
    "softsign": (lambda: nn.Activation("softsign"), lambda x: x / (1 + numpy.abs(x))),
    "leaky": (lambda: nn.LeakyReLU(0.1), lambda x: numpy.where(x >= 0, x, 0.1 * x)),
    "prelu": (lambda: nn.PReLU(), lambda x: numpy.where(x >= 0, x, 0.25 * x)),
    "elu": (lambda: nn.ELU(alpha=0.5), lambda x: numpy.where(x > 0, x, 0.5 * numpy.expm1(x))),
    "selu": (lambda: nn.SELU(),
             lambda x: _SELU_L * numpy.where(x > 0, x, _SELU_A * numpy.expm1(x))),
    "gelu": (lambda: nn.GELU(), lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2)))),
    "gelu_tanh": (lambda: nn.GELU(approximation="tanh"), _gelu_tanh),
    "swish": (lambda: nn.Swish(beta=2.0), lambda x: x * _sigmoid(2.0 * x)),
    "silu": (lambda: nn.SiLU(), lambda x: x * _sigmoid(x)),
}


def _data(shape=(3, 4), seed=0):
    x = numpy.random.default_rng(seed).uniform(-2, 2, size=shape)
    x[numpy.abs(x) < 0.05] = 0.3  # away from the kink at 0
    return x


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_against_numpy(name):
    make, ref = CASES[name]
    layer = make()
    layer.initialize()
    for shape in [(5,), (3, 4), (2, 3, 4, 5)]:
        x = _data(shape)
        y = layer(nd.array(x, dtype="float64"))
        assert y.shape == shape and y.dtype == numpy.float64
        assert_almost_equal(y, ref(x), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients(name):
    make, _ = CASES[name]
    layer = make()
    layer.initialize()
    layer.cast("float64")
    check_layer_grad(layer, _data((3, 4), seed=1))


@pytest.mark.parametrize("name", ["relu", "prelu", "gelu", "swish"])
def test_hybridize(name):
    check_hybridize(CASES[name][0], nd.array(_data((2, 3))))


@pytest.mark.parametrize("name", ["prelu", "leaky"])
def test_save_load(name, tmp_path):
    check_save_load(CASES[name][0], nd.array(_data((2, 3))), tmp_path)


def test_activation_names_follow_the_activation():
    with NameManager():
        a, b, c = nn.Activation("relu"), nn.Activation("relu"), nn.Activation("tanh")
        p = nn.PReLU()
    assert (a.name, b.name, c.name) == ("relu0", "relu1", "tanh0")
    assert list(p.collect_params().keys()) == ["prelu0_alpha"]
    assert list(p._collect_params_with_prefix()) == ["alpha"]


def test_repr():
    assert repr(nn.Activation("sigmoid")) == "Activation(sigmoid)"
    assert repr(nn.LeakyReLU(0.2)) == "LeakyReLU(0.2)"
    assert repr(nn.PReLU()) == "PReLU"


def test_prelu_per_channel():
    layer = nn.PReLU(alpha_initializer=initializer.Constant(0.5), in_channels=3)
    layer.initialize()
    assert layer.alpha.shape == (3,)
    layer.alpha.set_data(nd.array([0.1, 0.2, 0.3]))
    x = -numpy.ones((2, 3, 4))
    y = layer(nd.array(x)).asnumpy()
    assert_almost_equal(y, x * numpy.array([0.1, 0.2, 0.3])[None, :, None])
    layer.cast("float64")
    check_layer_grad(layer, _data((2, 3, 4)))


def test_invalid_arguments():
    with pytest.raises(ValueError, match="no less than 0"):
        nn.LeakyReLU(-0.1)
    with pytest.raises(ValueError, match="approximation"):
        nn.GELU(approximation="sigmoid")
    with pytest.raises(ValueError, match="act_type"):
        nn.Activation("nope")(nd.ones((2,)))
