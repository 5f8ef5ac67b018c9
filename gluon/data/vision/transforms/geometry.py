"""Geometric transforms: resizing, cropping, flipping and rotating images."""
from __future__ import annotations

import math
import numbers

import numpy

from core import nd

from .._image import _check_image, _scale_down, _size_wh, resize
from ._base import _rng, _Transform


def _resize_hw(name: str, img: numpy.ndarray, size, keep_ratio: bool, interpolation: int):
    _check_image(name, img)
    h, w = img.shape[-3], img.shape[-2]
    if isinstance(size, (tuple, list)) and len(size) == 1:
        size = size[0]
    if isinstance(size, numbers.Integral) and not isinstance(size, bool) and keep_ratio:
        s = int(size)
        if s <= 0:
            raise ValueError(f"{name}: size must be positive, got {size}")
        new_w, new_h = (s, h * s // w) if h > w else (w * s // h, s)
    else:
        new_w, new_h = _size_wh(name, size)
    return resize(img, new_w, new_h, interpolation)


class Resize(_Transform):
    """Resizes images ``(H, W, C)`` or batches ``(N, H, W, C)``; apply before ``ToTensor``.

    Args:
        size: an int (a square, or with ``keep_ratio`` the shorter edge) or a
            ``(width, height)`` pair.
        keep_ratio: with an int ``size``, resize the shorter edge to ``size`` and keep
            the aspect ratio (the longer edge rounds down).
        interpolation: 0 nearest, 1 bilinear (default), 2 bicubic, 3 area, 4 Lanczos.

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> transforms.Resize((8, 4))(np.zeros((10, 10, 3), 'uint8')).shape
        (4, 8, 3)
        >>> transforms.Resize(5, keep_ratio=True)(np.zeros((10, 20, 3), 'uint8')).shape
        (5, 10, 3)
    """

    def __init__(self, size, keep_ratio: bool = False, interpolation: int = 1):
        self._size = size
        self._keep = bool(keep_ratio)
        self._interpolation = interpolation

    def _forward_np(self, x):
        return _resize_hw("Resize", x, self._size, self._keep, self._interpolation)


def _crop_resize(x, x0: int, y0: int, w: int, h: int, size, interpolation):
    out = x[..., y0:y0 + h, x0:x0 + w, :]
    if size is not None and (w, h) != tuple(size):
        out = resize(out, size[0], size[1], interpolation)
    return out


class CropResize(_Transform):
    """Crops a fixed rectangle, then optionally resizes it.

    Args:
        x: the left edge of the crop.
        y: the top edge.
        width: the crop's width.
        height: the crop's height.
        size: None (no resize), an int or a ``(width, height)`` pair.
        interpolation: as in :class:`Resize`; default bilinear.

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> transforms.CropResize(1, 2, 3, 4)(np.zeros((10, 10, 3))).shape
        (4, 3, 3)
    """

    def __init__(self, x: int, y: int, width: int, height: int, size=None,
                 interpolation: int | None = None):
        self._box = (int(x), int(y), int(width), int(height))
        self._size = None if size is None else _size_wh("CropResize", size)
        self._interpolation = 1 if interpolation is None else interpolation

    def _forward_np(self, x):
        _check_image("CropResize", x)
        x0, y0, w, h = self._box
        if x0 < 0 or y0 < 0 or w <= 0 or h <= 0 or x0 + w > x.shape[-2] or \
                y0 + h > x.shape[-3]:
            raise ValueError(f"CropResize: the box (x={x0}, y={y0}, width={w}, height={h}) "
                             f"does not fit in an image of shape {x.shape}")
        return _crop_resize(x, x0, y0, w, h, self._size, self._interpolation)


class CenterCrop(_Transform):
    """Crops the centre of the image to ``size``; a larger ``size`` than the image
    crops the largest centred box of that aspect ratio and upsamples it.

    Args:
        size: an int (a square) or a ``(width, height)`` pair.
        interpolation: used when the crop must be resized; default bilinear.

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> img = np.arange(25).reshape(5, 5, 1)
        >>> transforms.CenterCrop(3)(img)[..., 0].tolist()
        [[6, 7, 8], [11, 12, 13], [16, 17, 18]]
    """

    def __init__(self, size, interpolation: int = 1):
        self._size = _size_wh("CenterCrop", size)
        self._interpolation = interpolation

    def _forward_np(self, x):
        _check_image("CenterCrop", x)
        h, w = x.shape[-3], x.shape[-2]
        new_w, new_h = _scale_down((w, h), self._size)
        x0, y0 = int((w - new_w) / 2), int((h - new_h) / 2)
        return _crop_resize(x, x0, y0, new_w, new_h, self._size, self._interpolation)


class RandomResizedCrop(_Transform):
    """Crops a random area and aspect ratio of the image, then resizes it to ``size``.

    Up to 10 tries draw an area fraction in ``scale`` and a log-uniform aspect ratio
    (width / height) in ``ratio``; the first crop that fits is taken at a random
    position. If none fits, the image is centre-cropped (as in MXNet).

    Args:
        size: the output size: an int (a square) or a ``(width, height)`` pair.
        scale: the range of the crop's area, as fractions of the image's.
        ratio: the range of the crop's aspect ratio.
        interpolation: as in :class:`Resize`; default bilinear.

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> transforms.RandomResizedCrop(8)(np.zeros((20, 30, 3), 'uint8')).shape
        (8, 8, 3)
    """

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation: int = 1):
        self._size = _size_wh("RandomResizedCrop", size)
        if isinstance(scale, numbers.Real):
            scale = (scale, 1.0)
        self._scale = (float(scale[0]), float(scale[1]))
        self._ratio = (float(ratio[0]), float(ratio[1]))
        if not 0 < self._ratio[0] <= self._ratio[1]:
            raise ValueError(f"RandomResizedCrop: ratio must be (low, high) with "
                             f"0 < low <= high, got {ratio!r}")
        self._interpolation = interpolation

    def _forward_np(self, x):
        _check_image("RandomResizedCrop", x)
        h, w = x.shape[-3], x.shape[-2]
        rng = _rng()
        log_ratio = (math.log(self._ratio[0]), math.log(self._ratio[1]))
        for _ in range(10):
            target_area = rng.uniform(*self._scale) * h * w
            aspect = math.exp(rng.uniform(*log_ratio))
            new_w = round(math.sqrt(target_area * aspect))
            new_h = round(math.sqrt(target_area / aspect))
            if 0 < new_w <= w and 0 < new_h <= h:
                x0 = int(rng.integers(0, w - new_w + 1))
                y0 = int(rng.integers(0, h - new_h + 1))
                return _crop_resize(x, x0, y0, new_w, new_h, self._size, self._interpolation)
        return CenterCrop(self._size, self._interpolation)._forward_np(x)


