"""Image datasets read from local files: MNIST, FashionMNIST, CIFAR-10, CIFAR-100, and
images in a RecordIO file (``ImageRecordDataset``) or in class folders
(``ImageFolderDataset``).

These are MXNet 1.9's ``gluon.data.vision`` datasets, except that they never
download anything: put the standard files in ``root`` (a clear error says which
files and where). Samples are ``(image, label)``: the image an NDArray of shape
``(H, W, C)`` and dtype uint8, the label a NumPy int32 scalar, as in MXNet.

The default ``root`` is ``$MXNET_HOME/datasets/<name>`` with ``MXNET_HOME``
defaulting to ``~/.mxnet``.

Example:
    >>> import os, tempfile
    >>> from gluon.data.vision import MNIST
    >>> try:
    ...     MNIST(root=os.path.join(tempfile.gettempdir(), 'no-such-dir'))
    ... except FileNotFoundError as e:
    ...     print(str(e).splitlines()[0])
    MNIST: missing train-images-idx3-ubyte.gz ... in .../no-such-dir ...
"""
from __future__ import annotations

import gzip
import os
import tarfile
import warnings
from collections.abc import Callable

import numpy

from core import nd, recordio

from ..dataset import Dataset, RecordFileDataset

__all__ = [
    "CIFAR10",
    "CIFAR100",
    "MNIST",
    "FashionMNIST",
    "ImageFolderDataset",
    "ImageRecordDataset",
]


def _data_dir() -> str:
    return os.environ.get("MXNET_HOME", os.path.join("~", ".mxnet"))


class _LocalDataset(Dataset):
    """Images (a uint8 NumPy array, N x H x W x C) and labels (int32) read at construction.

    The arrays are kept in NumPy (so the dataset pickles for ``spawn`` workers) and a
    sample's image becomes an NDArray when it is read.
    """

    _name = ""

    def __init__(self, root: str, transform: Callable | None):
        self._root = os.path.expanduser(root)
        self._transform = transform
        self._data, self._label = self._get_data()

    def _get_data(self):
        raise NotImplementedError

    def __getitem__(self, idx):
        img = nd.array(self._data[idx], dtype=numpy.uint8)
        label = self._label[idx]
        if self._transform is not None:
            return self._transform(img, label)
        return img, label

    def __len__(self) -> int:
        return len(self._label)

    def _missing(self, names, url: str, extra: str = "") -> FileNotFoundError:
        return FileNotFoundError(
            f"{self._name}: missing {' / '.join(names)} in {self._root} (this framework never "
            f"downloads data sets). Put the {self._name} files there ({extra}from {url}), or "
            f"pass root= the directory that holds them.")


