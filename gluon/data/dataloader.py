"""``DataLoader``: mini-batches from a dataset, in worker processes or threads if asked.

With ``num_workers=0`` batches are made in the calling thread. With
``num_workers > 0`` each iteration (epoch) starts that many worker *processes*
(the ``fork`` start method on Linux and other POSIX systems, ``spawn`` on macOS
and Windows). The main process hands each worker the indices of its batches,
round-robin, keeping ``prefetch`` batches in flight; the worker reads the samples,
batches them in NumPy (or with the user's ``batchify_fn``, whose NDArrays it turns
into NumPy arrays) and sends the batch back through a pipe; arrays of 256 KiB or
more go through files in a private ``/dev/shm`` directory instead (RAM; one copy
each way; removed as they are read, and the directory when the iteration ends),
falling back to the pipe where ``/dev/shm`` is missing or full. The main process
puts the batches back in order and makes NDArrays of them. NDArrays never cross a
process boundary; the pipes do pickle the batches (NumPy arrays, numbers, lists,
tuples, dicts), which is the transport of our own data between our own processes
and nothing else: no file or network input is unpickled.

Workers run NumPy only: a dataset holding GPU NDArrays does not work in forked
workers (CUDA does not survive ``fork``); keep datasets on the CPU and move batches
to the GPU in the training loop, or use ``thread_pool=True``.

Workers stop when the iteration ends, when the iterator is garbage-collected or
abandoned, when an error is raised, and at interpreter exit; a worker whose
parent dies exits within a second. A worker's exception is raised again in the
main process (the same type when it can be rebuilt from a message, else
``RuntimeError``) with the sample index and the worker's traceback; waiting for a
batch longer than ``timeout`` seconds raises ``TimeoutError``.

Each worker seeds ``core.random`` (all contexts), ``numpy.random`` and ``random``
with ``base + worker_id``, where ``base`` is drawn from ``core.random``'s ``cpu(0)``
generator when the iteration starts, so workers draw different random streams and
``core.random.seed`` makes a whole run (order and random transforms) reproducible.

Example:
    >>> import numpy as np
    >>> from gluon.data import ArrayDataset, DataLoader
    >>> ds = ArrayDataset(np.arange(10, dtype='float32').reshape(5, 2), np.arange(5))
    >>> [(x.shape, y.asnumpy().tolist()) for x, y in DataLoader(ds, batch_size=2)]
    [((2, 2), [0, 1]), ((2, 2), [2, 3]), ((1, 2), [4])]
"""
from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import os
import random
import shutil
import signal
import sys
import tempfile
import time
import traceback
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as _FutureTimeout

import numpy

import core
from core.dtypes import is_float

from . import sampler as _sampler
from .batchify import (
    _AsNDArray,
    _from_transport,
    _map_tree,
    _numpy_batchify,
    _to_transport,
    default_batchify_fn,
    default_mp_batchify_fn,
)

__all__ = ["DataLoader", "default_batchify_fn", "default_mp_batchify_fn"]

#: The multiprocessing start method of worker processes; None chooses ``'fork'`` on
#: Linux and other POSIX systems, ``'spawn'`` on macOS and Windows. With ``'spawn'``
#: (or ``'forkserver'``) the dataset and ``batchify_fn`` must pickle, so they must not
#: hold NDArrays (use NumPy arrays) or lambdas.
MP_START_METHOD: str | None = None

_POLL_S = 1.0  # how often an idle worker checks that its parent is alive
_SHM_MIN_BYTES = 1 << 18  # arrays at least this large travel through /dev/shm files
_JOIN_GRACE_S = 2.0  # how long workers get to exit on their own before terminate()
_FAIL_GRACE_S = 0.2  # the same after an error (a worker may be stuck)


def _start_method() -> str:
    if MP_START_METHOD is not None:
        return MP_START_METHOD
    if sys.platform in ("darwin", "win32") or \
            "fork" not in multiprocessing.get_all_start_methods():
        return "spawn"
    return "fork"


def _add_note(exc: BaseException, note: str) -> None:
    if hasattr(exc, "add_note"):  # Python >= 3.11
        exc.add_note(note)


