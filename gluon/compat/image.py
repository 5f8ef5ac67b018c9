"""MXNet's ``mxnet.image``: decoding, resizing and cropping of ``(H, W, C)`` images held
in NDArrays, the augmenters (``ResizeAug``, ``RandomCropAug``, ``ColorJitterAug``, ...,
``CreateAugmenter``) and ``ImageIter``, the Python image iterator over ``.rec`` files or
``.lst`` lists of image files.

Decoding (``imread``, ``imdecode``) uses Pillow, imported on first use; resizing uses
the OpenCV-compatible interpolation of ``gluon.data.vision`` (OpenCV's codes: 0 nearest,
1 bilinear, 2 bicubic, 3 area, 4 Lanczos). Results are NDArrays on ``cpu(0)``, uint8
unless the input was another dtype, as MXNet's are. As in MXNet, the augmenters and
``ImageIter``'s shuffling draw from Python's ``random`` module (``LightingAug`` from
``numpy.random``), so ``random.seed`` makes them reproducible.

Example:
    >>> from core import np
    >>> from gluon.compat import image
    >>> img = np.arange(48).reshape(4, 4, 3).astype('uint8')
    >>> image.fixed_crop(img, 1, 0, 2, 3).shape
    (3, 2, 3)
    >>> out, box = image.center_crop(img, (2, 2))
    >>> out.shape, box
    ((2, 2, 3), (1, 1, 2, 2))
"""
from __future__ import annotations

import io
import json
import logging
import os
import random as _pyrandom
import warnings
from numbers import Number

import numpy

import core
from core import recordio
from core.io import DataBatch, DataDesc, DataIter
from core.ndarray import NDArray
from gluon.data.vision._image import _scale_down, resize
from gluon.data.vision.transforms import RandomRotation
from gluon.data.vision.transforms.geometry import rotate

_LOG = logging.getLogger(__name__)

__all__ = ["Augmenter", "BrightnessJitterAug", "CastAug", "CenterCropAug", "ColorJitterAug",
           "ColorNormalizeAug", "ContrastJitterAug", "CreateAugmenter", "ForceResizeAug",
           "HorizontalFlipAug", "HueJitterAug", "ImageIter", "LightingAug", "RandomCropAug",
           "RandomGrayAug", "RandomOrderAug", "RandomSizedCropAug", "ResizeAug",
           "SaturationJitterAug", "SequentialAug", "center_crop", "color_normalize",
           "fixed_crop", "imdecode", "imread", "imresize", "imrotate", "random_crop",
           "random_rotate", "random_size_crop", "resize_short", "scale_down"]


def _host(name: str, src) -> numpy.ndarray:
    x = src.asnumpy() if isinstance(src, NDArray) else numpy.asarray(src)
    if x.ndim != 3:
        raise ValueError(f"image.{name}: expected an image of shape (H, W, C), got shape "
                         f"{tuple(x.shape)}")
    return x


def _decode(name: str, fileobj, flag: int, to_rgb: bool) -> NDArray:
    # core.recordio's Pillow decoder, with OpenCV's gray conversion (as MXNet decodes).
    x = recordio.decode_image(fileobj.getvalue(), 1 if flag else 0, to_rgb, f"image.{name}")
    return core.nd.array(x, dtype="uint8")


def imread(filename: str, flag: int = 1, to_rgb: bool = True) -> NDArray:
    """Read an image file into a ``(H, W, C)`` uint8 NDArray.

    Args:
        filename: the file's path.
        flag: 1 for three colour channels, 0 for one gray channel.
        to_rgb: RGB channel order (True) or OpenCV's BGR (False).

    Returns:
        The image, ``(H, W, 3)`` or ``(H, W, 1)``.

    Example:
        >>> import os, tempfile, numpy, pytest
        >>> Image = pytest.importorskip("PIL.Image")   # decoding needs Pillow
        >>> from gluon.compat import image
        >>> path = os.path.join(tempfile.mkdtemp(), 'a.png')
        >>> Image.fromarray(numpy.zeros((5, 4, 3), 'uint8')).save(path)
        >>> image.imread(path).shape
        (5, 4, 3)
    """
    with open(filename, "rb") as f:
        return _decode("imread", io.BytesIO(f.read()), flag, to_rgb)


def imdecode(buf, flag: int = 1, to_rgb: bool = True) -> NDArray:
    """Decode an encoded image (PNG, JPEG, ... bytes) into a ``(H, W, C)`` uint8 NDArray.

    Args:
        buf: the encoded bytes (``bytes``, ``bytearray`` or a uint8 array).
        flag: 1 for three colour channels, 0 for one gray channel.
        to_rgb: RGB channel order (True) or OpenCV's BGR (False).

    Returns:
        The image.

    Example:
        >>> import io, numpy, pytest
        >>> Image = pytest.importorskip("PIL.Image")   # decoding needs Pillow
        >>> from gluon.compat import image
        >>> buf = io.BytesIO(); Image.fromarray(numpy.zeros((2, 3, 3), 'uint8')).save(buf, 'png')
        >>> image.imdecode(buf.getvalue(), flag=0).shape
        (2, 3, 1)
    """
    if isinstance(buf, NDArray):
        buf = buf.asnumpy()
    return _decode("imdecode", io.BytesIO(bytes(numpy.asarray(buf, numpy.uint8).tobytes()
                                                if not isinstance(buf, (bytes, bytearray))
                                                else buf)), flag, to_rgb)


