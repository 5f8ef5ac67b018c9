"""Keras backend ``image``: color conversions, resizing, geometric warps and filters.

Everything is written with ``core.np`` operators on core NDArrays, so gradients
flow with respect to the images wherever the computation is differentiable:

- ``resize`` and ``scale_and_translate`` contract each resized axis with a constant
  (input size, output size) weight matrix built in NumPy from the kernel (triangle,
  Keys cubic, Lanczos, box for ``area``), as ``jax.image.scale_and_translate`` and
  TensorFlow's ``scale_and_translate`` kernel do; ``nearest`` gathers with ``take``.
- ``map_coordinates``, ``affine_transform``, ``perspective_transform`` and
  ``elastic_transform`` gather the 1 (nearest) or 2**k (linear) neighbouring pixels
  with ``take`` from the flattened input and blend them with weights that are core
  expressions of the coordinates (so coordinates get gradients too); the integer
  neighbour indices and the fill-mode index remapping are computed in NumPy.
- ``gaussian_blur`` and ``sobel_edges`` are depthwise convolutions.

Integer (and bool) images are computed in float32 and rounded back to their dtype
with saturation; float16/bfloat16 images are computed in float32 and cast back.

The public functions carry no type annotations: Keras' ops_test compares each backend
function's signature with the ``keras.ops`` one exactly, annotations included.
"""
from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
from keras.src.backend.common import dtypes, standardize_dtype
from keras.src.backend.config import standardize_data_format

from core import np as cnp
from core.dtypes import is_float as _is_float
from kbackend import random as _random
from kbackend.core import cast, convert_to_numpy, convert_to_tensor

RESIZE_INTERPOLATIONS = ("bilinear", "nearest", "lanczos3", "lanczos5", "bicubic", "area")
AFFINE_TRANSFORM_INTERPOLATIONS = {"nearest": 0, "bilinear": 1}  # name -> spline order
AFFINE_TRANSFORM_FILL_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")
MAP_COORDINATES_FILL_MODES = AFFINE_TRANSFORM_FILL_MODES
SCALE_AND_TRANSLATE_METHODS = {
    "linear": "linear", "bilinear": "linear", "trilinear": "linear", "triangle": "linear",
    "cubic": "cubic", "bicubic": "cubic", "tricubic": "cubic",
    "lanczos3": "lanczos3", "lanczos5": "lanczos5",
}


# ----------------------------------------------------------------------- helpers
def _compute_dtype(dtype: str) -> str:
    """float64 stays float64; everything else is computed in float32."""
    return "float64" if dtype == "float64" else "float32"


def _restore(x, dtype: str, half_away: bool = False):
    """A float result ``x`` back in the images' ``dtype``.

    Integer targets are rounded (half to even, or half away from zero as SciPy and
    JAX's map_coordinates do) and saturated to the dtype's range.
    """
    if standardize_dtype(x.dtype) == dtype:
        return x
    if _is_float(dtype):
        return cast(x, dtype)
    if half_away:
        x = cnp.sign(x) * cnp.floor(cnp.abs(x) + 0.5)
    else:
        x = cnp.rint(x)
    if dtype != "bool":
        info = np.iinfo(dtype)
        x = cnp.clip(x, float(info.min), float(info.max))
    return cast(x, dtype)


def _const(value: np.ndarray, like):
    """A constant core array on the context of the core array ``like``."""
    return cnp.array(value, ctx=like.context)


def _check_rank(op: str, images, ranks=(3, 4)) -> None:
    if images.ndim not in ranks:
        if ranks == (4,):
            expected = "rank 4 (batch of images)"
        else:
            expected = "rank 3 (single image) or rank 4 (batch of images)"
        raise ValueError(
            f"{op}: Invalid images rank: expected {expected}. Received input with "
            f"shape: images.shape={tuple(images.shape)} ({standardize_dtype(images.dtype)})")


def _check_choice(op: str, arg: str, value, choices) -> None:
    if value not in choices:
        raise ValueError(
            f"{op}: Invalid value for argument `{arg}`. Expected one of "
            f"{sorted(choices)}. Received: {arg}={value!r}")


def _to_nhwc(images, data_format: str):
    """A batch of channels_last images, and whether a batch axis was added."""
    squeeze = images.ndim == 3
    if squeeze:
        images = cnp.expand_dims(images, 0)
    if data_format == "channels_first":
        images = cnp.transpose(images, (0, 2, 3, 1))
    return images, squeeze


def _from_nhwc(images, data_format: str, squeeze: bool):
    if data_format == "channels_first":
        images = cnp.transpose(images, (0, 3, 1, 2))
    return cnp.squeeze(images, 0) if squeeze else images


def _channel_planes(op: str, images, data_format: str):
    """The three color planes of ``images`` (dropping the channel axis)."""
    axis = images.ndim - 1 if data_format == "channels_last" else images.ndim - 3
    if images.shape[axis] != 3:
        raise ValueError(
            f"{op}: Input images must have 3 channels, but received images with "
            f"{images.shape[axis]} channels. Received input with shape: "
            f"images.shape={tuple(images.shape)}")
    return [cnp.squeeze(p, axis) for p in cnp.split(images, 3, axis=axis)], axis


