"""Image transforms (MXNet 1.9's ``gluon.data.vision.transforms``).

Each transform is a callable object taking one image, ``(H, W, C)``, or a batch,
``(N, H, W, C)`` (``Normalize``: ``(C, H, W)`` / ``(N, C, H, W)``). An NDArray
input gives an NDArray on the same context; a NumPy array gives a NumPy array, so
transforms can run on NumPy in DataLoader workers. Resizing and cropping are done
in NumPy (separable interpolation matching OpenCV's ``cv2.resize``, which MXNet
uses); ``ToTensor``, ``Normalize``, ``Cast`` and the flips of NDArrays use core
operators. Random transforms draw from ``core.random``'s generator of ``cpu(0)``,
so ``core.random.seed`` makes them reproducible (DataLoader workers reseed it).

In MXNet these are (Hybrid)Blocks; here they are plain callables with a no-op
``hybridize()``, usable anywhere a Block is called.

Example:
    >>> import numpy as np
    >>> from gluon.data.vision import transforms
    >>> t = transforms.Compose([transforms.Resize(16), transforms.CenterCrop(8),
    ...                         transforms.ToTensor(),
    ...                         transforms.Normalize(0.5, 0.25)])
    >>> img = np.random.randint(0, 256, (20, 30, 3)).astype('uint8')
    >>> out = t(img)
    >>> out.shape, out.dtype
    ((3, 8, 8), dtype('float32'))
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence

import numpy

import core
from core import NDArray, nd

from ._image import (
    _check_image,
    _saturate,
    _scale_down,
    _size_wh,
    adjust_brightness,
    adjust_contrast,
    adjust_hue,
    adjust_lighting,
    adjust_saturation,
    resize,
)

__all__ = ["Cast", "CenterCrop", "Compose", "CropResize", "Normalize", "RandomApply",
           "RandomBrightness", "RandomColorJitter", "RandomContrast", "RandomFlipLeftRight",
           "RandomFlipTopBottom", "RandomHue", "RandomLighting", "RandomResizedCrop",
           "RandomSaturation", "Resize", "ToTensor", "resize"]

def _rng():
    return core.random.get_generator(core.cpu(0))


class _Transform:
    """Base of the transforms: ``__call__`` dispatches NumPy / NDArray inputs."""

    def __call__(self, x):
        if isinstance(x, NDArray):
            return self._forward_nd(x)
        return self._forward_np(numpy.asarray(x))

    def forward(self, x):
        """Same as calling the transform."""
        return self(x)

    def hybridize(self, active: bool = True, **kwargs) -> None:
        """Accepted for compatibility with MXNet's HybridBlocks; does nothing."""

    def _forward_np(self, x: numpy.ndarray) -> numpy.ndarray:
        raise NotImplementedError

    def _forward_nd(self, x: NDArray) -> NDArray:
        out = self._forward_np(x.asnumpy())
        return nd.array(out, ctx=x.context, dtype=out.dtype)

    def __repr__(self) -> str:
        args = ", ".join(f"{k.lstrip('_')}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({args})"


class Compose(_Transform):
    """Applies transforms one after the other.

    Args:
        transforms: the transforms (any callables taking and returning one value).

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> t = transforms.Compose([transforms.Cast('float32'), lambda x: x * 2])
        >>> t(np.ones((1, 1, 1), 'uint8')).tolist()
        [[[2.0]]]
    """

    def __init__(self, transforms: Sequence[Callable]):
        self._transforms = list(transforms)
        for t in self._transforms:
            if not callable(t):
                raise TypeError(f"Compose: every transform must be callable, got "
                                f"{type(t).__name__}")

    def __call__(self, x):
        for t in self._transforms:
            x = t(x)
        return x

    def __getitem__(self, i):
        return self._transforms[i]

    def __len__(self) -> int:
        return len(self._transforms)

    def hybridize(self, active: bool = True, **kwargs) -> None:
        """Calls ``hybridize`` of the transforms that have it."""
        for t in self._transforms:
            if hasattr(t, "hybridize"):
                t.hybridize(active, **kwargs)


class RandomApply(Compose):
    """Applies a list of transforms, in order, with probability ``p`` (else none).

    Args:
        transforms: the transforms.
        p: the probability of applying them.

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> transforms.RandomApply([lambda x: x + 1], p=0.0)(np.zeros(2)).tolist()
        [0.0, 0.0]
    """

    def __init__(self, transforms: Sequence[Callable], p: float = 0.5):
        super().__init__(transforms)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"RandomApply: p must be in [0, 1], got {p}")
        self._p = p

    def __call__(self, x):
        if _rng().random() < self._p:
            return super().__call__(x)
        return x


class Cast(_Transform):
    """Casts to a dtype.

    Args:
        dtype: the dtype (a string or NumPy dtype); default float32.

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> transforms.Cast('float16')(np.ones(2, 'uint8')).dtype
        dtype('float16')
    """

    def __init__(self, dtype="float32"):
        self._dtype = dtype

    def _forward_np(self, x):
        return x.astype(core.dtypes.as_dtype(self._dtype))

    def _forward_nd(self, x):
        return x.astype(self._dtype)


