"""Train a small Gluon CNN on scikit-learn's bundled digits, the MXNet Gluon way.

The 8x8 digit images (1,797 of them, shipped inside scikit-learn: nothing is
downloaded) are split into training, validation and test sets and served by
``gluon.data.DataLoader`` over an ``ArrayDataset`` (shuffled each epoch). The
network is a ``gluon.nn.HybridSequential``: two convolution blocks (Conv2D,
BatchNorm, relu, MaxPool2D), then Flatten, Dense(128, relu), Dropout and
Dense(10). Each step records the forward pass and the
``SoftmaxCrossEntropyLoss`` under ``autograd.record()``, runs ``backward()``, and
lets ``gluon.Trainer`` (Adam) update the parameters with ``step(batch_size)``.
Every epoch prints the validation accuracy (``gluon.metric.Accuracy``). At the end
the parameters are saved with ``save_parameters``, loaded into a fresh network
with ``load_parameters``, and the two networks must predict the same.

Usage:
    python examples/train_digits.py                  # 12 epochs, about 0.99 test accuracy
    python examples/train_digits.py --short          # 1 epoch on a subset (a smoke run)
    python examples/train_digits.py --epochs 20 --lr 0.002 --batch-size 64 --seed 1
    python examples/train_digits.py --hybridize --out digits-cnn.params
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm

import core
import gluon
from core import autograd, nd
from gluon import nn

NUM_CLASSES = 10


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=12, help="passes over the training set")
    p.add_argument("--batch-size", type=int, default=32, help="examples per step")
    p.add_argument("--lr", type=float, default=0.003,
                   help="Adam step size of the first epoch; it decays on a cosine")
    p.add_argument("--seed", type=int, default=0, help="seed of the split, init and shuffling")
    p.add_argument("--hybridize", action="store_true", help="call net.hybridize()")
    p.add_argument("--short", action="store_true",
                   help="a quick smoke run: 1 epoch on a 512-example subset")
    p.add_argument("--out", default=None,
                   help="where to save the parameters (default: a temporary file, removed)")
    return p.parse_args(argv)


def load_data(seed: int, short: bool):
    """Digits as (N, 1, 8, 8) float32 in [0, 1] with int32 labels: train, validation and
    test NumPy arrays (60/15/25 %, stratified)."""
    digits = load_digits()
    x = (digits.images / 16.0).astype(numpy.float32)[:, None, :, :]
    y = digits.target.astype(numpy.int32)
    x_rest, x_te, y_rest, y_te = train_test_split(x, y, test_size=0.25, stratify=y,
                                                  random_state=seed)
    x_tr, x_va, y_tr, y_va = train_test_split(x_rest, y_rest, test_size=0.2, stratify=y_rest,
                                              random_state=seed)
    if short:
        x_tr, y_tr = x_tr[:512], y_tr[:512]
    return (x_tr, y_tr), (x_va, y_va), (x_te, y_te)


def build_net() -> nn.HybridSequential:
    """The CNN: 2 x (Conv2D 3x3, BatchNorm, relu, MaxPool2D 2x2), Flatten, Dense(128),
    Dropout, Dense(10).

    BatchNorm's running statistics (used for prediction) average the batch statistics
    with ``momentum`` 0.7 instead of MXNet's default 0.9: an epoch here is only 34 steps
    and the weights move fast early on, so a shorter average keeps the statistics in
    step with the weights (the short smoke run predicts well above chance with it; the
    full run reaches the same accuracy either way)."""
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(32, 3, padding=1), nn.BatchNorm(momentum=0.7), nn.Activation("relu"),
                nn.MaxPool2D(2),                                    # 32 x 4 x 4
                nn.Conv2D(64, 3, padding=1), nn.BatchNorm(momentum=0.7), nn.Activation("relu"),
                nn.MaxPool2D(2),                                    # 64 x 2 x 2
                nn.Flatten(),
                nn.Dense(128, activation="relu"),
                nn.Dropout(0.3),
                nn.Dense(NUM_CLASSES))
    return net


def evaluate(net, loader, ctx) -> float:
    """Accuracy of ``net`` over ``loader`` (in prediction mode: BatchNorm uses its running
    statistics and Dropout does nothing)."""
    metric = gluon.metric.Accuracy()
    for data, label in loader:
        metric.update([label], [net(data.as_in_context(ctx))])
    return metric.get()[1]


def predict(net, x: numpy.ndarray, ctx) -> numpy.ndarray:
    return net(nd.array(x, ctx=ctx)).asnumpy()


def train(args) -> float:
    core.random.seed(args.seed)
    numpy.random.seed(args.seed)
    ctx = core.cpu()
    (x_tr, y_tr), (x_va, y_va), (x_te, y_te) = load_data(args.seed, args.short)
    train_loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x_tr, y_tr),
                                         batch_size=args.batch_size, shuffle=True)
    val_loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x_va, y_va), batch_size=256)
    test_loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x_te, y_te), batch_size=256)

    net = build_net()
    net.initialize(core.init.Xavier(magnitude=2.24), ctx=ctx)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    epochs = 1 if args.short else args.epochs
    steps = epochs * len(train_loader)
    schedule = core.lr_scheduler.CosineScheduler(max_update=steps, base_lr=args.lr,
                                                 final_lr=args.lr * 0.01)
    trainer = gluon.Trainer(net.collect_params(), "adam",
                            {"learning_rate": args.lr, "lr_scheduler": schedule})
    print(f"digits: {len(x_tr)} training, {len(x_va)} validation and {len(x_te)} test "
          f"examples; {epochs} epoch(s) of {len(train_loader)} batches of {args.batch_size}, "
          f"Adam lr {args.lr} with cosine decay", flush=True)
    net.summary(nd.zeros((1, 1, 8, 8), ctx=ctx))  # before hybridize(), as MXNet requires
    if args.hybridize:
        net.hybridize()

    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        bar = tqdm(train_loader, desc=f"epoch {epoch}/{epochs}", unit="batch", leave=True,
                   dynamic_ncols=True)
        total, n_batches = 0.0, 0
        for data, label in bar:
            data, label = data.as_in_context(ctx), label.as_in_context(ctx)
            with autograd.record():
                loss = loss_fn(net(data), label)
            loss.backward()
            trainer.step(data.shape[0])
            total += float(loss.mean().asscalar())
            n_batches += 1
            bar.set_postfix(loss=f"{total / n_batches:.4f}", refresh=False)
        bar.close()
        print(f"epoch {epoch}: loss {total / n_batches:.4f}, validation accuracy "
              f"{evaluate(net, val_loader, ctx):.4f}", flush=True)
    elapsed = time.perf_counter() - start
    acc = evaluate(net, test_loader, ctx)

    # Save, load into a fresh network, and check that the copy predicts the same.
    tmpdir = None
    path = args.out
    if path is None:
        tmpdir = tempfile.TemporaryDirectory(prefix="train_digits-")
        path = os.path.join(tmpdir.name, "digits-cnn.params")
    try:
        net.save_parameters(path)
        fresh = build_net()
        fresh.load_parameters(path, ctx=ctx)
        if args.hybridize:
            fresh.hybridize()
        same = numpy.array_equal(predict(net, x_te, ctx), predict(fresh, x_te, ctx))
    finally:
        if tmpdir is not None:
            tmpdir.cleanup()
    if not same:
        raise SystemExit("the network loaded from the saved parameters predicts differently")
    where = "a temporary file" if args.out is None else args.out
    print(f"saved the parameters to {where}; a fresh network loaded from them predicts "
          f"the same", flush=True)
    print(f"trained in {elapsed:.1f} s", flush=True)
    print(f"test accuracy: {acc:.4f}", flush=True)
    return acc


def main(argv=None) -> None:
    train(parse_args(argv))


if __name__ == "__main__":
    main()
