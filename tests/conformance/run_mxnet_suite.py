#!/usr/bin/env python
"""Run MXNet 1.9.1's own unit-test files through kbackend's ``mxnet`` alias.

MXNet's tests (``tests/python/unittest/test_*.py`` in its sources) are a measure of how
much MXNet 1.x code runs unchanged on kbackend (issue 16). They are never copied into
this repository; at run time this script:

1. copies the source folder (``--src``; default ``$KBACKEND_MXNET_TESTS`` or
   ``/work/mxnet_src/tests/python/unittest``) into a temporary folder (``--workdir``;
   removed at the end unless ``--keep``) as ``<work>/unittest``;
2. provides what those files import besides ``mxnet``: ``../common/models.py`` and
   ``../train/test_bucketing.py`` (from ``<src>/../common`` and ``<src>/../train`` when
   they exist, else from an MXNet git checkout, ``--mxnet-repo``, at tag ``1.9.1``; a
   missing ``models.py`` becomes a stub that says it is missing; ``test_bucketing.py``'s
   ``from mxnet.contrib.amp import amp``, which kbackend lacks, is guarded so that
   ``test_module.py`` imports and only the tests using AMP fail) and a small ``nose`` stand-in
   (MXNet 1.x's tests use ``nose.tools``; nose itself does not run on Python 3.10+);
3. runs each test file in its own ``pytest`` subprocess with a plugin (``-p``) that
   installs the alias (``gluon.compat.mxnet.install(force=True)``) before the file is
   imported and logs every test's outcome; a per-test timeout (pytest-timeout) and a
   per-file timeout; a subprocess that crashes or hangs marks the running test failed
   and the rest of the file runs in a new subprocess;
4. prints per file passed / failed / errors / skipped and the pass rate, the total, and
   the failing test ids with the first line of their error; ``--json`` and ``--junit``
   write the per-test results, ``--markdown`` prints a table.

The pass rate is passed / (passed + failed + errors); skipped tests are not counted. An
error is a failure outside the test's body (setup, teardown) or a file that fails to
import: then each of its test functions (counted in its source) is an error. A test that
fails only because it needs a download (its error says so: ``NETWORK_MARKERS``) counts as
``network``: it is left out of this offline pass rate, and the overall rate, printed
beside it, counts it as a failure.

The plugin also restores, in the test processes only, what MXNet 1.9.1's tests expect of
their era's numpy (<1.24: ``np.NaN``, ``np.Inf``, ...) and h5py (<3: ``h5py.File(name)``
opens for appending), so that a test fails on kbackend and not on the environment.

Exit status: 0 when every test passed or skipped, 1 when some did not, 2 when the
suite could not run (no source folder).

Example::

    python tests/conformance/run_mxnet_suite.py                      # issue 16's files
    python tests/conformance/run_mxnet_suite.py --files test_gluon.py test_ndarray
    python tests/conformance/run_mxnet_suite.py --all --json out.json --markdown
    python tests/conformance/run_mxnet_suite.py --files test_symbol.py -k infer
"""
from __future__ import annotations

import argparse
import ast
import datetime
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_SRC = "/work/mxnet_src/tests/python/unittest"
DEFAULT_MXNET_REPO = "/work/.mirror/apache+mxnet/repo"
MXNET_TAG = "1.9.1"
SRC_ENV = "KBACKEND_MXNET_TESTS"
REPO_ENV = "KBACKEND_MXNET_REPO"
LOG_ENV = "KBACKEND_MXNET_SUITE_LOG"
DONE_ENV = "KBACKEND_MXNET_SUITE_DONE"
PLUGIN = "kbackend_mxnet_suite_plugin"
CRASH_MESSAGE = "the pytest process died or was killed (hang) during this test"
OUTCOMES = ("passed", "failed", "errors", "skipped", "network")
#: A failed test whose first error line holds one of these failed only because it needs a
#: download (kbackend never downloads: datasets, pretrained weights, files from GitHub); it
#: counts as ``network``, outside the offline pass rate, and in the overall one as a failure.
NETWORK_MARKERS = ("NoNetworkError", "never downloads", "does not download anything")
#: Folders beside MXNet's unittest folder that its test files import from.
SIBLINGS = ("common", "train")

