"""Benchmarks: ``python -m benchmarks.run [--quick] [--only NAME ...]``.

Each workload is a module ``benchmarks/bench_<name>.py`` with a ``TITLE`` and a
``run(opts) -> list[Row]`` function (see ``benchmarks/common.py``); the runner finds
them by name, so a new workload is a new module. Benchmarks are never run by the
tests.
"""
