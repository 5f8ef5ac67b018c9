"""core.contrib.autograd: MXNet 1.x's pre-1.0 autograd API on core's tape."""
import numpy as np
import pytest

from core import autograd as ag
from core import nd
from core.contrib import autograd


def test_train_section_records_and_trains_then_restores():
    assert not ag.is_recording()
    with autograd.train_section():
        assert ag.is_recording() and ag.is_training()
        with autograd.test_section():
            assert not ag.is_recording() and not ag.is_training()
        assert ag.is_recording()
    assert not ag.is_recording() and not ag.is_training()


def test_set_is_training_returns_previous_state():
    assert autograd.set_is_training(True) is False
    assert autograd.set_is_training(False) is True
    assert not ag.is_recording()


def test_mark_variables_and_compute_gradient_write_the_buffers():
    x = nd.array([1.0, 2.0])
    g = nd.zeros((2,))
    autograd.mark_variables([x], [g])
    with autograd.train_section():
        y = x * x * 3
    autograd.compute_gradient([y])
    np.testing.assert_allclose(g.asnumpy(), [6.0, 12.0])


def test_grad_req_add_accumulates():
    x = nd.array([1.0])
    g = nd.zeros((1,))
    autograd.mark_variables([x], [g], grad_reqs=["add"])
    for _ in range(2):
        with autograd.train_section():
            y = x * 2
        autograd.backward([y])
    np.testing.assert_allclose(g.asnumpy(), [4.0])


def test_backward_with_out_grads():
    x = nd.array([1.0, 1.0])
    g = nd.zeros((2,))
    autograd.mark_variables([x], [g])
    with autograd.train_section():
        y = x * 5
    autograd.backward([y], [nd.array([1.0, -2.0])])
    np.testing.assert_allclose(g.asnumpy(), [5.0, -10.0])


def test_backward_rejects_a_bare_array_and_mismatched_out_grads():
    x = nd.array([1.0])
    with pytest.raises(TypeError, match="list or tuple"):
        autograd.backward(x)
    with pytest.raises(ValueError, match="1 outputs but 2 out_grads"):
        autograd.backward([x], [x, x])


def test_grad_and_loss_all_arguments_and_argnum():
    def f(a, b):
        return a * b + a

    grads, loss = autograd.grad_and_loss(f)(nd.array([2.0]), nd.array([3.0]))
    np.testing.assert_allclose(grads[0].asnumpy(), [4.0])
    np.testing.assert_allclose(grads[1].asnumpy(), [2.0])
    np.testing.assert_allclose(loss.asnumpy(), [8.0])
    only_b = autograd.grad(f, argnum=[1])(nd.array([2.0]), nd.array([3.0]))
    assert len(only_b) == 1
    np.testing.assert_allclose(only_b[0].asnumpy(), [2.0])
    assert not ag.is_recording()


def test_grad_names_a_non_ndarray_argument_and_a_bad_argnum():
    with pytest.raises(TypeError, match="must be an NDArray, got float"):
        autograd.grad(lambda x: x)(1.0)
    with pytest.raises(IndexError, match="argnum 3"):
        autograd.grad(lambda x: x, argnum=3)(nd.array([1.0]))
