"""SqueezeNet 1.0 and 1.1 (MXNet Gluon 1.9's ``model_zoo.vision.squeezenet``).

1.0 is from "SqueezeNet: AlexNet-level accuracy with 50x fewer parameters and <0.5MB
model size" (https://arxiv.org/abs/1602.07360); 1.1, from the official repository,
needs 2.4x less computation for about the same accuracy.

The classifier ends with a fixed 13x13 average pooling (as in MXNet), so the images
must give 13x13 to 25x25 final feature maps: 224x224 gives 13x13 (the smallest
image is 213x213 for 1.0 and 209x209 for 1.1).

Example:
    >>> from gluon.model_zoo import vision
    >>> net = vision.squeezenet1_1(classes=10)
    >>> [type(b).__name__ for b in net.output]
    ['Conv2D', 'Activation', 'AvgPool2D', 'Flatten']
"""
from __future__ import annotations

from ... import nn
from ._common import FeaturesOutput, build_model, variant

__all__ = ["SqueezeNet", "get_squeezenet", "squeezenet1_0", "squeezenet1_1"]


def _make_fire_conv(channels: int, kernel_size: int, padding: int = 0):
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(channels, kernel_size, padding=padding))
    out.add(nn.Activation("relu"))
    return out


def _make_fire(squeeze_channels: int, expand1x1_channels: int, expand3x3_channels: int):
    """A fire module: a 1x1 squeeze convolution, then 1x1 and 3x3 expand convolutions
    side by side, concatenated on the channel axis."""
    out = nn.HybridSequential(prefix="")
    out.add(_make_fire_conv(squeeze_channels, 1))
    paths = nn.HybridConcatenate(axis=1, prefix="")
    paths.add(_make_fire_conv(expand1x1_channels, 1))
    paths.add(_make_fire_conv(expand3x3_channels, 3, 1))
    out.add(paths)
    return out


class SqueezeNet(FeaturesOutput):
    """SqueezeNet: a convolution, fire modules between max poolings, dropout, then a
    1x1 convolution to ``classes`` channels, ReLU and a 13x13 average pooling.

    Args:
        version: ``'1.0'`` or ``'1.1'``.
        classes: the number of classes of the output layer.
        **kwargs: ``prefix``/``params`` of :class:`gluon.Block`.

    Raises:
        ValueError: for another version.
    """

    def __init__(self, version: str, classes: int = 1000, **kwargs):
        super().__init__(**kwargs)
        if version not in ("1.0", "1.1"):
            raise ValueError(f"Unsupported SqueezeNet version {version!r}: '1.0' or '1.1' "
                             "expected")
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            if version == "1.0":
                self.features.add(nn.Conv2D(96, kernel_size=7, strides=2))
                self.features.add(nn.Activation("relu"))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True))
                self.features.add(_make_fire(16, 64, 64))
                self.features.add(_make_fire(16, 64, 64))
                self.features.add(_make_fire(32, 128, 128))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True))
                self.features.add(_make_fire(32, 128, 128))
                self.features.add(_make_fire(48, 192, 192))
                self.features.add(_make_fire(48, 192, 192))
                self.features.add(_make_fire(64, 256, 256))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True))
                self.features.add(_make_fire(64, 256, 256))
            else:
                self.features.add(nn.Conv2D(64, kernel_size=3, strides=2))
                self.features.add(nn.Activation("relu"))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True))
                self.features.add(_make_fire(16, 64, 64))
                self.features.add(_make_fire(16, 64, 64))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True))
                self.features.add(_make_fire(32, 128, 128))
                self.features.add(_make_fire(32, 128, 128))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True))
                self.features.add(_make_fire(48, 192, 192))
                self.features.add(_make_fire(48, 192, 192))
                self.features.add(_make_fire(64, 256, 256))
                self.features.add(_make_fire(64, 256, 256))
            self.features.add(nn.Dropout(0.5))

            self.output = nn.HybridSequential(prefix="")
            self.output.add(nn.Conv2D(classes, kernel_size=1))
            self.output.add(nn.Activation("relu"))
            self.output.add(nn.AvgPool2D(13))
            self.output.add(nn.Flatten())


def get_squeezenet(version: str, pretrained: bool = False, ctx=None,
                   root: str | None = None, **kwargs):
    """A SqueezeNet with random weights.

    Args:
        version: ``'1.0'`` or ``'1.1'``.
        pretrained: load MXNet's pretrained weights from a local file (never
            downloaded): ``{root}/{name}-{short sha1}.params`` as MXNet's model store
            keeps them (SHA-1 checked), or ``{root}/{name}.params``.
        ctx: the context(s) of the loaded weights (default cpu(0)).
        root: the weights' directory (default ``$MXNET_HOME/models``, else
            ``~/.mxnet/models``).
        **kwargs: passed to :class:`SqueezeNet` (``classes``, ``prefix``, ``params``).

    Returns:
        The model, not initialized (with the weights loaded if ``pretrained``).

    Raises:
        ValueError: for an unknown version.
        FileNotFoundError: ``pretrained`` and no weights file (the message lists
            where it looked).
    """
    return build_model(f"squeezenet{version}", SqueezeNet, version, pretrained=pretrained,
                       ctx=ctx, root=root, **kwargs)


squeezenet1_0 = variant(get_squeezenet, "1.0", name="squeezenet1_0", summary="SqueezeNet 1.0.")
squeezenet1_1 = variant(get_squeezenet, "1.1", name="squeezenet1_1", summary="SqueezeNet 1.1.")
