"""Helpers for the kbackend tests.

Keras reads ``KERAS_BACKEND`` once, when it is first imported, and the
registration hook acts at interpreter start, so every test that imports Keras does
so in a fresh Python subprocess (:func:`run_python`).
"""
from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


_HOME: list = []


def _keras_home() -> str:
    if not _HOME:
        _HOME.append(tempfile.mkdtemp(prefix="kbackend-keras-home-"))
        atexit.register(shutil.rmtree, _HOME[0], ignore_errors=True)
    return _HOME[0]


def run_python(code: str, keras_backend: str | None, timeout: float = 120):
    """Run ``code`` in a fresh interpreter with ``KERAS_BACKEND`` set (None: unset)."""
    env = {k: v for k, v in os.environ.items() if k != "KERAS_BACKEND"}
    if keras_backend is not None:
        env["KERAS_BACKEND"] = keras_backend
    # Keras writes keras.json on first import: a scratch home, not the user's ~/.keras.
    env["KERAS_HOME"] = _keras_home()
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          cwd=str(ROOT), capture_output=True, text=True, timeout=timeout,
                          check=False)
    return proc


def check(proc) -> str:
    """The subprocess' stdout, or a test failure showing its output."""
    if proc.returncode != 0:
        pytest.fail(f"subprocess failed (exit {proc.returncode}):\n"
                    f"--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}")
    return proc.stdout


@pytest.fixture(scope="session")
def hook_installed():
    """Fail clearly when kbackend_hook.pth is not installed (pip install -e .)."""
    import site

    dirs = [*site.getsitepackages(), site.getusersitepackages()]
    if not any((Path(d) / "kbackend_hook.pth").is_file() for d in dirs):
        pytest.fail("kbackend_hook.pth is not installed in site-packages: install the "
                    "package (pip install -e \".[dev]\") before running these tests")
