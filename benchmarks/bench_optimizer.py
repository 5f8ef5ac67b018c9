"""One optimizer step over a model's parameters: gluon ``Trainer.step`` against torch.optim.

The parameters are those of ``bench_mlp`` (784-512-512-10: 6 tensors, 670k floats) and
of ``bench_cnn`` (LeNet: 8 tensors, 431k floats), float32, with fixed gradients; the
step is SGD with momentum 0.9 and Adam. core runs ``gluon.Trainer.step(1)`` (the
optimizer's update through the Updater, as training does; each gradient's version is
bumped first, as backward would) with the compiled kernels (``core.optimizer._cpu``:
tensors of ``PARALLEL_MIN`` elements or more on the parallel kernels), with every tensor
on the serial kernels, and with the NumPy twins (``cpu_kernels.disabled()``, the path
before the kernels); torch runs
``torch.optim.SGD``/``Adam`` with ``foreach=True`` (its multi-tensor updates). Every
variant is first checked to compute the same update from the same start.
"""
from __future__ import annotations

import numpy

from . import bench_cnn, bench_mlp
from .common import Options, Row, check_close, median_time, median_times

TITLE = "optimizer: Trainer.step over an MLP's and a CNN's parameters, float32, time per step"
LR = 0.01
MOMENTUM = 0.9


def _params(model: str):
    """NumPy parameters and gradients of ``model`` ('mlp' or 'cnn')."""
    params = (bench_mlp if model == "mlp" else bench_cnn)._init()[0]
    rng = numpy.random.default_rng(1)
    # |g| >= 0.01: Adam's epsilon, which torch adds elsewhere, then does not matter
    grads = [(rng.choice((-1.0, 1.0), p.shape) * (0.01 + 0.1 * rng.random(p.shape)))
             .astype(numpy.float32) for p in params]
    return params, grads


def _optimizer_args(name: str) -> dict:
    if name == "sgd":
        return {"learning_rate": LR, "momentum": MOMENTUM}
    return {"learning_rate": LR}


def core_trainer(params, grads, name: str):
    """A gluon Trainer over copies of ``params`` whose gradients are ``grads``; returns
    ``(step, parameters)``."""
    from core import nd
    from gluon import Parameter, Trainer

    ps = []
    for i, (p, g) in enumerate(zip(params, grads)):
        q = Parameter(f"p{i}", shape=p.shape)
        q.initialize()
        q.set_data(nd.array(p))
        q.grad()[:] = nd.array(g)
        ps.append(q)
    trainer = Trainer(ps, name, _optimizer_args(name), kvstore=None)
    gs = [q.grad() for q in ps]

    def step():
        for g in gs:  # what backward does to a gradient it writes
            g._version += 1
        trainer.step(1)

    return step, ps


def torch_optimizer(torch, params, grads, name: str):
    """torch.optim with ``foreach=True`` over copies of ``params``; returns
    ``(step, tensors)``."""
    ts = [torch.tensor(p, requires_grad=True) for p in params]
    for t, g in zip(ts, grads):
        t.grad = torch.tensor(g)
    if name == "sgd":
        opt = torch.optim.SGD(ts, lr=LR, momentum=MOMENTUM, foreach=True)
    else:
        opt = torch.optim.Adam(ts, lr=LR, foreach=True)
    return opt.step, ts


def _check(what, core_ps, ref):
    check_close(what, [(f"parameter {i}", p.data(), r) for i, (p, r) in
                       enumerate(zip(core_ps, ref))], rtol=1e-4, atol=1e-6)


def run(opts: Options) -> list[Row]:
    from core import cpu_kernels
    from core.optimizer import _cpu

    reps = opts.reps(opts.repeats, 3)
    number = 10 if opts.quick else 50
    torch = opts.torch
    rows = []
    for model in ("mlp", "cnn"):
        params, grads = _params(model)
        for name in ("sgd", "adam"):
            label = f"{model} {name}{' momentum' if name == 'sgd' else ''}"
            kernel_step, kernel_ps = core_trainer(params, grads, name)
            twin_step, twin_ps = core_trainer(params, grads, name)

            serial_step, serial_ps = core_trainer(params, grads, name)

            def twin(step=twin_step):
                with cpu_kernels.disabled():
                    step()

            def serial(step=serial_step):  # every tensor on the serial kernel
                before, _cpu.PARALLEL_MIN = _cpu.PARALLEL_MIN, float("inf")
                try:
                    step()
                finally:
                    _cpu.PARALLEL_MIN = before

            for _ in range(2):  # compare after two steps (momentum, moments in use)
                kernel_step()
                twin()
                serial()
            for ps in (kernel_ps, serial_ps):
                _check(f"optimizer {label}: kernels vs twins", ps,
                       [p.data().asnumpy() for p in twin_ps])
            t = median_times({"kernel": kernel_step, "serial": serial, "twin": twin},
                             number=number, repeats=reps)
            rows.append(Row(f"{label:17s} core Trainer.step", t["kernel"], unit="step"))
            rows.append(Row(f"{label:17s} core Trainer.step, serial kernels", t["serial"],
                            unit="step"))
            rows.append(Row(f"{label:17s} core Trainer.step, NumPy twins", t["twin"],
                            unit="step"))
            if torch is not None:
                # Timed on its own (torch's OpenMP threads spin after parallel regions).
                t_step, t_ps = torch_optimizer(torch, params, grads, name)
                ref_step, ref_ps = core_trainer(params, grads, name)
                for _ in range(2):
                    t_step()
                    ref_step()
                _check(f"optimizer {label}: core vs torch", ref_ps,
                       [p.detach().numpy() for p in t_ps])
                t_torch = median_time(t_step, number=number, repeats=reps)
                rows.append(Row(f"{label:17s} torch.optim foreach", t_torch, unit="step"))
                rows.append(Row(f"{label:17s} ratio core/torch",
                                ratio=t["kernel"] / t_torch))
    return rows


if __name__ == "__main__":
    from .common import import_torch

    for r in run(Options(torch=import_torch())):
        print(f"  {r.label:52s}  {r.value():>14s}{r.note()}")
