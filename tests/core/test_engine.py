"""core.engine: dependency order, concurrency, priorities, errors, nested work."""
from __future__ import annotations

import random
import threading
import time
import warnings

import numpy
import pytest

import core
from core import autograd, cpu, engine, nd
from core.engine import EngineError

CTXS = [cpu(i) for i in range(4)]


@pytest.fixture(autouse=True)
def _threaded():
    prev = engine.set_engine("ThreadedEngine")  # even under KBACKEND_ENGINE_TYPE=NaiveEngine
    yield
    try:
        engine.wait_all()
    except EngineError:
        pass
    engine.set_engine(prev)


def _stress_program(seed: int, n_ops: int = 3000, n_vars: int = 24):
    """A seeded random program: (initial values, ops as (kind, reads, writes, ctx, prio, k))."""
    rng = random.Random(seed)
    init = [numpy.full((4,), float(i), numpy.float64) for i in range(n_vars)]
    ops = []
    for _ in range(n_ops):
        writes = rng.sample(range(n_vars), rng.choice([0, 1, 1, 1, 2]))
        rest = [i for i in range(n_vars) if i not in writes]
        reads = rng.sample(rest, rng.choice([0, 1, 2, 3]))
        ops.append((rng.choice(["mix", "nd", "scale"]), reads, writes, rng.choice(CTXS),
                    rng.randint(-3, 3), rng.uniform(0.5, 1.5)))
    return init, ops


def _run_program(init, ops):
    arrs = [nd.array(v, dtype="float64", ctx=cpu(0)) for v in init]
    sums = [nd.zeros((4,), dtype="float64") for _ in ops]  # each op's read-only result

    def make(kind, reads, writes, k, out):
        def fn():
            time.sleep(0)  # let the other workers in: races would show
            acc = numpy.zeros(4)
            for r in reads:  # raw reads (as a kernel would) rely on the engine alone
                acc = acc + (arrs[r]._data if kind == "mix" else arrs[r].asnumpy())
            out[:] = acc
            for w in writes:
                if kind == "nd":  # dispatched operators on arrays the work holds
                    arrs[w][:] = (arrs[w] * 0.5 + acc.sum() * 1e-3) % 1000.0
                elif kind == "scale":
                    arrs[w] *= k
                    arrs[w][:] = arrs[w] % 1000.0
                else:
                    d = arrs[w]._data
                    d[...] = (d * 0.25 + acc + k) % 1000.0
        return fn

    gate = threading.Event()
    if not engine._engine.naive:  # the first half queues up behind blocked workers
        for ctx in CTXS:
            engine.push(lambda: gate.wait(10), ctx=ctx, name="gate")
    for i, (kind, reads, writes, ctx, prio, k) in enumerate(ops):
        if i == len(ops) // 2:
            gate.set()
        if i % 64 == 0:
            time.sleep(0)  # let the workers start on what is ready
        engine.push(make(kind, reads, writes, k, sums[i]),
                    read_vars=[arrs[r] for r in reads],
                    write_vars=[arrs[w] for w in writes] + [sums[i]],
                    ctx=ctx, priority=prio, name=f"op{i}")
    engine.wait_all()
    return [a.asnumpy() for a in arrs], [s.asnumpy() for s in sums]


def test_stress_matches_naive_engine():
    init, ops = _stress_program(seed=7)
    got_vals, got_sums = _run_program(init, ops)  # a hang fails on pytest-timeout
    with engine.naive():
        want_vals, want_sums = _run_program(init, ops)
    for g, w in zip(got_vals, want_vals):
        numpy.testing.assert_array_equal(g, w)
    for g, w in zip(got_sums, want_sums):
        numpy.testing.assert_array_equal(g, w)
    assert engine.pending() == 0


def test_naive_engine_runs_inside_push():
    ran = []
    with engine.naive():
        assert engine.engine_type() == "NaiveEngine"
        engine.push(lambda: ran.append(threading.current_thread()), name="naive")
        assert ran == [threading.current_thread()]
    assert engine.engine_type() == "ThreadedEngine"


