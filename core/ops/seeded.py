"""Seeded sampling: random values as a pure function of a seed array.

``_seeded_random(seed, dist=..., shape=..., dtype=..., a=..., b=...)`` draws from
NumPy's ``default_rng`` seeded with the (two-element, integer) ``seed`` array taken
modulo 2**32: the same seed gives the same values, on every run and in every graph.
Keras' random functions (kbackend) are built on it, so a traced Keras step that
draws (Dropout, GaussianNoise) captures the draw as a graph node whose seed comes
from Keras' ``SeedGenerator`` state, itself updated by the graph.

Distributions (``dist``): ``"normal"`` (``a`` = mean, ``b`` = stddev), ``"uniform"``
(``[a, b)``), ``"randint"`` (integers in ``[a, b)``), ``"truncated_normal"`` (normal
redrawn beyond two standard deviations, then ``* b + a``), ``"dropout_scale"`` (the
scale that dropout multiplies by: ``(u < 1 - a) / (1 - a)`` for ``u`` uniform of
``noise_shape`` = ``b``, broadcast to ``shape``).
"""
from __future__ import annotations

import numpy

from ..dtypes import as_dtype
from .infer import fmt
from .registry import Aval, defop

_DISTS = ("normal", "uniform", "randint", "truncated_normal", "dropout_scale")


def _infer(seed, dist="normal", shape=(), dtype="float32", a=0.0, b=1.0):
    if dist not in _DISTS:
        raise ValueError(f"_seeded_random: dist must be one of {_DISTS}, got {dist!r}")
    if seed.dtype.kind not in "iu" or seed.ndim != 1:
        raise TypeError(f"_seeded_random: the seed must be a 1-D integer array, got "
                        f"{fmt([seed])}")
    return Aval(tuple(int(d) for d in shape), as_dtype(dtype, "_seeded_random"))


def _generator(xp, seed):
    raw = seed if xp is numpy else seed.get()
    s = numpy.asarray(raw).astype("int64") & 0xFFFFFFFF
    return numpy.random.default_rng(s.tolist())


@defop("_seeded_random", infer=_infer, inputs=("seed",),
       attrs={"dist": "normal", "shape": (), "dtype": "float32", "a": 0.0, "b": 1.0},
       differentiable=False, save=False)
def _seeded_random(xp, seed, dist="normal", shape=(), dtype="float32", a=0.0, b=1.0):
    """Samples of ``dist`` drawn from a generator seeded with ``seed``."""
    rng = _generator(xp, seed)
    shape = tuple(int(d) for d in shape)
    if dist == "normal":
        out = rng.normal(size=shape, loc=a, scale=b)
    elif dist == "uniform":
        out = rng.uniform(size=shape, low=a, high=b)
    elif dist == "randint":
        out = rng.integers(low=a, high=b, size=shape)
    elif dist == "truncated_normal":
        size = int(numpy.prod(shape))
        out = numpy.empty(0)
        while out.size < size:
            draw = rng.normal(size=2 * size + 16)
            out = numpy.concatenate([out, draw[numpy.abs(draw) <= 2.0]])
        out = out[:size].reshape(shape) * b + a
    else:  # dropout_scale
        keep = 1.0 - a
        mask = rng.uniform(size=tuple(int(d) for d in b)) < keep
        out = numpy.broadcast_to(mask, shape) / keep
    return xp.asarray(numpy.asarray(out).astype(as_dtype(dtype, "_seeded_random")))
