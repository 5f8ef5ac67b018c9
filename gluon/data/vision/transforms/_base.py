"""The transforms' base class and the generic transforms: composition, casting,
``ToTensor`` and ``Normalize``."""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy

import core
from core import NDArray, nd
from core.dtypes import is_float

from .._image import _check_image


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
        transforms: the transforms, or one transform (MXNet passes one composed block).
        p: the probability of applying them.

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> transforms.RandomApply([lambda x: x + 1], p=0.0)(np.zeros(2)).tolist()
        [0.0, 0.0]
    """

    def __init__(self, transforms: Sequence[Callable] | Callable, p: float = 0.5):
        super().__init__([transforms] if callable(transforms) else transforms)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"RandomApply: p must be in [0, 1], got {p}")
        self._p = p

    def __call__(self, x):
        if _rng().random() < self._p:
            return super().__call__(x)
        return x


def _check_hybrid(name: str, transforms) -> None:
    for t in transforms:
        if not isinstance(t, _Transform) and not hasattr(t, "hybrid_forward") and \
                not callable(getattr(t, "hybridize", None)):
            raise ValueError(f"{name}: {t!r} is not a transform block (a HybridBlock in "
                             f"MXNet); use Compose / RandomApply for plain callables")


class HybridCompose(Compose):
    """``Compose`` for transform blocks only (MXNet's hybridizable composition).

    Here every transform runs in NumPy or through core operators either way; the class
    checks its members as MXNet does and otherwise behaves as ``Compose``.

    Args:
        transforms: the transforms; each must be a transform block.

    Raises:
        ValueError: a member is a plain function.

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> t = transforms.HybridCompose([transforms.Cast('float32'), transforms.ToTensor()])
        >>> t(np.zeros((2, 2, 3), 'uint8')).shape
        (3, 2, 2)
    """

    def __init__(self, transforms: Sequence[Callable]):
        super().__init__(transforms)
        _check_hybrid("HybridCompose", self._transforms)


class HybridRandomApply(RandomApply):
    """``RandomApply`` for transform blocks only (MXNet's hybridizable version).

    Args:
        transforms: one transform block (e.g. a ``HybridCompose``) or a list of them.
        p: the probability of applying them.

    Raises:
        ValueError: a member is a plain function.

    Example:
        >>> import numpy as np
        >>> from gluon.data.vision import transforms
        >>> t = transforms.HybridRandomApply(transforms.Cast('float16'), p=1.0)
        >>> t(np.zeros(2, 'uint8')).dtype
        dtype('float16')
    """

    def __init__(self, transforms, p: float = 0.5):
        super().__init__(transforms, p)
        _check_hybrid("HybridRandomApply", self._transforms)


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
        if not is_float(dtype):
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
