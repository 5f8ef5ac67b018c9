"""gluon.data datasets and samplers (MXNet 1.9's gluon.data.dataset / sampler)."""
import numpy as np
import pytest

import core
from core import NDArray, nd
from gluon.data import (
    ArrayDataset,
    BatchSampler,
    Dataset,
    FilterSampler,
    IntervalSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SimpleDataset,
    SplitSampler,
)


# ---------------------------------------------------------------------- datasets
def test_simple_dataset_wraps_any_indexable():
    ds = SimpleDataset([3, 1, 4])
    assert len(ds) == 3 and ds[2] == 4
    assert list(ds) == [3, 1, 4]


def test_array_dataset_zips_arrays():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    y = [10, 11, 12, 13]
    ds = ArrayDataset(x, y)
    assert len(ds) == 4
    a, b = ds[2]
    np.testing.assert_array_equal(a, x[2])
    assert b == 12


def test_array_dataset_single_array_returns_the_element():
    ds = ArrayDataset(np.arange(5))
    assert ds[3] == 3


def test_array_dataset_ndarrays():
    x2 = nd.array(np.arange(6).reshape(3, 2))
    x1 = nd.array([7, 8, 9])
    ds = ArrayDataset(x2, x1)
    a, b = ds[1]
    assert isinstance(a, NDArray) and a.asnumpy().tolist() == [2.0, 3.0]
    # As in MXNet, a 1-D NDArray becomes NumPy: its samples are NumPy scalars.
    assert not isinstance(b, NDArray) and float(b) == 8.0


def test_array_dataset_length_mismatch_names_the_lengths():
    with pytest.raises(ValueError, match=r"array 0: 4, array 1: 3"):
        ArrayDataset(np.zeros(4), np.zeros(3))
    with pytest.raises(ValueError, match="at least one"):
        ArrayDataset()


def test_transform_lazy_and_eager():
    calls = []

    def fn(x, y):
        calls.append(x)
        return x * 10, y

    ds = ArrayDataset([1, 2, 3], [4, 5, 6])
    lazy = ds.transform(fn)
    assert calls == []
    assert lazy[1] == (20, 5) and lazy[1] == (20, 5)
    assert len(calls) == 2  # computed at each read
    calls.clear()
    eager = ds.transform(fn, lazy=False)
    assert len(calls) == 3
    assert [eager[i] for i in range(3)] == [(10, 4), (20, 5), (30, 6)]
    assert len(calls) == 3  # computed once


def test_transform_of_non_tuple_samples():
    assert SimpleDataset([1, 2]).transform(lambda x: -x)[1] == -2


def test_transform_first():
    ds = ArrayDataset([1, 2], ["a", "b"]).transform_first(lambda x: x + 100)
    assert ds[0] == (101, "a")
    assert SimpleDataset([1, 2]).transform_first(lambda x: x * 3)[1] == 6


def test_filter():
    ds = SimpleDataset(list(range(10))).filter(lambda x: x % 3 == 0)
    assert len(ds) == 4 and list(ds) == [0, 3, 6, 9]


def test_filter_of_a_transformed_dataset_filters_transformed_samples():
    ds = SimpleDataset([1, 2, 3, 4]).transform(lambda x: x * x).filter(lambda v: v > 4)
    assert list(ds) == [9, 16]


@pytest.mark.parametrize("length,num_shards", [(10, 3), (9, 3), (2, 3), (7, 1)])
def test_shard_covers_the_dataset_in_near_equal_parts(length, num_shards):
    ds = SimpleDataset(list(range(length)))
    shards = [list(ds.shard(num_shards, i)) for i in range(num_shards)]
    assert [i for s in shards for i in s] == list(range(length))
    sizes = [len(s) for s in shards]
    assert max(sizes) - min(sizes) <= 1
    assert sizes == sorted(sizes, reverse=True)  # the first shards hold the rest


