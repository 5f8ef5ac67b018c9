"""The NCCL paths of the kvstores, run on CPU with a fake ``cupy.cuda.nccl``.

The fake's communicators record every call and sum the NumPy buffers found at the
pointers they are given, so the real call sequence of ``core.kvstore.nccl`` (and of
the ``device`` store on it) runs here: which device sums which key, one communicator
set per device set created once, the unique id broadcast over MPI for ``dist_sync``.
"""
import ctypes
import threading
import warnings

import numpy as np
import pytest

from core import cpu, gpu, kvstore, nd
from core.kvstore import nccl

_CODES = {"NCCL_FLOAT16": ("float16", 6), "NCCL_FLOAT32": ("float32", 7),
          "NCCL_FLOAT64": ("float64", 8), "NCCL_INT32": ("int32", 2),
          "NCCL_INT64": ("int64", 4)}


def _view(ptr, count, dtype):
    dtype = np.dtype(dtype)
    raw = (ctypes.c_byte * (count * dtype.itemsize)).from_address(ptr)
    return np.ctypeslib.as_array(raw).view(dtype)


class _Clique:
    def __init__(self, n):
        self.n = n
        self.barrier = threading.Barrier(n)
        self.deposit = {}


class FakeNccl:
    """A stand-in for ``cupy.cuda.nccl``: communicators sum host buffers by address."""

    NCCL_SUM = 0

    def __init__(self):
        for name, (_, code) in _CODES.items():
            setattr(self, name, code)
        self._dtypes = {code: dt for dt, code in _CODES.values()}
        self.calls = []          # ("initAll", devices) / ("init", n, rank) / ("allReduce", ...)
        self._tls = threading.local()
        self._cliques = {}       # unique id -> _Clique
        self._lock = threading.Lock()
        fake = self

        class NcclCommunicator:
            def __init__(self, n, uid, rank):
                with fake._lock:
                    fake.calls.append(("init", n, rank))
                    clique = fake._cliques.setdefault(tuple(uid), _Clique(n))
                self.clique, self.rank = clique, rank

            @staticmethod
            def initAll(devices):
                fake.calls.append(("initAll", tuple(devices)))
                clique = _Clique(len(devices))
                comms = []
                for r in range(len(devices)):
                    c = NcclCommunicator.__new__(NcclCommunicator)
                    c.clique, c.rank = clique, r
                    comms.append(c)
                return comms

            def allReduce(self, send, recv, count, dtype, op, stream):
                if not getattr(fake._tls, "group", 0):
                    raise AssertionError("allReduce outside groupStart/groupEnd")
                fake.calls.append(("allReduce", self.rank, count, dtype, op, stream))
                fake._tls.pending.append((self, send, recv, count, fake._dtypes[dtype]))

        self.NcclCommunicator = NcclCommunicator

    def get_unique_id(self):
        self.calls.append(("get_unique_id",))
        return tuple(range(-64, 64))

    def groupStart(self):
        self._tls.group = getattr(self._tls, "group", 0) + 1
        self._tls.pending = getattr(self._tls, "pending", [])

    def groupEnd(self):
        self._tls.group -= 1
        if self._tls.group:
            return
        pending, self._tls.pending = self._tls.pending, []
        by_clique = {}
        for call in pending:
            by_clique.setdefault(id(call[0].clique), []).append(call)
        for calls in by_clique.values():
            clique = calls[0][0].clique
            by_rank = {}
            for call in calls:
                by_rank.setdefault(call[0].rank, []).append(call)
            if len(by_rank) == clique.n:    # every rank here: initAll in one process
                for column in zip(*(by_rank[r] for r in range(clique.n))):
                    self._sum(column)
                continue
            # one rank per thread (processes): exchange through the clique
            clique.deposit[calls[0][0].rank] = calls
            clique.barrier.wait()
            everyone = [clique.deposit[r] for r in range(clique.n)]
            sums = [sum(_view(s, n, dt).astype(np.float64) for _, s, _, n, dt in col)
                    for col in zip(*everyone)]
            clique.barrier.wait()           # all read before anyone writes (in place)
            for (_, _, r, n, dt), total in zip(calls, sums):
                _view(r, n, dt)[...] = total.astype(dt)
            clique.barrier.wait()

    @staticmethod
    def _sum(calls):
        total = sum(_view(s, n, dt).astype(np.float64) for _, s, _, n, dt in calls)
        for _, _, r, n, dt in calls:
            _view(r, n, dt)[...] = total.astype(dt)


