"""Rows for SequenceMask, SequenceLast and SequenceReverse (core/ops/nn/sequence.py)."""
import numpy as np

from core import nd

from .op_db import OpSpec, Sample, rand

_DT = ("float32", "float64", "int32")


def _lens(n_steps, rng, n, as_float=False):
    v = rng.integers(0, n_steps + 1, size=n)
    v[0] = n_steps  # one full-length sequence
    v[-1] = max(1, v[-1])
    return v.astype(np.float32 if as_float else np.int32)


def _samples(with_value=False):
    """Both axes, with and without lengths; float lengths as MXNet passes them."""
    def samples(rng, d):
        extra = {"value": -1.0} if with_value else {}
        out = [Sample(rand(rng, (4, 3), d)),
               Sample(rand(rng, (4, 3, 2), d), _lens(4, rng, 3), use_sequence_length=True,
                      **extra),
               Sample(rand(rng, (3, 5, 2), d), _lens(5, rng, 3, True), use_sequence_length=True,
                      axis=1, diff=[0]),
               Sample(rand(rng, (2, 4), d), axis=1),
               Sample(rand(rng, (5, 2, 2, 3), d), _lens(5, rng, 2), use_sequence_length=True,
                      axis=-4),
               # lengths ignored without use_sequence_length
               Sample(rand(rng, (3, 2), d), np.array([1, 2], np.int32))]
        return out

    return samples


def _valid(data, lens, axis):
    ax = axis % data.ndim
    t = np.arange(data.shape[ax])
    lens = np.asarray(lens).astype(np.int64)
    keep = t[:, None] < lens[None, :] if ax == 0 else t[None, :] < lens[:, None]
    return keep.reshape(keep.shape + (1,) * (data.ndim - 2)), ax


def _mask_ref(data, sequence_length=None, use_sequence_length=False, value=0.0, axis=0):
    if not use_sequence_length:
        return data.copy()
    keep, _ = _valid(data, sequence_length, axis)
    return np.where(keep, data, value).astype(data.dtype)


def _last_ref(data, sequence_length=None, use_sequence_length=False, axis=0):
    ax = axis % data.ndim
    moved = np.moveaxis(data, ax, 0)  # (T, N, ...)
    if not use_sequence_length:
        return moved[-1].copy()
    # a length-0 sequence gives its first step (MXNet reads out of bounds there)
    return np.stack([moved[max(int(n) - 1, 0), b] for b, n in enumerate(sequence_length)])


def _reverse_ref(data, sequence_length=None, use_sequence_length=False, axis=0):
    ax = axis % data.ndim
    moved = np.moveaxis(data, ax, 0).copy()
    if not use_sequence_length:
        return np.moveaxis(moved[::-1], 0, ax).copy()
    for b, n in enumerate(sequence_length):
        n = int(n)
        moved[:n, b] = moved[:n, b][::-1].copy()
    return np.moveaxis(moved, 0, ax)


SPECS = [
    OpSpec("SequenceMask", nd.SequenceMask, _mask_ref, _samples(with_value=True), dtypes=_DT),
    OpSpec("SequenceLast", nd.SequenceLast, _last_ref, _samples(), dtypes=_DT),
    OpSpec("SequenceReverse", nd.SequenceReverse, _reverse_ref, _samples(), dtypes=_DT),
]
