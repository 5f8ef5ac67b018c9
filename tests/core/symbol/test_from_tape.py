"""autograd.get_symbol (core/symbol/from_tape.py): the recorded history as a Symbol."""
import numpy as np
import pytest

from core import autograd, nd


def _var(values):
    x = nd.array(values)
    x.attach_grad()
    return x


def test_arguments_are_the_recorded_inputs_in_order_and_scalars_are_literals():
    x, z = _var([3.0]), _var([1.0])
    with autograd.record():
        y = x * x + 2 * z - 1
    s = autograd.get_symbol(y)
    assert s.list_arguments() == ["var0", "var1"]
    out = s.eval(var0=nd.array([3.0]), var1=nd.array([1.0]))[0]
    np.testing.assert_allclose(out.asnumpy(), [10.0])
    with autograd.record():
        y = x * x + 2 * x - 1
    assert autograd.get_symbol(y).list_arguments() == ["var0"]


def test_an_array_that_was_not_recorded_is_a_variable_and_shapes_infer():
    x = _var(np.ones((4, 3), "float32"))
    w = nd.ones((2, 3))  # no attach_grad: still an input of the graph, as in MXNet
    with autograd.record():
        y = nd.softmax(nd.FullyConnected(x, w, no_bias=True, num_hidden=2)) * 5
    s = autograd.get_symbol(y)
    assert s.list_arguments() == ["var0", "var1"]
    _, outs, _ = s.infer_shape(var0=(4, 3), var1=(2, 3))
    assert outs == [(4, 2)]
    np.testing.assert_allclose(s.eval(var0=x, var1=w)[0].asnumpy(), y.asnumpy(), rtol=1e-6)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="no recorded history"):
        autograd.get_symbol(nd.ones((2,)))
    with pytest.raises(TypeError, match="expected an NDArray"):
        autograd.get_symbol([1.0])
