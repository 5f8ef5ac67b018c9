"""Shared pytest set-up.

The markers (``multi_device``, ``gpu``, ``slow``) are declared in pyproject.toml.
``multi_device`` tests run on several logical CPU contexts (``cpu(0)``, ``cpu(1)``,
...), so they need no GPU and run everywhere. ``gpu`` tests are skipped here when
CuPy or a GPU is missing.
"""
from __future__ import annotations

import pytest

try:  # CI machines are small and shared: no per-example deadline for hypothesis.
    from hypothesis import settings as _hyp_settings

    _hyp_settings.register_profile("kbackend", deadline=None)
    _hyp_settings.load_profile("kbackend")
except ImportError:  # hypothesis is a dev extra
    pass


def pytest_collection_modifyitems(config, items):
    gpu_items = [item for item in items if item.get_closest_marker("gpu") is not None]
    if not gpu_items:
        return
    from core.context import num_gpus

    if num_gpus() > 0:
        return
    skip = pytest.mark.skip(reason="needs a GPU and CuPy (pip install -e \".[gpu]\")")
    for item in gpu_items:
        item.add_marker(skip)
