"""The profiler: a Chrome trace of operator execution per device and of communication.

While the profiler runs, every operator the dispatcher runs, every piece of work the
engine runs (``core.engine.push``) and every :func:`scope` adds one complete event
(``"ph": "X"``) to a buffer; :func:`dump` writes the buffer as Chrome trace JSON,
which ``chrome://tracing`` and https://ui.perfetto.dev open. Events carry
``pid`` = the process rank (MPI's, else 0) and an integer ``tid`` per track, named by
``thread_name`` metadata events: the device (``cpu(0)``) for operators dispatched
from the program's threads, ``engine:cpu(0)`` / ``engine:comm`` for the engine's
workers (operators that pushed work dispatches appear nested in it there). Categories:
``"operator"``, ``"engine"`` and ``"communication"`` (or what a ``scope`` names).
On GPU an operator's event is its launch, not its kernel time.

When the profiler is stopped, dispatch pays one global flag test per operator.

Example:
    >>> import json, os, tempfile
    >>> from core import nd, profiler
    >>> path = os.path.join(tempfile.mkdtemp(), "trace.json")
    >>> profiler.set_config(filename=path)
    >>> profiler.set_state("run")
    >>> y = nd.ones((2, 2)) + 1
    >>> with profiler.scope("allreduce", "communication"):
    ...     pass
    >>> profiler.set_state("stop")
    >>> profiler.dump()
    >>> names = {e["name"] for e in json.load(open(path))["traceEvents"]}
    >>> "add" in names and "allreduce" in names
    True
"""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
import time

__all__ = ["dump", "dumps", "pause", "record", "resume", "scope", "set_config", "set_state",
           "state"]

# Read by core.engine and core.ops.dispatch on their hot paths: keep it a plain bool.
_on = False

_CATEGORIES = ("operator", "engine", "communication")
_OPTIONS = ("profile_all", "profile_symbolic", "profile_imperative", "profile_memory",
            "profile_api", "aggregate_stats", "continuous_dump", "dump_period",
            "profile_process")


class _Config:
    def __init__(self):
        self.filename = "profile.json"
        self.options: dict = {}
        self.state = "stop"
        self.paused = False


_config = _Config()
_events: list = []
_tids: dict = {}
_tid_lock = threading.Lock()
_t_origin = time.perf_counter()


_pid: list = []  # the process rank, read from the environment once


def _rank() -> int:
    if _pid:
        return _pid[0]
    _pid.append(_env_rank())
    return _pid[0]


def _env_rank() -> int:
    for k in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK",
              "SLURM_PROCID"):
        v = os.environ.get(k)
        if v is not None and v.isdigit():
            return int(v)
    return 0


def _sync_flag() -> None:
    global _on
    _on = _config.state == "run" and not _config.paused
    from .ops import dispatch

    dispatch._profiling = _on


def set_config(filename: str = "profile.json", **options) -> None:
    """Set the output file and options (MXNet's ``mx.profiler.set_config``).

    Args:
        filename: where :func:`dump` writes the trace.
        **options: MXNet's flags (``profile_all``, ``profile_symbolic``,
            ``profile_imperative``, ``profile_memory``, ``profile_api``,
            ``aggregate_stats``, ``continuous_dump``, ``dump_period``,
            ``profile_process``), accepted and kept; every operator is always traced.

    Raises:
        TypeError: an unknown option.
    """
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise TypeError(f"profiler.set_config: unknown option(s) {unknown}; "
                        f"accepted: filename, {', '.join(_OPTIONS)}")
    _config.filename = os.fspath(filename)
    _config.options.update(options)


def set_state(state: str = "stop", profile_process: str = "worker") -> None:
    """Start (``'run'``) or stop (``'stop'``) recording.

    Args:
        state: ``'run'`` or ``'stop'``.
        profile_process: accepted for MXNet compatibility (``'worker'``).
    """
    if state not in ("run", "stop"):
        raise ValueError(f"profiler.set_state: state must be 'run' or 'stop', got {state!r}")
    _config.state = state
    _config.paused = False
    _sync_flag()


