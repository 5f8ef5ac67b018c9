"""Real MXNet 1.9.1 as a test reference, run in its own virtual environment.

MXNet 1.9.1 needs ``numpy<1.24``, so it never shares our environment: tests hand it a
script through :func:`run_mxnet`, which runs the script with that environment's Python
and returns what it printed. The environment is ``KBACKEND_MXNET_PYTHON`` (a Python
executable) or ``~/.cache/kbackend/mxnet-1.9.1`` (built by ``bash tests/mxnet_venv.sh``;
``.ci/run`` builds it). Where neither works, the tests that need it skip and say why.

Example (in a test)::

    from tests.mxnet_ref import run_mxnet
    out = run_mxnet("import mxnet as mx; print(mx.nd.ones(2).sum().asscalar())")
"""
from __future__ import annotations

import functools
import os
import subprocess

import pytest

DEFAULT_VENV = os.path.join(os.path.expanduser("~"), ".cache", "kbackend", "mxnet-1.9.1")


@functools.lru_cache(maxsize=1)
def mxnet_python() -> tuple[str | None, str]:
    """``(python executable, "")`` of a working real MXNet, or ``(None, why not)``."""
    exe = os.environ.get("KBACKEND_MXNET_PYTHON") or os.path.join(DEFAULT_VENV, "bin", "python")
    if not os.path.exists(exe):
        return None, (f"real MXNet 1.9.1 is not installed ({exe} does not exist; build it with "
                      "`bash tests/mxnet_venv.sh` or set KBACKEND_MXNET_PYTHON)")
    try:
        out = subprocess.run([exe, "-c", "import mxnet; print(mxnet.__version__)"],
                             capture_output=True, text=True, timeout=120, env=_env())
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"real MXNet at {exe} does not start: {e}"
    if out.returncode != 0:
        return None, f"real MXNet at {exe} does not import: {out.stderr.strip()[-500:]}"
    return exe, ""


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "KBACKEND_"))}
    env["OMP_NUM_THREADS"] = env.get("OMP_NUM_THREADS", "1")
    env["MXNET_ENGINE_TYPE"] = env.get("MXNET_ENGINE_TYPE", "NaiveEngine")
    return env


def have_mxnet() -> bool:
    """Whether real MXNet runs here."""
    return mxnet_python()[0] is not None


requires_mxnet = pytest.mark.skipif(not have_mxnet(), reason=mxnet_python()[1] or "n/a")
"""Mark a test that needs real MXNet (skips with the reason where it is missing)."""


def run_mxnet(code: str, *, cwd: str | None = None, timeout: float = 300) -> str:
    """Run ``code`` with real MXNet 1.9.1 and return its standard output.

    Args:
        code: a Python script (``import mxnet as mx`` is up to it).
        cwd: the working directory (default: the current one).
        timeout: seconds before the script counts as hung.

    Returns:
        What the script printed.

    Raises:
        AssertionError: the script failed; the message holds its standard error.
    """
    exe, why = mxnet_python()
    if exe is None:
        pytest.skip(why)
    out = subprocess.run([exe, "-c", code], capture_output=True, text=True, timeout=timeout,
                         cwd=cwd, env=_env())
    if out.returncode != 0:
        raise AssertionError(f"the real-MXNet script failed (exit {out.returncode}):\n"
                             f"{out.stderr[-4000:]}\n--- script ---\n{code}")
    return out.stdout
