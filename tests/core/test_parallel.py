"""core.parallel: the overlapped data-parallel step (forward_backward) against the
sequential path, under the threaded and the naive engine; readiness order, stale
replicas, errors, and the overlap itself in a profiler trace."""
import importlib.util
import itertools
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from core import autograd, cpu, engine, kvstore, nd, optimizer, parallel, profiler

CTX2 = [cpu(0), cpu(1)]
SIZES = (6, 8, 8, 3)


def _params(ctxs, seed=0, grad_req="write"):
    """params[i][r]: an MLP's weights and biases, one replica per context."""
    rng = np.random.default_rng(seed)
    values = []
    for n_in, n_out in itertools.pairwise(SIZES):
        values += [rng.standard_normal((n_in, n_out)), rng.standard_normal(n_out)]
    params = [[nd.array(v, ctx=c, dtype="float64") for c in ctxs] for v in values]
    for reps in params:
        for a in reps:
            a.attach_grad(grad_req)
    return params


def _batch(n=8, seed=1):
    rng = np.random.default_rng(seed)
    return (nd.array(rng.standard_normal((n, SIZES[0])), dtype="float64"),
            nd.array(rng.standard_normal((n, SIZES[-1])), dtype="float64"))


def _loss_fn(params, ctxs):
    def fn(x, y):
        r = ctxs.index(x.context)
        h = x
        for k in range(0, len(params), 2):
            h = nd.dot(h, params[k][r]) + params[k + 1][r]
            if k + 2 < len(params):
                h = nd.tanh(h)
        return ((h - y) ** 2).sum() / 2
    return fn


def _split(batch, ctxs):
    return list(zip(*(parallel.split_batch(a, ctxs) for a in batch)))


def _sequential(params, ctxs, batch, kv=None):
    """A backward per replica, then allreduce_grads: the reference."""
    fn = _loss_fn(params, ctxs)
    losses = []
    for b in _split(batch, ctxs):
        with autograd.record():
            loss = fn(*b)
        loss.backward()
        losses.append(loss)
    parallel.allreduce_grads(kv, [[a.grad for a in reps] for reps in params])
    return losses


def _need_threads():
    if engine.engine_type() == "NaiveEngine":
        pytest.skip("overlap needs the threaded engine (KBACKEND_ENGINE_TYPE=NaiveEngine)")


def _grads(params):
    return [[a.grad.asnumpy() for a in reps] for reps in params]


@pytest.mark.multi_device
@pytest.mark.parametrize("store, overlap", [(None, True), ("local", True), (None, False)])
def test_forward_backward_equals_sequential_bitwise(store, overlap):
    batch = _batch()
    ref = _params(CTX2)
    ref_losses = _sequential(ref, CTX2, batch, kvstore.create(store) if store else None)
    got = _params(CTX2)
    step = parallel.forward_backward(_loss_fn(got, CTX2), _split(batch, CTX2), got,
                                     kvstore=kvstore.create(store) if store else None,
                                     overlap=overlap)
    step.wait()
    assert step.reduced == [True] * len(got)
    assert step.fresh == [[True, True]] * len(got)
    for a, b in zip(_grads(got), _grads(ref)):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(a[0], a[1])
    assert [float(v.asscalar()) for v in step.losses] == \
        [float(v.asscalar()) for v in ref_losses]


@pytest.mark.multi_device
def test_threaded_equals_naive_engine_and_single_context_full_batch():
    batch = _batch(seed=5)
    threaded = _params(CTX2)
    parallel.forward_backward(_loss_fn(threaded, CTX2), _split(batch, CTX2), threaded).wait()
    with engine.naive():
        naive = _params(CTX2)
        parallel.forward_backward(_loss_fn(naive, CTX2), _split(batch, CTX2), naive).wait()
    for a, b in zip(_grads(threaded), _grads(naive)):
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
    # one context, the whole batch: the same gradient up to rounding
    one = _params([cpu(0)])
    parallel.forward_backward(_loss_fn(one, [cpu(0)]), [batch], one).wait()
    for a, b in zip(_grads(threaded), _grads(one)):
        np.testing.assert_allclose(a[0], b[0], rtol=1e-12, atol=1e-12)


