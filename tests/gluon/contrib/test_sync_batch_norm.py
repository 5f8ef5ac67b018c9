"""gluon.contrib.nn.SyncBatchNorm: one BatchNorm over the whole batch of several contexts."""
import threading

import numpy as np
import pytest

from core import autograd, cpu, nd, parallel
from core.parallel import rendezvous
from gluon import nn
from gluon.contrib.nn import SyncBatchNorm
from gluon.nn import batch_sync

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


def test_a_loop_over_the_shards_in_the_main_thread_raises_at_once():
    import time

    bn = SyncBatchNorm(in_channels=1, num_devices=2)
    bn.initialize(ctx=CTXS[:2])
    t0 = time.monotonic()
    with autograd.record(), pytest.raises(RuntimeError, match=r"cpu\(0\) would wait "
                                                              "forever.*main thread"):
        for c in CTXS[:2]:
            bn(nd.ones((2, 1), ctx=c))
    assert time.monotonic() - t0 < 5  # no wait for TIMEOUT_S
    # the failed round left nothing behind: a concurrent run afterwards synchronizes
    outs = {}

    def replica(x):
        outs[x.context.device_id] = bn(x)
        return outs[x.context.device_id].sum()

    xs = [nd.array([[1.0], [2.0]], ctx=cpu(0)), nd.array([[3.0], [6.0]], ctx=cpu(1))]
    parallel.forward_backward(replica, [(x,) for x in xs], [])
    np.testing.assert_allclose(outs[1].asnumpy().ravel(), [0.0, 1.604], atol=1e-3)


def test_inline_and_naive_replica_runs_raise_at_once():
    from core import engine

    bn = SyncBatchNorm(in_channels=1, num_devices=2)
    bn.initialize(ctx=CTXS[:2])
    xs = [(nd.ones((2, 1), ctx=c),) for c in CTXS[:2]]
    with pytest.raises(RuntimeError, match="one after another here"):
        parallel.forward_backward(lambda x: bn(x).sum(), xs, [], inline=True)
    prev = engine.set_engine("NaiveEngine")
    try:
        with pytest.raises(Exception, match="one after another here"):
            parallel.forward_backward(lambda x: bn(x).sum(), xs, [])
    finally:
        engine.set_engine(prev)


def test_a_lone_replica_thread_times_out_with_a_clear_error(monkeypatch):
    monkeypatch.setattr(rendezvous, "TIMEOUT_S", 0.2)
    bn = SyncBatchNorm(in_channels=1, num_devices=2)
    bn.initialize(ctx=CTXS[:2])
    err = []

    def run():
        try:
            with autograd.record():
                bn(nd.ones((2, 1), ctx=cpu(0)))
        except RuntimeError as e:
            err.append(str(e))

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert len(err) == 1 and "only ['cpu(0)'] of num_devices=2 arrived" in err[0]


def test_gluon_nn_and_contrib_names_are_one_synchronized_class():
    assert SyncBatchNorm is nn.SyncBatchNorm
    with pytest.raises(ValueError, match="num_devices must be at least 1"):
        nn.SyncBatchNorm(num_devices=0)


def test_a_used_layer_still_deep_copies():
    import copy

    bn = SyncBatchNorm(in_channels=2, num_devices=2)
    bn.initialize(ctx=CTXS[:2])
    first = batch_sync.rendezvous_of(bn, 2)
    clone = copy.deepcopy(bn)
    assert batch_sync.rendezvous_of(clone, 2) is not first
    assert batch_sync.rendezvous_of(bn, 2) is first


@pytest.mark.parametrize("hybridize", [False, True])
def test_trainer_forward_backward_with_gluon_nn_sync_bn_equals_one_context(hybridize):
    from gluon import Trainer
    from gluon import loss as gloss

    rs = np.random.RandomState(3)
    x = nd.array(rs.normal(2.0, 3.0, (8, 3)).astype("float32"))
    y = nd.array(rs.normal(size=(8, 1)).astype("float32"))

    def net_and_trainer(bn, ctx):
        net = nn.HybridSequential()
        net.add(nn.Dense(4, in_units=3), bn, nn.Dense(1, in_units=4))
        net.initialize(ctx=ctx)
        for p, w in zip(net.collect_params().values(), ref_values):
            p.set_data(w)
        if hybridize:
            net.hybridize()
        return net, Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})

    seed = nn.HybridSequential()
    seed.add(nn.Dense(4, in_units=3), nn.BatchNorm(in_channels=4), nn.Dense(1, in_units=4))
    seed.initialize()
    ref_values = [p.data().copy() for p in seed.collect_params().values()]
    one, t1 = net_and_trainer(nn.BatchNorm(in_channels=4), cpu(0))
    two, t2 = net_and_trainer(nn.SyncBatchNorm(in_channels=4, num_devices=2), CTXS[:2])
    l2 = gloss.L2Loss()
    for _ in range(2):
        with autograd.record():
            loss = l2(one(x), y)
        loss.backward()
        t1.step(8)
        t2.forward_backward(lambda a, b: l2(two(a), b), x, y)
        t2.step(8)
    for p1, p2 in zip(one.collect_params().values(), two.collect_params().values()):
        for c in CTXS[:2]:
            np.testing.assert_allclose(p2.data(c).asnumpy(), p1.data().asnumpy(),
                                       rtol=1e-4, atol=1e-5, err_msg=p1.name)
