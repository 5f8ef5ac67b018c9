"""Keras' own ``keras/src/ops`` tests on kbackend, through run_keras_suite.py.

Slow (many minutes) and it downloads the keras sdist once (cached in
``~/.cache/kbackend-conformance``; ``KBACKEND_CONFORMANCE_SRC`` may name an unpacked
sdist instead), so it runs only when ``KBACKEND_CONFORMANCE=1`` is set
(``KBACKEND_CONFORMANCE_SAMPLE=K/N`` runs a fixed slice of about 1/N; CI does). It fails
listing every failing test; tests that are specific to another backend belong in
``excluded.txt``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

RUNNER = Path(__file__).resolve().parent / "run_keras_suite.py"

pytestmark = pytest.mark.skipif(
    os.environ.get("KBACKEND_CONFORMANCE") != "1",
    reason="Keras' ops suite takes many minutes and downloads the keras sdist; set "
           "KBACKEND_CONFORMANCE=1 to run it")


@pytest.mark.slow
@pytest.mark.timeout(5400)
def test_keras_ops_suite(tmp_path):
    out = tmp_path / "ops.json"
    cmd = [sys.executable, str(RUNNER), "keras/src/ops", "--json", str(out)]
    if os.environ.get("KBACKEND_CONFORMANCE_SRC"):
        cmd += ["--src", os.environ["KBACKEND_CONFORMANCE_SRC"]]
    if os.environ.get("KBACKEND_CONFORMANCE_SAMPLE"):  # "K/N": CI runs one fixed slice
        cmd += ["--sample", os.environ["KBACKEND_CONFORMANCE_SAMPLE"]]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=5300)
    if proc.returncode == 2 or not out.exists():
        pytest.fail(f"the conformance runner could not run (exit {proc.returncode}):\n"
                    f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    data = json.loads(out.read_text())
    failed = [t for t in data["tests"] if t["outcome"] == "failed"]
    if failed:
        lines = [f"{t['nodeid']} - {' '.join(t['message'].split())[:200]}" for t in failed]
        pytest.fail(f"{len(failed)} of Keras' ops tests fail on kbackend "
                    f"({data['total']}):\n" + "\n".join(lines), pytrace=False)
