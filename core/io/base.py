"""The data-iterator protocol of MXNet 1.x: ``DataDesc``, ``DataBatch`` and ``DataIter``.

Every iterator in :mod:`core.io` yields :class:`DataBatch` objects and describes its
inputs with :class:`DataDesc` (name, shape, dtype, layout), which is what
``Module.bind`` takes as ``data_shapes``/``label_shapes``.

Example:
    >>> from core import nd
    >>> from core.io import DataBatch, DataDesc
    >>> DataDesc("data", (4, 3))
    DataDesc[data,(4, 3),<class 'numpy.float32'>,NCHW]
    >>> print(DataBatch(data=[nd.ones((4, 3))], label=[nd.zeros((4,))]))
    DataBatch: data shapes: [(4, 3)] label shapes: [(4,)]
"""
from __future__ import annotations

from collections import namedtuple

import numpy

__all__ = ["DataBatch", "DataDesc", "DataIter"]


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """Name, shape, dtype and layout of one input (data or label) of a batch.

    A ``(name, shape)`` tuple as far as tuple code is concerned (MXNet code unpacks it
    as ``name, shape = desc``); ``dtype`` and ``layout`` are attributes.

    Args:
        name: the input's name (the Symbol variable it feeds).
        shape: the batch's shape, batch axis included.
        dtype: the element type (default ``numpy.float32``).
        layout: axis letters; ``'N'`` marks the batch axis (default ``'NCHW'``).

    Example:
        >>> d = DataDesc("data", (8, 3, 4, 4), layout="NCHW")
        >>> name, shape = d
        >>> name, shape, DataDesc.get_batch_axis(d.layout)
        ('data', (8, 3, 4, 4), 0)
    """

    def __new__(cls, name: str, shape, dtype=numpy.float32, layout: str = "NCHW"):
        ret = super().__new__(cls, name, tuple(int(s) for s in shape))
        ret.dtype = dtype
        ret.layout = layout
        return ret

    def __repr__(self) -> str:
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    @staticmethod
    def get_batch_axis(layout: str | None) -> int:
        """The batch axis of ``layout`` (``-1`` when it has no ``'N'``; 0 for ``None``).

        Example:
            >>> DataDesc.get_batch_axis("TNC"), DataDesc.get_batch_axis(None)
            (1, 0)
        """
        if layout is None:
            return 0
        return layout.find("N")

    @staticmethod
    def get_list(shapes, types) -> list:
        """``DataDesc`` objects from ``[(name, shape)]`` and ``[(name, dtype)]`` (or None).

        Example:
            >>> DataDesc.get_list([("x", (2, 3))], [("x", "int32")])
            [DataDesc[x,(2, 3),int32,NCHW]]
        """
        if types is not None:
            type_dict = dict(types)
            return [DataDesc(x[0], x[1], type_dict[x[0]]) for x in shapes]
        return [DataDesc(x[0], x[1]) for x in shapes]


def as_data_desc(item, where: str = "data_shapes") -> DataDesc:
    """A ``DataDesc`` from a ``DataDesc`` or a ``(name, shape)`` pair (clear error else)."""
    if isinstance(item, DataDesc):
        return item
    try:
        name, shape = item
        return DataDesc(name, shape)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: each entry must be a DataDesc or a (name, shape) pair, "
                         f"got {item!r}") from None


class DataBatch:
    """One batch: lists of data and label arrays plus padding and bookkeeping.

    Args:
        data: list of NDArrays, one per data input.
        label: list of NDArrays, one per label input (or None).
        pad: how many examples at the end are padding (ignored by ``predict``).
        index: the examples' indices (a NumPy array) or None.
        bucket_key: the bucket (for ``BucketingModule``).
        provide_data: ``DataDesc`` list describing ``data`` (optional).
        provide_label: ``DataDesc`` list describing ``label`` (optional).

    Example:
        >>> from core import nd
        >>> b = DataBatch([nd.ones((2, 3))], pad=1)
        >>> b.pad, b.label is None
        (1, True)
    """

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None,
                 provide_data=None, provide_label=None):
        if data is not None and not isinstance(data, (list, tuple)):
            raise TypeError(f"DataBatch: data must be a list of NDArrays, got "
                            f"{type(data).__name__}")
        if label is not None and not isinstance(label, (list, tuple)):
            raise TypeError(f"DataBatch: label must be a list of NDArrays, got "
                            f"{type(label).__name__}")
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self) -> str:
        data_shapes = [tuple(d.shape) for d in self.data]
        label_shapes = [tuple(lab.shape) for lab in self.label] if self.label else None
        return (f"{type(self).__name__}: data shapes: {data_shapes} "
                f"label shapes: {label_shapes}")


class DataIter:
    """Base class of the data iterators: ``next()`` gives a :class:`DataBatch`.

    Subclasses implement ``iter_next`` (advance; False at the end) and the getters
    ``getdata``/``getlabel``/``getpad``/``getindex``, or override ``next`` directly;
    ``reset`` rewinds to the first batch. Iterating stops with ``StopIteration``.

    Args:
        batch_size: the number of examples per batch.

    Example:
        >>> class Three(DataIter):
        ...     def __init__(self):
        ...         super().__init__(batch_size=1)
        ...         self.i = 0
        ...     def reset(self):
        ...         self.i = 0
        ...     def iter_next(self):
        ...         self.i += 1
        ...         return self.i <= 3
        ...     def getdata(self):
        ...         from core import nd
        ...         return [nd.array([self.i])]
        ...     def getpad(self):
        ...         return 0
        >>> [int(b.data[0].asscalar()) for b in Three()]
        [1, 2, 3]
    """

    def __init__(self, batch_size: int = 0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self) -> None:
        """Rewind to the first batch."""

    def next(self) -> DataBatch:
        """The next batch; raises ``StopIteration`` at the end of the data."""
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(),
                             pad=self.getpad(), index=self.getindex())
        raise StopIteration

    def __next__(self) -> DataBatch:
        return self.next()

    def iter_next(self) -> bool:
        """Move to the next batch; False when there is none."""
        return False

    def getdata(self):
        """The current batch's data (a list of NDArrays)."""

    def getlabel(self):
        """The current batch's labels (a list of NDArrays, or None)."""

    def getindex(self):
        """The current batch's example indices (a NumPy array) or None."""

    def getpad(self) -> int:
        """How many examples at the end of the current batch are padding."""
        return 0
