"""One training step of a LeNet-like CNN on 1x28x28 images, batch 64, float32.

conv 5x5x20, relu, max-pool 2, conv 5x5x50, relu, max-pool 2, dense 500, relu,
dense 10, softmax cross-entropy (mean over the batch), backward, SGD in place.

On core it is written with the MXNet 1.x operators (``nd.Convolution``, ``nd.relu``,
``nd.Pooling``, ``nd.FullyConnected``, the fused ``nd.softmax_cross_entropy_with_logits``)
in both layouts: channels first (NCHW, MXNet's default; conv weights ``(F, C, kh, kw)``)
and channels last (NHWC, Keras' default; conv weights ``(F, kh, kw, C)``, the layout
``core/ops/nn/conv.py`` documents). The dense layer after the last pooling flattens
``(C, H, W)`` in NCHW and ``(H, W, C)`` in NHWC, so its weight's columns are permuted
to match: all four variants compute the same function of the same weights.

torch runs the same model with ``torch.nn.functional`` in NCHW and in the
``channels_last`` memory format (logically still NCHW, so it takes the NCHW weights).
Before timing, one step of every variant from the same start is checked to give the
same loss and the same updated weights (within float32 rounding).
"""
from __future__ import annotations

import numpy

from .common import Options, Row, check_close, core_state, median_times

TITLE = "cnn: LeNet-like CNN training step, 1x28x28, batch 64, float32, time per step"
BATCH = 64
LR = 0.01
K = 5  # conv kernel
C1, C2, HIDDEN, CLASSES = 20, 50, 500, 10
FLAT_HW = 4  # 28 -conv-> 24 -pool-> 12 -conv-> 8 -pool-> 4


def _init(seed: int = 0):
    """He-initialised NCHW weights (MXNet's layouts), zero biases, images and labels."""
    rng = numpy.random.default_rng(seed)

    def he(shape, fan_in):
        return (rng.standard_normal(shape) * numpy.sqrt(2.0 / fan_in)).astype(numpy.float32)

    flat = C2 * FLAT_HW * FLAT_HW
    params = [he((C1, 1, K, K), K * K), numpy.zeros(C1, numpy.float32),
              he((C2, C1, K, K), C1 * K * K), numpy.zeros(C2, numpy.float32),
              he((HIDDEN, flat), flat), numpy.zeros(HIDDEN, numpy.float32),
              he((CLASSES, HIDDEN), HIDDEN), numpy.zeros(CLASSES, numpy.float32)]
    x = rng.standard_normal((BATCH, 1, 28, 28)).astype(numpy.float32)
    y = rng.integers(0, CLASSES, size=BATCH)
    return params, x, y


def to_nhwc(params, x):
    """The NCHW weights and images in channels-last layouts (same function)."""
    w1, b1, w2, b2, w3, b3, w4, b4 = params
    conv = [numpy.ascontiguousarray(w.transpose(0, 2, 3, 1)) for w in (w1, w2)]
    # dense columns: NCHW flattens (c, h, w), NHWC flattens (h, w, c)
    w3 = numpy.ascontiguousarray(
        w3.reshape(HIDDEN, C2, FLAT_HW, FLAT_HW).transpose(0, 2, 3, 1).reshape(HIDDEN, -1))
    return ([conv[0], b1.copy(), conv[1], b2.copy(), w3, b3.copy(), w4.copy(), b4.copy()],
            numpy.ascontiguousarray(x.transpose(0, 2, 3, 1)))


def from_nhwc(params):
    """NHWC weights back in NCHW layouts (to compare updated weights)."""
    w1, b1, w2, b2, w3, b3, w4, b4 = params
    w3 = w3.reshape(HIDDEN, FLAT_HW, FLAT_HW, C2).transpose(0, 3, 1, 2).reshape(HIDDEN, -1)
    return [w1.transpose(0, 3, 1, 2), b1, w2.transpose(0, 3, 1, 2), b2, w3, b3, w4, b4]


# ----------------------------------------------------------------------------- core

