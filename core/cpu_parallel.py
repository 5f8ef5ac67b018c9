"""NumPy passes split over the CPU threads: one large copy or ufunc as several chunks.

NumPy runs every elementwise pass and every strided copy on one thread, but releases the
GIL while it does, so chunks of one pass run truly in parallel on Python threads. This
module keeps a small pool of worker threads (``core.cpu_kernels.num_threads() - 1`` of
them: the calling thread takes a chunk too, the same knob as BLAS and numba) and splits
a pass over the leading axis of its arrays when the pass is large enough to pay for the
hand-off (about 20 microseconds).

Why threads over NumPy's own loops rather than numba ``prange`` kernels for these passes
(measured on this project's 2-core machine, LeNet's layers): NumPy's SIMD loops beat a
scalar numba loop per thread (max pooling's four strided ``maximum`` passes 0.29 ms
against 0.76 ms compiled), the results are NumPy's bit for bit (each chunk is the same
ufunc on a slice), nothing compiles, and a waiting worker sleeps on a lock: an OpenMP
team spin-waits at its barrier, and when another process holds one of the cores a
parallel region stalls for a scheduler time slice (a 2-thread numba copy took 5.4 ms
against 1.1 ms on one thread on the loaded machine; the same split over threads here
0.61 ms against NumPy's 1.05 ms).

Results never depend on the thread count: the chunks are disjoint and each is computed
exactly as the whole would be.

Example:
    >>> import numpy
    >>> from core import cpu_parallel
    >>> a = numpy.arange(6.0).reshape(3, 2)
    >>> out = numpy.empty_like(a)
    >>> cpu_parallel.run_chunks(3, lambda lo, hi: numpy.negative(a[lo:hi], out=out[lo:hi]))
    >>> out[:, 0].tolist()
    [-0.0, -2.0, -4.0]
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy

from . import cpu_kernels

# Below this many elements a pass runs whole (the split costs more than it saves).
MIN_ELEMENTS = 1 << 17

_state = {"pool": None, "size": 0}
_lock = threading.Lock()
_inside = threading.local()


def threads() -> int:
    """How many chunks a large pass is split into (``cpu_kernels.num_threads()``)."""
    return cpu_kernels.num_threads()


def _pool(n: int) -> ThreadPoolExecutor:
    with _lock:
        if _state["pool"] is None or _state["size"] != n - 1:
            old = _state["pool"]
            _state["pool"] = ThreadPoolExecutor(max_workers=n - 1,
                                                thread_name_prefix="core-cpu-parallel",
                                                initializer=_mark_worker)
            _state["size"] = n - 1
            if old is not None:
                old.shutdown(wait=False)
        return _state["pool"]


def _mark_worker() -> None:
    _inside.worker = True


def run_chunks(length: int, fn: Callable[[int, int], object], elements: int | None = None,
               xp=numpy) -> None:
    """Run ``fn(lo, hi)`` over ``range(length)`` cut into one contiguous chunk per thread
    (or whole, as ``fn(0, length)``: with one thread or item, inside a worker, or for a
    pass of fewer than ``MIN_ELEMENTS`` values).

    Args:
        length: the extent of the axis the pass is split along.
        fn: does the pass on items ``lo:hi`` of that axis; chunks are disjoint and run
            concurrently, so ``fn`` must write only its own chunk.
        elements: the pass's total size, to decide whether to split (default: split
            whenever ``length`` > 1 and there is more than one thread).
        xp: the array module of the pass's arrays; only NumPy's are split (CuPy's run
            whole, on the device).
    """
    n = min(threads(), length)
    if n < 2 or xp is not numpy or getattr(_inside, "worker", False) or (
            elements is not None and elements < MIN_ELEMENTS):
        fn(0, length)
        return
    bounds = [length * i // n for i in range(n + 1)]
    pool = _pool(threads())
    futures = [pool.submit(fn, bounds[i], bounds[i + 1]) for i in range(1, n)]
    try:
        fn(bounds[0], bounds[1])
    finally:
        errors = []
        for f in futures:
            try:
                f.result()
            except BaseException as e:  # noqa: BLE001 - re-raised below
                errors.append(e)
    if errors:
        raise errors[0]


def copy(dst, src) -> None:
    """``dst[...] = src`` (same shape; any strides), split over the leading axis when
    ``dst`` is a large NumPy array (other array modules copy as they do)."""
    if type(dst) is not numpy.ndarray or dst.ndim == 0:
        dst[...] = src
        return

    def part(lo, hi):
        dst[lo:hi] = src[lo:hi]

    run_chunks(dst.shape[0], part, elements=dst.size)