def state() -> str:
    """``'run'`` or ``'stop'``."""
    return _config.state


def pause(profile_process: str = "worker") -> None:
    """Stop recording until :func:`resume` (the state stays ``'run'``)."""
    _config.paused = True
    _sync_flag()


def resume(profile_process: str = "worker") -> None:
    """Resume recording after :func:`pause`."""
    _config.paused = False
    _sync_flag()


def _tid(label: str) -> int:
    t = _tids.get(label)
    if t is None:
        with _tid_lock:
            t = _tids.setdefault(label, len(_tids) + 1)
    return t


def _default_label() -> str:
    th = threading.current_thread()
    return "host" if th is threading.main_thread() else f"host:{th.name}"


def record(name: str, category: str, t_start: float, t_end: float, track: str | None = None,
           args: dict | None = None) -> None:
    """Add one complete event (times from ``time.perf_counter()``) on track ``track``.

    Args:
        name: the event's name (an operator's, a pushed op's).
        category: ``'operator'``, ``'engine'``, ``'communication'`` or another label.
        t_start: start time, ``time.perf_counter()`` seconds.
        t_end: end time, same clock.
        track: the track (a device name such as ``'cpu(0)'``); default: the thread.
        args: extra fields shown with the event.
    """
    if not _on:
        return
    ev = {"name": name, "cat": category, "ph": "X",
          "ts": round((t_start - _t_origin) * 1e6, 3),
          "dur": round(max(t_end - t_start, 0.0) * 1e6, 3),
          "pid": _rank(), "tid": _tid(track or _default_label())}
    if args:
        ev["args"] = args
    _events.append(ev)  # list.append is atomic under the GIL


def record_operator(name: str, ctx, t_start: float) -> None:
    """Dispatcher hook: an operator on ``ctx`` ran from ``t_start`` until now."""
    t_end = time.perf_counter()
    w = _engine_tls().worker
    track = w.label if w is not None else str(ctx)
    record(name, "operator", t_start, t_end, track, {"device": str(ctx)})


def _engine_tls():
    from .engine import _tls  # core.engine imports this module: import late

    return _tls


@contextlib.contextmanager
def scope(name: str, category: str = "communication", ctx=None):
    """Record the time the block takes as one event (kvstore and parallel use it).

    Args:
        name: the span's name (e.g. ``'allreduce grad3'``).
        category: the event category; ``'communication'`` by default.
        ctx: the device the span belongs to; default: the current track (the engine
            worker or thread running the block).

    Example:
        >>> from core import profiler
        >>> with profiler.scope("pull weights"):
        ...     pass
    """
    if not _on:
        yield
        return
    t0 = time.perf_counter()
    try:
        yield
    finally:
        track = None
        if ctx is not None:
            track = str(ctx)
        else:
            w = _engine_tls().worker
            track = w.label if w is not None else None
        record(name, category, t0, time.perf_counter(), track,
               {"device": str(ctx)} if ctx is not None else None)


def _trace(events) -> dict:
    pid = _rank()
    meta = [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
             "args": {"name": f"kbackend rank {pid}"}}]
    meta += [{"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
              "args": {"name": label}} for label, tid in sorted(_tids.items(),
                                                                key=lambda kv: kv[1])]
    meta += [{"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid,
              "args": {"sort_index": tid}} for tid in sorted(_tids.values())]
    return {"traceEvents": meta + sorted(events, key=lambda e: e["ts"]),
            "displayTimeUnit": "ms"}


def dumps(reset: bool = False) -> str:
    """The trace recorded so far as Chrome trace JSON text.

    Args:
        reset: clear the recorded events afterwards.
    """
    text = json.dumps(_trace(_events))
    if reset:
        _events.clear()
    return text


def dump(finished: bool = True) -> None:
    """Write the trace to the configured file (atomically: a temporary file, renamed).

    Args:
        finished: also stop the profiler and clear the recorded events.
    """
    path = _config.filename
    text = json.dumps(_trace(_events))
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".profile-", suffix=".json", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    if finished:
        set_state("stop")
        _events.clear()
