"""The batching shared by the file iterators (``CSVIter``, ``LibSVMIter``, ``MNISTIter``).

MXNet's C++ iterators (``MXDataIter`` in Python) read examples one by one and group
them into batches. :class:`MXDataIter` here does the same over examples held in
memory, with MXNet's rules:

- ``round_batch=True`` (the default): the last, incomplete batch is filled with
  examples from the start of the data and ``pad`` says how many; the next epoch then
  starts after those examples (it does not repeat them);
- ``round_batch=False``: the last batch is padded (with the first examples) and
  the next epoch starts from the first example;
- ``drop_last=True`` (MNISTIter): an incomplete last batch is dropped.

Unlike :class:`~core.io.NDArrayIter`, ``getdata()``/``getlabel()`` return one NDArray
(MXNet's C++ iterators have exactly one data and one label input); ``next()`` gives a
``DataBatch`` whose ``data``/``label`` are one-element lists.
"""
from __future__ import annotations

import os

import numpy

from ..ndarray import array
from .base import DataBatch, DataDesc, DataIter

__all__ = ["MXDataIter", "file_list", "part_range"]


def file_list(path: str, owner: str, field: str) -> list:
    """The files behind ``path`` (a file, or every file of a directory, sorted by name)."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{owner}: {field} must be a path, got {type(path).__name__}")
    path = os.fspath(path)
    if os.path.isdir(path):
        files = sorted(os.path.join(path, f) for f in os.listdir(path)
                       if os.path.isfile(os.path.join(path, f)))
        if not files:
            raise FileNotFoundError(f"{owner}: {field}={path!r} is a directory with no files")
        return files
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{owner}: {field}={path!r}: no such file or directory")
    return [path]


def part_range(count: int, num_parts: int, part_index: int, owner: str) -> tuple:
    """``(start, end)`` of part ``part_index`` of ``num_parts`` over ``count`` examples."""
    if num_parts < 1 or not 0 <= part_index < num_parts:
        raise ValueError(f"{owner}: need num_parts >= 1 and 0 <= part_index < num_parts, got "
                         f"num_parts={num_parts}, part_index={part_index}")
    return (int(count / num_parts * part_index), int(count / num_parts * (part_index + 1)))


class MXDataIter(DataIter):
    """Batches over in-memory examples with the rules of MXNet's C++ iterators.

    Args:
        data: NumPy array ``(num_examples, *data_shape)``.
        label: NumPy array ``(num_examples, *label_shape)``.
        batch_size: examples per batch.
        round_batch: see the module (default True).
        drop_last: drop an incomplete last batch instead (MNISTIter).
        data_name: the data input's name (default ``'data'``).
        label_name: the label input's name (default ``'softmax_label'``).
        owner: the iterator's name, for error messages.

    Example:
        >>> import numpy as np
        >>> it = MXDataIter(np.arange(5.0).reshape(5, 1), np.zeros(5), batch_size=2)
        >>> [(b.data[0].asnumpy().ravel().tolist(), b.pad) for b in it]
        [([0.0, 1.0], 0), ([2.0, 3.0], 0), ([4.0, 0.0], 1)]
    """

    def __init__(self, data, label, batch_size: int, round_batch: bool = True,
                 drop_last: bool = False, data_name: str = "data",
                 label_name: str = "softmax_label", owner: str = "MXDataIter"):
        batch_size = int(batch_size)
        super().__init__(batch_size)
        if batch_size < 1:
            raise ValueError(f"{owner}: batch_size must be at least 1, got {batch_size}")
        if len(data) != len(label):
            raise ValueError(f"{owner}: {len(data)} data examples but {len(label)} labels")
        if len(data) == 0:
            raise ValueError(f"{owner}: no examples to iterate over")
        if len(data) < batch_size and not drop_last:
            raise ValueError(f"{owner}: batch_size={batch_size} is larger than the number of "
                             f"examples ({len(data)})")
        self._data, self._label = data, label
        self._owner = owner
        self.round_batch = bool(round_batch)
        self.drop_last = bool(drop_last)
        self.provide_data = [DataDesc(data_name, (batch_size,) + data.shape[1:],
                                      data.dtype.type)]
        self.provide_label = [DataDesc(label_name, (batch_size,) + label.shape[1:],
                                       label.dtype.type)]
        self._start = 0       # where the next epoch begins (round_batch overflow)
        self._pos = 0
        self._overflow = 0
        self._current = None  # (rows, pad)
        self.reset()

    def reset(self) -> None:
        """Rewind; after a ``round_batch`` overflow the epoch starts past the reused rows."""
        self._pos = self._overflow if self.round_batch else 0
        self._overflow = 0
        self._current = None

    def iter_next(self) -> bool:
        """Read the next batch; False at the end of the epoch."""
        n, bs = len(self._data), self.batch_size
        if self._overflow or self._pos >= n:
            return False
        rows = numpy.arange(self._pos, min(self._pos + bs, n))
        self._pos += len(rows)
        pad = bs - len(rows)
        if pad:
            if self.drop_last:
                return False
            rows = numpy.concatenate([rows, numpy.arange(pad) % n])
            self._overflow = pad
        self._current = (rows, pad)
        return True

    def next(self) -> DataBatch:
        """The next batch (``StopIteration`` at the end of the epoch)."""
        if not self.iter_next():
            raise StopIteration
        return DataBatch(data=[self.getdata()], label=[self.getlabel()], pad=self.getpad(),
                         index=self.getindex())

    def _need_batch(self):
        if self._current is None:
            raise RuntimeError(f"{self._owner}: no current batch; call iter_next() or next()")
        return self._current

    def getdata(self):
        """The current batch's data (one NDArray)."""
        rows, _ = self._need_batch()
        return array(self._data[rows], dtype=self._data.dtype)

    def getlabel(self):
        """The current batch's labels (one NDArray)."""
        rows, _ = self._need_batch()
        return array(self._label[rows], dtype=self._label.dtype)

    def getindex(self):
        """The current batch's example indices (uint64)."""
        rows, _ = self._need_batch()
        return rows.astype(numpy.uint64)

    def getpad(self) -> int:
        """Padding examples in the current batch."""
        return self._need_batch()[1]
