"""One worker of the ``dist_sync`` tests: run as ``mpirun -np 2 python THIS SCENARIO``.

Scenarios (tests/core/test_kvstore_dist.py launches them):

- ``basic``: the store's interface on 2 processes x 2 contexts, checked on every rank;
  then ``gluon.Trainer(kvstore='dist_sync')`` on sharded data matches one process
  training on the whole batch, and the replicas on both ranks are bitwise identical.
- ``mismatch``: rank 1 builds a parameter of another shape; ``init`` must raise a
  ``ValueError`` naming it on both ranks.
- ``order``: the ranks push different keys (of one shape) at the same time: both must
  raise a ``DistError`` saying so (instead of summing unrelated gradients).
- ``dies``: rank 1 exits abruptly after two steps; rank 0 must raise (at the next sync
  point, as an ``EngineError`` caused by ``DistTimeoutError``) within
  ``KBACKEND_DIST_TIMEOUT``.

- ``dies_unsynced``: as ``dies``, but rank 0 never reads the result: its exit waits
  for the pending allreduce, prints the timeout and aborts the job.

Each rank prints ``rank R: ...`` lines; ``rank R OK`` at the end of a passed scenario.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np


def _basic():
    from core import cpu, kvstore, nd, optimizer

    kv = kvstore.create("dist_sync")
    r, n = kv.rank, kv.num_workers
    assert (kv.type, n) == ("dist_sync", 2), (kv.type, n)
    ctxs = [cpu(0), cpu(1)]

    # init: rank 0's value everywhere
    kv.init("w", nd.full((2, 3), r + 10.0))
    out = nd.zeros((2, 3))
    kv.pull("w", out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 3), 10.0))

    # pushpull = allreduce over 2 contexts x 2 ranks: (r+1) + 2(r+1) summed over r = 9
    g = [nd.full((2, 3), (r + 1.0) * (i + 1), ctx=c) for i, c in enumerate(ctxs)]
    kv.pushpull("w", g)
    for a, c in zip(g, ctxs):
        assert a.context == c
        np.testing.assert_array_equal(a.asnumpy(), np.full((2, 3), 9.0))
    # push without optimizer: the sum replaces the value; pull into several outputs
    kv.push("w", nd.ones((2, 3)))
    outs = [nd.zeros((2, 3), ctx=c) for c in ctxs]
    kv.pull("w", out=outs)
    np.testing.assert_array_equal(outs[1].asnumpy(), np.full((2, 3), 2.0))

    # lists of keys, int keys, several dtypes (float16 sums in float32), pushpull to out=
    keys = [0, 1, 2]
    kv.init(keys, [nd.zeros((4,), dtype=d) for d in ("float16", "float64", "int32")])
    vals = [nd.full((4,), r + 1, dtype=d) for d in ("float16", "float64", "int32")]
    outs = [nd.zeros((4,), dtype=d) for d in ("float16", "float64", "int32")]
    kv.pushpull(keys, vals, out=outs)
    for o in outs:
        assert o.asnumpy().tolist() == [3, 3, 3, 3], (o.dtype, o.asnumpy())

    # a list of keys of one dtype travels in one all-reduce: the same sums as key by key
    fused = ["f0", "f1", "f2"]
    shapes = [(3,), (2, 2), ()]
    kv.init(fused, [nd.zeros(sh) for sh in shapes])
    vals = [nd.full(sh, (r + 1.0) * (i + 1)) for i, sh in enumerate(shapes)]
    kv.pushpull(fused, vals)
    for i, v in enumerate(vals):
        assert v.shape == shapes[i] and (v.asnumpy() == 3.0 * (i + 1)).all(), v

    # broadcast: rank 0's value to every worker, new key and existing key
    b = nd.zeros((3,))
    kv.broadcast("new", nd.full((3,), r + 5.0), out=b)
    assert b.asnumpy().tolist() == [5.0] * 3
    s = nd.zeros(())
    kv.broadcast("scalar", nd.full((), r + 2.0), out=s)        # 0-d values
    kv.pushpull("scalar", s)
    assert s.shape == () and s.asscalar() == 4.0, s
    kv.broadcast("w", nd.full((2, 3), r - 1.0), out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 3), -1.0))

    # set_optimizer: every worker updates its replica with the summed gradient
    kv2 = kvstore.create("dist_sync")
    kv2.set_optimizer(optimizer.SGD(learning_rate=0.1, momentum=0.9))
    kv2.init(7, nd.ones((3,)))
    for _ in range(2):
        kv2.push(7, [nd.full((3,), r + 1.0, ctx=c) for c in ctxs])   # sum 2*(1+2) = 6
    w = nd.zeros((3,))
    kv2.pull(7, out=w)
    # momentum SGD: m1 = -0.6, w1 = 0.4; m2 = 0.9 m1 - 0.6 = -1.14, w2 = -0.74
    np.testing.assert_allclose(w.asnumpy(), np.full((3,), -0.74), rtol=1e-6)
    path = os.path.join(os.environ["DIST_TEST_DIR"], f"states-{r}.npz")
    kv2.save_optimizer_states(path)
    kv3 = kvstore.create("dist_sync")
    kv3.set_optimizer(optimizer.SGD(learning_rate=0.1, momentum=0.9))
    kv3.load_optimizer_states(path)
    kv3.init(7, nd.full((3,), -0.74))
    kv3.push(7, nd.full((3,), 3.0))                       # sum 6: the same third step
    kv2.push(7, nd.full((3,), 3.0))
    a, c = nd.zeros((3,)), nd.zeros((3,))
    kv2.pull(7, out=a)
    kv3.pull(7, out=c)
    np.testing.assert_allclose(a.asnumpy(), c.asnumpy(), rtol=1e-6)

    # errors that stay local: push to an unknown key
    try:
        kv.push("nope", nd.ones((1,)))
    except KeyError as e:
        assert "has not been initialized" in str(e)
    else:
        raise AssertionError("push to an unknown key did not raise")
    try:
        kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    except NotImplementedError as e:
        assert "2bit gradient compression is not implemented" in str(e), e
    else:
        raise AssertionError("2-bit compression was accepted")
    kv.set_gradient_compression({"type": "none"})
    kv._barrier()
    print(f"rank {r}: store interface ok", flush=True)
    _trainer(kv.rank, kv.num_workers)


def _trainer(r: int, n: int):
    """Trainer(kvstore='dist_sync') on each rank's shard == one process on the whole batch."""
    from mpi4py import MPI

    import core
    import gluon
    from core import autograd, nd
    from gluon import nn

    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 5)).astype(np.float32)
    y = rng.integers(0, 3, size=16)

    def build(seed):
        core.random.seed(seed)
        net = nn.Dense(3, in_units=5)
        net.initialize(core.init.Xavier())
        return net

    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    def train(net, kvstore, shard, batch_size, on_kv=None):
        # The gradient scale goes in as rescale_grad and step(1): MXNet's Trainer refuses
        # a batch size change once a distributed store that updates is initialized.
        tr = gluon.Trainer(net.collect_params(), "sgd",
                           {"learning_rate": 0.5, "momentum": 0.5,
                            "rescale_grad": 1.0 / batch_size},
                           kvstore=kvstore, update_on_kvstore=on_kv)
        for _ in range(3):
            with autograd.record():
                loss = loss_fn(net(nd.array(x[shard])), nd.array(y[shard]))
            loss.backward()
            tr.step(1)
        return [p.data().asnumpy() for p in net.collect_params().values()]

    comm = MPI.COMM_WORLD
    shard = list(gluon.data.SequentialSampler(16, num_parts=n, part_index=r))
    # the same seed on every rank: the run matches one process on the whole batch
    ref = train(build(0), None, list(range(16)), 16)
    dist = train(build(0), "dist_sync", shard, len(shard) * n)   # the global batch size
    for mine, expected in zip(dist, ref):
        np.testing.assert_allclose(mine, expected, rtol=1e-5, atol=1e-6)
    # the update on the store (update_on_kvstore=True): the same numbers
    on_store = train(build(0), "dist_sync", shard, len(shard) * n, on_kv=True)
    for mine, expected in zip(on_store, dist):
        np.testing.assert_allclose(mine, expected, rtol=1e-6, atol=1e-7)
    # different seeds per rank: rank 0's weights are broadcast, the replicas agree
    for mine in train(build(100 + r), "dist_sync", shard, len(shard) * n):
        other = comm.sendrecv(mine, dest=1 - r, source=1 - r)
        assert np.array_equal(mine, other), "the ranks' replicas differ"
    print(f"rank {r}: trainer matches one process on the whole batch", flush=True)


