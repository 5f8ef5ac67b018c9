"""Dispatch overhead: the cost of one tiny operator call, with and without autograd.

A 10-element float32 array goes through N elementwise operators in a row
(``x = x * 1.0001`` and ``nd.add``), so the time is almost all Python-side
overhead: argument binding, the dispatcher, wrapping the result and, when
recording, adding a node to the tape. NumPy running the same loop on a raw array
is the floor.
"""
from __future__ import annotations

import numpy

from .common import Options, Row, median_time

TITLE = "dispatch: N tiny elementwise ops on a (10,) float32 array, time per op"
N = 10_000


def _chain_mul(x, n):
    for _ in range(n):
        x = x * 1.0001
    return x


def _chain_add(add, x, y, n):
    for _ in range(n):
        x = add(x, y)
    return x


def run(opts: Options) -> list[Row]:
    from core import autograd, nd  # noqa: PLC0415

    n = N // 10 if opts.quick else N
    reps = opts.reps(opts.repeats, 3)
    rows = []

    x = nd.ones((10,), dtype="float32")
    y = nd.full((10,), 1e-4, dtype="float32")
    t_mul = median_time(lambda: _chain_mul(x, n), number=1, repeats=reps) / n
    rows.append(Row("core   x = x * 1.0001, not recording", t_mul))
    t_add = median_time(lambda: _chain_add(nd.add, x, y, n), number=1, repeats=reps) / n
    rows.append(Row("core   x = nd.add(x, y), not recording", t_add))

    xr = nd.ones((10,), dtype="float32")
    xr.attach_grad()

    def recorded_mul():
        with autograd.record():
            _chain_mul(xr, n)

    def recorded_add():
        with autograd.record():
            _chain_add(nd.add, xr, y, n)

    t_mul_rec = median_time(recorded_mul, number=1, repeats=reps) / n
    rows.append(Row("core   x = x * 1.0001, recording", t_mul_rec))
    t_add_rec = median_time(recorded_add, number=1, repeats=reps) / n
    rows.append(Row("core   x = nd.add(x, y), recording", t_add_rec))

    a = numpy.ones(10, numpy.float32)
    t_np = median_time(lambda: _chain_mul(a, n), number=1, repeats=reps) / n
    rows.append(Row("numpy  x = x * 1.0001", t_np))
    rows.append(Row("ratio  core/numpy, not recording", ratio=t_mul / t_np))
    rows.append(Row("ratio  core/numpy, recording", ratio=t_mul_rec / t_np))

    torch = opts.torch
    if torch is not None:
        tx = torch.ones(10, dtype=torch.float32)
        t_t = median_time(lambda: _chain_mul(tx, n), number=1, repeats=reps) / n
        rows.append(Row("torch  x = x * 1.0001, no grad", t_t))
        txr = torch.ones(10, dtype=torch.float32, requires_grad=True)
        t_tr = median_time(lambda: _chain_mul(txr, n), number=1, repeats=reps) / n
        rows.append(Row("torch  x = x * 1.0001, requires_grad", t_tr))
        rows.append(Row("ratio  core/torch, not recording", ratio=t_mul / t_t))
        rows.append(Row("ratio  core/torch, recording", ratio=t_mul_rec / t_tr))
    return rows
