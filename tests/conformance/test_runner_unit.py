"""Unit tests of run_keras_suite.py's parsing and summaries (no network, no Keras run).

The end-to-end test runs the runner's pytest subprocess on a tiny fake ``keras``
tree, with a backend name that leaves kbackend's import hook idle.
"""
from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parent / "run_keras_suite.py"
_spec = importlib.util.spec_from_file_location("run_keras_suite", _PATH)
rks = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("run_keras_suite", rks)
_spec.loader.exec_module(rks)

F = "keras/src/ops/core_test.py"


def _lines(*events):
    return [json.dumps(e) for e in events]


def _phases(nodeid, call="passed", setup="passed", message=""):
    out = [{"event": "start", "nodeid": nodeid},
           {"event": "report", "nodeid": nodeid, "when": "setup", "outcome": setup,
            "message": message if setup != "passed" else "", "duration": 0.1}]
    if setup == "passed":
        out.append({"event": "report", "nodeid": nodeid, "when": "call", "outcome": call,
                    "message": message, "duration": 0.5})
    out.append({"event": "report", "nodeid": nodeid, "when": "teardown",
                "outcome": "passed", "message": "", "duration": 0.0})
    return out


def test_parse_log_outcomes():
    log = _lines(
        *_phases(f"{F}::T::test_ok"),
        *_phases(f"{F}::T::test_bad", call="failed", message="AssertionError: 1 != 2"),
        *_phases(f"{F}::T::test_skip", setup="skipped", message="Requires multiple devices"),
        {"event": "excluded", "nodeid": f"{F}::T::test_tf_only"},
        {"event": "collect_error", "nodeid": "keras/src/ops/x_test.py",
         "message": "E   ModuleNotFoundError: No module named 'pandas'"},
        {"event": "start", "nodeid": f"{F}::T::test_crash"},
        {"event": "report", "nodeid": f"{F}::T::test_crash", "when": "setup",
         "outcome": "passed", "message": "", "duration": 0.0},
    )
    log.append('{"event": "rep')  # a line cut short by a kill
    res = rks.parse_log(log)
    assert res[f"{F}::T::test_ok"].outcome == "passed"
    assert res[f"{F}::T::test_ok"].duration == pytest.approx(0.6)
    assert res[f"{F}::T::test_bad"].outcome == "failed"
    assert res[f"{F}::T::test_bad"].message == "AssertionError: 1 != 2"
    assert res[f"{F}::T::test_skip"].outcome == "skipped"
    assert res[f"{F}::T::test_tf_only"].outcome == "excluded"
    err = res["keras/src/ops/x_test.py"]
    assert err.outcome == "failed" and "pip install pandas" in err.message
    assert res[f"{F}::T::test_crash"].outcome == "failed"
    assert res[f"{F}::T::test_crash"].message == rks.CRASH_MESSAGE


def test_parse_log_teardown_failure_counts_as_failed():
    nodeid = f"{F}::T::test_td"
    log = _lines(*_phases(nodeid)[:-1],
                 {"event": "report", "nodeid": nodeid, "when": "teardown",
                  "outcome": "failed", "message": "boom", "duration": 0.0})
    res = rks.parse_log(log)[nodeid]
    assert (res.outcome, res.message) == ("failed", "[teardown] boom")


def test_parse_exclusions():
    text = textwrap.dedent(f"""\
        # a comment

        {F}::T::test_a  # uses tf.SparseTensor
        {F}::T::test_b[float16]  # jax-only
        {F}::T::test_c_(none, true)_true  # flash attention # kernels
        """)
    assert rks.parse_exclusions(text) == {
        f"{F}::T::test_a": "uses tf.SparseTensor",
        f"{F}::T::test_b[float16]": "jax-only",
        f"{F}::T::test_c_(none, true)_true": "flash attention # kernels",
    }
    with pytest.raises(ValueError, match="no reason"):
        rks.parse_exclusions(f"{F}::T::test_a\n")
    with pytest.raises(ValueError, match="line 1"):
        rks.parse_exclusions("not a node id  # why\n")


