#!/usr/bin/env python
"""Run Keras' own test suite on the kbackend backend and summarize the results.

Keras' tests are the conformance target of kbackend (README.md, "Conformance"). They are not in
the keras wheel, so this script:

1. takes the keras sdist matching the installed keras version: ``--src DIR`` (an
   unpacked sdist), ``--sdist PATH`` (the ``.tar.gz``), the cache folder
   (``--cache-dir``), or else ``pip download --no-deps --no-binary :all:
   keras==<version>`` into the cache folder;
2. unpacks (or copies) it into a temporary folder (``--workdir``; removed at the end
   unless ``--keep``);
3. writes there its own small ``conftest.py`` (the repository's one is not in the
   sdist): the ``requires_trainable_backend`` and ``multi_device`` markers,
   ``skip_if_backend(backend, reason)``, a log of every test's outcome, and exact
   ``--deselect`` matching; and adds kbackend's entry where a test file hard-codes
   the built-in backends (``TEST_PATCHES``: trainer_test.py's if/elif chain of
   trainer classes and its dict of CPU device names, onnx_test.py's class-level skip
   of other backends), as kbackend_hook does for
   Keras' own modules; and, as the sdist lacks the repository's
   ``keras/__init__.py``, writes one (``KERAS_INIT``) so that the tree is the
   ``keras`` package and test modules import as ``keras.src.*``, as in Keras' CI;
4. runs each folder or file given (default ``keras/src/ops``; ``--all`` for the main
   folders) in its own ``pytest`` subprocess with ``KERAS_BACKEND=kbackend``, a
   per-test timeout (pytest-timeout) and the exclusion list
   (``tests/conformance/excluded.txt``) passed as ``--deselect``. A subprocess that
   stops producing results for too long is killed; a crash or a kill marks the test
   that was running as failed and the rest of the target runs in a new subprocess;
5. prints passed/failed/skipped/excluded per file and in total, the failing tests,
   and with ``--markdown`` a per-folder table; ``--json`` and ``--junit`` write the
   per-test results.

Exit status: 0 when no test failed, 1 when some did, 2 when the suite could not run.

Example::

    python tests/conformance/run_keras_suite.py                       # keras/src/ops
    python tests/conformance/run_keras_suite.py layers/core --markdown
    python tests/conformance/run_keras_suite.py --all --json results.json
    python tests/conformance/run_keras_suite.py keras/src/ops/math_test.py -k top_k

The exclusion list has one test per line, ``path::Class::test  # reason``; a test may
be excluded only when it is specific to another backend, never because kbackend gets
it wrong. An entry without ``[...]`` excludes all parametrizations of the test.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_EXCLUDED = HERE / "excluded.txt"
DEFAULT_TARGETS = ["keras/src/ops"]
ALL_TARGETS = ["ops", "layers", "models", "trainers", "optimizers", "losses", "metrics",
               "saving", "callbacks"]
BACKEND = "kbackend"
LOG_ENV = "KBACKEND_CONFORMANCE_LOG"
DONE_ENV = "KBACKEND_CONFORMANCE_DONE"
SAMPLE_ENV = "KBACKEND_CONFORMANCE_SAMPLE_SLICE"
CRASH_MESSAGE = "the pytest process died or was killed (hang) during this test"

# Test files that hard-code the built-in backends (an if/elif chain that picks a
# backend's class and fails for any other, a dict keyed by backend name): the runner
# adds kbackend's entry to its temporary copy, as kbackend_hook does for Keras' own
# modules. path -> [(anchor line, text put before it), ...]
TEST_PATCHES = {
    "keras/src/trainers/trainer_test.py": [
        ('elif backend.backend() == "openvino":',
         ('elif backend.backend() == "kbackend":\n'
         '    from kbackend.trainer import KBackendTrainer as Trainer\n')),
        ('            "torch": "cpu",',  # CPU_DEVICES[backend.backend()]
         '            "kbackend": "cpu:0",\n'),
    ],
    # The class-level skip of everything but tensorflow, jax and torch: kbackend
    # exports ONNX too (kbackend/onnx_export.py).
    "keras/src/export/onnx_test.py": [
        ('    backend.backend() not in ("tensorflow", "jax", "torch"),',
         '    backend.backend() != "kbackend" and\n'),
    ],
}

# Written as conftest.py at the root of the unpacked sdist. Keras' repository has its
# own conftest.py there, which the sdist lacks; this is our equivalent of its parts
# that matter for a third-party backend, plus the result log the runner reads.
CONFTEST = '''\
"""conftest.py written by kbackend's tests/conformance/run_keras_suite.py.

