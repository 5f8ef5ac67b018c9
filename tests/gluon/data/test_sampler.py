"""Samplers' num_parts/part_index: one shard per worker process."""
import pytest

import core
from gluon.data import ArrayDataset, BatchSampler, DataLoader, RandomSampler, SequentialSampler


@pytest.mark.parametrize("length,num_parts", [(10, 2), (11, 3), (7, 7), (5, 1), (2, 4)])
def test_parts_are_equal_disjoint_and_contiguous(length, num_parts):
    seq = [list(SequentialSampler(length, num_parts=num_parts, part_index=i))
           for i in range(num_parts)]
    size = length // num_parts
    assert [len(p) for p in seq] == [size] * num_parts
    assert [i for p in seq for i in p] == list(range(size * num_parts))  # in order, once
    core.random.seed(3)
    rnd = [RandomSampler(length, num_parts=num_parts, part_index=i) for i in range(num_parts)]
    for s, expected in zip(rnd, seq):
        drawn = list(s)
        assert len(s) == len(drawn) == size
        assert sorted(drawn) == expected                      # the same shard, shuffled


def test_defaults_unchanged():
    assert list(SequentialSampler(4, start=2)) == [2, 3, 4, 5]
    core.random.seed(0)
    a = list(RandomSampler(6))
    core.random.seed(0)
    assert list(RandomSampler(6, num_parts=1, part_index=0)) == a


def test_start_offsets_the_part():
    assert list(SequentialSampler(6, start=100, num_parts=3, part_index=2)) == [104, 105]


def test_random_part_reshuffles_each_epoch_and_is_seeded():
    core.random.seed(1)
    s = RandomSampler(40, num_parts=2, part_index=1)
    first, second = list(s), list(s)
    assert sorted(first) == sorted(second) == list(range(20, 40))
    assert first != second
    core.random.seed(1)
    assert list(s) == first


@pytest.mark.parametrize("cls", [SequentialSampler, RandomSampler])
def test_bad_parts_raise(cls):
    name = cls.__name__
    with pytest.raises(ValueError, match=rf"{name}: part_index must be in \[0, 2\) for "
                                         r"num_parts=2, got 2"):
        cls(10, num_parts=2, part_index=2)
    with pytest.raises(ValueError, match=rf"{name}: num_parts must be >= 1, got 0"):
        cls(10, num_parts=0)
    with pytest.raises(TypeError, match=rf"{name}: part_index must be an int"):
        cls(10, num_parts=2, part_index=1.0)


def test_dataloader_reads_one_shard():
    data = ArrayDataset(list(range(12)))
    loader = DataLoader(data, batch_size=2,
                        sampler=SequentialSampler(len(data), num_parts=3, part_index=1))
    assert [b.asnumpy().tolist() for b in loader] == [[4, 5], [6, 7]]
    assert len(BatchSampler(RandomSampler(12, num_parts=3, part_index=0), 3)) == 2
