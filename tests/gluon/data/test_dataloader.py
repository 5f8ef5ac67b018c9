"""gluon.data.DataLoader: batching, last_batch, shuffling, worker processes and threads."""
import gc
import multiprocessing
import os
import time
from collections import namedtuple

import numpy as np
import pytest

import core
from core import NDArray, nd
from gluon.data import (
    ArrayDataset,
    BatchSampler,
    DataLoader,
    Dataset,
    SequentialSampler,
    SimpleDataset,
    dataloader,
)
from gluon.data.batchify import default_batchify_fn

# ---------------------------------------------------------------------- helpers
# Module-level datasets, so that they also pickle for the 'spawn' start method.


class Squares(Dataset):
    def __len__(self):
        return 23

    def __getitem__(self, i):
        return np.full((2,), i * i, np.float32), i


class FailsAt(Dataset):
    def __init__(self, bad):
        self.bad = bad

    def __len__(self):
        return 20

    def __getitem__(self, i):
        if i == self.bad:
            raise ValueError(f"bad sample {i}")
        return np.float32(i)


class CustomError(Exception):
    pass


class RaisesCustom(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        raise CustomError(f"custom failure at {i}")


class SleepsAt(Dataset):
    def __init__(self, idx, seconds):
        self.idx, self.seconds = idx, seconds

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == self.idx:
            time.sleep(self.seconds)
        return np.float32(i)


class ExitsAt(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            os._exit(3)
        return np.float32(i)


class RandomDraws(Dataset):
    """Each sample draws from numpy.random and core.random (as random augmentations do)."""

    def __len__(self):
        return 16

    def __getitem__(self, i):
        a = np.random.rand()
        b = core.random.get_generator(core.cpu(0)).random()
        return np.array([a, b])


Pair = namedtuple("Pair", "data extra")


def _no_children(deadline_s=5.0):
    end = time.monotonic() + deadline_s
    while multiprocessing.active_children():
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


def _np(batch):
    if isinstance(batch, (list, tuple)):
        return [_np(b) for b in batch]
    return batch.asnumpy() if isinstance(batch, NDArray) else batch


def _assert_same_batches(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        x, y = _np(x), _np(y)
        if isinstance(x, list):
            _assert_same_batches(x, y)
        else:
            np.testing.assert_array_equal(x, y)
            assert x.dtype == y.dtype


@pytest.fixture(autouse=True)
def _check_no_leftover_workers():
    yield
    assert _no_children(), f"worker processes left alive: {multiprocessing.active_children()}"


# ---------------------------------------------------------------------- batching
def test_batches_of_tuples_become_lists_of_ndarrays_with_the_data_dtype():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    y = np.arange(10)
    batches = list(DataLoader(ArrayDataset(x, y), batch_size=4))
    assert len(batches) == 3
    data, label = batches[0]
    assert isinstance(batches[0], list)  # as MXNet 1.9's default_batchify_fn
    assert isinstance(data, NDArray) and data.shape == (4, 2) and data.dtype == np.float32
    assert label.dtype == np.int64 and label.asnumpy().tolist() == [0, 1, 2, 3]
    assert batches[2][0].shape == (2, 2)
    np.testing.assert_array_equal(np.concatenate([b[0].asnumpy() for b in batches]), x)


def test_default_batchify_dtypes():
    assert default_batchify_fn([1.5, 2.5]).dtype == np.float64  # np.asarray of floats
    assert default_batchify_fn([np.int32(1), np.int32(2)]).dtype == np.int32
    assert default_batchify_fn([np.zeros(3, np.uint8)] * 2).dtype == np.uint8
    stacked = default_batchify_fn([nd.ones((2, 3)), nd.zeros((2, 3))])
    assert stacked.shape == (2, 2, 3) and stacked.dtype == np.float32
    nested = default_batchify_fn([(1, (2.0, nd.ones(1))), (3, (4.0, nd.ones(1)))])
    assert nested[0].asnumpy().tolist() == [1, 3]
    assert nested[1][0].asnumpy().tolist() == [2.0, 4.0] and nested[1][1].shape == (2, 1)


def test_a_numpy_array_or_list_is_a_dataset():
    out = [b.asnumpy().tolist() for b in DataLoader(np.arange(5), batch_size=2)]
    assert out == [[0, 1], [2, 3], [4]]
    assert [b.shape for b in DataLoader(nd.ones((5, 3)), batch_size=5)] == [(5, 3)]


@pytest.mark.parametrize("last_batch,expected", [
    ("keep", [[0, 1, 2], [3, 4, 5], [6]]),
    ("discard", [[0, 1, 2], [3, 4, 5]]),
])
def test_last_batch_keep_discard(last_batch, expected):
    loader = DataLoader(np.arange(7), batch_size=3, last_batch=last_batch)
    assert len(loader) == len(expected)
    for _ in range(2):
        assert [b.asnumpy().tolist() for b in loader] == expected


def test_last_batch_rollover_carries_samples_to_the_next_epoch():
    loader = DataLoader(np.arange(7), batch_size=3, last_batch="rollover")
    assert [b.asnumpy().tolist() for b in loader] == [[0, 1, 2], [3, 4, 5]]
    assert len(loader) == 2
    assert [b.asnumpy().tolist() for b in loader] == [[6, 0, 1], [2, 3, 4]]
    assert len(loader) == 3


def test_custom_batchify_fn():
    def batchify(samples):
        return nd.array([s[1] for s in samples]) * 2

    out = [b.asnumpy().tolist() for b in DataLoader(Squares(), batch_size=10,
                                                      batchify_fn=batchify)]
    assert out[0] == [0, 2, 4, 6, 8, 10, 12, 14, 16, 18] and len(out) == 3


def test_batch_sampler_argument():
    bs = BatchSampler(SequentialSampler(6), 4, "discard")
    out = [b.asnumpy().tolist() for b in DataLoader(np.arange(6), batch_sampler=bs)]
    assert out == [[0, 1, 2, 3]]


def test_argument_errors():
    with pytest.raises(ValueError, match="batch_size must be given"):
        DataLoader(np.arange(4))
    with pytest.raises(ValueError, match="shuffle must not be given with sampler"):
        DataLoader(np.arange(4), batch_size=2, shuffle=True, sampler=SequentialSampler(4))
    bs = BatchSampler(SequentialSampler(4), 2)
    for kwargs in ({"batch_size": 2}, {"shuffle": True}, {"last_batch": "keep"},
                   {"sampler": SequentialSampler(4)}):
        with pytest.raises(ValueError, match="must not be given with batch_sampler"):
            DataLoader(np.arange(4), batch_sampler=bs, **kwargs)
    with pytest.raises(ValueError, match="timeout must be a positive"):
        DataLoader(np.arange(4), batch_size=2, timeout=0)
    with pytest.raises(ValueError, match="last_batch must be one of"):
        DataLoader(np.arange(4), batch_size=2, last_batch="drop")


def test_mxnet_only_arguments_are_accepted():
    loader = DataLoader(np.arange(4), batch_size=2, pin_memory=True, pin_device_id=1,
                        try_nopython=True, auto_reload=True, num_workers=-1)
    assert [b.asnumpy().tolist() for b in loader] == [[0, 1], [2, 3]]


def test_shuffle_is_a_permutation_reproducible_with_core_random_seed():
    loader = DataLoader(np.arange(50), batch_size=8, shuffle=True)
    core.random.seed(3)
    a = np.concatenate([b.asnumpy() for b in loader])
    b = np.concatenate([b.asnumpy() for b in loader])
    assert sorted(a.tolist()) == list(range(50)) and not np.array_equal(a, b)
    core.random.seed(3)
    np.testing.assert_array_equal(np.concatenate([b.asnumpy() for b in loader]), a)


def test_error_in_the_main_process_names_the_sample():
    with pytest.raises(ValueError, match="bad sample 3") as info:
        list(DataLoader(FailsAt(3), batch_size=2))
    if hasattr(info.value, "__notes__"):
        assert "sample index 3" in info.value.__notes__[0]


# ---------------------------------------------------------------------- workers
@pytest.mark.parametrize("thread_pool", [False, True], ids=["processes", "threads"])
def test_workers_give_the_same_batches_as_the_main_process(thread_pool):
    ref = list(DataLoader(Squares(), batch_size=4))
    got = list(DataLoader(Squares(), batch_size=4, num_workers=2, thread_pool=thread_pool))
    _assert_same_batches(ref, got)
    # and again (a new iteration starts new workers), with prefetch 1 and other dtypes
    ds = ArrayDataset(np.arange(30, dtype=np.uint8).reshape(10, 3), [float(i) for i in range(10)])
    ref = list(DataLoader(ds, batch_size=3, last_batch="discard"))
    got = list(DataLoader(ds, batch_size=3, last_batch="discard", num_workers=2, prefetch=1,
                          thread_pool=thread_pool))
    _assert_same_batches(ref, got)


def test_worker_iterator_len_and_loader_len():
    loader = DataLoader(np.arange(10), batch_size=3, num_workers=2)
    it = iter(loader)
    assert len(it) == len(loader) == 4
    assert [b.asnumpy().tolist() for b in it][-1] == [9]
    with pytest.raises(StopIteration):
        next(it)


def test_workers_ndarray_samples_and_custom_batchify():
    ds = SimpleDataset([nd.full((2, 2), i) for i in range(6)])
    _assert_same_batches(list(DataLoader(ds, batch_size=4)),
                         list(DataLoader(ds, batch_size=4, num_workers=2)))
    def batchify(samples):
        return Pair(nd.stack(*samples), {"n": len(samples), "raw": np.ones(2)})

    batches = list(DataLoader(ds, batch_size=4, batchify_fn=batchify, num_workers=2))
    first = batches[0]
    assert isinstance(first, Pair) and isinstance(first.data, NDArray)
    assert first.data.shape == (4, 2, 2) and first.extra["n"] == 4
    assert isinstance(first.extra["raw"], np.ndarray)  # NumPy arrays stay NumPy


def test_shuffle_with_workers_is_reproducible():
    loader = DataLoader(Squares(), batch_size=5, shuffle=True, num_workers=2)
    core.random.seed(11)
    a = [_np(b) for b in loader]
    core.random.seed(11)
    b = [_np(b) for b in loader]
    _assert_same_batches(a, b)
    labels = np.concatenate([x[1] for x in a])
    assert sorted(labels.tolist()) == list(range(23))
    assert labels.tolist() != list(range(23))


def test_workers_draw_different_random_streams_reproducibly():
    loader = DataLoader(RandomDraws(), batch_size=2, num_workers=2)
    core.random.seed(0)
    a = np.concatenate([b.asnumpy() for b in loader])
    core.random.seed(0)
    b = np.concatenate([b.asnumpy() for b in loader])
    np.testing.assert_array_equal(a, b)
    # batches 0 and 1 come from workers 0 and 1: different streams
    assert not np.array_equal(a[0:2], a[2:4])
    assert len(np.unique(a[:, 0])) == len(a) and len(np.unique(a[:, 1])) == len(a)


def test_worker_exception_is_raised_in_the_main_process_quickly():
    start = time.monotonic()
    loader = DataLoader(FailsAt(7), batch_size=2, num_workers=2)
    seen = []
    with pytest.raises(ValueError, match="bad sample 7") as info:
        for batch in loader:
            seen.append(batch.asnumpy().tolist())
    msg = str(info.value)
    assert "sample index 7" in msg and "DataLoader worker 1" in msg
    assert "Traceback" in msg and "__getitem__" in msg  # the worker's traceback
    assert seen == [[0, 1], [2, 3], [4, 5]]  # the batches before the failing one arrive
    assert time.monotonic() - start < 10
    assert _no_children()


def test_worker_exception_of_a_user_type_keeps_the_type():
    with pytest.raises(CustomError, match="custom failure at 0"):
        list(DataLoader(RaisesCustom(), batch_size=2, num_workers=2))


def test_thread_pool_exception_is_the_original():
    with pytest.raises(ValueError, match="bad sample 7") as info:
        list(DataLoader(FailsAt(7), batch_size=2, num_workers=2, thread_pool=True))
    if hasattr(info.value, "__notes__"):
        assert "sample index 7" in info.value.__notes__[0]


def test_batchify_error_in_a_worker():
    def batchify(samples):
        raise TypeError("cannot batch these")

    with pytest.raises(TypeError, match="cannot batch these") as info:
        list(DataLoader(np.arange(4), batch_size=2, num_workers=2, batchify_fn=batchify))
    assert "in batchify_fn" in str(info.value)


def test_unpicklable_batch_gives_a_clear_error():
    def batchify(samples):
        return lambda: samples

    with pytest.raises(Exception, match="a batch must pickle"):
        list(DataLoader(np.arange(4), batch_size=2, num_workers=1, batchify_fn=batchify))


def test_timeout_raises_and_stops_the_workers():
    start = time.monotonic()
    loader = DataLoader(SleepsAt(2, 30), batch_size=2, num_workers=2, timeout=0.5)
    with pytest.raises(TimeoutError, match=r"no batch from worker 1 .* in 0.5 s"):
        list(loader)
    assert time.monotonic() - start < 5
    assert _no_children()


def test_thread_pool_timeout():
    loader = DataLoader(SleepsAt(2, 1.5), batch_size=2, num_workers=2, thread_pool=True,
                        timeout=0.2)
    with pytest.raises(TimeoutError, match="thread pool"):
        list(loader)


def test_a_dying_worker_is_reported():
    with pytest.raises(RuntimeError, match=r"worker 0 \(pid \d+\) exited unexpectedly with "
                                           r"exit code 3"):
        list(DataLoader(ExitsAt(), batch_size=2, num_workers=2))


def test_an_abandoned_iterator_stops_its_workers():
    loader = DataLoader(Squares(), batch_size=2, num_workers=2)
    it = iter(loader)
    next(it)
    assert len(multiprocessing.active_children()) == 2
    del it
    gc.collect()
    assert _no_children()
    # shutdown() is explicit too, and a stopped iterator is exhausted
    it = iter(loader)
    next(it)
    it.shutdown()
    assert not multiprocessing.active_children()
    with pytest.raises(StopIteration):
        next(it)


def test_spawn_start_method(monkeypatch):
    monkeypatch.setattr(dataloader, "MP_START_METHOD", "spawn")
    ref = list(DataLoader(Squares(), batch_size=8))
    got = list(DataLoader(Squares(), batch_size=8, num_workers=2))
    _assert_same_batches(ref, got)
    # An unpicklable dataset fails at the start, with a hint.
    ds = SimpleDataset([nd.ones(2)] * 4).transform(lambda x: x * 2)
    with pytest.raises(Exception, match="pickle") as info:
        iter(DataLoader(ds, batch_size=2, num_workers=1))
    if hasattr(info.value, "__notes__"):
        assert "thread_pool=True" in info.value.__notes__[0]


def _shm_dirs():
    if not os.path.isdir("/dev/shm"):
        return set()
    # only this process's directories: other test runs on the machine make their own
    mine = f"kbackend-dataloader-{os.getpid()}-"
    return {d for d in os.listdir("/dev/shm") if d.startswith(mine)}


@pytest.mark.parametrize("min_bytes", [0, None], ids=["shm", "pipe"])
def test_large_batches_through_shared_memory_or_the_pipe(monkeypatch, min_bytes):
    if min_bytes is None:
        monkeypatch.setattr(dataloader, "_make_shm_dir", lambda: None)
    else:
        monkeypatch.setattr(dataloader, "_SHM_MIN_BYTES", min_bytes)
    before = _shm_dirs()
    ds = ArrayDataset(np.random.default_rng(0).random((12, 3, 8, 8)).astype(np.float32),
                      np.arange(12, dtype=np.int32), [float(i) for i in range(12)])
    _assert_same_batches(list(DataLoader(ds, batch_size=5)),
                         list(DataLoader(ds, batch_size=5, num_workers=2)))
    it = iter(DataLoader(ds, batch_size=2, num_workers=2))
    next(it)
    del it  # batches in flight are dropped with their files
    gc.collect()
    assert _no_children()
    assert _shm_dirs() == before