#: The files issue 16 names (gluon, ndarray, symbol, autograd, optimizer, loss, rnn,
#: kvstore, engine, module, io, recordio, init, metric, random, test_utils).
ISSUE16_FILES = [
    "test_gluon.py", "test_gluon_data.py", "test_gluon_rnn.py", "test_gluon_trainer.py",
    "test_gluon_save.py", "test_ndarray.py", "test_symbol.py", "test_autograd.py",
    "test_optimizer.py", "test_loss.py", "test_rnn.py", "test_kvstore.py",
    "test_kvstore_custom.py", "test_engine.py", "test_engine_import.py", "test_module.py",
    "test_io.py", "test_recordio.py", "test_init.py", "test_metric.py", "test_random.py",
    "test_test_utils.py",
]

# The pytest plugin (``-p``): installs the alias before any test file is imported, makes
# --deselect exact, skips the tests a restarted run already has, and logs every outcome,
# one JSON object a line, to the file named by LOG_ENV.
PLUGIN_SOURCE = '''\
"""pytest plugin written by kbackend's tests/conformance/run_mxnet_suite.py."""
import json
import os
import time

import numpy as _np

# MXNet 1.9.1's tests were written for numpy<1.24 and h5py<3: restore the numpy aliases
# numpy 2 removed and h5py 2's default file mode ('a'), so that a test fails on kbackend,
# not on the test environment.
for _name, _value in (("NaN", _np.nan), ("Inf", _np.inf), ("NINF", -_np.inf),
                      ("PINF", _np.inf), ("float_", _np.float64), ("bool8", _np.bool_)):
    if not hasattr(_np, _name):
        setattr(_np, _name, _value)
try:
    import h5py as _h5py
except ImportError:
    _h5py = None
if _h5py is not None and not getattr(_h5py.File, "_kbackend_shim", False):
    class _File(_h5py.File):
        _kbackend_shim = True

        def __init__(self, name, mode=None, *args, **kwargs):
            super().__init__(name, "a" if mode is None else mode, *args, **kwargs)

    _h5py.File = _File

from gluon.compat import mxnet as _alias

_alias.install(force=True)

_LOG = os.environ.get("${LOG_ENV}")
_DONE = os.environ.get("${DONE_ENV}")


def _log(**event):
    if _LOG:
        event["t"] = round(time.time(), 3)
        with open(_LOG, "a", encoding="utf-8") as f:
            f.write(json.dumps(event) + "\\n")


def pytest_collection_modifyitems(config, items):
    if _DONE and os.path.exists(_DONE):
        with open(_DONE, encoding="utf-8") as f:
            done = {line.strip() for line in f if line.strip()}
        items[:] = [item for item in items if item.nodeid not in done]


def pytest_collectreport(report):
    if report.failed:
        _log(event="collect_error", nodeid=report.nodeid,
             message=str(report.longreprtext)[-3000:])


def pytest_runtest_logstart(nodeid, location):
    _log(event="start", nodeid=nodeid)


def pytest_runtest_logreport(report):
    message = ""
    if report.failed or report.skipped:
        crash = getattr(report.longrepr, "reprcrash", None)
        if crash is not None:
            message = crash.message
        elif isinstance(report.longrepr, tuple):  # skip: (path, line, reason)
            message = str(report.longrepr[-1])
        else:
            message = str(report.longrepr)
    outcome = report.outcome
    if hasattr(report, "wasxfail"):
        outcome = "skipped" if report.skipped else "passed"
    _log(event="report", nodeid=report.nodeid, when=report.when, outcome=outcome,
         message=message[:2000], duration=round(report.duration, 3))
'''.replace("${LOG_ENV}", LOG_ENV).replace("${DONE_ENV}", DONE_ENV)

