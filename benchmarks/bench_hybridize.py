"""Imperative vs hybridized Gluon: training-step time, peak memory, passes, per-op overhead.

Three models take an SGD training step (forward, softmax cross-entropy, backward,
``trainer.step``): the MLP 784-512-512-10 of ``bench_mlp`` (batch 128), the LeNet CNN
of ``bench_cnn`` (1x28x28, batch 64) and ResNet-18 v1 for 32x32 images (``thumbnail``,
batch 32). Each runs imperatively and hybridized (``net.hybridize()`` and
``loss.hybridize()``) from the same weights; both are checked to give the same loss on
the first two steps and the same parameters (BatchNorm statistics included) after
them, before anything is timed. Reported per model:

- the median time per step over the timed steps (all variants timed interleaved, so a
  change in the machine's load hits them alike), and the ratio hybrid/imperative;
- the peak memory of live arrays during one step, from ``tracemalloc`` (NumPy reports
  its buffers to it): the peak minus what is alive just before the step, so the
  parameters, gradient buffers and optimizer state do not count; and the ratio;
- what each part of the compiler contributed: the hybridized step compiled with one
  optimizer pass (``core.symbol.passes``), backward mirroring (``core.symbol.mirror``)
  or the memory plan's in-place writes switched off, and with all of them off, each
  with its time, its peak and the counters the passes and the memory plan report.

The ablations are made from here without touching the library: while a variant's
first call compiles, ``core.symbol.passes.DEFAULT_PASSES``/``FINAL_PASSES`` lose one
pass, ``KBACKEND_BACKWARD_MIRROR=0`` is set, ``core.symbol.executor.Program`` is
replaced by a subclass passing ``inplace=False``, or the memory plan's early releases
are dropped (``-release``: every slot lives until the program ends, as an imperative
tape keeps its values); ``none`` switches all of them off. The compiled programs are
cached, so later calls run what was compiled. The same wrappers record the passes'
``pass_stats`` and the memory plan's counts.

Last, per-operator overhead: a chain of 1,000 tiny elementwise operators on a ``(4,)``
float32 array, as plain ``nd`` calls and as a hybridized block, forward only and
forward + backward under ``autograd.record()``, in microseconds per operator.

Run alone: ``python -m benchmarks.bench_hybridize [--quick] [--threads N] [--json PATH]``
(or through ``python -m benchmarks.run --only hybridize``, BLAS on one thread). ``--quick``
takes about 30 s (ResNet-18 at batch 4, 3 timed steps); a full run several minutes,
mostly ResNet-18 at batch 32 (``--no-ablations`` or ``--only`` shorten it). Targets (issue 6): hybridized
time at most 0.8x imperative on the MLP and the CNN; hybridized peak memory at most
0.6x imperative on ResNet-18.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import sys
import time
import tracemalloc
from dataclasses import dataclass, field

import numpy

from .common import Options, Row, check_close, machine_report, median_times

TITLE = ("hybridize: Gluon training step imperative vs hybridized (MLP, LeNet, ResNet-18): "
         "time, peak memory, passes; per-op overhead")
LR = 0.01
MIRROR_ENV = "KBACKEND_BACKWARD_MIRROR"
TARGETS = {"mlp": ("time", 0.8), "cnn": ("time", 0.8), "resnet18": ("peak", 0.6)}
CHAIN_OPS = 1000


# ----------------------------------------------------------------------------- models

def _mlp():
    from gluon import nn

    net = nn.HybridSequential()
    net.add(nn.Dense(512, activation="relu", in_units=784),
            nn.Dense(512, activation="relu", in_units=512),
            nn.Dense(10, in_units=512))
    return net


def _lenet():
    from gluon import nn

    net = nn.HybridSequential()
    net.add(nn.Conv2D(20, 5, activation="relu", in_channels=1), nn.MaxPool2D(2, 2),
            nn.Conv2D(50, 5, activation="relu", in_channels=20), nn.MaxPool2D(2, 2),
            nn.Dense(500, activation="relu", in_units=800), nn.Dense(10, in_units=500))
    return net


def _resnet18():
    from gluon.model_zoo import vision

    return vision.resnet18_v1(classes=10, thumbnail=True)


@dataclass
class Model:
    name: str
    build: object
    shape: tuple       # one example's shape
    batch: int
    quick_batch: int
    steps: int         # timed steps (full run)
    tol: float         # relative tolerance of the loss check


MODELS = [Model("mlp", _mlp, (784,), 128, 128, 30, 1e-4),
          Model("cnn", _lenet, (1, 28, 28), 64, 64, 20, 1e-4),
          Model("resnet18", _resnet18, (3, 32, 32), 32, 4, 10, 1e-3)]


class Learner:
    """A network, its loss, an SGD trainer and one batch: ``step()`` trains on it."""

    def __init__(self, model: Model, batch: int, source: Learner | None = None,
                 hybrid: bool = False, seed: int = 0):
        from core import nd, random
        from gluon import Trainer
        from gluon.loss import SoftmaxCrossEntropyLoss

        random.seed(seed)
        rng = numpy.random.default_rng(seed)
        self.x = nd.array(rng.standard_normal((batch, *model.shape)).astype(numpy.float32))
        self.y = nd.array(rng.integers(0, 10, size=batch).astype(numpy.int64))
        self.batch = batch
        self.net = model.build()
        self.net.initialize()
        self.net(self.x)  # completes any deferred initialization
        if source is not None:  # the same weights (and BatchNorm statistics)
            for mine, theirs in zip(self.net.collect_params().values(),
                                    source.net.collect_params().values(), strict=True):
                mine.set_data(theirs.data().copy())
        self.loss_fn = SoftmaxCrossEntropyLoss()
        if hybrid:
            self.net.hybridize()
            self.loss_fn.hybridize()
        self.trainer = Trainer(self.net.collect_params(), "sgd", {"learning_rate": LR})

    def step(self):
        from core import autograd

        with autograd.record():
            loss = self.loss_fn(self.net(self.x), self.y)
        loss.backward()
        self.trainer.step(self.batch)
        return loss

    def loss_value(self) -> float:
        return float(self.step().mean().asscalar())


# ----------------------------------------------------------------------------- ablations

@dataclass
class Compiled:
    """What the compiler reported while a variant compiled (summed over its programs)."""

    programs: int = 0
    stats: dict = field(default_factory=dict)
    signature: list = field(default_factory=list)  # one hash per compiled program

    def add(self, stats: dict) -> None:
        for k, v in stats.items():
            if isinstance(v, (int, float)):
                self.stats[k] = self.stats.get(k, 0) + v


def ablations() -> dict:
    """``{variant name: {what is off}}``; ``all`` is the default compiler."""
    from core.symbol import passes

    out = {"all": {}}
    for p in list(passes.DEFAULT_PASSES) + list(passes.FINAL_PASSES):
        out[f"-{p.__name__.rsplit('.', 1)[-1]}"] = {"drop": p}
    out["-mirror"] = {"mirror": False}
    out["-inplace"] = {"inplace": False}
    out["-release"] = {"release": False}
    out["none"] = {"no_passes": True, "mirror": False, "inplace": False, "release": False}
    return out


@contextlib.contextmanager
def compiler(off: dict, record: Compiled):
    """Compile with the parts named in ``off`` switched off; record the stats in ``record``.

    Patches module attributes that ``core.symbol.executor.compile_graph`` reads at call
    time, and restores them on exit.
    """
    from core.symbol import executor, mirror, passes

    saved = (passes.DEFAULT_PASSES, passes.FINAL_PASSES, executor.Program,
             executor._optimize, mirror.run, executor.plan, os.environ.get(MIRROR_ENV))
    base_program, base_optimize, base_mirror = executor.Program, executor._optimize, mirror.run
    base_plan = executor.plan
    inplace = off.get("inplace", True)

    def planned(*args, **kwargs):
        p = base_plan(*args, **kwargs)
        if not off.get("release", True):  # keep every slot until the program ends
            p.frees = [[] for _ in p.frees]
        return p

    class Recorded(base_program):
        def __init__(self, *args, **kwargs):
            if not inplace:
                kwargs["inplace"] = False
            super().__init__(*args, **kwargs)
            record.programs += 1
            record.add({"steps": len(self.steps), "inplace_steps": self.plan.inplace_count,
                        "planned_bytes": self.plan.planned_bytes})
            record.signature.append(hash((
                tuple((st.op.name, st.slots, st.outs, st.inplace, repr(st.attrs))
                      for st in self.steps),
                tuple(tuple(sorted(f)) for f in self.plan.frees),
                tuple(sorted(self.var_slots.values())), tuple(s for s, _ in self.consts))))

    def optimize(g, ctx):
        out = base_optimize(g, ctx)
        record.add(getattr(out, "pass_stats", {}))
        return out

    def mirrored(g, n_fwd):
        out = base_mirror(g, n_fwd)
        record.add(getattr(out, "pass_stats", {}) if out is not g else {})
        return out

    try:
        if off.get("no_passes"):
            passes.DEFAULT_PASSES, passes.FINAL_PASSES = [], []
        elif "drop" in off:
            passes.DEFAULT_PASSES = [p for p in saved[0] if p is not off["drop"]]
            passes.FINAL_PASSES = [p for p in saved[1] if p is not off["drop"]]
        if not off.get("mirror", True):
            os.environ[MIRROR_ENV] = "0"
        executor.Program, executor._optimize, mirror.run = Recorded, optimize, mirrored
        executor.plan = planned
        yield record
    finally:
        (passes.DEFAULT_PASSES, passes.FINAL_PASSES, executor.Program, executor._optimize,
         mirror.run, executor.plan, env) = saved
        if env is None:
            os.environ.pop(MIRROR_ENV, None)
        else:
            os.environ[MIRROR_ENV] = env


# ----------------------------------------------------------------------------- measuring

def peak_bytes(step) -> int:
    """Peak bytes allocated during ``step()`` above what was alive before it (tracemalloc).

    One step runs traced first, so that the arrays alive between steps (gradients the
    step replaces, say) are tracked and their release is counted.
    """
    gc.collect()
    tracemalloc.start()
    try:
        step()
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        step()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def bench_model(model: Model, quick: bool, steps: int, with_ablations: bool) -> dict:
    """Time, peak and compiler counters of every variant of ``model``'s training step."""
    batch = model.quick_batch if quick else model.batch
    imp = Learner(model, batch)
    learners = {"imperative": imp}
    compiled: dict[str, Compiled] = {}
    variants = ablations() if with_ablations else {"all": {}}
    for name in variants:
        learners[name] = Learner(model, batch, source=imp, hybrid=True)
        compiled[name] = Compiled()
    # Correctness: the first two losses agree (the second one after an update).
    losses = {n: [] for n in learners}
    for _ in range(2):
        for name, lr in learners.items():
            ctx = (contextlib.nullcontext() if name == "imperative"
                   else compiler(variants[name], compiled[name]))
            with ctx:  # the hybridized variants compile on their first call
                losses[name].append(lr.loss_value())
    check_close(f"hybridize/{model.name}: loss of steps 1 and 2",
                [(f"{n} vs imperative", losses[n], losses["imperative"])
                 for n in learners if n != "imperative"], rtol=model.tol, atol=model.tol)
    want = [p.data() for p in imp.net.collect_params().values()]
    for n, lr in learners.items():  # the updated weights and BatchNorm statistics too
        if n != "imperative":
            got = [p.data() for p in lr.net.collect_params().values()]
            check_close(f"hybridize/{model.name}: parameters after 2 steps, {n}",
                        [(f"parameter {i}", g, w) for i, (g, w) in enumerate(zip(got, want))],
                        rtol=model.tol, atol=model.tol / 10)
    # A variant that compiled to the very programs of "all" (the pass it drops changed
    # nothing in this model) is not timed: it would only measure the machine's noise.
    same = [n for n in compiled if n != "all"
            and compiled[n].signature == compiled["all"].signature]
    for n in same:
        del learners[n]
    times = median_times({n: lr.step for n, lr in learners.items()}, number=1,
                         repeats=steps, warmup=1)
    peaks = {n: peak_bytes(lr.step) for n, lr in learners.items()}
    for n in same:
        times[n], peaks[n] = times["all"], peaks["all"]
    base_t, base_m = times["imperative"], peaks["imperative"]
    return {
        "batch": batch, "steps": steps, "loss": losses["imperative"],
        "variants": {n: {"ms_per_step": times[n] * 1e3, "spread": times[n].spread,
                         "peak_bytes": peaks[n],
                         "time_ratio": times[n] / base_t,
                         "peak_ratio": peaks[n] / base_m if base_m else None,
                         **({"programs": compiled[n].programs, "stats": compiled[n].stats,
                             "same_program_as_all": n in same} if n in compiled else {})}
                     for n in ["imperative", *compiled]}}