Stands in for the conftest.py of Keras' repository (not in the sdist): registers the
``requires_trainable_backend`` and ``multi_device`` markers, skips ``multi_device``
tests when Keras sees a single device, and defines ``skip_if_backend``. It also makes
``--deselect`` (the runner's exclusion list) exact (``path::Class::test`` deselects that test and its
parametrizations, not ``test_more``) and logs every test's outcome, one JSON object a
line, to the file named by ${LOG_ENV}. With ${SAMPLE_ENV}="K/N" it keeps the tests
whose CRC-32 of the test id is K modulo N (a fixed sample of about 1/N of them).
"""
import json
import os
import time
import zlib

import pytest

from keras.src.backend import backend

_LOG = os.environ.get("${LOG_ENV}")
_DONE = os.environ.get("${DONE_ENV}")
_SAMPLE = os.environ.get("${SAMPLE_ENV}")


def _log(**event):
    if _LOG:
        event["t"] = round(time.time(), 3)  # wall clock: gaps between tests show too
        with open(_LOG, "a", encoding="utf-8") as f:
            f.write(json.dumps(event) + "\\n")


def _device_count():
    try:
        from keras.src.distribution import distribution_lib

        return len(distribution_lib.list_devices())
    except Exception:  # the backend has no distribution_lib
        return 1


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "requires_trainable_backend: mark test for trainable backend only")
    config.addinivalue_line(
        "markers", "multi_device: mark test for running with multiple devices only")
    # Exact --deselect, applied below (pytest's own is a plain prefix match).
    config._kbackend_excluded = tuple(config.getoption("deselect") or ())
    config.option.deselect = []


def _matches(nodeid, prefixes):
    return any(nodeid == p or (nodeid.startswith(p) and nodeid[len(p)] in "[:")
               for p in prefixes)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    # After -k/-m: only the tests that would run are logged as excluded.
    prefixes = config._kbackend_excluded
    done = set()
    if _DONE and os.path.exists(_DONE):
        with open(_DONE, encoding="utf-8") as f:
            done = {line.strip() for line in f if line.strip()}
    keep, excluded = [], []
    part, parts = (int(v) for v in _SAMPLE.split("/")) if _SAMPLE else (0, 1)
    for item in items:
        if item.nodeid in done:
            continue
        if parts > 1 and zlib.crc32(item.nodeid.encode()) % parts != part:
            continue
        (excluded if _matches(item.nodeid, prefixes) else keep).append(item)
    if excluded:
        config.hook.pytest_deselected(items=excluded)
        for item in excluded:
            _log(event="excluded", nodeid=item.nodeid)
    items[:] = keep

    trainable = pytest.mark.skipif(
        backend() in ("numpy", "openvino"),
        reason="Trainer not implemented for NumPy and OpenVINO backend.")
    multi = None if _device_count() > 1 else pytest.mark.skip(
        reason="Requires multiple devices")
    for item in items:
        if "requires_trainable_backend" in item.keywords:
            item.add_marker(trainable)
        if multi is not None and "multi_device" in item.keywords:
            item.add_marker(multi)


# Other frameworks some Keras tests import as references for expected values. When
# one is not installed, a test that fails importing it is reported as skipped, naming
# it: that is the environment, not kbackend.
_REFERENCES = ("torch", "tensorflow")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    exc = call.excinfo.value if rep.failed and call.excinfo is not None else None
    if isinstance(exc, ModuleNotFoundError) and \
            (exc.name or "").split(".")[0] in _REFERENCES:
        rep.outcome = "skipped"
        rep.longrepr = (str(item.path), item.location[1],
                        f"needs {exc.name.split('.')[0]} as a test reference (not installed)")


def pytest_collectreport(report):
    if report.failed:
        _log(event="collect_error", nodeid=report.nodeid,
             message=str(report.longreprtext)[-2000:])


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
        message = message or "xfail: " + str(report.wasxfail)
    _log(event="report", nodeid=report.nodeid, when=report.when, outcome=outcome,
         message=message[:1000], duration=round(report.duration, 3))


def skip_if_backend(given_backend, reason):
    return pytest.mark.skipif(backend() == given_backend, reason=reason)
'''.replace("${LOG_ENV}", LOG_ENV).replace("${DONE_ENV}", DONE_ENV).replace(
    "${SAMPLE_ENV}", SAMPLE_ENV)


# Written as keras/__init__.py when the tree lacks one (the sdist does; Keras' repository
# has a generated one). It makes the tree the `keras` package, as in Keras' own CI: the
# test modules import as keras.src.<...> (custom classes defined in a test then
# deserialize by module name), and Keras' public API comes from keras/api.
KERAS_INIT = '''\
"""Written by kbackend's conformance runner: this source tree as the keras package."""
import os as _os