# A stand-in for nose 1.3 (MXNet 1.x's test runner; it does not import on Python 3.10+):
# the parts of nose and nose.tools MXNet's test files use, on top of unittest and pytest.
NOSE_INIT = '''\
"""A stand-in for nose, written by kbackend's run_mxnet_suite.py (not nose itself)."""
from unittest import SkipTest

from . import tools
from .tools import with_setup


def run(*args, **kwargs):
    raise RuntimeError("nose.run: this is a stand-in for nose; run the file with pytest")


runmodule = main = run
'''

NOSE_TOOLS = '''\
"""The parts of nose.tools that MXNet's tests use (a stand-in, not nose itself)."""
import functools
import re
import time
import unittest

__all__ = ["ok_", "eq_", "raises", "make_decorator", "with_setup", "istest", "nottest",
           "timed", "TimeExpired", "set_trace"]


class _Dummy(unittest.TestCase):
    def nop(self):
        pass


_t = _Dummy("nop")
_t.maxDiff = None


def _snake(name):
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


for _name in dir(_t):
    if _name.startswith("assert") and "_" not in _name:
        globals()[_snake(_name)] = getattr(_t, _name)
        __all__.append(_snake(_name))


def ok_(expr, msg=None):
    if not expr:
        raise AssertionError(msg)


def eq_(a, b, msg=None):
    if not a == b:
        raise AssertionError(msg or "%r != %r" % (a, b))


def make_decorator(func):
    """Copy ``func``'s name, doc, module and attributes onto the decorated function
    (no ``__wrapped__``: pytest sees the wrapper's own signature, as nose did)."""
    def decorate(newfunc):
        name = func.__name__
        newfunc.__dict__.update(func.__dict__)
        newfunc.__doc__ = func.__doc__
        newfunc.__module__ = func.__module__
        newfunc.__name__ = name
        newfunc.__qualname__ = getattr(func, "__qualname__", name)
        newfunc.__dict__.pop("__wrapped__", None)
        return newfunc
    return decorate


def raises(*exceptions):
    valid = " or ".join(e.__name__ for e in exceptions)

    def decorate(func):
        name = func.__name__

        def newfunc(*arg, **kw):
            try:
                func(*arg, **kw)
            except exceptions:
                pass
            else:
                raise AssertionError("%s() did not raise %s" % (name, valid))
        return make_decorator(func)(newfunc)
    return decorate


def with_setup(setup=None, teardown=None):
    def decorate(func):
        @functools.wraps(func)
        def newfunc(*arg, **kw):
            if setup is not None:
                setup()
            try:
                return func(*arg, **kw)
            finally:
                if teardown is not None:
                    teardown()
        return newfunc
    return decorate


def istest(func):
    func.__test__ = True
    return func


def nottest(func):
    func.__test__ = False
    return func


class TimeExpired(AssertionError):
    pass


def timed(limit):
    def decorate(func):
        def newfunc(*arg, **kw):
            start = time.time()
            result = func(*arg, **kw)
            if time.time() - start > limit:
                raise TimeExpired("Time limit (%s) exceeded" % limit)
            return result
        return make_decorator(func)(newfunc)
    return decorate


def set_trace():
    import pdb
    pdb.set_trace()
'''

MODELS_STUB = '''\
"""Stub for MXNet's tests/python/common/models.py, written by run_mxnet_suite.py: the
file was neither beside the test folder nor in an MXNet git checkout."""


def __getattr__(name):
    raise AttributeError(
        "models.%s: MXNet's tests/python/common/models.py was not found (put it in "
        "<src>/../common or pass --mxnet-repo)" % name)
'''

PYTEST_INI = """\
[pytest]
addopts =
python_files = test_*.py
"""


# --------------------------------------------------------------------------- results


@dataclass
class TestResult:
    """One test's outcome: ``passed``, ``failed``, ``errors`` or ``skipped``."""

    nodeid: str
    outcome: str
    message: str = ""
    duration: float = 0.0

    @property
    def path(self) -> str:
        """The test file of the test, ``test_gluon.py``."""
        return self.nodeid.split("::", 1)[0]


