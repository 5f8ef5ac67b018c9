"""The dependency engine: work pushed with the variables it reads and writes.

Work on different variables runs concurrently, on one worker thread per device plus
a copy/communication worker (:data:`COMM`); work on one variable runs in push order,
reads overlapping and writes exclusive (MXNet's per-variable queues); among ready
work on a worker, higher ``priority`` runs first. An NDArray's ``_var`` stays None
until pushed work names it, so code that never pushes pays one ``is None`` test per
array in the dispatcher. Sync points: ``wait_to_read``, ``asnumpy``, the dispatcher,
in-place writes, :func:`wait_all`. A failure in pushed work is raised at the next
sync on an affected array as :class:`EngineError` naming the operator.
``KBACKEND_ENGINE_TYPE=NaiveEngine`` runs everything synchronously inside
:func:`push`. See docs/engine.md.

Example:
    >>> from core import engine, nd, cpu
    >>> a = nd.zeros((3,), ctx=cpu(0))
    >>> def fill():
    ...     a[:] = 2
    >>> engine.push(fill, write_vars=[a], ctx=cpu(0), name="fill")
    >>> a.asnumpy().tolist()
    [2.0, 2.0, 2.0]
"""
from __future__ import annotations

import atexit
import contextlib
import heapq
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable

from . import profiler as _prof
from .context import Context

__all__ = ["COMM", "EngineError", "Var", "bulk", "bulk_size", "current_op", "engine_type",
           "naive", "new_var", "pending", "push", "release", "set_bulk_size", "set_engine",
           "var_of", "wait_all", "wait_for_var", "wait_to_read", "wait_to_write", "waitall"]

COMM = "comm"
"""The ``ctx`` of work for the copy/communication worker (``ctx=None`` means the same)."""

_TYPES = ("ThreadedEngine", "NaiveEngine")


class EngineError(RuntimeError):
    """Pushed work failed; the message names the operator, ``__cause__`` is the original.

    Attributes:
        op_name: the ``name`` the failed work was pushed with.
    """

    def __init__(self, message: str, op_name: str = ""):
        super().__init__(message)
        self.op_name = op_name


class _Failure:
    """One exception raised by pushed work, shared by every variable it poisons."""

    __slots__ = ("exc", "name", "reported", "seq")

    def __init__(self, name, exc, seq):
        self.name = name
        self.seq = seq
        self.exc = exc
        self.reported = False

    def error(self, where: str = "") -> EngineError:
        msg = f"{self.name}: pushed work failed with {type(self.exc).__name__}: {self.exc}"
        if where:
            msg += f" (seen at {where})"
        err = EngineError(msg, self.name)
        err.__cause__ = self.exc
        return err


class Var:
    """An engine variable: the unit of dependency tracking (one per array).

    Holds the queue of pending work that names it, in push order; an entry is a list
    ``[op, is_write, satisfied]``.
    """

    __slots__ = ("__weakref__", "error", "name", "nwrites", "queue")

    def __init__(self, name: str = ""):
        self.queue: list = []
        self.nwrites = 0
        self.error: _Failure | None = None
        self.name = name

    def __repr__(self) -> str:
        return f"<Var {self.name or hex(id(self))} pending={len(self.queue)}>"


class _Op:
    __slots__ = ("done", "fn", "name", "nwait", "priority", "reads", "released", "root",
                 "seq", "worker", "writes")

    def __init__(self, fn, reads, writes, worker, priority, name, seq, root):
        self.fn = fn
        self.reads = reads
        self.writes = writes
        self.worker = worker
        self.priority = priority
        self.name = name
        self.seq = seq
        self.root = root  # the seq of the work pushed from outside any work it descends from
        self.nwait = 0
        self.done = False
        self.released = None


class _Worker:
    __slots__ = ("cond", "ctx", "heap", "helping", "label", "thread")

    def __init__(self, ctx, lock):
        self.ctx = ctx
        self.label = "engine:comm" if ctx is None else f"engine:{ctx}"
        self.heap: list = []
        self.cond = threading.Condition(lock)
        self.helping = 0
        self.thread = None


