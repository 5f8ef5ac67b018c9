"""MXNet 1.x's ``mx.contrib.io``: a Gluon ``DataLoader`` as a Module-API ``DataIter``.

Example:
    >>> from core import nd
    >>> batches = [(nd.ones((2, 3)), nd.zeros((2,))), (nd.ones((1, 3)), nd.zeros((1,)))]
    >>> it = DataLoaderIter(batches)
    >>> [(b.data[0].shape, b.pad) for b in it]
    [((2, 3), 0), ((2, 3), 1)]
"""
from __future__ import annotations

from ..io.base import DataDesc, DataIter

__all__ = ["DataLoaderIter"]


class DataLoaderIter(DataIter):
    """Iterates a ``gluon.data.DataLoader`` (or any re-iterable of ``(data, label)``).

    The first batch fixes ``batch_size``, ``provide_data`` and ``provide_label``; a shorter
    last batch is padded at the end to ``batch_size`` (``pad`` says by how many rows,
    which hold unspecified values, as in MXNet).

    Args:
        loader: the DataLoader; iterating it yields ``(data, label)`` NDArray pairs.
        data_name: the data input's name.
        label_name: the label input's name.
        dtype: the type both are cast to (``'float32'`` or ``'float16'``).
    """

    def __init__(self, loader, data_name: str = "data", label_name: str = "softmax_label",
                 dtype: str = "float32"):
        super().__init__()
        self._loader = loader
        first = next(iter(loader), None)
        if first is None:
            raise ValueError("DataLoaderIter: the loader yields no batch; it needs at least "
                             "one (data, label) pair to learn the shapes")
        try:
            data, label = first
        except (TypeError, ValueError):
            raise ValueError("DataLoaderIter: each batch of the loader must be a (data, label) "
                             f"pair, got {type(first).__name__}") from None
        self.batch_size = data.shape[0]
        self.dtype = dtype
        self.provide_data = [DataDesc(data_name, data.shape, dtype)]
        self.provide_label = [DataDesc(label_name, label.shape, dtype)]
        self._current_batch = None
        self.reset()

    def reset(self) -> None:
        """Start again at the loader's first batch."""
        self._iter = iter(self._loader)

    def iter_next(self) -> bool:
        """Take the loader's next batch; False at its end."""
        try:
            self._current_batch = next(self._iter)
        except StopIteration:
            self._current_batch = None
        return self._current_batch is not None

    def _padded(self, i: int) -> list:
        from .. import nd

        arr = self._current_batch[i].astype(self.dtype)
        if not self.getpad():
            return [arr]
        ret = nd.empty((self.batch_size,) + tuple(arr.shape[1:]), dtype=self.dtype,
                       ctx=arr.context)
        ret[:arr.shape[0]] = arr
        return [ret]

    def getdata(self) -> list:
        """The current batch's data, padded to ``batch_size``."""
        return self._padded(0)

    def getlabel(self) -> list:
        """The current batch's labels, padded to ``batch_size``."""
        return self._padded(1)

    def getpad(self) -> int:
        """How many rows at the end of the current batch are padding."""
        return self.batch_size - self._current_batch[0].shape[0]

    def getindex(self):
        """None (a DataLoader does not report example indices)."""
        return
