"""The one prepared GPU check: ``python -m tests.gpu.device_check [--out report.json]``.

Run it when a GPU is lent (it finishes within ``--budget`` seconds, default 470, on
one GPU). Each section runs under its own time limit and records ``pass``, ``fail``
or ``skip`` with the error or the reason, so one failure does not stop the rest:

- ``env``: versions, the GPUs CuPy sees, NCCL.
- ``op_table``: every row of the op table (``tests/core/ops/specs_*.py``) on
  ``gpu(0)`` against NumPy, values and gradients (``tests/gpu/test_op_table_gpu.py``'s
  bodies), failures listed per operator.
- ``gpu_pytests``: the other ``tests/gpu/test_*.py`` modules (the fused and optimizer
  kernels against their CPU twins, hybridized blocks, the NVRTC compile checks), in a
  child pytest.
- ``hybrid_train``: a hybridized Gluon network trained a few steps.
- ``keras_fit``: Keras ``fit`` on kbackend under ``DataParallel`` over the visible GPUs.
- ``gluon_data_parallel``: a Gluon ``Trainer`` over the GPUs (``device`` store), the
  replicas equal, the step equal to one context's on the whole batch.
- ``amp``: ``amp.init('float16')`` training (if ``core.amp`` exists).
- ``resnet50_*``: ResNet-50 training img/s, ours and PyTorch's on the same GPU (fp32
  and bf16), when torch with CUDA imports.

``--cpu-dry-run`` runs every section on ``cpu(0)`` (``cpu(0)``/``cpu(1)`` for the
data-parallel ones) with tiny sizes and skips the GPU-only ones with a reason;
``tests/gpu/test_device_check.py`` runs it so the script cannot rot. The summary goes
to stdout, the report (JSON) to ``--out``, written atomically.

Example::

    python -m tests.gpu.device_check --out /tmp/device_report.json
    python -m tests.gpu.device_check --cpu-dry-run --out /tmp/dry.json
"""
from __future__ import annotations

import argparse
import atexit
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULT_TAG = "DEVICE_CHECK_RESULT "


class SectionTimeout(Exception):
    """A section ran past its time limit."""


class Skip(Exception):
    """A section that does not apply here (the message says why)."""


def _alarm(signum, frame):
    raise SectionTimeout("ran past its time limit")


def run_section(name: str, fn, limit: float, report: dict) -> dict:
    """Run ``fn()`` (returning a dict of details) under a time limit, recording the result.

    Args:
        name: the section's name in the report.
        fn: the section; raises :class:`Skip` when it does not apply.
        limit: seconds before :class:`SectionTimeout` is raised in it.
        report: the report; ``report['sections'][name]`` is set.

    Returns:
        The section's entry: ``status`` (pass/fail/skip), ``seconds`` and details.
    """
    start = time.monotonic()
    entry: dict = {}
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, max(limit, 1.0))
    try:
        details = fn(limit) or {}
        entry.update(details)
        entry["status"] = details.get("status", "pass")
    except Skip as e:
        entry.update(status="skip", reason=str(e))
    except SectionTimeout:
        entry.update(status="fail", error=f"timeout after {limit:.0f} s")
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        entry.update(status="fail", error=f"{type(e).__name__}: {e}",
                     traceback=traceback.format_exc(limit=8))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    entry["seconds"] = round(time.monotonic() - start, 2)
    report["sections"][name] = entry
    line = f"[{entry['status']:>4}] {name} ({entry['seconds']:.1f} s)"
    extra = entry.get("error") or entry.get("reason") or entry.get("summary")
    print(line + (f": {extra}" if extra else ""), flush=True)
    return entry


# ---------------------------------------------------------------------- children
_KERAS_HOME: list = []


