"""Helpers for the kbackend tests.

The tests run in the pytest process, with Keras on kbackend: tests/conftest.py sets
``KERAS_BACKEND=kbackend`` (and a scratch ``KERAS_HOME``) before anything imports
Keras, as Keras' own CI runs its suite once per backend. :func:`keras_state` gives each
test the clean Keras state Keras' own ``TestCase`` gives its tests.

Only what must start a fresh interpreter (choosing the backend, the start-up hook,
several processes) runs in a subprocess (:func:`run_python`).
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import keras
import pytest

ROOT = Path(__file__).resolve().parents[2]

assert keras.config.backend() == "kbackend", (
    f"the kbackend tests need Keras on kbackend, got {keras.config.backend()!r}: "
    f"tests/conftest.py sets KERAS_BACKEND before Keras is imported")


@pytest.fixture(autouse=True)
def keras_state():
    """Clear Keras' global state before the test and restore its config after it."""
    keras.backend.clear_session()
    yield
    keras.distribution.set_distribution(None)
    keras.config.set_dtype_policy("float32")
    keras.config.set_floatx("float32")
    keras.config.set_epsilon(1e-7)
    keras.config.set_image_data_format("channels_last")
    keras.backend.clear_session()


def run_python(code: str, keras_backend: str | None, timeout: float = 120,
               env: dict | None = None, flags: tuple = ()):
    """Run ``code`` in a fresh interpreter with ``KERAS_BACKEND`` set (None: unset).

    ``env`` adds to or (with a value of None) removes from the environment; ``flags``
    go to the interpreter (``("-S",)``: no site-packages, so no .pth file runs).
    """
    base = {k: v for k, v in os.environ.items() if k != "KERAS_BACKEND"}
    if keras_backend is not None:
        base["KERAS_BACKEND"] = keras_backend
    # KERAS_HOME stays the session's scratch folder (tests/conftest.py): Keras writes
    # keras.json there on its first import, not into the user's ~/.keras.
    for key, value in (env or {}).items():
        if value is None:
            base.pop(key, None)
        else:
            base[key] = value
    proc = subprocess.run([sys.executable, *flags, "-c", textwrap.dedent(code)], env=base,
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