def _load(dataset, indices: list, batchify_fn: Callable):
    """Read the samples at ``indices`` and batch them; errors get a note naming the sample."""
    samples = []
    for i in indices:
        try:
            samples.append(dataset[i])
        except Exception as e:
            _add_note(e, f"(DataLoader: raised while loading sample index {i})")
            raise
    return batchify_fn(samples)


# ---------------------------------------------------------------------- worker processes
def _seed_worker(seed: int) -> None:
    core.random.seed(seed)
    numpy.random.seed(seed % 2 ** 32)
    random.seed(seed)


def _error_record(exc: Exception, worker_id: int, index, indices, where: str | None = None):
    return {
        "module": type(exc).__module__,
        "qualname": type(exc).__qualname__,
        "message": str(exc),
        "traceback": traceback.format_exc(),
        "index": index,
        "indices": list(indices),
        "worker_id": worker_id,
        "pid": os.getpid(),
        "where": where,
    }


class _ShmArray:
    """An array a worker wrote to a file in the iterator's /dev/shm directory."""

    __slots__ = ("dtype", "path", "shape")

    def __init__(self, path: str, dtype: numpy.dtype, shape: tuple):
        self.path, self.dtype, self.shape = path, dtype, shape

    def __reduce__(self):
        return (_ShmArray, (self.path, self.dtype, self.shape))


def _make_shm_dir():
    """A private directory in /dev/shm (RAM) for the batches of one iteration, or None."""
    if not os.path.isdir("/dev/shm") or not os.access("/dev/shm", os.W_OK):
        return None
    try:
        return tempfile.mkdtemp(prefix=f"kbackend-dataloader-{os.getpid()}-", dir="/dev/shm")
    except OSError:
        return None


def _array_to_shm(leaf, shm_dir: str):
    """Worker side: a large array to become an NDArray goes to a /dev/shm file instead of
    the pipe (one copy each way instead of several); if /dev/shm is full, the pipe."""
    if not isinstance(leaf, _AsNDArray):
        return leaf
    arr = leaf.array
    if arr.nbytes < _SHM_MIN_BYTES or not (arr.dtype.kind in "biu" or is_float(arr.dtype)):
        return leaf
    fd, path = tempfile.mkstemp(dir=shm_dir)
    try:
        with os.fdopen(fd, "wb") as f:
            numpy.ascontiguousarray(arr).tofile(f)
    except OSError:  # ENOSPC: /dev/shm is small (64 MiB in a default Docker container)
        with contextlib.suppress(OSError):
            os.unlink(path)
        return leaf
    return _ShmArray(path, arr.dtype, arr.shape)


def _array_from_shm(leaf):
    """Main side: map a worker's file (removed at once; the mapping keeps the data)."""
    if not isinstance(leaf, _ShmArray):
        return leaf
    arr = numpy.memmap(leaf.path, dtype=leaf.dtype, mode="r", shape=leaf.shape)
    os.unlink(leaf.path)
    return _AsNDArray(arr)


def _run_task(dataset, batchify_fn, worker_id: int, batch_idx: int, indices: list,
              shm_dir: str | None = None):
    """One batch in a worker: ``(batch_idx, True, batch)`` or ``(batch_idx, False, error)``."""
    current = None
    try:
        samples = []
        for current in indices:
            samples.append(dataset[current])
        current = None
        if batchify_fn is None:
            batch = _numpy_batchify(samples)
        else:
            batch = _to_transport(batchify_fn(samples))
        if shm_dir is not None:
            batch = _map_tree(batch, lambda leaf: _array_to_shm(leaf, shm_dir))
        return batch_idx, True, batch
    except Exception as e:  # noqa: BLE001 - any error of user code goes to the main process
        where = None if current is not None else "in batchify_fn"
        return batch_idx, False, _error_record(e, worker_id, current, indices, where)