# ------------------------------------------------------------------------- color
def rgb_to_grayscale(images, data_format=None):
    """Converts RGB images to grayscale with TF's weights (0.2989, 0.5870, 0.1140).

    Args:
        images: A 3-D (single image) or 4-D (batch) tensor with 3 or 1 channels;
            single-channel images are returned unchanged.
        data_format: ``"channels_last"`` or ``"channels_first"`` (Keras' default
            image data format when None).

    Returns:
        Images with one channel, in the input dtype.
    """
    images = convert_to_tensor(images)
    data_format = standardize_data_format(data_format)
    _check_rank("rgb_to_grayscale", images)
    axis = images.ndim - 1 if data_format == "channels_last" else images.ndim - 3
    if images.shape[axis] not in (1, 3):
        raise ValueError(
            "rgb_to_grayscale: Invalid channel size: expected 3 (RGB) or 1 (Grayscale). "
            f"Received input with shape: images.shape={tuple(images.shape)}")
    if images.shape[axis] == 1:
        return images
    dtype = standardize_dtype(images.dtype)
    cdtype = _compute_dtype(dtype)
    weights = _const(np.array([0.2989, 0.5870, 0.1140], dtype=cdtype), images)
    gray = cnp.tensordot(cast(images, cdtype), weights, axes=([axis], [0]))
    return _restore(cnp.expand_dims(gray, axis), dtype)


def _check_float(op: str, images) -> str:
    dtype = standardize_dtype(images.dtype)
    if not _is_float(dtype):
        raise ValueError(
            f"{op}: Invalid images dtype: expected float dtype. Received: "
            f"images.dtype={dtype}")
    return dtype


def rgb_to_hsv(images, data_format=None):
    """Converts RGB images (floats in [0, 1]) to HSV, as ``tf.image.rgb_to_hsv``.

    Args:
        images: A 3-D or 4-D float tensor with 3 channels.
        data_format: ``"channels_last"`` or ``"channels_first"``.

    Returns:
        Hue, saturation and value in [0, 1], in the input dtype.
    """
    images = convert_to_tensor(images)
    data_format = standardize_data_format(data_format)
    _check_rank("rgb_to_hsv", images)
    dtype = _check_float("rgb_to_hsv", images)
    x = cast(images, _compute_dtype(dtype))
    # Values within the dtype's epsilon of zero count as zero (as dm_pix does).
    x = cnp.where(cnp.abs(x) < float(ml_dtypes.finfo(dtype).eps), 0.0, x)
    (r, g, b), axis = _channel_planes("rgb_to_hsv", x, data_format)
    value = cnp.maximum(cnp.maximum(r, g), b)
    range_ = value - cnp.minimum(cnp.minimum(r, g), b)
    safe_value = cnp.where(value > 0, value, 1.0)
    safe_range = cnp.where(range_ > 0, range_, 1.0)
    saturation = cnp.where(value > 0, range_ / safe_value, 0.0)
    norm = 1.0 / (6.0 * safe_range)
    hue = cnp.where(value == g, norm * (b - r) + 2.0 / 6.0, norm * (r - g) + 4.0 / 6.0)
    hue = cnp.where(value == r, norm * (g - b), hue)
    hue = cnp.where(range_ > 0, hue, 0.0) + cast(hue < 0.0, hue.dtype)
    return _restore(cnp.stack([hue, saturation, value], axis=axis), dtype)


def hsv_to_rgb(images, data_format=None):
    """Converts HSV images (floats in [0, 1]) to RGB, as ``tf.image.hsv_to_rgb``.

    Args:
        images: A 3-D or 4-D float tensor with 3 channels (hue, saturation, value).
        data_format: ``"channels_last"`` or ``"channels_first"``.

    Returns:
        RGB images in the input dtype.
    """
    images = convert_to_tensor(images)
    data_format = standardize_data_format(data_format)
    _check_rank("hsv_to_rgb", images)
    dtype = _check_float("hsv_to_rgb", images)
    (hue, sat, val), axis = _channel_planes(
        "hsv_to_rgb", cast(images, _compute_dtype(dtype)), data_format)
    dh = cnp.mod(hue, 1.0) * 6.0
    dr = cnp.clip(cnp.abs(dh - 3.0) - 1.0, 0.0, 1.0)
    dg = cnp.clip(2.0 - cnp.abs(dh - 2.0), 0.0, 1.0)
    db = cnp.clip(2.0 - cnp.abs(dh - 4.0), 0.0, 1.0)
    one_minus_s = 1.0 - sat
    planes = [val * (one_minus_s + sat * d) for d in (dr, dg, db)]
    return _restore(cnp.stack(planes, axis=axis), dtype)


# ---------------------------------------------------------------------- resizing
def _triangle(x):
    return np.maximum(0.0, 1.0 - np.abs(x))


def _keys_cubic(x):  # Keys' cubic with a = -0.5, as TF and JAX.
    out = ((1.5 * x - 2.5) * x) * x + 1.0
    out = np.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return np.where(x >= 2.0, 0.0, out)


def _lanczos(radius):
    def kernel(x):
        with np.errstate(divide="ignore", invalid="ignore"):
            y = radius * np.sin(np.pi * x) * np.sin(np.pi * x / radius) / (np.pi * x) ** 2
        return np.where(x > radius, 0.0, np.where(x > 1e-3, y, 1.0))

    return kernel