# keras/api holds the public API (keras.layers, keras.ops, ...): search it too.
__path__.append(_os.path.join(_os.path.dirname(__file__), "api"))
del _os

from keras.api import *  # noqa: E402,F403
from keras.src.version import __version__  # noqa: E402
'''


# --------------------------------------------------------------------------- results


@dataclass
class TestResult:
    """One test's outcome: ``passed``, ``failed``, ``skipped`` or ``excluded``."""

    nodeid: str
    outcome: str
    message: str = ""
    duration: float = 0.0

    @property
    def path(self) -> str:
        """The test file, ``keras/src/ops/core_test.py``."""
        return self.nodeid.split("::", 1)[0]


@dataclass
class Counts:
    """Outcome counts for a file, a folder or the whole run."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0
    excluded: int = 0

    def add(self, outcome: str) -> None:
        """Count one more test with ``outcome``."""
        setattr(self, outcome, getattr(self, outcome) + 1)

    @property
    def total(self) -> int:
        """Tests that ran: passed + failed + skipped (exclusions not counted)."""
        return self.passed + self.failed + self.skipped

    @property
    def pass_rate(self) -> float | None:
        """passed / (passed + failed), or None when nothing passed or failed."""
        ran = self.passed + self.failed
        return self.passed / ran if ran else None

    def as_dict(self) -> dict:
        """The counts, total and pass rate as a JSON-ready dict."""
        return {"passed": self.passed, "failed": self.failed, "skipped": self.skipped,
                "excluded": self.excluded, "total": self.total,
                "pass_rate": self.pass_rate}


def parse_log(lines) -> dict[str, TestResult]:
    """Per-test results from the conftest's JSON-lines log.

    A test fails if any of its phases (setup, call, teardown) failed, is skipped if a
    phase was skipped (and none failed), passes otherwise. A test that started but
    has no teardown report is the one a crash or a kill interrupted: it fails with
    ``CRASH_MESSAGE``. A collection error fails its whole file (one result named after
    the file).

    Args:
        lines: the log's lines (an open file or a list of strings).

    Returns:
        dict nodeid -> TestResult, in the order the tests started.
    """
    results: dict[str, TestResult] = {}
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
        if kind == "excluded":
            results[nodeid] = TestResult(nodeid, "excluded", "in excluded.txt")
        elif kind == "collect_error":
            results[nodeid] = TestResult(nodeid, "failed",
                                         collection_message(event.get("message", "")))
        elif kind == "start":
            started.append(nodeid)
            results.setdefault(nodeid, TestResult(nodeid, "passed"))
        elif kind == "report":
            res = results.setdefault(nodeid, TestResult(nodeid, "passed"))
            res.duration += float(event.get("duration", 0.0))
            outcome = event.get("outcome")
            if outcome == "failed" and res.outcome != "failed":
                res.outcome = "failed"
                when = event.get("when", "call")
                prefix = "" if when == "call" else f"[{when}] "
                res.message = prefix + event.get("message", "")
            elif outcome == "skipped" and res.outcome == "passed":
                res.outcome, res.message = "skipped", event.get("message", "")
            if event.get("when") == "teardown":
                finished.add(nodeid)
    for nodeid in started:
        if nodeid not in finished and results[nodeid].outcome != "failed":
            results[nodeid].outcome, results[nodeid].message = "failed", CRASH_MESSAGE
    return results


def collection_message(text: str) -> str:
    """A short message for a file that failed to import, naming a missing module."""
    match = re.search(r"No module named '([\w.]+)'", text)
    if match:
        top = match.group(1).split(".")[0]
        return (f"collection error: the test file needs the module {top!r}, which is "
                f"not installed (a Keras test dependency: pip install {top})")
    lines = [ln for ln in text.splitlines() if ln.startswith("E ")]
    return "collection error: " + (lines[-1][1:].strip() if lines else text[-500:])


def parse_junit(text: str) -> dict[str, TestResult]:
    """Per-test results from a pytest JUnit XML report (``junit_family=xunit1``).

    Args:
        text: the XML document.

    Returns:
        dict nodeid -> TestResult; the node id is rebuilt from the ``file`` and
        ``classname`` attributes (``keras.src.ops.core_test.Tests`` in
        ``keras/src/ops/core_test.py`` gives ``keras/src/ops/core_test.py::Tests``).
    """
    results: dict[str, TestResult] = {}
    for case in ET.fromstring(text).iter("testcase"):
        path = case.get("file", "")
        classname, name = case.get("classname", ""), case.get("name", "")
        module = path[:-3].replace("/", ".") if path.endswith(".py") else ""
        if not path:  # xunit2: no file attribute; assume the module is a .py path
            module, _, _ = classname.rpartition(".")
            cls = classname.rpartition(".")[2]
            if cls[:1].islower():  # a module-level test function
                module, cls = classname, ""
            path = module.replace(".", "/") + ".py"
        else:
            cls = classname[len(module) + 1:] if classname.startswith(module) else ""
        nodeid = "::".join(p for p in (path, *cls.split("."), name) if p)
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome, message = "failed", child.get("message", "")
                break
            if child.tag == "skipped":
                outcome, message = "skipped", child.get("message", "")
        results[nodeid] = TestResult(nodeid, outcome, message,
                                     float(case.get("time", 0) or 0))
    return results


def parse_exclusions(text: str) -> dict[str, str]:
    """The exclusion list: ``path::Class::test  # reason`` lines.

    Blank lines and lines starting with ``#`` are ignored.

    Args:
        text: the file's content.

    Returns:
        dict node id -> reason.

    Raises:
        ValueError: a line has no ``::`` node id or no reason after ``#``.
    """
    out: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        # Node ids may hold spaces (parametrizations such as "[(none, true)]" ids);
        # the reason starts at the first " #".
        nodeid, sep, reason = line.partition(" #")
        nodeid, reason = nodeid.strip(), reason.strip()
        if "::" not in nodeid or "#" in nodeid:
            raise ValueError(f"exclusion list line {number}: expected "
                             f"'path::Class::test  # reason', got {raw!r}")
        if not sep or not reason:
            raise ValueError(f"exclusion list line {number}: {nodeid} has no reason "
                             f"(write '  # why it is specific to another backend')")
        out[nodeid] = reason
    return out


def normalize_target(target: str) -> str:
    """``ops`` -> ``keras/src/ops``; paths already under ``keras/`` are kept."""
    target = target.strip().rstrip("/")
    target = target.removeprefix("./")
    if not target.startswith("keras/"):
        target = "keras/src/" + target
    return target


def exclusions_for(target: str, exclusions: dict) -> list:
    """The exclusion entries that lie inside ``target`` (a folder, file or node id)."""
    path = target.split("::", 1)[0]
    out = []
    for nodeid in exclusions:
        epath = nodeid.split("::", 1)[0]
        if epath == path or epath.startswith(path.rstrip("/") + "/"):
            out.append(nodeid)
    return out


def summarize(results, targets) -> tuple:
    """Counts per file, per target and in total.

    Args:
        results: iterable of TestResult.
        targets: the normalized targets; each result is counted under the first
            target that contains it (or under its file when none does).

    Returns:
        (per_file, per_target, total): two dicts of Counts and a Counts.
    """
    per_file: dict[str, Counts] = {}
    per_target: dict[str, Counts] = {t: Counts() for t in targets}
    total = Counts()
    for res in results:
        per_file.setdefault(res.path, Counts()).add(res.outcome)
        owner = next((t for t in targets if _inside(res.nodeid, t)), res.path)
        per_target.setdefault(owner, Counts()).add(res.outcome)
        total.add(res.outcome)
    return per_file, per_target, total


def _inside(nodeid: str, target: str) -> bool:
    path = target.split("::", 1)[0]
    file = nodeid.split("::", 1)[0]
    return (nodeid == target or nodeid.startswith((target + "::", target + "["))
            or file.startswith(path.rstrip("/") + "/")
            or (file == path and "::" not in target))


def stale_exclusions(exclusions, targets, results) -> list:
    """The exclusion entries inside ``targets`` that excluded no test."""
    hit = [r.nodeid for r in results if r.outcome == "excluded"]
    return [e for e in exclusions
            if any(_inside(e, t) for t in targets)
            and not any(n == e or n.startswith((e + "[", e + "::")) for n in hit)]


def failure_causes(failures, top: int = 20) -> list:
    """The failures grouped by message (numbers and quoted names masked).

    Args:
        failures: TestResults that failed.
        top: how many groups to return.

    Returns:
        list of (count, pattern, example node id), most common first.
    """
    groups: dict = {}
    for res in failures:
        first = (res.message.strip().splitlines() or [""])[0]
        key = re.sub(r"\d+", "N", first)
        key = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", key)[:120]
        count, example = groups.get(key, (0, res.nodeid))
        groups[key] = (count + 1, example)
    ranked = sorted(groups.items(), key=lambda kv: -kv[1][0])
    return [(count, key, example) for key, (count, example) in ranked[:top]]


def _rate(c: Counts) -> str:
    return "-" if c.pass_rate is None else f"{100 * c.pass_rate:.1f}%"


def format_text(per_file, total, failures, max_failures=200) -> str:
    """The plain-text report: one line per file, the total, the failing tests."""
    width = max([len(p) for p in per_file] + [5])
    head = f"{'file':<{width}}  {'passed':>6} {'failed':>6} {'skipped':>7} {'excl':>5}  rate"
    lines = [head, "-" * len(head)]
    for path in sorted(per_file):
        c = per_file[path]
        lines.append(f"{path:<{width}}  {c.passed:>6} {c.failed:>6} {c.skipped:>7} "
                     f"{c.excluded:>5}  {_rate(c)}")
    lines.append("-" * len(head))
    lines.append(f"{'TOTAL':<{width}}  {total.passed:>6} {total.failed:>6} "
                 f"{total.skipped:>7} {total.excluded:>5}  {_rate(total)}")
    if failures:
        lines.append(f"\n{len(failures)} failing test(s):")
        for res in failures[:max_failures]:
            msg = " ".join(res.message.split())[:160]
            lines.append(f"FAILED {res.nodeid} - {msg}")
        if len(failures) > max_failures:
            lines.append(f"... and {len(failures) - max_failures} more (see --json)")
    return "\n".join(lines)


def format_markdown(per_target, total) -> str:
    """A Markdown table: one row per folder (target) and a total row."""
    lines = ["| folder | passed | failed | skipped | total | excluded | pass rate |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name, c in per_target.items():
        short = name.removeprefix("keras/src/")
        lines.append(f"| {short} | {c.passed} | {c.failed} | {c.skipped} | {c.total} | "
                     f"{c.excluded} | {_rate(c)} |")
    lines.append(f"| **total** | {total.passed} | {total.failed} | {total.skipped} | "
                 f"{total.total} | {total.excluded} | {_rate(total)} |")
    return "\n".join(lines)


def write_junit(results, path: Path) -> None:
    """Write the results as a JUnit XML report, one testsuite per test file."""
    by_file: dict[str, list] = {}
    for res in results:
        by_file.setdefault(res.path, []).append(res)
    root = ET.Element("testsuites", name="keras-conformance-" + BACKEND)
    for file, items in sorted(by_file.items()):
        c = Counts()
        for r in items:
            c.add(r.outcome)
        suite = ET.SubElement(root, "testsuite", name=file, tests=str(len(items)),
                              failures=str(c.failed), skipped=str(c.skipped + c.excluded),
                              errors="0")
        for r in items:
            rest = r.nodeid.split("::")[1:]
            case = ET.SubElement(suite, "testcase", file=file, name=rest[-1] if rest else file,
                                 classname=".".join([file[:-3].replace("/", "."), *rest[:-1]]),
                                 time=f"{r.duration:.3f}")
            if r.outcome == "failed":
                ET.SubElement(case, "failure", message=r.message[:1000])
            elif r.outcome in ("skipped", "excluded"):
                msg = ("excluded: " if r.outcome == "excluded" else "") + r.message
                ET.SubElement(case, "skipped", message=msg[:1000])
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


# ------------------------------------------------------------------ getting the suite


def installed_keras_version() -> str:
    """The installed keras' version (from its distribution metadata)."""
    from importlib import metadata

    return metadata.version("keras")


def check_requirements() -> list:
    """Problems that stop the suite from running, each with how to fix it."""
    import importlib.util

    problems = []
    try:
        import jax.numpy  # noqa: F401
    except Exception as exc:  # noqa: BLE001 (ImportError, or a broken jaxlib)
        problems.append(
            f"jax is not importable ({exc.__class__.__name__}: {exc}). Keras' tests use "
            f"jax.numpy as the reference for result dtypes; install the CPU build in "
            f"this Python with: {sys.executable} -m pip install \"jax[cpu]\" (a test "
            f"reference only, never a kbackend dependency)")
    if importlib.util.find_spec("pytest_timeout") is None:
        problems.append(f"pytest-timeout is missing (needed for the per-test timeout): "
                        f"{sys.executable} -m pip install pytest-timeout")
    try:
        installed_keras_version()
    except ImportError:  # importlib.metadata.PackageNotFoundError
        problems.append(f"keras is not installed: {sys.executable} -m pip install "
                        f"\"keras>=3.15,<3.16\"")
    return problems


# Modules some of Keras' test files import (module -> pip package); without them those
# files fail to collect or those tests fail, which the summary shows as failures.
OPTIONAL_TEST_DEPS = {"tensorflow": "tensorflow-cpu", "pandas": "pandas", "grain": "grain",
                      "orbax.checkpoint": "orbax-checkpoint", "onnxruntime": "onnxruntime"}


def missing_optional_deps() -> list:
    """The pip packages of OPTIONAL_TEST_DEPS whose module is not installed."""
    import importlib.util

    missing = []
    for module, package in OPTIONAL_TEST_DEPS.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:  # the parent package is missing
            found = False
        if not found:
            missing.append(package)
    return missing


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/kbackend-conformance`` (``~/.cache/...`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "kbackend-conformance"


def fetch_sdist(version: str, cache_dir: Path) -> Path:
    """The keras-<version> sdist from the cache folder, downloaded there with pip once."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    found = sorted(cache_dir.glob(f"keras-{version}.tar.gz"))
    if found:
        return found[0]
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
           f"keras=={version}", "-d", str(cache_dir)]
    print("fetching the keras sdist:", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    found = sorted(cache_dir.glob(f"keras-{version}.tar.gz"))
    if proc.returncode != 0 or not found:
        raise RuntimeError(
            f"could not download the keras {version} sdist (pip exit {proc.returncode}):"
            f"\n{proc.stderr[-2000:]}\nDownload keras-{version}.tar.gz elsewhere and pass "
            f"--sdist PATH, or an unpacked copy with --src DIR.")
    return found[0]


def unpack_sdist(sdist: Path, dest: Path) -> Path:
    """Unpack ``sdist`` into ``dest``; return the folder that holds ``keras/``."""
    with tarfile.open(sdist) as tar:
        try:
            tar.extractall(dest, filter="data")
        except TypeError:  # Python without extraction filters
            tar.extractall(dest)
    return find_root(dest)


def find_root(folder: Path) -> Path:
    """``folder`` or its single sub-folder that contains ``keras/src``."""
    if (folder / "keras" / "src").is_dir():
        return folder
    for sub in sorted(folder.iterdir()):
        if (sub / "keras" / "src").is_dir():
            return sub
    raise RuntimeError(f"{folder} holds no keras source tree (keras/src)")


def source_version(root: Path) -> str | None:
    """The version in ``keras/src/version.py`` of a source tree, if readable."""
    try:
        text = (root / "keras" / "src" / "version.py").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("__version__"):
            return line.split("=", 1)[1].strip().strip("\"'")
    return None


def patch_test_files(root: Path, patches=None) -> list:
    """Add kbackend's branch to the test files in ``patches`` (default TEST_PATCHES).

    Returns:
        one line per file: patched, or why not (the anchor line is missing).
    """
    notes = []
    for rel, edits in (TEST_PATCHES if patches is None else patches).items():
        path = root / rel
        if not path.exists():
            continue
        lines = path.read_text().splitlines(keepends=True)
        for anchor, text in edits:
            at = [i for i, line in enumerate(lines) if line.rstrip("\n") == anchor]
            if len(at) != 1:
                notes.append(f"{rel}: not patched (no single line {anchor!r})")
                continue
            lines.insert(at[0], text)
            notes.append(f"{rel}: kbackend entry added before {anchor.strip()!r}")
        path.write_text("".join(lines))
    return notes


def prepare_tree(args, workdir: Path) -> Path:
    """The test tree in ``workdir`` with our conftest.py; returns its root."""
    version = installed_keras_version()
    if args.src:
        src = find_root(Path(args.src).resolve())
        root = workdir / src.name
        shutil.copytree(src, root, ignore=shutil.ignore_patterns(
            "__pycache__", ".git", ".pytest_cache"), symlinks=True)
    else:
        sdist = Path(args.sdist) if args.sdist else fetch_sdist(version, Path(args.cache_dir))
        root = unpack_sdist(sdist, workdir)
    got = source_version(root)
    if got is not None and got != version:
        print(f"warning: the test tree is keras {got} but keras {version} is installed",
              file=sys.stderr)
    (root / "conftest.py").write_text(CONFTEST)
    init = root / "keras" / "__init__.py"
    if not init.exists() and (root / "keras" / "api" / "__init__.py").exists():
        init.write_text(KERAS_INIT)
    for note in patch_test_files(root):
        print("test tree:", note)
    return root


# ----------------------------------------------------------------------- running


@dataclass
class RunConfig:
    """How to run pytest in the tree."""

    root: Path
    backend: str = BACKEND
    timeout: int = 120
    stall: int = 600
    target_timeout: int = 7200
    max_restarts: int = 20
    keyword: str | None = None
    extra: list = field(default_factory=list)
    verbose: bool = False
    sample: str = ""


def run_target(target: str, exclusions: list, cfg: RunConfig, logdir: Path) -> dict:
    """Run one target in pytest subprocesses; return dict nodeid -> TestResult.

    When the subprocess dies (crash) or is killed (no new result for ``cfg.stall``
    seconds, or the target ran past ``cfg.target_timeout``), the test it was running
    fails and a new subprocess runs what is left.
    """
    safe = target.replace("/", "_").replace(":", "_")
    log = logdir / f"{safe}.jsonl"
    done = logdir / f"{safe}.done"
    out = logdir / f"{safe}.out"
    for p in (log, done):
        p.unlink(missing_ok=True)
    env = dict(os.environ, KERAS_BACKEND=cfg.backend, **{LOG_ENV: str(log), DONE_ENV: str(done)})
    env.pop(SAMPLE_ENV, None)
    if cfg.sample:
        env[SAMPLE_ENV] = cfg.sample
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
           "--timeout", str(cfg.timeout), "-rN", "--continue-on-collection-errors"]
    if cfg.keyword:
        cmd += ["-k", cfg.keyword]
    for nodeid in exclusions:
        cmd += ["--deselect", nodeid]
    cmd += [*cfg.extra, target]
    start = time.monotonic()
    results: dict = {}
    for attempt in range(cfg.max_restarts + 1):
        with open(out, "a", encoding="utf-8") as fout:
            proc = subprocess.Popen(cmd, cwd=cfg.root, env=env, stdout=fout,
                                    stderr=subprocess.STDOUT, start_new_session=True)
            try:
                killed = _watch(proc, log, cfg, start)
            finally:  # the runner itself interrupted: do not leave pytest running
                if proc.poll() is None:
                    _kill(proc)
        results = parse_log(log.read_text().splitlines()) if log.exists() else {}
        rc = proc.returncode
        if killed is None and rc in (0, 1, 5):
            return results
        if killed is None and rc in (2, 3, 4) and not any(
                r.message == CRASH_MESSAGE for r in results.values()):
            tail = out.read_text()[-3000:]
            results[target] = TestResult(target, "failed",
                                         f"pytest exited with status {rc}: {tail}")
            return results
        why = killed or f"exit status {rc}"
        print(f"  {target}: pytest subprocess stopped ({why}); resuming", flush=True)
        if killed == "target timeout" or attempt == cfg.max_restarts:
            break
        # Not again: the tests that have a result, the crashed one included.
        done.write_text("\n".join(results) + "\n")
    results[target + "::<rest>"] = TestResult(
        target + "::<rest>", "failed",
        f"the target was stopped before all its tests ran ({killed or 'restarts'})")
    return results


def _watch(proc, log: Path, cfg: RunConfig, start: float):
    """Wait for ``proc``; kill its process group when it stalls. Returns why or None."""
    last_size, last_change = -1, time.monotonic()
    while proc.poll() is None:
        time.sleep(1.0)
        size = log.stat().st_size if log.exists() else 0
        now = time.monotonic()
        if size != last_size:
            last_size, last_change = size, now
        why = None
        if now - last_change > cfg.stall:
            why = f"no result for {cfg.stall} s"
        elif now - start > cfg.target_timeout:
            why = "target timeout"
        if why:
            _kill(proc)
            return why
    return None


def _kill(proc) -> None:
    """Kill ``proc``'s process group (it was started in a session of its own)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def expand(targets, root: Path, per_file: bool) -> list:
    """With ``per_file``, folders become their ``*_test.py`` files."""
    out = []
    for t in targets:
        path = root / t
        if per_file and "::" not in t and path.is_dir():
            out += sorted(str(p.relative_to(root)) for p in path.rglob("*_test.py"))
        else:
            out.append(t)
    return out


def main(argv=None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(
        description="Run Keras' own tests on kbackend and summarize the results.")
    parser.add_argument("targets", nargs="*",
                        help="folders or files of the suite, 'ops' or 'keras/src/ops' "
                             "(default: keras/src/ops)")
    parser.add_argument("--all", action="store_true",
                        help="run " + ", ".join(ALL_TARGETS))
    parser.add_argument("--src", help="an unpacked keras sdist to use (copied, not modified)")
    parser.add_argument("--sdist", help="the keras sdist (.tar.gz) to use")
    parser.add_argument("--cache-dir", default=str(default_cache_dir()),
                        help="where the downloaded sdist is kept (default: %(default)s)")
    parser.add_argument("--workdir", help="unpack here instead of a temporary folder")
    parser.add_argument("--keep", action="store_true", help="keep the unpacked tree")
    parser.add_argument("--excluded", default=str(DEFAULT_EXCLUDED),
                        help="the exclusion list (default: %(default)s)")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per test")
    parser.add_argument("--stall", type=int, default=0,
                        help="kill a run with no new result for this long (default: "
                             "2 x timeout + 60)")
    parser.add_argument("--target-timeout", type=int, default=7200,
                        help="seconds for one target in all")
    parser.add_argument("--per-file", action="store_true",
                        help="one subprocess per test file instead of per folder")
    parser.add_argument("-k", dest="keyword", help="pytest -k expression")
    parser.add_argument("--sample", default="", metavar="K/N",
                        help="run a fixed sample of about 1/N of the tests: those whose "
                             "CRC-32 of the test id is K modulo N (CI runs one slice)")
    parser.add_argument("--pytest-arg", action="append", default=[],
                        help="one more argument for pytest (repeatable)")
    parser.add_argument("--markdown", action="store_true",
                        help="also print a per-folder Markdown table")
    parser.add_argument("--causes", action="store_true",
                        help="also print the failures grouped by message")
    parser.add_argument("--json", help="write the results as JSON here")
    parser.add_argument("--junit", help="write the results as JUnit XML here")
    args = parser.parse_args(argv)
    if args.sample:
        k, _, n = args.sample.partition("/")
        if not (k.isdigit() and n.isdigit() and 0 <= int(k) < int(n)):
            parser.error(f"--sample: expected K/N with 0 <= K < N, got {args.sample!r}")
    if threading.current_thread() is threading.main_thread():
        # SIGTERM ends the run like Ctrl-C: the pytest subprocess is killed too.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    problems = check_requirements()
    if problems:
        for p in problems:
            print("error:", p, file=sys.stderr)
        return 2
    optional = missing_optional_deps()
    if optional:
        print(f"note: test dependencies not installed: {', '.join(optional)}; the Keras "
              f"tests that import them will fail (pip install {' '.join(optional)})")
    try:
        exclusions = parse_exclusions(Path(args.excluded).read_text()) \
            if Path(args.excluded).exists() else {}
    except ValueError as exc:
        print(f"error: {args.excluded}: {exc}", file=sys.stderr)
        return 2
    targets = [normalize_target(t) for t in (args.targets or
                                              (ALL_TARGETS if args.all else DEFAULT_TARGETS))]
    if args.all and args.targets:
        targets += [normalize_target(t) for t in ALL_TARGETS]

    workdir = Path(args.workdir) if args.workdir else Path(
        tempfile.mkdtemp(prefix="kbackend-conformance-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        try:
            root = prepare_tree(args, workdir)
        except (RuntimeError, OSError, tarfile.TarError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        missing = [t for t in targets if not (root / t.split("::")[0]).exists()]
        if missing:
            print(f"error: not in the keras test tree {root}: {', '.join(missing)}",
                  file=sys.stderr)
            return 2
        logdir = workdir / "logs"
        logdir.mkdir(exist_ok=True)
        cfg = RunConfig(root=root, timeout=args.timeout,
                        stall=args.stall or 2 * args.timeout + 60,
                        target_timeout=args.target_timeout, keyword=args.keyword,
                        extra=args.pytest_arg, sample=args.sample)
        results: dict = {}
        began = time.monotonic()
        for target in expand(targets, root, args.per_file):
            t0 = time.monotonic()
            print(f"running {target} ...", flush=True)
            got = run_target(target, exclusions_for(target, exclusions), cfg, logdir)
            results.update(got)
            c = summarize(got.values(), [target])[2]
            print(f"  {c.passed} passed, {c.failed} failed, {c.skipped} skipped, "
                  f"{c.excluded} excluded in {time.monotonic() - t0:.0f} s", flush=True)
        elapsed = time.monotonic() - began
        ordered = list(results.values())
        per_file, per_target, total = summarize(ordered, targets)
        failures = [r for r in ordered if r.outcome == "failed"]
        stale = stale_exclusions(exclusions, targets, ordered)
        print()
        print(format_text(per_file, total, failures))
        if stale and not args.keyword and not args.sample:
            print(f"\nnote: {len(stale)} exclusion(s) matched no test: "
                  + ", ".join(stale[:10]))
        if args.causes and failures:
            print("\nfailure causes (most common first):")
            for count, pattern, example in failure_causes(failures):
                print(f"{count:>5}  {pattern}\n       e.g. {example}")
        if args.markdown:
            print()
            print(format_markdown(per_target, total))
        print(f"\nran in {elapsed:.0f} s")
        if args.json:
            Path(args.json).write_text(json.dumps({
                "keras_version": installed_keras_version(),
                "backend": BACKEND,
                "targets": targets,
                "seconds": round(elapsed, 1),
                "total": total.as_dict(),
                "per_target": {k: v.as_dict() for k, v in per_target.items()},
                "per_file": {k: v.as_dict() for k, v in sorted(per_file.items())},
                "tests": [vars(r) for r in ordered],
            }, indent=1))
        if args.junit:
            write_junit(ordered, Path(args.junit))
        return 1 if failures else 0
    finally:
        if not args.keep and not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
        elif args.keep:
            print(f"test tree kept in {workdir}")


if __name__ == "__main__":
    sys.exit(main())
