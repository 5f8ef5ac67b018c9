"""One report of where core stands against PyTorch (and Keras on jax), in one run.

``python -m benchmarks.run --report [--quick]`` (or ``python -m benchmarks.report``)
prints, for the MLP 784-512-512-10 (batch 128), LeNet (batch 64) and the LSTM
128->256 (sequence 35, batch 32):

- training steps: core imperative (``nd`` operators + autograd), Gluon hybridized, and
  torch eager (CPU), each in its own processes; ratio ours / torch;
- Keras ``fit``: one epoch on kbackend (``jit_compile="auto"``, Keras' default), on
  Keras' torch backend (eager PyTorch) and on jax (jit) when installed; ratios
  kbackend / torch and kbackend / jax, and each backend's first ``fit`` step;
- the first training step in a fresh process (parameters, data, compilation and the
  step; after the imports) with a cold numba cache (an empty scratch
  ``NUMBA_CACHE_DIR``) and a warm one (the same directory, filled by the cold run),
  against torch's first step;
- ``import core``, ``import torch`` and ``import keras`` (kbackend, jax): the time of
  the import statement in a fresh interpreter, median of several.

Every measurement runs in a fresh process (``benchmarks/report_work.py``), one
framework per process, and the processes run back to back in interleaved rounds (each
round runs every framework once per model, in a rotating order), so no framework's
threads, allocator or compiled code disturb another's and a change in the machine's
load hits all of them alike. Every process gets the same thread count
(``--threads``: ``OMP/OPENBLAS/MKL_NUM_THREADS``, ``KBACKEND_NUM_THREADS``,
``torch.set_num_threads``, XLA's intra-op threads), and none inherits
``OPENBLAS_CORETYPE``/``OPENBLAS_L2_SIZE`` (some machines pin OpenBLAS to an older kernel
with them; pinned to Haswell on an AVX-512 machine, NumPy's GEMMs run at half speed while
torch's oneDNN is unaffected; ``--openblas-as-set`` keeps them). Times are medians over all the
repeats of all rounds; "spread" is (max - min) / median over them (a large one: the
machine was busy). The workloads are the existing benchmarks' (``bench_mlp_fc``,
``bench_cnn``, ``bench_lstm``, ``bench_hybridize``, ``bench_keras_fit``), which check
that the frameworks compute the same step; here the first losses of ``nd`` and torch
(same weights, same data) are compared once more.

``--quick`` (2 rounds, short epochs) takes about 2-3 minutes on 2 cores; a full run about
6-10. ``--tiny`` shrinks the models for the tests (nothing it times means anything).
The exit status is 1 when any measurement failed (its row says why).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from . import report_work
from .bench_keras_fit import _thread_env
from .common import Timing, format_seconds, load_average, machine_report

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("mlp", "lenet", "lstm")
FRAMEWORKS = ("nd", "gluon", "torch")
LABELS = {"nd": "nd+autograd", "gluon": "gluon hybrid", "torch": "torch eager"}
KERAS = ("kbackend", "torch", "jax")
KERAS_LABELS = {"kbackend": "kbackend (jit)", "torch": "keras torch", "jax": "keras jax"}
IMPORTS = {"core": ("import core", None), "torch": ("import torch", None),
           "keras (kbackend)": ("import keras", "kbackend"),
           "keras (jax)": ("import keras", "jax"), "keras (torch)": ("import keras", "torch")}


@dataclass
class Mode:
    """How much a report measures."""

    rounds: int           # rounds of step processes (round 1: cold numba cache)
    repeats: int          # timed repeats per step process
    number: dict          # steps per repeat, per model
    imports: int          # fresh interpreters per import
    import_names: tuple   # which imports
    keras_rounds: int     # rounds of Keras processes (one per backend, all models)
    keras_steps: int      # steps per Keras epoch
    keras_epochs: int     # timed epochs per Keras process
    name: str = "full"
    tiny: bool = False


MODES = {
    "full": Mode(5, 5, {"mlp": 10, "lenet": 3, "lstm": 2}, 7, tuple(IMPORTS), 3, 50, 3),
    "quick": Mode(2, 3, {"mlp": 5, "lenet": 2, "lstm": 1}, 3,
                  ("core", "torch", "keras (kbackend)", "keras (jax)"), 1, 5, 2, "quick"),
    "tiny": Mode(1, 1, {"mlp": 1, "lenet": 1, "lstm": 1}, 1,
                 ("core", "keras (kbackend)"), 1, 2, 1, "tiny", tiny=True),
}


def installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


# ----------------------------------------------------------------------------- processes

# Variables some machines set to pin OpenBLAS to an older kernel (older OpenBLAS builds
# misdetect new processors); a current NumPy's OpenBLAS detects the CPU itself, and pinned
# to Haswell's AVX2 kernels it runs GEMMs at half the speed of its AVX-512 ones. Measured
# processes run without them (as a user's would) unless --openblas-as-set.
OPENBLAS_PINS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
_options = {"keep_openblas_pins": False}


def child_env(threads: int, cache_dir: str | None = None, keras: str = "kbackend") -> dict:
    """The environment of every measured process: the same thread count everywhere."""
    env = _thread_env(keras, threads)
    if not _options["keep_openblas_pins"]:
        for var in OPENBLAS_PINS:
            env.pop(var, None)
    env["KBACKEND_NUM_THREADS"] = str(threads)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    return env


def run_json(cmd: list, env: dict, timeout: float) -> dict | str:
    """Run ``cmd``; the JSON object on its last JSON line, or why there is none."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        return f"failed: no result within {timeout:.0f} s"
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            return {**json.loads(line), "process_s": time.perf_counter() - t0}
    err = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    return f"failed (exit {proc.returncode}): {err[-1][:160] if err else 'no output'}"