def imresize(src, w: int, h: int, interp: int = 1) -> NDArray:
    """Resize an image to width ``w`` and height ``h``.

    Args:
        src: the ``(H, W, C)`` image.
        w: the output width.
        h: the output height.
        interp: OpenCV's interpolation code (1 bilinear).

    Returns:
        The ``(h, w, C)`` image, same dtype.

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> image.imresize(np.ones((4, 4, 3)), 2, 3).shape
        (3, 2, 3)
    """
    out = resize(_host("imresize", src), w, h, interp)
    return core.nd.array(out, dtype=out.dtype)


def resize_short(src, size: int, interp: int = 2) -> NDArray:
    """Resize so that the shorter side is ``size``, keeping the aspect ratio.

    Args:
        src: the ``(H, W, C)`` image.
        size: the new length of the shorter side.
        interp: OpenCV's interpolation code.

    Returns:
        The resized image.

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> image.resize_short(np.ones((4, 8, 3)), 2).shape
        (2, 4, 3)
    """
    h, w = src.shape[:2]
    if h > w:
        new_h, new_w = size * h // w, size
    else:
        new_h, new_w = size, size * w // h
    return imresize(src, new_w, new_h, interp)


def fixed_crop(src, x0: int, y0: int, w: int, h: int, size=None, interp: int = 2) -> NDArray:
    """Crop the ``w`` x ``h`` box at ``(x0, y0)``, then resize it to ``size`` if given.

    Args:
        src: the ``(H, W, C)`` image.
        x0: the left edge.
        y0: the top edge.
        w: the box width.
        h: the box height.
        size: ``(width, height)`` to resize the crop to, or None.
        interp: OpenCV's interpolation code for the resize.

    Returns:
        The crop.

    Raises:
        ValueError: the box leaves the image.

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> image.fixed_crop(np.ones((4, 4, 3)), 0, 0, 2, 2, size=(3, 3)).shape
        (3, 3, 3)
    """
    x = _host("fixed_crop", src)
    if x0 < 0 or y0 < 0 or w <= 0 or h <= 0 or x0 + w > x.shape[1] or y0 + h > x.shape[0]:
        raise ValueError(f"image.fixed_crop: the box x0={x0}, y0={y0}, w={w}, h={h} does not "
                         f"fit in the image of shape {tuple(x.shape)}")
    out = x[y0:y0 + h, x0:x0 + w]
    if size is not None and (w, h) != tuple(size):
        out = resize(out, size[0], size[1], interp)
    return core.nd.array(numpy.ascontiguousarray(out), dtype=out.dtype)


def random_crop(src, size, interp: int = 2) -> tuple:
    """Crop a random ``size = (width, height)`` box (shrunk to fit, then resized to ``size``).

    The position is drawn from ``core.random``'s generator, so ``core.random.seed`` makes
    it reproducible.

    Args:
        src: the ``(H, W, C)`` image.
        size: ``(width, height)`` of the output.
        interp: OpenCV's interpolation code.

    Returns:
        ``(crop, (x0, y0, w, h))``.

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> out, (x0, y0, w, h) = image.random_crop(np.ones((5, 6, 3)), (4, 3))
        >>> out.shape, (w, h)
        ((3, 4, 3), (4, 3))
    """
    h, w = src.shape[:2]
    new_w, new_h = _scale_down((w, h), size)
    rng = core.random.get_generator(core.cpu(0))
    x0 = int(rng.integers(0, w - new_w + 1))
    y0 = int(rng.integers(0, h - new_h + 1))
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def center_crop(src, size, interp: int = 2) -> tuple:
    """Crop the central ``size = (width, height)`` box (shrunk to fit, then resized).

    Args:
        src: the ``(H, W, C)`` image.
        size: ``(width, height)`` of the output.
        interp: OpenCV's interpolation code.

    Returns:
        ``(crop, (x0, y0, w, h))``.

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> image.center_crop(np.ones((5, 6, 3)), (2, 2))[1]
        (2, 1, 2, 2)
    """
    h, w = src.shape[:2]
    new_w, new_h = _scale_down((w, h), size)
    x0, y0 = (w - new_w) // 2, (h - new_h) // 2
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def color_normalize(src, mean, std=None) -> NDArray:
    """``(src - mean) / std``, broadcasting over the channels.

    Args:
        src: the image (NDArray).
        mean: the per-channel mean.
        std: the per-channel standard deviation, or None.

    Returns:
        The normalized image.

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> image.color_normalize(np.ones((1, 1, 3)), np.array([1, 0, 0]),
        ...                       np.array([1, 2, 4])).asnumpy().ravel().tolist()
        [0.0, 0.5, 0.25]
    """
    out = src - mean
    return out / std if std is not None else out


def imrotate(src, rotation_degrees, zoom_in: bool = False, zoom_out: bool = False) -> NDArray:
    """Rotate float32 images ``(C, H, W)`` or ``(N, C, H, W)`` counter-clockwise (degrees).

    Args:
        src: the image(s), float32.
        rotation_degrees: the angle; for a batch, one angle or one per image.
        zoom_in: zoom in so that no padding shows.
        zoom_out: zoom out so that the whole image stays visible.

    Returns:
        The rotated image(s), same shape.

    Raises:
        TypeError: a non-float32 input.
        ValueError: both zooms, or as many angles as images not given.

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> x = np.arange(4, dtype='float32').reshape(1, 2, 2)
        >>> image.imrotate(x, 180).asnumpy().round().tolist()
        [[[3.0, 2.0], [1.0, 0.0]]]
    """
    x = src.asnumpy() if isinstance(src, NDArray) else numpy.asarray(src)
    if isinstance(rotation_degrees, NDArray):
        rotation_degrees = rotation_degrees.asnumpy()
    out = rotate(x, rotation_degrees, zoom_in, zoom_out, name="image.imrotate")
    return core.nd.array(out, dtype=out.dtype)