def _child_env(dry: bool) -> dict:
    env = dict(os.environ)
    env["KERAS_BACKEND"] = "kbackend"
    if "KERAS_HOME" not in env:  # a scratch one, so no user's keras.json takes part
        if not _KERAS_HOME:
            _KERAS_HOME.append(tempfile.mkdtemp(prefix="device-check-keras-"))
            atexit.register(shutil.rmtree, _KERAS_HOME[0], ignore_errors=True)
        env["KERAS_HOME"] = _KERAS_HOME[0]
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    if dry:
        env["KBACKEND_NUM_CPU_DEVICES"] = "2"
    return env


def run_child(code: str, timeout: float, dry: bool, args=()) -> dict:
    """Run ``code`` in a fresh interpreter; it prints ``RESULT_TAG + json`` last.

    Raises:
        SectionTimeout: the child ran past ``timeout`` (it is killed).
        RuntimeError: the child failed (its output's tail is in the message).
    """
    try:
        proc = subprocess.run([sys.executable, "-c", code, *args], check=False, cwd=ROOT, env=_child_env(dry),
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SectionTimeout(f"the child ran past {timeout:.0f} s") from None
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_TAG):
            return json.loads(line[len(RESULT_TAG):])
    tail = (proc.stdout + proc.stderr)[-3000:]
    if "SKIP:" in proc.stdout:
        raise Skip(proc.stdout.split("SKIP:", 1)[1].strip().splitlines()[0])
    raise RuntimeError(f"child exited {proc.returncode}: {tail}")


_PRELUDE = f"""
import json, sys, time
import numpy as np
RESULT_TAG = {RESULT_TAG!r}
DRY = sys.argv[1] == 'dry'
def done(**kw):
    print(RESULT_TAG + json.dumps(kw), flush=True)
"""

_KERAS = _PRELUDE + """
import keras
devs = keras.distribution.list_devices('cpu' if DRY else 'gpu')
dist = keras.distribution.DataParallel(devices=devs)
keras.distribution.set_distribution(dist)
rng = np.random.default_rng(0)
x = rng.standard_normal((64 if DRY else 4096, 8)).astype('float32')
y = (x @ rng.standard_normal((8, 1))).astype('float32')
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(32, activation='relu'),
                          keras.layers.Dense(1)])
model.compile(optimizer=keras.optimizers.SGD(0.05), loss='mse')
t = time.perf_counter()
hist = model.fit(x, y, batch_size=16 if DRY else 256, epochs=3, verbose=0)
losses = [float(v) for v in hist.history['loss']]
assert losses[-1] < losses[0], f'loss did not fall: {losses}'
done(devices=list(devs), losses=losses, seconds_fit=time.perf_counter() - t,
     summary=f'{len(devs)} devices, loss {losses[0]:.4g} -> {losses[-1]:.4g}')
"""

_AMP = _PRELUDE + """
import core
try:
    from core import amp
except ImportError as e:
    print('SKIP: core.amp is missing (' + str(e) + ')'); sys.exit(0)
import gluon
from core import autograd, nd
from gluon import nn
ctx = core.cpu(0) if DRY else core.gpu(0)
amp.init('float16')
core.random.seed(0)
net = nn.HybridSequential()
net.add(nn.Dense(32, activation='relu'), nn.Dense(1))
net.initialize(ctx=ctx)
net.hybridize()
trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.05})
amp.init_trainer(trainer)
rng = np.random.default_rng(0)
xs = rng.standard_normal((64, 8)).astype('float32')
x = nd.array(xs, ctx=ctx)
y = nd.array(xs @ rng.standard_normal((8, 1)).astype('float32'), ctx=ctx)
losses = []
for _ in range(30):
    with autograd.record():
        out = net(x)
        loss = ((out.astype('float32') - y) ** 2).mean()
        with amp.scale_loss(loss, trainer) as scaled:
            pass
    scaled.backward()
    trainer.step(1)
    losses.append(float(loss.asscalar()))
assert losses[-1] < losses[0], f'AMP training did not converge: {losses[0]} -> {losses[-1]}'
done(output_dtype=str(out.dtype), losses=losses[::5],
     summary=f'output {out.dtype}, loss {losses[0]:.4g} -> {losses[-1]:.4g}')
"""

