"""``LibSVMIter``: batches from LibSVM text files (MXNet's ``mx.io.LibSVMIter``).

A line is ``<label> <index>:<value> <index>:<value> ...`` with zero-based feature
indices. As in MXNet, the data batches are ``CSRNDArray``s ``(batch_size, features)``
(column ids sorted within each row). With ``label_libsvm`` the labels are read from
that file's features (csr ``(batch_size, *label_shape)``; dense when ``label_shape`` is
``(1,)``); otherwise each line's leading label is used (dense ``(batch_size,)``). The
rows are held as one csr matrix, so wide files (many features) stay small in memory.

Example:
    >>> import os, tempfile
    >>> from core.io import LibSVMIter
    >>> path = os.path.join(tempfile.mkdtemp(), "d.libsvm")
    >>> with open(path, "w") as f:
    ...     _ = f.write("1 0:0.5 2:1.5\\n0 1:2\\n")
    >>> b = next(LibSVMIter(data_libsvm=path, data_shape=(3,), batch_size=2))
    >>> b.data[0].stype, b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist()
    ('csr', [[0.5, 0.0, 1.5], [0.0, 2.0, 0.0]], [1.0, 0.0])
"""
from __future__ import annotations

import numpy

from ..ops.dispatch import MXNetError
from ..sparse import array as _sparse_array
from .batch_loader import MXDataIter, file_list, part_range
from .csv_iter import _shape

__all__ = ["LibSVMFormatError", "LibSVMIter"]


class LibSVMFormatError(ValueError, MXNetError):
    """A malformed LibSVM line (a ValueError, and MXNet's ``MXNetError`` as MXNet raises)."""


class _Rows:
    """Examples held as one scipy csr matrix: ``len``, ``shape``, ``dtype`` and row
    indexing, as :class:`~core.io.batch_loader.MXDataIter` reads its arrays."""

    def __init__(self, csr):
        self.csr = csr
        self.shape = csr.shape
        self.dtype = csr.dtype

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, rows):
        if isinstance(rows, slice):
            return _Rows(self.csr[rows])
        return self.csr[rows]


def read_libsvm(path: str, dim: int, owner: str, field: str):
    """``(labels, rows)`` of the LibSVM file(s) at ``path``: labels a float32 NumPy
    array, rows a scipy csr matrix ``(lines, dim)`` float32 with sorted column ids."""
    import scipy.sparse as spsp

    labels, values, indices, indptr = [], [], [], [0]
    for fname in file_list(path, owner, field):
        with open(fname, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                tokens = line.split()
                if not tokens or tokens[0].startswith("#"):
                    continue
                try:
                    labels.append(float(tokens[0]))
                    for tok in tokens[1:]:
                        key, _, value = tok.partition(":")
                        idx = int(key)
                        if not 0 <= idx < dim:
                            raise IndexError(idx)
                        indices.append(idx)
                        values.append(float(value))
                except IndexError as e:
                    raise LibSVMFormatError(
                        f"{owner}: {fname}:{lineno}: {field} feature index {e.args[0]} is "
                        f"outside [0, {dim}) (the shape's size)") from None
                except ValueError:
                    raise LibSVMFormatError(
                        f"{owner}: {fname}:{lineno}: {field} line is not "
                        f"'<label> <index>:<value> ...': {line.strip()[:80]!r}") from None
                indptr.append(len(indices))
    if len(indptr) == 1:
        raise ValueError(f"{owner}: {field}={path!r} holds no examples")
    rows = spsp.csr_matrix((numpy.array(values, numpy.float32),
                            numpy.array(indices, numpy.int64),
                            numpy.array(indptr, numpy.int64)), shape=(len(indptr) - 1, dim))
    rows.sort_indices()
    rows.sum_duplicates()
    return numpy.array(labels, numpy.float32), rows


class LibSVMIter(MXDataIter):
    """Iterates over LibSVM files in batches of CSRNDArrays (see the module).

    Args:
        data_libsvm: a LibSVM file, or a directory of them.
        data_shape: the shape of one example (its size is the number of features).
        label_libsvm: a LibSVM file of labels (their features are the label values), or
            None to use the data lines' leading labels.
        label_shape: the shape of one label with ``label_libsvm`` (default ``(1,)``).
        batch_size: examples per batch.
        round_batch: wrap the last batch around (default True).
        num_parts: split the examples into this many parts...
        part_index: ...and read this one.
        data_name: the data input's name.
        label_name: the label input's name.
        **kwargs: MXNet's other iterator options, accepted and ignored.

    Raises:
        FileNotFoundError: a file is missing.
        LibSVMFormatError: a malformed line or an out-of-range feature index (the
            message names the file and line).
        ValueError: data and label files of different lengths, or a data_shape that is
            not 1-D.
    """

    def __init__(self, data_libsvm, data_shape, label_libsvm=None, label_shape=(1,),
                 batch_size: int = 1, round_batch: bool = True, num_parts: int = 1,
                 part_index: int = 0, data_name: str = "data",
                 label_name: str = "softmax_label", **kwargs):
        owner = "LibSVMIter"
        data_shape = _shape(data_shape, owner, "data_shape")
        label_shape = _shape(label_shape, owner, "label_shape")
        if len(data_shape) != 1:
            raise ValueError(f"{owner}: data_shape must be 1-D (the number of features), "
                             f"got {data_shape}")
        labels, data = read_libsvm(data_libsvm, data_shape[0], owner, "data_libsvm")
        self._sparse_label = False
        if label_libsvm is not None and label_libsvm != "NULL":
            _, label = read_libsvm(label_libsvm, int(numpy.prod(label_shape)), owner,
                                   "label_libsvm")
            if label.shape[0] != data.shape[0]:
                raise ValueError(f"{owner}: data_libsvm={data_libsvm!r} has "
                                 f"{data.shape[0]} lines but label_libsvm={label_libsvm!r} "
                                 f"has {label.shape[0]}")
            if label_shape == (1,):
                label = label.toarray().reshape(label.shape[0])
            else:
                label, self._sparse_label = _Rows(label), True
        else:
            label = labels
        start, end = part_range(data.shape[0], int(num_parts), int(part_index), owner)
        super().__init__(_Rows(data)[start:end], label[start:end], batch_size,
                         round_batch=round_batch, data_name=data_name,
                         label_name=label_name, owner=owner)

    def getdata(self):
        """The current batch's data (a CSRNDArray)."""
        rows, _ = self._need_batch()
        return _sparse_array(self._data[rows])

    def getlabel(self):
        """The current batch's labels (a CSRNDArray with ``label_libsvm``, else dense)."""
        if not self._sparse_label:
            return super().getlabel()
        rows, _ = self._need_batch()
        return _sparse_array(self._label[rows])
