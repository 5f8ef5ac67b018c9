"""What one process of ``benchmarks.report`` measures: one framework, then it exits.

``benchmarks.report`` starts this module once per framework and round, so that no
framework's threads, allocator or compiled code disturb another's, through
:func:`boot`, which first times the framework's import (``core``, ``torch``, ``keras``)
in the fresh interpreter. Each command prints one JSON line on stdout:

- ``step FRAMEWORK MODEL``: training steps of one model (``mlp``, ``lenet``,
  ``lstm``) in one framework: ``nd`` (core imperative, autograd), ``gluon`` (Gluon
  hybridized, ``trainer.step``) or ``torch`` (eager, CPU). The workloads are the
  existing benchmarks' own: ``bench_mlp_fc`` (MLP through ``nd.FullyConnected`` and the
  fused cross-entropy), ``bench_cnn`` (LeNet, NCHW), ``bench_lstm`` (fused
  ``nd.RNN``) and, for Gluon, ``bench_hybridize.Learner`` (MLP, LeNet) and a Gluon
  ``rnn.LSTM`` with ``L2Loss`` (the same step shape as ``bench_lstm``). Reports the
  first step's latency (from before the parameters are made, after the imports, to the
  end of the first step: numba compilation or cache loading, hybridize's tracing and
  compilation included), then ``repeats`` timed repeats of ``number`` steps each after
  two warm-up steps, and the first step's loss.
- ``keras MODEL...``: Keras ``fit`` on the backend ``KERAS_BACKEND`` names, for each
  model in turn (``bench_keras_fit.build_model``: its ``mlp``, ``lenet_mx`` for lenet
  and ``lstm``, the step workloads' models, with Adam; Keras' default ``jit_compile``): the
  first step's latency (a callback at the end of batch 0 of the first ``fit``), a
  warm-up ``fit`` of two steps, then ``epochs`` timed epochs of ``steps`` steps.

``--tiny`` shrinks every model (for the tests, which check that the report runs; it
times nothing worth reading). Thread counts come from the environment the report sets
(``OMP_NUM_THREADS`` and friends, ``KBACKEND_NUM_THREADS``, XLA's flags); torch reads
``OMP_NUM_THREADS`` here.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time

import numpy

from . import bench_cnn, bench_keras_fit, bench_lstm, bench_mlp, bench_mlp_fc
from .common import core_state

STEP_MODELS = ("mlp", "lenet", "lstm")
FRAMEWORKS = ("nd", "gluon", "torch")
# Keras fit: the batch of each model, as in the step workloads.
KERAS_BATCH = {"mlp": 128, "lenet": 64, "lstm": 32}
TINY_KERAS_BATCH = {"mlp": 8, "lenet": 4, "lstm": 2}


def shrink() -> None:
    """Make every workload tiny, in this process only (``--tiny``): the benchmark modules
    read these module constants when they build their parameters and data."""
    bench_mlp.SIZES, bench_mlp.BATCH = (32, 16, 16, 10), 8
    bench_cnn.BATCH = 2
    bench_lstm.SEQ, bench_lstm.BATCH, bench_lstm.INPUT, bench_lstm.HIDDEN = 3, 2, 8, 8
    h, i = bench_lstm.HIDDEN, bench_lstm.INPUT
    bench_lstm._PARTS = (("weight_ih_l0", (4 * h, i)), ("weight_hh_l0", (4 * h, h)),
                         ("bias_ih_l0", (4 * h,)), ("bias_hh_l0", (4 * h,)))


def describe(model: str, batch: int | None = None) -> str:
    """The model's name with its sizes (as this process has them)."""
    if model == "mlp":
        return f"mlp {'-'.join(map(str, bench_mlp.SIZES))} b{batch or bench_mlp.BATCH}"
    if model == "lenet":
        return f"lenet 20-50-500 b{batch or bench_cnn.BATCH}"
    return (f"lstm {bench_lstm.INPUT}->{bench_lstm.HIDDEN} seq {bench_lstm.SEQ} "
            f"b{batch or bench_lstm.BATCH}")


# ----------------------------------------------------------------------------- steps

def _nd_step(model: str):
    """core imperative (``nd`` operators under ``autograd.record``): a step function."""
    if model == "mlp":
        _, mx, x, y = bench_mlp_fc._init()
        state = core_state(mx, x, y)
        return lambda: bench_mlp_fc.core_step(*state)
    if model == "lenet":
        params, x, y = bench_cnn._init()
        state = core_state(params, x, y)
        return lambda: bench_cnn.core_step(*state, "NCHW")
    flat, x, target = bench_lstm._init()
    state = bench_lstm._core_state(flat, x, target)
    return lambda: bench_lstm.core_step(*state)