_RESNET_OURS = _PRELUDE + """
import core
from core import autograd, nd
import gluon
from gluon.model_zoo.vision import resnet50_v1
dtype = sys.argv[2]
ctx = core.cpu(0) if DRY else core.gpu(0)
batch, size, steps = (2, 32, 1) if DRY else (64, 224, 8)
net = resnet50_v1(classes=1000)
net.initialize(ctx=ctx)
if dtype != 'float32':
    net.cast(dtype)
net.hybridize(static_alloc=True, static_shape=True)
trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.01, 'momentum': 0.9,
                        'multi_precision': dtype != 'float32'})
lossf = gluon.loss.SoftmaxCrossEntropyLoss()
x = nd.random.normal(shape=(batch, 3, size, size), ctx=ctx).astype(dtype)
y = nd.array(np.arange(batch) % 1000, ctx=ctx)
def step():
    with autograd.record():
        loss = lossf(net(x), y)
    loss.backward()
    trainer.step(batch)
    return loss
for _ in range(1 if DRY else 2):
    step().wait_to_read()
core.waitall()
t = time.perf_counter()
for _ in range(steps):
    loss = step()
core.waitall()
dt = time.perf_counter() - t
done(img_per_s=batch * steps / dt, batch=batch, image=size, steps=steps, dtype=dtype,
     summary=f'{batch * steps / dt:.1f} img/s ({dtype}, batch {batch})')
"""

_RESNET_TORCH = _PRELUDE + """
try:
    import torch
    from torch import nn as tnn
except ImportError as e:
    print('SKIP: torch is missing (' + str(e) + ')'); sys.exit(0)
if not DRY and not torch.cuda.is_available():
    print('SKIP: torch has no CUDA here'); sys.exit(0)
dtype = sys.argv[2]
dev = torch.device('cpu' if DRY else 'cuda')
batch, size, steps = (2, 32, 1) if DRY else (64, 224, 8)
try:
    import torchvision
    net, source = torchvision.models.resnet50(), 'torchvision'
except ImportError:
    class Bottleneck(tnn.Module):
        def __init__(self, cin, mid, stride):
            super().__init__()
            cout = mid * 4
            self.f = tnn.Sequential(
                tnn.Conv2d(cin, mid, 1, bias=False), tnn.BatchNorm2d(mid), tnn.ReLU(True),
                tnn.Conv2d(mid, mid, 3, stride, 1, bias=False), tnn.BatchNorm2d(mid),
                tnn.ReLU(True), tnn.Conv2d(mid, cout, 1, bias=False), tnn.BatchNorm2d(cout))
            self.down = None if stride == 1 and cin == cout else tnn.Sequential(
                tnn.Conv2d(cin, cout, 1, stride, bias=False), tnn.BatchNorm2d(cout))
        def forward(self, x):
            return torch.relu(self.f(x) + (x if self.down is None else self.down(x)))
    layers = [tnn.Conv2d(3, 64, 7, 2, 3, bias=False), tnn.BatchNorm2d(64), tnn.ReLU(True),
              tnn.MaxPool2d(3, 2, 1)]
    cin = 64
    for mid, n, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(n):
            layers.append(Bottleneck(cin, mid, stride if i == 0 else 1))
            cin = mid * 4
    layers += [tnn.AdaptiveAvgPool2d(1), tnn.Flatten(), tnn.Linear(2048, 1000)]
    net, source = tnn.Sequential(*layers), 'built here (no torchvision)'
net = net.to(dev)
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
x = torch.randn(batch, 3, size, size, device=dev)
y = torch.arange(batch, device=dev) % 1000
lossf = tnn.CrossEntropyLoss()
def step():
    opt.zero_grad(set_to_none=True)
    with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=dtype == 'bfloat16'):
        loss = lossf(net(x), y)
    loss.backward()
    opt.step()
def sync():
    if dev.type == 'cuda':
        torch.cuda.synchronize()
for _ in range(1 if DRY else 2):
    step()
sync()
t = time.perf_counter()
for _ in range(steps):
    step()
sync()
dt = time.perf_counter() - t
done(img_per_s=batch * steps / dt, batch=batch, image=size, steps=steps, dtype=dtype,
     model=source, summary=f'{batch * steps / dt:.1f} img/s ({dtype}, batch {batch})')
"""


