"""Train an MLP or a small conv net on scikit-learn's bundled digits with MXNet's Module API.

Written as MXNet 1.x code is written (``import mxnet as mx`` through kbackend's alias):
a Symbol network ending in ``SoftmaxOutput``, ``mx.io.NDArrayIter`` for the data,
``mx.mod.Module.fit`` with ``mx.callback.Speedometer`` and ``mx.callback.do_checkpoint``,
then ``score`` on the test set and a checkpoint reloaded with ``mx.mod.Module.load``
that predicts the same. The 8x8 digit images ship inside scikit-learn: nothing is
downloaded.

Usage:
    python examples/module_digits.py                  # MLP, 20 epochs, about 0.97 accuracy
    python examples/module_digits.py --net conv       # LeNet-like conv net
    python examples/module_digits.py --short          # 2 epochs on a subset (a smoke run)
    python examples/module_digits.py --contexts 2     # split each batch over cpu(0), cpu(1)
"""
from __future__ import annotations

import argparse
import logging
import os
import tempfile

import numpy
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from gluon.compat import mxnet as _alias

_alias.install()
import mxnet as mx


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--net", choices=["mlp", "conv"], default="mlp", help="the network")
    p.add_argument("--epochs", type=int, default=20, help="passes over the training set")
    p.add_argument("--batch-size", type=int, default=32, help="examples per step")
    p.add_argument("--lr", type=float, default=0.1, help="SGD learning rate")
    p.add_argument("--contexts", type=int, default=1, help="number of CPU contexts")
    p.add_argument("--seed", type=int, default=0, help="seed of the split, init, shuffling")
    p.add_argument("--out", default=None, help="checkpoint prefix (default: a temp dir)")
    p.add_argument("--short", action="store_true",
                   help="a quick smoke run: 2 epochs on a 512-example subset")
    return p.parse_args(argv)


def mlp():
    """64 -> 128 -> 64 -> 10, ReLU."""
    data = mx.sym.var("data")
    h = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=128, name="fc1"),
                          act_type="relu", name="relu1")
    h = mx.sym.Activation(mx.sym.FullyConnected(h, num_hidden=64, name="fc2"),
                          act_type="relu", name="relu2")
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=10, name="fc3"),
                                name="softmax")


def conv():
    """conv(16, 3x3) -> BatchNorm -> ReLU -> max-pool -> fc(64) -> fc(10)."""
    data = mx.sym.var("data")
    h = mx.sym.Convolution(data, kernel=(3, 3), num_filter=16, pad=(1, 1), name="conv1")
    h = mx.sym.Activation(mx.sym.BatchNorm(h, name="bn1"), act_type="relu", name="relu1")
    h = mx.sym.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    h = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.flatten(h), num_hidden=64,
                                                name="fc1"), act_type="relu", name="relu2")
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=10, name="fc2"),
                                name="softmax")


def load_data(args):
    digits = load_digits()
    x = (digits.data / 16.0).astype(numpy.float32)
    if args.net == "conv":
        x = x.reshape(-1, 1, 8, 8)
    y = digits.target.astype(numpy.float32)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.25, stratify=y,
                                              random_state=args.seed)
    if args.short:
        x_tr, y_tr = x_tr[:512], y_tr[:512]
    return x_tr, y_tr, x_te, y_te


def main(argv=None) -> float:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    numpy.random.seed(args.seed)
    mx.random.seed(args.seed)
    x_tr, y_tr, x_te, y_te = load_data(args)
    train = mx.io.NDArrayIter(x_tr, y_tr, batch_size=args.batch_size, shuffle=True)
    test = mx.io.NDArrayIter(x_te, y_te, batch_size=args.batch_size)
    epochs = 2 if args.short else args.epochs
    prefix = args.out or os.path.join(tempfile.mkdtemp(prefix="module_digits"), "digits")
    contexts = [mx.cpu(i) for i in range(args.contexts)]

    net = mlp() if args.net == "mlp" else conv()
    mod = mx.mod.Module(net, context=contexts if len(contexts) > 1 else contexts[0])
    mod.fit(train, eval_data=test, eval_metric="acc", num_epoch=epochs,
            optimizer="sgd", optimizer_params={"learning_rate": args.lr, "momentum": 0.9,
                                               "wd": 1e-4},
            initializer=mx.init.Xavier(magnitude=2.0),
            batch_end_callback=mx.callback.Speedometer(args.batch_size, frequent=20),
            epoch_end_callback=mx.callback.do_checkpoint(prefix, period=epochs))
    acc = dict(mod.score(test, mx.metric.Accuracy()))["accuracy"]

    reloaded = mx.mod.Module.load(prefix, epochs)
    reloaded.bind(test.provide_data, test.provide_label, for_training=False)
    same = numpy.allclose(reloaded.predict(test).asnumpy(), mod.predict(test).asnumpy(),
                          atol=1e-5)
    print(f"checkpoint {prefix}-{epochs:04d}.params reloaded with Module.load: "
          f"{'predicts the same' if same else 'PREDICTS DIFFERENTLY'}")
    print(f"test accuracy: {acc:.4f}")
    return acc


if __name__ == "__main__":
    main()
