"""A fused elementwise program (``core.ops.fused``) as one compiled CPU kernel.

On CPU the fused operator runs its steps as NumPy ufuncs, one pass over memory per step
(``fused._run_cpu``). When numba is on (``core.cpu_kernels``) and the program qualifies,
:func:`run` generates instead one kernel that reads each input once, computes every step
per element in registers and writes only the results, in parallel over the elements
(``prange``): a ReLU's gradient ``g * (y > 0)`` on LeNet's first activation (737,280
float32 values) took 0.177 ms as two NumPy passes, 0.079 ms as one serial loop and
0.055 ms on 2 threads.

What qualifies, so that the results equal the ufunc passes bit for bit: steps whose
forward is one of the exactly rounded ufuncs below (arithmetic, comparisons, maximum and
minimum with NumPy's NaN propagation, absolute, square, sqrt; no transcendental
function, whose NumPy SIMD versions round differently from the C library's), each step
computed in the dtype NumPy's own loop would use (literals and operands cast to it), on
float32/float64/integer/bool inputs that are C-contiguous and of the result's shape or
0-d; anything else runs the ufunc passes.

The generated source is written once to a file named after its hash in a cache
directory (``KBACKEND_CACHE_DIR``, else ``~/.cache/kbackend``, else the temporary
directory) and imported from there, so numba's on-disk cache applies to it as to every
kernel: a program compiles once per machine, not once per process.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
import warnings

import numpy

from .. import cpu_kernels

# NumPy ufunc name -> the per-element expression over {a}, {b} (operands already in the
# loop dtype). Exactly rounded operations only (see the module docstring).
_EXPR = {
    "add": "{a} + {b}", "subtract": "{a} - {b}", "multiply": "{a} * {b}",
    "divide": "{a} / {b}", "true_divide": "{a} / {b}", "negative": "-{a}",
    # NaN propagates; of two equal values (+0 and -0) the second, as NumPy's SIMD loops
    "maximum": "({a} if ({a} > {b} or {a} != {a}) else {b})",
    "minimum": "({a} if ({a} < {b} or {a} != {a}) else {b})",
    "greater": "{a} > {b}", "greater_equal": "{a} >= {b}", "less": "{a} < {b}",
    "less_equal": "{a} <= {b}", "equal": "{a} == {b}", "not_equal": "{a} != {b}",
    "absolute": "abs({a})", "square": "{a} * {a}", "sqrt": "math.sqrt({a})",
}
_FLOAT_ONLY = {"sqrt", "divide", "true_divide"}
# The numba scalar type names the generated code casts with, by dtype.
_NB = {numpy.dtype(t): "numba.boolean" if t == "bool" else f"numba.{t}"
       for t in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float32", "float64")}

_lock = threading.Lock()
_kernels: dict = {}  # by the hash of the source
_by_program: dict = {}  # by (steps, loops, input kinds, outputs): the kernel or None
_UNSEEN = object()


def _cache_dir() -> str:
    root = os.environ.get("KBACKEND_CACHE_DIR")
    if not root:
        home = os.path.expanduser("~")
        user = os.getuid() if hasattr(os, "getuid") else "user"
        root = os.path.join(home, ".cache", "kbackend") if os.access(home, os.W_OK) else \
            os.path.join(tempfile.gettempdir(), f"kbackend-{user}")
    return os.path.join(root, "fused_cpu")


def source(steps, loops, in_kinds, outs) -> str | None:
    """The kernel's Python source for ``steps`` (``(ufunc name, args)`` with args
    ``("in", k)``, ``("step", j)`` or literals), ``loops`` (per step: loop input dtypes,
    loop output dtype), ``in_kinds`` (per input: "a" array or "s" scalar) and the
    output steps; None if a step has no exact expression."""
    lines = ["import math", "import numba", "from numba import prange", "",
             "", f"def kernel(n, {', '.join(f'in{k}' for k in range(len(in_kinds)))}"
             f"{', ' if in_kinds else ''}{', '.join(f'out{j}' for j in range(len(outs)))}):",
             "    for i in prange(n):"]
    for k, kind in enumerate(in_kinds):
        lines.append(f"        x{k} = in{k}[i]" if kind == "a" else f"        x{k} = in{k}")
    for j, ((name, args), (lin, lout)) in enumerate(zip(steps, loops)):
        expr = _EXPR.get(name)
        if expr is None or (name in _FLOAT_ONLY and lout.kind != "f"):
            return None
        ops = []
        for a, dt in zip(args, lin):
            if dt not in _NB:
                return None
            if isinstance(a, tuple):
                ref = f"x{a[1]}" if a[0] == "in" else f"s{a[1]}"
            else:
                ref = repr(bool(a)) if dt.kind == "b" else repr(a)
            ops.append(f"{_NB[dt]}({ref})")
        if lout not in _NB:
            return None
        body = expr.format(a=ops[0], b=ops[-1])
        lines.append(f"        s{j} = {_NB[lout]}({body})")
    for j, o in enumerate(outs):
        lines.append(f"        out{j}[i] = s{o}")
    return "\n".join(lines) + "\n"


def _load(src: str):
    """The compiled kernel of ``src`` (written to the cache directory once, imported)."""
    key = hashlib.sha256(src.encode()).hexdigest()[:24]
    if key in _kernels:
        return _kernels[key]
    with _lock:
        if key in _kernels:
            return _kernels[key]
        d = _cache_dir()
        path = os.path.join(d, f"fused_{key}.py")
        if not os.path.isfile(path):
            os.makedirs(d, exist_ok=True)
            tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(src)
            os.replace(tmp, path)  # atomic: a concurrent process sees all or nothing
        with open(path, encoding="utf-8") as f:
            if f.read() != src:  # a hash collision or a damaged file: do not run it
                raise RuntimeError(f"core.ops.fused_cpu: {path} does not hold the expected "
                                   "kernel source")
        name = f"_kbackend_fused_{key}"
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod  # numba's cache looks the kernel's module up by name
        spec.loader.exec_module(mod)
        k = _kernels[key] = cpu_kernels.kernel(parallel=True)(mod.kernel)
    return k


def run(arrays, steps, loops, out_avals, outs):
    """Run the program as one kernel; None when it does not qualify (see the module
    docstring), so the caller runs the ufunc passes. The caller has checked
    ``cpu_kernels.ready()`` (bit-identical to the passes: no wait for numba's start).

    Args:
        arrays: the operator's inputs (NumPy arrays or Python scalars).
        steps: ``(ufunc name, args)`` per step.
        loops: ``(loop input dtypes, loop output dtype)`` per step.
        out_avals: the shape and dtype of each output.
        outs: the step index of each output.
    """
    shape = out_avals[0].shape
    if any(a.shape != shape for a in out_avals):
        return None
    kinds, flat = [], []
    for a in arrays:
        if isinstance(a, numpy.ndarray):
            if a.ndim == 0:
                if a.dtype not in _NB:
                    return None
                kinds.append("s")
                flat.append(a[()])
            elif a.shape == shape and a.flags.c_contiguous and a.dtype in _NB:
                kinds.append("a")
                flat.append(a.reshape(-1))
            else:
                return None
        elif isinstance(a, (bool, int, float)):
            kinds.append("s")
            flat.append(a)
        else:
            return None
    key = (steps, loops, tuple(kinds), tuple(outs))
    k = _by_program.get(key, _UNSEEN)
    if k is _UNSEEN:
        src = source(steps, loops, kinds, outs)
        k = _by_program[key] = None if src is None else _load(src)
    if k is None:
        return None
    results = [numpy.empty(a.shape, a.dtype) for a in out_avals]
    try:
        k(results[0].size, *flat, *[r.reshape(-1) for r in results])
    except Exception as e:  # noqa: BLE001 - a kernel that cannot compile: the ufuncs run
        warnings.warn(f"core.ops.fused_cpu: the kernel of a fused program failed "
                      f"({type(e).__name__}: {e}); running its NumPy passes", stacklevel=2)
        _by_program[key] = None
        return None
    return results