@dataclass
class Counts:
    """Outcome counts for a file or the whole run."""

    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    network: int = 0

    def add(self, outcome: str, n: int = 1) -> None:
        """Count ``n`` more tests with ``outcome``."""
        setattr(self, outcome, getattr(self, outcome) + n)

    def merge(self, other: Counts) -> None:
        """Add another set of counts to these."""
        for name in OUTCOMES:
            self.add(name, getattr(other, name))

    @property
    def ran(self) -> int:
        """Tests counted in the pass rate: passed + failed + errors."""
        return self.passed + self.failed + self.errors

    @property
    def pass_rate(self) -> float | None:
        """The offline pass rate: passed / (passed + failed + errors), or None when no
        test counts (tests that need a download are left out)."""
        return self.passed / self.ran if self.ran else None

    @property
    def overall_rate(self) -> float | None:
        """passed / (passed + failed + errors + network): downloads count as failures."""
        n = self.ran + self.network
        return self.passed / n if n else None

    def as_dict(self) -> dict:
        """The counts and both pass rates as a JSON-ready dict."""
        return {"passed": self.passed, "failed": self.failed, "errors": self.errors,
                "skipped": self.skipped, "network": self.network,
                "pass_rate": self.pass_rate, "overall_rate": self.overall_rate}


def needs_network(message: str) -> bool:
    """Whether a failure's message says the test failed only for want of a download.

    Example:
        >>> needs_network("NoNetworkError: get_mnist(): kbackend does not download anything")
        True
        >>> needs_network("AssertionError: 1 != 2")
        False
    """
    return any(m in message for m in NETWORK_MARKERS)


def parse_log(lines) -> tuple[dict[str, TestResult], list[TestResult]]:
    """Per-test results from the plugin's JSON-lines log.

    A test is an error if its setup or teardown failed, failed if its body failed,
    skipped if a phase was skipped (and none failed), passed otherwise. A test that
    started but has no teardown report is the one a crash or a kill interrupted: it
    fails with ``CRASH_MESSAGE``. A failure whose message says it needed a download
    (``NETWORK_MARKERS``) is ``network``.

    Args:
        lines: the log's lines (an open file or a list of strings).

    Returns:
        ``(results, collect_errors)``: dict nodeid -> TestResult in the order the tests
        started, and one TestResult per file or class that failed to collect.
    """
    results: dict[str, TestResult] = {}
    collect: list[TestResult] = []
    finished: set = set()
    started: list = []
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:  # a line cut short by a kill
            continue
        kind, nodeid = event.get("event"), event.get("nodeid", "")
        if kind == "collect_error":
            collect.append(TestResult(nodeid, "errors",
                                      collection_message(event.get("message", ""))))
        elif kind == "start":
            started.append(nodeid)
            results.setdefault(nodeid, TestResult(nodeid, "passed"))
        elif kind == "report":
            res = results.setdefault(nodeid, TestResult(nodeid, "passed"))
            res.duration += float(event.get("duration", 0.0))
            outcome, when = event.get("outcome"), event.get("when", "call")
            if outcome == "failed" and res.outcome not in ("failed", "errors"):
                res.outcome = "failed" if when == "call" else "errors"
                prefix = "" if when == "call" else f"[{when}] "
                res.message = prefix + first_line(event.get("message", ""))
            elif outcome == "skipped" and res.outcome == "passed":
                res.outcome, res.message = "skipped", first_line(event.get("message", ""))
            if when == "teardown":
                finished.add(nodeid)
    for nodeid in started:
        if nodeid not in finished and results[nodeid].outcome not in ("failed", "errors"):
            results[nodeid].outcome, results[nodeid].message = "failed", CRASH_MESSAGE
    for res in results.values():
        if res.outcome == "failed" and needs_network(res.message):
            res.outcome = "network"
    return results, collect