# ---------------------------------------------------------------------- flips
class _RandomFlip(_Transform):
    _axis = -2
    _name = ""

    def _forward_np(self, x):
        _check_image(self._name, x)
        if _rng().random() < 0.5:
            return numpy.flip(x, axis=self._axis).copy()
        return x

    def _forward_nd(self, x):
        _check_image(self._name, x)
        if _rng().random() < 0.5:
            return nd.flip(x, axis=x.ndim + self._axis)
        return x


class RandomFlipLeftRight(_RandomFlip):
    """Flips the image left to right (the W axis of ``(H, W, C)``) with probability 0.5.

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> out = transforms.RandomFlipLeftRight()(np.array([[[1], [2]]]))
        >>> out[..., 0].tolist() in ([[1, 2]], [[2, 1]])
        True
    """

    _axis = -2
    _name = "RandomFlipLeftRight"


class RandomFlipTopBottom(_RandomFlip):
    """Flips the image top to bottom (the H axis of ``(H, W, C)``) with probability 0.5.

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> transforms.RandomFlipTopBottom()(np.zeros((4, 2, 3))).shape
        (4, 2, 3)
    """

    _axis = -3
    _name = "RandomFlipTopBottom"


class RandomCrop(_Transform):
    """Crops a random ``size = (width, height)`` box, after optional constant padding.

    A box larger than the (padded) image takes the whole image along that side and is
    then resized to ``size``, as in MXNet. A batch ``(N, H, W, C)`` gets one box.

    Args:
        size: an int (a square) or a ``(width, height)`` pair.
        pad: None; an int padded on all four sides; or ``(top, bottom, left, right)``.
        pad_value: the value of padded pixels.
        interpolation: for the resize, as in :class:`Resize`; default bilinear.

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> transforms.RandomCrop(32, pad=4)(np.zeros((32, 32, 3), 'uint8')).shape
        (32, 32, 3)
    """

    def __init__(self, size, pad=None, pad_value=0, interpolation: int = 1):
        self._size = _size_wh("RandomCrop", size)
        if pad is None or isinstance(pad, numbers.Integral):
            p = int(pad or 0)
            self._pad = ((p, p), (p, p))
        elif len(pad) == 4:
            self._pad = ((int(pad[0]), int(pad[1])), (int(pad[2]), int(pad[3])))
        else:
            raise ValueError(f"RandomCrop: pad must be an int or (top, bottom, left, right), "
                             f"got {pad!r}")
        if min(min(p) for p in self._pad) < 0:
            raise ValueError(f"RandomCrop: pad must be >= 0, got {pad!r}")
        self._pad_value = pad_value
        self._interpolation = interpolation

    def _forward_np(self, x):
        _check_image("RandomCrop", x)
        if any(any(p) for p in self._pad):
            widths = [(0, 0)] * (x.ndim - 3) + list(self._pad) + [(0, 0)]
            x = numpy.pad(x, widths, mode="constant", constant_values=self._pad_value)
        h, w = x.shape[-3], x.shape[-2]
        cw, ch = min(self._size[0], w), min(self._size[1], h)
        rng = _rng()
        x0, y0 = int(rng.integers(0, w - cw + 1)), int(rng.integers(0, h - ch + 1))
        return _crop_resize(x, x0, y0, cw, ch, self._size, self._interpolation)


