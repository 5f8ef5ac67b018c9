"""``MNISTIter``: batches from MNIST's idx files on disk (MXNet's ``mx.io.MNISTIter``).

Reads the images file (idx3, magic 2051) and the labels file (idx1, magic 2049) the
user points to (plain or gzip-compressed); nothing is downloaded. Pixels are scaled
by 1/256 as MXNet does. Data batches are ``(batch_size, 1, rows, cols)``, or
``(batch_size, rows*cols)`` with ``flat=True``; labels ``(batch_size,)``. An
incomplete last batch is dropped. ``shuffle`` (MXNet's default: True) reorders the
examples once, with a generator seeded by ``seed`` (NumPy's, so the order differs
from MXNet's C++ one).

Example:
    >>> import os, struct, tempfile
    >>> import numpy as np
    >>> from core.io import MNISTIter
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "img"), "wb") as f:
    ...     _ = f.write(struct.pack(">iiii", 2051, 4, 2, 2) + bytes(range(16)))
    >>> with open(os.path.join(d, "lab"), "wb") as f:
    ...     _ = f.write(struct.pack(">ii", 2049, 4) + bytes([3, 1, 4, 1]))
    >>> it = MNISTIter(image=os.path.join(d, "img"), label=os.path.join(d, "lab"),
    ...                batch_size=2, shuffle=False, flat=True)
    >>> b = next(it)
    >>> b.data[0].shape, b.label[0].asnumpy().tolist()
    ((2, 4), [3.0, 1.0])
"""
from __future__ import annotations

import gzip
import logging
import os

import numpy

from .batch_loader import MXDataIter, part_range

__all__ = ["MNISTIter", "read_idx"]


def read_idx(path: str, magic: int, owner: str, field: str):
    """The array in an idx file (``magic`` 2051: images ``(n, rows, cols)``; 2049: labels)."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{owner}: {field}={path!r}: no such file")
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        raw = f.read()
    ndim = 3 if magic == 2051 else 1
    header = 4 + 4 * ndim
    found = int.from_bytes(raw[:4], "big") if len(raw) >= 4 else None
    if found != magic:
        raise ValueError(f"{owner}: {field}={path!r} starts with magic number {found} at offset "
                         f"0, expected {magic} (idx {'images' if ndim == 3 else 'labels'})")
    if len(raw) < header:
        raise ValueError(f"{owner}: {field}={path!r} is {len(raw)} bytes, shorter than the "
                         f"{header}-byte idx header")
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    size = int(numpy.prod(dims))
    if len(raw) - header < size:
        raise ValueError(f"{owner}: {field}={path!r} is truncated: the header promises "
                         f"{size} bytes of {tuple(dims)} data from offset {header}, the file "
                         f"has {len(raw) - header}")
    return numpy.frombuffer(raw, numpy.uint8, size, header).reshape(dims)


class MNISTIter(MXDataIter):
    """Iterates over MNIST idx files in batches (MXNet's ``mx.io.MNISTIter``).

    Args:
        image: the images file (default ``'./train-images-idx3-ubyte'``).
        label: the labels file (default ``'./train-labels-idx1-ubyte'``).
        batch_size: examples per batch (default 128).
        shuffle: shuffle the examples once (default True).
        flat: give ``(batch, rows*cols)`` instead of ``(batch, 1, rows, cols)``.
        seed: the shuffle's seed.
        silent: do not log the summary line (logged at INFO level otherwise).
        num_parts: split the examples into this many parts...
        part_index: ...and read this one.
        data_name: the data input's name.
        label_name: the label input's name.
        **kwargs: MXNet's other options (``data_shape``, ``input_shape``, ``ctx``, ...),
            accepted and ignored.

    Raises:
        FileNotFoundError: a file is missing.
        ValueError: a wrong magic number, a truncated file, or image and label counts
            that differ (the message names the file and the field).
    """

    def __init__(self, image: str = "./train-images-idx3-ubyte",
                 label: str = "./train-labels-idx1-ubyte", batch_size: int = 128,
                 shuffle: bool = True, flat: bool = False, seed: int = 0, silent: bool = False,
                 num_parts: int = 1, part_index: int = 0, data_name: str = "data",
                 label_name: str = "softmax_label", **kwargs):
        owner = "MNISTIter"
        images = read_idx(image, 2051, owner, "image")
        labels = read_idx(label, 2049, owner, "label")
        if len(images) != len(labels):
            raise ValueError(f"{owner}: image={image!r} holds {len(images)} images but "
                             f"label={label!r} holds {len(labels)} labels")
        start, end = part_range(len(images), int(num_parts), int(part_index), owner)
        images, labels = images[start:end], labels[start:end]
        data = images.astype(numpy.float32) * numpy.float32(1.0 / 256.0)
        data = data.reshape(len(data), -1) if flat else data[:, None]
        target = labels.astype(numpy.float32)
        if shuffle:
            order = numpy.random.RandomState(int(seed)).permutation(len(data))
            data, target = data[order], target[order]
        super().__init__(data, target, batch_size, drop_last=True, data_name=data_name,
                         label_name=label_name, owner=owner)
        if not silent:
            logging.getLogger(__name__).info(
                "MNISTIter: load %d images, shuffle=%d, shape=%s", len(data),
                int(bool(shuffle)), self.provide_data[0].shape)
