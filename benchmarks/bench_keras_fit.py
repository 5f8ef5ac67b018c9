"""Keras ``fit``: one epoch of an MLP and of a LeNet CNN on kbackend, torch and jax.

The same Keras model (same seed, same synthetic data: 60,000 samples, batch 128,
Adam, sparse categorical cross-entropy, accuracy metric, ``verbose=0``) is trained
under each backend in its own subprocess (``KERAS_BACKEND`` is read once, at import);
``kbackend`` runs with Keras' default ``jit_compile="auto"`` (compiled graphs), and
``kbackend-eager`` with ``jit_compile=False`` (eager steps).
Each subprocess runs one warm-up epoch (jax compiles its step there, the others
build their optimizer state), then times the following epochs; the table gives the
median seconds per epoch and per step, and kbackend's ratio to the faster of torch
and jax. All backends get 2 threads: ``OMP/OPENBLAS/MKL_NUM_THREADS=2``,
``torch.set_num_threads(2)`` and XLA's ``intra_op_parallelism_threads=2``.

Models:
    mlp:   784-512-512-10 (relu, relu, softmax), flat inputs.
    lenet: conv 5x5x6 same + relu, max-pool 2, conv 5x5x16 + relu, max-pool 2,
           dense 120, dense 84, dense 10 (softmax), 28x28x1 inputs (channels last).

Run alone: ``python -m benchmarks.bench_keras_fit [--models mlp lenet] [--steps N]
[--backends kbackend torch jax] [--threads T]`` (``--steps`` times N steps per epoch
instead of a whole epoch; the ms per step stays comparable).

Each row also gives the process' CPU seconds. On a small machine that other work keeps
busy, 2 OpenBLAS/OpenMP threads that spin-wait for each other make NumPy's and torch's
matrix products several times slower (seen here: 2-thread steps 5-20x slower than
1-thread ones at a load average of 10, while XLA's pool was unaffected), so compare
with ``--threads 1`` and the CPU seconds there.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from .common import Options, Row, Timing

TITLE = "keras_fit: Keras fit, one epoch of MLP and LeNet (60,000 samples, batch 128)"
SAMPLES = 60_000
BATCH = 128
BACKENDS = ("kbackend", "kbackend-eager", "torch", "jax")
MODELS = ("mlp", "lenet")
THREADS = 2
ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- worker

def _thread_env(backend: str, threads: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "KERAS_BACKEND"}
    env["KERAS_BACKEND"] = backend.split("-")[0]
    if backend == "kbackend-eager":  # kbackend with jit_compile=False: steps run eagerly
        env["BENCH_KERAS_JIT_COMPILE"] = "0"
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    env["XLA_FLAGS"] = (f"--xla_cpu_multi_thread_eigen={'true' if threads > 1 else 'false'} "
                        f"intra_op_parallelism_threads={threads}")
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def build_model(keras, name: str, lstm: tuple = (35, 128, 256)):
    """The benchmark's Keras model ``name``, compiled with Adam.

    ``name`` is 'mlp' or 'lenet' (classification: sparse categorical cross-entropy and
    accuracy), and for ``benchmarks.report``, 'lenet_mx' (``bench_cnn``'s LeNet: conv
    5x5x20 + relu, max-pool 2, conv 5x5x50 + relu, max-pool 2, dense 500 + relu, dense
    10, channels last) and 'lstm' (one ``LSTM`` layer returning the whole sequence, mean
    squared error against a target sequence; ``lstm`` gives its (sequence length, input
    features, hidden units)).
    """
    layers = keras.layers
    jit = "auto" if os.environ.get("BENCH_KERAS_JIT_COMPILE", "1") != "0" else False
    if name == "lstm":
        seq, features, hidden = lstm
        model = keras.Sequential([keras.Input((seq, features)),
                                  layers.LSTM(hidden, return_sequences=True)])
        model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse", jit_compile=jit)
        return model
    if name == "mlp":
        model = keras.Sequential([
            keras.Input((784,)),
            layers.Dense(512, activation="relu"),
            layers.Dense(512, activation="relu"),
            layers.Dense(10, activation="softmax"),
        ])
    elif name == "lenet":
        model = keras.Sequential([
            keras.Input((28, 28, 1)),
            layers.Conv2D(6, 5, padding="same", activation="relu"),
            layers.MaxPooling2D(2),
            layers.Conv2D(16, 5, activation="relu"),
            layers.MaxPooling2D(2),
            layers.Flatten(),
            layers.Dense(120, activation="relu"),
            layers.Dense(84, activation="relu"),
            layers.Dense(10, activation="softmax"),
        ])
    elif name == "lenet_mx":
        model = keras.Sequential([
            keras.Input((28, 28, 1)),
            layers.Conv2D(20, 5, activation="relu"),
            layers.MaxPooling2D(2),
            layers.Conv2D(50, 5, activation="relu"),
            layers.MaxPooling2D(2),
            layers.Flatten(),
            layers.Dense(500, activation="relu"),
            layers.Dense(10, activation="softmax"),
        ])
    else:
        raise ValueError(f"bench_keras_fit: unknown model {name!r}; expected one of "
                         f"{(*MODELS, 'lenet_mx', 'lstm')}")
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"],
                  jit_compile=jit)
    return model


def synthetic_data(name: str, samples: int = SAMPLES, seed: int = 0):
    """Float32 inputs (standard normal) and int32 labels in [0, 10)."""
    import numpy

    rng = numpy.random.default_rng(seed)
    shape = (samples, 784) if name == "mlp" else (samples, 28, 28, 1)
    x = rng.standard_normal(shape, dtype=numpy.float32)
    y = rng.integers(0, 10, size=samples).astype(numpy.int32)
    return x, y


def worker(model_name: str, steps: int | None, epochs: int) -> dict:
    """Train in this process (its backend is ``KERAS_BACKEND``); the timings as a dict."""
    if os.environ.get("KERAS_BACKEND") == "torch":
        import torch

        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", THREADS)))
    import keras

    keras.utils.set_random_seed(0)
    x, y = synthetic_data(model_name)
    model = build_model(keras, model_name)
    fit = {"batch_size": BATCH, "epochs": 1, "verbose": 0, "shuffle": True,
           "steps_per_epoch": steps}
    t0 = time.perf_counter()
    model.fit(x, y, **fit)
    warm = time.perf_counter() - t0
    times, cpu = [], []
    for _ in range(epochs):
        c0, t0 = time.process_time(), time.perf_counter()
        history = model.fit(x, y, **fit)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    n_steps = steps or -(-SAMPLES // BATCH)
    return {"backend": keras.config.backend(), "model": model_name, "steps": n_steps,
            "warmup_s": warm, "epoch_s": times, "cpu_s": cpu, "loss": float(history.history["loss"][-1])}


def run_worker(backend: str, model_name: str, steps: int | None, epochs: int,
               threads: int = THREADS, timeout: float = 3600) -> dict | str:
    """Run :func:`worker` under ``backend`` in a subprocess; its dict, or an error text."""
    cmd = [sys.executable, "-m", "benchmarks.bench_keras_fit", "--worker", model_name,
           "--epochs", str(epochs)]
    if steps:
        cmd += ["--steps", str(steps)]
    proc = subprocess.run(cmd, env=_thread_env(backend, threads), cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return f"failed (exit {proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}"


# ----------------------------------------------------------------------------- table

def measure(models=MODELS, backends=BACKENDS, steps: int | None = None,
            epochs: int = 2, threads: int = THREADS) -> list[Row]:
    """One row per (model, backend) in seconds per step, and kbackend's ratios.

    The label also gives the process' CPU seconds per epoch (all its threads): on a
    shared machine, with 1 thread, that is the steadier measure of the work done.
    """
    rows = []
    for model_name in models:
        per_step = {}
        for backend in backends:
            res = run_worker(backend, model_name, steps, epochs, threads)
            label = f"{model_name} {backend}"
            if isinstance(res, str):
                rows.append(Row(f"{label}: {res}", ratio=float("nan")))
                continue
            epoch = Timing.of(res["epoch_s"])
            step = epoch.per(res["steps"])
            per_step[backend] = step
            cpu = Timing.of(res["cpu_s"])
            rows.append(Row(f"{label} ({res['steps']} steps: {float(epoch):.2f} s/epoch, "
                            f"CPU {float(cpu):.2f} s, warm-up {res['warmup_s']:.1f} s)",
                            step, unit="step"))
        others = [per_step[b] for b in ("torch", "jax") if b in per_step]
        if "kbackend" in per_step and others:
            rows.append(Row(f"{model_name} kbackend / fastest of torch, jax",
                            ratio=per_step["kbackend"] / min(others)))
        if "kbackend" in per_step and "kbackend-eager" in per_step:
            rows.append(Row(f"{model_name} kbackend jit_compile / eager",
                            ratio=per_step["kbackend"] / per_step["kbackend-eager"]))
    return rows


def run(opts: Options) -> list[Row]:
    """The workload for ``benchmarks.run``: whole epochs (``--quick``: 60 steps, 1 epoch)."""
    if opts.quick:
        return measure(steps=60, epochs=1)
    return measure(epochs=2)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_keras_fit",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--worker", choices=MODELS, help=argparse.SUPPRESS)
    p.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    p.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    p.add_argument("--steps", type=int, default=None,
                   help="steps per timed epoch (default: the whole epoch)")
    p.add_argument("--epochs", type=int, default=2, help="timed epochs after the warm-up")
    p.add_argument("--threads", type=int, default=THREADS,
                   help=f"BLAS/OpenMP/XLA/torch threads for every backend (default {THREADS})")
    args = p.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.steps, args.epochs)))
        return 0
    rows = measure(args.models, args.backends, args.steps, args.epochs, args.threads)
    width = max(len(r.label) for r in rows)
    for r in rows:
        print(f"  {r.label:{width}s}  {r.value():>14s}{r.note()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
