"""Keras backend ``math`` on core's operators (gradients flow through autograd).

Segment reductions are written with a (segments, rows) membership mask, so they are
plain differentiable core ops. The FFT family works on (real, imag) pairs (core has
no complex dtype): each transform is a linear operator computed by NumPy's (CuPy's)
FFT whose VJP is its adjoint transform, so gradients of any order flow; stft and
istft are framing/overlap-add operators around rfft/irfft.
"""
from __future__ import annotations

import numpy as _np
from keras.src.backend.common import dtypes, standardize_dtype

from core import nd
from core import np as cnp
from core.ops.dispatch import invoke
from core.ops.registry import Aval, OpDef
from kbackend.core import _float, cast, convert_to_numpy, convert_to_tensor


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
    """Sum of the rows of ``data`` in each segment (ids of -1 belong to none)."""
    return _segment(data, segment_ids, num_segments, "sum")


def segment_max(data, segment_ids, num_segments=None, sorted=False):
    """Maximum of the rows of ``data`` in each segment (empty: the dtype's lowest)."""
    return _segment(data, segment_ids, num_segments, "max")


def segment_min(data, segment_ids, num_segments=None, sorted=False):
    """Minimum of the rows of ``data`` in each segment (empty: the dtype's highest)."""
    return _segment(data, segment_ids, num_segments, "min")


def segment_prod(data, segment_ids, num_segments=None, sorted=False):
    """Product of the rows of ``data`` in each segment (empty: 1)."""
    return _segment(data, segment_ids, num_segments, "prod")


def top_k(x, k, sorted=True):
    """The ``k`` largest values along the last axis and their int32 indices."""
    x = convert_to_tensor(x)
    dtype = standardize_dtype(x.dtype)
    work = x if "float" in dtype else cast(x, "float64")
    values, indices = nd.topk(work, axis=-1, k=int(k), ret_typ="both", is_ascend=False)
    if work is not x:
        values = cast(values, dtype)
    return values, cast(indices, "int32")


def in_top_k(targets, predictions, k):
    """Whether each target's prediction is among the row's ``k`` largest."""
    targets = cast(convert_to_tensor(targets), "int32")
    predictions = _float(predictions)
    onehot = nd.one_hot(targets, predictions.shape[-1], dtype=standardize_dtype(
        predictions.dtype))
    target_values = cnp.sum(predictions * onehot, axis=-1, keepdims=True)
    kth = top_k(predictions, k)[0][..., -1:]
    return cnp.any(target_values >= kth, axis=-1)


def logsumexp(x, axis=None, keepdims=False):
    """``log(sum(exp(x)))`` over ``axis``, computed stably."""
    x = _float(x)
    if isinstance(axis, list):
        axis = tuple(axis)
    return cnp.logsumexp(x, axis=axis, keepdims=keepdims)


def cdist(x, y):
    """Euclidean distances between the rows of ``x`` and ``y`` (batched)."""
    x = _float(x)
    y = _float(y)
    if x.ndim < 2 or y.ndim < 2:
        raise ValueError("`cdist` inputs must have rank >= 2")
    if x.shape[-1] != y.shape[-1]:
        raise ValueError("Last dimension of inputs to `cdist` must match")
    diff = cnp.expand_dims(x, -2) - cnp.expand_dims(y, -3)
    return cnp.sqrt(cnp.sum(diff * diff, axis=-1))


def extract_sequences(x, sequence_length, sequence_stride):
    """Frames of ``sequence_length`` every ``sequence_stride`` on the last axis."""
    x = convert_to_tensor(x)
    length, stride = int(sequence_length), int(sequence_stride)
    frames = (x.shape[-1] - (length - stride)) // stride
    if frames < 1:
        raise ValueError(f"extract_sequences: input length {x.shape[-1]} is shorter "
                         f"than sequence_length={length}")
    parts = [x[..., i * stride:i * stride + length] for i in range(frames)]
    return cnp.stack(parts, axis=-2)


def rsqrt(x):
    """``1 / sqrt(x)`` (integers are cast to floatx)."""
    return nd.rsqrt(_float(x))


def _special(fn, x):
    # core's special functions compute half-precision inputs in float64: keep x's dtype.
    x = _float(x)
    dtype = standardize_dtype(x.dtype)
    if dtype in ("float16", "bfloat16"):
        return cast(fn(cast(x, "float32")), dtype)
    return fn(x)


def erf(x):
    """The error function, in ``x``'s float dtype."""
    return _special(nd.erf, x)


def erfc(x):
    """The complementary error function ``1 - erf(x)``."""
    return _special(lambda v: convert_to_tensor(1.0, standardize_dtype(v.dtype)) - nd.erf(v),
                    x)


