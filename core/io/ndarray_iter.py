"""``NDArrayIter``: batches over in-memory arrays (MXNet's ``mx.io.NDArrayIter``).

Data and labels are NDArrays, NumPy arrays (or anything ``numpy.asarray`` takes, an
``h5py.Dataset`` included: it is read into memory), a list of them, or a dict from
name to array. A single array is named ``data_name`` / ``label_name``; a list of
``k`` arrays is named ``_0_<name>``, ``_1_<name>``, ...; dict keys are used as they
are, and the inputs are provided sorted by name (MXNet's order).

Data and labels may also be csr (a ``CSRNDArray`` or a scipy sparse matrix): their
batches are ``CSRNDArray``s, and, as in MXNet, only ``last_batch_handle='discard'`` is
supported with them (``NotImplementedError`` otherwise).

The last, incomplete batch is handled by ``last_batch_handle``:

- ``'pad'`` (default): filled up with examples from the start; ``batch.pad`` says how
  many, and ``Module.predict`` drops them;
- ``'discard'``: dropped;
- ``'roll_over'``: kept back and completed with the first examples of the next epoch.

Shuffling (``shuffle=True``) reorders the examples on every ``reset()`` with NumPy's
global random generator (``numpy.random.shuffle``), as MXNet does, so the same
``numpy.random.seed`` gives MXNet's order.

Example:
    >>> import numpy as np
    >>> from core.io import NDArrayIter
    >>> it = NDArrayIter(np.arange(10).reshape(5, 2), np.arange(5), batch_size=2)
    >>> [(b.data[0].shape, b.pad) for b in it]
    [((2, 2), 0), ((2, 2), 0), ((2, 2), 1)]
    >>> it.provide_label
    [DataDesc[softmax_label,(2,),<class 'numpy.float32'>,NCHW]]
"""
from __future__ import annotations

import numpy

from ..context import current_context
from ..ndarray import NDArray, array
from .base import DataBatch, DataDesc, DataIter

__all__ = ["NDArrayIter"]

_HANDLES = ("pad", "discard", "roll_over")


class _Source:
    """One named input: its values as NumPy (for slicing), dtype and context."""

    sparse = False

    def __init__(self, name, values, ctx, dtype):
        self.name, self.values, self.ctx, self.dtype = name, values, ctx, dtype

    def batch(self, rows, axis):
        """The examples ``rows`` (a slice or an index array) along ``axis``, as an NDArray."""
        if isinstance(rows, slice):
            part = self.values[(slice(None),) * axis + (rows,)]
        else:
            part = numpy.take(self.values, rows, axis=axis)
        return array(part, ctx=self.ctx, dtype=self.dtype)

    def take(self, idx, axis):
        """The values reordered by ``idx`` along ``axis`` (shuffling)."""
        self.values = numpy.take(self.values, idx, axis=axis)


class _CSRSource(_Source):
    """A csr input (a CSRNDArray or a scipy sparse matrix), held as a scipy csr matrix:
    batches are CSRNDArrays of its rows."""

    sparse = True

    def batch(self, rows, axis):
        from ..sparse import array as sparse_array

        return sparse_array(self.values[rows], ctx=self.ctx, dtype=self.dtype)

    def take(self, idx, axis):
        self.values = self.values[idx]


def _is_csr(value) -> bool:
    return getattr(value, "stype", None) == "csr" or (
        type(value).__module__.startswith("scipy.sparse") and hasattr(value, "tocsr"))


