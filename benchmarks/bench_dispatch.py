"""Dispatch overhead: the cost of one tiny operator call, with and without autograd.

A 10-element float32 array goes through N elementwise operators in a row
(``x = x * 1.0001`` and ``nd.add``), so the time is almost all Python-side
overhead: argument binding, the dispatcher, wrapping the result and, when
recording, adding a node to the tape. NumPy running the same loop on a raw array
is the floor. Two rows measure the dependency engine (``core.engine``): ``nd.add``
whose second input was named by pushed work (its idle engine variable is checked on
every call), and pushing a no-op to a worker and waiting for it.
"""
from __future__ import annotations

import numpy

from .common import Options, Row, median_times

N = 10_000
TITLE = (f"dispatch: {N:,} tiny elementwise ops ({N // 10:,} with --quick) on a (10,) "
         "float32 array, time per op")


def _chain_mul(x, n):
    for _ in range(n):
        x = x * 1.0001
    return x


def _chain_add(add, x, y, n):
    for _ in range(n):
        x = add(x, y)
    return x


def _push_wait(engine, ctx, v, n):
    for _ in range(n):
        engine.push(_noop, write_vars=(v,), ctx=ctx, name="noop")
        engine.wait_for_var(v)


def _noop():
    return None


def run(opts: Options) -> list[Row]:
    from core import autograd, cpu, engine, nd

    n = N // 10 if opts.quick else N
    reps = opts.reps(opts.repeats, 3)

    x = nd.ones((10,), dtype="float32")
    y = nd.full((10,), 1e-4, dtype="float32")
    xr = nd.ones((10,), dtype="float32")
    xr.attach_grad()

    def recorded_mul():
        with autograd.record():
            _chain_mul(xr, n)

    def recorded_add():
        with autograd.record():
            _chain_add(nd.add, xr, y, n)

    y_engine = nd.full((10,), 1e-4, dtype="float32")
    engine.push(_noop, write_vars=[y_engine], ctx=cpu(0), name="touch")
    y_engine.wait_to_read()
    var = engine.new_var("bench")
    a = numpy.ones(10, numpy.float32)
    cases = {
        "mul": lambda: _chain_mul(x, n),
        "add": lambda: _chain_add(nd.add, x, y, n),
        "mul_rec": recorded_mul,
        "add_rec": recorded_add,
        "numpy": lambda: _chain_mul(a, n),
        "add_var": lambda: _chain_add(nd.add, x, y_engine, n),
        "push": lambda: _push_wait(engine, cpu(0), var, n // 10),
    }
    t = {k: v.per(n // 10 if k == "push" else n)
         for k, v in median_times(cases, number=1, repeats=reps).items()}
    torch = opts.torch
    if torch is not None:  # timed after the others, as in bench_mlp
        tx = torch.ones(10, dtype=torch.float32)
        txr = torch.ones(10, dtype=torch.float32, requires_grad=True)
        t.update({k: v.per(n) for k, v in median_times(
            {"torch": lambda: _chain_mul(tx, n), "torch_rec": lambda: _chain_mul(txr, n)},
            number=1, repeats=reps).items()})

    rows = [
        Row("core   x = x * 1.0001, not recording", t["mul"]),
        Row("core   x = nd.add(x, y), not recording", t["add"]),
        Row("core   x = x * 1.0001, recording", t["mul_rec"]),
        Row("core   x = nd.add(x, y), recording", t["add_rec"]),
        Row("numpy  x = x * 1.0001", t["numpy"]),
        Row("engine x = nd.add(x, y), y named by pushed work", t["add_var"]),
        Row("engine push a no-op to cpu(0) and wait for it", t["push"]),
        Row("ratio  core/numpy, not recording", ratio=t["mul"] / t["numpy"]),
        Row("ratio  core/numpy, recording", ratio=t["mul_rec"] / t["numpy"]),
    ]
    if torch is not None:
        rows += [
            Row("torch  x = x * 1.0001, no grad", t["torch"]),
            Row("torch  x = x * 1.0001, requires_grad", t["torch_rec"]),
            Row("ratio  core/torch, not recording", ratio=t["mul"] / t["torch"]),
            Row("ratio  core/torch, recording", ratio=t["mul_rec"] / t["torch_rec"]),
        ]
    return rows
