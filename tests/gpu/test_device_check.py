"""The GPU device check runs here as a CPU dry run, so the prepared script cannot rot."""
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.gpu import device_check as dc

ROOT = Path(__file__).resolve().parents[2]
GPU_ONLY = {"gpu_pytests", "resnet50_ours_bf16", "resnet50_torch_bf16"}


def test_cpu_dry_run_runs_every_section(tmp_path):
    out = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, "-m", "tests.gpu.device_check", "--cpu-dry-run",
                           "--out", str(out)], check=False, cwd=ROOT, capture_output=True, text=True,
                          timeout=240)
    assert out.exists(), proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    assert report["dry_run"] is True
    assert set(report["sections"]) == {name for name, _, _ in dc.PLAN}
    for name, entry in report["sections"].items():
        if name in GPU_ONLY:
            assert entry["status"] == "skip" and "GPU only" in entry["reason"], (name, entry)
        elif name == "resnet50_torch_fp32" and entry["status"] == "skip":
            assert "torch" in entry["reason"]
        else:
            assert entry["status"] == "pass", (name, entry)
    assert report["sections"]["op_table"]["passed"] > 0
    assert report["sections"]["amp"]["output_dtype"] == "float16"
    assert len(report["sections"]["keras_fit"]["devices"]) == 2
    assert "summary: " in proc.stdout and proc.returncode == 0, proc.stdout[-2000:]


def test_a_failing_section_is_recorded_and_the_next_runs():
    report = {"sections": {}}

    def broken(limit):
        raise ValueError("bad shapes (2, 3) and (4,)")

    def skipped(limit):
        raise dc.Skip("needs a GPU")

    dc.run_section("a", broken, 5, report)
    dc.run_section("b", skipped, 5, report)
    dc.run_section("c", lambda limit: {"summary": "ok"}, 5, report)
    s = report["sections"]
    assert s["a"]["status"] == "fail" and "ValueError: bad shapes" in s["a"]["error"]
    assert s["b"] == {"status": "skip", "reason": "needs a GPU", "seconds": s["b"]["seconds"]}
    assert s["c"]["status"] == "pass"


def test_a_section_past_its_limit_is_stopped():
    report = {"sections": {}}
    start = time.monotonic()

    def hangs(limit):
        while True:
            time.sleep(0.01)

    dc.run_section("slow", hangs, 1, report)
    assert time.monotonic() - start < 5
    assert report["sections"]["slow"]["status"] == "fail"
    assert "timeout" in report["sections"]["slow"]["error"]


def test_a_child_past_its_limit_is_killed():
    with pytest.raises(dc.SectionTimeout):
        dc.run_child("import time; time.sleep(30)", 1, dry=True)


def test_the_gpu_plan_fits_in_eight_minutes():
    assert sum(seconds for _, _, seconds in dc.PLAN) <= 480
