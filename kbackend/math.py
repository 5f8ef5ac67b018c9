"""Keras backend ``math`` on core's operators (gradients flow through autograd).

Segment reductions are written with a (segments, rows) membership mask, so they are
plain differentiable core ops. The FFT family and stft/istft are not implemented
yet (``_NOT_YET``: they raise NotImplementedError naming the function).
"""
from __future__ import annotations

import numpy as _np
from keras.src.backend import config
from keras.src.backend.common import dtypes, standardize_dtype

from core import nd
from core import np as cnp
from kbackend._missing import add_stubs
from kbackend.core import cast, convert_to_numpy, convert_to_tensor


def _float(x):
    x = convert_to_tensor(x)
    dtype = standardize_dtype(x.dtype)
    if "int" in dtype or dtype == "bool":
        x = cast(x, config.floatx())
    return x


def _segment(data, segment_ids, num_segments, kind):
    data = convert_to_tensor(data)
    ids = convert_to_tensor(segment_ids)
    if num_segments is None:
        num_segments = int(_np.max(convert_to_numpy(ids))) + 1
    num_segments = int(num_segments)
    ids = cast(ids, "int32")
    # mask[s, n]: row n belongs to segment s (rows with id -1 belong to none).
    seg = cnp.arange(num_segments, dtype="int32")
    mask = cnp.equal(cnp.reshape(seg, (num_segments, 1)),
                     cnp.reshape(ids, (1, ids.shape[0])))
    rest = tuple(data.shape[1:])
    if kind == "sum":
        flat = cnp.reshape(data, (data.shape[0], -1))
        out = cnp.matmul(cast(mask, flat.dtype), flat)
        return cnp.reshape(out, (num_segments,) + rest)
    mask = cnp.reshape(mask, (num_segments, ids.shape[0]) + (1,) * len(rest))
    expanded = cnp.expand_dims(data, 0)
    dtype = standardize_dtype(data.dtype)
    if kind == "prod":
        one = convert_to_tensor(1, dtype)
        return cnp.prod(cnp.where(mask, expanded, one), axis=1)
    if "float" in dtype:
        big = float("inf")
    elif dtype == "bool":
        big = True
    else:
        big = int(_np.iinfo(dtype).max)
    if kind == "max":
        fill = convert_to_tensor(-big if dtype != "bool" else False, dtype)
        if "int" in dtype and not dtype.startswith("u"):
            fill = convert_to_tensor(int(_np.iinfo(dtype).min), dtype)
        elif dtype.startswith("u"):
            fill = convert_to_tensor(0, dtype)
        return cnp.max(cnp.where(mask, expanded, fill), axis=1)
    fill = convert_to_tensor(big, dtype)
    return cnp.min(cnp.where(mask, expanded, fill), axis=1)


def segment_sum(data, segment_ids, num_segments=None, sorted=False):
    return _segment(data, segment_ids, num_segments, "sum")


def segment_max(data, segment_ids, num_segments=None, sorted=False):
    return _segment(data, segment_ids, num_segments, "max")


def segment_min(data, segment_ids, num_segments=None, sorted=False):
    return _segment(data, segment_ids, num_segments, "min")


def segment_prod(data, segment_ids, num_segments=None, sorted=False):
    return _segment(data, segment_ids, num_segments, "prod")


def top_k(x, k, sorted=True):
    x = convert_to_tensor(x)
    dtype = standardize_dtype(x.dtype)
    work = x if "float" in dtype else cast(x, "float64")
    values, indices = nd.topk(work, axis=-1, k=int(k), ret_typ="both", is_ascend=False)
    if work is not x:
        values = cast(values, dtype)
    return values, cast(indices, "int32")


def in_top_k(targets, predictions, k):
    targets = cast(convert_to_tensor(targets), "int32")
    predictions = _float(predictions)
    onehot = nd.one_hot(targets, predictions.shape[-1], dtype=standardize_dtype(
        predictions.dtype))
    target_values = cnp.sum(predictions * onehot, axis=-1, keepdims=True)
    kth = top_k(predictions, k)[0][..., -1:]
    return cnp.any(target_values >= kth, axis=-1)


def logsumexp(x, axis=None, keepdims=False):
    x = _float(x)
    if isinstance(axis, list):
        axis = tuple(axis)
    return cnp.logsumexp(x, axis=axis, keepdims=keepdims)


def cdist(x, y):
    x = _float(x)
    y = _float(y)
    if x.ndim < 2 or y.ndim < 2:
        raise ValueError("`cdist` inputs must have rank >= 2")
    if x.shape[-1] != y.shape[-1]:
        raise ValueError("Last dimension of inputs to `cdist` must match")
    diff = cnp.expand_dims(x, -2) - cnp.expand_dims(y, -3)
    return cnp.sqrt(cnp.sum(diff * diff, axis=-1))


def extract_sequences(x, sequence_length, sequence_stride):
    x = convert_to_tensor(x)
    length, stride = int(sequence_length), int(sequence_stride)
    frames = (x.shape[-1] - (length - stride)) // stride
    if frames < 1:
        raise ValueError(f"extract_sequences: input length {x.shape[-1]} is shorter "
                         f"than sequence_length={length}")
    parts = [x[..., i * stride:i * stride + length] for i in range(frames)]
    return cnp.stack(parts, axis=-2)


def rsqrt(x):
    return nd.rsqrt(_float(x))


def erf(x):
    return nd.erf(_float(x))


def erfc(x):
    x = _float(x)
    return convert_to_tensor(1.0, standardize_dtype(x.dtype)) - nd.erf(x)


def erfinv(x):
    return nd.erfinv(_float(x))


def logdet(x):
    x = _float(x)
    return cnp.linalg.slogdet(x)[1]


_NOT_YET = ["fft", "fft2", "ifft2", "rfft", "irfft", "stft", "istft"]
add_stubs(globals(), "math", _NOT_YET)
