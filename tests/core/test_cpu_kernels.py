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
