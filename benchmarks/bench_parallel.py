"""Data parallelism on CPU contexts: a 2-context step against a 1-context step, and
the time a step waits for the gradients' all-reduce with and without overlap.

The models and batches are those of ``bench_mlp`` (MLP 784-512-512-10, batch 128)
and ``bench_cnn`` (LeNet-like CNN, NCHW, batch 64), float32, SGD. A step is
``core.parallel.forward_backward`` (each replica's forward and backward as engine
work on its context's worker; each parameter's all-reduce pushed to the
communication worker as soon as its gradient is final on both replicas) then
``update_replicas``. The batch is split once, outside the timed step.

Rows per model: the 1-context step (the whole batch on cpu(0), through the same
engine path), the 2-context step with the all-reduce overlapping backward and
without (all-reduces start after both backward passes), their ratio to the
1-context step, the all-reduce alone (every parameter, synchronously), and the
*wait*: from the moment both backward passes are done until the last all-reduce
has finished (``Step.wait()`` after ``forward_backward`` returns), with and without
overlap. Then the 1- and 2-context steps again with BLAS limited to one thread
(threadpoolctl): two replicas each calling a 2-thread OpenBLAS oversubscribe 2 cores.

The CPU contexts share the machine's cores (2 here) and Python's GIL: the replicas
overlap only where NumPy releases the GIL (BLAS calls, large ufunc loops).

``python -m benchmarks.bench_parallel --trace trace.json`` also writes a Chrome trace
(``core.profiler``) of three overlapped MLP steps: the ``allreduce`` spans on the
``engine:comm`` track run during the ``backward`` spans on ``engine:cpu(0)`` and
``engine:cpu(1)``.
"""
from __future__ import annotations

import statistics
import sys
import time

from . import bench_cnn, bench_mlp
from .common import Options, Row, Timing, check_close, median_times

TITLE = ("parallel: data-parallel step on 2 CPU contexts vs 1 (MLP batch 128, CNN batch 64),"
         " all-reduce wait with and without overlap")
LR = 0.01


def _mlp_loss(batch):
    from core import nd

    def loss(params, x, y):
        w1, b1, w2, b2, w3, b3 = params
        h = nd.relu(nd.dot(x, w1) + b1)
        h = nd.relu(nd.dot(h, w2) + b2)
        logits = nd.dot(h, w3) + b3
        log_prob = logits - nd.logsumexp(logits, axis=1, keepdims=True)
        return -nd.pick(log_prob, y, axis=1).sum() / batch

    return loss


def _cnn_loss(batch):
    from core import nd

    conv = {"kernel": (bench_cnn.K, bench_cnn.K), "layout": "NCHW"}
    pool = {"kernel": (2, 2), "stride": (2, 2), "pool_type": "max", "layout": "NCHW"}

    def loss(params, x, y):
        w1, b1, w2, b2, w3, b3, w4, b4 = params
        h = nd.relu(nd.Convolution(x, w1, b1, num_filter=bench_cnn.C1, **conv))
        h = nd.Pooling(h, **pool)
        h = nd.relu(nd.Convolution(h, w2, b2, num_filter=bench_cnn.C2, **conv))
        h = nd.Pooling(h, **pool)
        h = nd.relu(nd.FullyConnected(h, w3, b3, num_hidden=bench_cnn.HIDDEN))
        logits = nd.FullyConnected(h, w4, b4, num_hidden=bench_cnn.CLASSES)
        return nd.softmax_cross_entropy_with_logits(logits, y).sum() / batch

    return loss


class _Trainer:
    """Replicas of NumPy parameters on ``ctxs``, one SGD updater each, pre-split data."""

    def __init__(self, params, x, y, ctxs, loss):
        from core import nd, optimizer, parallel

        self.ctxs = ctxs
        self.params = [[nd.array(p, ctx=c, dtype="float32") for c in ctxs] for p in params]
        for reps in self.params:
            for a in reps:
                a.attach_grad()
        sgd = optimizer.SGD(learning_rate=LR)
        self.updaters = [optimizer.get_updater(sgd) for _ in ctxs]
        xs = parallel.split_batch(nd.array(x, dtype="float32"), ctxs)
        ys = parallel.split_batch(nd.array(y, dtype="int64"), ctxs)
        self.batches = list(zip(xs, ys))
        index = {c: r for r, c in enumerate(ctxs)}
        self.fn = lambda xb, yb: loss([reps[index[xb.context]] for reps in self.params],
                                      xb, yb)
        self.waits: list = []

    def step(self, overlap=True):
        from core import parallel

        step = parallel.forward_backward(self.fn, self.batches, self.params, overlap=overlap)
        t0 = time.perf_counter()
        step.wait()
        self.waits.append(time.perf_counter() - t0)
        parallel.update_replicas(self.updaters, [[a.grad for a in reps] for reps in self.params],
                                 self.params)
        return step

    def allreduce(self):
        from core import parallel

        parallel.allreduce_grads(None, [[a.grad for a in reps] for reps in self.params])


