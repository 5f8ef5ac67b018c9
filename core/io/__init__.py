"""MXNet 1.x's data iterators (``mx.io``): the protocol and the iterators built on it.

- :class:`DataDesc`, :class:`DataBatch`, :class:`DataIter`: the protocol (``base``);
- :class:`NDArrayIter`: in-memory arrays; :class:`ResizeIter`,
  :class:`PrefetchingIter`: wrappers;
- :class:`CSVIter`, :class:`LibSVMIter`, :class:`MNISTIter`: files, batched as MXNet's
  C++ iterators batch (:class:`MXDataIter`);
- ``ImageRecordIter``, ``ImageRecordUInt8Iter``, ``ImageDetRecordIter``: RecordIO image
  files, in :mod:`core.io.image_record`, imported on first use (it needs Pillow, which
  ``import core.io`` does not import).

Example:
    >>> import numpy as np
    >>> from core import io
    >>> it = io.NDArrayIter(np.zeros((6, 2)), np.arange(6), batch_size=4,
    ...                     last_batch_handle="discard")
    >>> [b.data[0].shape for b in it]
    [(4, 2)]
"""
from __future__ import annotations

import importlib

from .base import DataBatch, DataDesc, DataIter
from .batch_loader import MXDataIter
from .csv_iter import CSVIter
from .libsvm_iter import LibSVMIter
from .mnist_iter import MNISTIter
from .ndarray_iter import NDArrayIter
from .wrappers import PrefetchingIter, ResizeIter

__all__ = ["CSVIter", "DataBatch", "DataDesc", "DataIter", "ImageDetRecordIter",
           "ImageRecordIter", "ImageRecordUInt8Iter", "LibSVMIter", "MNISTIter", "MXDataIter",
           "NDArrayIter", "PrefetchingIter", "ResizeIter"]

_LAZY = {"ImageRecordIter": "core.io.image_record",
         "ImageRecordUInt8Iter": "core.io.image_record",
         "ImageDetRecordIter": "core.io.image_record"}


def __getattr__(name: str):
    """The RecordIO image iterators, imported from ``core.io.image_record`` on first use."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'core.io' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
