"""Keras backend ``random``: stateless draws seeded through Keras' SeedGenerator.

The samples come from NumPy's generator seeded with Keras' seed (as Keras' numpy
backend does), so the same seed gives the same values, and are then moved into
core arrays; core's own per-context generator comes later. Float results follow
``dtype`` (default floatx); ``categorical`` gives integers of ``dtype``.
"""
from __future__ import annotations

import numpy
from keras.src.backend.common import standardize_dtype
from keras.src.backend.config import floatx

# SeedGenerator and make_default_seed are part of a backend random module's names.
from keras.src.random.seed_generator import (  # noqa: F401
    SeedGenerator,
    draw_seed,
    make_default_seed,
)

from kbackend.core import convert_to_numpy, convert_to_tensor


def _rng(seed):
    seed = convert_to_numpy(draw_seed(seed)).astype("int64") & 0xFFFFFFFF
    return numpy.random.default_rng(seed.tolist())


def _seeded(seed, dist, shape, dtype, a, b):
    """A draw through core's ``_seeded_random`` operator: a pure function of Keras' seed
    tensor, so a traced step (jit_compile) records it instead of reading the seed."""
    from core.ops.registry import F

    return F._seeded_random(convert_to_tensor(draw_seed(seed)), dist=dist,
                            shape=tuple(int(d) for d in shape),
                            dtype=standardize_dtype(dtype), a=a, b=b)


