"""One training step of an MLP 784-512-512-10, batch 128, float32.

The step is forward, softmax cross-entropy, backward and an in-place SGD update.
It is written directly on core (autograd does the backward pass) and by hand in
NumPy (manual backprop), from the same initial weights and data; the NumPy step
is the floor core is measured against. Both are checked to compute the same loss
and update before they are timed.
"""
from __future__ import annotations

from itertools import pairwise

import numpy

from .common import Options, Row, core_state, median_time, median_times

TITLE = "mlp: 784-512-512-10 training step, batch 128, float32, time per step"
SIZES = (784, 512, 512, 10)
BATCH = 128
LR = 0.01


def _init(seed: int = 0):
    rng = numpy.random.default_rng(seed)
    params = []
    for n_in, n_out in pairwise(SIZES):
        params.append((rng.standard_normal((n_in, n_out)) * numpy.sqrt(2.0 / n_in))
                      .astype(numpy.float32))
        params.append(numpy.zeros(n_out, numpy.float32))
    x = rng.standard_normal((BATCH, SIZES[0])).astype(numpy.float32)
    y = rng.integers(0, SIZES[-1], size=BATCH)
    return params, x, y


# ----------------------------------------------------------------------------- NumPy

def numpy_step(params, x, y):
    """Forward, cross-entropy, manual backward, SGD update in place; returns the loss."""
    w1, b1, w2, b2, w3, b3 = params
    rows = numpy.arange(x.shape[0])
    z1 = x @ w1 + b1
    h1 = numpy.maximum(z1, 0)
    z2 = h1 @ w2 + b2
    h2 = numpy.maximum(z2, 0)
    logits = h2 @ w3 + b3
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = numpy.exp(shifted)
    s = e.sum(axis=1, keepdims=True)
    loss = -(shifted[rows, y] - numpy.log(s[:, 0])).mean()
    g = e / s
    g[rows, y] -= 1
    g /= x.shape[0]
    gw3, gb3 = h2.T @ g, g.sum(axis=0)
    g = (g @ w3.T) * (z2 > 0)
    gw2, gb2 = h1.T @ g, g.sum(axis=0)
    g = (g @ w2.T) * (z1 > 0)
    gw1, gb1 = x.T @ g, g.sum(axis=0)
    for p, gp in zip(params, (gw1, gb1, gw2, gb2, gw3, gb3)):
        p -= LR * gp
    return float(loss)


# ----------------------------------------------------------------------------- core

def core_step(params, x, y):
    """The same step on core: autograd records the forward, backward, SGD outside record."""
    from core import autograd, nd

    w1, b1, w2, b2, w3, b3 = params
    with autograd.record():
        h = nd.relu(nd.dot(x, w1) + b1)
        h = nd.relu(nd.dot(h, w2) + b2)
        logits = nd.dot(h, w3) + b3
        log_prob = logits - nd.logsumexp(logits, axis=1, keepdims=True)
        loss = -nd.pick(log_prob, y, axis=1).mean()
    loss.backward()
    for p in params:
        p -= LR * p.grad
    return float(loss.asscalar())


# ----------------------------------------------------------------------------- torch

def torch_step(torch, params, x, y):
    """The same step in torch (CPU): autograd backward, SGD under no_grad."""
    w1, b1, w2, b2, w3, b3 = params
    h = torch.relu(x @ w1 + b1)
    h = torch.relu(h @ w2 + b2)
    logits = h @ w3 + b3
    log_prob = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    loss = -log_prob.gather(1, y[:, None]).mean()
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= LR * p.grad
            p.grad = None
    return float(loss.detach())


def _check_same(core_params, np_params, core_loss, np_loss):
    err = max(float(numpy.max(numpy.abs(c.asnumpy() - n))) for c, n in
              zip(core_params, np_params))
    if not (abs(core_loss - np_loss) <= 1e-4 * max(1.0, abs(np_loss)) and err <= 1e-4):
        raise RuntimeError(f"mlp: core and NumPy steps disagree: loss {core_loss} vs "
                           f"{np_loss}, max parameter difference {err}")


def run(opts: Options) -> list[Row]:
    params, x, y = _init()
    reps = opts.reps(opts.repeats, 3)
    number = 2 if opts.quick else 5

    np_params = [p.copy() for p in params]
    core_params, cx, cy = core_state(params, x, y)
    _check_same(core_params, np_params, core_step(core_params, cx, cy),
                numpy_step(np_params, x, y))

    t = median_times({"core": lambda: core_step(core_params, cx, cy),
                      "numpy": lambda: numpy_step(np_params, x, y)},
                     number=number, repeats=reps)
    rows = [Row("core   autograd step", t["core"], unit="step"),
            Row("numpy  manual backprop step", t["numpy"], unit="step"),
            Row("ratio  core/numpy", ratio=t["core"] / t["numpy"])]
    torch = opts.torch
    if torch is not None:
        # Timed on its own, after the others: torch's OpenMP threads keep spinning for a
        # while after each parallel region and would slow whatever runs next on 2 cores.
        t_params = [torch.tensor(p, requires_grad=True) for p in params]
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        t_torch = median_time(lambda: torch_step(torch, t_params, tx, ty), number=number,
                              repeats=reps)
        rows.append(Row("torch  autograd step", t_torch, unit="step"))
        rows.append(Row("ratio  core/torch", ratio=t["core"] / t_torch))
    return rows
