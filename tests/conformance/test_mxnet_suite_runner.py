"""Tests of run_mxnet_suite.py on a tiny fake MXNet test folder (no MXNet sources needed)."""
from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parent / "run_mxnet_suite.py"
_spec = importlib.util.spec_from_file_location("run_mxnet_suite", _PATH)
rms = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("run_mxnet_suite", rms)
_spec.loader.exec_module(rms)

COMMON = """\
import os
import sys
import mxnet as mx
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../common/"))
from nose.tools import make_decorator, assert_raises
import models
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../train"))
import helper_mod
assert helper_mod.VALUE == 7 and models.mlp2() == 1


def with_seed(seed=None):
    def helper(orig):
        @make_decorator(orig)
        def test_new(*args, **kwargs):
            mx.random.seed(seed or 1)
            orig(*args, **kwargs)
        return test_new
    return helper
"""

GOOD = """\
import os
import time
import mxnet as mx
from nose.tools import assert_raises, ok_, raises, assert_equal
from unittest import SkipTest
from common import with_seed


@with_seed()
def test_pass():
    assert mx.__kbackend_alias__
    ok_(mx.nd.ones((2,)).asnumpy().sum() == 2)
    assert_equal(1, 1)


def test_fail():
    assert 1 == 2, "one is not two"


@raises(ValueError)
def test_raises():
    raise ValueError("expected")


def test_skip():
    raise SkipTest("not here")


def test_crash():
    os._exit(3)


def test_after_crash():
    assert_raises(ZeroDivisionError, lambda: 1 / 0)


def test_hang():
    time.sleep(60)


def test_needs_download():
    from core.testing.data import NoNetworkError
    raise NoNetworkError("get_thing(): kbackend does not download anything")


def test_numpy1_names():
    import numpy as np
    assert np.isnan(np.NaN) and np.Inf == np.inf


class TestThings:
    def setup_method(self, method):
        raise RuntimeError("setup broke")

    def test_in_class(self):
        pass
"""

BROKEN = """\
import mxnet as mx
from mxnet import does_not_exist_anywhere


def test_a():
    pass


def test_b():
    pass
"""


@pytest.fixture(scope="module")
def fake_src(tmp_path_factory):
    root = tmp_path_factory.mktemp("mxsrc")
    unit = root / "tests" / "python" / "unittest"
    unit.mkdir(parents=True)
    (root / "tests" / "python" / "common").mkdir()
    (root / "tests" / "python" / "common" / "models.py").write_text("def mlp2():\n    return 1\n")
    (root / "tests" / "python" / "train").mkdir()
    (root / "tests" / "python" / "train" / "helper_mod.py").write_text("VALUE = 7\n")
    (unit / "common.py").write_text(COMMON)
    (unit / "test_good.py").write_text(GOOD)
    (unit / "test_broken.py").write_text(BROKEN)
    return unit


