"""Data-parallel training of the digits CNN on two contexts, cpu(0) and cpu(1).

The network of ``train_digits.py`` is initialized on both contexts
(``net.initialize(ctx=[cpu(0), cpu(1)])``): every parameter gets one replica per
context. ``trainer.forward_backward(fn, data, label)`` cuts each batch in two, one
slice per context, and runs each replica's forward (``fn``: the slice's loss) and
backward on its context's engine worker, concurrently; as soon as backward is done
with a parameter on both contexts, its gradients are summed (the ``local`` kvstore)
on the engine's communication worker while backward goes on with the layers below.
``trainer.step(batch_size)`` then updates every replica with the same summed
gradient, so the replicas stay identical, which the script checks at the end.
``--sequential`` runs the classic loop instead (``split_and_load``, the losses
under ``autograd.record()``, a ``backward()`` per context, ``step`` sums and
updates); the two compute the same sums, step for step (only the random draws of
the first step come in another order: ``forward_backward`` finishes the deferred
initialization before the first Dropout draws). (BatchNorm's running statistics
are not trained: each context keeps its own, from its own slices, as in MXNet.)

The CPU contexts are logical devices sharing the host, so this runs anywhere; with
GPUs, the same code runs on ``ctx_list = [core.gpu(0), core.gpu(1)]``.

Usage:
    python examples/multi_device.py                 # 12 epochs on cpu(0) and cpu(1)
    python examples/multi_device.py --short         # 1 epoch on a subset (a smoke run)
    python examples/multi_device.py --epochs 5 --batch-size 64 --num-contexts 4
    python examples/multi_device.py --short --sequential   # one backward per context
"""
from __future__ import annotations

import argparse
import time

import numpy
from tqdm import tqdm
from train_digits import build_net, load_data  # the same data and network

import core
import gluon
from core import autograd
from gluon.utils import split_and_load


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=12, help="passes over the training set")
    p.add_argument("--batch-size", type=int, default=32,
                   help="examples per step, over all contexts together")
    p.add_argument("--lr", type=float, default=0.003,
                   help="Adam step size of the first epoch; it decays on a cosine")
    p.add_argument("--seed", type=int, default=0, help="seed of the split, init and shuffling")
    p.add_argument("--num-contexts", type=int, default=2,
                   help="how many CPU contexts: cpu(0), cpu(1), ...")
    p.add_argument("--hybridize", action="store_true", help="call net.hybridize()")
    p.add_argument("--sequential", action="store_true",
                   help="the classic loop: one backward per context in turn, then step")
    p.add_argument("--short", action="store_true",
                   help="a quick smoke run: 1 epoch on a 512-example subset")
    return p.parse_args(argv)


def evaluate(net, loader, ctx_list) -> float:
    """Accuracy over ``loader``, each batch split over the contexts as in training."""
    metric = gluon.metric.Accuracy()
    for data, label in loader:
        datas = split_and_load(data, ctx_list, even_split=False)
        labels = split_and_load(label, ctx_list, even_split=False)
        metric.update(labels, [net(x) for x in datas])
    return metric.get()[1]


def check_replicas(net, ctx_list) -> int:
    """Assert that every trained parameter has bitwise-identical replicas on all contexts;
    return how many parameters were compared."""
    trained = [p for p in net.collect_params().values() if p.grad_req != "null"]
    for p in trained:
        first, *others = [d.asnumpy() for d in p.list_data()]
        for c, other in zip(ctx_list[1:], others):
            if not numpy.array_equal(first, other):
                raise SystemExit(f"parameter {p.name}: the replica on {c} differs from the one "
                                 f"on {ctx_list[0]} (max difference "
                                 f"{numpy.abs(first - other).max():g})")
    return len(trained)


def train(args) -> float:
    core.random.seed(args.seed)
    numpy.random.seed(args.seed)
    ctx_list = [core.cpu(i) for i in range(args.num_contexts)]
    (x_tr, y_tr), (x_va, y_va), (x_te, y_te) = load_data(args.seed, args.short)
    train_loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x_tr, y_tr),
                                         batch_size=args.batch_size, shuffle=True)
    val_loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x_va, y_va), batch_size=256)
    test_loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x_te, y_te), batch_size=256)

    net = build_net()
    net.initialize(core.init.Xavier(magnitude=2.24), ctx=ctx_list)  # one replica per context
    if args.hybridize:
        net.hybridize()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    epochs = 1 if args.short else args.epochs
    schedule = core.lr_scheduler.CosineScheduler(max_update=epochs * len(train_loader),
                                                 base_lr=args.lr, final_lr=args.lr * 0.01)
    trainer = gluon.Trainer(net.collect_params(), "adam",
                            {"learning_rate": args.lr, "lr_scheduler": schedule},
                            kvstore="local")
    names = ", ".join(str(c) for c in ctx_list)
    print(f"digits on {len(ctx_list)} contexts ({names}): {len(x_tr)} training examples; "
          f"{epochs} epoch(s) of {len(train_loader)} batches of {args.batch_size}, each split "
          f"over the contexts", flush=True)

    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        bar = tqdm(train_loader, desc=f"epoch {epoch}/{epochs}", unit="batch", leave=True,
                   dynamic_ncols=True)
        total, n_batches = 0.0, 0
        for data, label in bar:
            if args.sequential:
                # One slice per context (the last, smaller batch splits unevenly).
                datas = split_and_load(data, ctx_list, even_split=False)
                labels = split_and_load(label, ctx_list, even_split=False)
                with autograd.record():
                    losses = [loss_fn(net(x), y) for x, y in zip(datas, labels)]
                for loss in losses:         # one backward per context
                    loss.backward()
            else:
                # Split, then forward + backward on every context at once, the gradients'
                # sums overlapping backward.
                losses = trainer.forward_backward(lambda x, y: loss_fn(net(x), y),
                                                  data, label)
            trainer.step(data.shape[0])     # sum what is not summed yet, then update
            total += sum(float(loss.sum().asscalar()) for loss in losses) / data.shape[0]
            n_batches += 1
            bar.set_postfix(loss=f"{total / n_batches:.4f}", refresh=False)
        bar.close()
        print(f"epoch {epoch}: loss {total / n_batches:.4f}, validation accuracy "
              f"{evaluate(net, val_loader, ctx_list):.4f}", flush=True)
    elapsed = time.perf_counter() - start
    acc = evaluate(net, test_loader, ctx_list)
    n = check_replicas(net, ctx_list)
    print(f"replicas identical: the {n} trained parameters are the same on {names}",
          flush=True)
    print(f"trained in {elapsed:.1f} s", flush=True)
    print(f"test accuracy: {acc:.4f}", flush=True)
    return acc


def main(argv=None) -> None:
    train(parse_args(argv))


if __name__ == "__main__":
    main()