def first_line(text: str) -> str:
    """The first non-empty line of an error message (at most 300 characters)."""
    for line in str(text).splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


def collection_message(text: str) -> str:
    """A one-line message for a file that failed to import: its last ``E`` line."""
    lines = [ln[1:].strip() for ln in text.splitlines() if ln.startswith("E ")]
    return "collection error: " + (lines[-1] if lines else first_line(text[-500:]))


def count_tests(source: str) -> int:
    """How many tests a file defines: top-level ``test*`` functions and the ``test*``
    methods of top-level ``Test*`` classes (what a collection error takes down).

    Example:
        >>> count_tests("def test_a(): pass\\nclass TestB:\\n    def test_c(self): pass")
        2
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return 1
    n = 0
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and node.name.startswith("test"):
            n += 1
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            n += sum(1 for x in node.body if isinstance(x, (ast.FunctionDef,
                                                            ast.AsyncFunctionDef))
                     and x.name.startswith("test"))
    return max(n, 1)


@dataclass
class FileResult:
    """The results of one test file."""

    name: str
    tests: list
    wall_s: float = 0.0
    note: str = ""

    @property
    def counts(self) -> Counts:
        """The file's outcome counts."""
        c = Counts()
        for t in self.tests:
            c.add(t.outcome)
        return c


# --------------------------------------------------------------------------- setup