def _rotate(x: numpy.ndarray, degrees: numpy.ndarray, zoom_in: bool,
            zoom_out: bool) -> numpy.ndarray:
    """Rotate float32 images ``(N, C, H, W)`` counter-clockwise about their centres.

    As MXNet's ``image.imrotate``: output pixel ``p`` samples the input bilinearly at
    ``c + g * R(angle) (p - c)`` (``c`` the centre, ``g`` the zoom); neighbours outside
    the image count as 0. ``zoom_in`` shrinks the sampled area until no padding shows,
    ``zoom_out`` grows it until the whole image fits.
    """
    n, _, h, w = x.shape
    rad = numpy.deg2rad(degrees.astype(numpy.float64)).reshape(n, 1, 1)
    hs, ws = (h - 1) / 2.0, (w - 1) / 2.0
    hh = numpy.arange(h, dtype=numpy.float64).reshape(1, h, 1) - hs
    ww = numpy.arange(w, dtype=numpy.float64).reshape(1, 1, w) - ws
    cos, sin = numpy.cos(rad), numpy.sin(rad)
    src_w, src_h = ww * cos - hh * sin, ww * sin + hh * cos
    if zoom_in or zoom_out:
        rho, corner = math.hypot(h, w), math.atan2(h, w)
        a = numpy.abs(rad)
        max_x = numpy.maximum(numpy.abs(rho * numpy.cos(corner + a)),
                              numpy.abs(rho * numpy.cos(corner - a)))
        max_y = numpy.maximum(numpy.abs(rho * numpy.sin(corner + a)),
                              numpy.abs(rho * numpy.sin(corner - a)))
        scale = (numpy.maximum(max_x / w, max_y / h) if zoom_out
                 else numpy.minimum(w / max_x, h / max_y))
        src_w, src_h = src_w * scale, src_h * scale
    src_w, src_h = src_w + ws, src_h + hs
    x0, y0 = numpy.floor(src_w).astype(numpy.int64), numpy.floor(src_h).astype(numpy.int64)
    out = numpy.zeros_like(x)
    batch = numpy.arange(n).reshape(n, 1, 1)
    for dy in (0, 1):
        for dx in (0, 1):
            xi, yi = x0 + dx, y0 + dy
            weight = (1 - numpy.abs(src_w - xi)) * (1 - numpy.abs(src_h - yi))
            inside = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
            vals = x[batch, :, numpy.clip(yi, 0, h - 1), numpy.clip(xi, 0, w - 1)]
            out += numpy.moveaxis(vals * (weight * inside)[..., None], -1, 1).astype(x.dtype)
    return out