def _mismatch():
    from core import kvstore, nd

    kv = kvstore.create("dist_sync")
    shape = (4, 3) if kv.rank == 0 else (4, 5)
    try:
        kv.init(["bias", "weight"], [nd.zeros((4,)), nd.zeros(shape)])
    except ValueError as e:
        print(f"rank {kv.rank}: ValueError: {e}", flush=True)
    else:
        raise AssertionError("init with mismatched shapes did not raise")
    kv.init("later", nd.zeros((2,)))  # the store still works after the failed init
    kv.barrier()


def _order():
    from core import engine, kvstore, nd

    kv = kvstore.create("dist_sync")
    kv.init(["p", "q"], [nd.zeros((2,)), nd.zeros((2,))])
    g = nd.ones((2,))
    try:
        kv.pushpull("p" if kv.rank == 0 else "q", g)   # different keys, same shape
        g.wait_to_read()
    except engine.EngineError as e:
        assert isinstance(e.__cause__, kvstore.DistError), repr(e.__cause__)
        print(f"rank {kv.rank}: {e}", flush=True)
    else:
        raise AssertionError("different keys in one allreduce went unnoticed")
    time.sleep(1)  # let the other rank print before this one's exit aborts the job


def _dies():
    from core import engine, kvstore, nd

    kv = kvstore.create("dist_sync")
    kv.init("g", nd.zeros((8,)))
    g = nd.ones((8,))
    for step in range(100):
        if kv.rank == 1 and step == 2:
            print("rank 1: exiting abruptly", flush=True)
            os._exit(1)
        start = time.monotonic()
        try:
            kv.pushpull("g", g)      # pushed to the engine: returns at once
            g.wait_to_read()         # the sync point where a failure is raised
        except engine.EngineError as e:
            assert isinstance(e.__cause__, kvstore.DistTimeoutError), repr(e.__cause__)
            print(f"rank {kv.rank}: EngineError after {time.monotonic() - start:.1f} s "
                  f"at step {step}: {e}", flush=True)
            raise
    raise AssertionError("rank 0 never noticed that rank 1 died")


def _dies_unsynced():
    from core import kvstore, nd

    kv = kvstore.create("dist_sync")
    kv.init("g", nd.zeros((8,)))
    kv.pushpull("g", nd.ones((8,)))
    kv.barrier()
    if kv.rank == 1:
        os._exit(1)
    kv.pushpull("g", nd.ones((8,)))  # never synced: the exit waits for it, then aborts
    print("rank 0: leaving with a pending allreduce", flush=True)


if __name__ == "__main__":
    scenario = sys.argv[1]
    {"basic": _basic, "mismatch": _mismatch, "order": _order, "dies": _dies,
     "dies_unsynced": _dies_unsynced}[scenario]()
    from mpi4py import MPI

    print(f"rank {MPI.COMM_WORLD.Get_rank()} OK", flush=True)