# ---------------------------------------------------------------------- sections
class Checker:
    """The sections, for one device (``gpu(0)``) or the CPU dry run."""

    def __init__(self, dry: bool):
        self.dry = dry
        import core

        self.core = core
        self.ctx = core.cpu(0) if dry else core.gpu(0)
        ngpu = 0 if dry else core.num_gpus()
        self.contexts = [core.cpu(0), core.cpu(1)] if dry else \
            [core.gpu(i) for i in range(max(ngpu, 1))]

    def need_gpu(self, what: str) -> None:
        if self.dry:
            raise Skip(f"GPU only ({what}); --cpu-dry-run")
        if self.core.num_gpus() == 0:
            raise RuntimeError("no GPU visible to CuPy (core.num_gpus() == 0)")

    def env(self, limit):
        info = {"python": sys.version.split()[0], "platform": platform.platform(),
                "dry_run": self.dry}
        import numpy

        info["numpy"] = numpy.__version__
        try:
            import cupy

            info["cupy"] = cupy.__version__
            n = cupy.cuda.runtime.getDeviceCount()
            info["gpus"] = [cupy.cuda.runtime.getDeviceProperties(i)["name"].decode()
                            for i in range(n)]
            info["cuda_runtime"] = cupy.cuda.runtime.runtimeGetVersion()
        except Exception as e:  # noqa: BLE001 - recorded, the other sections go on
            info["cupy"] = f"unavailable: {type(e).__name__}: {e}"
        from core.kvstore import nccl

        info["nccl"] = nccl.available()
        info["num_gpus"] = self.core.num_gpus()
        if not self.dry and info["num_gpus"] == 0:
            info.update(status="fail", error="no GPU visible to CuPy")
        info["summary"] = f"{info['num_gpus']} GPU(s) {info.get('gpus', '')}"
        return info

    def op_table(self, limit):
        import pytest

        from core.ops import dispatch
        from tests.core.ops import test_op_table as table

        ids = table._ids()
        value_ids, grad_ids = (ids[:12], ids[:4]) if self.dry else (ids, ids)
        deadline = time.monotonic() + limit - 5
        failures, passed, skipped, not_run = {}, 0, 0, 0
        import warnings

        import numpy

        with self.ctx, numpy.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for kind, todo in (("values", value_ids), ("gradients", grad_ids)):
                for sid in todo:
                    if time.monotonic() > deadline:
                        not_run += 1
                        continue
                    chk = table._InferChecker()
                    dispatch._hooks.append(chk)
                    try:
                        if kind == "values":
                            table.test_values(sid, chk)
                        else:
                            table.test_gradients(sid)
                        passed += 1
                    except pytest.skip.Exception:
                        skipped += 1
                    except SectionTimeout:
                        raise
                    except Exception as e:  # noqa: BLE001 - per-operator failures are data
                        failures[f"{kind}:{sid}"] = f"{type(e).__name__}: {str(e)[:300]}"
                    finally:
                        dispatch._hooks.remove(chk)
        status = "fail" if failures or not_run else "pass"
        return {"status": status, "passed": passed, "skipped": skipped, "not_run": not_run,
                "failures": failures, "rows": len(ids),
                "summary": f"{passed} passed, {len(failures)} failed, {skipped} skipped, "
                           f"{not_run} not run (time) of {len(value_ids) + len(grad_ids)}"}

    def gpu_pytests(self, limit):
        self.need_gpu("the CuPy kernels against their CPU twins")
        files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "gpu").glob("test_*.py")
                       if p.name not in ("test_op_table_gpu.py", "test_device_check.py"))
        with tempfile.TemporaryDirectory() as tmp:
            xml = Path(tmp) / "junit.xml"
            try:
                proc = subprocess.run(
                    [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                     f"--junitxml={xml}", *files], check=False, cwd=ROOT, env=_child_env(False),
                    capture_output=True, text=True, timeout=max(limit - 5, 1))
            except subprocess.TimeoutExpired:
                raise SectionTimeout(f"pytest ran past {limit:.0f} s") from None
            counts = {"passed": 0, "failed": 0, "skipped": 0}
            failures = {}
            if xml.exists():
                for case in ET.parse(xml).getroot().iter("testcase"):
                    name = f"{case.get('classname')}::{case.get('name')}"
                    bad = case.find("failure") if case.find("failure") is not None \
                        else case.find("error")
                    if bad is not None:
                        counts["failed"] += 1
                        failures[name] = (bad.get("message") or "")[:300]
                    elif case.find("skipped") is not None:
                        counts["skipped"] += 1
                    else:
                        counts["passed"] += 1
        status = "pass" if proc.returncode == 0 else "fail"
        out = {"status": status, "files": files, **counts, "failures": failures,
               "summary": f"{counts['passed']} passed, {counts['failed']} failed, "
                          f"{counts['skipped']} skipped"}
        if status == "fail" and not failures:
            out["error"] = (proc.stdout + proc.stderr)[-2000:]
        return out

    def hybrid_train(self, limit):
        import numpy as np

        import gluon
        from core import autograd, nd
        from gluon import nn

        core = self.core
        core.random.seed(0)
        net = nn.HybridSequential()
        net.add(nn.Conv2D(8, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
                nn.MaxPool2D(2), nn.Flatten(), nn.Dense(16, activation="relu"), nn.Dense(4))
        net.initialize(ctx=self.ctx)
        net.hybridize()
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05})
        lossf = gluon.loss.SoftmaxCrossEntropyLoss()
        n = 16 if self.dry else 128
        rng = np.random.default_rng(0)
        x = nd.array(rng.standard_normal((n, 3, 8, 8)).astype("float32"), ctx=self.ctx)
        y = nd.array(rng.integers(0, 4, n), ctx=self.ctx)
        losses = []
        for _ in range(10):
            with autograd.record():
                loss = lossf(net(x), y)
            loss.backward()
            trainer.step(n)
            losses.append(float(loss.mean().asscalar()))
        if not losses[-1] < losses[0]:
            raise AssertionError(f"the hybridized training loss did not fall: {losses}")
        return {"losses": losses, "summary": f"loss {losses[0]:.4g} -> {losses[-1]:.4g}"}

    def keras_fit(self, limit):
        return run_child(_KERAS, limit, self.dry, ["dry" if self.dry else "gpu"])

    def gluon_data_parallel(self, limit):
        import numpy as np

        import gluon
        from core import autograd, nd
        from gluon import nn, utils

        core = self.core
        rng = np.random.default_rng(0)
        xs = rng.standard_normal((32, 10)).astype("float32")
        ys = rng.standard_normal((32, 1)).astype("float32")

        def train(contexts, kvstore):
            core.random.seed(0)
            net = nn.HybridSequential()
            net.add(nn.Dense(16, activation="tanh"), nn.Dense(1))
            net.initialize(gluon.init.Xavier(), ctx=contexts)
            net.hybridize()
            trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1},
                                    kvstore=kvstore)
            lossf = gluon.loss.L2Loss()
            for _ in range(3):
                xparts = utils.split_and_load(nd.array(xs), contexts)
                yparts = utils.split_and_load(nd.array(ys), contexts)
                with autograd.record():
                    losses = [lossf(net(a), b) for a, b in zip(xparts, yparts)]
                for loss in losses:
                    loss.backward()
                trainer.step(len(xs))
            return [[p.data(c).asnumpy() for c in contexts]
                    for p in net.collect_params().values()]

        many = train(self.contexts, "device")
        one = train([self.contexts[0]], None)
        for reps, ref in zip(many, one):
            for r in reps[1:]:
                np.testing.assert_array_equal(r, reps[0])   # replicas identical
            np.testing.assert_allclose(reps[0], ref[0], rtol=1e-4, atol=1e-5)
        return {"contexts": [str(c) for c in self.contexts],
                "summary": f"{len(self.contexts)} contexts, replicas equal, "
                           "matches one context"}

    def amp(self, limit):
        return run_child(_AMP, limit, self.dry, ["dry" if self.dry else "gpu"])

    def resnet(self, which: str, dtype: str):
        def section(limit):
            if self.dry and dtype != "float32":
                raise Skip("GPU only (the bfloat16 benchmark); --cpu-dry-run")
            code = _RESNET_OURS if which == "ours" else _RESNET_TORCH
            return run_child(code, limit, self.dry, ["dry" if self.dry else "gpu", dtype])
        return section


