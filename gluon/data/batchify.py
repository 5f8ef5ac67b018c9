"""Batchify functions: merge a list of samples into a mini-batch.

:func:`default_batchify_fn` is what :class:`~gluon.data.DataLoader` uses unless
told otherwise. Worker processes batch in NumPy instead (NDArrays are not sent
between processes) and the main process turns the marked arrays into NDArrays;
the helpers for that live here as well.

Example:
    >>> import numpy as np
    >>> from gluon.data.batchify import default_batchify_fn
    >>> data, label = default_batchify_fn([(np.ones(2, 'float32'), 1), (np.zeros(2, 'float32'), 0)])
    >>> data.shape, data.dtype, label.asnumpy().tolist()
    ((2, 2), dtype('float32'), [1, 0])
"""
from __future__ import annotations

import numpy

from core import NDArray, nd

__all__ = ["default_batchify_fn", "default_mp_batchify_fn"]


def default_batchify_fn(data: list):
    """Stack a list of samples into a batch (MXNet 1.9's ``default_batchify_fn``).

    NDArray samples are stacked with ``nd.stack``; tuple samples are batched field
    by field into a *list* of batches (as MXNet does); anything else goes through
    ``numpy.asarray`` and becomes an NDArray of the same dtype, so int labels stay
    int (int64 for Python ints), float32 NumPy data stays float32 and Python floats
    become float64.

    Args:
        data: the samples of one batch (a non-empty list).

    Returns:
        An NDArray, or a list of batches for tuple samples.

    Example:
        >>> from core import nd
        >>> from gluon.data.batchify import default_batchify_fn
        >>> default_batchify_fn([nd.ones((2,)), nd.zeros((2,))]).shape
        (2, 2)
        >>> default_batchify_fn([3, 4]).dtype
        dtype('int64')
    """
    first = data[0]
    if isinstance(first, NDArray):
        return nd.stack(*data)
    if isinstance(first, tuple):
        return [default_batchify_fn(list(field)) for field in zip(*data)]
    arr = numpy.asarray(data)
    return nd.array(arr, dtype=arr.dtype)


def default_mp_batchify_fn(data: list):
    """The batchify function MXNet uses with worker processes; here the same as
    :func:`default_batchify_fn`.

    (MXNet's version stacks into shared memory. Here workers batch in NumPy, send the
    arrays to the main process, and the main process makes the NDArrays; when a
    DataLoader is given either default function, that is what happens.)

    Args:
        data: the samples of one batch.

    Returns:
        An NDArray, or a list of batches for tuple samples.

    Example:
        >>> from gluon.data.batchify import default_mp_batchify_fn
        >>> default_mp_batchify_fn([(1, 2.0), (3, 4.0)])[1].dtype
        dtype('float64')
    """
    return default_batchify_fn(data)


class _AsNDArray:
    """A NumPy array on its way from a worker process, to become an NDArray in the main one."""

    __slots__ = ("array",)

    def __init__(self, array: numpy.ndarray):
        self.array = array

    def __reduce__(self):
        return (_AsNDArray, (self.array,))


def _numpy_batchify(data: list):
    """default_batchify_fn in NumPy, for worker processes: arrays that are to become
    NDArrays are wrapped in ``_AsNDArray``."""
    first = data[0]
    if isinstance(first, NDArray):
        return _AsNDArray(numpy.stack([d.asnumpy() for d in data]))
    if isinstance(first, tuple):
        return [_numpy_batchify(list(field)) for field in zip(*data)]
    return _AsNDArray(numpy.asarray(data))


def _map_tree(obj, leaf):
    """Apply ``leaf`` through lists, tuples (incl. named tuples) and dicts."""
    if isinstance(obj, list):
        return [_map_tree(o, leaf) for o in obj]
    if isinstance(obj, tuple):
        items = [_map_tree(o, leaf) for o in obj]
        if hasattr(obj, "_fields"):  # a named tuple
            return type(obj)(*items)
        return tuple(items)
    if isinstance(obj, dict):
        return {k: _map_tree(v, leaf) for k, v in obj.items()}
    return leaf(obj)


def _to_transport(obj):
    """Replace the NDArrays in a batch by NumPy arrays marked to be NDArrays again."""
    return _map_tree(obj, lambda o: _AsNDArray(o.asnumpy()) if isinstance(o, NDArray) else o)


def _from_transport(obj):
    """Turn the marked NumPy arrays of a batch from a worker into NDArrays."""
    if isinstance(obj, _AsNDArray):
        return nd.array(obj.array, dtype=obj.array.dtype)
    return _map_tree(obj, lambda o: nd.array(o.array, dtype=o.array.dtype)
                     if isinstance(o, _AsNDArray) else o)