def rotated(items, r: int) -> list:
    """``items`` starting at index ``r`` (so no framework always runs first)."""
    items = list(items)
    k = r % len(items)
    return items[k:] + items[:k]


def progress(text: str) -> None:
    print(f"[report] {text}", file=sys.stderr, flush=True)


def worker(module: str, args: list) -> list:
    """The command line of a ``report_work`` process that first times ``import module``."""
    return [sys.executable, "-c", report_work.boot(module), *args]


def worker_imports(steps: dict, keras: dict) -> dict:
    """``{import name: [seconds]}``: the import each measured process timed first."""
    out: dict = {}
    for by_fw in steps.values():
        for fw, results in by_fw.items():
            name = "torch" if fw == "torch" else "core"
            out.setdefault(name, []).extend(r["import_s"] for r in results
                                            if isinstance(r, dict))
    for backend, results in keras.items():
        out.setdefault(f"keras ({backend})", []).extend(
            r["import_s"] for r in results if isinstance(r, dict))
    return out


def measure_imports(mode: Mode, threads: int, timeout: float, have: dict) -> dict:
    """``have`` topped up with import-only fresh interpreters, so that every name in
    ``mode.import_names`` has ``mode.imports`` samples; ``{name: [seconds]}``."""
    out = {n: list(v) for n, v in have.items()}
    names = [n for n in mode.import_names if installed(n.split()[0])
             and (IMPORTS[n][1] in (None, "kbackend") or installed(IMPORTS[n][1]))]
    for n in names:
        out.setdefault(n, [])
    missing = max([mode.imports - len(out[n]) for n in names], default=0)
    for i in range(missing):
        progress(f"imports {i + 1}/{missing}")
        for name in rotated(names, i):
            if len(out[name]) >= mode.imports:
                continue
            stmt, backend = IMPORTS[name]
            code = (f"import time; t0 = time.perf_counter(); {stmt}; "
                    "print('{\"seconds\": %r}' % (time.perf_counter() - t0))")
            res = run_json([sys.executable, "-c", code],
                           child_env(threads, keras=backend or "kbackend"), timeout)
            out[name].append(res if isinstance(res, str) else res["seconds"])
    return {n: out[n] for n in IMPORTS if out.get(n)}


def measure_steps(mode: Mode, threads: int, cache_root: str, timeout: float,
                  frameworks=FRAMEWORKS) -> dict:
    """``{model: {framework: [one result per round]}}`` (see ``report_work step``)."""
    out = {m: {f: [] for f in frameworks} for m in MODELS}
    tiny = ["--tiny"] if mode.tiny else []
    for r in range(mode.rounds):
        for model in MODELS:
            progress(f"steps round {r + 1}/{mode.rounds}: {model}")
            for fw in rotated(frameworks, r):
                # One numba cache per framework and model: empty in round 1 (cold), then
                # filled by it (warm).
                cache = os.path.join(cache_root, f"{fw}-{model}")
                cmd = worker("torch" if fw == "torch" else "core",
                             [*tiny, "step", fw, model, "--repeats", str(mode.repeats),
                              "--number", str(mode.number[model])])
                out[model][fw].append(run_json(cmd, child_env(threads, cache), timeout))
    return out


