"""Keras multi-process training on kbackend: ``mpirun -np 2``, ``keras.distribution.
initialize()`` and ``DataParallel`` over both processes' devices (core's ``dist_sync``
store).

Several processes need their own interpreters: the ranks run a script under mpirun.
Skipped, with the reason, when mpi4py or mpirun (the ``dist`` extra) is missing.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.multi_device

_SCRIPT = """
import hashlib, json, os, sys
os.environ["KBACKEND_NUM_CPU_DEVICES"] = "2"
import numpy as np
import keras
from kbackend import distribution_lib as d

keras.distribution.initialize()
rank, size = d.process_id(), d.num_processes()
devices = keras.distribution.list_devices("cpu")
rng = np.random.default_rng(0)
x = rng.normal(size=(48, 5)).astype("float32")
y = rng.integers(0, 3, 48)
# Process 0 trains on rows 0..23, process 1 on rows 24..43: three steps each, the last
# one with 8 + 4 samples, so the replicas' gradients are weighted by the global batch.
bounds, B = [(0, 24), (24, 44)], 8

def make():
    keras.utils.set_random_seed(7)
    m = keras.Sequential([keras.Input((5,)), keras.layers.Dense(8, activation="relu"),
                          keras.layers.Dense(3)])
    m.compile(keras.optimizers.Adam(0.01),
              keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m

# The reference: one device, each step on the global batch (both processes' batches).
ref = make()
for k in range(3):
    idx = np.concatenate([np.arange(lo + k * B, min(lo + (k + 1) * B, hi))
                          for lo, hi in bounds])
    ref.train_on_batch(x[idx], y[idx])

dist = keras.distribution.DataParallel(devices=devices, auto_shard_dataset=False)
with dist.scope():
    m = make()
    if rank == 1:  # other initial weights: fit starts from process 0's
        m.layers[0].kernel.assign(np.zeros((5, 8), "float32"))
    mine = slice(*bounds[rank])
    m.fit(x[mine], y[mine], batch_size=B, epochs=1, shuffle=False, verbose=0)
result = json.dumps({
    "rank": rank, "size": size, "devices": devices, "replicas": dist.num_model_replicas,
    "diff": max(float(np.abs(a - b).max()) for a, b in zip(ref.get_weights(),
                                                           m.get_weights())),
    "weights": hashlib.sha256(b"".join(w.tobytes() for w in m.get_weights())).hexdigest()})
# One file per rank: the ranks' stdout lines can interleave.
with open(os.path.join(sys.argv[1], f"result{rank}.json"), "w") as f:
    f.write(result)
"""


def _mpirun() -> list:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        pytest.skip("mpi4py is not installed (pip install mpi4py mpich)")
    exe = shutil.which("mpirun") or shutil.which("mpiexec")
    if exe is None:
        pytest.skip("no mpirun/mpiexec on PATH (pip install mpich)")
    version = subprocess.run([exe, "--version"], capture_output=True, text=True,
                             timeout=30, check=False).stdout
    extra = ["--allow-run-as-root", "--oversubscribe"] if "Open MPI" in version else []
    return [exe, *extra, "-np", "2"]


def test_two_processes_train_as_one_device_on_the_global_batch(tmp_path):
    cmd = _mpirun()
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(_SCRIPT))
    # KERAS_HOME: the session's scratch folder (tests/conftest.py)
    env = dict(os.environ, KERAS_BACKEND="kbackend", KBACKEND_DIST_TIMEOUT="60")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    try:  # a subprocess: mpirun starts the two processes, each its own interpreter
        proc = subprocess.run([*cmd, sys.executable, str(script), str(tmp_path)],
                              cwd=str(ROOT), env=env,
                              capture_output=True, text=True, timeout=240, check=False)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"mpirun -np 2 did not finish within 240 s:\n{exc.stdout}\n{exc.stderr}")
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr[-4000:]}"
    results = [json.loads((tmp_path / f"result{r}.json").read_text()) for r in (0, 1)]
    assert [r["rank"] for r in results] == [0, 1], results
    for r in results:
        assert r["size"] == 2
        # global device names: each process owns two of the four
        assert r["devices"] == ["cpu:0", "cpu:1", "cpu:2", "cpu:3"]
        assert r["replicas"] == 4
        assert r["diff"] < 1e-6, r["diff"]
    assert results[0]["weights"] == results[1]["weights"]  # bitwise the same everywhere
