"""Colour transforms: brightness, contrast, saturation, hue, lighting and gray."""
from __future__ import annotations

import numpy

from .._image import (
    _check_image,
    _saturate,
    adjust_brightness,
    adjust_contrast,
    adjust_hue,
    adjust_lighting,
    adjust_saturation,
)
from ._base import _rng, _Transform


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


class RandomGray(_Transform):
    """With probability ``p``, replaces every channel of an RGB image by its luminance.

    The result is float32 either way, as in MXNet. The gray value is
    ``0.2989 R + 0.587 G + 0.114 B``; MXNet 2.0's own formula multiplies the channel
    *sum* by each weight (a transposed matrix), which this does not copy.

    Args:
        p: the probability of converting.

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> out = transforms.RandomGray(p=1.0)(np.array([[[100, 50, 10]]], 'uint8'))
        >>> out.dtype, [round(v, 2) for v in out.ravel().tolist()]
        (dtype('float32'), [60.38, 60.38, 60.38])
    """

    def __init__(self, p: float = 0.5):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"RandomGray: p must be in [0, 1], got {p}")
        self._p = p

    def _forward_np(self, x):
        _check_image("RandomGray", x)
        if x.shape[-1] != 3:
            raise ValueError(f"RandomGray: expected RGB images (..., 3), got shape "
                             f"{tuple(x.shape)}")
        x = x.astype(numpy.float32)
        if _rng().random() >= self._p:
            return x
        gray = x @ numpy.array([0.2989, 0.587, 0.114], numpy.float32)
        return numpy.repeat(gray[..., None], 3, axis=-1)