@pytest.fixture(scope="module")
def run(fake_src, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    argv = ["--src", str(fake_src), "--files", "good", "test_broken.py", "test_missing",
            "--test-timeout", "5", "--json", str(out / "r.json"), "--junit",
            str(out / "r.xml"), "--markdown"]
    rc = rms.main(argv)
    return rc, json.loads((out / "r.json").read_text()), (out / "r.xml").read_text()


def test_outcomes_per_test(run):
    rc, data, _ = run
    assert rc == 1
    tests = {t["id"]: t for t in data["files"]["test_good.py"]["tests"]}
    assert tests["test_good.py::test_pass"]["outcome"] == "passed"
    assert tests["test_good.py::test_raises"]["outcome"] == "passed"
    assert tests["test_good.py::test_fail"]["outcome"] == "failed"
    assert "one is not two" in tests["test_good.py::test_fail"]["message"]
    assert tests["test_good.py::test_skip"]["outcome"] == "skipped"
    assert tests["test_good.py::test_crash"]["outcome"] == "failed"
    assert tests["test_good.py::test_crash"]["message"] == rms.CRASH_MESSAGE
    # the rest of the file ran in a new subprocess after the crash
    assert tests["test_good.py::test_after_crash"]["outcome"] == "passed"
    assert tests["test_good.py::test_hang"]["outcome"] == "failed"
    assert tests["test_good.py::test_needs_download"]["outcome"] == "network"
    assert tests["test_good.py::test_numpy1_names"]["outcome"] == "passed"
    assert "Timeout" in tests["test_good.py::test_hang"]["message"]
    setup = tests["test_good.py::TestThings::test_in_class"]
    assert setup["outcome"] == "errors" and setup["message"].startswith("[setup]")


def test_counts_and_rate(run):
    _, data, _ = run
    good = data["files"]["test_good.py"]
    assert (good["passed"], good["failed"], good["errors"], good["skipped"],
            good["network"]) == (4, 3, 1, 1, 1)
    assert good["pass_rate"] == pytest.approx(4 / 8)
    assert good["overall_rate"] == pytest.approx(4 / 9)
    broken = data["files"]["test_broken.py"]
    assert broken["errors"] == 2 and broken["passed"] == 0  # each test of the file counts
    assert "does_not_exist_anywhere" in broken["tests"][0]["message"]
    missing = data["files"]["test_missing.py"]
    assert missing["errors"] == 1
    assert data["total"]["passed"] == 4 and data["total"]["errors"] == 4
    assert data["meta"]["files"] == ["test_good.py", "test_broken.py", "test_missing.py"]


def test_junit(run):
    _, _, xml = run
    root = ET.fromstring(xml)
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert suites["test_good.py"].get("failures") == "3"
    assert suites["test_broken.py"].get("errors") == "2"


def test_printed_summary(run, capsys):
    # the module-scoped run printed before this test's capture; re-render its summary
    _, data, _ = run
    files = [rms.FileResult(name, [rms.TestResult(t["id"], t["outcome"], t["message"])
                                   for t in f["tests"]]) for name, f in data["files"].items()]
    text = rms.summary(files)
    assert "FAIL test_good.py::test_fail: AssertionError: one is not two" in text
    assert text.count("collection error 1/2") == 1 and "collection error 2/2" not in text
    assert "TOTAL" in text
    md = rms.markdown(files)
    assert "| test_good.py | 4 | 3 | 1 | 1 | 1 | 50.0% | 44.4% |" in md
    assert "NETWORK test_good.py::test_needs_download" in text


def test_missing_source_dir(tmp_path, capsys):
    assert rms.main(["--src", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_parse_log_cut_short():
    lines = [json.dumps({"event": "start", "nodeid": "t.py::a"}), '{"event": "rep']
    results, collect = rms.parse_log(lines)
    assert results["t.py::a"].outcome == "failed" and not collect


def test_siblings_from_git_and_models_stub(tmp_path):
    # no ../common beside the tests and no git checkout: models.py becomes a stub
    src = tmp_path / "unittest"
    src.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    rms.prepare_workdir(src, work, None)
    assert "was not found" in (work / "common" / "models.py").read_text()
    assert (work / "train").is_dir() and (work / "shim" / "nose" / "tools.py").exists()


def test_resolve_files_and_count(tmp_path):
    (tmp_path / "test_b.py").write_text("")
    (tmp_path / "test_a.py").write_text("")
    assert rms.resolve_files(tmp_path, ["x", "test_y", "test_z.py"], False) == \
        ["test_x.py", "test_y.py", "test_z.py"]
    assert rms.resolve_files(tmp_path, None, True) == ["test_a.py", "test_b.py"]
    assert rms.resolve_files(tmp_path, None, False) == rms.ISSUE16_FILES
    src = textwrap.dedent("""
        def test_a(): pass
        def helper(): pass
        class TestC:
            def test_d(self): pass
            def other(self): pass
    """)
    assert rms.count_tests(src) == 2
