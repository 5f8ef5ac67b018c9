"""gluon.contrib.nn.SyncBatchNorm: one BatchNorm over the whole batch of several contexts."""
import threading

import numpy as np
import pytest

from core import autograd, cpu, nd, parallel
from gluon import nn
from gluon.contrib.nn import SyncBatchNorm, sync_batch_norm

CTXS = [cpu(0), cpu(1), cpu(2)]


def _reference(x, gamma, beta):
    bn = nn.BatchNorm(in_channels=x.shape[1])
    bn.initialize()
    bn.gamma.set_data(gamma)
    bn.beta.set_data(beta)
    x = x.copy()
    x.attach_grad()
    with autograd.record():
        y = bn(x)
        loss = (y * y * nd.arange(y.size).reshape(y.shape)).sum()
    loss.backward()
    return bn, y, x.grad


@pytest.mark.parametrize("shape", [(6, 3), (6, 2, 4), (6, 2, 3, 3)])
@pytest.mark.parametrize("hybridize", [False, True])
def test_sync_bn_over_three_contexts_equals_batchnorm_on_the_whole_batch(shape, hybridize):
    rs = np.random.RandomState(0)
    x = nd.array(rs.uniform(-1, 2, shape).astype("float32"))
    gamma = nd.array(rs.uniform(0.5, 1.5, shape[1]).astype("float32"))
    beta = nd.array(rs.uniform(-1, 1, shape[1]).astype("float32"))
    ref_bn, ref_y, ref_gx = _reference(x, gamma, beta)

    bn = SyncBatchNorm(in_channels=shape[1], num_devices=3)
    bn.initialize(ctx=CTXS)
    bn.gamma.set_data(gamma)
    bn.beta.set_data(beta)
    if hybridize:
        bn.hybridize()
    parts = [x[2 * i:2 * i + 2].as_in_context(c) for i, c in enumerate(CTXS)]
    weights = nd.arange(x.size).reshape(shape)
    outs = {}

    def replica(xi):
        r = xi.context.device_id
        xi.attach_grad()
        outs[r] = (xi, bn(xi))
        w = weights[2 * r:2 * r + 2].as_in_context(xi.context)
        return (outs[r][1] * outs[r][1] * w).sum()

    params = [bn.gamma.list_data(), bn.beta.list_data()]
    for reps in params:
        for a in reps:
            a.attach_grad()
    parallel.forward_backward(replica, [(p,) for p in parts], params)
    y = np.concatenate([outs[r][1].asnumpy() for r in range(3)])
    gx = np.concatenate([outs[r][0].grad.asnumpy() for r in range(3)])
    np.testing.assert_allclose(y, ref_y.asnumpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gx, ref_gx.asnumpy(), rtol=1e-3, atol=1e-4)
    for c in CTXS:  # the replicas' running statistics are the whole batch's
        np.testing.assert_allclose(bn.running_mean.data(c).asnumpy(),
                                   ref_bn.running_mean.data().asnumpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(bn.running_var.data(c).asnumpy(),
                                   ref_bn.running_var.data().asnumpy(), rtol=1e-4, atol=1e-6)
    # gamma/beta gradients: summed over the replicas by forward_backward's all-reduce
    np.testing.assert_allclose(params[0][0].grad.asnumpy(), ref_bn.gamma.grad().asnumpy(),
                               rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(params[1][1].grad.asnumpy(), ref_bn.beta.grad().asnumpy(),
                               rtol=1e-3, atol=1e-4)


def test_threads_per_context_also_synchronize():
    bn = SyncBatchNorm(in_channels=1, num_devices=2)
    bn.initialize(ctx=CTXS[:2])
    xs = [nd.array([[1.0], [2.0]], ctx=cpu(0)), nd.array([[3.0], [6.0]], ctx=cpu(1))]
    out = {}

    def run(x):
        with autograd.train_mode():
            out[x.context.device_id] = bn(x).asnumpy().ravel()

    threads = [threading.Thread(target=run, args=(x,)) for x in xs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    allx = np.array([1.0, 2.0, 3.0, 6.0])
    want = (allx - allx.mean()) / np.sqrt(allx.var() + 1e-5)
    np.testing.assert_allclose(np.concatenate([out[0], out[1]]), want, rtol=1e-5)


def test_one_device_and_inference_are_batchnorm():
    x = nd.array(np.random.RandomState(1).randn(4, 3).astype("float32"))
    bn, ref = SyncBatchNorm(in_channels=3, num_devices=1), nn.BatchNorm(in_channels=3)
    bn.initialize()
    ref.initialize()
    with autograd.record():
        a, b = bn(x), ref(x)
    np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6)
    two = SyncBatchNorm(in_channels=3, num_devices=2)
    two.initialize()
    np.testing.assert_allclose(two(x).asnumpy(), (x / np.sqrt(1 + 1e-5)).asnumpy(), rtol=1e-6)


def test_replicas_run_one_after_another_in_one_thread_raise(monkeypatch):
    monkeypatch.setattr(sync_batch_norm, "TIMEOUT_S", 0.2)
    bn = SyncBatchNorm(in_channels=1, num_devices=2)
    bn.initialize(ctx=CTXS[:2])
    with autograd.record(), pytest.raises(RuntimeError, match=r"only \['cpu\(0\)'\] of "
                                                              "num_devices=2 arrived"):
        bn(nd.ones((2, 1), ctx=cpu(0)))


def test_a_used_layer_still_deep_copies():
    import copy

    bn = SyncBatchNorm(in_channels=2, num_devices=2)
    bn.initialize(ctx=CTXS[:2])
    bn._rendezvous()
    clone = copy.deepcopy(bn)
    assert clone._rendezvous() is not bn._rendezvous()
