"""Samplers: iterables of sample indices (MXNet's ``gluon.data.sampler``).

A sampler yields indices into a dataset; a :class:`BatchSampler` groups them into
mini-batches for :class:`~gluon.data.DataLoader`. Random samplers draw from
``core.random``'s generator of ``cpu(0)``, so ``core.random.seed`` makes them
reproducible.

Example:
    >>> from gluon.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(7), 3, 'keep'))
    [[0, 1, 2], [3, 4, 5], [6]]
"""
from __future__ import annotations

import numbers
from collections.abc import Callable, Iterator

import core

__all__ = ["BatchSampler", "FilterSampler", "IntervalSampler", "RandomSampler", "Sampler",
           "SequentialSampler", "SplitSampler"]

_LAST_BATCH = ("keep", "discard", "rollover")


def _check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def _part(what: str, length: int, num_parts, part_index) -> tuple[int, int]:
    """``(start, size)`` of part ``part_index`` of ``num_parts`` equal parts of ``length``
    (the last ``length % num_parts`` indices belong to no part)."""
    num_parts = _check_int(f"{what}: num_parts", num_parts, 1)
    part_index = _check_int(f"{what}: part_index", part_index, 0)
    if part_index >= num_parts:
        raise ValueError(f"{what}: part_index must be in [0, {num_parts}) for num_parts="
                         f"{num_parts}, got {part_index}")
    size = length // num_parts
    return size * part_index, size


def _generator():
    # The sampling generator: cpu(0)'s, which core.random.seed (ctx='all') reseeds.
    return core.random.get_generator(core.cpu(0))


class Sampler:
    """Base class of samplers: subclasses define ``__iter__`` and ``__len__``."""

    def __iter__(self) -> Iterator:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """Samples ``start, start + 1, ..., start + length - 1`` in order.

    With ``num_parts > 1`` it samples only part ``part_index`` of ``num_parts`` equal,
    contiguous parts of those indices (as MXNet's data iterators' ``num_parts`` and
    ``part_index``): the worker of rank ``r`` among ``n`` processes passes
    ``num_parts=n, part_index=r`` and reads its own shard. Every part has
    ``length // num_parts`` indices (the last ``length % num_parts`` are left out), so
    every worker runs the same number of batches, which synchronous training needs.

    Args:
        length: how many indices.
        start: the first index.
        num_parts: how many parts to split the indices into.
        part_index: which part to sample, in ``[0, num_parts)``.

    Raises:
        ValueError: ``part_index`` out of range, or a negative length or start.

    Example:
        >>> from gluon.data import SequentialSampler
        >>> list(SequentialSampler(3, start=5))
        [5, 6, 7]
        >>> list(SequentialSampler(7, num_parts=2, part_index=1))
        [3, 4, 5]
    """

    def __init__(self, length: int, start: int = 0, num_parts: int = 1, part_index: int = 0):
        length = _check_int("SequentialSampler: length", length, 0)
        start = _check_int("SequentialSampler: start", start, 0)
        offset, self._length = _part("SequentialSampler", length, num_parts, part_index)
        self._start = start + offset

    def __iter__(self) -> Iterator[int]:
        return iter(range(self._start, self._start + self._length))

    def __len__(self) -> int:
        return self._length


class RandomSampler(Sampler):
    """Samples ``[0, length)`` in a random order, without replacement.

    Each iteration draws a new permutation from ``core.random``'s generator of
    ``cpu(0)`` (MXNet draws from NumPy's global generator), so ``core.random.seed``
    makes the order reproducible.

    With ``num_parts > 1`` it samples only part ``part_index`` of ``num_parts`` equal,
    contiguous parts of ``[0, length)``, in a random order (as MXNet's data iterators'
    ``num_parts`` and ``part_index``, for one shard per worker process; see
    :class:`SequentialSampler`). The parts do not depend on the random state, so
    workers with different seeds still read disjoint shards.

    Args:
        length: how many indices.
        num_parts: how many parts to split ``[0, length)`` into.
        part_index: which part to sample, in ``[0, num_parts)``.

    Raises:
        ValueError: ``part_index`` out of range, or a negative length.

    Example:
        >>> import core
        >>> from gluon.data import RandomSampler
        >>> core.random.seed(0)
        >>> sorted(RandomSampler(4))
        [0, 1, 2, 3]
        >>> sorted(RandomSampler(9, num_parts=2, part_index=1))
        [4, 5, 6, 7]
    """

    def __init__(self, length: int, num_parts: int = 1, part_index: int = 0):
        length = _check_int("RandomSampler: length", length, 0)
        self._start, self._length = _part("RandomSampler", length, num_parts, part_index)

    def __iter__(self) -> Iterator[int]:
        return iter((_generator().permutation(self._length) + self._start).tolist())

    def __len__(self) -> int:
        return self._length