def rotate(x: numpy.ndarray, degrees, zoom_in: bool = False, zoom_out: bool = False,
           name: str = "rotate") -> numpy.ndarray:
    """Rotate float32 NumPy images ``(C, H, W)`` or ``(N, C, H, W)`` counter-clockwise.

    Args:
        x: the image(s), float32.
        degrees: one angle, or (for a batch) one per image.
        zoom_in: zoom in so that no padding shows.
        zoom_out: zoom out so that the whole image stays visible.
        name: the caller's name for error messages.

    Returns:
        The rotated image(s), same shape and dtype.

    Raises:
        TypeError: a non-float32 input.
        ValueError: both zooms, a bad shape, or as many angles as images not given.

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision.transforms.geometry import rotate
        >>> rotate(np.eye(2, dtype='float32')[None], 90)[0].round().tolist()
        [[0.0, 1.0], [1.0, 0.0]]
    """
    if zoom_in and zoom_out:
        raise ValueError(f"{name}: zoom_in and zoom_out cannot both be True")
    if numpy.dtype(x.dtype) != numpy.float32:
        raise TypeError(f"{name}: only float32 images are supported, got {x.dtype}; apply "
                        f"ToTensor first")
    _check_image(name, x, layout="(C, H, W)")
    batch = x if x.ndim == 4 else x[None]
    angles = numpy.asarray(degrees, numpy.float64).reshape(-1)
    if angles.size not in (1, batch.shape[0]):
        raise ValueError(f"{name}: {angles.size} angles for {batch.shape[0]} images")
    out = _rotate(batch, numpy.broadcast_to(angles, (batch.shape[0],)), zoom_in, zoom_out)
    return out if x.ndim == 4 else out[0]


class Rotate(_Transform):
    """Rotates float32 images ``(C, H, W)`` or ``(N, C, H, W)`` by a fixed angle.

    Counter-clockwise in degrees about the centre, keeping the shape; uncovered pixels
    are 0 (MXNet's ``image.imrotate``).

    Args:
        rotation_degrees: the angle in degrees.
        zoom_in: zoom in so that no padding shows.
        zoom_out: zoom out so that the whole image stays visible.

    Raises:
        ValueError: both zooms asked for.
        TypeError: a non-float32 input (apply ``ToTensor`` first).

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> img = np.arange(9, dtype='float32').reshape(1, 3, 3)
        >>> transforms.Rotate(90)(img)[0].round().tolist()
        [[2.0, 5.0, 8.0], [1.0, 4.0, 7.0], [0.0, 3.0, 6.0]]
    """

    def __init__(self, rotation_degrees: float, zoom_in: bool = False, zoom_out: bool = False):
        if zoom_in and zoom_out:
            raise ValueError(f"{type(self).__name__}: zoom_in and zoom_out cannot both be True")
        self._degrees = float(rotation_degrees)
        self._zoom = (bool(zoom_in), bool(zoom_out))

    def _angles(self, n: int) -> numpy.ndarray:
        return numpy.full(n, self._degrees)

    def _forward_np(self, x):
        n = x.shape[0] if x.ndim == 4 else 1
        return rotate(x, self._angles(n), *self._zoom, name=type(self).__name__)


class RandomRotation(Rotate):
    """Rotates float32 images by a random angle drawn uniformly from ``angle_limits``.

    Each image of a batch gets its own angle; with probability ``1 - rotate_with_proba``
    the input is returned unchanged.

    Args:
        angle_limits: ``(lower, upper)`` in degrees, ``lower < upper``.
        zoom_in: zoom in so that no padding shows.
        zoom_out: zoom out so that the whole image stays visible.
        rotate_with_proba: the probability of rotating at all.

    Raises:
        ValueError: unordered limits, a probability outside [0, 1], both zooms.

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> t = transforms.RandomRotation((-10, 10), zoom_in=True)
        >>> t(np.ones((2, 3, 8, 8), 'float32')).shape
        (2, 3, 8, 8)
    """

    def __init__(self, angle_limits, zoom_in: bool = False, zoom_out: bool = False,
                 rotate_with_proba: float = 1.0):
        lower, upper = angle_limits
        if lower >= upper:
            raise ValueError(f"RandomRotation: angle_limits must be (lower, upper) with "
                             f"lower < upper, got {angle_limits!r}")
        if not 0.0 <= rotate_with_proba <= 1.0:
            raise ValueError(f"RandomRotation: rotate_with_proba must be in [0, 1], got "
                             f"{rotate_with_proba}")
        super().__init__(0.0, zoom_in, zoom_out)
        self._limits = (float(lower), float(upper))
        self._proba = float(rotate_with_proba)

    def _angles(self, n: int) -> numpy.ndarray:
        return _rng().uniform(*self._limits, size=n)

    def _forward_np(self, x):
        if _rng().random() >= self._proba:
            return x
        return super()._forward_np(x)