@pytest.mark.multi_device
def test_training_loop_with_update_replicas_stays_identical():
    params = _params(CTX2)
    sgd = optimizer.SGD(learning_rate=0.05, momentum=0.9, rescale_grad=1 / 8)
    updaters = [optimizer.get_updater(sgd) for _ in CTX2]
    ref = _params([cpu(0)])
    ref_up = [optimizer.get_updater(optimizer.SGD(learning_rate=0.05, momentum=0.9,
                                                  rescale_grad=1 / 8))]
    for s in range(3):
        batch = _batch(seed=20 + s)
        parallel.forward_backward(_loss_fn(params, CTX2), _split(batch, CTX2), params)
        parallel.update_replicas(updaters, [[a.grad for a in reps] for reps in params],
                                 params)
        parallel.forward_backward(_loss_fn(ref, [cpu(0)]), [batch], ref)
        parallel.update_replicas(ref_up, [[a.grad for a in reps] for reps in ref], ref)
    for reps, r in zip(params, ref):
        np.testing.assert_array_equal(reps[0].asnumpy(), reps[1].asnumpy())
        np.testing.assert_allclose(reps[0].asnumpy(), r[0].asnumpy(), rtol=1e-10)


@pytest.mark.multi_device
def test_stale_replica_add_grads_and_no_reduce():
    params = _params(CTX2)
    x, y = _batch(4)

    def fn(xb, yb):  # the last bias is used on cpu(0) only
        r = CTX2.index(xb.context)
        h = nd.dot(xb, params[0][r])
        out = (h ** 2).sum()
        return out + params[-1][0].sum() if r == 0 else out

    step = parallel.forward_backward(fn, _split((x, y), CTX2), params)
    step.wait()
    assert step.fresh[0] == [True, True] and step.fresh[-1] == [True, False]
    assert step.fresh[2] == [False, False] and not step.reduced[2]
    assert step.reduced[-1]  # the fresh replica's gradient, written to both
    np.testing.assert_array_equal(params[-1][1].grad.asnumpy(), np.ones(SIZES[-1]))
    # 'add' gradients are left to the caller; reduce=False sums nothing
    acc = _params(CTX2, grad_req="add")
    step = parallel.forward_backward(_loss_fn(acc, CTX2), _split((x, y), CTX2), acc)
    assert step.reduced == [False] * len(acc) and step.fresh[0] == [True, True]
    g0 = acc[0][0].grad.asnumpy()
    assert not np.array_equal(g0, acc[0][1].grad.asnumpy())
    plain = _params(CTX2)
    step = parallel.forward_backward(_loss_fn(plain, CTX2), _split((x, y), CTX2), plain,
                                     reduce=False)
    assert step.reduced == [False] * len(plain)
    np.testing.assert_array_equal(plain[0][0].grad.asnumpy(), g0)


def test_grad_ready_order_last_layer_first():
    params = _params([cpu(0)])
    x, y = _batch(4)
    with autograd.record():
        loss = _loss_fn(params, [cpu(0)])(x, y)
    order = []
    ids = {id(reps[0]): i for i, reps in enumerate(params)}
    with autograd.on_grad_ready(lambda leaf: order.append(ids[id(leaf)])):
        loss.backward()
    assert order == [5, 4, 3, 2, 1, 0]
    g = [a.grad.asnumpy() for reps in params for a in reps]
    with autograd.record():
        loss = _loss_fn(params, [cpu(0)])(x, y)
    loss.backward()  # no callback: the same gradients
    for a, reps in zip(g, params):
        np.testing.assert_array_equal(a, reps[0].grad.asnumpy())


