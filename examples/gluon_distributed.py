"""Train a Gluon MLP on scikit-learn's digits in several processes, with MPI (``dist_sync``).

Launch one process per worker:

    mpirun -np 2 python examples/gluon_distributed.py

(mpi4py and an MPI library: ``pip install -e ".[dist]"``; with Open MPI as root add
``--allow-run-as-root``). Every process loads the same data and builds the same
network; ``kvstore.create('dist_sync')`` connects them (rank and number of workers
come from MPI). Each worker reads only its own shard of the training set
(``RandomSampler(n, num_parts=num_workers, part_index=rank)``), the Trainer starts
every worker from rank 0's weights and, at each step, sums the gradients of all
workers with an MPI all-reduce, so the replicas stay identical (checked at the end).
``trainer.step`` gets the global batch size (per-worker batch x workers), so the
run follows the same path as one process on batches that large. The test accuracy is
counted on each worker's shard of the test set and summed through the store.

Run without ``mpirun``, the script is a job of one worker (the single-process
baseline). ``KBACKEND_DIST_TIMEOUT`` (seconds, default 60) bounds every collective:
if a worker dies or hangs, the others stop with an error instead of waiting forever.

Usage:
    mpirun -np 2 python examples/gluon_distributed.py            # 20 epochs
    mpirun -np 2 python examples/gluon_distributed.py --short    # 2 epochs on a subset
    python examples/gluon_distributed.py --short                 # one process
"""
from __future__ import annotations

import argparse
import time

import numpy
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm

import core
import gluon
from core import autograd, kvstore, nd
from gluon import nn

NUM_CLASSES = 10


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=20, help="passes over the training set")
    p.add_argument("--batch-size", type=int, default=32, help="examples per step per worker")
    p.add_argument("--lr", type=float, default=0.1, help="SGD step size (momentum 0.9)")
    p.add_argument("--hidden", type=int, default=128, help="hidden units")
    p.add_argument("--seed", type=int, default=0, help="seed of the split and of the init")
    p.add_argument("--short", action="store_true",
                   help="a quick smoke run: 2 epochs on a 512-example subset")
    return p.parse_args(argv)


def load_data(seed: int, short: bool):
    """Digits as 64 features in [0, 1]; a 75/25 stratified split, the same on every worker."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(numpy.float32)
    y = digits.target.astype(numpy.int32)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.25, stratify=y,
                                              random_state=seed)
    if short:
        x_tr, y_tr = x_tr[:512], y_tr[:512]
    return (x_tr, y_tr), (x_te, y_te)


def build_net(hidden: int) -> nn.HybridSequential:
    """64 -> hidden (relu) -> 10."""
    net = nn.HybridSequential()
    net.add(nn.Dense(hidden, activation="relu"), nn.Dense(NUM_CLASSES))
    return net


def shard_loader(x, y, batch_size: int, kv, shuffle: bool) -> gluon.data.DataLoader:
    """A DataLoader over this worker's part of ``(x, y)``."""
    dataset = gluon.data.ArrayDataset(x, y)
    cls = gluon.data.RandomSampler if shuffle else gluon.data.SequentialSampler
    sampler = cls(len(dataset), num_parts=kv.num_workers, part_index=kv.rank)
    return gluon.data.DataLoader(dataset, batch_size=batch_size, sampler=sampler)


def global_accuracy(net, loader, kv) -> float:
    """Correct predictions and examples counted on every worker's shard, summed over the
    workers with the store."""
    correct = total = 0
    for data, label in loader:
        pred = net(data).argmax(axis=1).astype("int32")
        correct += int((pred == label).sum().asscalar())
        total += data.shape[0]
    counts = nd.array([correct, total], dtype="float64")
    kv.pushpull("accuracy-counts", counts)
    correct, total = counts.asnumpy()
    return float(correct / total)


def check_replicas(net, kv) -> int:
    """Every parameter must be the same on every worker: the sum of the replicas over the
    workers is then exactly ``num_workers`` times this worker's. Returns how many were
    compared."""
    params = list(net.collect_params().values())
    for p in params:
        mine = p.data().asnumpy()
        total = p.data().copy()
        kv.pushpull(f"check-{p.name}", total)
        if not numpy.array_equal(total.asnumpy(), mine * kv.num_workers):
            raise SystemExit(f"parameter {p.name} differs between the workers")
    return len(params)


def train(args) -> float:
    kv = kvstore.create("dist_sync")
    lead = kv.rank == 0
    core.random.seed(args.seed + kv.rank)  # different on purpose: rank 0's weights win
    (x_tr, y_tr), (x_te, y_te) = load_data(args.seed, args.short)
    train_loader = shard_loader(x_tr, y_tr, args.batch_size, kv, shuffle=True)
    test_loader = shard_loader(x_te, y_te, 256, kv, shuffle=False)
    # the counters that global_accuracy and check_replicas sum over the workers
    kv.init("accuracy-counts", nd.zeros((2,), dtype="float64"))

    net = build_net(args.hidden)
    net.initialize(core.init.Xavier(), ctx=core.cpu(0))
    net(nd.zeros((1, x_tr.shape[1])))  # shapes known: the parameters exist now
    net.hybridize()
    for p in net.collect_params().values():
        kv.init(f"check-{p.name}", p.data())
    # the updates run on the workers (each applies the same update to the same summed
    # gradient): the store also sums this script's counters and checks with pushpull,
    # which an optimizer set on the store would apply to them
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": args.lr, "momentum": 0.9}, kvstore=kv,
                            update_on_kvstore=False)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    epochs = 2 if args.short else args.epochs
    global_batch = args.batch_size * kv.num_workers
    if lead:
        print(f"digits on {kv.num_workers} worker(s) (dist_sync): {len(x_tr)} training "
              f"examples, {len(train_loader)} steps per epoch of {args.batch_size} per worker "
              f"({global_batch} in all); {epochs} epoch(s)", flush=True)

    step_times = []
    for epoch in range(1, epochs + 1):
        bar = tqdm(train_loader, desc=f"epoch {epoch}/{epochs}", unit="batch",
                   disable=not lead, leave=True, dynamic_ncols=True)
        total, n = 0.0, 0
        for data, label in bar:
            start = time.perf_counter()
            with autograd.record():
                loss = loss_fn(net(data), label)
            loss.backward()
            trainer.step(global_batch)     # all-reduce over the workers, then update
            loss_sum = float(loss.sum().asscalar())
            step_times.append(time.perf_counter() - start)
            total += loss_sum / data.shape[0]
            n += 1
            bar.set_postfix(loss=f"{total / n:.4f}", refresh=False)
        bar.close()
        acc = global_accuracy(net, test_loader, kv)
        if lead:
            print(f"epoch {epoch}: loss {total / n:.4f} (rank 0's shard), test accuracy "
                  f"{acc:.4f}", flush=True)
    n_params = check_replicas(net, kv)
    steady = step_times[len(step_times) // 4:] or step_times  # leave out the warm-up
    if lead:
        print(f"replicas identical: the {n_params} parameters are the same on all "
              f"{kv.num_workers} worker(s)", flush=True)
        print(f"step time: {1000 * numpy.median(steady):.2f} ms median, "
              f"{1000 * numpy.mean(steady):.2f} ms mean ({len(steady)} steps after warm-up)",
              flush=True)
        print(f"test accuracy: {acc:.4f}", flush=True)
    return acc


def main(argv=None) -> None:
    train(parse_args(argv))


if __name__ == "__main__":
    main()
