"""MXNet 1.x's ``mxnet.ndarray.sparse``: sparse arrays and the operators on them.

The classes, constructors and sparse operators live in ``core.sparse``; this module is
MXNet's namespace over them: ``RowSparseNDArray``, ``CSRNDArray``, ``csr_matrix``,
``row_sparse_array``, ``zeros``/``empty``/``array`` of a storage type, ``add``,
``subtract``, ``multiply``, ``divide``, ``dot``, ``retain``, ``elemwise_add``, ...
Any other ``core.nd`` operator is reachable here too (``nd.sparse.sum``), with the same
storage rules as in ``core.nd``. See docs/sparse.md.

Example:
    >>> from core.nd import sparse
    >>> sparse.zeros('default', (2, 2)).shape
    (2, 2)
    >>> a = sparse.row_sparse_array(([[1.0, 2.0]], [1]), shape=(3, 2))
    >>> sparse.retain(a, [0]).asnumpy().tolist()
    [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]
"""
from __future__ import annotations

from ..sparse import (
    BaseSparseNDArray,
    CSRNDArray,
    NotSupportedForSparseNDArray,
    RowSparseNDArray,
    add,
    add_n,
    array,
    cast_storage,
    csr_matrix,
    divide,
    dot,
    elemwise_add,
    elemwise_div,
    elemwise_mul,
    elemwise_sub,
    empty,
    multiply,
    retain,
    row_sparse_array,
    square_sum,
    subtract,
    where,
    zeros,
    zeros_like,
)

__all__ = ["BaseSparseNDArray", "CSRNDArray", "NotSupportedForSparseNDArray",
           "RowSparseNDArray", "add", "add_n", "array", "cast_storage", "csr_matrix",
           "divide", "dot", "elemwise_add", "elemwise_div", "elemwise_mul", "elemwise_sub",
           "empty", "multiply", "retain", "row_sparse_array", "square_sum", "subtract",
           "where", "zeros", "zeros_like"]

_square_sum = square_sum
sparse_retain = retain
_sparse_retain = retain


def __getattr__(name: str):
    # MXNet generates every operator into nd.sparse; the others are core.nd's.
    from .. import nd

    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(nd, name)
    except AttributeError:
        raise AttributeError(f"module 'mxnet.ndarray.sparse' has no attribute {name!r}") \
            from None