def test_shard_errors():
    ds = SimpleDataset([1, 2, 3])
    with pytest.raises(ValueError, match=r"index must be in \[0, 2\)"):
        ds.shard(2, 2)
    with pytest.raises(ValueError, match="num_shards"):
        ds.shard(0, 0)


def test_take():
    ds = SimpleDataset([5, 6, 7])
    assert list(ds.take(2)) == [5, 6]
    assert list(ds.take(None)) == [5, 6, 7]
    assert list(ds.take(10)) == [5, 6, 7]


def test_sample():
    ds = SimpleDataset(list("abcd"))
    assert list(ds.sample(SequentialSampler(2, start=1))) == ["b", "c"]
    with pytest.raises(TypeError, match="Sampler"):
        ds.sample([0, 1])


def test_dataset_base_is_abstract():
    with pytest.raises(NotImplementedError):
        len(Dataset())
    with pytest.raises(NotImplementedError):
        iter(Sampler())


# ---------------------------------------------------------------------- samplers
def test_sequential_sampler():
    assert list(SequentialSampler(4)) == [0, 1, 2, 3]
    assert list(SequentialSampler(2, start=3)) == [3, 4]
    assert len(SequentialSampler(4, 7)) == 4


def test_random_sampler_is_a_permutation_reproducible_with_core_random_seed():
    s = RandomSampler(20)
    core.random.seed(5)
    a = list(s)
    b = list(s)
    assert sorted(a) == list(range(20)) and len(s) == 20
    assert a != b  # a new order each iteration
    assert all(type(i) is int for i in a)
    core.random.seed(5)
    assert list(s) == a
    core.random.seed(6)
    assert list(s) != a


def test_filter_sampler():
    s = FilterSampler(lambda x: x > 1, [0, 5, 1, 7])
    assert list(s) == [1, 3] and len(s) == 2


def test_batch_sampler_last_batch_modes():
    seq = SequentialSampler(7)
    keep = BatchSampler(seq, 3, "keep")
    assert list(keep) == [[0, 1, 2], [3, 4, 5], [6]] and len(keep) == 3
    discard = BatchSampler(seq, 3, "discard")
    assert list(discard) == [[0, 1, 2], [3, 4, 5]] and len(discard) == 2
    roll = BatchSampler(seq, 3, "rollover")
    assert len(roll) == 2
    assert list(roll) == [[0, 1, 2], [3, 4, 5]]
    assert len(roll) == 2  # (1 left over + 7) // 3
    assert list(roll) == [[6, 0, 1], [2, 3, 4]]
    assert len(roll) == 3  # (2 + 7) // 3
    assert list(roll) == [[5, 6, 0], [1, 2, 3], [4, 5, 6]]


def test_batch_sampler_errors():
    with pytest.raises(ValueError, match="last_batch must be one of"):
        BatchSampler(SequentialSampler(3), 2, "drop")
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        BatchSampler(SequentialSampler(3), 0)
    with pytest.raises(TypeError, match="batch_size must be an int"):
        BatchSampler(SequentialSampler(3), 2.5)


def test_interval_sampler():
    assert list(IntervalSampler(13, 3)) == [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11]
    s = IntervalSampler(13, 3, rollover=False)
    assert list(s) == [0, 3, 6, 9, 12] and len(s) == 5
    with pytest.raises(ValueError, match="interval"):
        IntervalSampler(2, 3)


def test_split_sampler_parts_are_disjoint_equal_and_shuffled():
    core.random.seed(1)
    parts = [SplitSampler(11, num_parts=3, part_index=i) for i in range(3)]
    got = [list(p) for p in parts]
    assert [len(p) for p in parts] == [3, 3, 3]
    assert [sorted(g) for g in got] == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert list(SplitSampler(11, 3, 1, shuffle=False)) == [3, 4, 5]
    big = SplitSampler(1000, 2, 1)
    core.random.seed(2)
    a = list(big)
    core.random.seed(2)
    assert list(big) == a and a != sorted(a)
    with pytest.raises(ValueError, match="part_index"):
        SplitSampler(10, 2, 2)
