"""MXNet's ``mxnet.ndarray.sparse``, where kbackend has no sparse storage.

Every array here is dense. The constructors of MXNet's sparse arrays (``csr_matrix``,
``row_sparse_array``, and ``zeros``/``empty``/``array`` with a sparse ``stype``) raise a
``ValueError`` that names the function and says so, so that code which imports the
module runs and code that builds sparse arrays learns why it cannot; ``stype='default'``
gives a dense array, as in MXNet. The class names exist for ``isinstance`` checks, which
no array passes.

Example:
    >>> from core.nd import sparse
    >>> sparse.zeros('default', (2, 2)).shape
    (2, 2)
"""
from __future__ import annotations

from ..ndarray import NDArray
from . import array as _dense_array
from . import empty as _dense_empty
from . import zeros as _dense_zeros

__all__ = ["BaseSparseNDArray", "CSRNDArray", "RowSparseNDArray", "array", "csr_matrix",
           "empty", "row_sparse_array", "zeros"]


class BaseSparseNDArray(NDArray):
    """MXNet's sparse base class; no kbackend array is one."""


class CSRNDArray(BaseSparseNDArray):
    """MXNet's compressed-sparse-row array; no kbackend array is one."""


class RowSparseNDArray(BaseSparseNDArray):
    """MXNet's row-sparse array; no kbackend array is one."""


def _refuse(name: str, stype: str):
    raise ValueError(f"mxnet.ndarray.sparse.{name}: {stype} storage is not supported "
                     f"(kbackend arrays are dense); build a dense array with nd.array(...) "
                     f"or convert the data with scipy's .toarray() first")


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """MXNet's CSR constructor: always raises (see the module doc)."""
    _refuse("csr_matrix", "csr")


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None):
    """MXNet's row-sparse constructor: always raises (see the module doc)."""
    _refuse("row_sparse_array", "row_sparse")


def zeros(stype: str, shape, ctx=None, dtype=None, **kwargs):
    """Zeros of storage ``stype``: dense for ``'default'``, else ValueError."""
    if stype != "default":
        _refuse("zeros", stype)
    return _dense_zeros(shape, ctx=ctx, dtype=dtype, **kwargs)


def empty(stype: str, shape, ctx=None, dtype=None):
    """An uninitialized array of storage ``stype``: dense for ``'default'``, else ValueError."""
    if stype != "default":
        _refuse("empty", stype)
    return _dense_empty(shape, ctx=ctx, dtype=dtype)


def array(source_array, ctx=None, dtype=None):
    """MXNet's ``sparse.array``: scipy sparse matrices and sparse arrays are refused."""
    if isinstance(source_array, BaseSparseNDArray) or hasattr(source_array, "tocsr"):
        _refuse("array", "sparse")
    return _dense_array(source_array, ctx=ctx, dtype=dtype)
