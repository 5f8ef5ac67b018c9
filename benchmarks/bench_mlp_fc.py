"""The MLP 784-512-512-10 training step (batch 128, float32) through the MXNet 1.x
layer operators, as a Gluon or Module model runs it.

Forward ``nd.FullyConnected`` (weights ``(out, in)``, as MXNet keeps them) and
``nd.relu``, the fused ``nd.softmax_cross_entropy_with_logits`` (one operator forward,
one backward) averaged over the batch, backward by autograd, SGD in place. Compared with
the hand-written NumPy step of ``bench_mlp`` (manual backprop, the floor for NumPy) and
with the same model in torch (``F.linear``, ``F.relu``, ``F.cross_entropy``), all from
the same weights and data; the three are checked once to compute the same loss and the
same updated weights before anything is timed.
"""
from __future__ import annotations

import numpy

from .bench_mlp import BATCH, LR, SIZES, numpy_step
from .bench_mlp import _init as _init_mlp
from .common import Options, Row, check_close, core_state, median_time, median_times

TITLE = (f"mlp_fc: {'-'.join(map(str, SIZES))} training step through nd.FullyConnected + "
         f"fused softmax CE, batch {BATCH}, float32, time per step")


def _init(seed: int = 0):
    """bench_mlp's weights (in, out) transposed to MXNet's (out, in), and its data."""
    params, x, y = _init_mlp(seed)
    mx = [numpy.ascontiguousarray(p.T) if p.ndim == 2 else p.copy() for p in params]
    return params, mx, x, y


# ----------------------------------------------------------------------------- core

def core_step(params, x, y):
    """Forward through the layer operators under record, backward, SGD in place."""
    from core import autograd, nd

    w1, b1, w2, b2, w3, b3 = params
    with autograd.record():
        h = nd.relu(nd.FullyConnected(x, w1, b1, num_hidden=w1.shape[0]))
        h = nd.relu(nd.FullyConnected(h, w2, b2, num_hidden=w2.shape[0]))
        logits = nd.FullyConnected(h, w3, b3, num_hidden=w3.shape[0])
        loss = nd.softmax_cross_entropy_with_logits(logits, y).mean()
    loss.backward()
    for p in params:
        p -= LR * p.grad
    return float(loss.asscalar())


# ----------------------------------------------------------------------------- torch

def torch_step(torch, params, x, y):
    """The same step in torch: F.linear, F.relu, F.cross_entropy, SGD under no_grad."""
    F = torch.nn.functional
    w1, b1, w2, b2, w3, b3 = params
    h = F.relu(F.linear(x, w1, b1))
    h = F.relu(F.linear(h, w2, b2))
    loss = F.cross_entropy(F.linear(h, w3, b3), y)
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= LR * p.grad
            p.grad = None
    return float(loss.detach())


def _torch_state(torch, params, x, y):
    return ([torch.tensor(p, requires_grad=True) for p in params], torch.from_numpy(x),
            torch.from_numpy(y))


def _check(np_params, mx_params, x, y, torch):
    """One step of each implementation from the same start: same loss, same update."""
    np_p = [p.copy() for p in np_params]
    np_loss = numpy_step(np_p, x, y)
    want = [p.T if p.ndim == 2 else p for p in np_p]  # (out, in), as core and torch
    core_p, cx, cy = core_state(mx_params, x, y)
    pairs = [("core loss", core_step(core_p, cx, cy), np_loss)]
    pairs += [(f"core parameter {i}", c, w) for i, (c, w) in enumerate(zip(core_p, want))]
    if torch is not None:
        t_p, tx, ty = _torch_state(torch, mx_params, x, y)
        pairs.append(("torch loss", torch_step(torch, t_p, tx, ty), np_loss))
        pairs += [(f"torch parameter {i}", t, w) for i, (t, w) in enumerate(zip(t_p, want))]
    check_close("mlp_fc: core, NumPy and torch steps", pairs, rtol=1e-4, atol=1e-5)


def run(opts: Options) -> list[Row]:
    np_params, mx_params, x, y = _init()
    reps = opts.reps(opts.repeats, 3)
    number = 2 if opts.quick else 5
    torch = opts.torch
    _check(np_params, mx_params, x, y, torch)

    core_p, cx, cy = core_state(mx_params, x, y)
    np_p = [p.copy() for p in np_params]
    t = median_times({"core": lambda: core_step(core_p, cx, cy),
                      "numpy": lambda: numpy_step(np_p, x, y)},
                     number=number, repeats=reps)
    rows = [Row("core   FullyConnected + fused CE step", t["core"], unit="step"),
            Row("numpy  manual backprop step (bench_mlp)", t["numpy"], unit="step"),
            Row("ratio  core/numpy", ratio=t["core"] / t["numpy"])]
    if torch is not None:  # timed on its own, after the others (see bench_mlp)
        t_p, tx, ty = _torch_state(torch, mx_params, x, y)
        t_torch = median_time(lambda: torch_step(torch, t_p, tx, ty), number=number,
                              repeats=reps)
        rows.append(Row("torch  F.linear + F.cross_entropy step", t_torch, unit="step"))
        rows.append(Row("ratio  core/torch", ratio=t["core"] / t_torch))
    return rows
