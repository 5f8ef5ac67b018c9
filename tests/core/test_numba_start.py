"""numba's start (core.cpu_kernels.ready): with KBACKEND_NUMBA_BACKGROUND=1 the first
training steps run the kernels' bit-identical twins while it starts in the background,
so results do not depend on when it is up."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from core import cpu_kernels

pytestmark = pytest.mark.skipif(not cpu_kernels.enabled(), reason="numba kernels are off")

_STEPS = """
import json, sys, time
import numpy as np
from core import autograd, cpu_kernels, nd
from gluon import Trainer, nn
first_ready = cpu_kernels.ready()  # starts numba in the background (=1), or now
net = nn.HybridSequential()
net.add(nn.Dense(32, activation="relu", in_units=16), nn.Dense(4, in_units=32))
net.initialize()
for p in net.collect_params().values():
    p.set_data(nd.array(np.random.default_rng(p.shape[0]).standard_normal(p.shape)
                        .astype(np.float32) * 0.3))
net.hybridize()
trainer = Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
x = nd.array(np.random.default_rng(7).standard_normal((64, 16)).astype(np.float32))
losses = []
t0 = time.perf_counter()
for i in range(12):
    with autograd.record():
        loss = (net(x) ** 2).mean()
    loss.backward()
    trainer.step(1)
    losses.append(float(loss.asscalar()))
    if i == 0:
        first_s = time.perf_counter() - t0
cpu_kernels.wait_ready()
for i in range(3):
    with autograd.record():
        loss = (net(x) ** 2).mean()
    loss.backward()
    trainer.step(1)
    losses.append(float(loss.asscalar()))
w = [p.data().asnumpy().tobytes().hex() for p in net.collect_params().values()]
print(json.dumps({"first_ready": first_ready, "ready": cpu_kernels.ready(),
                  "losses": losses, "weights": w, "first_s": first_s}))
"""


def _run(background: str) -> dict:
    env = dict(os.environ, KBACKEND_NUMBA_BACKGROUND=background, KBACKEND_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", _STEPS], env=env, capture_output=True,
                         text=True, timeout=600, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_training_is_the_same_whether_numba_starts_in_the_background_or_first():
    bg, fg = _run("1"), _run("0")
    assert bg["first_ready"] is False and fg["first_ready"] is True
    assert bg["ready"] is True and fg["ready"] is True
    assert bg["losses"] == fg["losses"]  # bit for bit: the twins equal the kernels
    assert bg["weights"] == fg["weights"]


def test_wait_ready_and_ready_in_this_process():
    assert cpu_kernels.wait_ready() is True  # tests/conftest.py started it already
    assert cpu_kernels.ready() is True
    with cpu_kernels.disabled():
        assert cpu_kernels.ready() is False  # the twins run


@pytest.mark.parametrize(("given", "want"), [(None, "0"), ("5000", "5000")])
def test_openmp_teams_do_not_spin_unless_the_user_says_so(given, want):
    """numba's OpenMP team sleeps after a parallel region (GOMP_SPINCOUNT=0, set before
    numba loads the OpenMP runtime), so it leaves the cores to BLAS's threads."""
    env = {k: v for k, v in os.environ.items() if k != "GOMP_SPINCOUNT"}
    if given is not None:
        env["GOMP_SPINCOUNT"] = given
    code = ("import os, core; core.cpu_kernels.wait_ready(); "
            "print(os.environ.get('GOMP_SPINCOUNT'))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=300, check=True)
    assert out.stdout.strip().splitlines()[-1] == want



_ACT_FIRST = """
import json
import numpy as np
from core import autograd, cpu_kernels, nd
x = nd.array(np.linspace(-2, 2, 4096, dtype=np.float32))
x.attach_grad()
for _ in range(2):
    with autograd.record():
        y = nd.relu(x)
    y.backward()  # the relu gradient, with no other kernel in this process
first = x.grad.asnumpy().tolist()
started = bool(cpu_kernels._state["ready"] or cpu_kernels._state["warming"])
cpu_kernels.wait_ready()
with autograd.record():
    y = nd.relu(x)
y.backward()  # now the kernel runs
print(json.dumps({"started": started, "up": cpu_kernels.up(),
                  "same": x.grad.asnumpy().tolist() == first}))
"""


def test_activation_gradients_never_start_numba():
    """The one-pass activation gradients run their twins until something else starts
    numba, so an imperative step that needs no other kernel never pays its start."""
    env = dict(os.environ, KBACKEND_NUMBA_BACKGROUND="0", KBACKEND_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", _ACT_FIRST], env=env, capture_output=True,
                         text=True, timeout=600, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res == {"started": False, "up": True, "same": True}