# ---------------------------------------------------------------------- MNIST
_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def _read_idx(path: str) -> numpy.ndarray:
    """An array from an IDX file (the MNIST format), gzipped or not."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise ValueError(f"{path}: not an IDX file (bad magic number {raw[:4].hex()})")
    ndim = raw[3]
    header = 4 + 4 * ndim
    shape = tuple(int(d) for d in numpy.frombuffer(raw, ">u4", ndim, 4))
    dtype = numpy.dtype(_IDX_DTYPES[raw[2]])
    count = int(numpy.prod(shape)) if shape else 1
    if len(raw) - header != count * dtype.itemsize:
        raise ValueError(f"{path}: the header announces shape {shape} ({count * dtype.itemsize} "
                         f"bytes of data) but the file holds {len(raw) - header} bytes")
    return numpy.frombuffer(raw, dtype, count, header).reshape(shape).astype(dtype.newbyteorder("="))


class MNIST(_LocalDataset):
    """The MNIST handwritten digits, from the IDX files in ``root``.

    The files are ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
    ``t10k-images-idx3-ubyte`` and ``t10k-labels-idx1-ubyte``, each gzipped
    (``.gz``, as distributed) or not. Each sample is ``(image, label)``: an NDArray
    of shape (28, 28, 1), uint8, and a NumPy int32.

    Args:
        root: the directory holding the files; default ``$MXNET_HOME/datasets/mnist``.
        train: the training set (60,000 images) if True, else the test set (10,000).
        transform: called as ``transform(image, label)`` on each sample if given,
            e.g. ``lambda x, y: (x.astype('float32') / 255, y)``.

    Raises:
        FileNotFoundError: a file is missing; the message names it and the directory.
        ValueError: a file is not in the IDX format, or images and labels disagree.

    Example:
        >>> from gluon.data.vision import MNIST
        >>> train = MNIST(train=True)  # doctest: +SKIP
        >>> img, label = train[0]  # doctest: +SKIP
        >>> img.shape, img.dtype, label.dtype  # doctest: +SKIP
        ((28, 28, 1), dtype('uint8'), dtype('int32'))
    """

    _name = "MNIST"
    _url = "http://yann.lecun.com/exdb/mnist/"

    def __init__(self, root: str = os.path.join(_data_dir(), "datasets", "mnist"),
                 train: bool = True, transform: Callable | None = None):
        self._train = train
        super().__init__(root, transform)

    def _find(self, name: str) -> str:
        candidates = [name + ".gz", name, name.replace("-idx", ".idx"),
                      name.replace("-idx", ".idx") + ".gz"]
        for c in candidates:
            path = os.path.join(self._root, c)
            if os.path.isfile(path):
                return path
        raise self._missing([candidates[0], candidates[1]], self._url,
                            "the four *-ubyte.gz files, gzipped or not, ")

    def _get_data(self):
        prefix = "train" if self._train else "t10k"
        images = _read_idx(self._find(f"{prefix}-images-idx3-ubyte"))
        labels = _read_idx(self._find(f"{prefix}-labels-idx1-ubyte"))
        if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
            raise ValueError(f"{self._name}: the image file holds shape {images.shape} and the "
                             f"label file {labels.shape}; expected (N, H, W) and (N,) in "
                             f"{self._root}")
        return images.astype(numpy.uint8)[..., None], labels.astype(numpy.int32)


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST: the MNIST format and file names, clothing images.

    Args:
        root: the directory holding the files; default
            ``$MXNET_HOME/datasets/fashion-mnist``.
        train: the training set if True, else the test set.
        transform: called as ``transform(image, label)`` on each sample if given.

    Raises:
        FileNotFoundError: a file is missing; the message names it and the directory.

    Example:
        >>> from gluon.data.vision import FashionMNIST
        >>> test = FashionMNIST(train=False)  # doctest: +SKIP
    """

    _name = "FashionMNIST"
    _url = "https://github.com/zalandoresearch/fashion-mnist"

    def __init__(self, root: str = os.path.join(_data_dir(), "datasets", "fashion-mnist"),
                 train: bool = True, transform: Callable | None = None):
        super().__init__(root, train, transform)


