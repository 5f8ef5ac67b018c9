"""CPU kernels compiled by numba: a lazy import, one switch, one thread knob.

A kernel is a plain Python function over NumPy arrays and scalars, written in the
subset numba compiles (loops, :func:`prange` for parallel loops, math on scalars,
calls of other kernels),
declared in its operator's own file right under the operator with :func:`kernel`.
Every kernel has a NumPy twin (the operator's ``xp`` code), which runs instead when
numba is switched off or missing, on other array modules (CuPy), and in the tests
that compare the two. Nothing here imports numba until a kernel is first called, so
``import core`` does not pay numba's start-up.

- ``KBACKEND_NUMBA=0`` (or :func:`set_enabled`/:func:`disabled`) runs the twins.
- Compiled kernels are cached on disk (numba's ``cache=True``, beside the source in
  ``__pycache__``), so only the first run of a process tree pays compilation.
- Threads: parallel kernels use numba's thread-safe threading layer (OpenMP or TBB; the
  engine's workers may call kernels concurrently) and as many threads as BLAS is given.
  ``KBACKEND_NUM_THREADS=N`` (or :func:`set_num_threads`) sets both, through
  threadpoolctl for BLAS, so numba and OpenBLAS never oversubscribe the cores: a step
  runs its GEMMs and its kernels one after the other, each on all N threads.

Example:
    >>> import numpy
    >>> from core import cpu_kernels as cpu
    >>> @cpu.kernel()
    ... def axpy(a, x, y):
    ...     for i in range(x.shape[0]):
    ...         y[i] += a * x[i]
    >>> y = numpy.zeros(3)
    >>> if cpu.enabled():
    ...     axpy(2.0, numpy.ones(3), y)
    ... else:
    ...     y += 2.0 * numpy.ones(3)
    >>> y.tolist()
    [2.0, 2.0, 2.0]
"""
from __future__ import annotations

import contextlib
import os
import threading
import types
from typing import Callable

import numpy

__all__ = ["Kernel", "disabled", "enabled", "kernel", "num_threads", "prange", "ready",
           "set_enabled", "set_num_threads", "wait_ready"]

_state = {"enabled": None, "threads": None, "configured": False, "ready": False,
          "warming": None}
_lock = threading.Lock()


def _numba():
    """The numba module, configured once (threading layer, thread count), or None."""
    # An OpenMP team spin-waits after each parallel region (GNU's default: about 300,000
    # spins) on the cores BLAS's threads are about to need: with kernels between GEMMs a
    # 2-thread LeNet step took 33 ms, 13.5 ms without the spinning. The OpenMP runtime
    # reads this when it loads (numba loads it on import); a value the user set wins.
    os.environ.setdefault("GOMP_SPINCOUNT", "0")
    os.environ.setdefault("KMP_BLOCKTIME", "0")
    try:
        import numba
    except ImportError:
        return None
    with _lock:
        if not _state["configured"]:
            numba.config.THREADING_LAYER = "threadsafe"
            _set_numba_threads(numba, num_threads())
            _state["configured"] = True
    return numba


def _set_numba_threads(numba, n: int) -> None:
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))


def enabled() -> bool:
    """Whether compiled kernels run (numba installed and not switched off)."""
    if _state["enabled"] is None:
        on = os.environ.get("KBACKEND_NUMBA", "1").strip().lower() not in ("0", "false", "off")
        if on:
            try:
                import importlib.util

                on = importlib.util.find_spec("numba") is not None
            except (ImportError, ValueError):
                on = False
        _state["enabled"] = on
    return _state["enabled"]


def ready() -> bool:
    """Whether kernels run now without waiting for numba's start-up.

    Importing numba and setting up its CPU target takes about 0.75 s once per process
    (0.3 s of imports, 0.45 s of target set-up, measured with a warm disk cache), which
    lands on the first training step. Kernels whose results equal their NumPy twins' bit
    for bit (the optimizer updates but LAMB, fused elementwise programs) ask this instead
    of :func:`enabled`. By default the first call starts numba in the foreground (it
    returns True after waiting). With ``KBACKEND_NUMBA_BACKGROUND=1`` it starts numba in a
    background thread and returns False until it is up, so those kernels' twins run
    meanwhile, which changes nothing but the time: the first step does not wait, but
    the steps during the start run slower (the start holds the GIL: a Gluon MLP's next 30
    steps took 0.86 s against 0.75 s with the start in front). Other kernels call
    :func:`enabled` and, the first time, wait for numba.

    Returns:
        True when kernels are on and numba is up.
    """
    if not enabled():
        return False
    if _state["ready"]:
        return True
    if os.environ.get("KBACKEND_NUMBA_BACKGROUND", "0").strip().lower() in ("0", "false", "off",
                                                                          ""):
        wait_ready()
        return _state["ready"]
    with _lock:
        if _state["warming"] is None:
            t = threading.Thread(target=_warm_up, name="core-numba-start", daemon=True)
            _state["warming"] = t
            t.start()
    return _state["ready"]


