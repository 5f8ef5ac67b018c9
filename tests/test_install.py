"""Installing the package into a fresh virtual environment registers the Keras backend.

A regular install (``pip install .``) and an editable one (``pip install -e .``)
each go into a new venv, built by hatchling (the build backend of pyproject.toml)
through this environment's pip. They must put ``kbackend_hook.pth`` in the venv's
site-packages, select kbackend the way Keras documents (``os.environ`` in the script),
and uninstall cleanly. No network: the venv sees this environment's packages (keras,
numpy, pip, hatchling, ...) through plain path entries, which run none of this
environment's own .pth files, so this environment's kbackend takes no part.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _venv(tmp_path: Path) -> tuple[Path, Path]:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.check_output(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        text=True).strip())
    outer = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    (site / "zz_outer_environment.pth").write_text("\n".join(outer) + "\n")
    return python, site


def _run(python: Path, *args: str, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items()
           if k not in ("KERAS_BACKEND", "PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    proc = subprocess.run([str(python), *args], cwd=str(cwd), env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(args[:4])} failed (exit {proc.returncode}):\n"
                    f"--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}")
    return proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("editable", [False, True], ids=["regular", "editable"])
def test_fresh_venv_install_registers_kbackend(tmp_path, editable):
    python, site = _venv(tmp_path)
    _run(python, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "-q",
         *(["-e"] if editable else []), str(ROOT), cwd=tmp_path)
    assert (site / "kbackend_hook.pth").is_file()
    home = tmp_path / "keras-home"
    code = textwrap.dedent(f"""
        import os, sys
        assert "kbackend_hook" not in sys.modules
        os.environ["KERAS_HOME"] = {str(home)!r}
        os.environ["KERAS_BACKEND"] = "kbackend"
        import numpy as np
        import keras
        import core, kbackend, kbackend_hook
        assert keras.config.backend() == "kbackend", keras.config.backend()
        y = keras.ops.relu(np.array([-1.0, 2.0], dtype="float32"))
        assert type(y).__module__ == "core.ndarray"
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(y), [0.0, 2.0])
        for module in (core, kbackend, kbackend_hook):
            print(module.__file__)
    """)
    files = _run(python, "-c", code, cwd=tmp_path).split()
    where = ROOT if editable else site
    for path in files:
        assert Path(path).resolve().is_relative_to(where.resolve()), (path, where)
    _run(python, "-m", "pip", "uninstall", "-y", "-q", "kbackend", cwd=tmp_path)
    assert not (site / "kbackend_hook.pth").exists()
    assert not (site / "kbackend").exists() and not (site / "kbackend_hook.py").exists()