_KERNELS = {"linear": _triangle, "cubic": _keys_cubic,
            "lanczos3": _lanczos(3.0), "lanczos5": _lanczos(5.0)}


def _weight_matrix(m: int, n: int, scale: float, translation: float, method: str,
                   antialias: bool) -> np.ndarray:
    """The (m, n) matrix taking m input samples to n output samples along one axis.

    Output pixel j samples the input at ``(j + 0.5 - translation) / scale - 0.5``
    (half-pixel centers). Weights are normalized per output pixel (so taps falling
    outside the input are dropped), and output pixels whose sample lies outside
    the input get no weight.
    """
    inv = 1.0 / scale
    sample = (np.arange(n) + 0.5) * inv - translation * inv - 0.5
    if method == "area":
        # Overlap of the output pixel's footprint with each input pixel.
        left = np.arange(n) * inv - translation * inv
        w = np.maximum(0.0, np.minimum(left + inv, np.arange(m)[:, None] + 1.0)
                       - np.maximum(left, np.arange(m)[:, None] + 0.0))
    else:
        kernel_scale = max(inv, 1.0) if antialias else 1.0
        w = _KERNELS[method](np.abs(sample[None, :] - np.arange(m)[:, None]) / kernel_scale)
    total = w.sum(axis=0, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(np.abs(total) > 1000.0 * np.finfo(np.float32).eps,
                     w / np.where(total != 0, total, 1.0), 0.0)
    inside = (sample >= -0.5) & (sample <= m - 0.5)
    return np.where(inside[None, :], w, 0.0)


def _resample(images, out_shape, axes, scales, translations, method, antialias):
    """``images`` resampled along ``axes`` (one weight-matrix contraction each)."""
    dtype = standardize_dtype(images.dtype)
    cdtype = _compute_dtype(dtype)
    x = cast(images, cdtype)
    for axis, scale, shift in zip(axes, scales, translations):
        m, n = x.shape[axis], out_shape[axis]
        w = _weight_matrix(m, n, float(scale), float(shift), method, antialias)
        x = cnp.tensordot(x, _const(w.astype(cdtype), x), axes=([axis], [0]))
        x = cnp.moveaxis(x, -1, axis)
    return _restore(x, dtype)


def _resize_nearest(images, out_shape, axes):
    """TF's and JAX's half-pixel nearest neighbour: input floor((j + 0.5) * m / n)."""
    for axis in axes:
        m, n = images.shape[axis], out_shape[axis]
        pos = (np.arange(n, dtype=np.float32) + np.float32(0.5)) * np.float32(m / n)
        idx = np.minimum(np.floor(pos).astype(np.int64), m - 1)
        images = cnp.take(images, _const(idx, images), axis=axis)
    return images


def _crop_or_pad(images, size, crop, pad, fill_value, data_format):
    """Keras' centered crop (or pad with ``fill_value``) to the target aspect ratio."""
    hax = images.ndim - 3 if data_format == "channels_last" else images.ndim - 2
    height, width = images.shape[hax], images.shape[hax + 1]
    th, tw = size
    if crop:
        ch = max(min(height, int(float(width * th) / tw)), 1)
        cw = max(min(width, int(float(height * tw) / th)), 1)
        h0, w0 = int(float(height - ch) / 2), int(float(width - cw) / 2)
        key = [slice(None)] * images.ndim
        key[hax], key[hax + 1] = slice(h0, h0 + ch), slice(w0, w0 + cw)
        return images[tuple(key)]
    ph = max(height, int(float(width * th) / tw))
    pw = max(width, int(float(height * tw) / th))
    h0, w0 = int(float(ph - height) / 2), int(float(pw - width) / 2)
    # Keras pads the same amount on both sides, along one axis only.
    axis, amount = (hax, h0) if h0 > 0 else (hax + 1, w0)
    if amount <= 0:
        return images
    shape = list(images.shape)
    shape[axis] = amount
    block = cnp.full(tuple(shape), fill_value, dtype=images.dtype, ctx=images.context)
    return cnp.concatenate([block, images, block], axis=axis)


def resize(images, size, interpolation="bilinear", antialias=False,
           crop_to_aspect_ratio=False, pad_to_aspect_ratio=False, fill_mode="constant",
           fill_value=0.0, data_format=None):
    """Resizes images to ``size`` = (height, width), as ``tf.image.resize``.

    Args:
        images: A 3-D (single image) or 4-D (batch) tensor.
        size: The output (height, width).
        interpolation: ``"bilinear"``, ``"nearest"``, ``"bicubic"`` (Keys, a=-0.5),
            ``"lanczos3"``, ``"lanczos5"`` or ``"area"`` (box average).
        antialias: Widen the kernel by the downsampling factor (ignored for
            ``nearest``; ``area`` is always antialiased).
        crop_to_aspect_ratio: Center-crop to the target aspect ratio first.
        pad_to_aspect_ratio: Pad (evenly, with ``fill_value``) to the target aspect
            ratio first.
        fill_mode: Only ``"constant"`` is supported.
        fill_value: The padding value for ``pad_to_aspect_ratio``.
        data_format: ``"channels_last"`` or ``"channels_first"``.

    Returns:
        The resized images, in the input dtype (integers rounded and saturated).
        Differentiable with respect to ``images``.
    """
    data_format = standardize_data_format(data_format)
    _check_choice("resize", "interpolation", interpolation, RESIZE_INTERPOLATIONS)
    if fill_mode != "constant":
        raise ValueError(
            "resize: Invalid value for argument `fill_mode`. Only `'constant'` is "
            f"supported. Received: fill_mode={fill_mode!r}")
    if pad_to_aspect_ratio and crop_to_aspect_ratio:
        raise ValueError(
            "resize: Only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio` can be "
            "`True`.")
    if len(size) != 2:
        raise ValueError(
            "resize: Argument `size` must be a tuple of two elements (height, width). "
            f"Received: size={size}")
    size = (int(size[0]), int(size[1]))
    if size[0] <= 0 or size[1] <= 0:
        raise ValueError(
            f"resize: `size` must have positive height and width. Received: size={size}")
    images = convert_to_tensor(images)
    _check_rank("resize", images)
    if crop_to_aspect_ratio or pad_to_aspect_ratio:
        images = _crop_or_pad(images, size, crop_to_aspect_ratio, pad_to_aspect_ratio,
                              fill_value, data_format)
    hax = images.ndim - 3 if data_format == "channels_last" else images.ndim - 2
    out_shape = list(images.shape)
    out_shape[hax:hax + 2] = size
    axes = [a for a in (hax, hax + 1) if images.shape[a] != out_shape[a]]
    if not axes:
        return images
    if interpolation == "nearest":
        return _resize_nearest(images, out_shape, axes)
    method = {"bilinear": "linear", "bicubic": "cubic"}.get(interpolation, interpolation)
    scales = [out_shape[a] / images.shape[a] for a in axes]
    return _resample(images, out_shape, axes, scales, [0.0] * len(axes), method, antialias)


def scale_and_translate(images, output_shape, scale, translation, spatial_dims, method,
                        antialias=True):
    """Resamples ``images`` to ``output_shape`` with a per-axis scale and translation.

    The output pixel at (half-pixel centered) location ``y`` along spatial axis ``d``
    samples the input at ``(y - translation[i]) / scale[i]``, as
    ``jax.image.scale_and_translate``.

    Args:
        images: The input tensor.
        output_shape: The output shape (same rank as ``images``).
        scale: One scale per entry of ``spatial_dims``.
        translation: One translation per entry of ``spatial_dims``.
        spatial_dims: The axes to resample.
        method: ``"linear"``/``"bilinear"``/``"trilinear"``/``"triangle"``,
            ``"cubic"``/``"bicubic"``/``"tricubic"``, ``"lanczos3"`` or ``"lanczos5"``.
        antialias: Widen the kernel when downsampling.

    Returns:
        The resampled tensor in the input dtype; differentiable with respect to
        ``images`` (not ``scale`` or ``translation``).
    """
    _check_choice("scale_and_translate", "method", method, SCALE_AND_TRANSLATE_METHODS)
    images = convert_to_tensor(images)
    output_shape = tuple(int(d) for d in output_shape)
    if len(output_shape) != images.ndim:
        raise ValueError(
            f"scale_and_translate: output_shape={output_shape} must have the rank of "
            f"images, whose shape is {tuple(images.shape)}")
    spatial_dims = [int(d) % images.ndim for d in spatial_dims]
    scale = np.asarray(convert_to_numpy(scale), dtype=np.float64).reshape(-1)
    translation = np.asarray(convert_to_numpy(translation), dtype=np.float64).reshape(-1)
    if not len(scale) == len(translation) == len(spatial_dims):
        raise ValueError(
            f"scale_and_translate: scale (shape {scale.shape}) and translation (shape "
            f"{translation.shape}) need one entry per spatial dim {tuple(spatial_dims)}")
    if not np.all(np.isfinite(scale)) or np.any(scale == 0):
        raise ValueError(f"scale_and_translate: scale must be finite and nonzero; got {scale}")
    for d in range(images.ndim):
        if d not in spatial_dims and output_shape[d] != images.shape[d]:
            raise ValueError(
                f"scale_and_translate: output_shape={output_shape} differs from "
                f"images.shape={tuple(images.shape)} on axis {d}, which is not in "
                f"spatial_dims={tuple(spatial_dims)}")
    if not spatial_dims:
        return images
    return _resample(images, output_shape, spatial_dims, scale, translation,
                     SCALE_AND_TRANSLATE_METHODS[method], antialias)


# --------------------------------------------------------------- coordinate maps
def _remap_index(idx: np.ndarray, size: int, mode: str) -> np.ndarray:
    """Integer indices moved into [0, size) according to the fill mode."""
    if mode in ("constant", "nearest"):
        return np.clip(idx, 0, size - 1)
    if mode == "wrap":
        return np.mod(idx, size)
    if mode == "mirror":  # (c d c b | a b c d | c b a b)
        if size == 1:
            return np.zeros_like(idx)
        period = 2 * (size - 1)
        idx = np.mod(idx, period)
        return np.where(idx >= size, period - idx, idx)
    period = 2 * size  # reflect: (d c b a | a b c d | d c b a)
    idx = np.mod(idx, period)
    return np.where(idx >= size, period - 1 - idx, idx)


def _interpolate(x, coords, order: int, fill_mode: str, fill_value, out_shape):
    """Samples ``x`` (float) at ``coords``, one entry per leading axis of ``x``.

    An entry is either a float core array of coordinates or a NumPy integer array
    (an exact in-range index, e.g. the batch); all broadcast to ``out_shape``, which
    has one axis per entry. Axes of ``x`` after the coordinate ones (the channels)
    are gathered whole: the result has shape ``out_shape + x.shape[len(coords):]``.
    ``order`` 0 takes the pixel at ``floor(c + 0.5)`` (SciPy's rounding, half up);
    ``order`` 1 blends the two neighbours on each float axis. In ``constant`` mode a
    neighbour outside the input contributes ``fill_value``.
    """
    cdtype = standardize_dtype(x.dtype)
    lead, trail = tuple(x.shape[:len(coords)]), tuple(x.shape[len(coords):])
    flat = cnp.reshape(x, (-1,) + trail)
    strides = np.cumprod((1,) + lead[::-1])[:-1][::-1]
    expand = (1,) * len(trail)  # aligns per-pixel weights with the channels
    taps = []  # per axis: [(index array, weight or None, exact)]
    for c in coords:
        if isinstance(c, np.ndarray):
            taps.append([(c.astype(np.int64), None, True)])
            continue
        cn = convert_to_numpy(c).astype(np.float64)
        if order == 0:
            taps.append([(np.floor(cn + 0.5).astype(np.int64), None, False)])
            continue
        lower = np.floor(cn)
        upper_w = cast(c - _const(lower.astype(standardize_dtype(c.dtype)), c), cdtype)
        upper_w = cnp.reshape(upper_w, tuple(upper_w.shape) + expand)
        lower = lower.astype(np.int64)
        taps.append([(lower, 1.0 - upper_w, False), (lower + 1, upper_w, False)])
    if fill_mode == "constant":
        # Out-of-range neighbours index one extra row holding fill_value.
        fill_row = cnp.full((1,) + trail, float(fill_value), dtype=cdtype, ctx=x.context)
        flat = cnp.concatenate([flat, fill_row], axis=0)
    out = None
    for corner in itertools.product(*taps):
        flat_idx = np.zeros((), np.int64)
        valid = np.ones((), bool)
        weight = None
        for (idx, w, exact), size, stride in zip(corner, lead, strides):
            if not exact:
                if fill_mode == "constant":
                    valid = valid & (idx >= 0) & (idx < size)
                idx = _remap_index(idx, size, fill_mode)
            flat_idx = flat_idx + idx * stride
            if w is not None:
                weight = w if weight is None else weight * w
        if not valid.all():
            flat_idx = np.where(valid, flat_idx, flat.shape[0] - 1)
        vals = cnp.take(flat, _const(np.broadcast_to(flat_idx, out_shape), x), axis=0)
        if weight is not None:
            vals = vals * weight
        out = vals if out is None else out + vals
    return out


def map_coordinates(inputs, coordinates, order, fill_mode="constant", fill_value=0.0):
    """Samples ``inputs`` at ``coordinates`` (``scipy.ndimage.map_coordinates``).

    Boundaries are handled as ``jax.scipy.ndimage.map_coordinates`` does (SciPy's
    ``constant`` bug scipy/scipy#2640 fixed).

    Args:
        inputs: An N-D tensor.
        coordinates: A sequence of N arrays (or an array of shape (N, ...)) of
            sample coordinates, all of one shape.
        order: 0 (nearest: the pixel at ``floor(c + 0.5)``, as SciPy; JAX rounds
            half away from zero, which differs at negative halves) or 1 (linear).
        fill_mode: ``"constant"``, ``"nearest"``, ``"wrap"``, ``"mirror"`` or
            ``"reflect"``.
        fill_value: The value outside the input in ``constant`` mode.

    Returns:
        Values of shape ``coordinates.shape[1:]`` in the inputs' dtype (integers
        rounded half away from zero); differentiable with respect to ``inputs`` and,
        for ``order=1``, ``coordinates``.
    """
    inputs = convert_to_tensor(inputs)
    if isinstance(coordinates, (list, tuple)):
        coords = [convert_to_tensor(c) for c in coordinates]
        lead = len(coords)
        cshape = (lead,) + (tuple(coords[0].shape) if coords else ())
    else:
        coordinates = convert_to_tensor(coordinates)
        cshape = tuple(coordinates.shape)
        lead = cshape[0] if cshape else 0
        coords = None
    if lead != inputs.ndim:
        raise ValueError(
            "map_coordinates: First dim of `coordinates` must be the same as the rank of "
            f"`inputs`. Received inputs with shape: {tuple(inputs.shape)} and coordinate "
            f"leading dim of {lead}")
    if len(cshape) < 2:
        raise ValueError(
            "map_coordinates: Invalid coordinates rank: expected at least rank 2. "
            f"Received input with shape: {cshape}")
    _check_choice("map_coordinates", "fill_mode", fill_mode, MAP_COORDINATES_FILL_MODES)
    if order not in (0, 1):
        raise ValueError(
            "map_coordinates: Invalid value for argument `order`. Expected one of "
            f"[0, 1]. Received: order={order}")
    if coords is None:
        coords = [cnp.squeeze(c, 0) for c in cnp.split(coordinates, lead, axis=0)]
    for c in coords:
        if tuple(c.shape) != cshape[1:]:
            raise ValueError(
                "map_coordinates: all coordinate arrays must have one shape; got "
                f"{[tuple(c.shape) for c in coords]}")
    dtype = standardize_dtype(inputs.dtype)
    cdtype = _compute_dtype(dtype)
    coords = [c if _is_float(standardize_dtype(c.dtype)) else cast(c, cdtype) for c in coords]
    out = _interpolate(cast(inputs, cdtype), coords, order, fill_mode, fill_value,
                       cshape[1:])
    return _restore(out, dtype, half_away=True)


def _projective(op, images, transform, order, fill_mode, fill_value, data_format):
    """Warps ``images`` with per-image projective transforms (TF's convention).

    Row ``[a0, a1, a2, b0, b1, b2, c0, c1]`` maps the output pixel (x, y) to the
    input point ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1.
    """
    dtype = standardize_dtype(images.dtype)
    x, squeeze = _to_nhwc(cast(images, _compute_dtype(dtype)), data_format)
    batch, height, width, _ = x.shape
    # Coordinates in float64: nearest rounding must not flip on float32 noise.
    t = cast(transform, "float64")
    if t.ndim == 1:
        t = cnp.expand_dims(t, 0)
    if t.shape[-1] != 8 or t.shape[0] not in (1, batch):
        raise ValueError(
            f"{op}: transform must have shape (8,) or (batch, 8) with batch 1 or "
            f"{batch}; received transform.shape={tuple(transform.shape)} for "
            f"images.shape={tuple(images.shape)}")
    a0, a1, a2, b0, b1, b2, c0, c1 = [cnp.reshape(p, (-1, 1, 1))
                                      for p in cnp.split(t, 8, axis=1)]
    gx = _const(np.arange(width, dtype=np.float64).reshape(1, 1, width), t)
    gy = _const(np.arange(height, dtype=np.float64).reshape(1, height, 1), t)
    k = c0 * gx + c1 * gy + 1.0
    x_in = (a0 * gx + a1 * gy + a2) / k
    y_in = (b0 * gx + b1 * gy + b2) / k
    if t.shape[0] != batch:
        x_in = cnp.broadcast_to(x_in, (batch, height, width))
        y_in = cnp.broadcast_to(y_in, (batch, height, width))
    coords = [np.arange(batch).reshape(-1, 1, 1), y_in, x_in]
    out = _interpolate(x, coords, order, fill_mode, fill_value, (batch, height, width))
    return _restore(_from_nhwc(out, data_format, squeeze), dtype, half_away=True)


def affine_transform(images, transform, interpolation="bilinear", fill_mode="constant",
                     fill_value=0, data_format=None):
    """Applies projective transform(s) to image(s).

    Args:
        images: A 3-D (single image) or 4-D (batch) tensor.
        transform: Shape (8,) or (batch, 8): ``[a0, a1, a2, b0, b1, b2, c0, c1]``
            maps the output point (x, y) to the input point
            ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1.
            (c0 and c1 are honoured as in TensorFlow; Keras' JAX/NumPy/torch
            backends treat them as 0.)
        interpolation: ``"nearest"`` or ``"bilinear"``.
        fill_mode: ``"constant"``, ``"nearest"``, ``"wrap"``, ``"mirror"`` or
            ``"reflect"`` (see :func:`map_coordinates`).
        fill_value: The value outside the input in ``constant`` mode.
        data_format: ``"channels_last"`` or ``"channels_first"``.

    Returns:
        The transformed images, in the input dtype; differentiable with respect to
        ``images`` (and, for bilinear interpolation, ``transform``).
    """
    data_format = standardize_data_format(data_format)
    _check_choice("affine_transform", "interpolation", interpolation,
                  AFFINE_TRANSFORM_INTERPOLATIONS)
    _check_choice("affine_transform", "fill_mode", fill_mode, AFFINE_TRANSFORM_FILL_MODES)
    images = convert_to_tensor(images)
    transform = convert_to_tensor(transform)
    _check_rank("affine_transform", images)
    if transform.ndim not in (1, 2):
        raise ValueError(
            "affine_transform: Invalid transform rank: expected rank 1 (single "
            "transform) or rank 2 (batch of transforms). Received input with shape: "
            f"transform.shape={tuple(transform.shape)}")
    return _projective("affine_transform", images, transform,
                       AFFINE_TRANSFORM_INTERPOLATIONS[interpolation], fill_mode,
                       fill_value, data_format)


def _check_points(op: str, name: str, points) -> None:
    if points.ndim not in (2, 3) or tuple(points.shape[-2:]) != (4, 2):
        raise ValueError(
            f"{op}: Invalid {name} shape: expected (4,2) for a single image or (N,4,2) "
            f"for a batch. Received shape: {tuple(points.shape)}")


def perspective_transform(images, start_points, end_points, interpolation="bilinear",
                          fill_value=0, data_format=None):
    """Warps images so that ``start_points`` land on ``end_points``.

    Args:
        images: A 3-D (single image) or 4-D (batch) tensor.
        start_points: Shape (4, 2) or (N, 4, 2): four (x, y) corners in the input.
        end_points: Same shape: where those corners go in the output.
        interpolation: ``"nearest"`` or ``"bilinear"``.
        fill_value: The value for output pixels that map outside the input.
        data_format: ``"channels_last"`` or ``"channels_first"``.

    Returns:
        The warped images in the input dtype; differentiable with respect to
        ``images``.
    """
    data_format = standardize_data_format(data_format)
    op = "perspective_transform"
    _check_choice(op, "interpolation", interpolation, AFFINE_TRANSFORM_INTERPOLATIONS)
    images = convert_to_tensor(images)
    start_points = convert_to_tensor(start_points)
    end_points = convert_to_tensor(end_points)
    _check_rank(op, images)
    _check_points(op, "start_points", start_points)
    _check_points(op, "end_points", end_points)
    if tuple(start_points.shape) != tuple(end_points.shape):
        raise ValueError(
            f"{op}: start_points and end_points must have the same shape. Received "
            f"start_points.shape={tuple(start_points.shape)}, "
            f"end_points.shape={tuple(end_points.shape)}")
    if start_points.ndim == 2:
        start_points = cnp.expand_dims(start_points, 0)
        end_points = cnp.expand_dims(end_points, 0)
    transform = compute_homography_matrix(cast(start_points, "float32"),
                                          cast(end_points, "float32"))
    return _projective(op, images, transform, AFFINE_TRANSFORM_INTERPOLATIONS[interpolation],
                       "constant", fill_value, data_format)


def compute_homography_matrix(start_points, end_points):
    """The projective transforms taking ``end_points`` to ``start_points``.

    Args:
        start_points: Shape (..., 4, 2): four (x, y) points per transform.
        end_points: The same shape.

    Returns:
        Shape (..., 8): ``[a0, a1, a2, b0, b1, b2, c0, c1]`` (the convention of
        :func:`affine_transform`), mapping each end point (x, y) to its start point.
    """
    start = convert_to_tensor(start_points)
    end = convert_to_tensor(end_points)
    dtype = dtypes.result_type(start.dtype, end.dtype, float)
    cdtype = _compute_dtype(dtype)
    if tuple(start.shape) != tuple(end.shape) or tuple(start.shape[-2:]) != (4, 2):
        raise ValueError(
            "compute_homography_matrix: start_points and end_points must have one shape "
            f"(..., 4, 2); received {tuple(start.shape)} and {tuple(end.shape)}")
    start, end = cast(start, cdtype), cast(end, cdtype)
    sx, sy = start[..., 0], start[..., 1]
    ex, ey = end[..., 0], end[..., 1]
    zeros, ones = cnp.zeros_like(ex), cnp.ones_like(ex)
    x_rows = cnp.stack([ex, ey, ones, zeros, zeros, zeros, -sx * ex, -sx * ey], axis=-1)
    y_rows = cnp.stack([zeros, zeros, zeros, ex, ey, ones, -sy * ex, -sy * ey], axis=-1)
    system = cnp.concatenate([x_rows, y_rows], axis=-2)
    target = cnp.expand_dims(cnp.concatenate([sx, sy], axis=-1), -1)
    try:
        solution = cnp.linalg.solve(system, target)
    except (np.linalg.LinAlgError, ValueError) as err:  # core wraps LinAlgError
        if "ingular" not in str(err):
            raise
        raise ValueError(
            "compute_homography_matrix: the point correspondences are degenerate (three "
            f"collinear or repeated points give a singular system): {err}") from None
    return cast(cnp.squeeze(solution, -1), dtype)


# ----------------------------------------------------------------------- filters
def _gaussian_kernel1d(size: int, sigma: float) -> np.ndarray:
    x = np.arange(size, dtype=np.float64) - (size - 1) / 2.0
    k = np.exp(-0.5 * (x / sigma) ** 2)
    return k / k.sum()


def _pair(value, name: str, kind):
    vals = np.asarray(convert_to_numpy(value)).reshape(-1)
    if vals.size == 1:
        vals = np.repeat(vals, 2)
    if vals.size != 2:
        raise ValueError(f"gaussian_blur: `{name}` must be one or two numbers; got {value!r}")
    return [kind(v) for v in vals]


def _taps(padded, weights, axis: int):
    """Valid correlation of ``padded`` with the 1-D ``weights`` along ``axis``."""
    n = padded.shape[axis] - len(weights) + 1
    out = None
    for t, w in enumerate(weights):
        if w == 0:
            continue
        key = [slice(None)] * padded.ndim
        key[axis] = slice(t, t + n)
        term = padded[tuple(key)] * float(w)
        out = term if out is None else out + term
    return out


def gaussian_blur(images, kernel_size=(3, 3), sigma=(1.0, 1.0), data_format=None):
    """Blurs images with a Gaussian kernel (zero padding, "same" output size).

    As in Keras' other backends, the 2-D kernel is
    ``outer(g(kernel_size[1], sigma[1]), g(kernel_size[0], sigma[0]))``: its rows
    (image height) use the second entries.

    Args:
        images: A 3-D (single image) or 4-D (batch) tensor.
        kernel_size: Two kernel sizes (or one for both).
        sigma: Two standard deviations (or one for both).
        data_format: ``"channels_last"`` or ``"channels_first"``.

    Returns:
        The blurred images in the input dtype; differentiable with respect to
        ``images``.
    """
    data_format = standardize_data_format(data_format)
    images = convert_to_tensor(images)
    _check_rank("gaussian_blur", images)
    ks = _pair(kernel_size, "kernel_size", int)
    sg = _pair(sigma, "sigma", float)
    if min(ks) < 1:
        raise ValueError(f"gaussian_blur: kernel_size must be positive; got {ks}")
    dtype = standardize_dtype(images.dtype)
    x, squeeze = _to_nhwc(cast(images, _compute_dtype(dtype)), data_format)
    # The kernel is an outer product: correlate along the height, then the width.
    for axis, size, std in ((1, ks[1], sg[1]), (2, ks[0], sg[0])):
        before = (size - 1) // 2  # "same" zero padding, the extra pixel after
        pads = [(0, 0)] * 4
        pads[axis] = (before, size - 1 - before)
        x = _taps(cnp.pad(x, tuple(pads)), _gaussian_kernel1d(size, std), axis)
    return _restore(_from_nhwc(x, data_format, squeeze), dtype)


def elastic_transform(images, alpha=20.0, sigma=5.0, interpolation="bilinear",
                      fill_mode="reflect", fill_value=0.0, seed=None, data_format=None):
    """Distorts images with a smooth random displacement field.

    Per-pixel displacements are standard normal draws times ``sigma``, blurred by
    a Gaussian of size ``int(6 * sigma) | 1`` and standard deviation ``sigma``, then
    scaled by ``alpha``; each image is resampled at the displaced grid.

    Args:
        images: A 3-D (single image) or 4-D (batch) tensor.
        alpha: Displacement scale.
        sigma: Smoothness of the displacement field.
        interpolation: ``"nearest"`` or ``"bilinear"``.
        fill_mode: ``"constant"``, ``"nearest"``, ``"wrap"``, ``"mirror"`` or
            ``"reflect"``.
        fill_value: The value outside the input in ``constant`` mode.
        seed: A seed or ``keras.random.SeedGenerator``.
        data_format: ``"channels_last"`` or ``"channels_first"``.

    Returns:
        The distorted images in the input dtype; differentiable with respect to
        ``images``.
    """
    op = "elastic_transform"
    data_format = standardize_data_format(data_format)
    _check_choice(op, "interpolation", interpolation, AFFINE_TRANSFORM_INTERPOLATIONS)
    _check_choice(op, "fill_mode", fill_mode, AFFINE_TRANSFORM_FILL_MODES)
    images = convert_to_tensor(images)
    _check_rank(op, images)
    alpha = float(convert_to_numpy(alpha))
    sigma = float(convert_to_numpy(sigma))
    dtype = standardize_dtype(images.dtype)
    x, squeeze = _to_nhwc(cast(images, _compute_dtype(dtype)), data_format)
    batch, height, width, _ = x.shape
    size = int(6 * sigma) | 1
    # dx and dy as the two channels of one blurred noise image.
    noise = _random.normal((batch, height, width, 2), dtype="float32", seed=seed)
    noise = noise.as_in_context(x.context) * sigma
    field = gaussian_blur(noise, (size, size), (sigma, sigma), "channels_last")
    field = cast(field, "float64") * alpha
    dx, dy = [cnp.squeeze(d, -1) for d in cnp.split(field, 2, axis=-1)]
    gx = _const(np.arange(width, dtype=np.float64).reshape(1, 1, width), field)
    gy = _const(np.arange(height, dtype=np.float64).reshape(1, height, 1), field)
    coords = [np.arange(batch).reshape(-1, 1, 1), gy + dy, gx + dx]
    out = _interpolate(x, coords, AFFINE_TRANSFORM_INTERPOLATIONS[interpolation], fill_mode,
                       fill_value, (batch, height, width))
    return _restore(_from_nhwc(out, data_format, squeeze), dtype, half_away=True)


def sobel_edges(images, data_format=None):
    """Sobel gradients of a batch of images, as ``tf.image.sobel_edges``.

    Borders are padded by reflection (TensorFlow's choice; Keras' JAX and torch
    backends pad with zeros, which only changes the one-pixel border).

    Args:
        images: A 4-D tensor.
        data_format: ``"channels_last"`` or ``"channels_first"``.

    Returns:
        Shape ``images.shape + (2,)``: ``[dy, dx]`` in the last axis, in the input
        dtype; differentiable with respect to ``images``.
    """
    data_format = standardize_data_format(data_format)
    images = convert_to_tensor(images)
    _check_rank("sobel_edges", images, ranks=(4,))
    dtype = standardize_dtype(images.dtype)
    cdtype = _compute_dtype(dtype)
    x, _ = _to_nhwc(cast(images, cdtype), data_format)
    x = cnp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), mode="reflect")
    # Sobel kernels are separable: [-1, 0, 1] across, [1, 2, 1] along the other axis.
    dy = _taps(_taps(x, (1.0, 2.0, 1.0), 2), (-1.0, 0.0, 1.0), 1)
    dx = _taps(_taps(x, (1.0, 2.0, 1.0), 1), (-1.0, 0.0, 1.0), 2)
    out = cnp.stack([dy, dx], axis=-1)
    if data_format == "channels_first":
        out = cnp.transpose(out, (0, 3, 1, 2, 4))
    return _restore(out, dtype)
