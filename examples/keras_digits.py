"""Train a Keras model on scikit-learn's bundled digits with the kbackend backend.

``import kbackend`` before ``import keras`` selects the backend (as
``KERAS_BACKEND=kbackend`` would). The 8x8 digit images (1,797 of them, shipped inside
scikit-learn: nothing is downloaded) are split into a training and a test set. A small
CNN (Conv2D, MaxPooling2D, Dense, Dropout) is trained with ``model.fit`` and Keras' own
progress bar, evaluated, saved as a ``.keras`` file, loaded back, and checked to
predict the same as the trained model.

Usage:
    python examples/keras_digits.py                  # 15 epochs, about 0.98 test accuracy
    python examples/keras_digits.py --short          # 2 epochs on a subset (a smoke run)
    python examples/keras_digits.py --epochs 5 --batch-size 64 --out /tmp/digits.keras
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

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
    p.add_argument("--epochs", type=int, default=15, help="passes over the training set")
    p.add_argument("--batch-size", type=int, default=32, help="examples per Adam step")
    p.add_argument("--lr", type=float, default=2e-3, help="Adam's learning rate")
    p.add_argument("--seed", type=int, default=0, help="seed of the split, init and shuffling")
    p.add_argument("--out", default=None,
                   help="where to save the .keras file (default: a temporary directory)")
    p.add_argument("--short", action="store_true",
                   help="a quick smoke run: 2 epochs on a 600-example subset")
    return p.parse_args(argv)


def load_data(seed: int, short: bool):
    """Digits as (N, 8, 8, 1) float32 in [0, 1] and int32 labels, split 75/25 (stratified)."""
    digits = load_digits()
    x = (digits.images / 16.0).astype(numpy.float32)[..., None]
    y = digits.target.astype(numpy.int32)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.25, stratify=y,
                                              random_state=seed)
    if short:
        x_tr, y_tr = x_tr[:600], y_tr[:600]
    return x_tr, y_tr, x_te, y_te


def build_model(lr: float) -> keras.Model:
    """A small CNN for 8x8x1 images, compiled with Adam and sparse cross-entropy."""
    layers = keras.layers
    model = keras.Sequential([
        keras.Input((8, 8, 1)),
        layers.Conv2D(32, 3, padding="same", activation="relu"),
        layers.MaxPooling2D(2),
        layers.Conv2D(64, 3, padding="same", activation="relu"),
        layers.Flatten(),
        layers.Dense(128, activation="relu"),
        layers.Dropout(0.3),
        layers.Dense(NUM_CLASSES, activation="softmax"),
    ], name="digits_cnn")
    model.compile(optimizer=keras.optimizers.Adam(lr),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def main(argv=None) -> int:
    args = parse_args(argv)
    keras.utils.set_random_seed(args.seed)
    print(f"keras {keras.__version__}, backend {keras.config.backend()}")
    x_tr, y_tr, x_te, y_te = load_data(args.seed, args.short)
    epochs = 2 if args.short else args.epochs
    print(f"train {len(x_tr)}, test {len(x_te)} digits; {epochs} epoch(s)")

    model = build_model(args.lr)
    model.summary()
    t0 = time.perf_counter()
    model.fit(x_tr, y_tr, batch_size=args.batch_size, epochs=epochs,
              validation_split=0.1, verbose=1)
    print(f"trained in {time.perf_counter() - t0:.1f} s")

    loss, acc = model.evaluate(x_te, y_te, batch_size=256, verbose=0)
    print(f"test loss: {loss:.4f}")
    print(f"test accuracy: {acc:.4f}")

    with tempfile.TemporaryDirectory() as tmp:
        path = args.out or os.path.join(tmp, "digits_cnn.keras")
        model.save(path)
        print(f"saved the model to {path}")
        loaded = keras.saving.load_model(path)
        before = model.predict(x_te, batch_size=256, verbose=0)
        after = loaded.predict(x_te, batch_size=256, verbose=0)
        if not numpy.allclose(before, after, rtol=1e-5, atol=1e-6):
            print(f"the loaded model predicts differently (max difference "
                  f"{numpy.abs(before - after).max():.3g})")
            return 1
        print("the model loaded from the .keras file predicts the same")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
