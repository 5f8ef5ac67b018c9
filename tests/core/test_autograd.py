"""Autograd: scopes, backward/grad, grad_req, fan-out, in-place rules, higher order, Function."""
import math

import numpy as np
import pytest

from core import autograd, nd
from core.ops import F


def _var(values, dtype="float64", grad_req="write"):
    x = nd.array(values, dtype=dtype)
    x.attach_grad(grad_req)
    return x


def _total(y):
    return F.sum_to(y, shape=())


def test_scopes_and_flags():
    assert not autograd.is_recording() and not autograd.is_training()
    with autograd.record():
        assert autograd.is_recording() and autograd.is_training()
        with autograd.pause():
            assert not autograd.is_recording() and not autograd.is_training()
        with autograd.predict_mode():
            assert autograd.is_recording() and not autograd.is_training()
    with autograd.record(train_mode=False):
        assert not autograd.is_training()
    with autograd.train_mode():
        assert autograd.is_training() and not autograd.is_recording()
    prev = autograd.set_recording(True)
    assert prev is False and autograd.is_recording()
    autograd.set_recording(False)
    assert autograd.set_training(True) is False
    autograd.set_training(False)


def test_simple_backward_and_head_grads():
    x = _var([1.0, 2.0, 3.0])
    with autograd.record():
        y = x * x + 3 * x
    y.backward(nd.array([1.0, 0.5, 2.0], dtype="float64"))
    np.testing.assert_allclose(x.grad.asnumpy(), np.array([5.0, 3.5, 18.0]))


def test_fan_out_accumulates():
    x = _var([2.0])
    with autograd.record():
        a = x * 3
        y = a * a + a + x  # dy/dx = 2*9x + 3 + 1
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [18 * 2 + 4])


def test_grad_req_write_overwrites_and_add_accumulates():
    for req, expected in (("write", 2.0), ("add", 4.0)):
        x = _var([1.0], grad_req=req)
        for _ in range(2):
            with autograd.record():
                y = x * 2
            y.backward()
        assert x.grad.asnumpy()[0] == expected


def test_grad_req_null_means_no_gradient():
    x = _var([1.0], grad_req="null")
    assert x.grad is None
    with autograd.record():
        y = x * 2
    with pytest.raises(ValueError, match="not part of a recorded graph"):
        y.backward()


def test_backward_twice_needs_retain_graph():
    x = _var([1.0, 2.0])
    with autograd.record():
        y = _total(nd.exp(x))
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), np.exp([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_array_of_a_freed_graph_is_a_constant_to_later_graphs():
    # MXNet clears a graph after backward without retain_graph (its test_cached): an
    # intermediate it computed takes part in a later recording as a constant.
    x = _var([1.0, 2.0])
    with autograd.record():
        b = x * 3
        (b * b).backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [18.0, 36.0])
    w = _var([2.0, 2.0])
    with autograd.record():
        c = b + 1
        (c * w).backward()
    np.testing.assert_allclose(w.grad.asnumpy(), [4.0, 7.0])
    np.testing.assert_allclose(x.grad.asnumpy(), [18.0, 36.0])  # x gets nothing new


def test_fresh_grad_marks_variables_a_backward_wrote():
    x, y = nd.ones((2, 2)), nd.ones((2, 2))
    dx, dy = nd.zeros((2, 2)), nd.zeros((2, 2))
    autograd.mark_variables([x, y], [dx, dy])
    assert x._fresh_grad is False and y._fresh_grad is False
    with autograd.record():
        (x + 2 + y).backward()
    assert x._fresh_grad and y._fresh_grad
    x._fresh_grad = y._fresh_grad = False
    with autograd.record():
        (nd.stop_gradient(x + 2) + y).backward()
    assert y._fresh_grad and not x._fresh_grad  # nothing reached x
    assert nd.ones((1,))._fresh_grad is False  # not a variable


def test_integer_arrays_get_gradients_through_indexing_and_topk():
    # MXNet differentiates operators that only move values for integer arrays too
    a = nd.arange(0, 20, dtype="int32")
    a.attach_grad()
    with autograd.record():
        b = nd.topk(a, k=3, ret_typ="value")
    b.backward(nd.array([1, 2, 3], dtype="int32"))
    assert a.grad.dtype == np.int32
    assert a.grad.asnumpy()[-3:].tolist() == [3, 2, 1] and not a.grad.asnumpy()[:-3].any()
    x = nd.array(np.arange(12).reshape(3, 4), dtype="int64")
    x.attach_grad()
    with autograd.record():
        y = x[1:, ::2]
    y.backward()
    expect = np.zeros((3, 4), dtype=np.int64)
    expect[1:, ::2] = 1
    np.testing.assert_array_equal(x.grad.asnumpy(), expect)


def test_backward_non_scalar_without_head_grads_means_sum_like_mxnet():
    x = _var([1.0, 2.0])
    with autograd.record():
        y = x * x
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 4.0])