def measure_keras(mode: Mode, threads: int, cache_root: str, timeout: float,
                  backends=KERAS) -> dict:
    """``{backend: [one result per round]}`` (see ``report_work keras``)."""
    out = {b: [] for b in backends}
    tiny = ["--tiny"] if mode.tiny else []
    cache = os.path.join(cache_root, "keras")
    for r in range(mode.keras_rounds):
        for b in rotated(backends, r):
            progress(f"keras round {r + 1}/{mode.keras_rounds}: {b}")
            cmd = worker("keras", [*tiny, "keras", *MODELS, "--steps", str(mode.keras_steps),
                                   "--epochs", str(mode.keras_epochs)])
            out[b].append(run_json(cmd, child_env(threads, cache, keras=b), timeout))
    return out


# ----------------------------------------------------------------------------- statistics

def timing(values) -> Timing | None:
    """Median and spread of the numbers in ``values`` (None when there are none)."""
    vals = [v for v in values if isinstance(v, (int, float))]
    return Timing.of(vals) if vals else None


def errors(results) -> list[str]:
    return [r for r in results if isinstance(r, str)]


def cell(t: Timing | None, results=(), width: int = 17) -> str:
    """``6.80 ms (12%)``; ``failed`` or ``-`` when there is no number."""
    if t is None:
        text = "failed" if errors(results) else "-"
    else:
        text = format_seconds(float(t))
        if len([r for r in results if not isinstance(r, str)]) > 1 or t.spread:
            text += f" ({t.spread:.0%})"
    return f"{text:<{width - 1}s} "


def ratio(a, b, width: int = 12) -> str:
    text = f"{float(a) / float(b):.2f}x" if a is not None and b else "-"
    return f"{text:<{width}s}"


def step_timing(results: list) -> Timing | None:
    """Time per step pooled over every repeat of every round."""
    return timing([t for r in results if isinstance(r, dict) for t in r["step_s"]])


def first_steps(results: list) -> tuple:
    """(cold, warm): round 1's first step, and the median of the later rounds'."""
    firsts = [r["first_step_s"] if isinstance(r, dict) else r for r in results]
    return timing(firsts[:1]), timing(firsts[1:])


# ----------------------------------------------------------------------------- tables

def import_lines(res: dict) -> list[str]:
    lines = ["== import time: the import statement, first in a fresh interpreter (each "
             "measured process above, then import-only ones): median (spread) of n"]
    for name, vals in res.items():
        lines.append(f"  {'import ' + name:28s}{cell(timing(vals), vals)}n={len(vals):<4d}"
                     + (f"  {errors(vals)[0]}" if errors(vals) else ""))
    pairs = (("core", "torch"), ("keras (kbackend)", "keras (jax)"),
             ("keras (kbackend)", "keras (torch)"))
    for a, b in pairs:
        if a in res and b in res:
            lines.append(f"  {'ratio ' + a + ' / ' + b:44s}"
                         f"{ratio(timing(res[a]), timing(res[b]))}")
    return lines


def what(results_by_fw: dict, model: str) -> str:
    for rs in results_by_fw.values():
        for r in rs:
            if isinstance(r, dict):
                return r["what"]
    return model


def step_lines(res: dict, mode: Mode) -> list[str]:
    fws = list(next(iter(res.values())))
    lines = [f"== training step: median time per step over {mode.rounds} rounds x "
             f"{mode.repeats} repeats (spread); ratio = ours / torch eager"]
    head = f"  {'model':30s}" + "".join(f"{LABELS[f]:17s}" for f in fws)
    ours = [f for f in fws if f != "torch"]
    if "torch" in fws:
        head += "".join(f"{f + '/torch':12s}" for f in ours)
    lines.append(head)
    notes = []
    for model, by_fw in res.items():
        t = {f: step_timing(by_fw[f]) for f in fws}
        row = f"  {what(by_fw, model):30s}" + "".join(cell(t[f], by_fw[f]) for f in fws)
        if "torch" in fws:
            row += "".join(ratio(t[f], t["torch"]) for f in ours)
        lines.append(row)
        notes += [f"  {model} {f}: {e}" for f in fws for e in errors(by_fw[f])[:1]]
        nd, tc = by_fw.get("nd", []), by_fw.get("torch", [])
        if nd and tc and isinstance(nd[0], dict) and isinstance(tc[0], dict):
            a, b = nd[0]["loss"], tc[0]["loss"]
            if abs(a - b) > 1e-3 * max(1.0, abs(b)):
                notes.append(f"  {model}: nd's first loss {a:.6g} differs from torch's "
                             f"{b:.6g} (same weights and data): not the same computation")
    return lines + notes


