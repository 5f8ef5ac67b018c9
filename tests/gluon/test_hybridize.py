"""hybridize(): traced graphs run through the executor give the imperative results."""
import numpy as np
import pytest

import core
from core import autograd, nd
from gluon import HybridBlock, nn, rnn
from gluon.hybrid import HybridizationError


def _grads(net):
    return [p.grad().asnumpy().copy() for p in net.collect_params().values()
            if p.grad_req != "null"]


def _run(net, x, train=True, seed=0):
    core.random.seed(seed)
    if train:
        with autograd.record():
            out = net(x)
            loss = (out * out).sum()
        loss.backward()
        return out.asnumpy(), _grads(net)
    return net(x).asnumpy(), []


def _compare(make, x, train=True, exact=True):
    core.random.seed(1)
    net = make()
    net.initialize()
    net(x)  # deferred initialization
    ref_out, ref_grads = _run(net, x, train)
    net.hybridize()
    for _ in range(2):  # the first call traces, the second runs the cached program
        out, grads = _run(net, x, train)
        check = np.testing.assert_array_equal if exact else (
            lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6))
        check(out, ref_out)
        for g, r in zip(grads, ref_grads):
            check(g, r)
    return net


def _mlp():
    net = nn.HybridSequential()
    net.add(nn.Dense(16, activation="relu"), nn.Dense(8, activation="tanh"), nn.Dense(3))
    return net


def _cnn():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
            nn.MaxPool2D(2), nn.Conv2D(6, 3), nn.GlobalAvgPool2D(), nn.Flatten(),
            nn.Dropout(0.3), nn.Dense(5))
    return net


@pytest.mark.parametrize("train", [True, False])
def test_mlp_identical(train):
    _compare(_mlp, nd.random.normal(shape=(5, 7)), train)


@pytest.mark.parametrize("train", [True, False])
def test_cnn_with_batchnorm_and_dropout_identical(train):
    _compare(_cnn, nd.random.normal(shape=(2, 3, 8, 8)), train)


def test_batchnorm_moving_statistics_follow_the_imperative_run():
    x = nd.random.normal(shape=(4, 3, 5, 5))
    nets = []
    for hyb in (False, True):
        core.random.seed(3)
        net = nn.HybridSequential()
        net.add(nn.Conv2D(2, 3), nn.BatchNorm())
        net.initialize()
        net(x)
        if hyb:
            net.hybridize()
        for _ in range(3):
            with autograd.record():
                net(x).sum().backward()
        nets.append(net)
    a, b = (list(n.collect_params().values()) for n in nets)
    for p, q in zip(a, b):
        np.testing.assert_array_equal(p.data().asnumpy(), q.data().asnumpy())


def test_lstm_identical():
    _compare(lambda: rnn.LSTM(6, num_layers=2), nd.random.normal(shape=(4, 2, 3)),
             exact=False)