def test_targets_and_exclusions_for():
    assert rks.normalize_target("ops") == "keras/src/ops"
    assert rks.normalize_target("./keras/src/ops/") == "keras/src/ops"
    assert rks.normalize_target("layers/core/dense_test.py") == \
        "keras/src/layers/core/dense_test.py"
    ex = {f"{F}::T::a": "r", "keras/src/opsx/y_test.py::T::b": "r",
          "keras/src/layers/core/dense_test.py::T::c": "r"}
    assert rks.exclusions_for("keras/src/ops", ex) == [f"{F}::T::a"]
    assert rks.exclusions_for(F, ex) == [f"{F}::T::a"]
    assert rks.exclusions_for("keras/src/layers", ex) == [
        "keras/src/layers/core/dense_test.py::T::c"]


def test_summaries_and_tables():
    R = rks.TestResult
    results = [R(f"{F}::T::a", "passed"), R(f"{F}::T::b", "failed", "x"),
               R(f"{F}::T::c", "skipped"), R(f"{F}::T::d", "excluded"),
               R("keras/src/layers/core/dense_test.py::T::e", "passed")]
    per_file, per_target, total = rks.summarize(
        results, ["keras/src/ops", "keras/src/layers"])
    assert per_file[F].as_dict() == {"passed": 1, "failed": 1, "skipped": 1,
                                     "excluded": 1, "total": 3, "pass_rate": 0.5}
    assert per_target["keras/src/layers"].passed == 1
    assert (total.passed, total.failed, total.total) == (2, 1, 4)
    md = rks.format_markdown(per_target, total)
    assert "| ops | 1 | 1 | 1 | 3 | 1 | 50.0% |" in md
    assert "| **total** | 2 | 1 | 1 | 4 | 1 | 66.7% |" in md
    text = rks.format_text(per_file, total, [results[1]])
    assert f"FAILED {F}::T::b - x" in text and "TOTAL" in text
    assert rks.Counts().pass_rate is None
    stale = rks.stale_exclusions({f"{F}::T::d": "r", f"{F}::T::zz": "r"},
                                 ["keras/src/ops"], results)
    assert stale == [f"{F}::T::zz"]


def test_junit_round_trip(tmp_path):
    R = rks.TestResult
    results = [R(f"{F}::T::a", "passed", duration=1.5), R(f"{F}::T::b[x]", "failed", "bad"),
               R(f"{F}::test_free", "skipped", "why")]
    rks.write_junit(results, tmp_path / "r.xml")
    back = rks.parse_junit((tmp_path / "r.xml").read_text())
    assert {k: v.outcome for k, v in back.items()} == {
        f"{F}::T::a": "passed", f"{F}::T::b[x]": "failed", f"{F}::test_free": "skipped"}
    assert back[f"{F}::T::b[x]"].message == "bad"
    assert back[f"{F}::T::a"].duration == pytest.approx(1.5)


def test_conftest_template_compiles():
    compile(rks.CONFTEST, "conftest.py", "exec")
    assert "def skip_if_backend(given_backend, reason)" in rks.CONFTEST
    assert rks.LOG_ENV in rks.CONFTEST


