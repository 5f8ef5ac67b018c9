"""Operators that create arrays: zeros, ones, full, empty, arange, linspace, eye, *_like.

Creation operators have no array inputs; they run on the context given by ``ctx=``
(or the current one). Floating-point results default to float32, as in MXNet.
"""
from __future__ import annotations

import math

import numpy

from ..dtypes import as_dtype
from .registry import Aval, defop


def _shape(name, shape):
    if isinstance(shape, (int, numpy.integer)):
        shape = (int(shape),)
    try:
        shape = tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be an int or a sequence of ints, got {shape!r}") \
            from None
    if any(s < 0 for s in shape):
        raise ValueError(f"{name}: negative dimensions are not allowed, got {shape}")
    return shape


def _dt(name, dtype, default="float32"):
    return as_dtype(default if dtype is None else dtype, name)


def _fill_infer(name):
    def infer(shape=(), dtype=None, **_):
        return Aval(_shape(name, shape), _dt(name, dtype))

    return infer


@defop("zeros", infer=_fill_infer("zeros"), inputs=(), attrs={"shape": (), "dtype": None},
       needs_ctx=True, differentiable=False, nd=("zeros",), np=("zeros",))
def _zeros(xp, shape=(), dtype=None, ctx=None):
    """An array of zeros."""
    return xp.zeros(_shape("zeros", shape), _dt("zeros", dtype))


@defop("ones", infer=_fill_infer("ones"), inputs=(), attrs={"shape": (), "dtype": None},
       needs_ctx=True, differentiable=False, nd=("ones",), np=("ones",))
def _ones(xp, shape=(), dtype=None, ctx=None):
    """An array of ones."""
    return xp.ones(_shape("ones", shape), _dt("ones", dtype))


@defop("empty", infer=_fill_infer("empty"), inputs=(), attrs={"shape": (), "dtype": None},
       needs_ctx=True, differentiable=False, nd=("empty",), np=("empty",))
def _empty(xp, shape=(), dtype=None, ctx=None):
    """An uninitialized array."""
    return xp.empty(_shape("empty", shape), _dt("empty", dtype))


@defop("full", infer=_fill_infer("full"), inputs=(),
       attrs={"shape": (), "fill_value": 0.0, "dtype": None}, needs_ctx=True,
       differentiable=False, nd=("full",), np=("full",))
def _full(xp, shape=(), fill_value=0.0, dtype=None, ctx=None):
    """An array filled with ``fill_value``."""
    return xp.full(_shape("full", shape), fill_value, _dt("full", dtype))


def _arange_len(start, stop, step):
    if step == 0:
        raise ValueError("arange: step must not be 0")
    return max(0, math.ceil((stop - start) / step))


def _arange_infer(start=0, stop=None, step=1, repeat=1, dtype=None, **_):
    if stop is None:
        start, stop = 0, start
    n = _arange_len(start, stop, step) * int(repeat)
    return Aval((n,), _dt("arange", dtype))


@defop("arange", infer=_arange_infer, inputs=(),
       attrs={"start": 0, "stop": None, "step": 1, "repeat": 1, "dtype": None},
       needs_ctx=True, differentiable=False, nd=("arange",), np=("arange",))
def _arange(xp, start=0, stop=None, step=1, repeat=1, dtype=None, ctx=None):
    """Evenly spaced values in [start, stop) (each repeated ``repeat`` times)."""
    if stop is None:
        start, stop = 0, start
    _arange_len(start, stop, step)
    out = xp.arange(start, stop, step).astype(_dt("arange", dtype))
    return xp.repeat(out, int(repeat)) if int(repeat) != 1 else out


def _linspace_infer(start=0.0, stop=1.0, num=50, endpoint=True, dtype=None, **_):
    if int(num) < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    return Aval((int(num),), _dt("linspace", dtype))


@defop("linspace", infer=_linspace_infer, inputs=(),
       attrs={"start": 0.0, "stop": 1.0, "num": 50, "endpoint": True, "dtype": None},
       needs_ctx=True, differentiable=False, nd=("linspace",), np=("linspace",))
def _linspace(xp, start=0.0, stop=1.0, num=50, endpoint=True, dtype=None, ctx=None):
    """``num`` evenly spaced values from start to stop."""
    return xp.linspace(start, stop, int(num), endpoint=endpoint, dtype=_dt("linspace", dtype))


def _eye_infer(N=1, M=None, k=0, dtype=None, **_):
    return Aval((int(N), int(N if M is None or M == 0 else M)), _dt("eye", dtype))


@defop("eye", infer=_eye_infer, inputs=(), attrs={"N": 1, "M": None, "k": 0, "dtype": None},
       needs_ctx=True, differentiable=False, nd=("eye",), np=("eye",))
def _eye(xp, N=1, M=None, k=0, dtype=None, ctx=None):
    """A 2-D array with ones on the k-th diagonal."""
    return xp.eye(int(N), None if M is None or M == 0 else int(M), int(k),
                  dtype=_dt("eye", dtype))


@defop("identity", infer=lambda n=1, dtype=None, **_: Aval((int(n), int(n)), _dt("identity", dtype)),
       inputs=(), attrs={"n": 1, "dtype": None}, needs_ctx=True, differentiable=False,
       np=("identity",))
def _identity(xp, n=1, dtype=None, ctx=None):
    """The n x n identity matrix."""
    return xp.identity(int(n), dtype=_dt("identity", dtype))


def _like_infer(x, dtype=None, **_):
    return Aval(x.shape, x.dtype if dtype is None else as_dtype(dtype, "like"))


@defop("zeros_like", infer=_like_infer, attrs={"dtype": None}, save=False,
       differentiable=False, nd=("zeros_like",), np=("zeros_like",))
def _zeros_like(xp, x, dtype=None):
    """Zeros with the shape (and dtype) of ``x``."""
    return xp.zeros(x.shape, x.dtype if dtype is None else as_dtype(dtype))


@defop("ones_like", infer=_like_infer, attrs={"dtype": None}, save=False,
       differentiable=False, nd=("ones_like",), np=("ones_like",))
def _ones_like(xp, x, dtype=None):
    """Ones with the shape (and dtype) of ``x``."""
    return xp.ones(x.shape, x.dtype if dtype is None else as_dtype(dtype))


@defop("full_like", infer=_like_infer, attrs={"fill_value": 0.0, "dtype": None}, save=False,
       differentiable=False, nd=("full_like",), np=("full_like",))
def _full_like(xp, x, fill_value=0.0, dtype=None):
    """``fill_value`` with the shape (and dtype) of ``x``."""
    return xp.full(x.shape, fill_value, x.dtype if dtype is None else as_dtype(dtype))


@defop("empty_like", infer=_like_infer, attrs={"dtype": None}, save=False,
       differentiable=False, np=("empty_like",))
def _empty_like(xp, x, dtype=None):
    """An uninitialized array with the shape (and dtype) of ``x``."""
    return xp.empty(x.shape, x.dtype if dtype is None else as_dtype(dtype))