class _Local(threading.local):
    def __init__(self):
        self.worker = None  # the _Worker this thread is, if any
        self.stack = []  # pushed work running on this thread, outermost first


_tls = _Local()
_var_lock = threading.Lock()
_NO_VAR = object()


def new_var(name: str = "") -> Var:
    """A fresh engine variable (for state that is not an NDArray)."""
    return Var(name)


def var_of(x) -> Var:
    """The engine variable of ``x`` (a Var, or an NDArray: created on first use)."""
    if isinstance(x, Var):
        return x
    v = getattr(x, "_var", _NO_VAR)
    if v is _NO_VAR:
        raise TypeError(f"engine: variables are NDArrays or engine.Var objects, got "
                        f"{type(x).__name__}")
    if v is None:
        with _var_lock:  # two threads naming a new array at once get one Var
            v = x._var
            if v is None:
                v = x._var = Var()
    return v


def _key(ctx):
    if ctx is None or ctx == COMM:
        return None
    return ctx if isinstance(ctx, Context) else Context(ctx)


def _dedupe(items: Iterable, exclude=()) -> tuple:
    out = []
    seen = {id(v) for v in exclude}
    for x in items:
        v = var_of(x)
        if id(v) not in seen:
            seen.add(id(v))
            out.append(v)
    return tuple(out)


