"""MXNet's ``mxnet.ndarray.ndarray`` module: the NDArray class and the module-level names
MXNet 1.x code imports from it (storage-type codes, the gradient-request codes,
``py_slice``) plus the creation functions of ``core.nd``.

The storage-type table lists MXNet's codes: code reads them
(``_STORAGE_TYPE_STR_TO_ID['row_sparse']``) and ``sym.var(stype=...)`` writes them into
variables' ``__storage_type__`` attributes; the sparse arrays are ``core.sparse``'s
(``mxnet.ndarray.sparse``).

Example:
    >>> from core.nd import ndarray
    >>> ndarray._STORAGE_TYPE_STR_TO_ID['default'], ndarray.NDArray.__name__
    (0, 'NDArray')
"""
from __future__ import annotations

import builtins

from ..ndarray import NDArray
from . import arange, array, empty, full, ones, waitall, zeros

__all__ = ["NDArray", "arange", "array", "empty", "full", "ones", "waitall", "zeros"]

_STORAGE_TYPE_UNDEFINED = -1
_STORAGE_TYPE_DEFAULT = 0
_STORAGE_TYPE_ROW_SPARSE = 1
_STORAGE_TYPE_CSR = 2
_STORAGE_TYPE_STR_TO_ID = {"undefined": _STORAGE_TYPE_UNDEFINED,
                           "default": _STORAGE_TYPE_DEFAULT,
                           "row_sparse": _STORAGE_TYPE_ROW_SPARSE, "csr": _STORAGE_TYPE_CSR}
_STORAGE_TYPE_ID_TO_STR = {v: k for k, v in _STORAGE_TYPE_STR_TO_ID.items()}
_GRAD_REQ_MAP = {"null": 0, "write": 1, "add": 3}
py_slice = builtins.slice
