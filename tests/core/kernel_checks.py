"""Helpers for the tests that compare compiled CPU kernels with their NumPy twins."""
from __future__ import annotations

from core import cpu_kernels


def calls(monkeypatch, module, name: str) -> list:
    """Count the calls of kernel ``module.name`` (to know the kernel path ran): the list
    returned grows by one entry per call."""
    seen = []
    real = getattr(module, name)

    def spy(*args):
        seen.append(name)
        return real(*args)

    monkeypatch.setattr(module, name, spy)
    return seen


def both(fn):
    """``fn()`` with kernels on, and with the NumPy twins: ``(on, off)``."""
    on = fn()
    with cpu_kernels.disabled():
        off = fn()
    return on, off