def core_step(params, x, y, layout):
    """Forward under record with MXNet's operators, backward, SGD in place; the loss."""
    from core import autograd, nd

    w1, b1, w2, b2, w3, b3, w4, b4 = params
    conv = {"kernel": (K, K), "layout": layout}
    pool = {"kernel": (2, 2), "stride": (2, 2), "pool_type": "max", "layout": layout}
    with autograd.record():
        h = nd.relu(nd.Convolution(x, w1, b1, num_filter=C1, **conv))
        h = nd.Pooling(h, **pool)
        h = nd.relu(nd.Convolution(h, w2, b2, num_filter=C2, **conv))
        h = nd.Pooling(h, **pool)
        h = nd.relu(nd.FullyConnected(h, w3, b3, num_hidden=HIDDEN))  # flattens
        logits = nd.FullyConnected(h, w4, b4, num_hidden=CLASSES)
        loss = nd.softmax_cross_entropy_with_logits(logits, y).mean()
    loss.backward()
    for p in params:
        p -= LR * p.grad
    return float(loss.asscalar())


# ----------------------------------------------------------------------------- torch

def torch_step(torch, params, x, y):
    """The same step with torch.nn.functional (the memory format is the tensors')."""
    F = torch.nn.functional
    w1, b1, w2, b2, w3, b3, w4, b4 = params
    h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1)), 2)
    h = F.max_pool2d(F.relu(F.conv2d(h, w2, b2)), 2)
    h = F.relu(F.linear(h.flatten(1), w3, b3))
    loss = F.cross_entropy(F.linear(h, w4, b4), y)
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= LR * p.grad
            p.grad = None
    return float(loss.detach())


def _torch_state(torch, params, x, y, channels_last):
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    ps = [torch.tensor(p) for p in params]
    ps = [p.to(memory_format=fmt) if p.ndim == 4 else p for p in ps]
    for p in ps:
        p.requires_grad_(True)
    return ps, torch.from_numpy(x).to(memory_format=fmt), torch.from_numpy(y)


def _check(params, x, y, torch):
    """One step of every variant from the same start: the same loss and updated weights
    as core NCHW (float32 rounding differs with the summation order, hence the tolerance)."""
    ps, cx, cy = core_state(params, x, y)
    ref_loss = core_step(ps, cx, cy, "NCHW")
    ref = [p.asnumpy() for p in ps]
    pairs = []
    p_cl, x_cl = to_nhwc(params, x)
    ps, cx, cy = core_state(p_cl, x_cl, y)
    pairs.append(("core NHWC loss", core_step(ps, cx, cy, "NHWC"), ref_loss))
    pairs += [(f"core NHWC parameter {i}", p, r)
              for i, (p, r) in enumerate(zip(from_nhwc([p.asnumpy() for p in ps]), ref))]
    if torch is not None:
        for cl in (False, True):
            tp, tx, ty = _torch_state(torch, params, x, y, cl)
            name = "torch channels_last" if cl else "torch NCHW"
            pairs.append((f"{name} loss", torch_step(torch, tp, tx, ty), ref_loss))
            pairs += [(f"{name} parameter {i}", p, r) for i, (p, r) in enumerate(zip(tp, ref))]
    check_close("cnn: core and torch steps", pairs, rtol=1e-4, atol=1e-5)


def run(opts: Options) -> list[Row]:
    params, x, y = _init()
    reps = opts.reps(opts.repeats, 3)
    number = 2 if opts.quick else 5
    torch = opts.torch
    _check(params, x, y, torch)

    nchw = core_state(params, x, y)
    p_cl, x_cl = to_nhwc(params, x)
    nhwc = core_state(p_cl, x_cl, y)
    t = median_times({"NCHW": lambda: core_step(*nchw, "NCHW"),
                      "NHWC": lambda: core_step(*nhwc, "NHWC")},
                     number=number, repeats=reps)
    rows = [Row("core   NCHW step (MXNet's layout)", t["NCHW"], unit="step"),
            Row("core   NHWC step (Keras' layout)", t["NHWC"], unit="step")]
    if torch is not None:  # timed after core (its OpenMP threads spin: see bench_mlp)
        a = _torch_state(torch, params, x, y, False)
        b = _torch_state(torch, params, x, y, True)
        tt = median_times({"NCHW": lambda: torch_step(torch, *a),
                           "CL": lambda: torch_step(torch, *b)},
                          number=number, repeats=reps)
        best_core, best_torch = min(t.values()), min(tt.values())
        rows += [Row("torch  NCHW step", tt["NCHW"], unit="step"),
                 Row("torch  channels_last step", tt["CL"], unit="step"),
                 Row("ratio  core/torch, NCHW", ratio=t["NCHW"] / tt["NCHW"]),
                 Row("ratio  core NHWC/torch channels_last", ratio=t["NHWC"] / tt["CL"]),
                 Row("ratio  core/torch, each at its faster layout",
                     ratio=best_core / best_torch)]
    return rows
