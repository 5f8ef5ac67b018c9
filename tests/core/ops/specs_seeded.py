"""Rows for the seeded sampling operator (``core/ops/seeded.py``).

The operator is a pure function of its seed, so its values are checked against
NumPy's generator seeded the same way (and are the same on every call).
"""
import numpy as np

from core.ops.registry import F

from .op_db import OpSpec, Sample


def _ref(seed, dist="normal", shape=(), dtype="float32", a=0.0, b=1.0):
    rng = np.random.default_rng((np.asarray(seed).astype("int64") & 0xFFFFFFFF).tolist())
    if dist == "normal":
        out = rng.normal(size=shape, loc=a, scale=b)
    elif dist == "uniform":
        out = rng.uniform(size=shape, low=a, high=b)
    elif dist == "randint":
        out = rng.integers(low=a, high=b, size=shape)
    elif dist == "truncated_normal":
        draws = rng.normal(size=2 * int(np.prod(shape)) + 16)
        out = draws[np.abs(draws) <= 2.0][:int(np.prod(shape))].reshape(shape) * b + a
    else:
        mask = rng.uniform(size=b) < 1 - a
        out = np.broadcast_to(mask, shape) / (1 - a)
    return np.asarray(out).astype(dtype)


def _samples(rng, dtype):
    seed = np.array([7, -3], dtype=dtype)
    return [Sample(seed, dist="normal", shape=(3, 4), a=1.0, b=2.0),
            Sample(seed, dist="uniform", shape=(5,), dtype="float64", a=-1.0, b=1.0),
            Sample(seed, dist="randint", shape=(2, 3), dtype="int32", a=0, b=10),
            Sample(seed, dist="truncated_normal", shape=(4, 2), a=0.0, b=0.5),
            Sample(seed, dist="dropout_scale", shape=(3, 4), a=0.25, b=(3, 1))]


SPECS = [
    OpSpec("_seeded_random", F._seeded_random, _ref, _samples, dtypes=("int32", "int64"),
           grad=False),
]
