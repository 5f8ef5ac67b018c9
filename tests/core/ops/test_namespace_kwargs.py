"""MXNet call conventions of the generated functions: keyword arguments
(core/ops/namespace.py and core/symbol/compose.py: MXNet's operators without parameters
ignore unknown keywords; operators with attributes, and core.np, reject them) and
``nd.where`` with a row condition (core/ops/binary.py)."""
import numpy as np
import pytest

from core import autograd, nd, sym
from core import np as knp


def test_nd_operator_without_attributes_ignores_unknown_keywords():
    a, b = nd.array([0.0]), nd.array([[1.0, -1.0], [2.0, 3.0]])
    got = nd.broadcast_maximum(a, b, axis=1)  # MXNet's test_loss.py writes this
    np.testing.assert_array_equal(got.asnumpy(), [[1.0, 0.0], [2.0, 3.0]])
    np.testing.assert_array_equal(nd.relu(b, foo=1).asnumpy(), [[1.0, 0.0], [2.0, 3.0]])


def test_sym_operator_without_attributes_ignores_unknown_keywords():
    a, b = nd.array([0.0]), nd.array([[1.0, -1.0]])
    s = sym.broadcast_maximum(sym.var("a"), sym.var("b"), axis=1)
    np.testing.assert_array_equal(s.eval(a=a, b=b)[0].asnumpy(), [[1.0, 0.0]])


def test_operators_with_attributes_and_numpy_names_still_reject_unknown_keywords():
    with pytest.raises(TypeError, match="clip: unexpected keyword argument 'lo'"):
        nd.clip(nd.array([1.0]), lo=0)
    with pytest.raises(TypeError, match="clip: unexpected keyword argument 'lo'"):
        sym.clip(sym.var("x"), lo=0)
    with pytest.raises(TypeError, match="maximum: unexpected keyword argument 'axis'"):
        knp.maximum(knp.array([1.0]), knp.array([2.0]), axis=1)


def test_nd_where_with_a_row_condition_picks_rows_as_mxnet_does():
    cond = nd.array([1, 0, 1])
    got = nd.where(cond, nd.ones((3, 3)), nd.zeros((3, 3)))  # rows, not NumPy's columns
    np.testing.assert_array_equal(got.asnumpy(), [[1, 1, 1], [0, 0, 0], [1, 1, 1]])
    np.testing.assert_array_equal(knp.where(knp.array([1, 0, 1]), knp.ones((3, 3)),
                                            knp.zeros((3, 3))).asnumpy(),
                                  [[1, 0, 1]] * 3)
    x = nd.array([[1.0, 2.0], [3.0, 4.0]])
    x.attach_grad()
    with autograd.record():
        y = nd.where(nd.array([0, 1]), x, nd.zeros((2, 2)))
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [[0, 0], [1, 1]])
