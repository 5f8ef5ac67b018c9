"""The examples run as a user runs them: as scripts, in a subprocess."""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ACCURACY = re.compile(r"^test accuracy: ([0-9.]+)$", re.MULTILINE)


def _run(script: str, *args: str, timeout: float, launcher=()) -> tuple[str, float]:
    env = dict(os.environ)
    # Work from a source checkout that was not pip-installed, too.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run([*launcher, sys.executable, str(ROOT / "examples" / script), *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, check=False)
    out = proc.stdout
    assert proc.returncode == 0, (f"{script} {' '.join(args)} exited {proc.returncode}\n"
                                  f"stdout:\n{out}\nstderr:\n{proc.stderr[-4000:]}")
    m = ACCURACY.search(out)
    assert m, f"{script} printed no 'test accuracy: ...' line:\n{out}"
    return out, float(m.group(1))


def test_train_mlp_digits_short():
    _, acc = _run("train_mlp_digits.py", "--short", timeout=300)
    assert 0.0 <= acc <= 1.0
    assert acc > 0.3, f"one short epoch should beat chance (0.1) clearly, got {acc}"


@pytest.mark.slow
def test_train_mlp_digits_full_reaches_95_percent():
    _, acc = _run("train_mlp_digits.py", timeout=600)
    assert acc >= 0.95, f"the example's default run should reach 0.95 test accuracy, got {acc}"


def test_train_digits_short():
    out, acc = _run("train_digits.py", "--short", timeout=300)
    assert 0.0 <= acc <= 1.0
    assert acc > 0.3, f"one short epoch should beat chance (0.1) clearly, got {acc}"
    assert re.search(r"^epoch 1: loss [0-9.]+, validation accuracy [0-9.]+$", out, re.MULTILINE)
    assert "a fresh network loaded from them predicts the same" in out


def test_train_digits_short_hybridized_saves_to_out(tmp_path):
    path = tmp_path / "digits-cnn.params"
    out, _ = _run("train_digits.py", "--short", "--hybridize", "--out", str(path),
                  timeout=300)
    assert path.is_file() and path.stat().st_size > 0
    assert f"saved the parameters to {path}" in out


@pytest.mark.multi_device
def test_multi_device_short_keeps_replicas_identical():
    out, acc = _run("multi_device.py", "--short", timeout=300)
    assert 0.0 <= acc <= 1.0
    assert acc > 0.3, f"one short epoch should beat chance (0.1) clearly, got {acc}"
    assert "(cpu(0), cpu(1))" in out
    assert re.search(r"^epoch 1: loss [0-9.]+, validation accuracy [0-9.]+$", out, re.MULTILINE)
    assert re.search(r"^replicas identical: the [0-9]+ trained parameters are the same on "
                     r"cpu\(0\), cpu\(1\)$", out, re.MULTILINE), out


@pytest.mark.slow
def test_train_digits_full_reaches_97_percent():
    out, acc = _run("train_digits.py", timeout=600)
    assert acc >= 0.97, f"the example's default run should reach 0.97 test accuracy, got {acc}"
    assert "a fresh network loaded from them predicts the same" in out


def test_keras_digits_short(tmp_path, monkeypatch):
    # The example selects kbackend itself (import kbackend before keras); an explicit
    # other KERAS_BACKEND would win, so run it without one. Keras writes keras.json
    # into KERAS_HOME: a scratch directory, not the user's ~/.keras.
    monkeypatch.delenv("KERAS_BACKEND", raising=False)
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras-home"))
    path = tmp_path / "digits.keras"
    out, acc = _run("keras_digits.py", "--short", "--out", str(path), timeout=600)
    assert "backend kbackend" in out
    assert acc > 0.3, f"two short epochs should beat chance (0.1) clearly, got {acc}"
    assert path.is_file() and path.stat().st_size > 0
    assert "the model loaded from the .keras file predicts the same" in out


def _mpirun() -> str | None:
    local = Path(sys.executable).with_name("mpirun")  # the mpich wheel's, in a venv
    return str(local) if local.exists() else shutil.which("mpirun")


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mpi4py") is None or _mpirun() is None,
                    reason="needs mpi4py and an mpirun (pip install -e \".[dist]\")")
def test_gluon_distributed_short_on_two_processes():
    mpirun = _mpirun()
    version = subprocess.run([mpirun, "--version"], capture_output=True, text=True,
                             timeout=30, check=False, stdin=subprocess.DEVNULL).stdout
    extra = ["--allow-run-as-root", "--oversubscribe"] if "Open MPI" in version else []
    out, acc = _run("gluon_distributed.py", "--short", timeout=180,
                    launcher=[mpirun, *extra, "-np", "2"])
    assert "digits on 2 worker(s) (dist_sync)" in out
    assert re.search(r"^epoch 2: loss [0-9.]+ \(rank 0's shard\), test accuracy [0-9.]+$",
                     out, re.MULTILINE), out
    assert "replicas identical: the 4 parameters are the same on all 2 worker(s)" in out
    assert out.count("test accuracy: ") == 1, "only rank 0 reports"
    assert acc > 0.5, f"two short epochs should beat chance (0.1) clearly, got {acc}"


@pytest.mark.multi_device
def test_keras_multi_device_short(tmp_path, monkeypatch):
    monkeypatch.delenv("KERAS_BACKEND", raising=False)
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras-home"))
    monkeypatch.setenv("KBACKEND_NUM_CPU_DEVICES", "2")
    out, acc = _run("keras_multi_device.py", "--short", timeout=300)
    assert "1 process(es), devices ['cpu:0', 'cpu:1']: 2 replicas" in out
    assert acc > 0.3, f"two short epochs should beat chance (0.1) clearly, got {acc}"


def test_module_digits_short(tmp_path):
    prefix = tmp_path / "digits"
    out, acc = _run("module_digits.py", "--short", "--out", str(prefix), timeout=300)
    assert "reloaded with Module.load: predicts the same" in out
    assert (tmp_path / "digits-0002.params").is_file()
    assert (tmp_path / "digits-symbol.json").is_file()
    assert acc > 0.5, f"two short epochs should beat chance (0.1) clearly, got {acc}"


@pytest.mark.multi_device
def test_module_digits_short_conv_on_two_contexts():
    out, acc = _run("module_digits.py", "--short", "--net", "conv", "--contexts", "2",
                    timeout=300)
    assert "predicts the same" in out
    assert acc > 0.3, f"two short epochs should beat chance (0.1) clearly, got {acc}"


@pytest.mark.slow
def test_module_digits_full_reaches_95_percent():
    _, acc = _run("module_digits.py", timeout=600)
    assert acc >= 0.95, f"the example's default run should reach 0.95 test accuracy, got {acc}"


def test_serve_digits_short():
    out, acc = _run("serve_digits.py", "--short", timeout=300)
    assert "'shape': [-1, 1, 8, 8]" in out
    assert re.search(r"^test image 0: label \d, top-2 \['[-0-9.e]+:\d:digit \d', ", out,
                     re.MULTILINE), out
    assert "every answer equals the network's own prediction" in out
    assert "server stopped (SIGTERM), exit status 0" in out
    assert acc > 0.3, f"one short epoch should beat chance (0.1) clearly, got {acc}"
