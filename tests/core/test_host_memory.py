"""core.host_memory: glibc's malloc tuned at import, and the ways to leave it alone."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import core
from core import host_memory

GLIBC = sys.platform.startswith("linux") and os.confstr("CS_GNU_LIBC_VERSION") is not None


def _tuned_in_child(env_extra: dict) -> str:
    env = {k: v for k, v in os.environ.items()
           if k not in ("KBACKEND_MALLOC_TUNING", "MALLOC_MMAP_THRESHOLD_",
                        "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")}
    env.update(env_extra)
    out = subprocess.run([sys.executable, "-c", "import core; print(core.host_memory.tuned())"],
                         env=env, capture_output=True, text=True, timeout=120, check=True)
    return out.stdout.strip()


@pytest.mark.skipif(not GLIBC, reason="malloc tuning applies to glibc only")
def test_import_core_tunes_malloc():
    assert core.host_memory.tuned() is True
    assert host_memory.tune() is True  # idempotent


@pytest.mark.skipif(not GLIBC, reason="malloc tuning applies to glibc only")
@pytest.mark.parametrize(("env", "want"), [
    ({}, "True"),
    ({"KBACKEND_MALLOC_TUNING": "0"}, "False"),
    ({"MALLOC_TRIM_THRESHOLD_": "131072"}, "False"),  # the user's own glibc setting wins
])
def test_opt_out_and_user_settings(env, want):
    assert _tuned_in_child(env) == want


_STEP_FAULTS = """
import resource
from core import autograd, nd
from gluon import Trainer, nn
from gluon.loss import SoftmaxCrossEntropyLoss
net = nn.HybridSequential()
net.add(nn.Conv2D(20, 5, activation="relu"), nn.MaxPool2D(2, 2),
        nn.Conv2D(50, 5, activation="relu"), nn.MaxPool2D(2, 2),
        nn.Dense(500, activation="relu"), nn.Dense(10))
net.initialize()
net.hybridize()
loss_fn = SoftmaxCrossEntropyLoss()
trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
x = nd.random.uniform(shape=(32, 1, 28, 28))
y = nd.array([i % 10 for i in range(32)])
def step():
    with autograd.record():
        loss = loss_fn(net(x), y)
    loss.backward()
    trainer.step(32)
for _ in range(3):
    step()
f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    step()
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / 5)
"""


@pytest.mark.skipif(not GLIBC, reason="malloc tuning applies to glibc only")
def test_training_steps_reuse_memory_without_page_faults():
    """A hybridized LeNet step faults in no fresh pages once warm (with glibc's defaults
    about a thousand per step: activations and gradients mmapped and unmapped)."""
    env = {k: v for k, v in os.environ.items() if k != "KBACKEND_MALLOC_TUNING"}

    def faults(tuning):
        out = subprocess.run([sys.executable, "-c", _STEP_FAULTS],
                             env=dict(env, KBACKEND_MALLOC_TUNING=tuning, KBACKEND_NUM_THREADS="1"),
                             capture_output=True, text=True, timeout=300, check=True)
        return float(out.stdout.strip().splitlines()[-1])

    # (glibc's defaults fault about a thousand pages per step here, but how many depends
    # on its adaptive thresholds' history: only the tuned count is asserted)
    tuned = faults("1")
    assert tuned < 50, f"{tuned} page faults per step with the tuning"