class Engine:
    """The dependency engine (threaded, or naive: synchronous inside ``push``)."""

    def __init__(self, kind: str = "ThreadedEngine"):
        if kind not in _TYPES:
            raise ValueError(f"engine: unknown engine type {kind!r}; expected one of {_TYPES}")
        self.kind = kind
        self.naive = kind == "NaiveEngine"
        self._lock = threading.Lock()
        self._done = threading.Condition(self._lock)
        self._workers: dict = {}
        self._pending: dict = {}  # seq -> op, for all work not finished
        self._seq_heap: list = []  # the keys of _pending (lazily pruned)
        self._roots: dict = {}  # root seq -> number of unfinished ops with that root
        self._root_heap: list = []  # the keys of _roots (lazily pruned)
        self._nseq = 0
        self._failures: list = []
        self._poisoned: list = []

    # ------------------------------------------------------------------ push
    def push(self, fn: Callable[[], object], read_vars=(), write_vars=(), ctx=None,
             priority: int = 0, name: str = "op") -> None:
        if not callable(fn):
            raise TypeError(f"engine.push({name!r}): fn must be callable, got "
                            f"{type(fn).__name__}")
        writes = _dedupe(write_vars)
        reads = _dedupe(read_vars, writes)
        key = _key(ctx)
        stack = _tls.stack
        with self._lock:
            worker = None if self.naive else self._worker(key)
            seq = self._nseq
            self._nseq += 1
            op = _Op(fn, reads, writes, worker, int(priority), str(name), seq,
                     stack[-1].root if stack else seq)
            self._add_pending(op)
            if not self.naive:
                self._enqueue(op)
        if self.naive:
            self._execute(op, key)

    def _worker(self, key):
        w = self._workers.get(key)
        if w is None:
            w = self._workers[key] = _Worker(key, self._lock)
            w.thread = threading.Thread(target=self._loop, args=(w,), name=w.label,
                                        daemon=True)
            w.thread.start()
        return w

    def _enqueue(self, op):
        for v in op.reads:
            sat = v.nwrites == 0
            v.queue.append([op, False, sat])
            op.nwait += not sat
        for v in op.writes:
            sat = not v.queue
            v.queue.append([op, True, sat])
            v.nwrites += 1
            op.nwait += not sat
        if op.nwait == 0:
            self._ready(op)

    def _ready(self, op):
        w = op.worker
        heapq.heappush(w.heap, (-op.priority, op.seq, op))
        w.cond.notify()
        if w.helping:
            self._done.notify_all()

    def _advance(self, v):
        """Mark as satisfied the entries of ``v`` that may run now (lock held)."""
        for i, e in enumerate(v.queue):
            if e[1]:
                if i == 0 and not e[2]:
                    self._satisfy(e)
                return
            if not e[2]:
                self._satisfy(e)

    def _satisfy(self, e):
        e[2] = True
        op = e[0]
        op.nwait -= 1
        if op.nwait == 0:
            self._ready(op)

    def _leave(self, op, v):
        """Remove ``op``'s entry from ``v``'s queue (lock held)."""
        q = v.queue
        for i, e in enumerate(q):
            if e[0] is op:
                del q[i]
                if e[1]:
                    v.nwrites -= 1
                if i == 0:
                    self._advance(v)
                return

    # ------------------------------------------------------------------ running
    def _loop(self, w):
        _tls.worker = w
        lock = self._lock
        while True:
            with lock:
                while not w.heap:
                    w.cond.wait()
                op = heapq.heappop(w.heap)[2]
            with contextlib.suppress(Exception):  # _execute stores failures itself
                self._execute(op, w.ctx)

    def _execute(self, op, ctx):
        failure = None
        try:
            for v in op.reads + op.writes:
                if v.error is not None:
                    failure = v.error
                    break
            if failure is None:
                failure = self._run(op, ctx)
                if failure is not None:
                    with self._lock:
                        self._failures.append(failure)
        finally:
            self._complete(op, failure)

    @staticmethod
    def _run(op, ctx):
        """Run ``op.fn``; its failure, or None."""
        failure = None
        t0 = time.perf_counter() if _prof._on else 0.0
        stack = _tls.stack
        stack.append(op)
        try:
            if ctx is not None and ctx.device_type != "cpu":
                with ctx.device_guard():
                    op.fn()
                    ctx.xp.cuda.get_current_stream().synchronize()
            else:
                op.fn()
        except BaseException as e:  # noqa: BLE001 - every failure is stored, none lost
            failure = _Failure(op.name, e, op.seq)
        finally:
            stack.pop()
        if t0:
            w = _tls.worker
            label = w.label if w is not None else "engine:comm" if ctx is None \
                else f"engine:{ctx}"  # the naive engine runs work in the pushing thread
            _prof.record(op.name, "engine", t0, time.perf_counter(), label,
                         {"device": "comm" if ctx is None else str(ctx),
                          "priority": op.priority, "failed": failure is not None})
        return failure

    def _complete(self, op, failure):
        with self._lock:
            if failure is not None:
                for v in op.writes:
                    if v.error is None:
                        v.error = failure
                        self._poisoned.append(v)
            for v in op.reads + op.writes:
                if op.released is None or v not in op.released:
                    self._leave(op, v)
            op.done = True
            op.fn = None
            del self._pending[op.seq]
            n = self._roots[op.root] - 1
            if n:
                self._roots[op.root] = n
            else:
                del self._roots[op.root]
            self._done.notify_all()

    def _add_pending(self, op):
        self._pending[op.seq] = op
        heapq.heappush(self._seq_heap, op.seq)
        n = self._roots.get(op.root, 0)
        if not n:
            heapq.heappush(self._root_heap, op.root)
        self._roots[op.root] = n + 1

    def _min_seq(self):
        h = self._seq_heap
        while h and h[0] not in self._pending:
            heapq.heappop(h)
        return h[0] if h else None

    def _min_root(self):
        h = self._root_heap
        while h and h[0] not in self._roots:
            heapq.heappop(h)
        return h[0] if h else None

    def release(self, x) -> None:
        """Inside running pushed work: end its hold on ``x`` early (see module docs)."""
        v = var_of(x)
        stack = _tls.stack
        if not stack:
            raise ValueError("engine.release: called outside pushed work")
        op = stack[-1]
        if v not in op.reads and v not in op.writes:
            raise ValueError(f"engine.release: work {op.name!r} did not name this variable")
        ctx = op.worker.ctx if op.worker is not None else None
        if ctx is not None and ctx.device_type != "cpu":  # its kernels must be done too
            ctx.xp.cuda.get_current_stream().synchronize()
        with self._lock:
            if op.released is None:
                op.released = []
            if v in op.released:
                return
            op.released.append(v)
            self._leave(op, v)

    # ------------------------------------------------------------------ waiting
    def _horizon(self):
        """``(blocks, cutoff)``: which unfinished work this thread's waits wait for.

        Outside pushed work: the work pushed before the wait began, and whatever that
        work pushes itself (same ``root``). Inside pushed work: only work pushed before
        the running work (``seq < cutoff``); later work may depend on it. Work that a
        worker runs while it waits was pushed before the work it runs inside, so the
        innermost running work has the smallest number (the naive engine is the other way
        round: hence the ``min``).
        """
        stack = _tls.stack
        if stack:
            cutoff = min(op.seq for op in stack)
            return (lambda op: op.seq < cutoff), cutoff
        limit = self._nseq
        return (lambda op: op.root < limit), None

    def _wait(self, busy, cutoff):
        """Wait while ``busy()`` (lock held). A worker thread runs ready earlier work of its
        own queue while it waits, so waits inside pushed work cannot deadlock."""
        w = _tls.worker
        if w is None or self.naive:
            while busy():
                self._done.wait()
            return
        w.helping += 1
        try:
            while busy():
                op = self._pop_before(w, cutoff)
                if op is None:
                    self._done.wait()
                    continue
                self._lock.release()
                try:
                    self._execute(op, w.ctx)
                finally:
                    self._lock.acquire()
        finally:
            w.helping -= 1

    @staticmethod
    def _pop_before(w, cutoff):
        best = None
        for i, item in enumerate(w.heap):
            if (cutoff is None or item[1] < cutoff) and (best is None or item < w.heap[best]):
                best = i
        if best is None:
            return None
        item = w.heap.pop(best)
        heapq.heapify(w.heap)
        return item[2]

    def wait_for_var(self, x, write: bool = False, where: str = "") -> None:
        v = var_of(x)
        with self._lock:
            blocks, cutoff = self._horizon()

            def busy():
                return any((write or e[1]) and blocks(e[0]) for e in v.queue)

            if v.queue and busy():
                self._wait(busy, cutoff)
            failure = v.error
        if failure is not None:
            failure.reported = True
            raise failure.error(where)

    def wait_all(self) -> None:
        with self._lock:
            _, cutoff = self._horizon()
            if cutoff is None:
                limit = self._nseq

                def busy():
                    r = self._min_root()
                    return r is not None and r < limit
            else:
                def busy():
                    s = self._min_seq()
                    return s is not None and s < cutoff

            self._wait(busy, cutoff)
            failures = sorted((f for f in self._failures if not f.reported),
                              key=lambda f: f.seq)  # in push order
            self._failures = []
            for v in self._poisoned:
                v.error = None
            self._poisoned = []
        if failures:
            err = failures[0].error("waitall")
            if len(failures) > 1:
                others = ", ".join(f.name for f in failures[1:])
                err = EngineError(f"{err} (and {len(failures) - 1} more failure(s): {others})",
                                  failures[0].name)
                err.__cause__ = failures[0].exc
            raise err

    def pending(self) -> int:
        """How many pushed operations have not finished."""
        return len(self._pending)


