"""Sparse storage (MXNet 1.x's ``row_sparse`` and ``csr``): the arrays, their
constructors and the operators MXNet computes sparsely.

- :mod:`core.sparse.storage`: the layouts as raw arrays (conversions, format checks);
- :mod:`core.sparse.arrays`: :class:`RowSparseNDArray`, :class:`CSRNDArray`;
- :mod:`core.sparse.create`: ``csr_matrix``, ``row_sparse_array``, ``zeros``, ``empty``,
  ``array``, ``cast_storage``;
- :mod:`core.sparse.ops`: ``dot``, ``elemwise_*``, ``retain``, ``add_n``, ...

``core.nd.sparse`` (MXNet's ``mx.nd.sparse``) is the public namespace over these.
See docs/sparse.md.

Example:
    >>> from core import nd
    >>> x = nd.sparse.csr_matrix(([1.0, 2.0], [0, 1], [0, 1, 2]), shape=(2, 2))
    >>> nd.dot(x, nd.ones((2, 1))).asnumpy().tolist()
    [[1.0], [2.0]]
"""
from ..ndarray import _METHODS
from .arrays import (
    STYPES,
    BaseSparseNDArray,
    CSRNDArray,
    NotSupportedForSparseNDArray,
    RowSparseNDArray,
)
from .create import array, cast_storage, csr_matrix, empty, row_sparse_array, zeros
from .ops import (
    add,
    add_n,
    divide,
    dot,
    elemwise_add,
    elemwise_div,
    elemwise_mul,
    elemwise_sub,
    multiply,
    retain,
    slice_rows,
    square_sum,
    subtract,
    unary,
    where,
    zeros_like,
)
from .unary_names import ZERO_PRESERVING

__all__ = ["STYPES", "BaseSparseNDArray", "CSRNDArray", "NotSupportedForSparseNDArray",
           "RowSparseNDArray", "add", "add_n", "array", "cast_storage", "csr_matrix",
           "divide", "dot", "elemwise_add", "elemwise_div", "elemwise_mul", "elemwise_sub",
           "empty", "multiply", "retain", "row_sparse_array", "slice_rows", "square_sum",
           "subtract", "unary", "where", "zeros", "zeros_like"]


def _fluent(name):
    def method(self, *args, **kwargs):
        return unary(name, self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"``{name}`` on the stored values (storage type kept; MXNet's rule)."
    return method


_METHOD_NAMES = {m for m, _ in _METHODS}
for _name in ZERO_PRESERVING:
    if _name in _METHOD_NAMES:  # NDArray's fluent methods (bound once core.ops loads)
        setattr(BaseSparseNDArray, _name, _fluent(_name))


def _dot_method(self, rhs, transpose_a=False, transpose_b=False, **kwargs):
    """``nd.dot(self, rhs, ...)`` with MXNet's sparse storage rules."""
    return dot(self, rhs, transpose_a, transpose_b, **kwargs)


def _zeros_like_method(self, **kwargs):
    """Zeros of this array's shape and storage type."""
    return zeros_like(self, **kwargs)


BaseSparseNDArray.dot = _dot_method
BaseSparseNDArray.zeros_like = _zeros_like_method