def _numbers(*values) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Samples from a normal distribution (seeded by Keras' seed)."""
    dtype = dtype or floatx()
    if _numbers(mean, stddev):
        return _seeded(seed, "normal", shape, dtype, float(mean), float(stddev))
    out = _rng(seed).normal(size=shape, loc=mean, scale=stddev)
    return convert_to_tensor(out, dtype)


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """Samples from the uniform distribution on ``[minval, maxval)``."""
    dtype = dtype or floatx()
    if _numbers(minval, maxval):
        return _seeded(seed, "uniform", shape, dtype, float(minval), float(maxval))
    out = _rng(seed).uniform(size=shape, low=minval, high=maxval)
    return convert_to_tensor(out, dtype)


def randint(shape, minval, maxval, dtype="int32", seed=None):
    """Integers drawn uniformly from ``[minval, maxval)``."""
    if _numbers(minval, maxval):
        return _seeded(seed, "randint", shape, dtype, minval, maxval)
    out = _rng(seed).integers(low=minval, high=maxval, size=shape)
    return convert_to_tensor(out, dtype)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Normal samples redrawn beyond two standard deviations."""
    dtype = dtype or floatx()
    if _numbers(mean, stddev):
        return _seeded(seed, "truncated_normal", shape, dtype, float(mean), float(stddev))
    rng = _rng(seed)
    size = int(numpy.prod(shape))
    out = numpy.empty(0)
    while out.size < size:  # Resample beyond two standard deviations.
        draw = rng.normal(size=2 * size + 16)
        out = numpy.concatenate([out, draw[numpy.abs(draw) <= 2.0]])
    out = out[:size].reshape(shape) * stddev + mean
    return convert_to_tensor(out, dtype)


def dropout(inputs, rate, noise_shape=None, seed=None):
    """Zeroes entries with probability ``rate`` and scales the rest by ``1/(1-rate)``."""
    inputs = convert_to_tensor(inputs)
    if rate == 0.0:
        return inputs
    if rate == 1.0:
        return inputs * 0
    if noise_shape is None:
        noise_shape = inputs.shape
    else:
        noise_shape = [n if n is not None else inputs.shape[i]
                       for i, n in enumerate(noise_shape)]
    if _numbers(rate):
        scale = _seeded(seed, "dropout_scale", inputs.shape, inputs.dtype, float(rate),
                        tuple(int(n) for n in noise_shape))
        return inputs * scale
    keep_prob = 1.0 - rate
    mask = _rng(seed).uniform(size=noise_shape) < keep_prob
    scale = numpy.broadcast_to(mask, inputs.shape) / keep_prob
    return inputs * convert_to_tensor(scale, inputs.dtype)


def shuffle(x, axis=0, seed=None):
    """``x`` with its entries permuted along ``axis``."""
    x = convert_to_tensor(x)
    perm = _rng(seed).permutation(x.shape[axis])
    from core import np as cnp

    return cnp.take(x, convert_to_tensor(perm, "int64"), axis=axis)


def _float_dtype(dtype, what: str) -> str:
    dtype = standardize_dtype(dtype or floatx())
    if "float" not in dtype:
        raise ValueError(f"random.{what}: `dtype` must be a floating point type, got "
                         f"{dtype!r}")
    return dtype


def _param(value, what: str, name: str):
    """A distribution parameter (Python number, array or tensor) as float64 NumPy."""
    try:
        return numpy.asarray(convert_to_numpy(value), dtype="float64")
    except (TypeError, ValueError) as e:
        raise TypeError(f"random.{what}: `{name}` must be a number or a numeric "
                        f"tensor, got {type(value).__name__} ({e})") from None


def categorical(logits, num_samples, dtype="int32", seed=None):
    """Draw ``num_samples`` class indices per row of ``logits`` (batch, classes).

    Args:
        logits: unnormalised log-probabilities, shape ``(batch, classes)``.
        num_samples: samples per row.
        dtype: the integer dtype of the result.
        seed: a Python int or a Keras ``SeedGenerator``.

    Returns:
        An integer tensor of shape ``(batch, num_samples)``.
    """
    dtype = standardize_dtype(dtype)
    logits = _param(logits, "categorical", "logits")
    if logits.ndim != 2:
        raise ValueError("random.categorical: `logits` should be a 2-D tensor with shape "
                         f"[batch_size, num_classes]. Received shape {logits.shape}")
    num_samples = int(num_samples)
    # Inverse-CDF sampling on the softmax, row by row (stable for huge logits).
    shifted = logits - numpy.max(logits, axis=-1, keepdims=True)
    probs = numpy.exp(shifted)
    cdf = numpy.cumsum(probs, axis=-1)
    cdf /= cdf[:, -1:]
    draws = _rng(seed).uniform(size=(logits.shape[0], num_samples))
    out = numpy.stack([numpy.searchsorted(row, d, side="right")
                       for row, d in zip(cdf, draws)]) if logits.shape[0] else \
        numpy.zeros((0, num_samples), "int64")
    out = numpy.minimum(out, logits.shape[1] - 1)
    return convert_to_tensor(out.reshape(logits.shape[0], num_samples), dtype)


def gamma(shape, alpha, dtype=None, seed=None):
    """Samples from Gamma(alpha, scale=1).

    Args:
        shape: the output shape.
        alpha: the shape parameter (a number or an array broadcastable to ``shape``).
        dtype: a float dtype (default floatx).
        seed: a Python int or a Keras ``SeedGenerator``.

    Returns:
        A float tensor of ``shape``.
    """
    dtype = _float_dtype(dtype, "gamma")
    alpha = _param(alpha, "gamma", "alpha")
    out = _rng(seed).gamma(alpha, scale=1.0, size=tuple(shape))
    return convert_to_tensor(out, dtype)


def binomial(shape, counts, probabilities, dtype=None, seed=None):
    """Samples from Binomial(counts, probabilities), as floats.

    Args:
        shape: the output shape.
        counts: trial counts (a number or an array broadcastable to ``shape``).
        probabilities: success probabilities, broadcastable with ``counts``.
        dtype: a float dtype (default floatx).
        seed: a Python int or a Keras ``SeedGenerator``.

    Returns:
        A float tensor of ``shape`` holding success counts.
    """
    dtype = _float_dtype(dtype, "binomial")
    counts = _param(counts, "binomial", "counts")
    probabilities = _param(probabilities, "binomial", "probabilities")
    out = _rng(seed).binomial(n=counts.astype("int64"), p=probabilities,
                              size=tuple(shape))
    return convert_to_tensor(out, dtype)


def beta(shape, alpha, beta, dtype=None, seed=None):
    """Samples from Beta(alpha, beta).

    Args:
        shape: the output shape.
        alpha: the first parameter, broadcastable with ``beta`` and ``shape``.
        beta: the second parameter.
        dtype: a float dtype (default floatx).
        seed: a Python int or a Keras ``SeedGenerator``.

    Returns:
        A float tensor of ``shape`` with values in [0, 1].
    """
    dtype = _float_dtype(dtype, "beta")
    a = _param(alpha, "beta", "alpha")
    b = _param(beta, "beta", "beta")
    out = _rng(seed).beta(a=a, b=b, size=tuple(shape))
    return convert_to_tensor(out, dtype)