def _torch_step(torch, model: str):
    """torch eager (CPU), the same model from the same weights: a step function."""
    if model == "mlp":
        _, mx, x, y = bench_mlp_fc._init()
        state = bench_mlp_fc._torch_state(torch, mx, x, y)
        return lambda: bench_mlp_fc.torch_step(torch, *state)
    if model == "lenet":
        params, x, y = bench_cnn._init()
        state = bench_cnn._torch_state(torch, params, x, y, channels_last=False)
        return lambda: bench_cnn.torch_step(torch, *state)
    flat, x, target = bench_lstm._init()
    state = bench_lstm._torch_state(torch, flat, x, target)
    return lambda: bench_lstm.torch_step(torch, *state)


def _gluon_mlp():
    from gluon import nn

    sizes = bench_mlp.SIZES
    net = nn.HybridSequential()
    for n_in, n_out in zip(sizes[:-2], sizes[1:-1]):
        net.add(nn.Dense(n_out, activation="relu", in_units=n_in))
    net.add(nn.Dense(sizes[-1], in_units=sizes[-2]))
    return net


def _gluon_step(model: str):
    """Gluon, hybridized (net and loss), SGD ``trainer.step``: a step function."""
    from . import bench_hybridize as bh

    if model in ("mlp", "lenet"):
        if model == "mlp":
            spec = bh.Model("mlp", _gluon_mlp, (bench_mlp.SIZES[0],), bench_mlp.BATCH,
                            bench_mlp.BATCH, 0, 0.0)
        else:
            spec = bh.Model("cnn", bh._lenet, (1, 28, 28), bench_cnn.BATCH, bench_cnn.BATCH,
                            0, 0.0)
        learner = bh.Learner(spec, spec.batch, hybrid=True)
        return lambda: float(learner.step().mean().asscalar())
    return _GluonLSTM().step


class _GluonLSTM:
    """``gluon.rnn.LSTM`` (TNC) and ``L2Loss`` over the batch axis, both hybridized:
    ``bench_lstm``'s model and data, trained by a Gluon SGD trainer."""

    def __init__(self):
        from core import nd
        from gluon import Trainer, rnn
        from gluon.loss import L2Loss

        _, x, target = bench_lstm._init()
        self.x, self.target = nd.array(x), nd.array(target)
        self.net = rnn.LSTM(bench_lstm.HIDDEN, input_size=bench_lstm.INPUT)
        self.net.initialize()
        self.loss_fn = L2Loss(batch_axis=1)
        self.net.hybridize()
        self.loss_fn.hybridize()
        self.trainer = Trainer(self.net.collect_params(), "sgd",
                               {"learning_rate": bench_lstm.LR})

    def step(self):
        from core import autograd

        with autograd.record():
            loss = self.loss_fn(self.net(self.x), self.target)
        loss.backward()
        self.trainer.step(bench_lstm.BATCH)
        return float(loss.mean().asscalar())


def timed(fn, repeats: int, number: int) -> tuple[list, list]:
    """Wall and CPU seconds per call of ``fn`` in each of ``repeats`` repeats of
    ``number`` calls, the garbage collector off while a repeat runs (as ``timeit``)."""
    wall, cpu = [], []
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            c0, t0 = time.process_time(), time.perf_counter()
            for _ in range(number):
                fn()
            dt, dc = time.perf_counter() - t0, time.process_time() - c0
        finally:
            gc.enable()
        wall.append(dt / number)
        cpu.append(dc / number)
    return wall, cpu


def measure_steps(framework: str, model: str, repeats: int, number: int) -> dict:
    """First-step latency and timed steps of ``model`` in ``framework`` (this process)."""
    threads = int(os.environ.get("OMP_NUM_THREADS", "2"))
    if framework == "torch":
        import torch

        torch.set_num_threads(threads)
        make = lambda: _torch_step(torch, model)  # noqa: E731
    elif framework == "nd":
        import core  # noqa: F401  (imported before the clock starts, as torch is)

        make = lambda: _nd_step(model)  # noqa: E731
    elif framework == "gluon":
        import gluon  # noqa: F401

        make = lambda: _gluon_step(model)  # noqa: E731
    else:
        raise ValueError(f"report_work: unknown framework {framework!r}; expected one of "
                         f"{FRAMEWORKS}")
    t0 = time.perf_counter()
    step = make()
    loss = step()
    first = time.perf_counter() - t0
    for _ in range(2):  # warm-up: buffers, caches, the optimizer's state
        step()
    wall, cpu = timed(step, repeats, number)
    return {"framework": framework, "model": model, "what": describe(model),
            "first_step_s": first, "loss": loss, "step_s": wall, "cpu_s": cpu,
            "threads": threads}