# ---------------------------------------------------------------------- module API

def _from_env() -> str:
    kind = os.environ.get("KBACKEND_ENGINE_TYPE") or os.environ.get("MXNET_ENGINE_TYPE") \
        or "ThreadedEngine"
    if kind in ("ThreadedEnginePerDevice", "ThreadedEnginePooled"):
        kind = "ThreadedEngine"  # MXNet's threaded variants all mean "threaded" here
    if kind not in _TYPES:
        raise ValueError(f"KBACKEND_ENGINE_TYPE={kind!r}: expected one of {_TYPES}")
    return kind


_engine = Engine(_from_env())


def engine_type() -> str:
    """The current engine's type: ``'ThreadedEngine'`` or ``'NaiveEngine'``."""
    return _engine.kind


def set_engine(kind: str) -> str:
    """Switch the engine type (waits for all pending work first); returns the previous.

    Example:
        >>> from core import engine
        >>> prev = engine.set_engine("NaiveEngine")
        >>> engine.engine_type()
        'NaiveEngine'
        >>> _ = engine.set_engine(prev)
    """
    global _engine
    if kind not in _TYPES:
        raise ValueError(f"set_engine: unknown engine type {kind!r}; expected one of {_TYPES}")
    prev = _engine.kind
    if kind != prev:
        _engine.wait_all()
        _engine = Engine(kind)
    return prev