class ToTensor(_Transform):
    """Converts images ``(H, W, C)`` in [0, 255] to float32 tensors ``(C, H, W)`` in [0, 1].

    Batches ``(N, H, W, C)`` become ``(N, C, H, W)``. Any input dtype is divided by
    255, as in MXNet.

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> out = transforms.ToTensor()(np.full((4, 2, 3), 255, 'uint8'))
        >>> out.shape, out.dtype, float(out.max())
        ((3, 4, 2), dtype('float32'), 1.0)
    """

    def _axes(self, x):
        _check_image("ToTensor", x)
        return (2, 0, 1) if x.ndim == 3 else (0, 3, 1, 2)

    def _forward_np(self, x):
        axes = self._axes(x)
        return numpy.ascontiguousarray((x.astype(numpy.float32) / 255.0).transpose(axes))

    def _forward_nd(self, x):
        axes = self._axes(x)
        return nd.transpose(x.astype("float32") / 255.0, axes=axes)


class Normalize(_Transform):
    """Normalizes tensors ``(C, H, W)`` or ``(N, C, H, W)``: ``(x[c] - mean[c]) / std[c]``.

    Args:
        mean: a float (every channel) or one value per channel.
        std: a float (every channel) or one value per channel; non-zero.

    Raises:
        TypeError: the input is not floating point (apply ``ToTensor`` first).
        ValueError: the number of means or stds differs from the channels.

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> t = transforms.Normalize(mean=(0, 1, 2), std=(1, 2, 4))
        >>> t(np.ones((3, 1, 1), 'float32')).ravel().tolist()
        [1.0, 0.0, -0.25]
    """

    def __init__(self, mean=0.0, std=1.0):
        self._mean = mean
        self._std = std
        if numpy.any(numpy.asarray(std, numpy.float64) == 0):
            raise ValueError(f"Normalize: std must be non-zero, got {std!r}")

    def _params(self, x):
        _check_image("Normalize", x, layout="(C, H, W)")
        dtype = numpy.dtype(x.dtype)
        if dtype.kind != "f" and dtype.name != "bfloat16":
            raise TypeError(f"Normalize: expected a floating-point tensor (C, H, W), got "
                            f"{dtype.name}; apply ToTensor (or Cast) first")
        channels = x.shape[-3]
        out = []
        for name, v in (("mean", self._mean), ("std", self._std)):
            v = numpy.asarray(v, numpy.float64).reshape(-1)
            if v.size == 1:
                v = numpy.repeat(v, channels)
            if v.size != channels:
                raise ValueError(f"Normalize: {v.size} {name} values for {channels} channels "
                                 f"(input shape {tuple(x.shape)})")
            out.append(v.reshape(channels, 1, 1).astype(dtype))
        return out

    def _forward_np(self, x):
        mean, std = self._params(x)
        return ((x - mean) / std).astype(x.dtype)

    def _forward_nd(self, x):
        mean, std = self._params(x)
        return (x - nd.array(mean, ctx=x.context, dtype=x.dtype)) / \
            nd.array(std, ctx=x.context, dtype=x.dtype)


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


# ---------------------------------------------------------------------- flips and colour
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


class _RandomColor(_Transform):
    """A colour adjustment of an RGB image (H, W, 3) by a random factor; integer images are
    clipped to their range (uint8: [0, 255]) and truncated, as in MXNet."""

    _name = ""

    def __init__(self, amount: float):
        if amount < 0:
            raise ValueError(f"{self._name}: the jitter amount must be >= 0, got {amount}")
        self._amount = amount

    def _draw(self):
        return _rng().uniform(max(0.0, 1.0 - self._amount), 1.0 + self._amount)

    def _forward_np(self, x):
        _check_image(self._name, x, ndims=(3,))
        alpha = self._draw()
        if x.shape[-1] == 1 and self._adjust is not adjust_brightness:
            return x  # gray images: only the brightness changes
        try:
            return _saturate(self._adjust(x.astype(numpy.float32), alpha), x.dtype)
        except ValueError as e:
            raise ValueError(f"{self._name}: {e}") from None

    @staticmethod
    def _adjust(x, alpha):
        raise NotImplementedError


class RandomBrightness(_RandomColor):
    """Scales the pixel values by a factor drawn from ``[max(0, 1 - b), 1 + b]``.

    Args:
        brightness: the jitter amount ``b`` (>= 0).

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> transforms.RandomBrightness(0.0)(np.full((1, 1, 3), 7, 'uint8')).ravel().tolist()
        [7, 7, 7]
    """

    _name = "RandomBrightness"
    _adjust = staticmethod(adjust_brightness)

    def __init__(self, brightness: float):
        super().__init__(brightness)


