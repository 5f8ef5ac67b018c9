"""The benchmark report runs and prints every table (nothing here is timed).

``python -m benchmarks.run --report --tiny`` runs the whole report on tiny models in
fresh processes; the unit tests below feed the table builders made-up results with
several rounds and a failed process, which the tiny run (one round) does not produce.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import report

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_report_runs_on_tiny_models(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    out_json = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, "-m", "benchmarks.run", "--report", "--tiny",
                           "--threads", "1", "--json", str(out_json)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
                          stdin=subprocess.DEVNULL, check=False)
    out = proc.stdout
    assert proc.returncode == 0, f"exit {proc.returncode}\n{out}\n{proc.stderr[-4000:]}"
    assert "failed" not in out.lower(), out
    for heading in ("== machine", "== import time", "== training step",
                    "== first training step", "== Keras fit", "== done"):
        assert heading in out, f"no {heading!r} section:\n{out}"
    assert "import core" in out and "import keras (kbackend)" in out
    for row in ("mlp 32-16-16-10 b8", "lenet 20-50-500 b2", "lstm 8->8 seq 3 b2",
                "mlp 784-512-512-10 b8"):
        assert row in out, f"no row {row!r}:\n{out}"
    head = next(ln for ln in out.splitlines() if ln.strip().startswith("model") and
                "nd+autograd" in ln)
    assert "gluon hybrid" in head
    if report.installed("torch"):
        assert "torch eager" in head and "nd/torch" in head
    keras_head = next(ln for ln in out.splitlines() if "kbackend (jit)" in ln)
    if report.installed("jax"):
        assert "keras jax" in keras_head and "kb/jax" in keras_head
    assert out_json.is_file()


def _step(first, steps, loss=1.0, what="mlp 8-4 b2"):
    return {"what": what, "first_step_s": first, "step_s": steps, "loss": loss}


def test_step_tables_from_several_rounds():
    steps = {m: {"nd": [_step(2.0, [0.010, 0.012]), _step(0.5, [0.011, 0.013]),
                        _step(0.7, [0.011])],
                 "gluon": [_step(3.0, [0.008]), "failed (exit 1): RuntimeError: boom",
                           _step(1.0, [0.009])],
                 "torch": [_step(0.25, [0.005]), _step(0.25, [0.006]), _step(0.25, [0.005])]}
             for m in report.MODELS}
    mode = report.MODES["full"]
    lines = report.step_lines(steps, mode)
    row = next(ln for ln in lines if ln.startswith("  mlp 8-4 b2"))
    assert "11.00 ms (27%)" in row  # median and spread of all five nd repeats
    assert "2.20x" in row           # nd / torch: 11 ms / 5 ms
    assert any("gluon: failed (exit 1): RuntimeError: boom" in ln for ln in lines)
    first = report.first_step_lines(steps)
    nd_row = next(ln for ln in first if " nd " in ln)
    # cold: round 1 alone; warm: the median of rounds 2 and 3; torch: the median of all
    assert "2.00 s" in nd_row and "600.00 ms (33%)" in nd_row and "250.00 ms" in nd_row
    assert "8.00x" in nd_row and "2.40x" in nd_row


def test_step_table_flags_a_loss_mismatch():
    steps = {"mlp": {"nd": [_step(1.0, [0.01], loss=2.0)],
                     "torch": [_step(1.0, [0.01], loss=2.5)]}}
    lines = report.step_lines(steps, report.MODES["tiny"])
    assert any("not the same computation" in ln for ln in lines)


def test_keras_and_import_tables():
    def run(first, epochs):
        return {"backend": "x", "models": {m: {"what": f"{m} b2", "first_step_s": first,
                                               "epoch_s": epochs} for m in report.MODELS}}

    res = {"kbackend": [run(4.0, [1.0, 1.2])], "torch": [run(2.0, [2.0, 2.0])],
           "jax": ["failed: no result within 900 s"]}
    lines = report.keras_lines(res, report.MODES["quick"])
    row = next(ln for ln in lines if ln.startswith("  mlp b2"))
    assert "1.10 s (18%)" in row and "0.55x" in row and "failed" in row
    assert any("jax: failed: no result within 900 s" in ln for ln in lines)
    imports = report.import_lines({"core": [1.0, 1.2, 1.1], "torch": [2.2, 2.0, 2.4]})
    assert any("import core" in ln and "1.10 s (18%)" in ln and "n=3" in ln for ln in imports)
    assert any("ratio core / torch" in ln and "0.50x" in ln for ln in imports)


def test_worker_imports_are_collected_per_framework():
    steps = {"mlp": {"nd": [{"import_s": 1.0}], "gluon": [{"import_s": 1.2}, "failed"],
                     "torch": [{"import_s": 3.0}]}}
    keras = {"kbackend": [{"import_s": 5.0}], "jax": ["failed"]}
    assert report.worker_imports(steps, keras) == {
        "core": [1.0, 1.2], "torch": [3.0], "keras (kbackend)": [5.0], "keras (jax)": []}


def test_modes():
    assert report.MODES["quick"].rounds >= 2  # a cold and a warm numba cache
    assert report.MODES["full"].rounds >= 3 and report.MODES["full"].imports >= 5
    assert set(report.MODES["full"].number) == set(report.MODELS)