# ----------------------------------------------------------------------------- per-op chain

def chain(F, x, n: int = CHAIN_OPS):
    """``n`` tiny elementwise operators (a cycle of 8 that keeps values bounded)."""
    for i in range(n):
        k = i % 8
        if k == 0:
            x = x + 0.1
        elif k == 1:
            x = x * 0.9
        elif k == 2:
            x = F.tanh(x)
        elif k == 3:
            x = x - 0.05
        elif k == 4:
            x = F.exp(x)
        elif k == 5:
            x = x * 0.5
        elif k == 6:
            x = F.relu(x)
        else:
            x = F.sin(x)
    return x


def bench_chain(quick: bool, repeats: int) -> dict:
    """Microseconds per operator of the chain, imperative and hybridized."""
    from core import autograd, nd
    from gluon import HybridBlock

    class Chain(HybridBlock):
        def hybrid_forward(self, F, x):
            return chain(F, x)

    x = nd.array(numpy.linspace(-1.0, 1.0, 4, dtype=numpy.float32))
    x.attach_grad()
    compiled = {}
    block, bare = Chain(), Chain()  # bare: compiled without passes, mirror or in-place
    for b, name in ((block, "all"), (bare, "none")):
        b.hybridize()
        with compiler(ablations()[name], compiled.setdefault(f"{name} fwd", Compiled())):
            b(x)
        with (compiler(ablations()[name], compiled.setdefault(f"{name} train", Compiled())),
              autograd.record()):
            b(x).backward()

    def fwd_bwd(f):
        def run():
            with autograd.record():
                y = f(x)
            y.backward()
        return run

    def imperative(v):
        return chain(nd, v)

    want = imperative(x)
    with autograd.record():
        y = imperative(x)
    y.backward()
    want_grad = x.grad.copy()
    got = block(x)
    fwd_bwd(block)()
    got_grad = x.grad.copy()
    check_close("hybridize/chain", [("forward", got, want), ("gradient", got_grad, want_grad),
                                    ("forward, no passes", bare(x), want)],
                rtol=1e-5, atol=1e-6)
    number = 3 if quick else 20
    t = median_times({"imperative forward": lambda: imperative(x),
                      "hybrid forward": lambda: block(x),
                      "hybrid forward, no passes": lambda: bare(x),
                      "imperative forward+backward": fwd_bwd(imperative),
                      "hybrid forward+backward": fwd_bwd(block)},
                     number=number, repeats=repeats)
    out = {n: {"us_per_op": v * 1e6 / CHAIN_OPS, "spread": v.spread} for n, v in t.items()}
    out["hybrid forward"]["stats"] = compiled["all fwd"].stats
    out["hybrid forward, no passes"]["stats"] = compiled["none fwd"].stats
    out["hybrid forward+backward"]["stats"] = compiled["all train"].stats
    return out