def first_step_lines(res: dict) -> list[str]:
    lines = ["== first training step in a fresh process, after the imports (parameters, "
             "data, compilation, the step):",
             "   cold = empty numba cache (round 1), warm = the same cache filled "
             "(median of the later rounds); ratio = ours / torch's first step",
             f"  {'model':30s}{'':8s}{'cold cache':17s}{'warm cache':17s}{'torch':17s}"
             f"{'cold/torch':12s}{'warm/torch':12s}"]
    for model, by_fw in res.items():
        torch = timing(r["first_step_s"] for r in by_fw.get("torch", [])
                       if isinstance(r, dict))
        name = what(by_fw, model)
        for f in (f for f in by_fw if f != "torch"):
            cold, warm = first_steps(by_fw[f])
            lines.append(f"  {name:30s}{f:8s}{cell(cold, by_fw[f][:1])}"
                         f"{cell(warm, by_fw[f][1:])}{cell(torch, by_fw.get('torch', []))}"
                         f"{ratio(cold, torch)}{ratio(warm, torch)}")
            name = ""
    return lines


def keras_lines(res: dict, mode: Mode) -> list[str]:
    backends = list(res)
    lines = [f"== Keras fit: one epoch of {mode.keras_steps} steps (kbackend: "
             "jit_compile='auto', Keras' default), median over "
             f"{mode.keras_rounds} rounds x {mode.keras_epochs} epochs (spread)"]
    others = [b for b in backends if b != "kbackend"]
    head = f"  {'model':30s}" + "".join(f"{KERAS_LABELS[b]:17s}" for b in backends)
    if "kbackend" in res:
        head += "".join(f"{'kb/' + b:12s}" for b in others)
    lines.append(head)
    models = []
    for rs in res.values():
        for r in rs:
            if isinstance(r, dict):
                models = [m for m in MODELS if m in r["models"]]
                break
    models = models or list(MODELS)

    def per(b, m, key):
        return [r["models"][m][key] if isinstance(r, dict) else r for r in res[b]]

    def label(m):
        for b in backends:
            for r in res[b]:
                if isinstance(r, dict):
                    return r["models"][m]["what"]
        return m

    for m in models:
        t = {b: timing(v for x in per(b, m, "epoch_s") if isinstance(x, list) for v in x)
             for b in backends}
        row = f"  {label(m):30s}" + "".join(cell(t[b], res[b]) for b in backends)
        if "kbackend" in res:
            row += "".join(ratio(t["kbackend"], t[b]) for b in others)
        lines.append(row)
    lines.append(f"  {'first fit step (build, compile, step 1)':30s}")
    cold = []
    for m in models:
        firsts = {b: per(b, m, "first_step_s") for b in backends}
        if len(firsts.get("kbackend", [])) > 1:  # round 1 had an empty numba cache
            cold.append(f"{m} {cell(timing(firsts['kbackend'][:1]), width=1).strip()}")
            firsts["kbackend"] = firsts["kbackend"][1:]
        t = {b: timing(firsts[b]) for b in backends}
        row = f"  {'  ' + m:30s}" + "".join(cell(t[b], res[b]) for b in backends)
        if "kbackend" in res:
            row += "".join(ratio(t["kbackend"], t[b]) for b in others)
        lines.append(row)
    lines.append("   (one process per backend builds and compiles the models in this order; "
                 + (f"kbackend: the later rounds, its first (empty numba cache): "
                    f"{', '.join(cold)})" if cold else
                    "kbackend's one round ran with an empty numba cache)"))
    for b in backends:
        lines += [f"  {b}: {e}" for e in errors(res[b])[:1]]
    return lines


# ----------------------------------------------------------------------------- main

def blas_line(threads: int) -> str:
    """Which BLAS kernel the measured processes run, and why (the pins they drop)."""
    code = ("from threadpoolctl import threadpool_info; import numpy; print(', '.join("
            "f\"{p.get('internal_api')} {p.get('architecture', 'n/a')}\" for p in "
            "threadpool_info() if p.get('user_api') == 'blas'))")
    try:
        got = subprocess.run([sys.executable, "-c", code], env=child_env(threads),
                             capture_output=True, text=True, timeout=120, check=True)
        kernel = got.stdout.strip() or "unknown"
    except (subprocess.SubprocessError, OSError):
        kernel = "unknown (threadpoolctl failed)"
    pins = [f"{v}={os.environ[v]}" for v in OPENBLAS_PINS if v in os.environ]
    if not pins:
        return f"blas kernel in the measured processes: {kernel}"
    how = ("kept (--openblas-as-set)" if _options["keep_openblas_pins"]
           else "unset there (--openblas-as-set keeps them)")
    return f"blas kernel in the measured processes: {kernel}; this shell's {', '.join(pins)} {how}"