def test_engine_type_from_environment(monkeypatch):
    monkeypatch.setenv("KBACKEND_ENGINE_TYPE", "NaiveEngine")
    assert engine._from_env() == "NaiveEngine"
    monkeypatch.delenv("KBACKEND_ENGINE_TYPE")
    monkeypatch.setenv("MXNET_ENGINE_TYPE", "ThreadedEnginePerDevice")
    assert engine._from_env() == "ThreadedEngine"
    monkeypatch.setenv("MXNET_ENGINE_TYPE", "Bogus")
    with pytest.raises(ValueError, match="Bogus"):
        engine._from_env()
    with pytest.raises(ValueError, match="unknown engine type"):
        engine.set_engine("Fast")


def test_push_returns_before_the_work_runs_and_sync_points_wait():
    gate = threading.Event()
    a = nd.zeros((3,))

    def slow():
        gate.wait(5)
        a[:] = 5

    engine.push(slow, write_vars=[a], ctx=cpu(1), name="slow")
    assert engine.pending() == 1  # push returned while the work is blocked
    gate.set()
    assert a.asnumpy().tolist() == [5.0, 5.0, 5.0]
    b = nd.zeros((3,))
    engine.push(lambda: (gate.wait(5), b.__setitem__(slice(None), 7)), write_vars=[b],
                ctx=cpu(1))
    assert (b + 1).asnumpy().tolist() == [8.0, 8.0, 8.0]  # the dispatcher waits too
    c = nd.zeros((2,))
    engine.push(lambda: c.__setitem__(slice(None), 3), write_vars=[c], ctx=cpu(2))
    c.wait_to_read()
    assert c._data.tolist() == [3.0, 3.0]
    assert c.item(0) == 3.0


def test_in_place_writes_wait_for_pending_reads():
    a = nd.ones((2,))
    seen = []
    started = threading.Event()

    def reader():
        started.set()
        time.sleep(0.1)
        seen.append(a.asnumpy().tolist())

    engine.push(reader, read_vars=[a], ctx=cpu(1), name="reader")
    started.wait(5)
    a[:] = 9  # must not overwrite while the pushed read is running
    assert seen == [[1.0, 1.0]]
    a.wait_to_write()


def test_reads_overlap_writes_are_exclusive():
    a = nd.zeros((2,))
    lock = threading.Lock()
    log = []  # ("start" | "end", name), in the order the pushed functions ran them
    both_reading = threading.Barrier(2, timeout=10)  # read0 and read1 must run together

    def work(name, meet=None):
        def fn():
            with lock:
                log.append(("start", name))
            if meet is not None:
                meet.wait()  # broken (and the op fails) if the engine ran the reads in turn
            time.sleep(0)
            with lock:
                log.append(("end", name))
        return fn

    engine.push(work("read0", both_reading), read_vars=[a], ctx=cpu(0), name="read0")
    engine.push(work("read1", both_reading), read_vars=[a], ctx=cpu(1), name="read1")
    engine.push(work("write"), write_vars=[a], ctx=cpu(2), name="write")
    engine.push(work("read3"), read_vars=[a], ctx=cpu(3), name="read3")
    engine.wait_all()  # raises EngineError if the barrier broke
    at = {ev: i for i, ev in enumerate(log)}
    assert len(at) == 8, log
    # The two first reads overlapped: each started before the other ended.
    assert at["start", "read0"] < at["end", "read1"] and at["start", "read1"] < at["end", "read0"]
    # The write ran alone, after both reads and before the read pushed after it.
    assert at["end", "read0"] < at["start", "write"] and at["end", "read1"] < at["start", "write"]
    assert at["start", "write"] + 1 == at["end", "write"], log
    assert at["end", "write"] < at["start", "read3"], log


def test_priorities_order_ready_work():
    gate = threading.Event()
    order = []
    engine.push(lambda: gate.wait(5), ctx=cpu(3), name="block")
    for p in (0, 5, -2, 9, 1):
        engine.push(lambda p=p: order.append(p), ctx=cpu(3), priority=p, name=f"p{p}")
    gate.set()
    engine.wait_all()
    assert order == [9, 5, 1, 0, -2]


def test_same_var_keeps_program_order_across_workers():
    a = nd.zeros((1,))
    log = []
    for i in range(50):
        engine.push(lambda i=i: log.append(i), write_vars=[a], ctx=CTXS[i % 4],
                    priority=-i, name=f"w{i}")
    a.wait_to_read()
    assert log == list(range(50))


