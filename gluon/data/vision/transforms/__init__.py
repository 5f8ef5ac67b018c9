"""Image transforms (MXNet 1.9 and 2.0's ``gluon.data.vision.transforms``).

Each transform is a callable object taking one image, ``(H, W, C)``, or a batch,
``(N, H, W, C)`` (``Normalize``: ``(C, H, W)`` / ``(N, C, H, W)``). An NDArray
input gives an NDArray on the same context; a NumPy array gives a NumPy array, so
transforms can run on NumPy in DataLoader workers. Resizing and cropping are done
in NumPy (separable interpolation matching OpenCV's ``cv2.resize``, which MXNet
uses); ``ToTensor``, ``Normalize``, ``Cast`` and the flips of NDArrays use core
operators. Random transforms draw from ``core.random``'s generator of ``cpu(0)``,
so ``core.random.seed`` makes them reproducible (DataLoader workers reseed it).

In MXNet these are (Hybrid)Blocks; here they are plain callables with a no-op
``hybridize()``, usable anywhere a Block is called. Inputs may be ``np`` arrays
(``core.np``, MXNet 2.0's NumPy mode) as well as NDArrays: there is one array type.

The modules: ``_base`` (``Compose``, ``HybridCompose``, ``RandomApply``,
``HybridRandomApply``, ``Cast``, ``ToTensor``, ``Normalize``), ``geometry`` (resizing,
crops, flips, rotations) and ``color`` (colour jitter, lighting, gray).

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
from .._image import resize
from ._base import (
    Cast,
    Compose,
    HybridCompose,
    HybridRandomApply,
    Normalize,
    RandomApply,
    ToTensor,
)
from .color import (
    RandomBrightness,
    RandomColorJitter,
    RandomContrast,
    RandomGray,
    RandomHue,
    RandomLighting,
    RandomSaturation,
)
from .geometry import (
    CenterCrop,
    CropResize,
    RandomCrop,
    RandomFlipLeftRight,
    RandomFlipTopBottom,
    RandomResizedCrop,
    RandomRotation,
    Resize,
    Rotate,
)

__all__ = ["Cast", "CenterCrop", "Compose", "CropResize", "HybridCompose", "HybridRandomApply",
           "Normalize", "RandomApply", "RandomBrightness", "RandomColorJitter",
           "RandomContrast", "RandomCrop", "RandomFlipLeftRight", "RandomFlipTopBottom",
           "RandomGray", "RandomHue", "RandomLighting", "RandomResizedCrop", "RandomRotation",
           "RandomSaturation", "Resize", "Rotate", "ToTensor", "resize"]
