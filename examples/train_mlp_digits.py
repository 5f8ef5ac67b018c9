"""Train a two-layer perceptron on scikit-learn's bundled digits, written directly on core.

The 8x8 digit images (1,797 of them, shipped inside scikit-learn: nothing is
downloaded) are split into a training and a test set. The model is
64 -> 128 -> 10 with a ReLU; its parameters are plain NDArrays that called
``attach_grad()``. Each step records the forward pass and the softmax
cross-entropy under ``autograd.record()``, runs ``backward()``, and updates the
parameters in place with SGD outside the recording.

Usage:
    python examples/train_mlp_digits.py                 # 30 epochs, about 0.97 test accuracy
    python examples/train_mlp_digits.py --short         # 1 epoch on a subset (a smoke run)
    python examples/train_mlp_digits.py --epochs 5 --lr 0.05 --batch-size 64 --seed 1
"""
from __future__ import annotations

import argparse
import math
import time

import numpy
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm

import core
from core import autograd, nd

NUM_CLASSES = 10


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=30, help="passes over the training set")
    p.add_argument("--batch-size", type=int, default=32, help="examples per SGD step")
    p.add_argument("--lr", type=float, default=0.2,
                   help="SGD step size of the first epoch; it decays to 0 on a cosine")
    p.add_argument("--hidden", type=int, default=128, help="hidden units")
    p.add_argument("--seed", type=int, default=0, help="seed of the split, init and shuffling")
    p.add_argument("--short", action="store_true",
                   help="a quick smoke run: 1 epoch on a 512-example subset")
    return p.parse_args(argv)


def load_data(seed: int, short: bool):
    """Digits scaled to [0, 1], split 75/25 (stratified); NDArrays on the current context."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(numpy.float32)
    y = digits.target.astype(numpy.int64)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.25, stratify=y,
                                              random_state=seed)
    if short:
        x_tr, y_tr = x_tr[:512], y_tr[:512]
    return (nd.array(x_tr), nd.array(y_tr, dtype="int64"),
            nd.array(x_te), nd.array(y_te, dtype="int64"))


def init_params(n_in: int, n_hidden: int, n_out: int):
    """He-normal weights, zero biases; every parameter gets a gradient buffer."""
    w1 = nd.random.normal(0, math.sqrt(2.0 / n_in), shape=(n_in, n_hidden))
    b1 = nd.zeros((n_hidden,))
    w2 = nd.random.normal(0, math.sqrt(2.0 / n_hidden), shape=(n_hidden, n_out))
    b2 = nd.zeros((n_out,))
    params = [w1, b1, w2, b2]
    for p in params:
        p.attach_grad()
    return params


def forward(params, x):
    """Logits of the MLP: relu(x W1 + b1) W2 + b2."""
    w1, b1, w2, b2 = params
    h = nd.relu(nd.dot(x, w1) + b1)
    return nd.dot(h, w2) + b2


def cross_entropy(logits, labels):
    """Mean softmax cross-entropy, through log-softmax = logits - logsumexp(logits)."""
    log_prob = logits - nd.logsumexp(logits, axis=1, keepdims=True)
    return -nd.pick(log_prob, labels, axis=1).mean()


def accuracy(params, x, y) -> float:
    pred = nd.argmax(forward(params, x), axis=1)
    return float((pred.astype("int64") == y).astype("float32").mean().asscalar())


def train(args) -> float:
    core.random.seed(args.seed)
    rng = numpy.random.default_rng(args.seed)
    x_tr, y_tr, x_te, y_te = load_data(args.seed, args.short)
    params = init_params(x_tr.shape[1], args.hidden, NUM_CLASSES)
    n = x_tr.shape[0]
    epochs = 1 if args.short else args.epochs
    n_batches = math.ceil(n / args.batch_size)
    print(f"digits: {n} training and {x_te.shape[0]} test examples; MLP "
          f"{x_tr.shape[1]}-{args.hidden}-{NUM_CLASSES}; {epochs} epoch(s) of {n_batches} "
          f"batches of {args.batch_size}, lr {args.lr} with cosine decay", flush=True)
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        # Cosine decay of the step size: large steps early, small ones to settle at the end.
        lr = 0.5 * args.lr * (1 + math.cos(math.pi * (epoch - 1) / epochs))
        order = nd.array(rng.permutation(n), dtype="int64")
        bar = tqdm(range(n_batches), desc=f"epoch {epoch}/{epochs}", unit="batch",
                   leave=True, dynamic_ncols=True)
        total = 0.0
        for i in bar:
            idx = order[i * args.batch_size:(i + 1) * args.batch_size]
            xb, yb = x_tr[idx], y_tr[idx]
            with autograd.record():
                loss = cross_entropy(forward(params, xb), yb)
            loss.backward()
            for p in params:  # SGD, in place, outside the recording
                p -= lr * p.grad
            total += float(loss.asscalar())
            bar.set_postfix(loss=f"{total / (i + 1):.4f}", lr=f"{lr:.3f}", refresh=False)
        bar.close()
    elapsed = time.perf_counter() - start
    acc = accuracy(params, x_te, y_te)
    print(f"trained in {elapsed:.1f} s", flush=True)
    print(f"test accuracy: {acc:.4f}", flush=True)
    return acc


def main(argv=None) -> None:
    train(parse_args(argv))


if __name__ == "__main__":
    main()
