"""The MPI transport of the ``dist_sync`` store: collectives with a deadline (mpi4py).

Every collective is issued non-blocking (``Iallreduce``, ``Ibcast``, ``Iallgather``,
...) and completed by polling ``Request.Test`` until a deadline: a blocking MPI call
cannot be interrupted, so a peer that died, hangs, or issued other calls would
otherwise hang this process forever. The deadline is ``KBACKEND_DIST_TIMEOUT``
seconds (default 60; ``0`` waits forever), read when the communicator is created.
When it passes, :class:`DistTimeoutError` is raised, the communicator is marked
broken (every later call raises at once), and at interpreter exit the process prints
the error and calls ``MPI_Abort`` instead of ``MPI_Finalize`` (which would wait for
the missing peer), so the launcher ends the whole job. Stores wait for their pending
communication at exit first (:func:`on_exit`), so a failure found only then ends the
job the same way. MPI calls are made one at a time (a lock), so an MPI library with
less than ``MPI_THREAD_MULTIPLE`` works too.

Launchers also act on their own: MPICH's and Open MPI's ``mpirun`` kill the job when
one process exits before ``MPI_Finalize`` (``mpirun -disable-auto-cleanup`` turns
that off in MPICH). The deadline covers what they do not see: a peer that hangs, a
lost machine, or workers whose calls differ (e.g. different numbers of batches).

mpi4py is imported when the first communicator is created (importing it starts MPI),
so ``core`` imports without it.

Example:
    >>> from core.kvstore import mpi
    >>> mpi.timeout_from_env({'KBACKEND_DIST_TIMEOUT': '2.5'})
    2.5
    >>> mpi.timeout_from_env({})
    60.0
"""
from __future__ import annotations

import atexit
import math
import os
import sys
import threading
import time

import numpy

__all__ = ["TIMEOUT_ENV", "DistError", "DistTimeoutError", "MPIComm", "on_exit",
           "timeout_from_env"]

TIMEOUT_ENV = "KBACKEND_DIST_TIMEOUT"
DEFAULT_TIMEOUT = 60.0

# numpy dtypes MPI sums natively; others are summed in float32 (float16) or float64.
_NATIVE = {numpy.dtype(t) for t in ("float32", "float64", "int32", "int64")}


class DistError(RuntimeError):
    """A failure of distributed communication (a broken MPI job or mismatched calls)."""


class DistTimeoutError(DistError, TimeoutError):
    """A collective did not complete on every worker within ``KBACKEND_DIST_TIMEOUT``."""


def timeout_from_env(environ=None) -> float:
    """The collective deadline in seconds from ``KBACKEND_DIST_TIMEOUT`` (``inf`` for 0).

    Args:
        environ: the environment to read (default ``os.environ``).

    Returns:
        The timeout in seconds (``math.inf``: no deadline).

    Raises:
        ValueError: the variable is not a number, or is negative.
    """
    raw = (os.environ if environ is None else environ).get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{TIMEOUT_ENV}={raw!r} is not a number of seconds") from None
    if value < 0 or math.isnan(value):
        raise ValueError(f"{TIMEOUT_ENV}={raw!r} must be >= 0 (0 waits forever)")
    return math.inf if value == 0 else value


def _import_mpi():
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError(
            "kvstore 'dist_sync' needs mpi4py and an MPI library: pip install mpi4py mpich "
            "(or pip install -e '.[dist]'), then launch the script with "
            "`mpirun -np N python script.py`") from e
    return MPI


_BROKEN: list = []  # communicators that failed: abort at exit instead of finalizing
_EXIT_HOOK: list = []
_SPIN = 1e-3  # seconds of immediate polling before backing off (measured on loopback)
# MPI libraries may give less than MPI_THREAD_MULTIPLE: one call at a time, from any thread.
_CALL_LOCK = threading.Lock()


