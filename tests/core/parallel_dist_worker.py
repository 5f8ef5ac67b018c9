"""One worker of test_parallel's distributed case: ``mpirun -np 2 python THIS``.

Each rank trains a small MLP with ``gluon.Trainer(kvstore='dist_sync')`` on its shard
of every batch, over 2 contexts, through ``Trainer.forward_backward`` (replicas on
engine workers, the all-reduces overlapping backward and issued in the same order on
every rank); the weights must match one process training on the whole batch on one
context, and be bitwise identical on both ranks; also with ``update_on_kvstore=True``.
Prints ``rank R OK`` at the end.
"""
from __future__ import annotations

import numpy as np


def main() -> None:
    from mpi4py import MPI

    import core
    import gluon
    from core import cpu, nd
    from gluon import nn

    comm = MPI.COMM_WORLD
    r, n = comm.Get_rank(), comm.Get_size()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 16, 5)).astype(np.float32)
    y = rng.integers(0, 3, size=(3, 16))
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()

    def train(ctxs, kvstore, shard, seed, on_kv=None):
        core.random.seed(seed)
        net = nn.HybridSequential()
        net.add(nn.Dense(8, in_units=5, activation="tanh"), nn.Dense(3, in_units=8))
        net.initialize(core.init.Xavier(), ctx=ctxs)
        tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5,
                                                         "momentum": 0.9}, kvstore=kvstore,
                           update_on_kvstore=on_kv)
        for s in range(3):
            tr.forward_backward(lambda a, b: loss_fn(net(a), b), nd.array(x[s][shard]),
                                nd.array(y[s][shard]))
            tr.step(16)
        return [[d.asnumpy() for d in p.list_data()] for p in net.collect_params().values()]

    shard = slice(r * 16 // n, (r + 1) * 16 // n)
    ref = train([cpu(0)], None, slice(None), 0)
    got = train([cpu(0), cpu(1)], "dist_sync", shard, 0 if r == 0 else 7)  # rank 0 wins
    for mine, want in zip(got, ref):
        np.testing.assert_array_equal(mine[0], mine[1])
        np.testing.assert_allclose(mine[0], want[0], rtol=1e-5, atol=1e-6)
        other = comm.sendrecv(mine[0], dest=1 - r, source=1 - r)
        assert np.array_equal(mine[0], other), "the ranks' replicas differ"
    # the update on the store (every worker's copy), from the first step's batch size on
    on_store = train([cpu(0), cpu(1)], "dist_sync", shard, 0 if r == 0 else 7, on_kv=True)
    for mine, want in zip(on_store, ref):
        np.testing.assert_allclose(mine[0], want[0], rtol=1e-5, atol=1e-6)
    print(f"rank {r} OK", flush=True)


if __name__ == "__main__":
    main()
