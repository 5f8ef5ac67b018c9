"""Keras backend ``random``: stateless draws seeded through Keras' SeedGenerator.

For this first increment the samples come from NumPy's generator seeded with
Keras' seed (as Keras' numpy backend does) and are then moved into core arrays;
core's own per-context generator comes later. ``normal``, ``uniform``,
``randint``, ``truncated_normal``, ``dropout`` and ``shuffle`` are implemented; the
rest (``_NOT_YET``) raise NotImplementedError naming the function.
"""
from __future__ import annotations

import numpy
from keras.src.backend.config import floatx

# SeedGenerator and make_default_seed are part of a backend random module's names.
from keras.src.random.seed_generator import (  # noqa: F401
    SeedGenerator,
    draw_seed,
    make_default_seed,
)

from kbackend._missing import add_stubs
from kbackend.core import convert_to_numpy, convert_to_tensor


def _rng(seed):
    seed = convert_to_numpy(draw_seed(seed)).astype("int64") & 0xFFFFFFFF
    return numpy.random.default_rng(seed.tolist())


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    dtype = dtype or floatx()
    out = _rng(seed).normal(size=shape, loc=mean, scale=stddev)
    return convert_to_tensor(out, dtype)


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    dtype = dtype or floatx()
    out = _rng(seed).uniform(size=shape, low=minval, high=maxval)
    return convert_to_tensor(out, dtype)


def randint(shape, minval, maxval, dtype="int32", seed=None):
    out = _rng(seed).integers(low=minval, high=maxval, size=shape)
    return convert_to_tensor(out, dtype)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    dtype = dtype or floatx()
    rng = _rng(seed)
    size = int(numpy.prod(shape))
    out = numpy.empty(0)
    while out.size < size:  # Resample beyond two standard deviations.
        draw = rng.normal(size=2 * size + 16)
        out = numpy.concatenate([out, draw[numpy.abs(draw) <= 2.0]])
    out = out[:size].reshape(shape) * stddev + mean
    return convert_to_tensor(out, dtype)


def dropout(inputs, rate, noise_shape=None, seed=None):
    inputs = convert_to_tensor(inputs)
    if rate == 0.0:
        return inputs
    if rate == 1.0:
        return inputs * 0
    keep_prob = 1.0 - rate
    if noise_shape is None:
        noise_shape = inputs.shape
    else:
        noise_shape = [n if n is not None else inputs.shape[i]
                       for i, n in enumerate(noise_shape)]
    mask = _rng(seed).uniform(size=noise_shape) < keep_prob
    scale = numpy.broadcast_to(mask, inputs.shape) / keep_prob
    return inputs * convert_to_tensor(scale, inputs.dtype)


def shuffle(x, axis=0, seed=None):
    x = convert_to_tensor(x)
    perm = _rng(seed).permutation(x.shape[axis])
    from core import np as cnp

    return cnp.take(x, convert_to_tensor(perm, "int64"), axis=axis)


_NOT_YET = ["categorical", "gamma", "binomial", "beta"]
add_stubs(globals(), "random", _NOT_YET)