@contextlib.contextmanager
def naive():
    """Run the block with the synchronous naive engine (for tests and debugging)."""
    prev = set_engine("NaiveEngine")
    try:
        yield
    finally:
        set_engine(prev)


def push(fn: Callable[[], object], read_vars=(), write_vars=(), ctx=None, priority: int = 0,
         name: str = "op") -> None:
    """Push ``fn()`` to run once the work before it on its variables is done.

    Args:
        fn: a callable without arguments; its return value is ignored.
        read_vars: NDArrays or Vars that ``fn`` reads.
        write_vars: NDArrays or Vars that ``fn`` writes (a variable in both is a write).
        ctx: the Context whose worker runs ``fn``; None or :data:`COMM` for the
            copy/communication worker.
        priority: among ready work on one worker, higher runs first.
        name: the operator's name, used in errors and in the profiler's trace.

    Returns:
        None at once (the threaded engine); the naive engine runs ``fn`` first.

    Example:
        >>> from core import engine, nd, cpu
        >>> w, y = nd.ones((2, 2), ctx=cpu(1)), nd.zeros((2, 2), ctx=cpu(1))
        >>> def step():
        ...     y[:] = w @ w
        >>> engine.push(step, read_vars=[w], write_vars=[y], ctx=cpu(1), name="step")
        >>> (y + 1).asnumpy().tolist()  # the dispatcher waits for the pending write
        [[3.0, 3.0], [3.0, 3.0]]
    """
    _engine.push(fn, read_vars, write_vars, ctx, priority, name)


def wait_for_var(x, write: bool = False) -> None:
    """Block until pending writes on ``x`` (all pending work when ``write``) are done.

    Raises:
        EngineError: work that wrote ``x`` failed (or depended on failed work).
    """
    _engine.wait_for_var(x, write)


def wait_to_read(x) -> None:
    """Block until ``x`` (an NDArray or Var) can be read; raises EngineError on failure."""
    if isinstance(x, Var) or x._var is not None:
        _engine.wait_for_var(x, False, "wait_to_read")


def wait_to_write(x) -> None:
    """Block until all pending work on ``x`` is done; raises EngineError on failure."""
    if isinstance(x, Var) or x._var is not None:
        _engine.wait_for_var(x, True, "wait_to_write")


def wait_all() -> None:
    """Block until all pushed work is done (MXNet's ``waitall``).

    Raises:
        EngineError: for the first failure not reported yet by another sync (once;
            all failures are cleared, so the engine stays usable).

    Example:
        >>> import core
        >>> from core import engine
        >>> engine.push(lambda: 1 / 0, name="divide_by_zero")
        >>> try:
        ...     core.waitall()
        ... except engine.EngineError as e:
        ...     print(e.op_name, type(e.__cause__).__name__)
        divide_by_zero ZeroDivisionError
        >>> core.waitall()  # raised once: the engine is usable again
    """
    try:
        _engine.wait_all()
    finally:
        cupy = sys.modules.get("cupy")
        if cupy is not None:
            with contextlib.suppress(Exception):
                for i in range(cupy.cuda.runtime.getDeviceCount()):
                    with cupy.cuda.Device(i):
                        cupy.cuda.get_current_stream().synchronize()