class FilterSampler(Sampler):
    """The indices of the samples of ``dataset`` for which ``fn(sample)`` is true.

    The filter runs once, over the whole dataset, when the sampler is created.

    Args:
        fn: a callable taking a sample and returning a bool.
        dataset: the dataset to filter.

    Example:
        >>> from gluon.data import FilterSampler
        >>> list(FilterSampler(lambda x: x % 2 == 0, [5, 6, 7, 8]))
        [1, 3]
    """

    def __init__(self, fn: Callable, dataset):
        self._fn = fn
        self._dataset = dataset
        self._indices = [i for i in range(len(dataset)) if fn(dataset[i])]

    def __iter__(self) -> Iterator[int]:
        return iter(self._indices)

    def __len__(self) -> int:
        return len(self._indices)


class BatchSampler(Sampler):
    """Groups the indices of another sampler into mini-batches (lists of indices).

    Args:
        sampler: the source of indices.
        batch_size: the size of a mini-batch.
        last_batch: what to do with a last, incomplete batch: ``'keep'`` returns it,
            ``'discard'`` drops it, ``'rollover'`` keeps its indices for the start of the
            next iteration.

    Raises:
        ValueError: ``last_batch`` is not one of the three, or ``batch_size`` < 1.

    Example:
        >>> from gluon.data import BatchSampler, SequentialSampler
        >>> s = BatchSampler(SequentialSampler(5), 2, 'rollover')
        >>> list(s), list(s)
        ([[0, 1], [2, 3]], [[4, 0], [1, 2], [3, 4]])
    """

    def __init__(self, sampler, batch_size: int, last_batch: str = "keep"):
        self._sampler = sampler
        self._batch_size = _check_int("BatchSampler: batch_size", batch_size, 1)
        if last_batch not in _LAST_BATCH:
            raise ValueError(f"BatchSampler: last_batch must be one of {_LAST_BATCH}, "
                             f"got {last_batch!r}")
        self._last_batch = last_batch
        self._prev: list = []

    def __iter__(self) -> Iterator[list]:
        batch, self._prev = self._prev, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch:
            if self._last_batch == "keep":
                yield batch
            elif self._last_batch == "rollover":
                self._prev = batch

    def __len__(self) -> int:
        n, bs = len(self._sampler), self._batch_size
        if self._last_batch == "keep":
            return (n + bs - 1) // bs
        if self._last_batch == "discard":
            return n // bs
        return (len(self._prev) + n) // bs


class IntervalSampler(Sampler):
    """Samples ``[0, length)`` at a fixed interval (MXNet's ``contrib.data.IntervalSampler``).

    Args:
        length: how many indices.
        interval: the step between two consecutive indices; must be <= ``length``.
        rollover: after reaching the end, start again from the first skipped index
            until every index was visited; if False, stop at the end.

    Example:
        >>> from gluon.data import IntervalSampler
        >>> list(IntervalSampler(7, 3))
        [0, 3, 6, 1, 4, 2, 5]
        >>> list(IntervalSampler(7, 3, rollover=False))
        [0, 3, 6]
    """

    def __init__(self, length: int, interval: int, rollover: bool = True):
        self._length = _check_int("IntervalSampler: length", length, 0)
        self._interval = _check_int("IntervalSampler: interval", interval, 1)
        if self._interval > self._length:
            raise ValueError(f"IntervalSampler: interval {interval} must be <= length {length}")
        self._rollover = bool(rollover)

    def __iter__(self) -> Iterator[int]:
        for first in range(self._interval if self._rollover else 1):
            yield from range(first, self._length, self._interval)

    def __len__(self) -> int:
        if self._rollover:
            return self._length
        return len(range(0, self._length, self._interval))


class SplitSampler(Sampler):
    """Samples one of ``num_parts`` equal, disjoint parts of ``[0, length)``.

    For data-parallel training over several processes: the process with rank ``r``
    of ``n`` uses ``SplitSampler(len(dataset), n, r)``, so every process sees a
    different part, and all parts have the same length (``length // num_parts``; the
    last ``length % num_parts`` indices are never sampled). As in MXNet's
    distributed-training example, the part is shuffled on every iteration (with
    ``core.random``'s generator of ``cpu(0)``) unless ``shuffle=False``.

    Args:
        length: the length of the dataset.
        num_parts: how many parts to split it into.
        part_index: which part to sample, in ``[0, num_parts)``.
        shuffle: whether to shuffle the part's indices on each iteration.

    Example:
        >>> from gluon.data import SplitSampler
        >>> list(SplitSampler(10, num_parts=3, part_index=1, shuffle=False))
        [3, 4, 5]
    """

    def __init__(self, length: int, num_parts: int = 1, part_index: int = 0,
                 shuffle: bool = True):
        length = _check_int("SplitSampler: length", length, 0)
        self._start, self._part_len = _part("SplitSampler", length, num_parts, part_index)
        self._shuffle = bool(shuffle)

    def __iter__(self) -> Iterator[int]:
        if not self._shuffle:
            return iter(range(self._start, self._start + self._part_len))
        order = _generator().permutation(self._part_len) + self._start
        return iter(order.tolist())

    def __len__(self) -> int:
        return self._part_len
