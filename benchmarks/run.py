"""Run the benchmarks: ``python -m benchmarks.run [--quick] [--only NAME ...] [--list]``.

``python -m benchmarks.run --report [--quick]`` prints instead the one report of core
against PyTorch (and Keras on jax): training steps, Keras ``fit``, first-step latency
with a cold and a warm numba cache, import times, every framework in its own
processes (``benchmarks/report.py``).

Every run first prints the machine: Python, NumPy, the CPU count, and each BLAS or
OpenMP library that threadpoolctl finds (its internal API, the kernel it chose,
its thread count), plus OPENBLAS_CORETYPE if set. Then each workload prints one
table of medians over several repeats after warm-up, with ratios. If torch is
importable, the workloads also time the same work in torch (CPU, 2 threads).
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import time

from . import common, report


def workloads() -> dict:
    """``{name: module}`` for every ``benchmarks/bench_<name>.py``, in name order."""
    import benchmarks

    names = sorted(m.name[len("bench_"):] for m in pkgutil.iter_modules(benchmarks.__path__)
                   if m.name.startswith("bench_"))
    return {n: importlib.import_module(f"benchmarks.bench_{n}") for n in names}


def main(argv=None) -> int:
    found = workloads()
    p = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split(
        "\n\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer repeats and iterations")
    p.add_argument("--only", nargs="+", choices=sorted(found), metavar="NAME",
                   help=f"run only these workloads ({', '.join(found)})")
    p.add_argument("--repeats", type=int, default=7, help="timed repeats per case")
    p.add_argument("--no-torch", action="store_true", help="skip the torch comparisons")
    p.add_argument("--list", action="store_true", help="list the workloads and exit")
    p.add_argument("--report", action="store_true",
                   help="the report against torch and jax, each framework in its own "
                        "processes (benchmarks/report.py; with --quick: under 3 minutes)")
    report.add_arguments(p, note="with --report: ")
    args = p.parse_args(argv)
    if args.report:
        if args.threads < 1:
            p.error("--threads must be at least 1")
        return report.report(report.mode_of(args), args.threads, args.timeout, args.json,
                             keep_openblas_pins=args.openblas_as_set)
    if args.list:
        for name, mod in found.items():
            print(f"{name:12s} {mod.TITLE}")
        return 0

    opts = common.Options(quick=args.quick, repeats=args.repeats, torch=None if args.no_torch else common.import_torch())
    print("== machine")
    for line in common.machine_report(opts.torch):
        print(f"  {line}")
    mode = "quick" if args.quick else f"{args.repeats} repeats"
    print(f"  mode: {mode}; medians after warm-up; spread = (max - min) / median over "
          "the repeats (a large one: the machine was busy)")
    for name in args.only or found:
        mod = found[name]
        print(f"\n== {mod.TITLE}")
        t0 = time.perf_counter()
        rows = mod.run(opts)
        width = max(len(r.label) for r in rows)
        for r in rows:
            print(f"  {r.label:{width}s}  {r.value():>14s}{r.note()}")
        print(f"  ({time.perf_counter() - t0:.1f} s)")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
