"""Data helpers that download in MXNet: here they use local files or say where to put them.

Part of ``core.test_utils`` (MXNet's ``mx.test_utils``); import from there.
"""
from __future__ import annotations

import bz2
import gzip
import os
import struct
import zipfile

import numpy as np

__all__ = [
    "NoNetworkError",
    "download",
    "download_model",
    "get_bz2_data",
    "get_cifar10",
    "get_im2rec_path",
    "get_mnist",
    "get_mnist_iterator",
    "get_mnist_pkl",
    "get_mnist_ubyte",
    "get_zip_data",
]


class NoNetworkError(RuntimeError):
    """A helper would have downloaded a file that is not on disk: kbackend never uses the
    network. The message names the path where the file is looked for."""


def _no_network(what: str, local: str):
    raise NoNetworkError(f"{what}: kbackend does not download anything (no network at run "
                         f"time); {local}")


def download(url: str, fname=None, dirname=None, overwrite: bool = False,
             retries: int = 5) -> str:
    """The local file MXNet would download ``url`` to (its path rules), if it exists.

    Args:
        url: the URL (its last part is the default file name).
        fname: the file name (default: from ``url``).
        dirname: the folder (default: ``fname``'s).
        overwrite: MXNet downloads again; here it is an error (nothing downloads).
        retries: accepted for MXNet compatibility.

    Returns:
        The path, when the file exists.

    Raises:
        NoNetworkError: the file is not there (or ``overwrite``); the message names the
            path to put it at.

    Example:
        >>> try:
        ...     download("http://example.com/data/x.bin", dirname="/nonexistent")
        ... except NoNetworkError as e:
        ...     print(str(e).split("; ")[1])
        put the file at /nonexistent/x.bin
    """
    if fname is None:
        fname = url.split("/")[-1]
    if dirname is not None:
        fname = os.path.join(dirname, fname)
    if not overwrite and os.path.exists(fname):
        return fname
    _no_network(f"download({url!r})", f"put the file at {fname}")


def download_model(model_name: str, dst_dir: str = "./", meta_info=None):
    """Raises :class:`NoNetworkError`: put the model's ``-symbol.json``/``.params`` files
    in ``dst_dir`` and load them with ``mx.model.load_checkpoint``."""
    _no_network(f"download_model({model_name!r})",
                f"put {model_name}-symbol.json and {model_name}-0000.params in {dst_dir!r} and "
                "load them with mx.model.load_checkpoint or SymbolBlock.imports")


_MNIST_HINT = ("or read MNIST from a folder of your own with gluon.data.vision.MNIST(root=...) "
               "or mx.io.MNISTIter(image=..., label=...)")


def _idx_gz(path: str, images: bool):
    with gzip.open(path, "rb") as f:
        head = f.read(16 if images else 8)
        if images:
            magic, n, rows, cols = struct.unpack(">IIII", head)
        else:
            magic, n = struct.unpack(">II", head)
        data = np.frombuffer(f.read(), dtype=np.uint8 if images else np.int8)
    expected = 2051 if images else 2049
    if magic != expected or data.size != (n * rows * cols if images else n):
        raise ValueError(f"get_mnist: {path} is not an MNIST idx file (magic {magic}, "
                         f"expected {expected}, or a truncated body)")
    if images:
        return data.reshape(n, 1, rows, cols).astype(np.float32) / 255
    return data


def get_mnist() -> dict:
    """MNIST from the four ``*-idx?-ubyte.gz`` files in the current folder (the names
    MXNet downloads them under), as MXNet's dict of float32 images and int8 labels.

    Raises:
        NoNetworkError: a file is missing (its path is named).
    """
    path = "http://data.mxnet.io/data/mnist/"
    try:
        out = {}
        for part, prefix in (("train", "train"), ("test", "t10k")):
            lbl = download(path + f"{prefix}-labels-idx1-ubyte.gz")
            img = download(path + f"{prefix}-images-idx3-ubyte.gz")
            out[f"{part}_label"] = _idx_gz(lbl, False)
            out[f"{part}_data"] = _idx_gz(img, True)
    except NoNetworkError as e:
        raise NoNetworkError(f"get_mnist(): {e} ({_MNIST_HINT})") from None
    return {k: out[k] for k in ("train_data", "train_label", "test_data", "test_label")}