def test_errors():
    params = _params(CTX2)
    batches = _split(_batch(4), CTX2)
    with pytest.raises(ValueError, match="2 replicas for 1 batches"):
        parallel.forward_backward(lambda x, y: x, batches[:1], params)
    with pytest.raises(ValueError, match="both on cpu"):
        parallel.forward_backward(lambda x, y: x, batches, [[params[0][0], params[0][0]]])

    def bad(x, y):
        if x.context == cpu(1):
            raise ArithmeticError("boom on purpose")
        return _loss_fn(params, CTX2)(x, y)

    with pytest.raises(engine.EngineError, match=r"forward_backward cpu\(1\)") as info:
        parallel.forward_backward(bad, batches, params)
    assert isinstance(info.value.__cause__, ArithmeticError)
    engine.wait_all()  # reported already: clears the failed gradients' state
    with pytest.raises(engine.EngineError, match="must return the loss"):
        parallel.forward_backward(lambda x, y: 3.0, batches, params)
    engine.wait_all()
    fresh = _params(CTX2)  # the engine is usable again
    parallel.forward_backward(_loss_fn(fresh, CTX2), batches, fresh).wait()


class _SlowIdentity(autograd.Function):
    """Identity whose backward sleeps (the first layer's long backward)."""

    def forward(self, x):
        return x * 1.0

    def backward(self, dy):
        time.sleep(0.3)
        return dy * 1.0


@pytest.mark.multi_device
def test_trace_shows_allreduce_during_backward(tmp_path):
    """The last layers' all-reduces run while backward is still in the first layer."""
    _need_threads()
    params = _params(CTX2)
    batches = _split(_batch(4), CTX2)

    def fn(x, y):  # the first layer, then an identity whose backward sleeps, the rest
        r = CTX2.index(x.context)
        h = _SlowIdentity()(nd.tanh(nd.dot(x, params[0][r]) + params[1][r]))
        h = nd.tanh(nd.dot(h, params[2][r]) + params[3][r])
        return (((nd.dot(h, params[4][r]) + params[5][r]) - y) ** 2).sum()

    path = str(tmp_path / "trace.json")
    profiler.set_config(filename=path)
    profiler.set_state("run")
    try:
        parallel.forward_backward(fn, batches, params).wait()
    finally:
        profiler.set_state("stop")
    profiler.dump()
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    spans = [e for e in events if e.get("ph") == "X"]
    backward = [e for e in spans if e["name"] == "backward"]
    comm = [e for e in spans if e["name"].startswith("allreduce") and
            e["cat"] == "communication"]
    assert len(backward) == 2 and len(comm) == len(params)
    end_backward = max(e["ts"] + e["dur"] for e in backward)
    early = [e["name"] for e in comm if e["ts"] + e["dur"] <= end_backward]
    # every parameter but the first layer's (final only after the sleep) was summed
    # while backward was still running
    assert set(early) >= {f"allreduce {i}" for i in range(2, len(params))}
    names = {e["name"] for e in spans if e["cat"] == "engine"}
    assert {"forward_backward cpu(0)", "forward_backward cpu(1)"} <= names


@pytest.mark.multi_device
def test_waiting_allreduces_run_first_layers_first():
    """With the communication worker busy, the queued all-reduces run by priority
    (-index): the first layers' first, although their gradients were final last."""
    _need_threads()
    order = []

    class Recording(kvstore.LocalKVStore):
        def pushpull(self, key, value, out=None, priority=0):
            order.append(key)
            super().pushpull(key, value, out=out, priority=priority)

    params = _params(CTX2)
    gate = threading.Event()
    engine.push(lambda: gate.wait(10), ctx=engine.COMM, name="busy")
    try:
        step = parallel.forward_backward(_loss_fn(params, CTX2), _split(_batch(4), CTX2),
                                         params, kvstore=Recording())
    finally:
        gate.set()
    step.wait()
    assert order == list(range(len(params)))


def _mpirun():
    local = Path(sys.executable).with_name("mpirun")  # the mpich wheel's, in a venv
    return str(local) if local.exists() else shutil.which("mpirun")


@pytest.mark.skipif(importlib.util.find_spec("mpi4py") is None or _mpirun() is None,
                    reason="needs mpi4py and an mpirun (pip install -e \".[dist]\")")
