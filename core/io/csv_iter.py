"""``CSVIter``: batches from CSV files (MXNet's ``mx.io.CSVIter``).

Each row of ``data_csv`` is one example, reshaped to ``data_shape``; each row of
``label_csv`` its label, reshaped to ``label_shape`` (all labels are 0 without a label
file). A directory stands for all its files, in name order. The files are read into
memory when the iterator is made. Batching follows MXNet's C++ iterators (see
:mod:`core.io.batch_loader`): ``round_batch`` wraps the last batch around.

Example:
    >>> import os, tempfile
    >>> from core.io import CSVIter
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "x.csv"), "w") as f:
    ...     _ = f.write("1,2\\n3,4\\n5,6\\n")
    >>> it = CSVIter(data_csv=os.path.join(d, "x.csv"), data_shape=(2,), batch_size=2)
    >>> [(b.data[0].asnumpy().tolist(), b.pad) for b in it]
    [([[1.0, 2.0], [3.0, 4.0]], 0), ([[5.0, 6.0], [1.0, 2.0]], 1)]
"""
from __future__ import annotations

import numpy

from .batch_loader import MXDataIter, file_list

__all__ = ["CSVIter"]

_DTYPES = {"float32": numpy.float32, "int32": numpy.int32, "int64": numpy.int64}


def _shape(value, owner, field) -> tuple:
    if isinstance(value, (int, numpy.integer)):
        value = (int(value),)
    try:
        shape = tuple(int(s) for s in value)
    except (TypeError, ValueError):
        raise ValueError(f"{owner}: {field} must be a tuple of ints, got {value!r}") from None
    if not shape or any(s < 1 for s in shape):
        raise ValueError(f"{owner}: {field} must be a non-empty tuple of positive ints, "
                         f"got {shape}")
    return shape


def read_csv(path: str, shape: tuple, dtype, owner: str, field: str):
    """The rows of the CSV file(s) at ``path`` as an array ``(rows, *shape)``."""
    size = int(numpy.prod(shape))
    rows = []
    for fname in file_list(path, owner, field):
        with open(fname, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                cells = line.split(",")
                if len(cells) != size:
                    raise ValueError(
                        f"{owner}: {fname}:{lineno}: {field} row has {len(cells)} values but "
                        f"the shape {shape} needs {size}")
                try:
                    rows.append(numpy.array(cells, dtype=numpy.float64 if dtype ==
                                            numpy.float32 else dtype))
                except ValueError:
                    raise ValueError(f"{owner}: {fname}:{lineno}: {field} row holds a value "
                                     f"that is not a number: {line[:80]!r}") from None
    if not rows:
        raise ValueError(f"{owner}: {field}={path!r} holds no rows")
    return numpy.stack(rows).astype(dtype).reshape((len(rows),) + shape)


class CSVIter(MXDataIter):
    """Iterates over CSV files in batches (MXNet's ``mx.io.CSVIter``).

    Args:
        data_csv: a CSV file, or a directory of them.
        data_shape: the shape of one example (a row has ``prod(data_shape)`` values).
        label_csv: the labels' CSV file(s), or None for all-zero labels.
        label_shape: the shape of one label (default ``(1,)``: a batch's label is
            ``(batch_size,)``).
        batch_size: examples per batch.
        round_batch: wrap the last batch around (default True).
        dtype: ``'float32'`` (default), ``'int32'`` or ``'int64'``, for data and labels.
        data_name: the data input's name (default ``'data'``).
        label_name: the label input's name (default ``'softmax_label'``).
        **kwargs: MXNet's other iterator options (``prefetch_buffer``, ``ctx``, ...),
            accepted and ignored as MXNet ignores unknown ones.

    Raises:
        FileNotFoundError: a file is missing (the message names it and the field).
        ValueError: a row's length does not fit the shape, a value is not a number,
            or the data and label files have different numbers of rows.
    """

    def __init__(self, data_csv, data_shape, label_csv=None, label_shape=(1,),
                 batch_size: int = 1, round_batch: bool = True, dtype=None,
                 data_name: str = "data", label_name: str = "softmax_label", **kwargs):
        owner = "CSVIter"
        dtype = "float32" if dtype is None else numpy.dtype(dtype).name
        if dtype not in _DTYPES:
            raise ValueError(f"{owner}: dtype must be one of {sorted(_DTYPES)}, got {dtype!r}")
        np_dtype = _DTYPES[dtype]
        data_shape = _shape(data_shape, owner, "data_shape")
        label_shape = _shape(label_shape, owner, "label_shape")
        data = read_csv(data_csv, data_shape, np_dtype, owner, "data_csv")
        if label_csv is None or label_csv == "NULL":
            label = numpy.zeros((len(data),) + label_shape, np_dtype)
        else:
            label = read_csv(label_csv, label_shape, np_dtype, owner, "label_csv")
            if len(label) != len(data):
                raise ValueError(f"{owner}: data_csv={data_csv!r} has {len(data)} rows but "
                                 f"label_csv={label_csv!r} has {len(label)}")
        if label_shape == (1,):
            label = label.reshape(len(label))
        super().__init__(data, label, batch_size, round_batch=round_batch,
                         data_name=data_name, label_name=label_name, owner=owner)
