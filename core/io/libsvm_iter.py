"""``LibSVMIter``: batches from LibSVM text files (MXNet's ``mx.io.LibSVMIter``).

A line is ``<label> <index>:<value> <index>:<value> ...`` with zero-based feature
indices. MXNet gives the data as a ``CSRNDArray``; here the batches are dense
NDArrays ``(batch_size, *data_shape)`` with the same values (this project has no
sparse storage). With ``label_libsvm`` the labels are read from that file's
features (dense ``(batch_size, *label_shape)``); otherwise each line's leading label
is used (``(batch_size,)``).

Example:
    >>> import os, tempfile
    >>> from core.io import LibSVMIter
    >>> path = os.path.join(tempfile.mkdtemp(), "d.libsvm")
    >>> with open(path, "w") as f:
    ...     _ = f.write("1 0:0.5 2:1.5\\n0 1:2\\n")
    >>> b = next(LibSVMIter(data_libsvm=path, data_shape=(3,), batch_size=2))
    >>> b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist()
    ([[0.5, 0.0, 1.5], [0.0, 2.0, 0.0]], [1.0, 0.0])
"""
from __future__ import annotations

import numpy

from .batch_loader import MXDataIter, file_list, part_range
from .csv_iter import _shape

__all__ = ["LibSVMIter"]


def read_libsvm(path: str, dim: int, owner: str, field: str):
    """``(labels, dense rows)`` of the LibSVM file(s) at ``path``, ``dim`` features."""
    labels, rows = [], []
    for fname in file_list(path, owner, field):
        with open(fname, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                tokens = line.split()
                if not tokens or tokens[0].startswith("#"):
                    continue
                row = numpy.zeros(dim, numpy.float32)
                try:
                    labels.append(float(tokens[0]))
                    for tok in tokens[1:]:
                        key, _, value = tok.partition(":")
                        idx = int(key)
                        if not 0 <= idx < dim:
                            raise IndexError(idx)
                        row[idx] = float(value)
                except IndexError as e:
                    raise ValueError(f"{owner}: {fname}:{lineno}: {field} feature index "
                                     f"{e.args[0]} is outside [0, {dim}) (the shape's size)"
                                     ) from None
                except ValueError:
                    raise ValueError(f"{owner}: {fname}:{lineno}: {field} line is not "
                                     f"'<label> <index>:<value> ...': {line.strip()[:80]!r}"
                                     ) from None
                rows.append(row)
    if not rows:
        raise ValueError(f"{owner}: {field}={path!r} holds no examples")
    return numpy.array(labels, numpy.float32), numpy.stack(rows)


class LibSVMIter(MXDataIter):
    """Iterates over LibSVM files in batches (dense output; see the module).

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
        ValueError: a malformed line or an out-of-range feature index (the message
            names the file and line), or data and label files of different lengths.
    """

    def __init__(self, data_libsvm, data_shape, label_libsvm=None, label_shape=(1,),
                 batch_size: int = 1, round_batch: bool = True, num_parts: int = 1,
                 part_index: int = 0, data_name: str = "data",
                 label_name: str = "softmax_label", **kwargs):
        owner = "LibSVMIter"
        data_shape = _shape(data_shape, owner, "data_shape")
        label_shape = _shape(label_shape, owner, "label_shape")
        labels, data = read_libsvm(data_libsvm, int(numpy.prod(data_shape)), owner,
                                   "data_libsvm")
        data = data.reshape((len(data),) + data_shape)
        if label_libsvm is not None and label_libsvm != "NULL":
            _, label = read_libsvm(label_libsvm, int(numpy.prod(label_shape)), owner,
                                   "label_libsvm")
            if len(label) != len(data):
                raise ValueError(f"{owner}: data_libsvm={data_libsvm!r} has {len(data)} lines "
                                 f"but label_libsvm={label_libsvm!r} has {len(label)}")
            label = label.reshape((len(label),) + label_shape)
            if label_shape == (1,):
                label = label.reshape(len(label))
        else:
            label = labels
        start, end = part_range(len(data), int(num_parts), int(part_index), owner)
        super().__init__(data[start:end], label[start:end], batch_size,
                         round_batch=round_batch, data_name=data_name,
                         label_name=label_name, owner=owner)
