"""Train a Keras model on several devices (and processes) with ``keras.distribution``.

``keras.distribution.DataParallel`` splits every batch of ``model.fit`` over the
devices, keeps the weights replicated, sums the gradients and applies one update: the
same training as one device on the whole batch. Here the devices are logical CPU
devices (``KBACKEND_NUM_CPU_DEVICES``, default 2 in this script); with GPUs,
``keras.distribution.list_devices()`` lists them instead.

Run it as several processes with MPI: each process calls
``keras.distribution.initialize()``, trains on its own share of the data
(``auto_shard_dataset=False``), and the gradients are summed across the processes
(core's ``dist_sync`` store); every process ends with the same weights.

Usage:
    python examples/keras_multi_device.py                    # 2 devices, 10 epochs
    python examples/keras_multi_device.py --short            # 2 epochs (a smoke run)
    KBACKEND_NUM_CPU_DEVICES=4 python examples/keras_multi_device.py
    mpirun -np 2 python examples/keras_multi_device.py       # 2 processes x 2 devices
"""
from __future__ import annotations

import argparse
import hashlib
import os
import time

os.environ.setdefault("KBACKEND_NUM_CPU_DEVICES", "2")
# isort: off
import kbackend  # noqa: F401  (first: it registers the backend before keras loads)
import keras
# isort: on
import numpy
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

NUM_CLASSES = 10


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=10, help="passes over the training set")
    p.add_argument("--batch-size", type=int, default=64,
                   help="examples per step and process (split over its devices)")
    p.add_argument("--lr", type=float, default=2e-3, help="Adam's learning rate")
    p.add_argument("--seed", type=int, default=0, help="seed of the split and the init")
    p.add_argument("--short", action="store_true", help="a quick smoke run: 2 epochs")
    return p.parse_args(argv)


def load_data(seed: int):
    """Digits as (N, 64) float32 in [0, 1] and int32 labels, split 75/25 (stratified)."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(numpy.float32)
    y = digits.target.astype(numpy.int32)
    return train_test_split(x, y, test_size=0.25, stratify=y, random_state=seed)


def build_model(lr: float) -> keras.Model:
    """An MLP with BatchNormalization, compiled with Adam and sparse cross-entropy."""
    layers = keras.layers
    model = keras.Sequential([
        keras.Input((64,)),
        layers.Dense(128, activation="relu"),
        layers.BatchNormalization(),
        layers.Dense(64, activation="relu"),
        layers.Dense(NUM_CLASSES, activation="softmax"),
    ], name="digits_mlp")
    model.compile(optimizer=keras.optimizers.Adam(lr),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def main(argv=None) -> int:
    args = parse_args(argv)
    keras.utils.set_random_seed(args.seed)
    keras.distribution.initialize()  # joins the other processes under mpirun
    from kbackend import distribution_lib

    rank, size = distribution_lib.process_id(), distribution_lib.num_processes()
    devices = keras.distribution.list_devices()
    dist = keras.distribution.DataParallel(devices=devices, auto_shard_dataset=False)
    keras.distribution.set_distribution(dist)
    say = print if rank == 0 else (lambda *a, **k: None)
    say(f"keras {keras.__version__}, backend {keras.config.backend()}")
    say(f"{size} process(es), devices {devices}: {dist.num_model_replicas} replicas")

    x_tr, x_te, y_tr, y_te = load_data(args.seed)
    x_tr, y_tr = x_tr[rank::size], y_tr[rank::size]  # this process' share
    epochs = 2 if args.short else args.epochs
    say(f"train {len(x_tr)} digits per process, test {len(x_te)}; {epochs} epoch(s), "
        f"global batch {args.batch_size * size}")

    model = build_model(args.lr)
    t0 = time.perf_counter()
    model.fit(x_tr, y_tr, batch_size=args.batch_size, epochs=epochs,
              verbose=2 if rank == 0 else 0)
    say(f"trained in {time.perf_counter() - t0:.1f} s")

    loss, acc = model.evaluate(x_te, y_te, batch_size=256, verbose=0)
    digest = hashlib.sha256(b"".join(w.tobytes() for w in model.get_weights())).hexdigest()
    print(f"process {rank}: weights sha256 {digest[:16]}")
    say(f"test loss: {loss:.4f}")
    say(f"test accuracy: {acc:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
