"""MXNet's ``mxnet.image`` functions that Dive into Deep Learning uses: decoding, resizing
and cropping of ``(H, W, C)`` images held in NDArrays.

Decoding (``imread``, ``imdecode``) uses Pillow, imported on first use; resizing uses
the OpenCV-compatible interpolation of ``gluon.data.vision`` (OpenCV's codes: 0 nearest,
1 bilinear, 2 bicubic, 3 area, 4 Lanczos). Results are NDArrays on ``cpu(0)``, uint8
unless the input was another dtype, as MXNet's are.

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

import numpy

import core
from core.ndarray import NDArray
from gluon.data.vision._image import _scale_down, resize
from gluon.data.vision.transforms import RandomRotation
from gluon.data.vision.transforms.geometry import rotate

__all__ = ["center_crop", "color_normalize", "fixed_crop", "imdecode", "imread", "imresize",
           "imrotate", "random_crop", "random_rotate", "resize_short"]


def _host(name: str, src) -> numpy.ndarray:
    x = src.asnumpy() if isinstance(src, NDArray) else numpy.asarray(src)
    if x.ndim != 3:
        raise ValueError(f"image.{name}: expected an image of shape (H, W, C), got shape "
                         f"{tuple(x.shape)}")
    return x


def _decode(name: str, fileobj, flag: int, to_rgb: bool) -> NDArray:
    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError(f"image.{name} decodes with Pillow: pip install pillow") from e
    with Image.open(fileobj) as im:
        x = numpy.asarray(im.convert("RGB" if flag else "L"))
    x = x[..., None] if x.ndim == 2 else x
    if flag and not to_rgb:
        x = x[..., ::-1]  # MXNet/OpenCV's BGR order
    return core.nd.array(numpy.ascontiguousarray(x), dtype="uint8")


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