# ----------------------------------------------------------------------------- report

class Bytes(Row):
    """A row showing a size in MiB (``seconds`` holds bytes)."""

    def value(self) -> str:
        return f"{self.seconds / 2**20:.2f} MiB"

    def note(self) -> str:
        return ""


class Text(Row):
    """A row showing a word instead of a number (``unit`` holds it)."""

    def __init__(self, label: str, text: str):
        super().__init__(label, unit=text)

    def value(self) -> str:
        return self.unit

    def note(self) -> str:
        return ""


def _stat_text(stats: dict) -> str:
    keys = ("nodes_before", "nodes_after", "steps", "inplace_steps", "mirrored_values")
    text = [f"{k}={stats[k]}" for k in keys if k in stats]
    text += [f"{k}={v}" for k, v in sorted(stats.items())
             if k not in keys and v and k not in ("planned_bytes", "rounds")
             and not k.startswith(("dce_dead", "fold_skipped"))]
    return " ".join(text)


def rows_of(results: dict) -> list[Row]:
    rows = []
    for name, r in results["models"].items():
        v = r["variants"]
        imp, hyb = v["imperative"], v["all"]
        tag = f"{name:8s} b{r['batch']}"
        rows += [Row(f"{tag} imperative step", _timing(imp), unit="step"),
                 Row(f"{tag} hybrid step", _timing(hyb), unit="step"),
                 Row(f"{tag} ratio time hybrid/imperative", ratio=hyb["time_ratio"]),
                 Bytes(f"{tag} imperative peak", imp["peak_bytes"]),
                 Bytes(f"{tag} hybrid peak", hyb["peak_bytes"]),
                 Row(f"{tag} ratio peak hybrid/imperative", ratio=hyb["peak_ratio"] or 0.0)]
        what, target = TARGETS[name]
        got = hyb["time_ratio"] if what == "time" else hyb["peak_ratio"]
        rows.append(Row(f"{tag} target {what} <= {target}x: "
                        f"{'met' if got is not None and got <= target else 'NOT met'}",
                        ratio=got or 0.0))
        for n, a in v.items():
            if n in ("imperative", "all"):
                continue
            if a.get("same_program_as_all"):
                rows.append(Text(f"{tag} {n:9s} vs all passes", "same program"))
                continue
            peak = a["peak_bytes"] / hyb["peak_bytes"] if hyb["peak_bytes"] else 0.0
            rows.append(Row(f"{tag} {n:9s} vs all passes: time (peak {peak:.2f}x)",
                            ratio=a["ms_per_step"] / hyb["ms_per_step"]))
    for n, c in results.get("chain", {}).items():
        rows.append(Row(f"chain    {n}", c["us_per_op"] * 1e-6,
                        unit="op"))
    c = results.get("chain", {})
    for kind in ("forward", "forward+backward"):
        if f"hybrid {kind}" in c:
            rows.append(Row(f"chain    ratio {kind} hybrid/imperative",
                            ratio=c[f"hybrid {kind}"]["us_per_op"]
                            / c[f"imperative {kind}"]["us_per_op"]))
    return rows