def erfinv(x):
    """The inverse error function."""
    return _special(nd.erfinv, x)


def logdet(x):
    """``log(det(x))`` of positive-determinant matrices, through slogdet."""
    x = _float(x)
    return cnp.linalg.slogdet(x)[1]


# --------------------------------------------------------------------------- Fourier
# Keras passes complex tensors as (real, imag) pairs, so core needs no complex dtype.
# Each transform is an operator of its own (an unregistered OpDef run through core's
# ``invoke``): NumPy's (or CuPy's) FFT computes it, and since every one is linear its
# VJP is its adjoint, itself one of these operators. Gradients of any order follow.


def _to_complex(xp, re, im):
    out = xp.empty(re.shape, xp.complex64 if re.dtype == xp.float32 else xp.complex128)
    out.real = re
    out.imag = im
    return out


def _split(xp, c, dtype):
    return (xp.ascontiguousarray(c.real, dtype=dtype),
            xp.ascontiguousarray(c.imag, dtype=dtype))


def _fit_last(xp, a, size):
    """``a`` cropped or zero-padded along its last axis to ``size``."""
    have = a.shape[-1]
    if have >= size:
        return a[..., :size]
    pad = xp.zeros(a.shape[:-1] + (size - have,), a.dtype)
    return xp.concatenate([a, pad], axis=-1)


def _linear_op(name, forward, infer, adjoint):
    """An operator whose VJP is ``adjoint(ctx, g)`` (another linear operator's call)."""
    return OpDef(name=name, forward=forward, infer=infer, vjp=adjoint, inputs=(),
                 attrs={}, nd=(), np=(), variadic=False,
                 needs_ctx=False, differentiable=True, save=False, place=None, doc=name)


def _same_pair(name, re, im):
    if re.shape != im.shape or re.dtype != im.dtype:
        raise ValueError(f"{name}: the real and imaginary parts must have one shape and "
                         f"dtype, got {re.shape} {re.dtype} and {im.shape} {im.dtype}")


def _grads(g):
    return g if isinstance(g, tuple) else (g,)


# Complex FFT over the last ``ndim`` axes, times ``scale``.
def _cfft_forward(xp, re, im, *, ndim, inverse, scale):
    axes = tuple(range(-ndim, 0))
    c = _to_complex(xp, re, im)
    out = xp.fft.ifftn(c, axes=axes) if inverse else xp.fft.fftn(c, axes=axes)
    if scale != 1.0:
        out *= scale
    return _split(xp, out, re.dtype)


def _cfft_infer(re, im, *, ndim, inverse, scale):
    _same_pair("fft", re, im)
    if re.ndim < ndim:
        raise ValueError(f"fft: a {ndim}-D transform needs inputs of rank >= {ndim}, "
                         f"got shape {re.shape}")
    return Aval(re.shape, re.dtype), Aval(im.shape, im.dtype)


def _cfft_vjp(ctx, g):
    a = ctx.attrs
    n = int(_np.prod(ctx.in_shapes[0][-a["ndim"]:]))
    # (s * fft)^H = s * n * ifft and (s * ifft)^H = s / n * fft.
    scale = a["scale"] * (1.0 / n if a["inverse"] else float(n))
    return invoke(_CFFT, list(_grads(g)),
                  {"ndim": a["ndim"], "inverse": not a["inverse"], "scale": scale})


_CFFT = _linear_op("kbackend.fft", _cfft_forward, _cfft_infer, _cfft_vjp)


# rfft: a real signal (length L, cropped/zero-padded to n) to n // 2 + 1 bins.
def _rfft_forward(xp, x, *, n):
    return _split(xp, xp.fft.rfft(x, n=n, axis=-1), x.dtype)