def _canonical(what: str, data, default_name: str, allow_empty: bool) -> list:
    """``[(name, NDArray-like source)]`` sorted by name, from an array, list or dict."""
    if data is None:
        if not allow_empty:
            raise ValueError(f"NDArrayIter: {what} must be given (got None)")
        return []
    if isinstance(data, (list, tuple)):
        if not data and not allow_empty:
            raise ValueError(f"NDArrayIter: {what} is an empty list")
        if len(data) == 1:
            data = {default_name: data[0]}
        else:
            data = {f"_{i}_{default_name}": d for i, d in enumerate(data)}
    elif not isinstance(data, dict):
        data = {default_name: data}
    out = []
    for name, value in sorted(data.items()):
        if _is_csr(value):
            scipy_csr = value.asscipy() if isinstance(value, NDArray) else value.tocsr()
            ctx = value.context if isinstance(value, NDArray) else current_context()
            out.append(_CSRSource(name, scipy_csr, ctx, scipy_csr.dtype))
            continue
        if isinstance(value, NDArray):
            out.append(_Source(name, value.asnumpy(), value.context, value.dtype))
            continue
        try:
            values = numpy.asarray(value[()] if type(value).__module__.startswith("h5py")
                                   else value)
        except Exception as e:  # noqa: BLE001 - any conversion failure is the user's input
            raise TypeError(f"NDArrayIter: {what} {name!r} must be an NDArray, NumPy array or "
                            f"array-like, got {type(value).__name__} ({e})") from None
        if values.dtype.kind not in "biuf":
            raise TypeError(f"NDArrayIter: {what} {name!r} has dtype {values.dtype}; "
                            "numeric arrays only")
        converted = array(values)  # MXNet's nd.array: float32 unless an NDArray
        out.append(_Source(name, converted.asnumpy(), current_context(), converted.dtype))
    return out