def random_rotate(src, angle_limits, zoom_in: bool = False, zoom_out: bool = False) -> NDArray:
    """Rotate float32 images by angles drawn uniformly from ``angle_limits`` (one per image).

    Args:
        src: the image(s), float32, ``(C, H, W)`` or ``(N, C, H, W)``.
        angle_limits: ``(lower, upper)`` in degrees.
        zoom_in: zoom in so that no padding shows.
        zoom_out: zoom out so that the whole image stays visible.

    Returns:
        The rotated image(s).

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> image.random_rotate(np.ones((2, 3, 4, 4)), (-5, 5)).shape
        (2, 3, 4, 4)
    """
    x = src.asnumpy() if isinstance(src, NDArray) else numpy.asarray(src)
    out = RandomRotation(angle_limits, zoom_in, zoom_out)._forward_np(x)
    return core.nd.array(out, dtype=out.dtype)


# ---------------------------------------------------------------------- crops and sizes
def scale_down(src_size, size) -> tuple:
    """Shrink a crop ``size = (w, h)`` that exceeds ``src_size = (w, h)``, keeping its ratio.

    Example:
        >>> from gluon.compat import image
        >>> image.scale_down((640, 480), (720, 120))
        (640, 106)
    """
    return _scale_down(src_size, size)


def _interp_method(interp: int, sizes=()) -> int:
    """MXNet's interpolation codes: 9 picks by direction, 10 at random (0-4)."""
    if interp == 9:
        if sizes:
            oh, ow, nh, nw = sizes
            if nh > oh and nw > ow:
                return 2
            if nh < oh and nw < ow:
                return 3
            return 1
        return 2
    if interp == 10:
        return _pyrandom.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise ValueError(f"image: unknown interpolation method {interp} (use 0-4, 9 or 10)")
    return interp


def random_size_crop(src, size, area, ratio, interp: int = 2, **kwargs) -> tuple:
    """Crop a random box of random area and aspect ratio, resized to ``size = (w, h)``.

    Args:
        src: the ``(H, W, C)`` image.
        size: the output ``(width, height)``.
        area: the minimum fraction of the area kept, or ``(min, max)``.
        ratio: ``(min, max)`` aspect ratio (width / height).
        interp: OpenCV's interpolation code.

    Returns:
        ``(crop, (x0, y0, w, h))``; the centre crop if 10 draws do not fit.

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> image.random_size_crop(np.ones((8, 8, 3)), (4, 4), 0.5, (0.75, 1.33))[0].shape
        (4, 4, 3)
    """
    h, w = src.shape[:2]
    if "min_area" in kwargs:
        warnings.warn("random_size_crop: `min_area` is deprecated, use `area`",
                      DeprecationWarning, stacklevel=2)
        area = kwargs.pop("min_area")
    if kwargs:
        raise TypeError(f"random_size_crop: unexpected arguments {sorted(kwargs)}")
    if isinstance(area, Number):
        area = (area, 1.0)
    for _ in range(10):
        target = _pyrandom.uniform(area[0], area[1]) * h * w
        new_ratio = numpy.exp(_pyrandom.uniform(numpy.log(ratio[0]), numpy.log(ratio[1])))
        new_w = round(float(numpy.sqrt(target * new_ratio)))
        new_h = round(float(numpy.sqrt(target / new_ratio)))
        if new_w <= w and new_h <= h:
            x0 = _pyrandom.randint(0, w - new_w)
            y0 = _pyrandom.randint(0, h - new_h)
            return (fixed_crop(src, x0, y0, new_w, new_h, size, interp),
                    (x0, y0, new_w, new_h))
    return center_crop(src, size, interp)


