"""Iterators over iterators: ``ResizeIter`` (a fixed number of batches per epoch) and
``PrefetchingIter`` (reads the next batch in background threads; merges iterators).

Example:
    >>> from core import nd
    >>> from core.io import NDArrayIter, PrefetchingIter, ResizeIter
    >>> it = ResizeIter(NDArrayIter(nd.ones((100, 10)), batch_size=25), 2)
    >>> [b.data[0].shape for b in it]
    [(25, 10), (25, 10)]
    >>> p = PrefetchingIter([NDArrayIter({"data": nd.ones((4, 2))}, batch_size=2),
    ...                      NDArrayIter({"data": nd.ones((4, 3))}, batch_size=2)],
    ...                     rename_data=[{"data": "a"}, {"data": "b"}])
    >>> [d.name for d in p.provide_data], len(list(p))
    (['a', 'b'], 2)
"""
from __future__ import annotations

import threading

from .base import DataBatch, DataDesc, DataIter

__all__ = ["PrefetchingIter", "ResizeIter"]


class _BatchHolder(DataIter):
    """An iterator whose ``iter_next`` sets ``self.current_batch``: ``next`` returns that
    batch itself (its bucket key and descriptions kept) and the getters read it."""

    def next(self) -> DataBatch:
        """The next batch itself (its bucket key and descriptions kept)."""
        if self.iter_next():
            return self.current_batch
        raise StopIteration

    def getdata(self):
        """The current batch's data."""
        return self.current_batch.data

    def getlabel(self):
        """The current batch's labels."""
        return self.current_batch.label

    def getindex(self):
        """The current batch's indices."""
        return self.current_batch.index

    def getpad(self):
        """The current batch's padding."""
        return self.current_batch.pad


class ResizeIter(_BatchHolder):
    """Gives exactly ``size`` batches per epoch from ``data_iter``, restarting it as needed.

    Args:
        data_iter: the iterator to resize.
        size: batches per epoch.
        reset_internal: whether ``reset()`` also resets ``data_iter`` (default True).

    Example:
        >>> import numpy as np
        >>> from core.io import NDArrayIter
        >>> it = ResizeIter(NDArrayIter(np.zeros((4, 1)), batch_size=2), 5)
        >>> len(list(it))
        5
    """

    def __init__(self, data_iter, size: int, reset_internal: bool = True):
        super().__init__()
        if int(size) < 0:
            raise ValueError(f"ResizeIter: size must be >= 0, got {size}")
        self.data_iter = data_iter
        self.size = int(size)
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch = None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        self.batch_size = data_iter.batch_size
        if hasattr(data_iter, "default_bucket_key"):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self) -> None:
        """Start a new epoch (and reset the inner iterator if ``reset_internal``)."""
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self) -> bool:
        """Fetch the next batch, wrapping the inner iterator around at its end."""
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return True


def _renamed(descs, renames, which):
    out = []
    for d in descs:
        d = d if isinstance(d, DataDesc) else DataDesc(*d)
        if d.name not in renames:
            raise KeyError(f"PrefetchingIter: rename_{which} has no entry for {d.name!r} "
                           f"(it maps {sorted(renames)})")
        out.append(DataDesc(renames[d.name], d.shape, d.dtype, d.layout))
    return out