class NDArrayIter(DataIter):
    """Iterates over in-memory arrays in batches (MXNet's ``mx.io.NDArrayIter``).

    Args:
        data: an array, a list of arrays or a dict ``{name: array}``.
        label: the same for labels (optional).
        batch_size: examples per batch.
        shuffle: reorder the examples on every ``reset()``.
        last_batch_handle: ``'pad'``, ``'discard'`` or ``'roll_over'`` (see the module).
        data_name: the name of a single data array (default ``'data'``).
        label_name: the name of a single label array (default ``'softmax_label'``).
        layout: the axis letters of the data; ``'N'`` is the batch axis.

    Raises:
        ValueError: for an unknown ``last_batch_handle``, arrays whose numbers of
            examples differ, a ``batch_size`` below 1, or no data.

    Example:
        >>> import numpy as np
        >>> it = NDArrayIter({"a": np.zeros((4, 3)), "b": np.ones((4, 1))}, batch_size=3,
        ...                  last_batch_handle="discard")
        >>> [d.name for d in it.provide_data], len(list(it))
        (['a', 'b'], 1)
    """

    def __init__(self, data, label=None, batch_size: int = 1, shuffle: bool = False,
                 last_batch_handle: str = "pad", data_name: str = "data",
                 label_name: str = "softmax_label", layout: str = "NCHW"):
        super().__init__(batch_size)
        if last_batch_handle not in _HANDLES:
            raise ValueError(f"NDArrayIter: last_batch_handle must be one of {_HANDLES}, got "
                             f"{last_batch_handle!r}")
        if int(batch_size) < 1:
            raise ValueError(f"NDArrayIter: batch_size must be at least 1, got {batch_size}")
        self.batch_size = int(batch_size)
        self.layout = layout
        self._axis = max(layout.find("N"), 0) if layout else 0
        self.data = _canonical("data", data, data_name, allow_empty=False)
        self.label = _canonical("label", label, label_name, allow_empty=True)
        if any(s.sparse for s in self.data + self.label) and last_batch_handle != "discard":
            raise NotImplementedError("NDArrayIter: csr data or labels (CSRNDArray or scipy "
                                      "csr_matrix) need last_batch_handle='discard', got "
                                      f"{last_batch_handle!r}")
        sizes = {s.name: s.values.shape[self._axis] if len(s.values.shape) > self._axis
                 else None
                 for s in self.data + self.label}
        first = self.data[0]
        self.num_data = sizes[first.name]
        if self.num_data is None:
            raise ValueError(f"NDArrayIter: data {first.name!r} of shape "
                             f"{first.values.shape} has no batch axis {self._axis} "
                             f"(layout {layout!r})")
        # MXNet counts the examples of the first data array; an array with more is read
        # at the same indices (its extra examples are never used), one with fewer fails.
        bad = {k: v for k, v in sizes.items() if v is None or v < self.num_data}
        if bad:
            raise ValueError(
                f"NDArrayIter: every data and label array needs at least as many examples "
                f"along the batch axis {self._axis} as the first data array; "
                f"{first.name!r} has {self.num_data}, "
                + ", ".join(f"{k!r} has {v}" for k, v in bad.items()))
        self.idx = numpy.arange(self.num_data)
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None
        self.reset()

    # ------------------------------------------------------------------ descriptions
    def _descs(self, sources):
        out = []
        for s in sources:
            shape = list(s.values.shape)
            shape[self._axis] = self.batch_size
            out.append(DataDesc(s.name, tuple(shape), numpy.dtype(s.dtype).type,
                                layout=self.layout))
        return out

    @property
    def provide_data(self) -> list:
        """``DataDesc`` of each data input, batch axis set to ``batch_size``."""
        return self._descs(self.data)

    @property
    def provide_label(self) -> list:
        """``DataDesc`` of each label input."""
        return self._descs(self.label)

    # ------------------------------------------------------------------ iteration
    def _shuffle_data(self) -> None:
        numpy.random.shuffle(self.idx)
        for s in self.data + self.label:
            s.take(self.idx, self._axis)

    def hard_reset(self) -> None:
        """Rewind and forget examples kept back by ``'roll_over'``."""
        if self.shuffle:
            self._shuffle_data()
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None

    def reset(self) -> None:
        """Rewind (reshuffling when ``shuffle``); ``'roll_over'`` keeps its leftover."""
        if self.shuffle:
            self._shuffle_data()
        if self.last_batch_handle == "roll_over" and \
                self.num_data - self.batch_size < self.cursor < self.num_data:
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self) -> bool:
        """Advance the cursor by one batch; False past the end."""
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self) -> DataBatch:
        """The next batch (``StopIteration`` at the end)."""
        if not self.iter_next():
            raise StopIteration
        data = self.getdata()
        label = self.getlabel()
        if data[0].shape[self._axis] != self.batch_size:
            # incomplete last batch ('discard' drops it, 'roll_over' keeps it for later)
            self._cache_data = data
            self._cache_label = label
            raise StopIteration
        return DataBatch(data=data, label=label, pad=self.getpad(), index=None)

    def _slice(self, sources, start, end):
        return [s.batch(slice(start, end), self._axis) for s in sources]

    def _concat(self, first, second):
        if not first or not second:
            return first or second
        from ..nd import concat
        return [concat(a, b, dim=self._axis) for a, b in zip(first, second)]

    def _batchify(self, sources):
        if self.cursor >= self.num_data:
            raise RuntimeError("NDArrayIter: the iterator is past its end; call reset()")
        n, bs, cur = self.num_data, self.batch_size, self.cursor
        if self.last_batch_handle == "roll_over" and -bs < cur < 0:
            cache = self._cache_data if self._cache_data is not None else self._cache_label
            if cache is None:
                raise RuntimeError("NDArrayIter: roll_over has no kept-back batch to complete")
            if self._cache_data is not None:
                self._cache_data = None
            else:
                self._cache_label = None
            return self._concat(cache, self._slice(sources, 0, cur + bs))
        if self.last_batch_handle == "pad" and cur + bs > n:
            pad = bs - n + cur
            first = self._slice(sources, cur, n)
            rows = numpy.arange(pad) % n  # wraps around as often as needed
            second = [s.batch(rows, self._axis) for s in sources]
            return self._concat(first, second)
        return self._slice(sources, cur, min(cur + bs, n))

    def getdata(self) -> list:
        """The current batch's data arrays."""
        return self._batchify(self.data)

    def getlabel(self) -> list:
        """The current batch's label arrays."""
        return self._batchify(self.label)

    def getpad(self) -> int:
        """Padding examples in the current batch (``'pad'``, or ``'roll_over'``'s first)."""
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            return -self.cursor
        return 0