def test_two_processes_dist_sync_trainer_forward_backward():
    """gluon.Trainer(kvstore='dist_sync').forward_backward on 2 MPI processes x 2
    contexts matches one process on one context (tests/core/parallel_dist_worker.py)."""
    root = Path(__file__).resolve().parents[2]
    worker = Path(__file__).with_name("parallel_dist_worker.py")
    mpirun = _mpirun()
    version = subprocess.run([mpirun, "--version"], capture_output=True, text=True,
                             timeout=30, check=False, stdin=subprocess.DEVNULL)
    extra = [] if "HYDRA" in version.stdout + version.stderr else \
        ["--allow-run-as-root", "--oversubscribe"]  # Open MPI as root on few cores
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(root), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run([mpirun, *extra, "-np", "2", sys.executable, str(worker)],
                          cwd=root, env=env, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, check=False)
    assert proc.returncode == 0 and "rank 0 OK" in proc.stdout and \
        "rank 1 OK" in proc.stdout, f"{proc.stdout}\n{proc.stderr[-4000:]}"


@pytest.mark.multi_device
def test_fn_runs_with_its_replicas_context_and_list_of_fns():
    params = _params(CTX2)
    seen = []

    def fn(x, y):  # nd.ones without ctx= lands on the replica's context
        seen.append(nd.ones((1,)).context)
        return _loss_fn(params, CTX2)(x, y) * nd.ones((1,))

    parallel.forward_backward(fn, _split(_batch(4), CTX2), params).wait()
    assert sorted(seen, key=str) == CTX2
    calls = []
    fns = [lambda x, y, r=r: calls.append(r) or _loss_fn(params, CTX2)(x, y) for r in (0, 1)]
    step = parallel.forward_backward(fns, _split(_batch(4), CTX2), params)
    assert sorted(calls) == [0, 1] and [v.context for v in step.losses] == CTX2


@pytest.mark.multi_device
def test_inline_runs_in_the_calling_thread_with_the_same_sums_and_order():
    # inline=True: the replicas one after the other in the caller's thread (kbackend's
    # Keras steps that swap shared state per replica); the same gradients, bitwise, and
    # the all-reduces pushed in the same order as with concurrent replicas.
    batch = _batch(seed=3)
    fn_threads, order = [], {}
    pushed = parallel.step._Reducer.push

    def recording_push(self, i):
        order.setdefault(id(self), []).append(i)
        pushed(self, i)

    def runs(params):
        inner = _loss_fn(params, CTX2)

        def fn(x, y):
            fn_threads.append(threading.current_thread().name)
            return inner(x, y)
        return fn

    parallel.step._Reducer.push = recording_push
    try:
        concurrent = _params(CTX2)
        parallel.forward_backward(runs(concurrent), _split(batch, CTX2), concurrent).wait()
        n_threaded = len(fn_threads)
        inline = _params(CTX2)
        step = parallel.forward_backward(runs(inline), _split(batch, CTX2), inline,
                                         inline=True)
        step.wait()
    finally:
        parallel.step._Reducer.push = pushed
    assert fn_threads[n_threaded:] == [threading.current_thread().name] * 2
    assert step.reduced == [True] * len(inline)
    for a, b in zip(_grads(concurrent), _grads(inline)):
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
    first, second = order.values()
    assert first == second == sorted(first, reverse=True)  # the last layers' first

    def bad(x, y):
        raise ArithmeticError("boom on purpose")

    with pytest.raises(ArithmeticError, match="boom"):  # as it is, not an EngineError
        parallel.forward_backward(bad, _split(batch, CTX2), _params(CTX2), inline=True)


@pytest.mark.parametrize("dtype, multi_precision", [("float32", False), ("float16", True)])
def test_updates_wait_for_pushed_writes_of_the_gradients(dtype, multi_precision):
    sgd = optimizer.SGD(learning_rate=1.0, multi_precision=multi_precision)
    ups = [optimizer.get_updater(sgd) for _ in CTX2]
    w = [nd.ones((3,), ctx=c, dtype=dtype) for c in CTX2]
    g = [nd.zeros((3,), ctx=c, dtype=dtype) for c in CTX2]

    def slow_write(arr):
        def fn():
            time.sleep(0.1)
            arr[:] = 0.5
        return fn

    for gr in g:  # an all-reduce still writing the gradients when the update starts
        engine.push(slow_write(gr), write_vars=[gr], ctx=engine.COMM, name="slow_allreduce")
    parallel.update_replicas(ups, [g], [w])
    for wr in w:
        np.testing.assert_array_equal(wr.asnumpy(), np.full(3, 0.5, dtype))
