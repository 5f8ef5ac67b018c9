"""Image arithmetic in NumPy for the transforms: resizing as OpenCV's ``cv2.resize`` does
it (MXNet's image operators call OpenCV), and MXNet's colour adjustments.

Images are ``(H, W, C)`` or batches ``(N, H, W, C)``.
"""
from __future__ import annotations

import numbers

import numpy

_INTERPOLATIONS = {0: "nearest", 1: "bilinear", 2: "bicubic", 3: "area", 4: "lanczos4"}
_GRAY = numpy.array([0.299, 0.587, 0.114], numpy.float32)


def _check_image(name: str, x, ndims=(3, 4), layout: str = "(H, W, C)"):
    if x.ndim not in ndims:
        batch = "(N, " + layout[1:]
        raise ValueError(f"{name}: expected an image of shape {layout} or a batch of shape "
                         f"{batch}, got shape {tuple(x.shape)}")


def _size_wh(name: str, size) -> tuple:
    """``size`` as (width, height): an int (or a 1-tuple) is a square."""
    if isinstance(size, (tuple, list)) and len(size) == 1:
        size = size[0]
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        size = (int(size), int(size))
    try:
        w, h = (int(s) for s in size)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: size must be an int or a (width, height) pair, got "
                        f"{size!r}") from None
    if w <= 0 or h <= 0:
        raise ValueError(f"{name}: size must be positive, got {size!r}")
    return w, h


def _saturate(y: numpy.ndarray, dtype) -> numpy.ndarray:
    """Cast float results to ``dtype``, clipping to its range for integers (no rounding,
    as MXNet's image operators do)."""
    dtype = numpy.dtype(dtype)
    if dtype.kind in "iu":
        info = numpy.iinfo(dtype)
        y = numpy.clip(y, info.min, info.max)
    return y.astype(dtype)


# ---------------------------------------------------------------------- resizing
def _cubic(t):
    # OpenCV's bicubic kernel (A = -0.75) at distance |t|.
    a = -0.75
    t = numpy.abs(t)
    return numpy.where(t <= 1, ((a + 2) * t - (a + 3)) * t * t + 1,
                       numpy.where(t < 2, ((a * t - 5 * a) * t + 8 * a) * t - 4 * a, 0.0))


def _weights(n_in: int, n_out: int, method: str, downscale_area: bool) -> numpy.ndarray:
    """The (n_out, n_in) interpolation matrix of one axis, following cv2.resize."""
    scale = n_in / n_out
    d = numpy.arange(n_out, dtype=numpy.float64)
    w = numpy.zeros((n_out, n_in), numpy.float64)
    rows = numpy.arange(n_out)
    if method == "nearest":
        src = numpy.minimum(numpy.floor(d * scale).astype(numpy.int64), n_in - 1)
        w[rows, src] = 1.0
        return w
    if method == "area" and downscale_area:
        # Each output pixel averages the source interval [d*scale, (d+1)*scale).
        lo, hi = d * scale, (d + 1) * scale
        i = numpy.arange(n_in, dtype=numpy.float64)
        overlap = numpy.minimum(hi[:, None], i[None, :] + 1) - numpy.maximum(lo[:, None],
                                                                               i[None, :])
        return numpy.clip(overlap, 0.0, None) / scale
    if method == "area":  # upscaling: OpenCV's "area mode" of the linear interpolation
        sx = numpy.floor(d * scale)
        fx = (d + 1) - (sx + 1) / scale
        fx = numpy.where(fx <= 0, 0.0, fx - numpy.floor(fx))
    else:
        fx = (d + 0.5) * scale - 0.5
        sx = numpy.floor(fx)
        fx = fx - sx
    sx = sx.astype(numpy.int64)
    if method in ("bilinear", "area"):
        low, high = sx < 0, sx >= n_in - 1
        fx = numpy.where(low | high, 0.0, fx)
        sx = numpy.clip(sx, 0, n_in - 1)
        numpy.add.at(w, (rows, sx), 1.0 - fx)
        numpy.add.at(w, (rows, numpy.minimum(sx + 1, n_in - 1)), fx)
        return w
    if method == "bicubic":
        offsets = numpy.arange(-1, 3)
        taps = _cubic(fx[:, None] - offsets[None, :])
    else:  # lanczos4
        offsets = numpy.arange(-3, 5)
        t = fx[:, None] - offsets[None, :]
        taps = numpy.sinc(t) * numpy.sinc(t / 4.0)
        taps /= taps.sum(axis=1, keepdims=True)
    idx = numpy.clip(sx[:, None] + offsets[None, :], 0, n_in - 1)
    numpy.add.at(w, (numpy.repeat(rows, len(offsets)), idx.ravel()), taps.ravel())
    return w


