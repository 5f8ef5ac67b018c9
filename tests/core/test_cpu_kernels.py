"""core.cpu_kernels: numba kernels, their switch, their thread knob, the lazy import."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from core import cpu_kernels
from core.cpu_kernels import prange


@cpu_kernels.kernel()
def _square(v):
    return v * v


@cpu_kernels.kernel(parallel=True)
def _sum_of_squares(x, out):
    for i in prange(x.shape[0]):
        out[i] = _square(x[i])


def test_parallel_kernel_calling_a_kernel_matches_numpy():
    x = np.linspace(-3, 3, 1001)
    out = np.empty_like(x)
    _sum_of_squares(x, out)
    np.testing.assert_array_equal(out, x * x)
    assert _sum_of_squares.compiled() is _sum_of_squares.compiled()


@cpu_kernels.kernel()
def _ratio(a, b, out):
    for i in range(a.shape[0]):
        out[i] = a[i] / b[i]


def test_division_by_zero_follows_numpy():
    a, b = np.array([1.0, -1.0, 0.0]), np.zeros(3)
    out = np.empty(3)
    with np.errstate(divide="ignore", invalid="ignore"):
        _ratio(a, b, out)
        np.testing.assert_array_equal(out, a / b)


def test_the_python_function_is_kept_and_runs_as_python():
    x = np.arange(4.0)
    out = np.empty_like(x)
    _sum_of_squares.py_func(x, out)  # prange is range outside numba
    np.testing.assert_array_equal(out, x * x)


def test_disabled_scope_and_set_enabled():
    before = cpu_kernels.enabled()
    try:
        cpu_kernels.set_enabled(True)  # numba is a dependency: it can always be on
        assert cpu_kernels.enabled()
        with cpu_kernels.disabled():
            assert not cpu_kernels.enabled()
        assert cpu_kernels.enabled()
        cpu_kernels.set_enabled(False)
        assert not cpu_kernels.enabled()
    finally:
        cpu_kernels.set_enabled(before)


def test_set_num_threads_checks_its_argument():
    with pytest.raises(ValueError, match=r"set_num_threads: n must be >= 1, got 0"):
        cpu_kernels.set_num_threads(0)


def _fresh(code: str, **env) -> str:
    import os

    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env},
                          capture_output=True, text=True, timeout=120, check=True)
    return proc.stdout.strip()


def test_import_core_does_not_import_numba():
    assert _fresh("import sys, core; print('numba' in sys.modules)") == "False"


def test_environment_switch_and_thread_count():
    out = _fresh("from core import cpu_kernels as c; print(c.enabled(), c.num_threads())",
                 KBACKEND_NUMBA="0", KBACKEND_NUM_THREADS="1")
    assert out == "False 1"


def test_thread_setting_limits_blas():
    code = ("import core, threadpoolctl; "
            "print({i['num_threads'] for i in threadpoolctl.threadpool_info() "
            "if i['user_api'] == 'blas'})")
    assert _fresh(code, KBACKEND_NUM_THREADS="1") == "{1}"


@pytest.mark.slow
@pytest.mark.parametrize("args", [
    ["tests/core/ops/test_op_table.py", "-k", "norm or Norm or dropout or Dropout or rnn or RNN"],
    ["tests/core/test_optimizer.py", "tests/core/test_rnn.py", "tests/gluon/test_trainer.py"],
], ids=["op-table-rows", "optimizers-rnn-trainer"])
def test_kernel_paths_pass_with_the_twins_alone(args):
    # The ops and optimizers that have kernels, tested with numba switched off: the
    # twins stay right (the suite itself runs the same tests with the kernels).
    import os

    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    proc = subprocess.run(cmd, env={**os.environ, "KBACKEND_NUMBA": "0"},
                          capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout.strip().splitlines()[-1], proc.stdout[-500:]
