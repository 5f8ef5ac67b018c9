"""Shared pytest set-up.

Keras runs on kbackend in this process (below). The markers (``multi_device``, ``gpu``,
``slow``) are declared in pyproject.toml.
``multi_device`` tests run on several logical CPU contexts (``cpu(0)``, ``cpu(1)``,
...), so they need no GPU and run everywhere. ``gpu`` tests are skipped here when
CuPy or a GPU is missing.
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest

# tests/data holds fixtures and the scripts that made them with real MXNet (run in its own
# venv, tests/mxnet_ref.py): not test modules, and not importable here.
collect_ignore_glob = ["data/*"]

# The session runs Keras on kbackend, as Keras' CI runs its suite once per backend with
# KERAS_BACKEND set: chosen before anything imports keras, with a scratch KERAS_HOME so
# that no user's ~/.keras/keras.json takes part (and none is written). Tests that need
# a fresh interpreter with other settings build their own environment
# (tests/kbackend/conftest.py: run_python).
os.environ["KERAS_BACKEND"] = "kbackend"
os.environ["KERAS_HOME"] = tempfile.mkdtemp(prefix="kbackend-keras-home-")
atexit.register(shutil.rmtree, os.environ["KERAS_HOME"], ignore_errors=True)
import kbackend  # noqa: E402,F401  (registers the backend even without kbackend_hook.pth)
import core  # noqa: E402

# Kernels that equal their twins bit for bit run the twins while numba starts in the
# background (core.cpu_kernels.ready); the tests that compare kernels with twins need
# the kernels from the first call (tests/core/test_numba_start.py tests the start itself).
core.cpu_kernels.wait_ready()

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
