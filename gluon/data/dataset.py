"""Datasets: indexable collections of samples (MXNet's ``gluon.data.dataset``).

A dataset has ``__getitem__`` (the i-th sample) and ``__len__``. NumPy arrays,
NDArrays and lists can be used as datasets directly; :class:`Dataset` adds the
lazy combinators ``transform``, ``transform_first``, ``filter``, ``shard``, ``take``
and ``sample``.

Example:
    >>> import numpy as np
    >>> from gluon.data import ArrayDataset
    >>> ds = ArrayDataset(np.arange(6).reshape(3, 2), [10, 11, 12])
    >>> x, y = ds[1]
    >>> x.tolist(), y
    ([2, 3], 11)
    >>> ds.transform_first(lambda x: x * 2)[1][0].tolist()
    [4, 6]
"""
from __future__ import annotations

import os
from collections.abc import Callable

from core import NDArray, recordio

from . import sampler as _sampler

__all__ = ["ArrayDataset", "Dataset", "RecordFileDataset", "SimpleDataset"]


class Dataset:
    """Base class of datasets: subclasses define ``__getitem__`` and ``__len__``.

    Example:
        >>> from gluon.data import Dataset
        >>> class Squares(Dataset):
        ...     def __getitem__(self, i):
        ...         return i * i
        ...     def __len__(self):
        ...         return 5
        >>> list(Squares().filter(lambda v: v % 2 == 1))
        [1, 9]
    """

    def __getitem__(self, idx):
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def __iter__(self):
        # Explicit, so that iteration stops at len() even where __getitem__ would not
        # raise IndexError past the end.
        for i in range(len(self)):
            yield self[i]

    def filter(self, fn: Callable) -> Dataset:
        """A dataset of the samples for which ``fn(sample)`` is true.

        ``fn`` runs once over every sample when ``filter`` is called; of a lazily
        transformed dataset, the transformed samples are filtered and the transform
        runs again whenever a sample is read afterwards.

        Args:
            fn: a callable taking a sample and returning a bool.

        Returns:
            The filtered dataset.

        Example:
            >>> from gluon.data import SimpleDataset
            >>> list(SimpleDataset([3, 4, 5, 6]).filter(lambda x: x > 4))
            [5, 6]
        """
        return _SampledDataset(self, _sampler.FilterSampler(fn, self))

    def shard(self, num_shards: int, index: int) -> Dataset:
        """Shard ``index`` of ``num_shards`` contiguous, near-equal shards.

        The first ``len(self) % num_shards`` shards get one sample more. For
        distributed training, shard before shuffling so that every worker gets a
        distinct subset.

        Args:
            num_shards: how many shards.
            index: which shard, in ``[0, num_shards)``.

        Returns:
            The shard, a dataset.

        Raises:
            ValueError: ``num_shards`` < 1 or ``index`` outside ``[0, num_shards)``.

        Example:
            >>> from gluon.data import SimpleDataset
            >>> [list(SimpleDataset(list(range(5))).shard(2, i)) for i in range(2)]
            [[0, 1, 2], [3, 4]]
        """
        num_shards = _sampler._check_int("Dataset.shard: num_shards", num_shards, 1)
        index = _sampler._check_int("Dataset.shard: index", index, 0)
        if index >= num_shards:
            raise ValueError(f"Dataset.shard: index must be in [0, {num_shards}), got {index}")
        length = len(self)
        shard_len, rest = divmod(length, num_shards)
        start = shard_len * index + min(index, rest)
        end = start + shard_len + (index < rest)
        return _SampledDataset(self, _sampler.SequentialSampler(end - start, start))

    def take(self, count: int | None) -> Dataset:
        """A dataset of the first ``count`` samples (all of them if ``count`` is None).

        Args:
            count: how many samples; None, or more than ``len(self)``, takes all.

        Returns:
            The dataset of the first samples.

        Example:
            >>> from gluon.data import SimpleDataset
            >>> list(SimpleDataset([7, 8, 9]).take(2))
            [7, 8]
        """
        if count is None or count > len(self):
            count = len(self)
        return _SampledDataset(self, _sampler.SequentialSampler(count))

    def sample(self, sampler: _sampler.Sampler) -> Dataset:
        """A dataset of the samples at the indices ``sampler`` yields (read once, now).

        Args:
            sampler: a :class:`~gluon.data.Sampler`.

        Returns:
            The sampled dataset.

        Raises:
            TypeError: ``sampler`` is not a Sampler.

        Example:
            >>> from gluon.data import SimpleDataset, IntervalSampler
            >>> list(SimpleDataset([0, 10, 20, 30]).sample(IntervalSampler(4, 2)))
            [0, 20, 10, 30]
        """
        if not isinstance(sampler, _sampler.Sampler):
            raise TypeError(f"Dataset.sample: expected a gluon.data.Sampler, got "
                            f"{type(sampler).__name__}")
        return _SampledDataset(self, sampler)

    def transform(self, fn: Callable, lazy: bool = True) -> Dataset:
        """A dataset whose samples are ``fn(sample)``; a tuple sample is passed unpacked.

        Args:
            fn: the transform. It is called as ``fn(*sample)`` when the sample is a
                tuple (e.g. ``(data, label)``), else as ``fn(sample)``.
            lazy: if True (default), transform each sample when it is read; if False,
                transform all samples now (a random ``fn`` then gives the same result
                in every epoch).

        Returns:
            The transformed dataset.

        Example:
            >>> from gluon.data import ArrayDataset
            >>> ds = ArrayDataset([1, 2], [3, 4]).transform(lambda x, y: (x + y, y))
            >>> ds[1]
            (6, 4)
        """
        trans = _LazyTransformDataset(self, fn)
        if lazy:
            return trans
        return SimpleDataset([trans[i] for i in range(len(trans))])

    def transform_first(self, fn: Callable, lazy: bool = True) -> Dataset:
        """A dataset whose samples have their first element transformed by ``fn``.

        Useful to transform the data and keep the label: ``(data, label)`` becomes
        ``(fn(data), label)``; a sample that is not a tuple becomes ``fn(sample)``.

        Args:
            fn: the transform of the first element.
            lazy: as in :meth:`transform`.

        Returns:
            The transformed dataset.

        Example:
            >>> from gluon.data import ArrayDataset
            >>> ArrayDataset([1, 2], [3, 4]).transform_first(lambda x: -x)[0]
            (-1, 3)
        """
        return self.transform(_TransformFirstClosure(fn), lazy)