def _rows(name, init, loss_of, batch, opts):
    from core import cpu

    params, x, y = init()
    one = _Trainer(params, x, y, [cpu(0)], loss_of(batch))
    on = _Trainer(params, x, y, [cpu(0), cpu(1)], loss_of(batch))
    off = _Trainer(params, x, y, [cpu(0), cpu(1)], loss_of(batch))
    ref, got, got_off = one.step(), on.step(True), off.step(False)
    check_close(f"{name}: 2 contexts vs 1", [
        ("loss", sum(float(v.asscalar()) for v in got.losses), float(ref.losses[0].asscalar())),
        *((f"param {i}", a[1], b[0]) for i, (a, b) in enumerate(zip(on.params, one.params))),
        *((f"param {i} (no overlap)", a[0], b[0])
          for i, (a, b) in enumerate(zip(off.params, on.params)))], rtol=1e-4, atol=1e-5)
    del got_off
    reps = opts.reps(opts.repeats, 3)
    number = 2 if opts.quick else 5
    on.waits.clear()
    off.waits.clear()
    # interleaved: a change in the machine's load hits every case alike
    t = median_times({"one": one.step, "overlap": lambda: on.step(True),
                      "no overlap": lambda: off.step(False), "allreduce": on.allreduce},
                     number=number, repeats=reps)
    rows = [
        Row(f"{name}  1 context, batch {batch}", t["one"], unit="step"),
        Row(f"{name}  2 contexts, all-reduce overlapping backward", t["overlap"], unit="step"),
        Row(f"{name}  2 contexts, all-reduce after backward", t["no overlap"], unit="step"),
        Row(f"{name}  ratio 2 contexts (overlap) / 1 context", ratio=t["overlap"] / t["one"]),
        Row(f"{name}  all-reduce of every gradient alone", t["allreduce"], unit="step"),
        Row(f"{name}  wait for all-reduce after backward, overlap",
            Timing(statistics.median(on.waits)), unit="step"),
        Row(f"{name}  wait for all-reduce after backward, no overlap",
            Timing(statistics.median(off.waits)), unit="step"),
    ]
    limits = _blas_limits(1)
    if limits is not None:  # each replica's BLAS on one thread: no oversubscription
        with limits:
            t1 = median_times({"one": one.step, "overlap": lambda: on.step(True)},
                              number=number, repeats=reps)
        rows += [
            Row(f"{name}  1 context, BLAS 1 thread", t1["one"], unit="step"),
            Row(f"{name}  2 contexts (overlap), BLAS 1 thread each", t1["overlap"],
                unit="step"),
            Row(f"{name}  ratio, BLAS 1 thread", ratio=t1["overlap"] / t1["one"])]
    return rows


def _blas_limits(n):
    """threadpoolctl's limit of BLAS threads to ``n``, or None without threadpoolctl."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    return threadpool_limits(limits=n, user_api="blas")


def run(opts: Options) -> list[Row]:
    return (_rows("mlp", bench_mlp._init, _mlp_loss, bench_mlp.BATCH, opts)
            + _rows("cnn", bench_cnn._init, _cnn_loss, bench_cnn.BATCH, opts))


def trace(path: str) -> None:
    """Write a Chrome trace of three overlapped 2-context MLP steps to ``path``."""
    from core import cpu, profiler

    params, x, y = bench_mlp._init()
    two = _Trainer(params, x, y, [cpu(0), cpu(1)], _mlp_loss(bench_mlp.BATCH))
    two.step()  # warm-up
    profiler.set_config(filename=path)
    profiler.set_state("run")
    try:
        for _ in range(3):
            two.step()
    finally:
        profiler.set_state("stop")
    profiler.dump()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--trace":
        trace(sys.argv[2])
        print(f"trace written to {sys.argv[2]} (open it in https://ui.perfetto.dev)")
    else:
        for row in run(Options(quick="--quick" in sys.argv)):
            print(f"  {row.label:55s} {row.value():>14s}{row.note()}")