# (name, checker method, seconds on a GPU); the limits add up to under 8 minutes
PLAN = [("env", "env", 10), ("op_table", "op_table", 95), ("gpu_pytests", "gpu_pytests", 95),
        ("hybrid_train", "hybrid_train", 30), ("keras_fit", "keras_fit", 45),
        ("gluon_data_parallel", "gluon_data_parallel", 30), ("amp", "amp", 40),
        ("resnet50_ours_fp32", ("ours", "float32"), 35),
        ("resnet50_ours_bf16", ("ours", "bfloat16"), 35),
        ("resnet50_torch_fp32", ("torch", "float32"), 30),
        ("resnet50_torch_bf16", ("torch", "bfloat16"), 30)]


def write_json_atomic(path: str, data: dict) -> None:
    """Write ``data`` as JSON to ``path`` atomically (a temporary file, then rename)."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".device_check.", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=2, default=str)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def main(argv=None) -> int:
    """Run the sections and write the report.

    Args:
        argv: the command line (default ``sys.argv[1:]``).

    Returns:
        0 when no section failed, else 1.
    """
    ap = argparse.ArgumentParser(prog="python -m tests.gpu.device_check",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="device_check_report.json", help="the JSON report")
    ap.add_argument("--cpu-dry-run", action="store_true",
                    help="every section on cpu(0) with tiny sizes; GPU-only ones skipped")
    ap.add_argument("--budget", type=float, default=470.0,
                    help="seconds for the whole run (sections are cut to what is left)")
    ap.add_argument("--only", default="", help="comma-separated section names to run")
    args = ap.parse_args(argv)
    start = time.monotonic()
    report = {"dry_run": args.cpu_dry_run, "sections": {},
              "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    print(f"device check ({'CPU dry run' if args.cpu_dry_run else 'GPU'}), "
          f"budget {args.budget:.0f} s", flush=True)
    checker = None
    try:
        checker = Checker(args.cpu_dry_run)
    except Exception as e:  # noqa: BLE001 - the report still says what broke
        report["error"] = f"setting up: {type(e).__name__}: {e}"
    only = {s for s in args.only.split(",") if s}
    for name, what, seconds in PLAN:
        if only and name not in only:
            continue
        left = args.budget - (time.monotonic() - start)
        if checker is None or left < 3:
            report["sections"][name] = {"status": "fail", "seconds": 0,
                                        "error": report.get("error", "no time left")}
            continue
        fn = checker.resnet(*what) if isinstance(what, tuple) else getattr(checker, what)
        run_section(name, fn, min(seconds, left), report)
    statuses = [s["status"] for s in report["sections"].values()]
    report["totals"] = {k: statuses.count(k) for k in ("pass", "fail", "skip")}
    report["seconds"] = round(time.monotonic() - start, 1)
    write_json_atomic(args.out, report)
    t = report["totals"]
    print(f"summary: {t['pass']} pass, {t['fail']} fail, {t['skip']} skip in "
          f"{report['seconds']:.0f} s; report: {args.out}", flush=True)
    return 1 if t["fail"] or "error" in report else 0


if __name__ == "__main__":
    sys.exit(main())
