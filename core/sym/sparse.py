"""MXNet 1.x's ``sym.sparse``: every operator on Symbols, as in ``core.sym`` (a graph
computes on dense values; ``sym.var(..., stype=...)`` records the storage type of an
input, and sparse arrays fed to an executor are read densely).

Example:
    >>> from core import sym
    >>> y = sym.sparse.dot(sym.var("x", stype="csr"), sym.var("w", stype="row_sparse"))
    >>> y.infer_shape(x=(2, 5), w=(5, 3))[1]
    [(2, 3)]
"""
from .. import symbol as _symbol
from . import _internal  # noqa: F401 - sym.sparse._internal, as in MXNet

globals().update(_symbol.operator_functions())

retain = _symbol.operator_functions()["_sparse_retain"]  # MXNet's sym.sparse.retain