def up() -> bool:
    """Whether numba is started and kernels are on; never starts numba.

    For kernels that pay only where numba runs anyway: the one-pass activation gradients
    save microseconds per call, while starting numba costs 0.5-0.75 s, which a short run
    whose other work needs no kernel (an imperative MLP with a plain update) would pay for
    nothing. Their twins, equal bit for bit, run until something else starts numba.
    """
    return bool(_state["ready"]) and enabled()


def wait_ready() -> bool:
    """Start numba now (in this thread, or wait for the background start) and return
    :func:`enabled`; afterwards every kernel runs from its first call."""
    if not enabled():
        return False
    t = _state["warming"]
    if isinstance(t, threading.Thread) and t is not threading.current_thread():
        t.join()
    if not _state["ready"]:
        _warm_up()
    return True


def _warm_up() -> None:
    """Import and configure numba, and set up its CPU target by calling a tiny cached
    kernel; then :func:`ready` says True."""
    try:
        if _numba() is not None:
            _touch(numpy.zeros(1))
            _state["ready"] = True
    except Exception:  # noqa: BLE001 - kernels then start on first use, in the foreground
        _state["ready"] = False
        _state["warming"] = False


def set_enabled(on: bool) -> None:
    """Run compiled kernels (True) or their NumPy twins (False) from now on."""
    _state["enabled"] = bool(on) and _numba() is not None


@contextlib.contextmanager
def disabled():
    """A scope in which every kernel's NumPy twin runs instead of the kernel."""
    before = enabled()
    _state["enabled"] = False
    try:
        yield
    finally:
        _state["enabled"] = before


def num_threads() -> int:
    """The thread count kernels and BLAS use (``KBACKEND_NUM_THREADS``, else all cores)."""
    if _state["threads"] is None:
        raw = os.environ.get("KBACKEND_NUM_THREADS", "").strip()
        _state["threads"] = int(raw) if raw.isdigit() and int(raw) > 0 else (os.cpu_count() or 1)
    return _state["threads"]


def set_num_threads(n: int) -> None:
    """Use ``n`` threads in parallel kernels and in BLAS (through threadpoolctl).

    Args:
        n: a positive thread count.
    """
    if int(n) < 1:
        raise ValueError(f"core.cpu_kernels.set_num_threads: n must be >= 1, got {n!r}")
    _state["threads"] = int(n)
    if _state["configured"]:
        _set_numba_threads(_numba(), int(n))
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(int(n), user_api="blas")


def apply_thread_setting() -> None:
    """Apply ``KBACKEND_NUM_THREADS`` to BLAS when it is set (``import core`` calls this)."""
    if os.environ.get("KBACKEND_NUM_THREADS", "").strip():
        set_num_threads(num_threads())


class Kernel:
    """A function compiled by numba on its first call (see :func:`kernel`)."""

    def __init__(self, fn: Callable, parallel: bool, fastmath: bool):
        self.py_func = fn
        self.parallel, self.fastmath = parallel, fastmath
        self._compiled = None
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__

    def compiled(self):
        """The numba dispatcher (compiling happens per argument types, on call)."""
        if self._compiled is None:
            numba = _numba()
            if numba is None:
                raise RuntimeError(f"core.cpu_kernels: kernel {self.__name__} needs numba, which "
                                   f"is not installed (pip install numba)")
            # Cached on disk where the source is a file (not for doctests or exec'd code).
            cache = os.path.isfile(self.py_func.__code__.co_filename)
            # error_model="numpy": x / 0 gives inf/nan as in the NumPy twin, never raises.
            self._compiled = numba.njit(cache=cache, nogil=True, parallel=self.parallel,
                                        fastmath=self.fastmath, error_model="numpy")(
                                            self._rebound(numba))
        return self._compiled

    def _rebound(self, numba):
        """The function with its globals as numba must see them: ``prange`` is
        ``numba.prange`` and other kernels are their compiled dispatchers."""
        fn = self.py_func
        names = {**fn.__globals__, "prange": numba.prange}
        for name in fn.__code__.co_names:
            if isinstance(names.get(name), Kernel):
                names[name] = names[name].compiled()
        out = types.FunctionType(fn.__code__, names, fn.__name__, fn.__defaults__,
                                 fn.__closure__)
        out.__qualname__, out.__module__ = fn.__qualname__, fn.__module__
        return out

    def __call__(self, *args):
        return self.compiled()(*args)

    def __repr__(self) -> str:
        return f"<core.cpu_kernels.Kernel {self.__name__} parallel={self.parallel}>"


def kernel(*, parallel: bool = False, fastmath: bool = False) -> Callable[[Callable], Kernel]:
    """Declare a numba kernel; it compiles on first call and is cached on disk.

    Args:
        parallel: compile with ``parallel=True`` (loops written with ``numba.prange``
            run on :func:`num_threads` threads).
        fastmath: allow numba's fast-math (reassociation); off by default, so results
            match the NumPy twin to rounding.

    Returns:
        A decorator turning a function into a :class:`Kernel`.
    """
    def wrap(fn: Callable) -> Kernel:
        return Kernel(fn, parallel, fastmath)

    return wrap


@kernel()
def _touch(a):
    """A trivial kernel: calling it sets up numba's CPU target (``_warm_up``)."""
    a[0] += 0.0


def prange(*args):
    """``numba.prange`` inside compiled kernels; ``range`` when a kernel runs as Python."""
    return range(*args)