def _abort_at_exit() -> None:
    # Runs before mpi4py's MPI_Finalize (a C-level exit hook, later than atexit's);
    # MPI_Finalize would wait for the dead or stuck peer forever.
    if _BROKEN:
        comm = _BROKEN[0]
        sys.stderr.write(f"{comm._broken}\n")
        sys.stderr.flush()
        time.sleep(0.5)  # the launcher forwards the output before the abort tears it down
        comm._mpi.COMM_WORLD.Abort(1)


def on_exit(fn) -> None:
    """Run ``fn()`` at interpreter exit before the check that aborts a broken MPI job
    (stores register the wait for their pending communication here)."""
    atexit.register(fn)  # atexit runs the last registered first


def _test(req) -> bool:
    with _CALL_LOCK:
        return req.Test()


class MPIComm:
    """A private duplicate of ``MPI.COMM_WORLD`` whose collectives have a deadline.

    Creating one is itself a collective: every process of the job must create its
    store (and so its communicator) in the same order.

    Args:
        timeout: seconds to wait for a collective (default: ``KBACKEND_DIST_TIMEOUT``).

    Raises:
        ImportError: mpi4py is missing (the message says how to install it).
    """

    def __init__(self, timeout: float | None = None):
        self._mpi = _import_mpi()
        self.timeout = timeout_from_env() if timeout is None else float(timeout)
        self._broken: str | None = None
        if not _EXIT_HOOK:
            atexit.register(_abort_at_exit)
            _EXIT_HOOK.append(True)
        world = self._mpi.COMM_WORLD
        self.rank, self.size = world.Get_rank(), world.Get_size()
        with _CALL_LOCK:
            comm, req = world.Idup()
        self._wait(req, "creating the store's communicator (MPI Idup)")
        with _CALL_LOCK:
            comm.Set_errhandler(self._mpi.ERRORS_RETURN)
        self._comm = comm

    # ------------------------------------------------------------------ waiting
    def _wait(self, req, what: str) -> None:
        """Poll ``req`` until it completes or the deadline passes."""
        self.check()
        deadline = time.monotonic() + self.timeout
        pause = 0.0
        spin_until = time.monotonic() + _SPIN
        try:
            while not _test(req):
                if time.monotonic() > deadline:
                    self._fail(DistTimeoutError(
                        f"kvstore dist_sync: {what} did not complete on every worker within "
                        f"{self.timeout:g} s ({TIMEOUT_ENV}); rank {self.rank} of {self.size} "
                        "gave up. Another worker process died, hangs, or made different "
                        "kvstore calls (every worker must init/push/pull the same keys in the "
                        "same order, e.g. the same number of batches). This MPI job cannot "
                        "continue: the process calls MPI_Abort at exit."))
                # MPI progresses only inside calls, so the peer's completion also waits
                # on these polls: poll at once for the first _SPIN seconds (yielding the
                # GIL to the compute threads), then back off to at most 0.1 ms between
                # polls, leaving the CPU to the compute.
                if time.monotonic() < spin_until:
                    time.sleep(0)
                    continue
                if pause:
                    time.sleep(pause)
                pause = min(max(pause * 2, 1e-5), 1e-4)
        except self._mpi.Exception as e:
            self._fail(DistError(f"kvstore dist_sync: {what} failed in MPI on rank "
                                 f"{self.rank} of {self.size}: {e}"), cause=e)

    def _fail(self, error: DistError, cause=None):
        self._broken = str(error)
        _BROKEN.append(self)
        raise error from cause

    def check(self) -> None:
        """Raise :class:`DistError` if an earlier collective failed (the job is broken)."""
        if self._broken is not None:
            raise DistError(f"kvstore dist_sync: the communicator is broken by an earlier "
                            f"failure: {self._broken}")

    # ------------------------------------------------------------------ collectives
    def allreduce_sum(self, arrays, what: str, check: int | None = None) -> list:
        """The sums of ``arrays`` over all processes, in one all-reduce per work dtype
        (small arrays travel together: one message instead of one each).

        Args:
            arrays: this process' contributions (NumPy arrays of any shapes and dtypes;
                float16 is summed in float32, dtypes MPI does not sum in float64).
            what: a description for errors (the keys, shapes and dtypes).
            check: a non-negative integer that every process must pass the same value
                for; it travels with the data, and a different sum raises.

        Returns:
            The sums, one new array per input, each of its input's shape and dtype.

        Raises:
            DistError: the processes passed different ``check`` values.
            DistTimeoutError: not every process joined within the deadline.
        """
        groups: dict = {}
        for i, a in enumerate(arrays):
            work = a.dtype if a.dtype in _NATIVE else numpy.dtype(
                "float32" if a.dtype == numpy.float16 else "float64")
            groups.setdefault(work, []).append(i)
        out: list = [None] * len(arrays)
        # A check sum stays exact in float32 (2**24) for any number of processes.
        code = None if check is None else 1 + check % max(1, 2 ** 24 // self.size - 1)
        for work, idx in groups.items():
            sizes = [arrays[i].size for i in idx]
            n = sum(sizes)
            buf = numpy.empty(n + (code is not None), dtype=work)
            offset = 0
            for i, size in zip(idx, sizes):
                buf[offset:offset + size] = arrays[i].reshape(-1)
                offset += size
            if code is not None:
                buf[n] = code
            with _CALL_LOCK:
                req = self._comm.Iallreduce(self._mpi.IN_PLACE, buf, op=self._mpi.SUM)
            self._wait(req, f"the allreduce of {what}")
            if code is not None and buf[n] != code * self.size:
                self._fail(DistError(
                    f"kvstore dist_sync: the workers reduced different keys together: rank "
                    f"{self.rank} of {self.size} sent {what}, the others did not all send "
                    "the same keys. Every worker must push/pushpull the same keys in the "
                    "same order (a parameter skipped on some workers only, e.g. by "
                    "ignore_stale_grad, or different numbers of batches per worker, break "
                    "this)."))
            offset = 0
            for i, size in zip(idx, sizes):
                a = arrays[i]
                part = buf[offset:offset + size].reshape(a.shape)
                out[i] = part if work == a.dtype else part.astype(a.dtype)
                offset += size
        return out

    def bcast(self, array: numpy.ndarray, what: str, root: int = 0) -> numpy.ndarray:
        """``root``'s ``array`` on every process (a new contiguous array; same shape and
        dtype on every process, which the caller checks beforehand)."""
        buf = numpy.array(array, order="C", copy=True)  # keeps 0-d arrays 0-d
        raw = buf.reshape(-1).view(numpy.uint8)  # bytes: any dtype travels as is
        with _CALL_LOCK:
            req = self._comm.Ibcast(raw, root=root)
        self._wait(req, f"the broadcast of {what}")
        return buf

    def allgather_bytes(self, data: bytes, what: str) -> list:
        """Every process' ``data`` (bytes of any length), in rank order."""
        sizes = numpy.zeros(self.size, dtype=numpy.int64)
        mine = numpy.array([len(data)], dtype=numpy.int64)
        with _CALL_LOCK:
            req = self._comm.Iallgather(mine, sizes)
        self._wait(req, f"the size exchange of {what}")
        out = numpy.empty(int(sizes.sum()), dtype=numpy.uint8)
        offsets = numpy.concatenate([[0], numpy.cumsum(sizes)[:-1]])
        send = numpy.frombuffer(data, dtype=numpy.uint8) if data else numpy.empty(0, numpy.uint8)
        with _CALL_LOCK:
            req = self._comm.Iallgatherv(send, [out, (sizes, offsets), self._mpi.BYTE])
        self._wait(req, f"the exchange of {what}")
        return [out[o:o + s].tobytes() for o, s in zip(offsets, sizes)]

    def barrier(self, what: str = "a barrier") -> None:
        """Wait until every process reaches this call (with the deadline)."""
        with _CALL_LOCK:
            req = self._comm.Ibarrier()
        self._wait(req, what)
