"""Lazy access to CuPy: nothing here imports CuPy until a GPU context is used."""
from __future__ import annotations

import functools

_cupy = None
_cupy_error: Exception | None = None


def get_cupy():
    """Return the ``cupy`` module, importing it on first use.

    Raises:
        RuntimeError: if CuPy is not installed or cannot initialise; the message
            says how to install the GPU extra.
    """
    global _cupy, _cupy_error
    if _cupy is not None:
        return _cupy
    if _cupy_error is None:
        try:
            import cupy

            _cupy = cupy
            return cupy
        except Exception as e:  # noqa: BLE001 - ImportError, or a broken CUDA install
            _cupy_error = e
    raise RuntimeError(
        f"a GPU context needs CuPy, which could not be imported ({_cupy_error}); "
        'install the GPU extra with: pip install -e ".[gpu]"'
    )


@functools.cache
def gpu_count() -> int:
    """Number of visible CUDA devices; 0 when CuPy or a GPU is missing (never raises)."""
    try:
        cp = get_cupy()
        return int(cp.cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001 - "no GPU" must never be an error
        return 0


@functools.cache
def elementwise(in_params: str, out_params: str, body: str, name: str, preamble: str = ""):
    """A memoized ``cupy.ElementwiseKernel``; built on first use."""
    return get_cupy().ElementwiseKernel(in_params, out_params, body, name, preamble=preamble)


@functools.cache
def special(xp):
    """The special-function module for an array module (scipy.special or cupyx's)."""
    import numpy

    if xp is numpy:
        import scipy.special

        return scipy.special
    import cupyx.scipy.special

    return cupyx.scipy.special
