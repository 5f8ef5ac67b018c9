"""backward hands fresh gradient buffers to ``.grad`` instead of copying them, and only
when nothing else can see them (core.ndarray._adoptable)."""
from __future__ import annotations

import weakref

import numpy as np

from core import autograd, nd
from core.ndarray import NDArray
from gluon import Trainer, nn


def _leaf(values):
    a = nd.array(np.asarray(values, dtype=np.float32))
    a.attach_grad()
    return a


def test_a_fresh_gradient_is_adopted_and_grad_stays_the_same_ndarray():
    a = _leaf([1.0, 2.0, 3.0])
    c = nd.array([2.0, 3.0, 4.0])
    grad_nd, old = a.grad, weakref.ref(a.grad._data)  # (a strong reference would block it)
    with autograd.record():
        y = (a * c).sum()
    y.backward()
    assert a.grad is grad_nd
    assert old() is None  # the old buffer was released: the fresh one taken over
    np.testing.assert_array_equal(a.grad.asnumpy(), [2.0, 3.0, 4.0])


def test_one_gradient_delivered_to_two_leaves_is_not_shared():
    """add's VJP hands the same head gradient to both inputs."""
    a, b = _leaf(np.ones((4, 5))), _leaf(np.ones((4, 5)))
    with autograd.record():
        y = (a + b) * 3.0
    y.backward()
    assert not np.shares_memory(a.grad._data, b.grad._data)
    a.grad[:] = 0
    np.testing.assert_array_equal(b.grad.asnumpy(), np.full((4, 5), 3.0))


def test_a_head_gradient_the_user_holds_is_copied():
    a = _leaf(np.ones(6))
    h = nd.array(np.arange(6, dtype=np.float32))
    with autograd.record():
        y = a + 0.0
    y.backward(h)
    h[:] = -1  # the user's array changes afterwards: .grad must not
    np.testing.assert_array_equal(a.grad.asnumpy(), np.arange(6))


def test_a_grad_buffer_someone_holds_keeps_being_written():
    a = _leaf(np.ones(5))
    held = a.grad._data  # e.g. an optimizer's list of raw gradient buffers
    for k in (2.0, 5.0):
        with autograd.record():
            y = (a * k).sum()
        y.backward()
        np.testing.assert_array_equal(held, np.full(5, k))
        assert a.grad._data is held


def test_grad_views_of_a_packed_buffer_stay_views():
    packed = np.zeros(10, np.float32)
    a = nd.array(np.ones(4, np.float32))
    a._attach(NDArray._make(packed[2:6], a.context, None), "write")
    with autograd.record():
        y = (a * 7.0).sum()
    y.backward()
    np.testing.assert_array_equal(packed, [0, 0, 7, 7, 7, 7, 0, 0, 0, 0])


def test_add_requests_accumulate_into_the_same_buffer():
    a = nd.array(np.ones(3, np.float32))
    a.attach_grad(grad_req="add")
    old = a.grad._data
    for _ in range(3):
        with autograd.record():
            y = (a * 2.0).sum()
        y.backward()
    assert a.grad._data is old
    np.testing.assert_array_equal(a.grad.asnumpy(), [6.0, 6.0, 6.0])


def test_gluon_training_with_adopted_gradients_matches_numpy():
    net = nn.Dense(3, in_units=4)
    net.initialize()
    w0 = net.weight.data().asnumpy().copy()
    b0 = net.bias.data().asnumpy().copy()
    x = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    for _ in range(2):
        with autograd.record():
            loss = (net(nd.array(x)) ** 2).sum()
        loss.backward()
        trainer.step(1)
    w, b = w0, b0
    for _ in range(2):
        y = x @ w.T + b
        gy = 2 * y
        w, b = w - 0.1 * (gy.T @ x), b - 0.1 * gy.sum(axis=0)
    np.testing.assert_allclose(net.weight.data().asnumpy(), w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(net.bias.data().asnumpy(), b, rtol=1e-5, atol=1e-5)


def _hybrid_grads(hybridize):
    from gluon import nn as gnn

    net = gnn.HybridSequential()
    net.add(gnn.Dense(6, activation="relu", in_units=4), gnn.Dense(3, in_units=6))
    net.initialize()
    for p in net.collect_params().values():
        p.set_data(nd.array(np.random.default_rng(len(p.shape)).standard_normal(p.shape)
                            .astype(np.float32)))
    if hybridize:
        net.hybridize()
    x = nd.array(np.random.default_rng(3).standard_normal((5, 4)).astype(np.float32))
    params = list(net.collect_params().values())
    refs = [weakref.ref(p.grad()._data) for p in params]
    out = []
    for _ in range(2):
        with autograd.record():
            y = (net(x) ** 2).sum()
        y.backward()
        out.append([p.grad().asnumpy().copy() for p in params])
    return out, [r() is None for r in refs]


def test_hybridized_gradients_are_adopted_and_equal_the_imperative_ones():
    """The executor hands a parameter's gradient buffer to .grad when it is the slot's
    only sink and nothing else holds it."""
    eager, _ = _hybrid_grads(False)
    hybrid, released = _hybrid_grads(True)
    for a, b in zip(eager, hybrid):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)
    assert any(released), "no hybridized gradient buffer was adopted"