waitall = wait_all


def release(x) -> None:
    """Inside running pushed work: declare that it is done with ``x`` (an NDArray or Var
    it named), so later work on ``x`` may start before the rest of it finishes.

    Args:
        x: a variable the running work named in ``read_vars`` or ``write_vars``.
    """
    _engine.release(x)


# ---------------------------------------------------------------------- bulk execution

class _BulkLocal(threading.local):
    size = 0


_bulk = _BulkLocal()


def bulk_size() -> int:
    """This thread's bulk-size limit (see :func:`set_bulk_size`); 0 unless set."""
    return _bulk.size


def set_bulk_size(size: int) -> int:
    """Set this thread's limit on how many operators run as one bulk; returns the previous.

    MXNet's ``mx.engine.set_bulk_size``. In MXNet, bulking bundles consecutive small
    operators into one engine task. Here it is a hint: operators called from Python run
    in the dispatcher in call order either way, and hybridized graphs already run as one
    program, so the value is recorded (per thread, as in MXNet) and changes neither the
    order nor the results.

    Args:
        size: the maximum number of operators in a bulk (0 or 1: no bulking).

    Returns:
        The previous limit.

    Raises:
        ValueError: ``size`` is not a non-negative integer.

    Example:
        >>> from core import engine
        >>> prev = engine.set_bulk_size(16)
        >>> engine.set_bulk_size(prev)
        16
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ValueError(f"engine.set_bulk_size: size must be a non-negative int, got {size!r}")
    prev, _bulk.size = _bulk.size, size
    return prev


class _BulkScope:
    """The context manager :func:`bulk` returns: sets the bulk size, restores it on exit."""

    def __init__(self, size: int):
        self._size = size
        self._old_size = None

    def __enter__(self):
        self._old_size = set_bulk_size(self._size)
        return self

    def __exit__(self, ptype, value, trace):
        set_bulk_size(self._old_size)


def bulk(size: int) -> _BulkScope:
    """A ``with`` scope in which up to ``size`` operators may run as one bulk (a hint here;
    see :func:`set_bulk_size`). MXNet's ``mx.engine.bulk``.

    Example:
        >>> from core import engine, nd
        >>> with engine.bulk(10):
        ...     x = nd.ones((3,))
        ...     for _ in range(5):
        ...         x += 1
        ...     engine.bulk_size()
        10
        >>> x.asnumpy().tolist(), engine.bulk_size()
        ([6.0, 6.0, 6.0], 0)
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ValueError(f"engine.bulk: size must be a non-negative int, got {size!r}")
    return _BulkScope(size)


def pending() -> int:
    """How many pushed operations have not finished yet."""
    return _engine.pending()


def current_op() -> str | None:
    """The name of the pushed work running on this thread, or None."""
    stack = _tls.stack
    return stack[-1].name if stack else None


def _wait_read(arr, where: str) -> None:
    """Dispatcher hook: ``arr._var`` is not None; wait for its pending writes."""
    v = arr._var
    if v.nwrites or v.error is not None:  # no pending write, no failure: nothing to wait for
        _engine.wait_for_var(v, False, where)


def _wait_write(arr, where: str) -> None:
    """In-place write hook: ``arr._var`` is not None; wait for all its pending work."""
    v = arr._var
    if v.queue or v.error is not None:
        _engine.wait_for_var(v, True, where)


@atexit.register
def _drain():
    with contextlib.suppress(Exception):
        _engine.wait_all()


def _after_fork_in_child():
    # The workers do not exist in a forked child, and the lock may have been held by one
    # of them: start a fresh engine (arrays with work in flight at the fork stay pending).
    global _engine
    _engine = Engine(_engine.kind)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