class PrefetchingIter(_BatchHolder):
    """Reads batches ahead in one thread per inner iterator and joins their batches.

    With several iterators, a batch's data is the concatenation of their data lists
    (and likewise labels); the iterators must give the same number of batches with
    the same padding.

    Args:
        iters: a ``DataIter`` or a list of them.
        rename_data: optional list (one dict per iterator) ``{old_name: new_name}``.
        rename_label: the same for labels.

    Example:
        >>> import numpy as np
        >>> from core.io import NDArrayIter
        >>> p = PrefetchingIter(NDArrayIter(np.arange(6.0), batch_size=3))
        >>> [b.data[0].asnumpy().tolist() for b in p]
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    """

    def __init__(self, iters, rename_data=None, rename_label=None):
        super().__init__()
        if not isinstance(iters, (list, tuple)):
            iters = [iters]
        if not iters:
            raise ValueError("PrefetchingIter: needs at least one iterator")
        self.iters = list(iters)
        self.n_iter = len(self.iters)
        for name, renames in (("rename_data", rename_data), ("rename_label", rename_label)):
            if renames is not None and len(renames) != self.n_iter:
                raise ValueError(f"PrefetchingIter: {name} has {len(renames)} entries for "
                                 f"{self.n_iter} iterators")
        self.rename_data = rename_data
        self.rename_label = rename_label
        self.batch_size = self.provide_data[0][1][0]
        self.data_ready = [threading.Event() for _ in range(self.n_iter)]
        self.data_taken = [threading.Event() for _ in range(self.n_iter)]
        for event in self.data_taken:
            event.set()
        self.started = True
        self.current_batch = None
        self.next_batch = [None] * self.n_iter
        self._errors = [None] * self.n_iter
        self.prefetch_threads = [
            threading.Thread(target=self._prefetch, args=(i,), daemon=True,
                             name=f"PrefetchingIter-{i}") for i in range(self.n_iter)]
        for thread in self.prefetch_threads:
            thread.start()

    def _prefetch(self, i: int) -> None:
        while True:
            self.data_taken[i].wait()
            if not self.started:
                break
            try:
                self.next_batch[i] = self.iters[i].next()
            except StopIteration:
                self.next_batch[i] = None
            except BaseException as e:  # noqa: BLE001 - re-raised in the consumer's thread
                self.next_batch[i] = None
                self._errors[i] = e
            self.data_taken[i].clear()
            self.data_ready[i].set()

    def close(self) -> None:
        """Stop the prefetching threads (also done when the iterator is collected)."""
        if not getattr(self, "started", False):
            return
        self.started = False
        for event in self.data_taken:
            event.set()
        for thread in self.prefetch_threads:
            thread.join(timeout=10)

    def __del__(self):
        self.close()

    @property
    def provide_data(self) -> list:
        """The joined (and renamed) data descriptions of all iterators."""
        if self.rename_data is None:
            return [d for i in self.iters for d in i.provide_data]
        return [d for r, i in zip(self.rename_data, self.iters)
                for d in _renamed(i.provide_data, r, "data")]

    @property
    def provide_label(self) -> list:
        """The joined (and renamed) label descriptions of all iterators."""
        if self.rename_label is None:
            return [d for i in self.iters for d in i.provide_label]
        return [d for r, i in zip(self.rename_label, self.iters)
                for d in _renamed(i.provide_label, r, "label")]

    def _raise_errors(self) -> None:
        for i, err in enumerate(self._errors):
            if err is not None:
                self._errors[i] = None
                raise RuntimeError(f"PrefetchingIter: iterator {i} "
                                   f"({type(self.iters[i]).__name__}) failed: {err}") from err

    def reset(self) -> None:
        """Wait for the pending reads, reset every iterator and start reading again."""
        for event in self.data_ready:
            event.wait()
        self._errors = [None] * self.n_iter
        for it in self.iters:
            it.reset()
        for event in self.data_ready:
            event.clear()
        for event in self.data_taken:
            event.set()

    def iter_next(self) -> bool:
        """Take the prefetched batches (False when the iterators are exhausted)."""
        for event in self.data_ready:
            event.wait()
        self._raise_errors()
        if self.next_batch[0] is None:
            if any(b is not None for b in self.next_batch):
                raise ValueError("PrefetchingIter: the iterators give different numbers of "
                                 "batches")
            return False
        pads = [b.pad for b in self.next_batch]
        if any(p != pads[0] for p in pads) or any(b is None for b in self.next_batch):
            raise ValueError(f"PrefetchingIter: the iterators' batches do not line up "
                             f"(pads {pads})")
        self.current_batch = DataBatch(
            [d for b in self.next_batch for d in b.data],
            [lab for b in self.next_batch for lab in (b.label or [])],
            self.next_batch[0].pad, self.next_batch[0].index,
            bucket_key=getattr(self.next_batch[0], "bucket_key", None),
            provide_data=self.provide_data, provide_label=self.provide_label)
        for event in self.data_ready:
            event.clear()
        for event in self.data_taken:
            event.set()
        return True