def test_error_surfaces_at_sync_with_the_op_name_and_cause():
    a = nd.zeros((2,))
    b = nd.zeros((2,))

    def bad():
        raise ZeroDivisionError("boom")

    engine.push(bad, write_vars=[a], ctx=cpu(1), name="my_bad_op")
    ran = []
    engine.push(lambda: ran.append(1), read_vars=[a], write_vars=[b], ctx=cpu(2), name="dep")
    with pytest.raises(EngineError, match="my_bad_op") as info:
        a.wait_to_read()
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    assert info.value.op_name == "my_bad_op"
    with pytest.raises(EngineError, match="my_bad_op"):
        b.asnumpy()  # dependent work was skipped and inherited the failure
    assert ran == []
    with pytest.raises(EngineError, match="boom"):
        a + 1  # the dispatcher is a sync point too
    engine.wait_all()  # already reported: not raised again; errors are cleared
    assert a.asnumpy().tolist() == [0.0, 0.0]


def test_wait_all_raises_once_then_the_engine_is_usable():
    def bad():
        raise ValueError("bad value")

    engine.push(bad, ctx=cpu(0), name="no_outputs")
    engine.push(bad, ctx=cpu(1), name="second")
    with pytest.raises(EngineError, match="no_outputs.*1 more.*second"):
        engine.wait_all()
    engine.wait_all()  # raised once, then cleared
    a = nd.zeros((2,))
    engine.push(lambda: a.__setitem__(slice(None), 4), write_vars=[a], ctx=cpu(0))
    assert a.asnumpy().tolist() == [4.0, 4.0]


def test_errors_in_naive_engine_follow_the_same_rules():
    with engine.naive():
        a = nd.zeros((1,))
        engine.push(lambda: 1 / 0, write_vars=[a], name="naive_bad")  # push does not raise
        with pytest.raises(EngineError, match="naive_bad"):
            a.wait_to_read()
        engine.wait_all()


def test_pushed_work_dispatches_ops_and_syncs_without_deadlock():
    w = nd.array([1.0, 2.0, 3.0], ctx=cpu(1))
    w.attach_grad()
    out = nd.zeros((1,), ctx=cpu(1))
    later = nd.zeros((1,), ctx=cpu(1))

    def replica():
        with autograd.record():  # thread-local state: pushed work sets it itself
            y = (w * w).sum()
        y.backward()
        w.wait_to_read()
        out.wait_to_write()
        out[:] = y.asnumpy()
        engine.wait_all()  # inside work: waits only for earlier work
        later.wait_to_read()  # pushed after this work: not waited for

    engine.push(replica, read_vars=[w], write_vars=[out, w.grad], ctx=cpu(1), name="replica")
    engine.push(lambda: later.__setitem__(slice(None), out.asnumpy()), read_vars=[out],
                write_vars=[later], ctx=cpu(2), name="after")
    engine.wait_all()
    assert out.asnumpy().tolist() == [14.0]
    assert later.asnumpy().tolist() == [14.0]
    assert w.grad.asnumpy().tolist() == [2.0, 4.0, 6.0]


def test_nested_push_and_waits_across_busy_workers():
    a = nd.zeros((1,), ctx=cpu(0))
    b = nd.zeros((1,), ctx=cpu(0))

    def inner():
        b[:] = 1

    def outer():
        # wait for work pushed earlier that sits on this worker's own queue
        a.wait_to_read()
        engine.push(inner, write_vars=[b], ctx=cpu(0), name="inner")

    gate = threading.Event()
    engine.push(lambda: gate.wait(5), ctx=cpu(0), name="block")
    engine.push(lambda: a.__setitem__(slice(None), 3), write_vars=[a], ctx=cpu(0),
                priority=-5, name="write_a")
    engine.push(outer, ctx=cpu(0), priority=5, name="outer")  # runs before write_a
    gate.set()
    engine.wait_all()
    assert a.asnumpy().tolist() == [3.0] and b.asnumpy().tolist() == [1.0]


def test_release_lets_later_work_start_early():
    g = nd.zeros((1,))
    started = threading.Event()
    finished = threading.Event()

    def producer():
        g[:] = 2
        engine.release(g)
        assert started.wait(5)  # the consumer started before this work ended
        finished.set()

    engine.push(producer, write_vars=[g], ctx=cpu(0), name="producer")
    engine.push(lambda: (started.set(), g.__setitem__(slice(None), g.asnumpy() * 10)),
                write_vars=[g], ctx=cpu(1), name="consumer")
    engine.wait_all()
    assert finished.is_set() and g.asnumpy().tolist() == [20.0]
    with pytest.raises(ValueError, match="outside pushed work"):
        engine.release(g)


