"""Bad input gets a clear error naming the operator and what it was given."""
import numpy as np
import pytest

from core import autograd, cpu, nd
from core import np as knp


def test_mismatched_broadcast_shapes():
    with pytest.raises(ValueError, match=r"add: shapes \(2, 3\), \(4,\) cannot be broadcast "
                                         r"together \(inputs: \(2, 3\) float32, \(4,\) float32\)"):
        nd.ones((2, 3)) + nd.ones((4,))


def test_matmul_inner_dimension_mismatch():
    with pytest.raises(ValueError, match=r"matmul: a.shape\[-1\]=3 must equal b.shape\[-2\]=4 "
                                         r"\(a: \(2, 3\) float32, b: \(4, 5\) float32\)"):
        nd.ones((2, 3)) @ nd.ones((4, 5))


def test_axis_out_of_range():
    with pytest.raises(ValueError, match=r"sum: axis=2 is out of range .*2 dimension"):
        nd.sum(nd.ones((2, 3)), axis=2)
    with pytest.raises(ValueError, match=r"expand_dims|axis"):
        knp.expand_dims(nd.ones((2, 3)), axis=5)


def test_dtype_not_supported_by_operator():
    with pytest.raises(TypeError, match=r"bitwise_and: .*float32"):
        knp.bitwise_and(nd.ones((2,)), nd.ones((2,)))
    with pytest.raises(TypeError, match=r"subtract: .*bool"):
        knp.subtract(nd.array([True]), nd.array([False]))


def test_inputs_on_two_contexts():
    with pytest.raises(ValueError, match=r"multiply: all inputs must be on one context, got "
                                         r"cpu\(0\), cpu\(1\)"):
        nd.ones((2,), ctx=cpu(0)) * nd.ones((2,), ctx=cpu(1))


def test_backward_on_non_scalar_without_head_gradient():
    x = nd.ones((3,))
    x.attach_grad()
    with autograd.record():
        y = x * 2
    prev = autograd.set_implicit_head_grads(False)  # MXNet's default is ones
    try:
        with pytest.raises(ValueError, match=r"head has shape \(3,\).*head_grads"):
            y.backward()
    finally:
        autograd.set_implicit_head_grads(prev)


def test_gradient_of_array_never_marked():
    x = nd.ones((3,))
    w = nd.ones((3,))
    w.attach_grad()
    with autograd.record():
        y = nd.sum(x * w)
    with pytest.raises(ValueError, match="was never marked for gradients"):
        autograd.grad(y, [x])


def test_wrong_argument_names_are_reported():
    with pytest.raises(TypeError, match=r"clip: unexpected keyword argument 'lo'"):
        nd.clip(nd.ones((2,)), lo=0)


def test_errors_from_inside_numpy_name_the_operator():
    # NumPy's own message is kept, prefixed by the operator and its inputs.
    with pytest.raises((ValueError, TypeError), match=r"^broadcast_to: "):
        nd.broadcast_to(nd.ones((2, 3)), shape=(4, 3))


def test_clip_needs_a_bound():
    with pytest.raises(ValueError, match=r"clip: at least one of a_min and a_max"):
        nd.clip(nd.ones((2,)))


def test_creation_errors():
    with pytest.raises(ValueError, match=r"zeros: negative dimensions"):
        nd.zeros((2, -1))
    with pytest.raises(TypeError, match=r"ones: unsupported dtype"):
        nd.ones((2,), dtype="complex128")
    with pytest.raises(ValueError, match=r"arange: step must not be 0"):
        nd.arange(0, 5, 0)


def test_numpy_reference_for_error_free_cases():
    np.testing.assert_array_equal(knp.add(knp.array([1, 2]), 1).asnumpy(), [2, 3])