# ---------------------------------------------------------------------- augmenters
class Augmenter:
    """Base class of the image augmenters: ``aug(img) -> img`` on ``(H, W, C)`` NDArrays.

    Args:
        **kwargs: the augmenter's parameters, kept for :meth:`dumps`.

    Example:
        >>> from gluon.compat import image
        >>> image.CastAug().dumps()
        '["castaug", {"type": "float32"}]'
    """

    def __init__(self, **kwargs):
        self._kwargs = {}
        for k, v in kwargs.items():
            if isinstance(v, NDArray):
                v = v.asnumpy()
            if isinstance(v, numpy.ndarray):
                v = v.tolist()
            self._kwargs[k] = v

    def dumps(self) -> str:
        """The augmenter as JSON: ``[class name in lower case, parameters]``."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, src):
        raise NotImplementedError(f"{type(self).__name__} must override __call__")


class SequentialAug(Augmenter):
    """Apply augmenters ``ts`` in order.

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> aug = image.SequentialAug([image.ForceResizeAug((3, 2)), image.CastAug()])
        >>> out = aug(np.ones((4, 4, 3), dtype='uint8'))
        >>> out.shape, out.dtype
        ((2, 3, 3), dtype('float32'))
    """

    def __init__(self, ts):
        super().__init__()
        self.ts = ts

    def dumps(self):
        return [type(self).__name__.lower(), [t.dumps() for t in self.ts]]

    def __call__(self, src):
        for t in self.ts:
            src = t(src)
        return src


class ResizeAug(Augmenter):
    """Resize the shorter edge to ``size``.

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> image.ResizeAug(2)(np.ones((4, 8, 3))).shape
        (2, 4, 3)
    """

    def __init__(self, size: int, interp: int = 2):
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src):
        h, w = src.shape[:2]
        new_h, new_w = (self.size * h // w, self.size) if h > w else \
            (self.size, self.size * w // h)
        return imresize(src, new_w, new_h, _interp_method(self.interp, (h, w, new_h, new_w)))


class ForceResizeAug(Augmenter):
    """Resize to ``size = (width, height)`` whatever the aspect ratio.

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> image.ForceResizeAug((3, 5))(np.ones((4, 8, 3))).shape
        (5, 3, 3)
    """

    def __init__(self, size, interp: int = 2):
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src):
        sizes = (src.shape[0], src.shape[1], self.size[1], self.size[0])
        return imresize(src, self.size[0], self.size[1], _interp_method(self.interp, sizes))


class RandomCropAug(Augmenter):
    """Crop a random ``size = (width, height)`` box.

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> image.RandomCropAug((2, 3))(np.ones((4, 8, 3))).shape
        (3, 2, 3)
    """

    def __init__(self, size, interp: int = 2):
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src):
        h, w = src.shape[:2]
        new_w, new_h = _scale_down((w, h), self.size)
        x0 = _pyrandom.randint(0, w - new_w)
        y0 = _pyrandom.randint(0, h - new_h)
        return fixed_crop(src, x0, y0, new_w, new_h, self.size,
                          _interp_method(self.interp, (new_h, new_w, self.size[1],
                                                       self.size[0])))


class RandomSizedCropAug(Augmenter):
    """Crop a random box of random area and aspect ratio, resized to ``size``.

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> image.RandomSizedCropAug((4, 4), 0.3, (0.75, 1.33))(np.ones((8, 9, 3))).shape
        (4, 4, 3)
    """

    def __init__(self, size, area, ratio, interp: int = 2, **kwargs):
        if "min_area" in kwargs:
            warnings.warn("RandomSizedCropAug: `min_area` is deprecated, use `area`",
                          DeprecationWarning, stacklevel=2)
            area = kwargs.pop("min_area")
        if kwargs:
            raise TypeError(f"RandomSizedCropAug: unexpected arguments {sorted(kwargs)}")
        super().__init__(size=size, area=area, ratio=ratio, interp=interp)
        self.size, self.area, self.ratio, self.interp = size, area, ratio, interp

    def __call__(self, src):
        return random_size_crop(src, self.size, self.area, self.ratio,
                                _interp_method(self.interp))[0]


class CenterCropAug(Augmenter):
    """Crop the central ``size = (width, height)`` box.

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> image.CenterCropAug((2, 2))(np.ones((4, 8, 3))).shape
        (2, 2, 3)
    """

    def __init__(self, size, interp: int = 2):
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src):
        return center_crop(src, self.size, _interp_method(self.interp))[0]


class RandomOrderAug(Augmenter):
    """Apply augmenters ``ts`` in a random order.

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> image.RandomOrderAug([image.CastAug()])(np.ones((1, 1, 3), dtype='uint8')).dtype
        dtype('float32')
    """

    def __init__(self, ts):
        super().__init__()
        self.ts = ts

    def dumps(self):
        return [type(self).__name__.lower(), [t.dumps() for t in self.ts]]

    def __call__(self, src):
        _pyrandom.shuffle(self.ts)
        for t in self.ts:
            src = t(src)
        return src


def _float(name: str, src) -> NDArray:
    if not isinstance(src, NDArray):
        src = core.nd.array(numpy.asarray(src, numpy.float32))
    if src.dtype.kind != "f":
        raise TypeError(f"image.{name}: expects a float image (put CastAug before it), got "
                        f"dtype {src.dtype}")
    return src


_GRAY_COEF = numpy.array([[[0.299, 0.587, 0.114]]], numpy.float32)


class BrightnessJitterAug(Augmenter):
    """Scale by ``1 + uniform(-brightness, brightness)``.

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> image.BrightnessJitterAug(0.0)(np.ones((1, 1, 3))).asnumpy().ravel().tolist()
        [1.0, 1.0, 1.0]
    """

    def __init__(self, brightness: float):
        super().__init__(brightness=brightness)
        self.brightness = brightness

    def __call__(self, src):
        src = _float("BrightnessJitterAug", src)
        return src * (1.0 + _pyrandom.uniform(-self.brightness, self.brightness))


class ContrastJitterAug(Augmenter):
    """Blend with the mean gray level by ``alpha = 1 + uniform(-contrast, contrast)``.

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> image.ContrastJitterAug(0.0)(np.ones((1, 1, 3))).shape
        (1, 1, 3)
    """

    def __init__(self, contrast: float):
        super().__init__(contrast=contrast)
        self.contrast = contrast

    def __call__(self, src):
        src = _float("ContrastJitterAug", src)
        alpha = 1.0 + _pyrandom.uniform(-self.contrast, self.contrast)
        x = src.asnumpy()
        gray = (3.0 * (1.0 - alpha) / x.size) * float((x * _GRAY_COEF).sum())
        return src * alpha + gray


class SaturationJitterAug(Augmenter):
    """Blend with the per-pixel gray by ``alpha = 1 + uniform(-saturation, saturation)``.

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> image.SaturationJitterAug(0.5)(np.ones((2, 2, 3))).asnumpy().round(5).max().item()
        1.0
    """

    def __init__(self, saturation: float):
        super().__init__(saturation=saturation)
        self.saturation = saturation

    def __call__(self, src):
        src = _float("SaturationJitterAug", src)
        alpha = 1.0 + _pyrandom.uniform(-self.saturation, self.saturation)
        x = src.asnumpy()
        gray = (x * _GRAY_COEF).sum(axis=2, keepdims=True) * (1.0 - alpha)
        return core.nd.array(x * alpha + gray, dtype=src.dtype)


class HueJitterAug(Augmenter):
    """Rotate the hue by ``uniform(-hue, hue)`` half-turns in YIQ space (MXNet's linear
    approximation).

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> image.HueJitterAug(0.0)(np.ones((1, 1, 3))).asnumpy().round(3).ravel().tolist()
        [1.0, 1.0, 1.0]
    """

    _TYIQ = numpy.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321],
                         [0.211, -0.523, 0.311]])
    _ITYIQ = numpy.array([[1.0, 0.956, 0.621], [1.0, -0.272, -0.647], [1.0, -1.107, 1.705]])

    def __init__(self, hue: float):
        super().__init__(hue=hue)
        self.hue = hue

    def __call__(self, src):
        src = _float("HueJitterAug", src)
        alpha = _pyrandom.uniform(-self.hue, self.hue)
        u, w = numpy.cos(alpha * numpy.pi), numpy.sin(alpha * numpy.pi)
        bt = numpy.array([[1.0, 0.0, 0.0], [0.0, u, -w], [0.0, w, u]])
        t = (self._ITYIQ @ bt @ self._TYIQ).T
        return core.nd.dot(src, core.nd.array(t, dtype=src.dtype))


class ColorJitterAug(RandomOrderAug):
    """Brightness, contrast and saturation jitter, in a random order.

    Example:
        >>> from gluon.compat import image
        >>> len(image.ColorJitterAug(0.1, 0.0, 0.2).ts)
        2
    """

    def __init__(self, brightness: float, contrast: float, saturation: float):
        ts = []
        if brightness > 0:
            ts.append(BrightnessJitterAug(brightness))
        if contrast > 0:
            ts.append(ContrastJitterAug(contrast))
        if saturation > 0:
            ts.append(SaturationJitterAug(saturation))
        super().__init__(ts)


class LightingAug(Augmenter):
    """AlexNet's PCA lighting noise: add ``eigvec @ (alpha * eigval)``, ``alpha`` drawn
    from ``numpy.random.normal(0, alphastd)``.

    Example:
        >>> import numpy
        >>> from core import np
        >>> from gluon.compat import image
        >>> aug = image.LightingAug(0.0, numpy.ones(3), numpy.eye(3))
        >>> aug(np.ones((1, 1, 3))).asnumpy().ravel().tolist()
        [1.0, 1.0, 1.0]
    """

    def __init__(self, alphastd: float, eigval, eigvec):
        super().__init__(alphastd=alphastd, eigval=eigval, eigvec=eigvec)
        self.alphastd = alphastd
        self.eigval, self.eigvec = numpy.asarray(eigval), numpy.asarray(eigvec)

    def __call__(self, src):
        src = _float("LightingAug", src)
        alpha = numpy.random.normal(0, self.alphastd, size=(3,))
        rgb = numpy.dot(self.eigvec * alpha, self.eigval)
        return src + core.nd.array(rgb, dtype=src.dtype)


class ColorNormalizeAug(Augmenter):
    """``(src - mean) / std`` per channel.

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> aug = image.ColorNormalizeAug([1, 1, 1], [2, 2, 2])
        >>> aug(np.ones((1, 1, 3)) * 3).asnumpy().ravel().tolist()
        [1.0, 1.0, 1.0]
    """

    def __init__(self, mean, std):
        super().__init__(mean=mean, std=std)
        as_nd = (lambda v: v if v is None or isinstance(v, NDArray)
                 else core.nd.array(numpy.asarray(v, numpy.float32)))
        self.mean, self.std = as_nd(mean), as_nd(std)

    def __call__(self, src):
        src = _float("ColorNormalizeAug", src)
        if self.mean is not None:
            src = src - self.mean
        if self.std is not None:
            src = src / self.std
        return src


class RandomGrayAug(Augmenter):
    """With probability ``p``, replace every channel by the gray level (3 channels kept).

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> image.RandomGrayAug(1.0)(np.ones((1, 1, 3))).asnumpy().round(3).ravel().tolist()
        [1.0, 1.0, 1.0]
    """

    _MAT = numpy.array([[0.21, 0.21, 0.21], [0.72, 0.72, 0.72], [0.07, 0.07, 0.07]],
                       numpy.float32)

    def __init__(self, p: float):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src):
        if _pyrandom.random() < self.p:
            src = _float("RandomGrayAug", src)
            src = core.nd.dot(src, core.nd.array(self._MAT, dtype=src.dtype))
        return src


class HorizontalFlipAug(Augmenter):
    """With probability ``p``, flip left to right.

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> x = np.arange(6).reshape(1, 2, 3)
        >>> image.HorizontalFlipAug(1.0)(x).asnumpy().tolist()
        [[[3.0, 4.0, 5.0], [0.0, 1.0, 2.0]]]
    """

    def __init__(self, p: float):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src):
        if _pyrandom.random() < self.p:
            src = core.nd.flip(src, axis=1)
        return src


class CastAug(Augmenter):
    """Cast to ``typ`` (float32 by default).

    Example:
        >>> from core import np
        >>> from gluon.compat import image
        >>> image.CastAug()(np.ones((1, 1, 3), dtype='uint8')).dtype
        dtype('float32')
    """

    def __init__(self, typ: str = "float32"):
        super().__init__(type=typ)
        self.typ = typ

    def __call__(self, src):
        return src.astype(self.typ)


def CreateAugmenter(data_shape, resize: int = 0, rand_crop: bool = False,
                    rand_resize: bool = False, rand_mirror: bool = False, mean=None, std=None,
                    brightness: float = 0, contrast: float = 0, saturation: float = 0,
                    hue: float = 0, pca_noise: float = 0, rand_gray: float = 0,
                    inter_method: int = 2) -> list:
    """MXNet's standard augmenter list for ``data_shape = (C, H, W)``.

    In order: resize the shorter edge (``resize`` > 0); a random-sized crop
    (``rand_resize``, needs ``rand_crop``), a random crop (``rand_crop``) or a centre
    crop to ``(W, H)``; a random mirror; cast to float32; colour jitter; hue jitter;
    PCA noise; random gray; normalization (``mean``/``std`` arrays, or True for
    ImageNet's values).

    Returns:
        The list of augmenters.

    Raises:
        ValueError: ``rand_resize`` without ``rand_crop``, or a mean/std that is not an
            array of 1 or 3 values.

    Example:
        >>> from gluon.compat import image
        >>> augs = image.CreateAugmenter((3, 4, 4), resize=6, rand_mirror=True, mean=True)
        >>> [type(a).__name__ for a in augs]
        ['ResizeAug', 'CenterCropAug', 'HorizontalFlipAug', 'CastAug', 'ColorNormalizeAug']
    """
    auglist: list = []
    if resize > 0:
        auglist.append(ResizeAug(resize, inter_method))
    crop_size = (data_shape[2], data_shape[1])
    if rand_resize:
        if not rand_crop:
            raise ValueError("CreateAugmenter: rand_resize=True needs rand_crop=True")
        auglist.append(RandomSizedCropAug(crop_size, 0.08, (3.0 / 4.0, 4.0 / 3.0), inter_method))
    elif rand_crop:
        auglist.append(RandomCropAug(crop_size, inter_method))
    else:
        auglist.append(CenterCropAug(crop_size, inter_method))
    if rand_mirror:
        auglist.append(HorizontalFlipAug(0.5))
    auglist.append(CastAug())
    if brightness or contrast or saturation:
        auglist.append(ColorJitterAug(brightness, contrast, saturation))
    if hue:
        auglist.append(HueJitterAug(hue))
    if pca_noise > 0:
        eigval = numpy.array([55.46, 4.794, 1.148])
        eigvec = numpy.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
                              [-0.5836, -0.6948, 0.4203]])
        auglist.append(LightingAug(pca_noise, eigval, eigvec))
    if rand_gray > 0:
        auglist.append(RandomGrayAug(rand_gray))
    for name, value, default in (("mean", mean, [123.68, 116.28, 103.53]),
                                 ("std", std, [58.395, 57.12, 57.375])):
        if value is True:
            value = core.nd.array(default)
        elif value is not None and (not isinstance(value, (numpy.ndarray, NDArray))
                                    or value.shape[0] not in (1, 3)):
            raise ValueError(f"CreateAugmenter: {name} must be True or an array of 1 or 3 "
                             f"values, got {value!r}")
        if name == "mean":
            mean = value
        else:
            std = value
    if mean is not None or std is not None:
        auglist.append(ColorNormalizeAug(mean, std))
    return auglist


# ---------------------------------------------------------------------- ImageIter
class ImageIter(DataIter):
    """MXNet's Python image iterator: batches ``(batch, 3, H, W)`` float32 from a ``.rec``
    file, or from a ``.lst`` list (or ``imglist``) of image files under ``path_root``.

    Args:
        batch_size: images per batch.
        data_shape: ``(3, height, width)``.
        label_width: labels per image (label batch ``(batch,)`` for 1, else
            ``(batch, label_width)``).
        path_imgrec: the ``.rec`` file.
        path_imglist: a ``.lst`` file (``index<TAB>labels<TAB>path``).
        path_root: the folder the list's paths are relative to.
        path_imgidx: the ``.idx`` file (needed with a ``.rec`` for ``shuffle`` and parts).
        shuffle: reshuffle at every ``reset`` (Python's ``random``).
        part_index, num_parts: read part ``part_index`` of ``num_parts`` equal parts.
        aug_list: the augmenters; default ``CreateAugmenter(data_shape, **kwargs)``.
        imglist: ``[[label(s), path], ...]`` instead of a ``.lst`` file.
        data_name, label_name: names in ``provide_data``/``provide_label``.
        dtype: the label dtype: float32, float64, int32 or int64.
        last_batch_handle: ``'pad'`` (fill from the start, ``pad`` says how many),
            ``'discard'`` or ``'roll_over'`` (the rest starts the next epoch).
        **kwargs: :func:`CreateAugmenter`'s arguments.

    Raises:
        ValueError: no source, a bad ``data_shape``/``dtype``/part, or parts/shuffle on a
            ``.rec`` without ``path_imgidx``.
        FileNotFoundError: a missing file.

    Example:
        >>> import os, tempfile, numpy, pytest
        >>> Image = pytest.importorskip("PIL.Image")
        >>> from gluon.compat import image
        >>> root = tempfile.mkdtemp()
        >>> for i in range(3):
        ...     Image.fromarray(numpy.full((6, 6, 3), i, 'uint8')).save(os.path.join(root, f'{i}.png'))
        >>> it = image.ImageIter(2, (3, 4, 4), imglist=[[i, f'{i}.png'] for i in range(3)],
        ...                      path_root=root)
        >>> [(b.data[0].shape, b.label[0].asnumpy().tolist(), b.pad) for b in it]
        [((2, 3, 4, 4), [0.0, 1.0], 0), ((2, 3, 4, 4), [2.0, 0.0], 1)]
    """

    def __init__(self, batch_size: int, data_shape, label_width: int = 1, path_imgrec=None,
                 path_imglist=None, path_root=None, path_imgidx=None, shuffle: bool = False,
                 part_index: int = 0, num_parts: int = 1, aug_list=None, imglist=None,
                 data_name: str = "data", label_name: str = "softmax_label",
                 dtype: str = "float32", last_batch_handle: str = "pad", **kwargs):
        super().__init__(batch_size)
        if not (path_imgrec or path_imglist or isinstance(imglist, list)):
            raise ValueError("ImageIter: give path_imgrec, path_imglist or imglist")
        if dtype not in ("int32", "float32", "int64", "float64"):
            raise ValueError(f"ImageIter: label dtype must be int32, float32, int64 or "
                             f"float64, got {dtype!r}")
        if last_batch_handle not in ("pad", "discard", "roll_over"):
            raise ValueError(f"ImageIter: last_batch_handle must be 'pad', 'discard' or "
                             f"'roll_over', got {last_batch_handle!r}")
        for field, path in (("path_imgrec", path_imgrec), ("path_imgidx", path_imgidx),
                            ("path_imglist", path_imglist)):
            if path and not os.path.isfile(path):
                raise FileNotFoundError(f"ImageIter: {field}={path!r}: no such file")
        self.imgrec = None
        self.imgidx = None
        if path_imgrec:
            _LOG.info("ImageIter: loading recordio %s...", path_imgrec)
            if path_imgidx:
                self.imgrec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
                self.imgidx = list(self.imgrec.keys)
            else:
                self.imgrec = recordio.MXRecordIO(path_imgrec, "r")
        self.imglist = None
        imgkeys = []
        if path_imglist:
            self.imglist, imgkeys = self._read_list(path_imglist, dtype)
        elif isinstance(imglist, list):
            self.imglist = {}
            for index, img in enumerate(imglist, 1):
                key = str(index)
                if len(img) > 2:
                    label = numpy.asarray(img[:-1], dtype)
                elif isinstance(img[0], Number):
                    label = numpy.asarray([img[0]], dtype)
                else:
                    label = numpy.asarray(img[0], dtype)
                self.imglist[key] = (label, img[-1])
                imgkeys.append(key)
        self.path_root = path_root
        self.check_data_shape(data_shape)
        self.data_shape = tuple(data_shape)
        self.label_width = label_width
        self.dtype = dtype
        self.provide_data = [DataDesc(data_name, (batch_size,) + self.data_shape)]
        label_shape = (batch_size, label_width) if label_width > 1 else (batch_size,)
        self.provide_label = [DataDesc(label_name, label_shape, numpy.dtype(dtype).type)]
        self.shuffle = shuffle
        if self.imgrec is None:
            self.seq = imgkeys
        elif shuffle or num_parts > 1 or path_imgidx:
            if self.imgidx is None:
                raise ValueError("ImageIter: shuffle and num_parts > 1 over a .rec file need "
                                 "path_imgidx (its .idx file)")
            self.seq = self.imgidx
        else:
            self.seq = None
        if num_parts > 1:
            if not 0 <= part_index < num_parts:
                raise ValueError(f"ImageIter: need 0 <= part_index < num_parts, got "
                                 f"part_index={part_index}, num_parts={num_parts}")
            c = len(self.seq) // num_parts
            self.seq = self.seq[part_index * c:(part_index + 1) * c]
        self.auglist = CreateAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        self.cur = 0
        self._allow_read = True
        self.last_batch_handle = last_batch_handle
        self.num_image = len(self.seq) if self.seq is not None else None
        self._cache_data = self._cache_label = self._cache_idx = None
        self.reset()

    @staticmethod
    def _read_list(path: str, dtype: str):
        table, keys = {}, []
        with open(path, encoding="utf-8") as fin:
            for n, line in enumerate(fin, 1):
                fields = line.strip().split("\t")
                if fields == [""]:
                    continue
                try:
                    key, label = int(fields[0]), numpy.asarray(fields[1:-1], numpy.float64)
                except ValueError:
                    raise ValueError(f"ImageIter: {path!r} line {n}: expected "
                                     f"'index<TAB>label(s)<TAB>path', got {line.rstrip()!r}"
                                     ) from None
                if len(fields) < 3:
                    raise ValueError(f"ImageIter: {path!r} line {n}: expected "
                                     f"'index<TAB>label(s)<TAB>path', got {line.rstrip()!r}")
                table[key] = (label.astype(dtype), fields[-1])
                keys.append(key)
        return table, keys

    def reset(self) -> None:
        """Rewind (reshuffling); a rolled-over remainder is kept for the next batch."""
        if self.seq is not None and self.shuffle:
            _pyrandom.shuffle(self.seq)
        if self.last_batch_handle != "roll_over" or self._cache_data is None:
            if self.imgrec is not None:
                self.imgrec.reset()
            self.cur = 0
            self._allow_read = True

    def hard_reset(self) -> None:
        """Rewind and drop any rolled-over remainder."""
        if self.seq is not None and self.shuffle:
            _pyrandom.shuffle(self.seq)
        if self.imgrec is not None:
            self.imgrec.reset()
        self.cur = 0
        self._allow_read = True
        self._cache_data = self._cache_label = self._cache_idx = None

    def next_sample(self):
        """``(label, encoded image bytes)`` of the next image; ``StopIteration`` at the end."""
        if not self._allow_read:
            raise StopIteration
        if self.seq is not None:
            if self.cur >= self.num_image:
                if self.last_batch_handle != "discard":
                    self.cur = 0
                raise StopIteration
            idx = self.seq[self.cur]
            self.cur += 1
            if self.imgrec is not None:
                header, img = recordio.unpack(self.imgrec.read_idx(idx))
                if self.imglist is None:
                    return header.label, img
                return self.imglist[idx][0], img
            label, fname = self.imglist[idx]
            return label, self.read_image(fname)
        s = self.imgrec.read()
        if s is None:
            if self.last_batch_handle != "discard":
                self.imgrec.reset()
            raise StopIteration
        header, img = recordio.unpack(s)
        return header.label, img

    def _label_row(self, label):
        label = numpy.asarray(label, numpy.float64).ravel()
        if label.size != self.label_width:
            raise ValueError(f"ImageIter: an image has {label.size} label(s) but "
                             f"label_width={self.label_width}")
        return label if self.label_width > 1 else label[0]

    def _batchify(self, batch_data, batch_label, start: int = 0) -> int:
        i = start
        try:
            while i < self.batch_size:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image(data)
                except RuntimeError as e:
                    _LOG.debug("Invalid image, skipping: %s", e)
                    continue
                data = self.augmentation_transform(data)
                batch_data[i] = self.postprocess_data(data)
                batch_label[i] = self._label_row(label)
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def next(self) -> DataBatch:
        """The next batch (``StopIteration`` at the end of the epoch)."""
        c, h, w = self.data_shape
        if self._cache_data is not None:
            batch_data, batch_label, i = self._cache_data, self._cache_label, self._cache_idx
        else:
            batch_data = numpy.zeros((self.batch_size, c, h, w), numpy.float32)
            batch_label = numpy.zeros(self.provide_label[0].shape, self.dtype)
            i = self._batchify(batch_data, batch_label)
        pad = self.batch_size - i
        if pad:
            if self.last_batch_handle == "discard":
                raise StopIteration
            if self.last_batch_handle == "roll_over" and self._cache_data is None:
                self._cache_data, self._cache_label, self._cache_idx = \
                    batch_data, batch_label, i
                raise StopIteration
            self._batchify(batch_data, batch_label, i)
            if self.last_batch_handle == "pad":
                self._allow_read = False
            else:
                self._cache_data = self._cache_label = self._cache_idx = None
        return DataBatch([core.nd.array(batch_data)],
                         [core.nd.array(batch_label, dtype=self.dtype)], pad=pad)

    def check_data_shape(self, data_shape) -> None:
        """Raise ``ValueError`` unless ``data_shape`` is ``(3, H, W)``."""
        if len(data_shape) != 3:
            raise ValueError(f"ImageIter: data_shape must be (channels, height, width), got "
                             f"{tuple(data_shape)}")
        if data_shape[0] != 3:
            raise ValueError(f"ImageIter: expects 3 channels, data_shape is "
                             f"{tuple(data_shape)}")

    def check_valid_image(self, data) -> None:
        """Raise ``RuntimeError`` for an empty image (which ``_batchify`` skips)."""
        if len(data[0].shape) == 0:
            raise RuntimeError("ImageIter: the image's shape is wrong")

    def imdecode(self, s) -> NDArray:
        """Decode one image's bytes (``RuntimeError`` naming the image if it fails)."""
        try:
            return imdecode(s)
        except (ValueError, OSError) as e:
            if self.seq is not None and self.num_image:
                idx = self.seq[(self.cur % self.num_image) - 1]
            else:
                idx = self.cur
            where = (f"filename: {self.imglist[idx][1]}" if self.imglist is not None
                     and idx in self.imglist else f"index: {idx}")
            raise RuntimeError(f"ImageIter: broken image {where}, {e}") from None

    def read_image(self, fname: str) -> bytes:
        """The bytes of ``path_root/fname``."""
        path = os.path.join(self.path_root or "", fname)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"ImageIter: image {path!r} (from the list) does not "
                                    f"exist")
        with open(path, "rb") as fin:
            return fin.read()

    def augmentation_transform(self, data):
        """Apply ``auglist`` in order."""
        for aug in self.auglist:
            data = aug(data)
        return data

    def postprocess_data(self, datum) -> numpy.ndarray:
        """``(H, W, C)`` -> ``(C, H, W)``, checked against ``data_shape``."""
        x = datum.asnumpy() if isinstance(datum, NDArray) else numpy.asarray(datum)
        x = x.transpose(2, 0, 1)
        if x.shape != self.data_shape:
            raise ValueError(f"ImageIter: the augmented image has shape {x.shape} (C, H, W), "
                             f"data_shape is {self.data_shape}; add a crop or resize "
                             f"augmenter")
        return x
