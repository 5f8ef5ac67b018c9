"""MXNet 1.x composition details of core.symbol.compose: the initializer MXNet gives an
input variable a call creates, and the names of composite (traced) functions' nodes."""
import numpy as np

from core import initializer, name, nd, sym
from core.module import Module


def test_prelu_gamma_variable_starts_at_a_quarter():
    net = sym.LeakyReLU(data=sym.Variable("data"), act_type="prelu")
    attrs = net.attr_dict()
    gamma = next(k for k in attrs if k.endswith("_gamma"))
    assert attrs[gamma]["__init__"] == '["Constant", {"value": 0.25}]'
    mod = Module(net, ("data",), None)
    mod.bind(data_shapes=[("data", (4, 3))])
    mod.init_params(initializer.Uniform())
    assert np.all(mod.get_params()[0][gamma].asnumpy() == 0.25)
    # a gamma the user made keeps its own initializer
    own = sym.LeakyReLU(data=sym.Variable("data"), gamma=sym.Variable("g", init=initializer.One()),
                        act_type="prelu")
    assert own.attr_dict()["g"]["__init__"] != '["Constant", {"value": 0.25}]'


def test_composite_nodes_are_named_after_their_function():
    with name.NameManager():
        d = sym.var("data")
        regular = sym.argmax_channel(d, name="argmax_channel0")
        fluent = d.argmax_channel()
        assert regular.list_outputs() == fluent.list_outputs() == ["argmax_channel0_output"]
        assert d.broadcast_axes(axis=(1,), size=(3,)).list_outputs() == [
            "broadcast_axes0_output"]
    x = nd.array([[1.0, 5.0, 2.0]])
    assert fluent.eval(data=x)[0].asnumpy().tolist() == [1.0]


def test_sym_random_randn_and_pdf_and_like_ops():
    from core import cpu

    assert sym.random.randn(3, 2, loc=1.0).eval()[0].shape == (3, 2)
    loc, scale = sym.var("loc"), sym.var("scale")
    y = sym.random.randn(loc=loc, scale=scale, shape=(2000,))
    out = y.bind(cpu(), {"loc": nd.array([0.0, 10.0]), "scale": nd.array([1.0, 0.5])})
    v = out.forward()[0].asnumpy()
    assert v.shape == (2, 2000) and abs(v[1].mean() - 10.0) < 0.1
    x, mu, sigma = sym.var("x"), sym.var("mu"), sym.var("sigma")
    pdf = sym.random_pdf_normal(x, mu, sigma, is_log=True)
    got = pdf.eval(x=nd.array([[0.0, 1.0]]), mu=nd.array([0.0]), sigma=nd.array([1.0]))[0]
    np.testing.assert_allclose(got.asnumpy(), [[-0.9189385, -1.4189385]], rtol=1e-6)
    like = sym.random.uniform_like(sym.var("d"), low=2.0, high=3.0)
    u = like.eval(d=nd.zeros((3, 4)))[0].asnumpy()
    assert u.shape == (3, 4) and u.min() >= 2.0 and u.max() < 3.0