def _fake_tree(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    pkg = root / "keras" / "src"
    (pkg / "backend").mkdir(parents=True)
    (root / "keras" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "backend" / "__init__.py").write_text("def backend():\n    return 'fake'\n")
    (pkg / "ops").mkdir()
    (pkg / "ops" / "__init__.py").write_text("")
    (pkg / "ops" / "a_test.py").write_text(textwrap.dedent("""\
        import os
        import signal

        import pytest

        from conftest import skip_if_backend


        class TestA:
            def test_ok(self):
                pass

            def test_fails(self):
                assert 1 == 2

            def test_excluded(self):
                assert False

            def test_excluded_not(self):  # an exclusion is not a prefix match
                pass

            @pytest.mark.multi_device
            def test_multi(self):
                pass

            @skip_if_backend("fake", "not on fake")
            def test_skipped(self):
                pass

            def test_crash(self):
                os.kill(os.getpid(), signal.SIGSEGV)

            def test_after_crash(self):
                pass

            def test_needs_reference(self):
                raise ModuleNotFoundError("No module named 'torch'", name="torch")

            def test_needs_other_module(self):
                raise ModuleNotFoundError("No module named 'foo'", name="foo")
        """))
    (root / "conftest.py").write_text(rks.CONFTEST)
    return root


def test_run_target_end_to_end(tmp_path):
    root = _fake_tree(tmp_path / "tree")
    logs = tmp_path / "logs"
    logs.mkdir()
    cfg = rks.RunConfig(root=root, backend="fake", timeout=60, stall=120)
    ex = ["keras/src/ops/a_test.py::TestA::test_excluded"]
    res = rks.run_target("keras/src/ops", ex, cfg, logs)
    got = {k.rsplit("::", 1)[1]: v.outcome for k, v in res.items()}
    assert got == {"test_ok": "passed", "test_fails": "failed", "test_excluded": "excluded",
                   "test_excluded_not": "passed", "test_multi": "skipped",
                   "test_skipped": "skipped", "test_crash": "failed",
                   "test_after_crash": "passed", "test_needs_reference": "skipped",
                   "test_needs_other_module": "failed"}
    assert "torch as a test reference" in \
        res["keras/src/ops/a_test.py::TestA::test_needs_reference"].message
    assert res["keras/src/ops/a_test.py::TestA::test_crash"].message == rks.CRASH_MESSAGE


def test_failure_causes_groups_messages():
    R = rks.TestResult
    fails = [R("a::T::x", "failed", "NotImplementedError: kbackend: core.scatter is not"),
             R("a::T::y", "failed", "NotImplementedError: kbackend: core.scatter is not"),
             R("a::T::z", "failed", "ValueError: shape (2, 3) vs (4,)\nmore"),
             R("a::T::w", "failed", "ValueError: shape (5, 6) vs (7,)")]
    causes = rks.failure_causes(fails)
    assert causes[0] == (2, "NotImplementedError: kbackend: core.scatter is not", "a::T::x")
    assert causes[1] == (2, "ValueError: shape (N, N) vs (N,)", "a::T::z")


def test_patch_test_files(tmp_path):
    rel = "keras/src/trainers/t_test.py"
    (tmp_path / rel).parent.mkdir(parents=True)
    (tmp_path / rel).write_text('if a:\n    x = 1\nelif backend.backend() == "openvino":\n'
                                '    x = 2\nelse:\n    raise ImportError\n')
    patches = {rel: [('elif backend.backend() == "openvino":',
                      'elif backend.backend() == "kbackend":\n    x = 3\n')],
               "missing_test.py": [("x", "y")]}
    notes = rks.patch_test_files(tmp_path, patches)
    assert notes == [(f"{rel}: kbackend entry added before "
                     f"'elif backend.backend() == \"openvino\":'")]
    assert '"kbackend":\n    x = 3\nelif backend.backend() == "openvino"' in \
        (tmp_path / rel).read_text()
    assert "not patched" in rks.patch_test_files(tmp_path, {rel: [("nope", "")]})[0]
    assert set(rks.TEST_PATCHES) == {"keras/src/trainers/trainer_test.py",
                                     "keras/src/export/onnx_test.py"}


def test_missing_optional_deps(monkeypatch):
    monkeypatch.setattr(rks, "OPTIONAL_TEST_DEPS",
                        {"json": "json-pkg", "no_such_mod_xyz.sub": "no-such-pkg"})
    assert rks.missing_optional_deps() == ["no-such-pkg"]


def test_prepare_tree_copies_and_adds_conftest_and_keras_init(tmp_path):
    import argparse

    src = tmp_path / "src" / "keras-9.9"
    (src / "keras" / "src").mkdir(parents=True)
    (src / "keras" / "api").mkdir()
    (src / "keras" / "api" / "__init__.py").write_text("")
    (src / "keras" / "src" / "version.py").write_text('__version__ = "9.9"\n')
    work = tmp_path / "work"
    work.mkdir()
    root = rks.prepare_tree(argparse.Namespace(src=str(tmp_path / "src"), sdist=None,
                                               cache_dir=None), work)
    assert root == work / "keras-9.9"
    assert (root / "conftest.py").read_text() == rks.CONFTEST
    assert (root / "keras" / "__init__.py").read_text() == rks.KERAS_INIT
    assert not (src / "conftest.py").exists()  # the source is not modified
    compile(rks.KERAS_INIT, "keras/__init__.py", "exec")
