"""Sparse storage layouts as raw arrays: conversions to and from dense, and format checks.

The functions here work on raw arrays of an array module ``xp`` (numpy or cupy), never
on NDArrays, so the array classes (``core.sparse.arrays``) and the sparse operators
(``core.sparse.ops``) share one implementation of each layout:

- ``row_sparse``: ``values`` of shape ``(k,) + shape[1:]`` and ``indices`` ``(k,)`` int64,
  sorted unique row ids: ``dense[indices[i]] = values[i]``, other rows zero.
- ``csr`` (2-D only): ``values`` ``(nnz,)``, ``indptr`` ``(rows + 1,)`` int64 and
  ``indices`` ``(nnz,)`` int64 column ids, sorted within each row.

Example:
    >>> import numpy
    >>> from core.sparse import storage
    >>> v, idx = storage.dense_to_rsp(numpy, numpy.array([[0., 0.], [1., 2.]]))
    >>> idx.tolist(), v.tolist()
    ([1], [[1.0, 2.0]])
"""
from __future__ import annotations

import numpy

from ..ops.dispatch import MXNetError

__all__ = ["AUX_DTYPE", "SparseFormatError", "check_csr", "check_rsp", "csr_to_dense", "dense_to_csr",
           "dense_to_rsp", "rsp_to_dense"]

AUX_DTYPE = numpy.dtype(numpy.int64)


def dense_to_rsp(xp, dense):
    """``(values, indices)`` of the rows of ``dense`` that hold a nonzero."""
    if dense.ndim == 0:
        raise ValueError("cast_storage: a row_sparse array needs at least 1 dimension, "
                         "got a 0-d array")
    flat = dense.reshape(dense.shape[0], -1) if dense.shape[0] else dense.reshape(0, 1)
    keep = xp.flatnonzero((flat != 0).any(axis=1)) if flat.shape[1] else \
        xp.zeros((0,), AUX_DTYPE)
    indices = keep.astype(AUX_DTYPE)
    return xp.ascontiguousarray(dense[indices]), indices


def rsp_to_dense(xp, shape, dtype, values, indices):
    """The dense array of a row_sparse layout."""
    out = xp.zeros(shape, dtype)
    if indices.shape[0]:
        out[indices] = values
    return out


def dense_to_csr(xp, dense):
    """``(values, indptr, indices)`` of the nonzeros of a 2-D ``dense``, row by row."""
    if dense.ndim != 2:
        raise ValueError(f"cast_storage: a csr array must be 2-D, got shape {dense.shape}")
    rows, cols = xp.nonzero(dense)
    counts = xp.bincount(rows, minlength=dense.shape[0]) if rows.shape[0] else \
        xp.zeros((dense.shape[0],), AUX_DTYPE)
    indptr = xp.zeros((dense.shape[0] + 1,), AUX_DTYPE)
    indptr[1:] = xp.cumsum(counts)
    return xp.ascontiguousarray(dense[rows, cols]), indptr, cols.astype(AUX_DTYPE)


def csr_to_dense(xp, shape, dtype, values, indptr, indices):
    """The dense array of a csr layout (duplicate entries add, as scipy's do)."""
    out = xp.zeros(shape, dtype)
    if values.shape[0]:
        rows = xp.repeat(xp.arange(shape[0], dtype=AUX_DTYPE), xp.diff(indptr))
        if hasattr(xp, "add") and hasattr(xp.add, "at"):
            xp.add.at(out, (rows, indices), values)
        else:  # pragma: no cover - array modules without ufunc.at
            out[rows, indices] = values
    return out


class SparseFormatError(ValueError, MXNetError):
    """An invalid sparse layout (``check_format``): a ValueError, and the MXNetError
    MXNet raises."""


def _fail(fn: str, msg: str):
    raise SparseFormatError(f"{fn}: {msg}")


def check_rsp(shape, values, indices, full_check: bool = True) -> None:
    """Check a row_sparse layout (MXNet's ``check_format``); ValueError names the fault."""
    fn = "check_format(row_sparse)"
    if indices.ndim != 1:
        _fail(fn, f"indices must be 1-D, got shape {tuple(indices.shape)}")
    if values.shape[:1] != indices.shape or tuple(values.shape[1:]) != tuple(shape[1:]):
        _fail(fn, f"data has shape {tuple(values.shape)} but {indices.shape[0]} indices and "
                  f"shape {tuple(shape)} need ({indices.shape[0]},) + {tuple(shape[1:])}")
    if indices.dtype.kind not in "iu":
        _fail(fn, f"indices must be integers, got {indices.dtype}")
    if not full_check or not indices.shape[0]:
        return
    idx = numpy.asarray(indices.get() if hasattr(indices, "get") else indices)
    if idx.min() < 0 or idx.max() >= shape[0]:
        _fail(fn, f"row indices must lie in [0, {shape[0]}), got {idx.min()}..{idx.max()}")
    if (numpy.diff(idx) <= 0).any():
        bad = int(numpy.flatnonzero(numpy.diff(idx) <= 0)[0])
        _fail(fn, f"row indices must be sorted and unique: indices[{bad}]={idx[bad]}, "
                  f"indices[{bad + 1}]={idx[bad + 1]}")


def check_csr(shape, values, indptr, indices, full_check: bool = True) -> None:
    """Check a csr layout (MXNet's ``check_format``); ValueError names the fault."""
    fn = "check_format(csr)"
    if len(shape) != 2:
        _fail(fn, f"a csr array must be 2-D, got shape {tuple(shape)}")
    if indptr.ndim != 1 or indptr.shape[0] != shape[0] + 1:
        _fail(fn, f"indptr must have shape ({shape[0] + 1},) for {shape[0]} rows, got "
                  f"{tuple(indptr.shape)}")
    if indices.ndim != 1 or values.ndim != 1 or indices.shape != values.shape:
        _fail(fn, f"data and indices must be 1-D of one length, got {tuple(values.shape)} "
                  f"and {tuple(indices.shape)}")
    if not full_check:
        return
    ptr = numpy.asarray(indptr.get() if hasattr(indptr, "get") else indptr)
    idx = numpy.asarray(indices.get() if hasattr(indices, "get") else indices)
    if ptr[0] != 0 or ptr[-1] != idx.shape[0]:
        _fail(fn, f"indptr must start at 0 and end at nnz={idx.shape[0]}, got "
                  f"indptr[0]={ptr[0]}, indptr[-1]={ptr[-1]}")
    if (numpy.diff(ptr) < 0).any():
        bad = int(numpy.flatnonzero(numpy.diff(ptr) < 0)[0])
        _fail(fn, f"indptr must not decrease: indptr[{bad}]={ptr[bad]}, "
                  f"indptr[{bad + 1}]={ptr[bad + 1]}")
    if idx.shape[0] and (idx.min() < 0 or idx.max() >= shape[1]):
        _fail(fn, f"column indices must lie in [0, {shape[1]}), got {idx.min()}..{idx.max()}")
    if idx.shape[0] > 1:
        inside = numpy.ones(idx.shape[0] - 1, bool)  # pairs (j, j + 1) within one row
        starts = ptr[1:-1]
        starts = starts[(starts > 0) & (starts < idx.shape[0])]
        inside[starts - 1] = False
        bad = numpy.flatnonzero(inside & (numpy.diff(idx) <= 0))
        if bad.shape[0]:
            r = int(numpy.searchsorted(ptr, bad[0], side="right") - 1)
            _fail(fn, f"the column indices of row {r} must be sorted and unique, got "
                      f"{idx[ptr[r]:ptr[r + 1]].tolist()[:8]}")