def resize(img: numpy.ndarray, width: int, height: int, interpolation: int = 1) -> numpy.ndarray:
    """Resize NumPy images ``(H, W, C)`` or ``(N, H, W, C)`` to ``(height, width)``.

    The interpolation follows ``cv2.resize`` (which MXNet's image operators call):
    pixel centres at half-integers, borders replicated, integer results rounded to
    nearest and clipped (OpenCV's fixed-point arithmetic can differ by 1 for uint8).

    Args:
        img: the image(s), any real dtype; the result has the same dtype.
        width: the output width.
        height: the output height.
        interpolation: 0 nearest, 1 bilinear (default), 2 bicubic, 3 area (box
            averaging when shrinking), 4 Lanczos (8x8), as OpenCV numbers them.

    Returns:
        The resized image(s).

    Raises:
        ValueError: an unknown interpolation, a bad shape or size.

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision.transforms import resize
        >>> resize(np.arange(16, dtype='float32').reshape(4, 4, 1), 2, 2, 3)[..., 0].tolist()
        [[2.5, 4.5], [10.5, 12.5]]
    """
    method = _INTERPOLATIONS.get(interpolation)
    if method is None:
        raise ValueError(f"resize: interpolation must be one of {sorted(_INTERPOLATIONS)} "
                         f"({', '.join(_INTERPOLATIONS.values())}), got {interpolation!r}")
    _check_image("resize", img)
    width, height = _size_wh("resize", (width, height))
    in_h, in_w = img.shape[-3], img.shape[-2]
    if in_h == 0 or in_w == 0:
        raise ValueError(f"resize: cannot resize an empty image of shape {img.shape}")
    if (in_h, in_w) == (height, width):
        return img.copy()
    area_down = height <= in_h and width <= in_w
    wh = _weights(in_h, height, method, area_down)
    ww = _weights(in_w, width, method, area_down)
    if method == "nearest":
        return img[..., wh.argmax(axis=1), :, :][..., ww.argmax(axis=1), :]
    ctype = numpy.float64 if img.dtype == numpy.float64 else numpy.float32
    x = img.astype(ctype, copy=False)
    out = numpy.einsum("oh,...hwc->...owc", wh.astype(ctype), x)
    out = numpy.einsum("pw,...owc->...opc", ww.astype(ctype), out)
    if img.dtype.kind in "iub":
        out = numpy.rint(out)
    return _saturate(out, img.dtype) if img.dtype.kind != "b" else out > 0.5


def _scale_down(src_wh, crop_wh):
    """Shrink a crop size that exceeds the image, keeping its aspect ratio (mx.image)."""
    w, h = crop_wh
    sw, sh = src_wh
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


# ---------------------------------------------------------------------- colour (MXNet's formulas)
# The functions take and return float32 RGB images (H, W, 3) in [0, 255]; the transforms
# cast the result back to the input dtype, clipping integers, after each adjustment.
_EIG = numpy.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                    [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                    [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]], numpy.float32)


def _check_rgb(name: str, x) -> None:
    if x.ndim != 3 or x.shape[-1] != 3:
        raise ValueError(f"{name}: expected an RGB image (H, W, 3), got shape {x.shape}")


def adjust_brightness(x: numpy.ndarray, alpha: float) -> numpy.ndarray:
    """``x * alpha``."""
    return x * numpy.float32(alpha)


def adjust_contrast(x: numpy.ndarray, alpha: float) -> numpy.ndarray:
    """Blend with the mean gray level: ``x * alpha + (1 - alpha) * mean(gray)``."""
    _check_rgb("contrast", x)
    gray_mean = float((x @ _GRAY).mean())
    return x * numpy.float32(alpha) + numpy.float32((1.0 - alpha) * gray_mean)


def adjust_saturation(x: numpy.ndarray, alpha: float) -> numpy.ndarray:
    """Blend with the per-pixel gray: ``x * alpha + (1 - alpha) * gray``."""
    _check_rgb("saturation", x)
    gray = (x @ _GRAY)[..., None]
    return x * numpy.float32(alpha) + numpy.float32(1.0 - alpha) * gray


def adjust_hue(x: numpy.ndarray, alpha: float) -> numpy.ndarray:
    """Rotate the hue by ``alpha`` turns (``alpha * 360`` degrees) in HLS space."""
    _check_rgb("hue", x)
    rgb = x.astype(numpy.float32) / 255.0
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    vmax, vmin = rgb.max(axis=-1), rgb.min(axis=-1)
    diff = vmax - vmin
    light = (vmax + vmin) * 0.5
    chroma = diff > numpy.finfo(numpy.float32).eps
    safe = numpy.where(chroma, diff, 1.0)
    sat = numpy.where(light < 0.5, diff / numpy.maximum(vmax + vmin, 1e-12),
                      diff / numpy.maximum(2.0 - vmax - vmin, 1e-12))
    sat = numpy.where(chroma, sat, 0.0)
    hue = numpy.where(vmax == r, (g - b) * 60.0 / safe,
                      numpy.where(vmax == g, (b - r) * 60.0 / safe + 120.0,
                                  (r - g) * 60.0 / safe + 240.0))
    hue = numpy.where(chroma, hue, 0.0)
    hue = numpy.mod(hue + alpha * 360.0, 360.0) / 60.0
    p2 = numpy.where(light <= 0.5, light * (1 + sat), light + sat - light * sat)
    p1 = 2 * light - p2
    sector = numpy.minimum(numpy.floor(hue).astype(numpy.int64), 5)
    frac = hue - sector
    tab = numpy.stack([p2, p1, p1 + (p2 - p1) * (1 - frac), p1 + (p2 - p1) * frac], axis=-1)
    # For each sector, which of tab[0..3] is blue, green, red (OpenCV's HLS sector table).
    sectors = numpy.array([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])
    bgr = numpy.take_along_axis(tab, sectors[sector], axis=-1)
    out = bgr[..., ::-1]
    out = numpy.where((sat == 0)[..., None], light[..., None], out)
    return (out * 255.0).astype(numpy.float32)


def adjust_lighting(x: numpy.ndarray, alpha) -> numpy.ndarray:
    """AlexNet-style PCA lighting noise: add ``eig @ alpha`` (ImageNet's RGB eigenvectors
    scaled by their eigenvalues) to every pixel."""
    _check_rgb("lighting", x)
    return x + _EIG @ numpy.asarray(alpha, numpy.float32)