# ---------------------------------------------------------------------- CIFAR
class CIFAR10(_LocalDataset):
    """CIFAR-10, from the binary version's files in ``root``.

    The files are ``data_batch_1.bin`` ... ``data_batch_5.bin`` and ``test_batch.bin``,
    directly in ``root`` or in ``root/cifar-10-batches-bin`` (as the archive
    unpacks); the archive ``cifar-10-binary.tar.gz`` itself, in ``root``, works too.
    Each sample is ``(image, label)``: an NDArray of shape (32, 32, 3), uint8, and a
    NumPy int32 in [0, 10).

    Args:
        root: the directory; default ``$MXNET_HOME/datasets/cifar10``.
        train: the training set (50,000 images) if True, else the test set (10,000).
        transform: called as ``transform(image, label)`` on each sample if given.

    Raises:
        FileNotFoundError: a file is missing; the message names it and the directory.
        ValueError: a file's size is not a whole number of records.

    Example:
        >>> from gluon.data.vision import CIFAR10
        >>> img, label = CIFAR10(train=False)[0]  # doctest: +SKIP
        >>> img.shape  # doctest: +SKIP
        (32, 32, 3)
    """

    _name = "CIFAR10"
    _url = "https://www.cs.toronto.edu/~kriz/cifar.html"
    _subdir = "cifar-10-batches-bin"
    _archive = "cifar-10-binary.tar.gz"
    _train_files = tuple(f"data_batch_{i}.bin" for i in range(1, 6))
    _test_files = ("test_batch.bin",)
    _label_bytes = 1

    def __init__(self, root: str = os.path.join(_data_dir(), "datasets", "cifar10"),
                 train: bool = True, transform: Callable | None = None):
        self._train = train
        super().__init__(root, transform)

    def _label_column(self) -> int:
        return 0

    def _read_bytes(self, name: str) -> bytes:
        for d in (self._root, os.path.join(self._root, self._subdir)):
            path = os.path.join(d, name)
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    return f.read()
        archive = os.path.join(self._root, self._archive)
        if os.path.isfile(archive):
            with tarfile.open(archive) as tar:
                for member in tar.getmembers():
                    if member.isfile() and os.path.basename(member.name) == name:
                        return tar.extractfile(member).read()
        raise self._missing([name], self._url,
                            f"the binary version, {self._archive}, unpacked or not, ")

    def _get_data(self):
        names = self._train_files if self._train else self._test_files
        record = self._label_bytes + 3072
        images, labels = [], []
        for name in names:
            raw = self._read_bytes(name)
            if len(raw) % record:
                raise ValueError(f"{self._name}: {name} in {self._root} holds {len(raw)} bytes, "
                                 f"not a whole number of {record}-byte records")
            rows = numpy.frombuffer(raw, numpy.uint8).reshape(-1, record)
            images.append(rows[:, self._label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
            labels.append(rows[:, self._label_column()].astype(numpy.int32))
        return (numpy.ascontiguousarray(numpy.concatenate(images)),
                numpy.concatenate(labels))


class CIFAR100(CIFAR10):
    """CIFAR-100, from the binary version's ``train.bin`` / ``test.bin`` in ``root``.

    The files may also be in ``root/cifar-100-binary`` (as the archive unpacks) or
    in the archive ``cifar-100-binary.tar.gz`` in ``root``. Each record holds a
    coarse label (20 super-classes) and a fine one (100 classes).

    Args:
        root: the directory; default ``$MXNET_HOME/datasets/cifar100``.
        fine_label: use the 100 fine classes if True, else the 20 coarse ones.
        train: the training set (50,000 images) if True, else the test set (10,000).
        transform: called as ``transform(image, label)`` on each sample if given.

    Raises:
        FileNotFoundError: a file is missing; the message names it and the directory.

    Example:
        >>> from gluon.data.vision import CIFAR100
        >>> ds = CIFAR100(fine_label=True, train=False)  # doctest: +SKIP
    """

    _name = "CIFAR100"
    _subdir = "cifar-100-binary"
    _archive = "cifar-100-binary.tar.gz"
    _train_files = ("train.bin",)
    _test_files = ("test.bin",)
    _label_bytes = 2

    def __init__(self, root: str = os.path.join(_data_dir(), "datasets", "cifar100"),
                 fine_label: bool = False, train: bool = True,
                 transform: Callable | None = None):
        self._fine_label = bool(fine_label)
        super().__init__(root, train, transform)

    def _label_column(self) -> int:
        return 1 if self._fine_label else 0


# ---------------------------------------------------------------------- image files
def _decode(buf, flag: int, where: str):
    return nd.array(recordio.decode_image(buf, 1 if flag else 0, True, where), dtype=numpy.uint8)


class ImageRecordDataset(RecordFileDataset):
    """The images of a RecordIO file (as ``im2rec`` packs them) with their labels.

    Sample i is ``(image, label)``: the image decoded to an NDArray ``(H, W, C)``
    uint8, RGB, and the label as the record's header holds it (a float, or a float32
    NumPy array for a multi-label record).

    Args:
        filename: the ``.rec`` file (its ``.idx`` beside it).
        flag: 1 for three colour channels, 0 for one gray channel.
        transform: called as ``transform(image, label)`` on each sample if given.

    Raises:
        FileNotFoundError: the ``.rec`` or ``.idx`` file does not exist.
        ValueError: a record is damaged or its image cannot be decoded (the message
            names the file and the record).

    Example:
        >>> import os, tempfile, numpy, pytest
        >>> _ = pytest.importorskip("PIL")
        >>> from core import recordio
        >>> from gluon.data.vision import ImageRecordDataset
        >>> d = tempfile.mkdtemp()
        >>> w = recordio.MXIndexedRecordIO(os.path.join(d, 'a.idx'), os.path.join(d, 'a.rec'), 'w')
        >>> w.write_idx(0, recordio.pack_img(recordio.IRHeader(0, 4.0, 0, 0),
        ...                                  numpy.zeros((5, 6, 3), 'uint8'), img_fmt='.png'))
        >>> w.close()
        >>> img, label = ImageRecordDataset(os.path.join(d, 'a.rec'))[0]
        >>> img.shape, img.dtype, label
        ((5, 6, 3), dtype('uint8'), 4.0)
    """

    def __init__(self, filename, flag: int = 1, transform: Callable | None = None):
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx):
        header, buf = recordio.unpack(super().__getitem__(idx))
        img = _decode(buf, self._flag, f"ImageRecordDataset: {self.filename!r} record "
                                       f"{self._record.keys[idx]!r}")
        if self._transform is not None:
            return self._transform(img, header.label)
        return img, header.label


class ImageFolderDataset(Dataset):
    """Images stored in one folder per class: ``root/<class>/<image>``.

    Classes are the sub-folders of ``root`` in sorted order (``synsets[i]`` is the name of
    label i); ``items`` lists ``(path, label)`` for every ``.jpg``, ``.jpeg`` or ``.png``
    file, sorted by name within a class. Other files are skipped with a warning, as in
    MXNet. Sample i is ``(image, label)``: an NDArray ``(H, W, C)`` uint8 RGB and an int.

    Args:
        root: the folder.
        flag: 1 for three colour channels, 0 for one gray channel.
        transform: called as ``transform(image, label)`` on each sample if given.

    Raises:
        FileNotFoundError: ``root`` is not a folder.

    Example:
        >>> import os, tempfile, numpy, pytest
        >>> Image = pytest.importorskip("PIL.Image")
        >>> from gluon.data.vision import ImageFolderDataset
        >>> root = tempfile.mkdtemp()
        >>> for cls in ('cat', 'dog'):
        ...     os.mkdir(os.path.join(root, cls))
        ...     Image.fromarray(numpy.zeros((4, 4, 3), 'uint8')).save(os.path.join(root, cls, 'a.png'))
        >>> ds = ImageFolderDataset(root)
        >>> ds.synsets, len(ds), ds[1][0].shape, ds[1][1]
        (['cat', 'dog'], 2, (4, 4, 3), 1)
    """

    def __init__(self, root: str, flag: int = 1, transform: Callable | None = None):
        self._root = os.path.expanduser(os.fspath(root))
        self._flag = flag
        self._transform = transform
        self._exts = [".jpg", ".jpeg", ".png"]
        if not os.path.isdir(self._root):
            raise FileNotFoundError(f"ImageFolderDataset: {self._root!r} is not a folder")
        self._list_images(self._root)

    def _list_images(self, root: str) -> None:
        self.synsets: list = []
        self.items: list = []
        for folder in sorted(os.listdir(root)):
            path = os.path.join(root, folder)
            if not os.path.isdir(path):
                warnings.warn(f"ImageFolderDataset: ignoring {path}, which is not a directory",
                              stacklevel=3)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for filename in sorted(os.listdir(path)):
                filename = os.path.join(path, filename)
                ext = os.path.splitext(filename)[1]
                if ext.lower() not in self._exts:
                    warnings.warn(f"ImageFolderDataset: ignoring {filename} of type {ext}; "
                                  f"only {', '.join(self._exts)} are read", stacklevel=3)
                    continue
                self.items.append((filename, label))

    def __getitem__(self, idx):
        path, label = self.items[idx]
        with open(path, "rb") as f:
            img = _decode(f.read(), self._flag, f"ImageFolderDataset: {path!r}")
        if self._transform is not None:
            return self._transform(img, label)
        return img, label

    def __len__(self) -> int:
        return len(self.items)