@pytest.fixture
def fake(monkeypatch):
    f = FakeNccl()
    nccl.set_module(f)
    monkeypatch.setattr(nccl, "_cuda_device", nccl.null_device)
    monkeypatch.setattr(nccl, "_cuda_stream", lambda dev: 0)
    yield f
    nccl.set_module(None)


def test_devices_of_plans_only_distinct_gpus(fake):
    assert nccl.devices_of([gpu(0), gpu(1), gpu(3)]) == (0, 1, 3)
    assert nccl.devices_of([gpu(1), gpu(0)]) == (1, 0)     # push order is rank order
    assert nccl.devices_of([gpu(0)]) is None                # one device: nothing to sum
    assert nccl.devices_of([gpu(0), gpu(0)]) is None        # one device twice
    assert nccl.devices_of([cpu(0), cpu(1)]) is None        # CPU: today's path
    assert nccl.devices_of([cpu(0), gpu(1)]) is None


def test_devices_of_without_nccl_keeps_the_copy_path():
    nccl.set_module(None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # CuPy warns when libnccl is missing
        if nccl.available():
            pytest.skip("a real NCCL is installed")
        assert nccl.devices_of([gpu(0), gpu(1)]) is None
        with pytest.raises(RuntimeError, match="kvstore nccl"):
            nccl.module()


def test_allreduce_sums_into_every_buffer_in_one_group(fake):
    cl = nccl.DeviceCliques()
    a = [np.arange(6, dtype=np.float32) * (i + 1) for i in range(3)]
    out = [np.zeros(6, np.float32) for _ in range(3)]
    cl.allreduce((0, 1, 2), a, out)
    for o in out:
        np.testing.assert_array_equal(o, np.arange(6) * 6)
    ar = [c for c in fake.calls if c[0] == "allReduce"]
    assert [c[1] for c in ar] == [0, 1, 2]                  # rank per device
    assert {c[2:] for c in ar} == {(6, fake.NCCL_FLOAT32, fake.NCCL_SUM, 0)}


def test_one_communicator_set_per_device_set_created_once(fake):
    cl = nccl.DeviceCliques()
    for _ in range(3):
        cl.allreduce((0, 1), [np.ones(2), np.ones(2)], [np.zeros(2), np.zeros(2)])
    cl.allreduce((2, 3), [np.ones(1), np.ones(1)], [np.zeros(1), np.zeros(1)])
    cl.allreduce((0, 1), [np.ones(4, np.int32)] * 2, [np.zeros(4, np.int32)] * 2)
    assert [c for c in fake.calls if c[0] == "initAll"] == [("initAll", (0, 1)),
                                                           ("initAll", (2, 3))]
    assert cl.created == [(0, 1), (2, 3)]


def test_allreduce_refuses_mismatched_buffers_and_dtypes(fake):
    cl = nccl.DeviceCliques()
    with pytest.raises(nccl.NcclError, match="buffer 1 has shape"):
        cl.allreduce((0, 1), [np.ones(2), np.ones(3)], [np.zeros(2), np.zeros(3)])
    with pytest.raises(nccl.NcclError, match="cannot sum dtype bool"):
        cl.allreduce((0, 1), [np.ones(2, bool)] * 2, [np.zeros(2, bool)] * 2)
    with pytest.raises(nccl.NcclError, match="2 devices but 3 buffers"):
        cl.allreduce((0, 1), [np.ones(2)] * 3, [np.zeros(2)] * 3)


@pytest.fixture
def cpu_as_gpus(fake, monkeypatch):
    """The device store's NCCL path on CPU contexts: cpu(i) plays GPU i."""
    def devices_of(ctxs):
        ctxs = list(ctxs)
        ids = tuple(c.device_id for c in ctxs)
        return ids if len(ids) > 1 and len(set(ids)) == len(ids) else None
    monkeypatch.setattr(nccl, "devices_of", devices_of)
    return fake


def test_device_store_sums_keys_with_nccl(cpu_as_gpus):
    fake = cpu_as_gpus
    kv = kvstore.create("device")
    big = [nd.ones((4, 4), ctx=cpu(i)) * (i + 1) for i in range(2)]
    small = [nd.ones((2,), ctx=cpu(i)) * (i + 1) for i in range(2)]
    kv.pushpull("big", big)
    kv.pushpull("small", small)
    # which device holds which key's value: spread over the devices
    assert (kv.merge_context("big"), kv.merge_context("small")) == (cpu(0), cpu(1))
    for arr in big + small:
        assert np.all(arr.asnumpy() == 3.0)
    assert [c for c in fake.calls if c[0] == "initAll"] == [("initAll", (0, 1))]
    assert sum(c[0] == "allReduce" for c in fake.calls) == 4   # 2 keys x 2 devices
    out = [nd.zeros((2,), ctx=cpu(0)), nd.zeros((2,), ctx=cpu(1))]
    kv.pull("small", out=out)
    assert [o.asnumpy().tolist() for o in out] == [[3.0, 3.0], [3.0, 3.0]]


def test_device_store_nccl_with_an_optimizer_matches_local(cpu_as_gpus):
    from core import optimizer
    results = []
    for name in ("device", "local"):
        kv = kvstore.create(name)
        kv.init(0, nd.ones((3,)))
        kv.set_optimizer(optimizer.SGD(learning_rate=0.5))
        kv.push(0, [nd.ones((3,), ctx=cpu(0)), nd.ones((3,), ctx=cpu(1)) * 2])
        out = [nd.zeros((3,), ctx=cpu(0)), nd.zeros((3,), ctx=cpu(1))]
        kv.pull(0, out=out)
        results.append([o.asnumpy().tolist() for o in out])
    assert results[0] == results[1] == [[-0.5] * 3] * 2
    assert sum(c[0] == "allReduce" for c in cpu_as_gpus.calls) == 2


class _FakeMPI:
    """The part of MPIComm ProcessGroup uses, shared by threads playing the ranks."""

    def __init__(self, rank, size, shared):
        self.rank, self.size, self._shared = rank, size, shared
        self.bcasts = []

    def bcast(self, array, what, root=0):
        self.bcasts.append(what)
        if self.rank == root:
            self._shared["value"] = np.array(array, copy=True)
        self._shared["barrier"].wait()
        return np.array(self._shared["value"], copy=True)


def test_dist_process_group_bootstraps_the_unique_id_over_mpi(fake):
    size = 3
    shared = {"barrier": threading.Barrier(size)}
    results, errors, groups = [None] * size, [], [None] * size

    def rank_main(rank):
        try:
            comm = _FakeMPI(rank, size, shared)
            pg = nccl.ProcessGroup(comm, device=rank)
            groups[rank] = (pg, comm)
            a = np.full(5, rank + 1.0, np.float32)
            b = np.arange(3, dtype=np.float64) * rank
            pg.allreduce_sum([a, b])
            results[rank] = (a.tolist(), b.tolist())
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not errors, errors
    assert all(r == ([6.0] * 5, [0.0, 3.0, 6.0]) for r in results)
    assert [c for c in fake.calls if c[0] == "get_unique_id"] == [("get_unique_id",)]
    assert sorted(c for c in fake.calls if c[0] == "init") == [("init", 3, r)
                                                               for r in range(size)]
    assert all(g[0].unique_id == tuple(range(-64, 64)) for g in groups)
    assert all(g[1].bcasts == ["the NCCL unique id"] for g in groups)


class _OneRankMPI:
    """MPIComm for a job of one process (rank 0 of 1), recording the collectives."""

    def __init__(self, timeout=None):
        self.rank, self.size, self.timeout = 0, 1, 60.0
        self.calls = []
        _OneRankMPI.last = self

    def bcast(self, array, what, root=0):
        self.calls.append(("bcast", what))
        return np.array(array, copy=True)

    def allreduce_sum(self, arrays, what, check=None):
        self.calls.append(("allreduce", [a.size for a in arrays], check is not None))
        return [np.array(a, copy=True) for a in arrays]

    def allgather_bytes(self, data, what):
        return [data]

    def barrier(self, what="a barrier"):
        pass

    def check(self):
        pass


def test_dist_sync_sums_gpu_values_with_nccl_and_checks_order_over_mpi(fake, monkeypatch):
    from core.kvstore import dist
    monkeypatch.setattr(dist, "MPIComm", _OneRankMPI)
    monkeypatch.setattr(nccl, "dist_device", lambda ctxs: next(iter(ctxs)).device_id)
    kv = kvstore.create("dist_sync")
    kv.init("w", nd.zeros((3,)))
    kv.init("b", nd.zeros((2,)))
    g = [nd.ones((3,)) * 2, nd.ones((2,)) * 5]
    kv.pushpull(["w", "b"], g)
    kv.pushpull("w", g[0])
    assert g[0].asnumpy().tolist() == [2.0] * 3 and g[1].asnumpy().tolist() == [5.0] * 2
    mpi = _OneRankMPI.last
    assert ("bcast", "the NCCL unique id") in mpi.calls
    # values through NCCL, only the (empty) key-order check over MPI
    assert [c for c in mpi.calls if c[0] == "allreduce"] == [("allreduce", [0], True)] * 2
    assert [c[0] for c in fake.calls].count("init") == 1          # one communicator
    assert sum(c[0] == "allReduce" for c in fake.calls) == 3      # 2 keys, then 1


def test_dist_sync_nccl_off_keeps_the_host_path(fake, monkeypatch):
    from core.kvstore import dist
    monkeypatch.setattr(dist, "MPIComm", _OneRankMPI)
    monkeypatch.setattr(nccl, "dist_device", lambda ctxs: next(iter(ctxs)).device_id)
    monkeypatch.setenv("KBACKEND_DIST_NCCL", "0")
    kv = kvstore.create("dist_sync")
    kv.init(0, nd.zeros((3,)))
    g = nd.ones((3,))
    kv.pushpull(0, g)
    assert g.asnumpy().tolist() == [1.0] * 3
    assert [c for c in _OneRankMPI.last.calls if c[0] == "allreduce"] == \
        [("allreduce", [3], True)]
    assert not fake.calls


def test_parallel_allreduce_grads_without_a_store_uses_nccl(cpu_as_gpus, monkeypatch):
    from core import parallel
    monkeypatch.setattr(nccl, "_PROCESS", [])
    g = [[nd.ones((3,), ctx=cpu(i)) * (i + 1) for i in range(2)],
         [nd.ones((2, 2), ctx=cpu(i)) * (i + 2) for i in range(2)]]
    parallel.allreduce_grads(None, g)
    assert [a.asnumpy().tolist() for a in g[0]] == [[3.0] * 3] * 2
    assert [a.asnumpy().tolist() for a in g[1]] == [[[5.0, 5.0]] * 2] * 2
    assert [c for c in cpu_as_gpus.calls if c[0] == "initAll"] == [("initAll", (0, 1))]
    assert sum(c[0] == "allReduce" for c in cpu_as_gpus.calls) == 4