def test_backward_non_scalar_without_head_grads_can_be_an_error():
    x = _var([1.0, 2.0])
    with autograd.record():
        y = x * 2
    prev = autograd.set_implicit_head_grads(False)
    try:
        with pytest.raises(ValueError, match=r"shape \(2,\).*head_grads"):
            y.backward()
    finally:
        autograd.set_implicit_head_grads(prev)


def test_grad_of_unmarked_array_is_an_error():
    x = nd.array([1.0, 2.0])
    w = _var([1.0, 1.0], dtype="float32")
    with autograd.record():
        y = _total(x * w)
    with pytest.raises(ValueError, match=r"never marked.*attach_grad"):
        autograd.grad(y, x)


def test_head_grad_shape_mismatch():
    x = _var([1.0, 2.0])
    with autograd.record():
        y = x * 2
    with pytest.raises(ValueError, match="does not match"):
        y.backward(nd.ones((3,), dtype="float64"))


def test_autograd_grad_does_not_touch_dot_grad():
    x = _var([3.0])
    with autograd.record():
        y = x * x
    g = autograd.grad(y, [x])
    assert g[0].asnumpy()[0] == 6.0
    assert x.grad.asnumpy()[0] == 0.0


def test_grad_wrt_intermediate():
    x = _var([2.0])
    with autograd.record():
        a = x * x
        y = a * 3
    ga = autograd.grad(y, a)
    assert ga.asnumpy()[0] == 3.0


@pytest.mark.parametrize("fn, d1, d2", [
    (nd.tanh, lambda x: 1 - np.tanh(x) ** 2,
     lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
    (nd.exp, np.exp, np.exp),
    (nd.sigmoid, lambda x: (s := 1 / (1 + np.exp(-x))) * (1 - s),
     lambda x: (s := 1 / (1 + np.exp(-x))) * (1 - s) * (1 - 2 * s)),
    (nd.sin, np.cos, lambda x: -np.sin(x)),
    (nd.log, lambda x: 1 / x, lambda x: -1 / x ** 2),
])
def test_second_order_against_analytic(fn, d1, d2):
    xs = np.array([0.3, 0.9, 1.7])
    x = _var(xs)
    with autograd.record():
        y = fn(x)
        (g,) = autograd.grad(y, [x], head_grads=nd.ones((3,), dtype="float64"),
                             create_graph=True)
    np.testing.assert_allclose(g.asnumpy(), d1(xs), rtol=1e-10)
    g.backward(nd.ones((3,), dtype="float64"))
    np.testing.assert_allclose(x.grad.asnumpy(), d2(xs), rtol=1e-10)


def test_third_order_of_cube():
    x = _var([2.0])
    with autograd.record():
        y = x * x * x
        g1 = autograd.grad(y, x, create_graph=True)
        g2 = autograd.grad(g1, x, create_graph=True)
    g2.backward()
    assert g1.asnumpy()[0] == 12.0 and g2.asnumpy()[0] == 12.0 and x.grad.asnumpy()[0] == 6.0


def test_second_order_matmul():
    rng = np.random.default_rng(0)
    a_np, b_np = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    a, b = _var(a_np), _var(b_np)
    with autograd.record():
        y = _total(nd.square(a @ b))
        ga = autograd.grad(y, a, create_graph=True)
        z = _total(ga * ga)
    z.backward()
    # ga = 2 (AB) B^T; z = |ga|^2; dz/dB by finite differences
    def z_of(bv):
        g = 2 * (a_np @ bv) @ bv.T
        return float((g * g).sum())
    eps, num = 1e-6, np.zeros_like(b_np)
    for idx in np.ndindex(*b_np.shape):
        bp, bm = b_np.copy(), b_np.copy()
        bp[idx] += eps
        bm[idx] -= eps
        num[idx] = (z_of(bp) - z_of(bm)) / (2 * eps)
    np.testing.assert_allclose(b.grad.asnumpy(), num, rtol=1e-5, atol=1e-6)


def test_in_place_on_recorded_intermediate_works():
    x = _var([1.0, 2.0])
    with autograd.record():
        y = x * 2
        y += 1
        y *= x
    y.backward(nd.ones((2,), dtype="float64"))
    # y = (2x + 1) x  -> 4x + 1
    np.testing.assert_allclose(x.grad.asnumpy(), [5.0, 9.0])


def test_in_place_on_leaf_while_recording_is_an_error():
    x = _var([1.0])
    with autograd.record(), pytest.raises(RuntimeError, match="attach_grad"):
        x += 1


def test_mutating_a_saved_array_before_backward_is_an_error():
    x = _var([1.0, 2.0])
    c = nd.array([3.0, 4.0], dtype="float64")
    with autograd.record():
        y = _total(x * c)
    c[:] = 0  # outside record: the saved value of c changes
    with pytest.raises(RuntimeError, match="modified in place"):
        y.backward()


def test_update_parameters_outside_record_keeps_variable():
    w = _var([1.0, 2.0])
    for _ in range(3):
        with autograd.record():
            loss = _total(w * w)
        loss.backward()
        w -= 0.1 * w.grad
    np.testing.assert_allclose(w.asnumpy(), np.array([1.0, 2.0]) * 0.8 ** 3)


def test_stop_gradient_and_detach():
    x = _var([2.0])
    with autograd.record():
        y = x * nd.BlockGrad(x) + autograd.stop_gradient(x) * 0
    y.backward()
    assert x.grad.asnumpy()[0] == 2.0


def test_mark_variables():
    x = nd.array([1.0, 2.0], dtype="float64")
    gbuf = nd.zeros((2,), dtype="float64")
    autograd.mark_variables([x], [gbuf], "write")
    with autograd.record():
        y = _total(x * x)
    y.backward()
    np.testing.assert_allclose(gbuf.asnumpy(), [2.0, 4.0])
    assert x.grad is gbuf


def test_mark_variables_shape_mismatch():
    with pytest.raises(ValueError, match="shape"):
        autograd.mark_variables([nd.zeros((2,))], [nd.zeros((3,))])


def test_gradient_through_cast_and_dtypes():
    x = _var([1.5, 2.5], dtype="float32")
    with autograd.record():
        y = _total(x.astype("float64") * 2)
    y.backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 2.0])