# ----------------------------------------------------------------------------- Keras

def keras_data(model: str, samples: int, seed: int = 0):
    """Synthetic inputs and labels for ``model`` (``bench_keras_fit``'s for mlp, lenet)."""
    if model in ("mlp", "lenet"):
        return bench_keras_fit.synthetic_data(model, samples, seed)
    rng = numpy.random.default_rng(seed)
    x = rng.standard_normal((samples, bench_lstm.SEQ, bench_lstm.INPUT), dtype=numpy.float32)
    y = rng.standard_normal((samples, bench_lstm.SEQ, bench_lstm.HIDDEN), dtype=numpy.float32)
    return x, y


def measure_keras(models, steps: int, epochs: int, tiny: bool) -> dict:
    """Keras ``fit`` of each model on this process' backend: first step, epochs."""
    if os.environ.get("KERAS_BACKEND") == "torch":
        import torch

        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    import keras

    class FirstStep(keras.callbacks.Callback):
        end = None

        def on_train_batch_end(self, batch, logs=None):
            if self.end is None:
                self.end = time.perf_counter()

    out = {"backend": keras.config.backend(), "models": {}}
    for name in models:
        batch = (TINY_KERAS_BATCH if tiny else KERAS_BATCH)[name]
        keras.utils.set_random_seed(0)
        x, y = keras_data(name, steps * batch)
        t0 = time.perf_counter()
        model = bench_keras_fit.build_model(
            keras, "lenet_mx" if name == "lenet" else name,
            lstm=(bench_lstm.SEQ, bench_lstm.INPUT, bench_lstm.HIDDEN))
        first = FirstStep()
        fit = {"batch_size": batch, "epochs": 1, "verbose": 0, "shuffle": True}
        # Warm-up: two steps on batches of the same shape (jax compiles its step, the
        # optimizers make their state), then whole epochs.
        model.fit(x[:2 * batch], y[:2 * batch], callbacks=[first], **fit)
        warm = time.perf_counter() - t0
        wall, cpu = [], []
        for _ in range(epochs):
            c0, t1 = time.process_time(), time.perf_counter()
            history = model.fit(x, y, **fit)
            wall.append(time.perf_counter() - t1)
            cpu.append(time.process_time() - c0)
        out["models"][name] = {
            # Keras' MLP keeps its sizes under --tiny (build_model's are fixed)
            "what": (f"mlp 784-512-512-10 b{batch}" if name == "mlp"
                     else describe(name, batch)),
            "steps": steps, "batch": batch,
            "first_step_s": first.end - t0,
            "warmup_s": warm, "epoch_s": wall, "cpu_s": cpu,
            "loss": float(history.history["loss"][-1])}
    return out


# ----------------------------------------------------------------------------- main

def boot(module: str) -> str:
    """``python -c`` code that times ``import module`` as the fresh interpreter's first
    statement, then runs :func:`main` on the command line's arguments: every measured
    process is also one sample of its framework's import time."""
    return (f"import time; t0 = time.perf_counter(); import {module}; "
            "t = time.perf_counter() - t0; import sys; "
            "from benchmarks import report_work; "
            "sys.exit(report_work.main(sys.argv[1:], import_s=t))")


def main(argv=None, import_s: float | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.report_work",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--tiny", action="store_true", help="tiny models (for the tests)")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("step", help="training steps of one model in one framework")
    s.add_argument("framework", choices=FRAMEWORKS)
    s.add_argument("model", choices=STEP_MODELS)
    s.add_argument("--repeats", type=int, default=5)
    s.add_argument("--number", type=int, default=3)
    k = sub.add_parser("keras", help="Keras fit on KERAS_BACKEND")
    k.add_argument("models", nargs="+", choices=STEP_MODELS)
    k.add_argument("--steps", type=int, default=50, help="steps per epoch")
    k.add_argument("--epochs", type=int, default=3, help="timed epochs after the warm-up")
    args = p.parse_args(argv)
    if args.tiny:
        shrink()
    if args.command == "step":
        res = measure_steps(args.framework, args.model, args.repeats, args.number)
    else:
        res = measure_keras(args.models, args.steps, args.epochs, args.tiny)
    res["import_s"] = import_s  # see boot()
    sys.stdout.flush()
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