class _Scale(HybridBlock):
    """An MXNet 1.x block: hybrid_forward(F, x, weight)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(3,), init="ones")

    def hybrid_forward(self, F, x, weight):
        return F.broadcast_mul(F.exp(x), weight) + 1


def test_hybrid_forward_style_block_is_traced():
    net = _compare(_Scale, nd.random.normal(shape=(2, 3)))
    assert len(net._cached_graphs) == 1  # traced once, in training mode


def test_cache_is_keyed_by_shape_and_cleared_by_hybridize():
    net = _mlp()
    net.initialize()
    net(nd.ones((2, 7)))
    net.hybridize()
    net(nd.ones((2, 7)))
    net(nd.ones((2, 7)))
    assert len(net._cached_graphs) == 1
    net(nd.ones((3, 7)))
    assert len(net._cached_graphs) == 2
    net.hybridize()
    assert not net._cached_graphs
    net.hybridize(False)
    net(nd.ones((2, 7)))
    assert not net._cached_graphs


class _DataDependent(HybridBlock):
    def forward(self, x):
        if x.sum().asnumpy() > 0:
            return x * 2
        return x


def test_data_dependent_control_flow_names_the_block():
    outer = nn.HybridSequential()
    inner = _DataDependent(prefix="choosy_")
    outer.add(nn.Dense(3, in_units=3), inner)
    outer.initialize()
    outer.hybridize()
    with pytest.raises(HybridizationError, match="_DataDependent 'choosy'.*hybridize\\(False\\)"):
        outer(nd.ones((2, 3)))
    inner.hybridize(False)  # the parent still traces it: the error stays
    with pytest.raises(HybridizationError):
        outer(nd.ones((2, 3)))
    outer.hybridize(False)
    assert outer(nd.ones((2, 3))).shape == (2, 3)


def test_retain_graph_and_freed_graph():
    net = _mlp()
    net.initialize()
    x = nd.random.normal(shape=(2, 7))
    net(x)
    net.hybridize()
    with autograd.record():
        y = net(x).sum()
    y.backward(retain_graph=True)
    first = _grads(net)
    y.backward()
    for a, b in zip(first, _grads(net)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.backward()


def test_second_order_gradient_through_a_hybridized_block():
    class Tanh(HybridBlock):
        def forward(self, x):
            return nd.tanh(x) * 3

    x = nd.array([0.3, -1.2, 2.0], dtype="float64")
    results = []
    for hyb in (False, True):
        net = Tanh()
        if hyb:
            net.hybridize()
            net(x)
        xx = x.copy()
        xx.attach_grad()
        with autograd.record():
            y = net(xx)
            (gx,) = autograd.grad(y, [xx], head_grads=nd.ones_like(y), create_graph=True)
            z = gx.sum()
        z.backward()
        results.append(xx.grad.asnumpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)


def test_gradient_to_a_data_input():
    net = _mlp()
    net.initialize()
    x = nd.random.normal(shape=(2, 7))
    net(x)
    grads = []
    for hyb in (False, True):
        if hyb:
            net.hybridize()
        xx = x.copy()
        xx.attach_grad()
        with autograd.record():
            net(xx).sum().backward()
        grads.append(xx.grad.asnumpy())
    np.testing.assert_array_equal(grads[0], grads[1])


class _LazyDense(HybridBlock):
    """MXNet 1.x style with a deferred weight and no infer_shape of its own."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(units, 0),
                                          allow_deferred_init=True)

    def hybrid_forward(self, F, x, weight):
        return F.FullyConnected(x, weight, num_hidden=3, no_bias=True)


def test_deferred_shapes_from_symbolic_inference_of_hybrid_forward():
    net = _LazyDense(3)
    net.initialize()
    assert net(nd.ones((2, 5))).shape == (2, 3)
    assert net.weight.shape == (3, 5)


def test_infer_type_sets_parameter_dtypes():
    net = _LazyDense(3)
    net.infer_type(nd.ones((2, 5), dtype="float64"))
    assert net.weight.dtype == np.float64


def test_autograd_function_keeps_its_custom_gradient_when_hybridized():
    class HalveGrad(autograd.Function):
        def forward(self, x):
            return x * 1

        def backward(self, dy):
            return dy * 0.5

    class Net(HybridBlock):
        def forward(self, x):
            return HalveGrad()(x * 3).sum()

    grads = []
    for hyb in (False, True):
        net = Net()
        if hyb:
            net.hybridize()
        x = nd.ones((2,))
        x.attach_grad()
        for _ in range(2):
            with autograd.record():
                y = net(x)
            y.backward()
        grads.append(x.grad.asnumpy().tolist())
    assert grads[0] == grads[1] == [1.5, 1.5]


def test_hybridized_call_waits_for_pushed_writes_of_its_parameters():
    import time

    from core import engine

    net = nn.Dense(2, in_units=3, use_bias=False)
    net.initialize()
    net.hybridize()
    x = nd.ones((1, 3))
    net(x)  # the first call runs eagerly, the second compiles
    net(x)
    w = net.weight.data()

    def slow_write():
        time.sleep(0.2)
        w[:] = 2.0

    engine.push(slow_write, write_vars=[w], name="slow_write")
    out = net(x)  # must read the weight after the pushed write
    np.testing.assert_allclose(out.asnumpy(), np.full((1, 2), 6.0))