def _extract_if_needed(what: str, wanted: list, url: str) -> None:
    if all(os.path.exists(p) for p in wanted):
        return
    missing = [p for p in wanted if not os.path.exists(p)]
    try:
        archive = download(url, dirname="data")
    except NoNetworkError:
        raise NoNetworkError(
            f"{what}: kbackend does not download anything (no network at run time); "
            f"{', '.join(missing)} not found: put the files there, or "
            f"{os.path.join('data', url.split('/')[-1])} to extract them from") from None
    with zipfile.ZipFile(archive) as zf:
        zf.extractall("data")


def get_mnist_pkl() -> None:
    """Check that ``data/mnist.pkl.gz`` exists (MXNet downloads it there).

    Raises:
        NoNetworkError: it does not.
    """
    if not os.path.exists("data/mnist.pkl.gz"):
        _no_network("get_mnist_pkl()", f"put mnist.pkl.gz in data/ ({_MNIST_HINT})")


def get_mnist_ubyte() -> None:
    """Make sure the four MNIST idx files are in ``data/`` (extracting ``data/mnist.zip``
    when only that is there), as MXNet does before reading them with ``MNISTIter``.

    Raises:
        NoNetworkError: neither the files nor the archive are there.
    """
    names = ["train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
             "t10k-labels-idx1-ubyte"]
    _extract_if_needed("get_mnist_ubyte()", [os.path.join("data", n) for n in names],
                       "http://data.mxnet.io/mxnet/data/mnist.zip")


def get_mnist_iterator(batch_size, input_shape, num_parts=1, part_index=0):
    """Training and validation ``MNISTIter`` on the idx files in ``data/``
    (:func:`get_mnist_ubyte` checks them)."""
    from ..io import MNISTIter

    get_mnist_ubyte()
    flat = len(input_shape) != 3
    common = {"input_shape": input_shape, "batch_size": batch_size, "flat": flat,
              "num_parts": num_parts, "part_index": part_index}
    train = MNISTIter(image="data/train-images-idx3-ubyte",
                      label="data/train-labels-idx1-ubyte", shuffle=True, **common)
    val = MNISTIter(image="data/t10k-images-idx3-ubyte", label="data/t10k-labels-idx1-ubyte",
                    **common)
    return train, val


def get_cifar10() -> None:
    """Make sure CIFAR-10's ``.rec``/``.lst`` files are in ``data/cifar`` (extracting
    ``data/cifar10.zip`` when only that is there), as MXNet does.

    Raises:
        NoNetworkError: neither the files nor the archive are there.
    """
    names = ["train.rec", "test.rec", "train.lst", "test.lst"]
    _extract_if_needed("get_cifar10()", [os.path.join("data", "cifar", n) for n in names],
                       "http://data.mxnet.io/mxnet/data/cifar10.zip")


def get_zip_data(data_dir, url, data_origin_name) -> None:
    """Extract ``data_dir/data_origin_name`` into ``data_dir`` unless it is there already
    (MXNet downloads the archive first; here it must be on disk).

    Raises:
        NoNetworkError: the archive is not there.
    """
    archive = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(archive):
        _no_network(f"get_zip_data({url!r})", f"put the archive at {archive}")
        return
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(path=data_dir)


def get_bz2_data(data_dir, data_name, url, data_origin_name) -> None:
    """Decompress ``data_dir/data_origin_name`` to ``data_dir/data_name`` unless the latter
    exists (the ``.bz2`` archive must be on disk; MXNet downloads it).

    Raises:
        NoNetworkError: neither file is there.
    """
    target = os.path.join(data_dir, data_name)
    if os.path.exists(target):
        return
    archive = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(archive):
        _no_network(f"get_bz2_data({url!r})", f"put {target} or the archive {archive} there")
    tmp = f"{target}.tmp{os.getpid()}"
    with bz2.BZ2File(archive, "rb") as src, open(tmp, "wb") as dst:
        dst.writelines(iter(lambda: src.read(1 << 20), b""))
    os.replace(tmp, target)


def get_im2rec_path(home_env: str = "MXNET_HOME") -> str:
    """The im2rec tool: kbackend's is the module ``gluon.data.im2rec``
    (``python -m gluon.data.im2rec``); its file path is returned."""
    import importlib.util

    spec = importlib.util.find_spec("gluon.data.im2rec")
    if spec is None or not spec.origin:
        raise FileNotFoundError("get_im2rec_path: gluon.data.im2rec is not installed")
    return spec.origin
