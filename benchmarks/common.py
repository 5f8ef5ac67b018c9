"""What the workloads share: timing, result rows, the machine report, optional torch."""
from __future__ import annotations

import gc
import os
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Options:
    """Run settings given to every workload."""

    quick: bool = False
    repeats: int = 7
    torch: object = None  # the torch module when it is importable, else None

    def reps(self, full: int, quick: int) -> int:
        return quick if self.quick else full


class Timing(float):
    """A median time in seconds that also knows its spread over the repeats."""

    spread: float = 0.0  # (max - min) / median

    @classmethod
    def of(cls, times: list) -> Timing:
        med = statistics.median(times)
        t = cls(med)
        t.spread = (max(times) - min(times)) / med if med > 0 else 0.0
        return t

    def per(self, n: int) -> Timing:
        t = Timing(self / n)
        t.spread = self.spread
        return t


@dataclass
class Row:
    """One line of a workload's table: a timing (seconds per ``unit``) or a ratio."""

    label: str
    seconds: float | None = None
    unit: str = "op"
    ratio: float | None = None
    extra: dict = field(default_factory=dict)

    def value(self) -> str:
        if self.ratio is not None:
            return f"{self.ratio:.2f}x"
        return f"{format_seconds(self.seconds)}/{self.unit}"

    def note(self) -> str:
        spread = getattr(self.seconds, "spread", None)
        return "" if spread is None else f"  spread {spread:4.0%}"


def format_seconds(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.2f} us"
    if s < 1.0:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def median_time(fn: Callable[[], object], *, number: int, repeats: int, warmup: int = 1,
                setup: Callable[[], object] | None = None) -> float:
    """Median over ``repeats`` of the time per call of ``fn``, each repeat ``number`` calls.

    ``warmup`` repeats run first and are not counted. The garbage collector is off
    while a repeat is timed (as in ``timeit``); ``setup`` runs untimed before each one.
    The result's ``spread`` is (max - min) / median over the repeats: a large one means
    the machine was busy with something else.
    """
    times = []
    for r in range(warmup + repeats):
        if setup is not None:
            setup()
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            dt = time.perf_counter() - t0
        finally:
            gc.enable()
        if r >= warmup:
            times.append(dt / number)
    return Timing.of(times)


def median_times(cases: dict, *, number: int, repeats: int, warmup: int = 1) -> dict:
    """``{name: median seconds per call}`` for several ``{name: fn}`` timed interleaved.

    Each repeat times every case in turn, so a change in the machine's load (other
    processes on a small shared machine) affects all cases alike and their ratios
    stay meaningful. Otherwise as :func:`median_time`.
    """
    times: dict = {name: [] for name in cases}
    for r in range(warmup + repeats):
        for name, fn in cases.items():
            gc.collect()
            gc.disable()
            try:
                t0 = time.perf_counter()
                for _ in range(number):
                    fn()
                dt = time.perf_counter() - t0
            finally:
                gc.enable()
            if r >= warmup:
                times[name].append(dt / number)
    return {name: Timing.of(ts) for name, ts in times.items()}


def import_torch():
    """torch on the CPU with 2 threads, or None when it is not installed."""
    try:
        import torch
    except Exception:  # noqa: BLE001 - not installed, or broken: skip silently
        return None
    torch.set_num_threads(2)
    return torch


def machine_report(torch=None) -> list[str]:
    """The lines every run prints: Python, NumPy, CPU, and the BLAS as threadpoolctl sees it."""
    import numpy

    lines = [(f"python {platform.python_version()} ({platform.python_implementation()}), "
             f"numpy {numpy.__version__}, {platform.machine()}, {os.cpu_count()} CPUs")]
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        lines.append('threadpoolctl is not installed (pip install -e ".[dev]"): BLAS unknown')
        threadpool_info = None
    if threadpool_info is not None:
        pools = threadpool_info()
        if not pools:
            lines.append("threadpoolctl found no BLAS or OpenMP library")
        for p in pools:
            lines.append(
                f"{p.get('user_api')}: {p.get('internal_api')} {p.get('version')}, "
                f"kernel (architecture) {p.get('architecture', 'n/a')}, "
                f"threads {p.get('num_threads')}, {os.path.basename(p.get('filepath', ''))}")
    coretype = os.environ.get("OPENBLAS_CORETYPE")
    if coretype:
        lines.append(f"OPENBLAS_CORETYPE={coretype}")
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        if os.environ.get(var):
            lines.append(f"{var}={os.environ[var]}")
    if torch is not None:
        lines.append(f"torch {torch.__version__}, CPU, {torch.get_num_threads()} threads")
    load = load_average()
    if load:
        lines.append(f"load average (1, 5, 15 min) at start: {load} (other work, and "
                     "benchmarks that just ran, both count)")
    return lines


def load_average() -> str:
    """The 1, 5 and 15-minute load averages as text, or '' where the OS has none."""
    try:
        return ", ".join(f"{v:.2f}" for v in os.getloadavg())
    except (AttributeError, OSError):
        return ""


def check_close(what: str, pairs, *, rtol: float = 1e-4, atol: float = 1e-5) -> float:
    """Raise RuntimeError unless every ``(name, got, want)`` in ``pairs`` agrees.

    ``got`` and ``want`` are scalars or arrays (anything ``numpy.asarray`` takes: NDArrays
    via ``asnumpy()``, torch tensors via ``detach().numpy()``); they agree when
    ``|got - want| <= atol + rtol * |want|`` everywhere. A workload calls this once before
    timing, so the implementations it compares are known to do the same computation.
    Returns the largest absolute difference seen.
    """
    import numpy

    def arr(a):
        if hasattr(a, "asnumpy"):
            a = a.asnumpy()
        elif hasattr(a, "detach"):
            a = a.detach().numpy()
        return numpy.asarray(a, dtype=numpy.float64)

    worst = 0.0
    for name, got, want in pairs:
        g, w = arr(got), arr(want)
        if g.shape != w.shape:
            raise RuntimeError(f"{what}: {name} has shape {g.shape}, expected {w.shape}")
        diff = numpy.abs(g - w)
        worst = max(worst, float(numpy.nanmax(diff, initial=0.0)))
        bad = ~(diff <= atol + rtol * numpy.abs(w))  # NaN disagrees too
        if bad.any():
            i = numpy.unravel_index(int(numpy.argmax(bad)), g.shape)
            raise RuntimeError(f"{what}: {name} disagrees at {tuple(int(v) for v in i)}: "
                               f"{g[i]:.7g} vs {w[i]:.7g} (max abs difference "
                               f"{float(numpy.nanmax(diff, initial=0.0)):.3g}, rtol {rtol}, atol {atol})")
    return worst


def core_state(params, x, y):
    """float32 core copies of NumPy parameters (marked for gradients), data and labels."""
    from core import nd

    ps = [nd.array(p, dtype="float32") for p in params]
    for p in ps:
        p.attach_grad()
    return ps, nd.array(x, dtype="float32"), nd.array(y, dtype="int64")