class SimpleDataset(Dataset):
    """A dataset over any object with ``len()`` and ``[]`` (a list, an array, ...).

    Args:
        data: the samples.

    Example:
        >>> from gluon.data import SimpleDataset
        >>> ds = SimpleDataset(['a', 'b'])
        >>> len(ds), ds[1]
        (2, 'b')
    """

    def __init__(self, data):
        self._data = data

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    """Applies ``fn`` to each sample when it is read."""

    def __init__(self, data, fn: Callable):
        self._data = data
        self._fn = fn

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx):
        item = self._data[idx]
        if isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class _TransformFirstClosure:
    """``fn`` applied to the first element; a class rather than a closure, so it pickles."""

    def __init__(self, fn: Callable):
        self._fn = fn

    def __call__(self, x, *args):
        if args:
            return (self._fn(x),) + args
        return self._fn(x)


class _SampledDataset(Dataset):
    """The samples of ``dataset`` at the indices of ``sampler`` (read once)."""

    def __init__(self, dataset, sampler):
        self._dataset = dataset
        self._sampler = sampler
        self._indices = list(iter(sampler))

    def __len__(self) -> int:
        return len(self._indices)

    def __getitem__(self, idx):
        return self._dataset[self._indices[idx]]


class ArrayDataset(Dataset):
    """A dataset that zips several dataset-like objects: sample i is ``(a[i], b[i], ...)``.

    With one array, sample i is ``a[i]`` itself. Arrays may be NumPy arrays,
    NDArrays, lists or datasets; they must have the same length. As in MXNet, a
    1-D NDArray is converted to NumPy, so its samples are NumPy scalars.

    Args:
        *args: the arrays, at least one.

    Raises:
        ValueError: no array given, or the lengths differ.

    Example:
        >>> import numpy as np
        >>> from gluon.data import ArrayDataset
        >>> ds = ArrayDataset(np.zeros((4, 2)), np.arange(4))
        >>> len(ds), int(ds[3][1])
        (4, 3)
    """

    def __init__(self, *args):
        if not args:
            raise ValueError("ArrayDataset: needs at least one array")
        lengths = [len(a) for a in args]
        if any(n != lengths[0] for n in lengths):
            detail = ", ".join(f"array {i}: {n}" for i, n in enumerate(lengths))
            raise ValueError(f"ArrayDataset: all arrays must have the same length; got "
                             f"lengths {detail}")
        self._length = lengths[0]
        self._data = [a.asnumpy() if isinstance(a, NDArray) and a.ndim == 1 else a
                      for a in args]

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self) -> int:
        return self._length


class RecordFileDataset(Dataset):
    """A dataset over the records of a RecordIO file: sample i is the raw bytes of record
    ``keys[i]`` of its index (``<name>.idx`` beside ``<name>.rec``).

    The dataset pickles for ``spawn`` workers (the copy reopens the files by name), and
    a worker process reopens its own handle on first use.

    Args:
        filename: the ``.rec`` file; its index is the ``.idx`` file of the same name.

    Raises:
        FileNotFoundError: the ``.rec`` or ``.idx`` file does not exist.

    Example:
        >>> import os, tempfile
        >>> from core import recordio
        >>> from gluon.data import RecordFileDataset
        >>> d = tempfile.mkdtemp()
        >>> w = recordio.MXIndexedRecordIO(os.path.join(d, 'a.idx'), os.path.join(d, 'a.rec'), 'w')
        >>> for i in range(3):
        ...     w.write_idx(i, b'r%d' % i)
        >>> w.close()
        >>> ds = RecordFileDataset(os.path.join(d, 'a.rec'))
        >>> len(ds), ds[2]
        (3, b'r2')
    """

    def __init__(self, filename):
        self.filename = os.fspath(filename)
        self.idx_file = os.path.splitext(self.filename)[0] + ".idx"
        self._record = recordio.MXIndexedRecordIO(self.idx_file, self.filename, "r")

    def __getitem__(self, idx):
        return self._record.read_idx(self._record.keys[idx])

    def __len__(self) -> int:
        return len(self._record.keys)
