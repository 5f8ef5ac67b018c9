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


def test_random_creation_with_shape_unknown_takes_the_graphs_shape():
    from core import cpu
    from gluon.compat.util import np_shape

    # MXNet 1.x: shape () on a Symbol is unknown; inference fills it from `+ x`, and a
    # Symbol passed by a keyword the operator lacks (data=) is ignored
    noise = sym.random.randn(loc=10.0, scale=0.5, data=sym.ones((5, 5)))
    assert noise.list_arguments() == []
    y = noise + sym.var("x")
    assert y.infer_shape(x=(4, 6))[1] == [(4, 6)]
    exe = y.bind(cpu(), {"x": nd.zeros((4, 6))}, {"x": nd.zeros((4, 6))})
    v = exe.forward(is_train=True)[0].asnumpy()
    assert v.shape == (4, 6) and len(np.unique(v)) == 24  # one draw per element
    exe.backward(nd.ones((4, 6)))
    assert np.all(exe.grad_dict["x"].asnumpy() == 1)
    with np_shape(True):  # NumPy shape semantics: () is a scalar
        z = sym.random.uniform(shape=()) + sym.var("x")
        assert z.infer_shape(x=(2,))[1] == [(2,)]