def _timing(v: dict):
    from .common import Timing

    t = Timing(v["ms_per_step"] / 1e3)
    t.spread = v["spread"]
    return t


def pin_threads(threads: int):
    """A context limiting BLAS/OpenMP to ``threads`` threads (threadpoolctl, when installed)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=threads)


def measure(quick: bool, repeats: int, threads: int = 1, steps: int | None = None,
            only=None, with_ablations: bool = True) -> dict:
    """Run everything with BLAS pinned to ``threads`` threads; the results as a dict."""
    results: dict = {"quick": quick, "threads": threads, "models": {}}
    with pin_threads(threads):
        for m in MODELS:
            if only and m.name not in only:
                continue
            n = steps or (3 if quick else m.steps)
            t0 = time.perf_counter()
            results["models"][m.name] = bench_model(m, quick, n, with_ablations)
            results["models"][m.name]["seconds"] = time.perf_counter() - t0
        if not only or "chain" in only:
            results["chain"] = bench_chain(quick, 3 if quick else repeats)
    return results


def run(opts: Options) -> list[Row]:
    """The ``benchmarks.run`` entry point (BLAS pinned to one thread)."""
    return rows_of(measure(opts.quick, opts.repeats, getattr(opts, "threads", 1)))


def stats_table(results: dict) -> list[str]:
    """One line per model and variant: the compiler's counters."""
    lines = []
    for name, r in results["models"].items():
        for n, v in r["variants"].items():
            if v.get("same_program_as_all"):
                lines.append(f"  {name:8s} {n:9s} compiles to the same programs as 'all' "
                             "(the part it turns off changed nothing here): not timed")
            elif "stats" in v:
                lines.append(f"  {name:8s} {n:9s} {v['ms_per_step']:8.2f} ms "
                             f"{v['time_ratio']:5.2f}x {v['peak_bytes'] / 2**20:7.2f} MiB "
                             f"{v['peak_ratio'] or 0:5.2f}x  {_stat_text(v['stats'])}")
    for n, c in results.get("chain", {}).items():
        if "stats" in c:
            lines.append(f"  chain    {n}: {_stat_text(c['stats'])}")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_hybridize",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="3 steps per variant, ResNet-18 at batch 4 (under a minute)")
    p.add_argument("--threads", type=int, default=1, help="BLAS threads (threadpoolctl)")
    p.add_argument("--steps", type=int, default=None, help="timed steps per variant")
    p.add_argument("--repeats", type=int, default=7, help="timed repeats of the chain")
    p.add_argument("--only", nargs="+", choices=[m.name for m in MODELS] + ["chain"],
                   help="run only these parts")
    p.add_argument("--no-ablations", action="store_true", help="skip the pass ablations")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = p.parse_args(argv)
    if args.threads < 1:
        p.error("--threads must be at least 1")
    with pin_threads(args.threads):
        machine = machine_report()
        print("== machine (BLAS threads pinned)")
        for line in machine:
            print(f"  {line}")
        print(f"\n== {TITLE}")
        t0 = time.perf_counter()
        results = measure(args.quick, args.repeats, args.threads, args.steps, args.only,
                          not args.no_ablations)
    rows = rows_of(results)
    width = max(len(r.label) for r in rows)
    for r in rows:
        print(f"  {r.label:{width}s}  {r.value():>14s}{r.note()}")
    print("\n== per variant: time, vs imperative, peak, vs imperative, compiler counters "
          "(summed over the net's and the loss's programs)")
    for line in stats_table(results):
        print(line)
    print(f"  ({time.perf_counter() - t0:.1f} s)")
    if args.json:
        results["machine"] = machine
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1, default=float)
    return 0


if __name__ == "__main__":
    sys.exit(main())