def test_custom_function():
    class Cube(autograd.Function):
        def forward(self, x):
            self.save_for_backward(x)
            return x * x * x

        def backward(self, dy):
            (x,) = self.saved_tensors
            return dy * 3 * x * x

    x = _var([1.0, 2.0])
    with autograd.record():
        y = _total(Cube()(x) * 2)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [6.0, 24.0])


def test_custom_function_two_inputs_two_outputs():
    class SumDiff(autograd.Function):
        def forward(self, a, b):
            return a + b, a - b

        def backward(self, ds, dd):
            return ds + dd, ds - dd

    a, b = _var([1.0]), _var([5.0])
    with autograd.record():
        s, d = SumDiff()(a, b)
        y = s * 2 + d * 3
    y.backward()
    assert a.grad.asnumpy()[0] == 5.0 and b.grad.asnumpy()[0] == -1.0


def test_custom_function_wrong_number_of_grads():
    class Bad(autograd.Function):
        def forward(self, a, b):
            return a * b

        def backward(self, dy):
            return (dy,)

    a, b = _var([1.0]), _var([2.0])
    with autograd.record():
        y = Bad()(a, b)
    with pytest.raises(ValueError, match="returned 1 gradients for 2 inputs"):
        y.backward()


def test_not_recorded_outside_scope():
    x = _var([1.0])
    y = x * 2
    with pytest.raises(ValueError, match="not part of a recorded graph"):
        y.backward()


def test_broadcast_gradient_reduces_to_input_shape():
    a = _var(np.ones((3, 1)))
    b = _var(np.arange(4.0))
    with autograd.record():
        y = _total(a * b)
    y.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), np.full((3, 1), 6.0))
    np.testing.assert_allclose(b.grad.asnumpy(), np.full((4,), 3.0))


def test_pi_scalar_gradients():
    x = _var([0.5])
    with autograd.record():
        y = nd.sin(x * math.pi)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [math.pi * math.cos(0.5 * math.pi)], atol=1e-12)