def test_push_checks_its_arguments():
    with pytest.raises(TypeError, match="must be callable"):
        engine.push(3, name="x")
    with pytest.raises(TypeError, match="NDArrays or engine.Var objects, got ndarray"):
        engine.push(lambda: None, write_vars=[numpy.zeros(2)])
    v = engine.new_var("state")
    engine.push(lambda: None, write_vars=[v, v], read_vars=[v], ctx=engine.COMM)
    engine.wait_for_var(v)
    assert engine.var_of(v) is v


def test_core_exports():
    assert core.waitall is engine.wait_all
    a = nd.zeros((1,))
    assert a._var is None and a.copy()._var is None  # untouched arrays carry no Var
    engine.push(lambda: None, write_vars=[a], ctx=cpu(0))
    assert a._var is not None and a.detach()._var is a._var
    core.waitall()


def test_waits_cover_work_pushed_by_pushed_work():
    g = nd.zeros((1,))
    done = []

    pushed = threading.Event()

    def child():
        time.sleep(0.05)
        g[:] = len(done) + 1
        done.append("child")

    def parent():
        engine.push(child, write_vars=[g], ctx=cpu(2), name="child")
        pushed.set()

    engine.push(parent, ctx=cpu(1), name="parent")
    engine.wait_all()  # waits for the child too, though it was pushed after the call
    assert done == ["child"]
    pushed.clear()
    engine.push(parent, ctx=cpu(1), name="parent")
    assert pushed.wait(5)
    assert g.asnumpy().tolist() == [2.0]  # the child's write, pending at the sync


def test_waitall_inside_naive_work_does_not_wait_for_itself():
    with engine.naive():
        a = nd.zeros((1,))

        def outer():
            engine.push(lambda: a.__setitem__(slice(None), 2), write_vars=[a], name="inner")
            engine.wait_all()
            a.wait_to_read()

        engine.push(outer, write_vars=[a], name="outer")
        assert a.asnumpy().tolist() == [2.0]


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_forked_child_gets_a_fresh_engine():
    import os

    a = nd.zeros((1,), ctx=cpu(0))
    engine.push(lambda: a.__setitem__(slice(None), 1), write_vars=[a], ctx=cpu(0))
    a.wait_to_read()
    with warnings.catch_warnings():  # Python 3.12+ warns about fork() with threads running
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: push and wait on the new engine, exit without cleanup
        code = 1
        try:
            engine.push(lambda: a.__setitem__(slice(None), 5), write_vars=[a], ctx=cpu(0))
            code = 0 if a.asnumpy().tolist() == [5.0] else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert a.asnumpy().tolist() == [1.0]


def test_set_bulk_size_returns_the_previous_size_per_thread():
    prev = engine.set_bulk_size(7)
    try:
        assert engine.set_bulk_size(9) == 7
        seen = []
        t = threading.Thread(target=lambda: seen.append(engine.bulk_size()))
        t.start()
        t.join()
        assert seen == [0] and engine.bulk_size() == 9  # per thread, as in MXNet
    finally:
        engine.set_bulk_size(prev)
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(ValueError, match="non-negative int"):
            engine.set_bulk_size(bad)
        with pytest.raises(ValueError, match="engine.bulk"):
            engine.bulk(bad)


def test_bulk_scope_restores_and_keeps_results():
    # MXNet's test_engine.py::test_bulk: bulking is a hint; results and order are unchanged
    before = engine.bulk_size()
    with engine.bulk(10) as scope:
        assert engine.bulk_size() == 10 and scope is not None
        x = nd.ones((10,))
        x *= 2
        x += 1
        x.wait_to_read()
        x += 1
        assert (x.asnumpy() == 4).all()
        for _ in range(100):
            x += 1
    assert (x.asnumpy() == 104).all()
    assert engine.bulk_size() == before
    with pytest.raises(ZeroDivisionError), engine.bulk(3):
        _ = 1 / 0
    assert engine.bulk_size() == before
