"""One training step of a 1-layer LSTM: input 128, hidden 256, sequence 35, batch 32,
float32.

Forward through the fused ``nd.RNN(mode='lstm')`` (layout TNC, zero initial states)
with MXNet's flat parameter vector (i2h weight ``(4H, I)``, h2h weight ``(4H, H)``,
then the i2h and h2h biases ``(4H,)``; gates i, f, g, o: see ``core/ops/nn/rnn.py``),
mean squared error against a fixed target, backward, SGD in place on the flat vector.

torch runs ``torch.nn.LSTM`` with the same weights (its ``weight_ih_l0``,
``weight_hh_l0``, ``bias_ih_l0``, ``bias_hh_l0`` use the same gate order, so the flat
vector's slices copy straight in) and ``F.mse_loss``. One step of each from the same
start is checked to give the same loss and the same updated weights before timing.
"""
from __future__ import annotations

import numpy

from .common import Options, Row, check_close, median_time

SEQ, BATCH, INPUT, HIDDEN = 35, 32, 128, 256
LR = 0.01
TITLE = (f"lstm: 1-layer LSTM training step, input {INPUT}, hidden {HIDDEN}, seq {SEQ}, "
         f"batch {BATCH}, float32, time per step")
# torch's parameter names and shapes, in the order MXNet packs them
_PARTS = (("weight_ih_l0", (4 * HIDDEN, INPUT)), ("weight_hh_l0", (4 * HIDDEN, HIDDEN)),
          ("bias_ih_l0", (4 * HIDDEN,)), ("bias_hh_l0", (4 * HIDDEN,)))


def _init(seed: int = 0):
    """The flat parameter vector (uniform(-1/sqrt(H), 1/sqrt(H)), as both frameworks
    initialise), input (T, N, I) and target (T, N, H)."""
    from core.ops.nn.rnn import param_size

    rng = numpy.random.default_rng(seed)
    n = param_size("lstm", 1, 1, INPUT, HIDDEN)
    assert n == sum(int(numpy.prod(s)) for _, s in _PARTS)
    k = 1.0 / numpy.sqrt(HIDDEN)
    flat = rng.uniform(-k, k, n).astype(numpy.float32)
    x = rng.standard_normal((SEQ, BATCH, INPUT)).astype(numpy.float32)
    target = rng.standard_normal((SEQ, BATCH, HIDDEN)).astype(numpy.float32)
    return flat, x, target


def unflatten(flat):
    """``{torch parameter name: array}``: views of MXNet's flat vector."""
    out, off = {}, 0
    for name, shape in _PARTS:
        size = int(numpy.prod(shape))
        out[name] = flat[off:off + size].reshape(shape)
        off += size
    return out


# ----------------------------------------------------------------------------- core

def core_step(state, x, target):
    """Fused LSTM forward and MSE under record, backward, SGD in place; the loss."""
    from core import autograd, nd

    params, h0, c0 = state
    with autograd.record():
        out = nd.RNN(x, params, h0, c0, state_size=HIDDEN, num_layers=1, mode="lstm")
        loss = nd.square(out - target).mean()
    loss.backward()
    params -= LR * params.grad
    return float(loss.asscalar())


def _core_state(flat, x, target):
    from core import nd

    params = nd.array(flat, dtype="float32")
    params.attach_grad()
    zeros = numpy.zeros((1, BATCH, HIDDEN), numpy.float32)
    return ((params, nd.array(zeros), nd.array(zeros)), nd.array(x, dtype="float32"),
            nd.array(target, dtype="float32"))


# ----------------------------------------------------------------------------- torch

def torch_step(torch, state, x, target):
    """torch.nn.LSTM forward, F.mse_loss, backward, SGD under no_grad; the loss."""
    lstm, h0, c0 = state
    out, _ = lstm(x, (h0, c0))
    loss = torch.nn.functional.mse_loss(out, target)
    loss.backward()
    with torch.no_grad():
        for p in lstm.parameters():
            p -= LR * p.grad
            p.grad = None
    return float(loss.detach())


def _torch_state(torch, flat, x, target):
    lstm = torch.nn.LSTM(INPUT, HIDDEN, num_layers=1)
    with torch.no_grad():
        for name, a in unflatten(flat).items():
            getattr(lstm, name).copy_(torch.from_numpy(numpy.ascontiguousarray(a)))
    zeros = torch.zeros(1, BATCH, HIDDEN)
    return (lstm, zeros, zeros.clone()), torch.from_numpy(x), torch.from_numpy(target)


def _check(flat, x, target, torch):
    state, cx, ct = _core_state(flat, x, target)
    core_loss = core_step(state, cx, ct)
    if torch is None:
        if not numpy.isfinite(core_loss):
            raise RuntimeError(f"lstm: core's loss is {core_loss}")
        return
    tstate, tx, tt = _torch_state(torch, flat, x, target)
    pairs = [("loss", core_loss, torch_step(torch, tstate, tx, tt))]
    core_parts = unflatten(state[0].asnumpy())
    pairs += [(f"updated {name}", core_parts[name], getattr(tstate[0], name))
              for name, _ in _PARTS]
    check_close("lstm: core and torch steps", pairs, rtol=1e-4, atol=1e-5)


def run(opts: Options) -> list[Row]:
    flat, x, target = _init()
    reps = opts.reps(opts.repeats, 3)
    number = 2 if opts.quick else 5
    torch = opts.torch
    _check(flat, x, target, torch)

    state, cx, ct = _core_state(flat, x, target)
    t_core = median_time(lambda: core_step(state, cx, ct), number=number, repeats=reps)
    rows = [Row("core   nd.RNN(mode='lstm') step", t_core, unit="step")]
    if torch is not None:  # timed after core (its OpenMP threads spin: see bench_mlp)
        tstate, tx, tt = _torch_state(torch, flat, x, target)
        t_torch = median_time(lambda: torch_step(torch, tstate, tx, tt), number=number,
                              repeats=reps)
        rows += [Row("torch  torch.nn.LSTM step", t_torch, unit="step"),
                 Row("ratio  core/torch", ratio=t_core / t_torch)]
    return rows
