"""Rows for the storage operators: ``cast_storage`` (dense values in graphs) and
``_square_sum`` (MXNet's sum of squares)."""
import numpy as np

from core import nd

from .op_db import OpSpec, Sample, rand


def _square_sum_samples(rng, d):
    x = rand(rng, (3, 4), d)
    return [Sample(x, axis=1, keepdims=True), Sample(x, axis=0), Sample(x)]


def _square_sum_ref(x, axis=None, keepdims=False):
    return np.sum(x * x, axis=axis, keepdims=keepdims).astype(x.dtype)


def _cast_samples(rng, d):
    return [Sample(rand(rng, (3, 4), d), stype="default")]


def _retain_samples(rng, d):
    x = rand(rng, (5, 3), d)
    return [Sample(x, np.array([3, 0], np.float32), diff=[0]),
            Sample(x, np.array([4], np.float32), diff=[0])]


def _retain_ref(x, idx):
    out = np.zeros_like(x)
    rows = idx.astype(np.int64)
    out[rows] = x[rows]
    return out


SPECS = [
    OpSpec("_sparse_retain", lambda x, i: nd._sparse_retain(x, i), _retain_ref,
           _retain_samples),
    OpSpec("_square_sum", lambda x, **k: nd._internal._square_sum(x, **k)
           if hasattr(nd._internal, "_square_sum") else nd._square_sum(x, **k),
           _square_sum_ref, _square_sum_samples, rtol=1e-4),
    OpSpec("cast_storage", lambda x, **k: nd.cast_storage(x, **k), lambda x, **k: x.copy(),
           _cast_samples),
]