class RandomContrast(_RandomColor):
    """Blends an RGB image ``(H, W, 3)`` with its mean gray level, by a factor ``a``
    drawn from ``[max(0, 1 - c), 1 + c]``: ``x * a + (1 - a) * mean(gray)``.

    Gray is ``0.299 R + 0.587 G + 0.114 B``.

    Args:
        contrast: the jitter amount ``c`` (>= 0).

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> transforms.RandomContrast(0.5)(np.zeros((2, 2, 3), 'float32')).shape
        (2, 2, 3)
    """

    _name = "RandomContrast"
    _adjust = staticmethod(adjust_contrast)

    def __init__(self, contrast: float):
        super().__init__(contrast)


class RandomSaturation(_RandomColor):
    """Blends an RGB image ``(H, W, 3)`` with its gray version, by a factor ``a`` drawn
    from ``[max(0, 1 - s), 1 + s]``: ``x * a + (1 - a) * gray``.

    Gray is ``0.299 R + 0.587 G + 0.114 B`` per pixel; a one-channel image is
    returned unchanged.

    Args:
        saturation: the jitter amount ``s`` (>= 0).

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> transforms.RandomSaturation(0.5)(np.ones((2, 2, 3), 'float32')).shape
        (2, 2, 3)
    """

    _name = "RandomSaturation"
    _adjust = staticmethod(adjust_saturation)

    def __init__(self, saturation: float):
        super().__init__(saturation)


class RandomHue(_RandomColor):
    """Rotates the hue of an RGB image ``(H, W, 3)`` by ``a`` turns, ``a`` drawn from
    ``[-h, h]`` (in HLS space, keeping lightness and saturation).

    Args:
        hue: the jitter amount ``h`` (>= 0); 0.5 is half a turn.

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> red = np.array([[[255, 0, 0]]], 'uint8')
        >>> transforms.RandomHue(0.0)(red).ravel().tolist()
        [255, 0, 0]
    """

    _name = "RandomHue"
    _adjust = staticmethod(adjust_hue)

    def __init__(self, hue: float):
        super().__init__(hue)

    def _draw(self):
        return _rng().uniform(-self._amount, self._amount)


class RandomColorJitter(_Transform):
    """Jitters brightness, contrast, saturation and hue, in a random order.

    Each adjustment with a non-zero amount ``v`` is applied with a factor drawn from
    ``[1 - v, 1 + v]`` (hue: a rotation in ``[-v, v]`` turns), as MXNet's
    ``random_color_jitter`` does.

    Args:
        brightness: the brightness jitter amount.
        contrast: the contrast jitter amount.
        saturation: the saturation jitter amount.
        hue: the hue jitter amount.

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> t = transforms.RandomColorJitter(brightness=0.4, contrast=0.4, saturation=0.4)
        >>> t(np.zeros((4, 4, 3), 'uint8')).shape
        (4, 4, 3)
    """

    def __init__(self, brightness: float = 0, contrast: float = 0, saturation: float = 0,
                 hue: float = 0):
        amounts = (brightness, contrast, saturation, hue)
        if any(a < 0 for a in amounts):
            raise ValueError(f"RandomColorJitter: the jitter amounts must be >= 0, got "
                             f"{amounts}")
        self._amounts = amounts

    def _forward_np(self, x):
        _check_image("RandomColorJitter", x, ndims=(3,))
        if x.shape[-1] != 3:
            raise ValueError(f"RandomColorJitter: expected an RGB image (H, W, 3), got shape "
                             f"{x.shape}")
        rng = _rng()
        out = x
        fns = (adjust_brightness, adjust_contrast, adjust_saturation, adjust_hue)
        for k in rng.permutation(4).tolist():
            v = self._amounts[k]
            if v > 0:
                alpha = rng.uniform(-v, v) + (0.0 if k == 3 else 1.0)
                out = _saturate(fns[k](out.astype(numpy.float32), alpha), x.dtype)
        return out


class RandomLighting(_Transform):
    """AlexNet-style PCA lighting noise on an RGB image ``(H, W, 3)``.

    Draws three weights from ``N(0, alpha)`` and adds the ImageNet RGB eigenvectors,
    scaled by their eigenvalues and the weights, to every pixel (MXNet's
    ``random_lighting``).

    Args:
        alpha: the standard deviation of the weights.

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> transforms.RandomLighting(0.0)(np.full((1, 1, 3), 9, 'uint8')).ravel().tolist()
        [9, 9, 9]
    """

    def __init__(self, alpha: float):
        if alpha < 0:
            raise ValueError(f"RandomLighting: alpha must be >= 0, got {alpha}")
        self._alpha = alpha

    def _forward_np(self, x):
        _check_image("RandomLighting", x, ndims=(3,))
        weights = _rng().normal(0.0, self._alpha, 3) if self._alpha > 0 else numpy.zeros(3)
        if x.shape[-1] == 1:
            return x
        try:
            return _saturate(adjust_lighting(x.astype(numpy.float32), weights), x.dtype)
        except ValueError as e:
            raise ValueError(f"RandomLighting: {e}") from None