def _rfft_infer(x, *, n):
    if x.ndim < 1 or n < 1:
        raise ValueError(f"rfft: needs a rank >= 1 input and fft_length >= 1, got shape "
                         f"{x.shape} and fft_length={n}")
    shape = x.shape[:-1] + (n // 2 + 1,)
    return Aval(shape, x.dtype), Aval(shape, x.dtype)


def _rfft_vjp(ctx, g):
    return (invoke(_RFFT_T, list(_grads(g)),
                   {"n": ctx.attrs["n"], "length": ctx.in_shapes[0][-1]}),)


def _rfft_t_forward(xp, gr, gi, *, n, length):
    """The adjoint of rfft: Re(n * ifft(g zero-extended to n)), fitted to ``length``."""
    full = _fit_last(xp, _to_complex(xp, gr, gi), n)
    y = xp.ascontiguousarray((xp.fft.ifft(full, axis=-1) * n).real, dtype=gr.dtype)
    return _fit_last(xp, y, length)


def _rfft_t_infer(gr, gi, *, n, length):
    _same_pair("rfft (adjoint)", gr, gi)
    return Aval(gr.shape[:-1] + (length,), gr.dtype)


def _rfft_t_vjp(ctx, g):
    return invoke(_RFFT, [g], {"n": ctx.attrs["n"]})


_RFFT = _linear_op("kbackend.rfft", _rfft_forward, _rfft_infer, _rfft_vjp)
_RFFT_T = _linear_op("kbackend.rfft_adjoint", _rfft_t_forward, _rfft_t_infer,
                     _rfft_t_vjp)


# irfft: m bins (cropped/zero-padded to n // 2 + 1) to a real signal of length n.
def _irfft_forward(xp, re, im, *, n):
    out = xp.fft.irfft(_to_complex(xp, re, im), n=n, axis=-1)
    return xp.ascontiguousarray(out, dtype=re.dtype)


def _irfft_infer(re, im, *, n):
    _same_pair("irfft", re, im)
    if re.ndim < 1 or n < 1:
        raise ValueError(f"irfft: needs rank >= 1 inputs and fft_length >= 1, got shape "
                         f"{re.shape} and fft_length={n}")
    return Aval(re.shape[:-1] + (n,), re.dtype)


def _irfft_vjp(ctx, g):
    return invoke(_IRFFT_T, [g], {"n": ctx.attrs["n"], "bins": ctx.in_shapes[0][-1]})


def _irfft_t_forward(xp, g, *, n, bins):
    """The adjoint of irfft: rfft(g) / n, doubled for the bins that appear twice."""
    z = xp.fft.rfft(g, axis=-1)
    w = xp.full(z.shape[-1], 2.0 / n, dtype=g.dtype)
    w[0] = 1.0 / n
    if n % 2 == 0:
        w[-1] = 1.0 / n
    return _split(xp, _fit_last(xp, z * w, bins), g.dtype)


def _irfft_t_infer(g, *, n, bins):
    shape = g.shape[:-1] + (bins,)
    return Aval(shape, g.dtype), Aval(shape, g.dtype)


def _irfft_t_vjp(ctx, g):
    return invoke(_IRFFT, list(_grads(g)), {"n": ctx.attrs["n"]})


_IRFFT = _linear_op("kbackend.irfft", _irfft_forward, _irfft_infer, _irfft_vjp)
_IRFFT_T = _linear_op("kbackend.irfft_adjoint", _irfft_t_forward, _irfft_t_infer,
                      _irfft_t_vjp)


# Framing (``count`` windows of ``length`` every ``stride``) and its adjoint, overlap-add.
def _frame_forward(xp, x, *, length, stride, count):
    idx = (xp.arange(count)[:, None] * stride + xp.arange(length)[None, :])
    return xp.ascontiguousarray(x[..., idx])


def _frame_infer(x, *, length, stride, count):
    if x.ndim < 1 or count < 1 or (count - 1) * stride + length > x.shape[-1]:
        raise ValueError(f"stft: the signal (shape {x.shape}) is shorter than one frame "
                         f"of length {length}")
    return Aval(x.shape[:-1] + (count, length), x.dtype)


def _frame_vjp(ctx, g):
    return (invoke(_OLA, [g], {"stride": ctx.attrs["stride"],
                                   "total": ctx.in_shapes[0][-1]}),)


def _ola_forward(xp, frames, *, stride, total):
    *batch, count, length = frames.shape
    chunks = -(-length // stride)
    # Sample j * stride + c * stride + t lives at out[..., j + c, t]: within one chunk
    # c of ``stride`` samples the frames do not overlap, so each chunk is one add.
    out = xp.zeros((*batch, count + chunks, stride), frames.dtype)
    for c in range(chunks):
        width = min(stride, length - c * stride)
        out[..., c:c + count, :width] += frames[..., c * stride:c * stride + width]
    return _fit_last(xp, out.reshape((*batch, (count + chunks) * stride)), total)


def _ola_infer(frames, *, stride, total):
    if frames.ndim < 2:
        raise ValueError(f"istft: frames need rank >= 2, got shape {frames.shape}")
    return Aval(frames.shape[:-2] + (total,), frames.dtype)


def _ola_vjp(ctx, g):
    count, length = ctx.in_shapes[0][-2:]
    return (invoke(_FRAME, [g], {"length": length, "stride": ctx.attrs["stride"],
                                     "count": count}),)


_FRAME = _linear_op("kbackend.frame", _frame_forward, _frame_infer, _frame_vjp)
_OLA = _linear_op("kbackend.overlap_add", _ola_forward, _ola_infer, _ola_vjp)


def _complex_input(x, what: str):
    """(real, imag) tensors of one float dtype computed in (working, original) dtypes."""
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise ValueError(
            f"{what}: input `x` should be a tuple of two tensors - real and imaginary. "
            f"Received: x={x}")
    re, im = convert_to_tensor(x[0]), convert_to_tensor(x[1])
    if tuple(re.shape) != tuple(im.shape):
        raise ValueError(
            f"{what}: input `x` should be a tuple of two tensors - real and imaginary. "
            f"Both the real and imaginary parts should have the same shape. Received: "
            f"x[0].shape = {tuple(re.shape)}, x[1].shape = {tuple(im.shape)}")
    kinds = (standardize_dtype(re.dtype), standardize_dtype(im.dtype))
    if any("float" not in k for k in kinds):
        raise ValueError(f"{what}: at least one tensor in input `x` is not of type float. "
                         f"Received dtypes: {kinds[0]}, {kinds[1]}")
    # One dtype is kept as it is (float64 included); mixed ones follow Keras' rule.
    dtype = kinds[0] if kinds[0] == kinds[1] else dtypes.result_type(*kinds)
    work = "float32" if dtype in ("float16", "bfloat16") else dtype
    return cast(re, work), cast(im, work), dtype


def _back(values, dtype):
    if isinstance(values, tuple):
        return tuple(_back(v, dtype) for v in values)
    return values if standardize_dtype(values.dtype) == dtype else cast(values, dtype)


def _cfft(x, ndim: int, inverse: bool, what: str):
    re, im, dtype = _complex_input(x, what)
    if re.ndim < ndim:
        raise ValueError(f"{what}: input must have rank >= {ndim}, got shape "
                         f"{tuple(re.shape)}")
    return _back(invoke(_CFFT, [re, im], {"ndim": ndim, "inverse": inverse, "scale": 1.0}),
                 dtype)


def fft(x):
    """Fast Fourier transform along the last axis.

    Args:
        x: a (real, imag) pair of float tensors of one shape.

    Returns:
        The (real, imag) pair of the transform.
    """
    return _cfft(x, 1, False, "fft")


def ifft(x):
    """Inverse fast Fourier transform along the last axis of a (real, imag) pair."""
    return _cfft(x, 1, True, "ifft")


def fft2(x):
    """Two-dimensional FFT over the last two axes of a (real, imag) pair."""
    return _cfft(x, 2, False, "fft2")


def ifft2(x):
    """Two-dimensional inverse FFT over the last two axes of a (real, imag) pair."""
    return _cfft(x, 2, True, "ifft2")


def _work_float(x):
    x = _float(x)
    dtype = standardize_dtype(x.dtype)
    return (cast(x, "float32") if dtype in ("float16", "bfloat16") else x), dtype


def rfft(x, fft_length=None):
    """FFT of a real signal along its last axis (the non-negative frequencies only).

    Args:
        x: a real tensor (integers are cast to floatx).
        fft_length: the transform length; the signal is cropped or zero-padded to it.
            Defaults to the last dimension.

    Returns:
        A (real, imag) pair with ``fft_length // 2 + 1`` bins on the last axis.
    """
    x, dtype = _work_float(x)
    if x.ndim < 1:
        raise ValueError(f"rfft: input must have rank >= 1, got shape {tuple(x.shape)}")
    n = int(x.shape[-1] if fft_length is None else fft_length)
    return _back(invoke(_RFFT, [x], {"n": n}), dtype)


def irfft(x, fft_length=None):
    """Inverse of :func:`rfft`: a (real, imag) pair of bins to a real signal.

    Args:
        x: a (real, imag) pair of float tensors.
        fft_length: the output length (defaults to ``2 * (bins - 1)``); the bins are
            cropped or zero-padded to ``fft_length // 2 + 1``.

    Returns:
        The real signal, ``fft_length`` long on the last axis.
    """
    re, im, dtype = _complex_input(x, "irfft")
    if re.ndim < 1:
        raise ValueError(f"irfft: input must have rank >= 1, got shape {tuple(re.shape)}")
    n = int(2 * (re.shape[-1] - 1) if fft_length is None else fft_length)
    return _back(invoke(_IRFFT, [re, im], {"n": n}), dtype)


def _window(window, sequence_length: int, fft_length: int, dtype: str, what: str):
    """The window as a NumPy array, zero-padded on both sides to ``fft_length``."""
    if window is None:
        return _np.ones(fft_length, dtype=dtype)
    if isinstance(window, str):
        if window not in {"hann", "hamming"}:
            raise ValueError(f'{what}: If a string is passed to `window`, it must be one '
                             f'of `"hann"`, `"hamming"`. Received: window={window}')
        import scipy.signal

        win = scipy.signal.get_window(window, sequence_length)
    else:
        win = convert_to_numpy(window)
    win = _np.asarray(win, dtype=dtype)
    if win.ndim != 1 or win.shape[-1] != sequence_length:
        raise ValueError(f"{what}: The shape of `window` must be equal to "
                         f"[sequence_length]. Received: window shape={win.shape}, "
                         f"sequence_length={sequence_length}")
    left = (fft_length - sequence_length) // 2
    return _np.pad(win, (left, fft_length - sequence_length - left))


def stft(x, sequence_length, sequence_stride, fft_length, window="hann", center=True):
    """Short-time Fourier transform of real signals along the last axis.

    Args:
        x: a float32 or float64 tensor.
        sequence_length: the window length.
        sequence_stride: the hop between frames.
        fft_length: the FFT length (>= sequence_length); the window is zero-padded to
            it on both sides.
        window: "hann", "hamming", a 1-D tensor of ``sequence_length`` or None.
        center: reflect-pad the signal by ``fft_length // 2`` on both ends.

    Returns:
        A (real, imag) pair of shape ``(..., frames, fft_length // 2 + 1)``.
    """
    x = convert_to_tensor(x)
    dtype = standardize_dtype(x.dtype)
    if dtype not in {"float32", "float64"}:
        raise TypeError("stft: invalid input type. Expected `float32` or `float64`. "
                        f"Received: input type={dtype}")
    length, stride, n = int(sequence_length), int(sequence_stride), int(fft_length)
    if n < length:
        raise ValueError("stft: `fft_length` must equal or larger than `sequence_length`."
                         f" Received: sequence_length={length}, fft_length={n}")
    win = _window(window, length, n, dtype, "stft")
    if x.ndim < 1:
        raise ValueError(f"stft: input must have rank >= 1, got shape {tuple(x.shape)}")
    if center:
        width = ((0, 0),) * (x.ndim - 1) + ((n // 2, n // 2),)
        x = cnp.pad(x, width, mode="reflect")
    size = x.shape[-1]
    if size < n:
        raise ValueError(f"stft: the (padded) signal has {size} samples, fewer than "
                         f"fft_length={n}")
    frames = invoke(_FRAME, [x], {"length": n, "stride": stride,
                                      "count": 1 + (size - n) // stride})
    return invoke(_RFFT, [frames * convert_to_tensor(win)], {"n": n})


def istft(x, sequence_length, sequence_stride, fft_length, length=None, window="hann",
          center=True):
    """Inverse short-time Fourier transform (windowed overlap-add).

    Args:
        x: a (real, imag) pair of shape ``(..., frames, bins)``.
        sequence_length: the window length used by :func:`stft`.
        sequence_stride: the hop between frames.
        fft_length: the FFT length used by :func:`stft`.
        length: crop the output to this many samples (after removing the centre
            padding). Defaults to the full signal.
        window: "hann", "hamming", a 1-D tensor of ``sequence_length`` or None.
        center: whether :func:`stft` padded the signal (its padding is removed).

    Returns:
        The real signal, ``(...,  samples)``.
    """
    re, im, dtype = _complex_input(x, "istft")
    seq, stride, n = int(sequence_length), int(sequence_stride), int(fft_length)
    win = None if window is None else _window(window, seq, n, standardize_dtype(re.dtype),
                                              "istft")
    if re.ndim < 2:
        raise ValueError(f"istft: input must have rank >= 2, got shape {tuple(re.shape)}")
    frames = invoke(_IRFFT, [re, im], {"n": n})
    if win is not None:
        # Normalise by the squared window summed over the frames overlapping each
        # sample, in the steady state (librosa's rule, as Keras' reference).
        overlaps = -(-n // stride)
        denom = _np.pad(_np.square(win), (0, overlaps * stride - n))
        denom = _np.tile(denom.reshape(overlaps, stride).sum(0), overlaps)[:n]
        with _np.errstate(divide="ignore", invalid="ignore"):
            frames = frames * convert_to_tensor(win / denom)
    count = frames.shape[-2]
    out = invoke(_OLA, [frames], {"stride": stride, "total": (count - 1) * stride + n})
    start = n // 2 if center else 0
    if length is not None:
        end = start + int(length)
    elif center:
        end = out.shape[-1] - n // 2
    else:
        end = out.shape[-1]
    return _back(out[..., start:end], dtype)