def _worker_loop(dataset, batchify_fn, worker_id: int, seed: int, task_conn, result_conn,
                 parent_pid: int, shm_dir: str | None) -> None:
    """The body of a worker process: batches for the index lists it receives, until None."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process' business
    except ValueError:
        pass
    _seed_worker(seed)
    while True:
        try:
            if not task_conn.poll(_POLL_S):
                if os.getppid() != parent_pid:  # orphaned: the main process died
                    return
                continue
            task = task_conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        batch_idx, indices = task
        msg = _run_task(dataset, batchify_fn, worker_id, batch_idx, indices, shm_dir)
        try:
            result_conn.send(msg)  # pickles first: a pickling error sends nothing
        except (EOFError, OSError):
            return
        except Exception as e:  # noqa: BLE001 - the batch does not pickle: say so instead
            err = _error_record(e, worker_id, None, indices,
                                "sending the batch to the main process (a batch must pickle: "
                                "NumPy arrays, NDArrays, numbers, strings, lists, tuples, "
                                "dicts)")
            try:
                result_conn.send((batch_idx, False, err))
            except (EOFError, OSError):
                return


def _rebuild_error(rec: dict, batch_idx: int) -> Exception:
    """The exception a worker reported, as the same type if it can be rebuilt."""
    if rec["where"] is None:
        where = f"while loading sample index {rec['index']} of batch {batch_idx}"
    else:
        where = f"in batch {batch_idx} (sample indices {rec['indices']}), {rec['where']}"
    msg = (f"{rec['message']}\n\n({rec['qualname']} raised in DataLoader worker "
           f"{rec['worker_id']} (pid {rec['pid']}) {where}; the worker's "
           f"traceback:\n{rec['traceback'].rstrip()})")
    cls = sys.modules.get(rec["module"])
    for part in rec["qualname"].split("."):
        cls = getattr(cls, part, None)
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            return cls(msg)
        except Exception:  # noqa: BLE001, S110 - a constructor wanting other arguments
            pass
    return RuntimeError(f"{rec['qualname']}: {msg}")


def _shutdown_workers(owner_pid: int, workers: list, task_conns: list, result_conns: list,
                      shm_dir: str | None, grace: float = _JOIN_GRACE_S) -> None:
    """Stop worker processes: ask, wait up to ``grace`` s (draining their pipes), then kill."""
    if os.getpid() != owner_pid:  # a forked child holding a copy of the iterator
        return
    for c in task_conns:
        with contextlib.suppress(OSError, ValueError):  # a worker that is gone already
            c.send(None)
    readers = [r for r in result_conns if not r.closed]
    alive = [w for w in workers if w.exitcode is None]
    deadline = time.monotonic() + grace
    while alive and time.monotonic() < deadline:
        try:
            ready = multiprocessing.connection.wait(
                readers + [w.sentinel for w in alive], timeout=deadline - time.monotonic())
        except OSError:
            break
        for r in ready:
            if r in readers:  # a worker blocked on sending a batch nobody wants any more
                try:
                    r.recv_bytes()
                except (EOFError, OSError):
                    readers.remove(r)
        alive = [w for w in alive if w.exitcode is None]
    for w in alive:
        w.terminate()
    for w in alive:
        w.join(1.0)
        if w.exitcode is None:
            w.kill()
            w.join()
    for c in list(task_conns) + list(result_conns):
        with contextlib.suppress(OSError):
            c.close()
    if shm_dir is not None:  # the files of batches nobody received
        shutil.rmtree(shm_dir, ignore_errors=True)


class _PrefetchIter:
    """What the worker-process and the thread-pool iterators share: batches of indices
    are sent in order (``_sent`` counts them), each to be loaded elsewhere, and received
    in the same order (``_rcvd``), a new one sent for each received.

    Subclasses define ``_send(batch_idx, indices)``, ``__next__`` (which starts with
    :meth:`_next_index`) and ``shutdown()``.
    """

    def __init__(self, batch_sampler, timeout: float):
        self._timeout = timeout
        self._batch_sampler = batch_sampler
        self._batch_iter = iter(batch_sampler)
        self._exhausted = False
        self._sent = 0
        self._rcvd = 0
        self._done = False

    def __len__(self) -> int:
        return len(self._batch_sampler)

    def __iter__(self):
        return self

    def _prefetch_batches(self, prefetch: int) -> None:
        """Send the first ``prefetch`` batches (at least one)."""
        for _ in range(max(1, prefetch)):
            self._push_next()

    def _push_next(self) -> None:
        """Send the next batch of indices, if any is left."""
        if self._exhausted:
            return
        try:
            indices = next(self._batch_iter)
        except StopIteration:
            self._exhausted = True
            return
        self._send(self._sent, list(indices))
        self._sent += 1

    def _send(self, batch_idx: int, indices: list) -> None:
        raise NotImplementedError

    def _next_index(self) -> int:
        """The index of the batch to return next; StopIteration (after ``shutdown()``)
        once all were returned."""
        if self._done:
            raise StopIteration
        if self._rcvd >= self._sent:
            self._push_next()
            if self._rcvd >= self._sent:
                self.shutdown()
                raise StopIteration
        return self._rcvd

    def shutdown(self) -> None:
        raise NotImplementedError


class _MultiWorkerIter(_PrefetchIter):
    """One pass over the batches with worker processes (see the module docstring)."""

    def __init__(self, dataset, batchify_fn, batch_sampler, num_workers: int, prefetch: int,
                 timeout: float):
        super().__init__(batch_sampler, timeout)
        self._num_workers = num_workers
        self._buffer: dict = {}
        self._workers: list = []
        self._task_conns: list = []
        self._result_conns: list = []
        owner = os.getpid()
        shm_dir = _make_shm_dir()
        # Registered before the first start, so whatever is started is also stopped.
        self._finalizer = weakref.finalize(self, _shutdown_workers, owner, self._workers,
                                           self._task_conns, self._result_conns, shm_dir)
        method = _start_method()
        ctx = multiprocessing.get_context(method)
        if batchify_fn in (default_batchify_fn, default_mp_batchify_fn):
            batchify_fn = None  # workers batch in NumPy
        base_seed = int(core.random.get_generator(core.cpu(0)).integers(0, 2 ** 31))
        try:
            for wid in range(num_workers):
                task_r, task_w = ctx.Pipe(duplex=False)
                res_r, res_w = ctx.Pipe(duplex=False)
                w = ctx.Process(target=_worker_loop, name=f"DataLoaderWorker-{wid}",
                                args=(dataset, batchify_fn, wid, base_seed + wid, task_r, res_w,
                                      owner, shm_dir),
                                daemon=True)
                self._task_conns.append(task_w)
                self._result_conns.append(res_r)
                try:
                    w.start()
                finally:
                    task_r.close()
                    res_w.close()
                self._workers.append(w)
        except Exception as e:
            self.shutdown(grace=_FAIL_GRACE_S)
            if method != "fork":
                _add_note(e, f"(DataLoader: the '{method}' start method pickles the dataset "
                             "and batchify_fn for the workers; lambdas and local functions do "
                             "not pickle: use module-level functions, or pass "
                             "thread_pool=True)")
            raise
        self._prefetch_batches(prefetch)

    def _send(self, batch_idx: int, indices: list) -> None:
        wid = batch_idx % self._num_workers
        try:
            self._task_conns[wid].send((batch_idx, indices))
        except OSError:
            self._fail(self._dead_worker_error(wid))

    def _fail(self, exc: Exception):
        self.shutdown(grace=_FAIL_GRACE_S)
        raise exc

    def _dead_worker_error(self, wid: int) -> RuntimeError:
        w = self._workers[wid]
        w.join(1.0)
        code = w.exitcode
        how = f"exit code {code}"
        if code is not None and code < 0:
            try:
                how = f"signal {signal.Signals(-code).name}"
            except ValueError:
                how = f"signal {-code}"
            if -code == getattr(signal, "SIGKILL", 9):
                how += " (out of memory?)"
        return RuntimeError(f"DataLoader worker {wid} (pid {w.pid}) exited unexpectedly "
                            f"with {how}")

    def _receive(self, deadline: float) -> None:
        """Wait for at least one message from the workers (or a worker's death)."""
        readers = {r: i for i, r in enumerate(self._result_conns)}
        sentinels = {w.sentinel: i for i, w in enumerate(self._workers)}
        remaining = deadline - time.monotonic()
        ready = []
        if remaining > 0:
            ready = multiprocessing.connection.wait(list(readers) + list(sentinels),
                                                    timeout=remaining)
        if not ready:
            wid = self._rcvd % self._num_workers
            self._fail(TimeoutError(
                f"DataLoader: no batch from worker {wid} (pid {self._workers[wid].pid}) in "
                f"{self._timeout} s (waiting for batch {self._rcvd}); the dataset's "
                f"__getitem__, the transforms or batchify_fn are slow or hang. If loading "
                f"is only slow, pass a larger DataLoader(timeout=...)"))
        dead = []
        for obj in ready:
            if obj in readers:
                try:
                    batch_idx, ok, payload = obj.recv()
                except (EOFError, OSError):
                    dead.append(readers[obj])
                    continue
                self._buffer[batch_idx] = (ok, payload)
        for obj in ready:
            if obj in sentinels:
                dead.append(sentinels[obj])
        if dead:
            self._fail(self._dead_worker_error(min(dead)))

    def __next__(self):
        batch_idx = self._next_index()
        deadline = time.monotonic() + self._timeout
        while batch_idx not in self._buffer:
            self._receive(deadline)
        ok, payload = self._buffer.pop(batch_idx)
        self._rcvd += 1
        if not ok:
            self._fail(_rebuild_error(payload, batch_idx))
        self._push_next()
        return _from_transport(_map_tree(payload, _array_from_shm))

    def shutdown(self, grace: float = _JOIN_GRACE_S) -> None:
        """Stop the workers now (also done at the end of the iteration and on garbage
        collection).

        Args:
            grace: seconds the workers get to exit on their own before being terminated.
        """
        self._done = True
        self._buffer.clear()
        detached = self._finalizer.detach()
        if detached is not None:
            _, func, args, _ = detached
            func(*args, grace=grace)


class _ThreadPoolIter(_PrefetchIter):
    """One pass over the batches with a pool of threads."""

    def __init__(self, dataset, batchify_fn, batch_sampler, num_workers: int, prefetch: int,
                 timeout: float):
        super().__init__(batch_sampler, timeout)
        self._dataset = dataset
        self._batchify_fn = batchify_fn
        self._futures: dict = {}
        self._pool = ThreadPoolExecutor(num_workers, thread_name_prefix="DataLoaderThread")
        self._finalizer = weakref.finalize(self, self._pool.shutdown, wait=False,
                                           cancel_futures=True)
        self._prefetch_batches(prefetch)

    def _send(self, batch_idx: int, indices: list) -> None:
        self._futures[batch_idx] = self._pool.submit(_load, self._dataset, indices,
                                                     self._batchify_fn)

    def __next__(self):
        fut = self._futures.pop(self._next_index())
        try:
            batch = fut.result(timeout=self._timeout)
        except (_FutureTimeout, TimeoutError):
            self.shutdown()
            raise TimeoutError(
                f"DataLoader: no batch from the thread pool in {self._timeout} s (waiting "
                f"for batch {self._rcvd}); the dataset's __getitem__, the transforms or "
                f"batchify_fn are slow or hang. If loading is only slow, pass a larger "
                f"DataLoader(timeout=...)") from None
        except BaseException:
            self.shutdown()
            raise
        self._rcvd += 1
        self._push_next()
        return batch

    def shutdown(self) -> None:
        """Cancel the batches not started yet and let the threads go."""
        self._done = True
        self._futures.clear()
        self._finalizer()


def _same_process_iter(dataset, batchify_fn, batch_sampler):
    for indices in batch_sampler:
        yield _load(dataset, indices, batchify_fn)


class DataLoader:
    """Loads a dataset and returns mini-batches (MXNet 1.9's ``gluon.data.DataLoader``).

    Args:
        dataset: the source: a :class:`~gluon.data.Dataset`, or any object with
            ``len()`` and ``[]`` (NumPy arrays, NDArrays and lists work directly).
        batch_size: the mini-batch size; required unless ``batch_sampler`` is given.
        shuffle: shuffle the samples each epoch (with a :class:`RandomSampler`, so
            ``core.random.seed`` makes the order reproducible). Not with ``sampler``.
        sampler: the sampler of sample indices; not together with ``shuffle``.
        last_batch: ``'keep'`` (default), ``'discard'`` or ``'rollover'``: what to do
            with an incomplete last batch (see :class:`BatchSampler`).
        batch_sampler: a sampler of lists of indices; excludes ``batch_size``,
            ``shuffle``, ``sampler`` and ``last_batch``.
        batchify_fn: merges a list of samples into a batch; default
            :func:`default_batchify_fn`. With worker processes it runs in the workers,
            and NDArrays in what it returns come back as NDArrays.
        num_workers: how many worker processes (or threads, with ``thread_pool``);
            0 (default) loads in the calling thread.
        pin_memory: accepted for MXNet compatibility; does nothing (batches are made
            on the CPU as usual).
        pin_device_id: accepted with ``pin_memory``; does nothing.
        prefetch: how many batches to have in flight with workers; default
            ``2 * num_workers``.
        thread_pool: use threads instead of processes (the dataset is then shared, and
            need not pickle; Python code then runs one thread at a time).
        timeout: seconds to wait for any one batch from the workers before raising
            ``TimeoutError``; must be positive.
        try_nopython: accepted for MXNet 2.0 compatibility; ignored.
        auto_reload: accepted for MXNet 1.9 compatibility; ignored (workers start when
            an iteration starts).

    Raises:
        ValueError: contradictory or missing arguments (see above).

    Example:
        >>> import core
        >>> from gluon.data import DataLoader
        >>> core.random.seed(0)
        >>> loader = DataLoader(list(range(10)), batch_size=4, shuffle=True,
        ...                     last_batch='discard')
        >>> len(loader), [b.shape for b in loader]
        (2, [(4,), (4,)])
    """

    def __init__(self, dataset, batch_size: int | None = None, shuffle: bool = False,
                 sampler: _sampler.Sampler | None = None, last_batch: str | None = None,
                 batch_sampler: _sampler.Sampler | None = None,
                 batchify_fn: Callable | None = None, num_workers: int = 0,
                 pin_memory: bool = False, pin_device_id: int = 0, prefetch: int | None = None,
                 thread_pool: bool = False, timeout: float = 120, try_nopython=None,
                 auto_reload: bool = False):
        self._dataset = dataset
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._thread_pool = bool(thread_pool)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ValueError(f"DataLoader: timeout must be a positive number of seconds, "
                             f"got {timeout!r}")
        self._timeout = timeout
        if batch_sampler is None:
            if batch_size is None:
                raise ValueError("DataLoader: batch_size must be given unless batch_sampler is")
            if sampler is None:
                sampler = (_sampler.RandomSampler(len(dataset)) if shuffle
                           else _sampler.SequentialSampler(len(dataset)))
            elif shuffle:
                raise ValueError("DataLoader: shuffle must not be given with sampler (shuffle "
                                 "with a RandomSampler instead)")
            batch_sampler = _sampler.BatchSampler(sampler, batch_size, last_batch or "keep")
        elif batch_size is not None or shuffle or sampler is not None or \
                last_batch is not None:
            raise ValueError("DataLoader: batch_size, shuffle, sampler and last_batch must "
                             "not be given with batch_sampler")
        self._batch_sampler = batch_sampler
        num_workers = _sampler._check_int("DataLoader: num_workers", num_workers, -sys.maxsize)
        self._num_workers = max(0, num_workers)
        self._prefetch = max(0, int(prefetch) if prefetch is not None
                             else 2 * self._num_workers)
        self._batchify_fn = default_batchify_fn if batchify_fn is None else batchify_fn

    def __iter__(self):
        if self._num_workers == 0:
            return _same_process_iter(self._dataset, self._batchify_fn, self._batch_sampler)
        cls = _ThreadPoolIter if self._thread_pool else _MultiWorkerIter
        return cls(self._dataset, self._batchify_fn, self._batch_sampler, self._num_workers,
                   self._prefetch, self._timeout)

    def __len__(self) -> int:
        return len(self._batch_sampler)