def prepare_workdir(src: Path, work: Path, mxnet_repo: str | None) -> Path:
    """Copy the test folder and the helpers it needs into ``work``; the test folder.

    Args:
        src: MXNet's ``tests/python/unittest`` (or a folder laid out like it).
        work: an empty folder.
        mxnet_repo: an MXNet git directory to take ``tests/python/common`` from when
            ``src/../common`` does not exist (None: a stub ``models`` module).

    Returns:
        ``work/unittest``, where the test files are.
    """
    dest = work / "unittest"
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for sibling in SIBLINGS:  # test files put ../common and ../train on sys.path
        target = work / sibling
        if (src.parent / sibling).is_dir():
            shutil.copytree(src.parent / sibling, target,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif mxnet_repo and os.path.isdir(mxnet_repo):
            _extract_from_git(mxnet_repo, f"tests/python/{sibling}", target)
        target.mkdir(exist_ok=True)
    _guard_optional_imports(work / "train" / "test_bucketing.py")
    common = work / "common"
    if not (common / "models.py").exists():
        (common / "models.py").write_text(MODELS_STUB, encoding="utf-8")
    shim = work / "shim"
    (shim / "nose").mkdir(parents=True)
    (shim / "nose" / "__init__.py").write_text(NOSE_INIT, encoding="utf-8")
    (shim / "nose" / "tools.py").write_text(NOSE_TOOLS, encoding="utf-8")
    (shim / f"{PLUGIN}.py").write_text(PLUGIN_SOURCE, encoding="utf-8")
    (dest / "pytest.ini").write_text(PYTEST_INI, encoding="utf-8")
    return dest


# Imports of helper files (not of the test files) that kbackend lacks: guarded, so that the
# test file importing the helper runs and only the tests using the name fail.
OPTIONAL_IMPORTS = ("from mxnet.contrib.amp import amp",)


def _guard_optional_imports(path: Path) -> None:
    """Rewrite each line of ``OPTIONAL_IMPORTS`` in helper file ``path`` as a
    ``try``/``except ImportError`` that binds the name to None."""
    if not path.exists():
        return
    text = path.read_text(encoding="utf-8")
    for line in OPTIONAL_IMPORTS:
        name = line.rsplit(" ", 1)[-1]
        text = text.replace(line, f"try:\n    {line}\nexcept ImportError:  # guarded by "
                                  f"run_mxnet_suite.py: not in kbackend\n    {name} = None")
    path.write_text(text, encoding="utf-8")


def _extract_from_git(repo: str, path: str, target: Path) -> None:
    """Extract folder ``path`` of ``repo`` at ``MXNET_TAG`` into ``target`` (nothing when
    git or the path is missing)."""
    try:
        out = subprocess.run(["git", "-C", repo, "archive", "--format=tar", MXNET_TAG, path],
                             capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return
    if out.returncode != 0:
        return
    prefix = path.rstrip("/") + "/"
    with tarfile.open(fileobj=io.BytesIO(out.stdout)) as tar:
        for member in tar.getmembers():
            if not member.isfile() or not member.name.startswith(prefix):
                continue
            rel = Path(member.name[len(prefix):])
            if rel.is_absolute() or ".." in rel.parts:
                continue
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(tar.extractfile(member).read())


def resolve_files(src: Path, names: list[str] | None, all_files: bool) -> list[str]:
    """The test file names to run: ``names`` (``test_x.py``, ``test_x`` or ``x``), every
    ``test_*.py`` of ``src`` with ``all_files``, else ``ISSUE16_FILES``."""
    if all_files:
        return sorted(p.name for p in src.glob("test_*.py"))
    out = []
    for n in names or ISSUE16_FILES:
        base = os.path.basename(n)
        if not base.endswith(".py"):
            base += ".py"
        if not base.startswith("test_"):
            base = "test_" + base
        out.append(base)
    return out


def run_file(name: str, testdir: Path, work: Path, *, test_timeout: float,
             file_timeout: float, extra: list[str], retries: int = 3,
             python: str = sys.executable, quiet: bool = False) -> FileResult:
    """Run one test file in pytest subprocesses and collect its results.

    A subprocess that exits without finishing (a crash, or a kill after ``file_timeout``
    seconds) leaves the running test failed; the file's remaining tests then run in a
    new subprocess, up to ``retries`` times.
    """
    path = testdir / name
    if not path.exists():
        return FileResult(name, [TestResult(name, "errors", f"{name} is not in {testdir}")],
                          note="missing")
    log = work / f"{name}.log"
    done = work / f"{name}.done"
    for p in (log, done):
        p.unlink(missing_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(work / "shim"), str(REPO)] + [p for p in [env.get("PYTHONPATH")] if p])
    env[LOG_ENV], env[DONE_ENV] = str(log), str(done)
    env.setdefault("MXNET_TEST_COUNT", "1")
    cmd = [python, "-m", "pytest", name, "-q", "-p", PLUGIN, "-p", "no:cacheprovider",
           "-c", "pytest.ini", "--rootdir", str(testdir), "-o", "console_output_style=classic",
           f"--timeout={test_timeout}", "--tb=line", "-rN", *extra]
    t0 = time.time()
    note = ""
    results: dict[str, TestResult] = {}
    collect: list[TestResult] = []
    for attempt in range(retries + 1):
        try:
            proc = subprocess.run(cmd, cwd=testdir, env=env, timeout=file_timeout,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  check=False)
            rc, tail = proc.returncode, proc.stdout[-3000:]
        except subprocess.TimeoutExpired as e:
            rc = None
            tail = (e.stdout or b"")[-3000:] if isinstance(e.stdout, bytes) else ""
            note = f"killed after {file_timeout:.0f} s"
        if log.exists():
            with open(log, encoding="utf-8") as f:
                results, collect = parse_log(f)
        if rc is not None and (rc in (0, 1, 5) or collect):  # finished, or did not import
            break
        if rc is not None:
            note = f"pytest exited with status {rc}"
            if not results and not collect:  # nothing ran: a usage error or a crash at start
                collect = [TestResult(name, "errors", f"{note}: {first_line(tail[-500:])}")]
                break
        with open(done, "w", encoding="utf-8") as f:  # rerun the rest of the file
            f.write("\n".join(results) + "\n")
        if not quiet:
            print(f"  {name}: {note}; restarting for the remaining tests", flush=True)
    tests = list(results.values())
    if collect:
        file_level = [c for c in collect if c.nodeid in (name, "")]
        if file_level and not tests:  # the module did not import: all its tests error
            n = count_tests(path.read_text(encoding="utf-8", errors="replace"))
            msg = file_level[0].message
            tests = [TestResult(f"{name}::<collection error {i + 1}/{n}>", "errors", msg)
                     for i in range(n)]
        else:
            tests.extend(c for c in collect if c.nodeid not in (name, ""))
    return FileResult(name, tests, round(time.time() - t0, 1), note)


# --------------------------------------------------------------------------- output


def _rate(c: Counts, overall: bool = False) -> str:
    r = c.overall_rate if overall else c.pass_rate
    return "n/a" if r is None else f"{100 * r:.1f}%"


def summary(files: list[FileResult], failures: int = 50) -> str:
    """The per-file table, the total and the failing tests (at most ``failures`` a file;
    0: none listed)."""
    total = Counts()
    width = max([len(f.name) for f in files] + [5])
    lines = [f"{'file':<{width}}  passed  failed  errors  skipped  network  pass rate"
             f"  overall    time"]
    for f in files:
        c = f.counts
        total.merge(c)
        lines.append(f"{f.name:<{width}}  {c.passed:6d}  {c.failed:6d}  {c.errors:6d}  "
                     f"{c.skipped:7d}  {c.network:7d}  {_rate(c):>9}  {_rate(c, True):>7}"
                     f"  {f.wall_s:5.0f}s" + (f"  ({f.note})" if f.note else ""))
    lines.append(f"{'TOTAL':<{width}}  {total.passed:6d}  {total.failed:6d}  "
                 f"{total.errors:6d}  {total.skipped:7d}  {total.network:7d}  "
                 f"{_rate(total):>9}  {_rate(total, True):>7}")
    lines.append("(pass rate: offline, tests that need a download left out; overall: "
                 "they count as failures)")
    if failures:
        for f in files:
            bad = [t for t in f.tests if t.outcome in ("failed", "errors", "network")]
            if not bad:
                continue
            lines.append(f"\n{f.name}: {len(bad)} not passing")
            shown = [t for t in bad if "::<collection error " not in t.nodeid
                     or t.nodeid.endswith(" 1/" + t.nodeid.rpartition("/")[2])]
            for t in shown[:failures]:
                tag = {"errors": "ERROR", "network": "NETWORK"}.get(t.outcome, "FAIL")
                lines.append(f"  {tag} {t.nodeid}: {t.message}")
            if len(shown) > failures:
                lines.append(f"  ... and {len(shown) - failures} more")
    return "\n".join(lines)


def markdown(files: list[FileResult]) -> str:
    """The per-file counts as a Markdown table with a total row."""
    total = Counts()
    rows = ["| file | passed | failed | errors | skipped | needs network | pass rate | overall |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for f in files:
        c = f.counts
        total.merge(c)
        rows.append(f"| {f.name} | {c.passed} | {c.failed} | {c.errors} | {c.skipped} | "
                    f"{c.network} | {_rate(c)} | {_rate(c, True)} |")
    rows.append(f"| **total** | {total.passed} | {total.failed} | {total.errors} | "
                f"{total.skipped} | {total.network} | **{_rate(total)}** | "
                f"**{_rate(total, True)}** |")
    return "\n".join(rows)


def to_json(files: list[FileResult], meta: dict) -> dict:
    """Everything as a JSON-ready dict: ``meta``, per-file counts and tests, the total."""
    total = Counts()
    out = {"meta": meta, "files": {}, "total": None}
    for f in files:
        c = f.counts
        total.merge(c)
        out["files"][f.name] = {**c.as_dict(), "wall_s": f.wall_s, "note": f.note,
                                "tests": [{"id": t.nodeid, "outcome": t.outcome,
                                           "message": t.message, "duration": t.duration}
                                          for t in f.tests]}
    out["total"] = total.as_dict()
    return out


def to_junit(files: list[FileResult]) -> str:
    """A JUnit XML document: one ``testsuite`` a file."""
    root = ET.Element("testsuites", name="mxnet-1.9.1-unittest")
    for f in files:
        c = f.counts
        suite = ET.SubElement(root, "testsuite", name=f.name, tests=str(len(f.tests)),
                              failures=str(c.failed), errors=str(c.errors),
                              skipped=str(c.skipped + c.network), time=f"{f.wall_s:.1f}")
        for t in f.tests:
            case = ET.SubElement(suite, "testcase", classname=f.name[:-3],
                                 name=t.nodeid.split("::", 1)[-1], time=f"{t.duration:.3f}")
            tag = {"failed": "failure", "errors": "error", "skipped": "skipped",
                   "network": "skipped"}.get(t.outcome)
            if tag:
                ET.SubElement(case, tag, message=t.message)
    return ET.tostring(root, encoding="unicode")


def _commit() -> str:
    try:
        out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10, check=False)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def _write_atomic(path: str, text: str) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module docstring); the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", default=os.environ.get(SRC_ENV, DEFAULT_SRC),
                    help=f"MXNet's tests/python/unittest (default ${SRC_ENV} or {DEFAULT_SRC})")
    ap.add_argument("--files", nargs="+", help="test files to run (default: issue 16's)")
    ap.add_argument("--all", action="store_true", help="every test_*.py in --src")
    ap.add_argument("--mxnet-repo", default=os.environ.get(REPO_ENV, DEFAULT_MXNET_REPO),
                    help="an MXNet git directory for tests/python/common (tag 1.9.1)")
    ap.add_argument("-k", dest="keyword", help="pytest -k expression")
    ap.add_argument("--test-timeout", type=float, default=300, help="seconds a test")
    ap.add_argument("--file-timeout", type=float, default=1800, help="seconds a subprocess")
    ap.add_argument("--workdir", help="folder for the copies (default: a temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the working folder")
    ap.add_argument("--json", help="write per-test results as JSON to this file")
    ap.add_argument("--junit", help="write per-test results as JUnit XML to this file")
    ap.add_argument("--markdown", action="store_true", help="also print a Markdown table")
    ap.add_argument("--failures", type=int, default=50,
                    help="failing tests listed per file (0: none)")
    ap.add_argument("--pytest-arg", action="append", default=[],
                    help="an extra pytest argument (repeatable)")
    args = ap.parse_args(argv)

    src = Path(args.src)
    if not src.is_dir():
        print(f"run_mxnet_suite: the MXNet test folder {src} does not exist (pass --src or "
              f"set ${SRC_ENV})", file=sys.stderr)
        return 2
    names = resolve_files(src, args.files, args.all)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="mxnet_suite_"))
    work.mkdir(parents=True, exist_ok=True)
    if any(work.iterdir()):
        print(f"run_mxnet_suite: --workdir {work} is not empty", file=sys.stderr)
        return 2
    extra = list(args.pytest_arg) + (["-k", args.keyword] if args.keyword else [])
    results = []
    try:
        testdir = prepare_workdir(src, work, args.mxnet_repo)
        for name in names:
            print(f"running {name} ...", flush=True)
            res = run_file(name, testdir, work, test_timeout=args.test_timeout,
                           file_timeout=args.file_timeout, extra=extra)
            c = res.counts
            print(f"  {c.passed} passed, {c.failed} failed, {c.errors} errors, "
                  f"{c.skipped} skipped, {c.network} need a download ({_rate(c)}) in "
                  f"{res.wall_s:.0f} s", flush=True)
            results.append(res)
    finally:
        if not args.keep and not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
        elif args.keep:
            print(f"working folder kept: {work}")
    print()
    print(summary(results, args.failures))
    if args.markdown:
        print()
        print(markdown(results))
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": _commit(), "src": str(src), "files": names}
    if args.json:
        _write_atomic(args.json, json.dumps(to_json(results, meta), indent=1))
    if args.junit:
        _write_atomic(args.junit, to_junit(results))
    total = Counts()
    for r in results:
        total.merge(r.counts)
    return 0 if total.failed + total.errors + total.network == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