def report(mode: Mode, threads: int, timeout: float, json_path: str | None = None,
           out=sys.stdout, keep_openblas_pins: bool = False) -> int:
    """Measure everything ``mode`` asks for and print the report; 1 if anything failed."""
    t_start = time.perf_counter()
    _options["keep_openblas_pins"] = keep_openblas_pins
    has_torch, has_jax = installed("torch"), installed("jax")

    def emit(lines):
        for line in lines:
            print(line, file=out)
        print(file=out)
        out.flush()

    emit(["== machine", *(f"  {ln}" for ln in machine_report()), f"  {blas_line(threads)}",
          f"  report mode: {mode.name}; every framework in its own processes, {threads} "
          "threads each (BLAS, OpenMP, numba, torch, XLA)",
          *([] if has_torch else ["  torch is not installed: no torch columns"]),
          *([] if has_jax else ["  jax is not installed: no Keras-on-jax column"])])
    cache_root = tempfile.mkdtemp(prefix="kbackend-report-numba-")
    try:
        t0 = time.perf_counter()
        fws = [f for f in FRAMEWORKS if f != "torch" or has_torch]
        steps = measure_steps(mode, threads, cache_root, timeout, fws)
        emit(step_lines(steps, mode))
        emit([*first_step_lines(steps), f"  (both tables: {time.perf_counter() - t0:.0f} s)"])
        t0 = time.perf_counter()
        backends = [b for b in KERAS if b == "kbackend" or installed(b)]
        keras = measure_keras(mode, threads, cache_root, timeout, backends)
        emit([*keras_lines(keras, mode), f"  ({time.perf_counter() - t0:.0f} s)"])
        t0 = time.perf_counter()
        imports = measure_imports(mode, threads, timeout, worker_imports(steps, keras))
        emit([*import_lines(imports), f"  ({time.perf_counter() - t0:.0f} s)"])
    finally:
        shutil.rmtree(cache_root, ignore_errors=True)
    failed = [e for group in (imports.values(), *(d.values() for d in steps.values()),
                              keras.values()) for rs in group for e in errors(rs)]
    emit([f"== done in {time.perf_counter() - t_start:.0f} s; load average at the end: "
          f"{load_average() or 'n/a'}"
          + (f"; {len(failed)} measurements FAILED (rows above say why)" if failed else "")])
    if json_path:
        with open(json_path, "w", encoding="utf-8") as f:
            json.dump({"mode": asdict(mode), "threads": threads, "imports": imports,
                       "steps": steps, "keras": keras, "machine": machine_report()}, f,
                      indent=1)
    return 1 if failed else 0


def add_arguments(p: argparse.ArgumentParser, note: str = "") -> None:
    """The report's options (shared with ``benchmarks.run --report``, whose help says
    ``note`` before each)."""
    p.add_argument("--tiny", action="store_true",
                   help=f"{note}tiny models, one round (for the tests; times nothing "
                        "meaningful)")
    p.add_argument("--threads", type=int, default=2,
                   help=f"{note}threads for every framework (default 2)")
    p.add_argument("--rounds", type=int, default=None,
                   help=f"{note}rounds of step processes (default: 5, --quick 2)")
    p.add_argument("--timeout", type=float, default=900.0,
                   help=f"{note}seconds one measured process may take")
    p.add_argument("--json", metavar="PATH", help=f"{note}also write the raw results as JSON")
    p.add_argument("--openblas-as-set", action="store_true",
                   help=f"{note}keep OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE in the measured "
                        "processes (by default they are unset there)")


def mode_of(args) -> Mode:
    mode = MODES["tiny" if args.tiny else "quick" if args.quick else "full"]
    if args.rounds:
        mode = Mode(**{**asdict(mode), "rounds": args.rounds})
    return mode


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.report",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="2 rounds, short epochs (< 3 min)")
    add_arguments(p)
    args = p.parse_args(argv)
    if args.threads < 1:
        p.error("--threads must be at least 1")
    return report(mode_of(args), args.threads, args.timeout, args.json,
                  keep_openblas_pins=args.openblas_as_set)


if __name__ == "__main__":
    sys.exit(main())
