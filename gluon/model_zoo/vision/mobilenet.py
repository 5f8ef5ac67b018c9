"""MobileNet V1 and V2 (MXNet Gluon 1.9's ``model_zoo.vision.mobilenet``).

V1 is from "MobileNets: Efficient Convolutional Neural Networks for Mobile Vision
Applications" (https://arxiv.org/abs/1704.04861), V2 from "Inverted Residuals and
Linear Bottlenecks" (https://arxiv.org/abs/1801.04381). The width multiplier scales
every layer's channels (``int(channels * multiplier)``, without rounding to a
multiple of 8, as in MXNet). As in MXNet, every V2 bottleneck has its 1x1 expansion
convolution, also the first one whose expansion factor is 1, and the V2 classifier is
a 1x1 convolution without bias.

Example:
    >>> from core import nd
    >>> from gluon.model_zoo import vision
    >>> net = vision.mobilenet0_25(classes=10)
    >>> net.initialize()
    >>> net(nd.zeros((1, 3, 32, 32))).shape
    (1, 10)
"""
from __future__ import annotations

from ... import nn
from ...block import HybridBlock
from ._common import FeaturesOutput, build_model, variant

__all__ = [
    "RELU6",
    "LinearBottleneck",
    "MobileNet",
    "MobileNetV2",
    "get_mobilenet",
    "get_mobilenet_v2",
    "mobilenet0_5",
    "mobilenet0_25",
    "mobilenet0_75",
    "mobilenet1_0",
    "mobilenet_v2_0_5",
    "mobilenet_v2_0_25",
    "mobilenet_v2_0_75",
    "mobilenet_v2_1_0",
]


class RELU6(HybridBlock):
    """ReLU capped at 6: ``clip(x, 0, 6)`` (MobileNet V2's activation)."""

    def hybrid_forward(self, F, x):
        return F.clip(x, 0, 6)


def _add_conv(out, channels: int = 1, kernel: int = 1, stride: int = 1, pad: int = 0,
              num_group: int = 1, active: bool = True, relu6: bool = False) -> None:
    """Append a convolution without bias, BatchNorm and (if ``active``) ReLU or ReLU6."""
    out.add(nn.Conv2D(channels, kernel, stride, pad, groups=num_group, use_bias=False))
    out.add(nn.BatchNorm(scale=True))
    if active:
        out.add(RELU6() if relu6 else nn.Activation("relu"))


def _add_conv_dw(out, dw_channels: int, channels: int, stride: int,
                 relu6: bool = False) -> None:
    """Append a depthwise-separable convolution: 3x3 depthwise, then 1x1 pointwise."""
    _add_conv(out, channels=dw_channels, kernel=3, stride=stride, pad=1,
              num_group=dw_channels, relu6=relu6)
    _add_conv(out, channels=channels, relu6=relu6)


class LinearBottleneck(HybridBlock):
    """MobileNet V2's inverted residual block: 1x1 expansion to ``in_channels * t``
    channels, 3x3 depthwise convolution (with the stride), 1x1 linear projection; the
    input is added when the shapes allow (stride 1, same channels).

    Args:
        in_channels: input channels.
        channels: output channels.
        t: the expansion factor.
        stride: stride of the depthwise convolution.
        **kwargs: ``prefix``/``params`` of :class:`gluon.Block`.
    """

    def __init__(self, in_channels: int, channels: int, t: int, stride: int, **kwargs):
        super().__init__(**kwargs)
        self.use_shortcut = stride == 1 and in_channels == channels
        with self.name_scope():
            self.out = nn.HybridSequential()
            _add_conv(self.out, in_channels * t, relu6=True)
            _add_conv(self.out, in_channels * t, kernel=3, stride=stride, pad=1,
                      num_group=in_channels * t, relu6=True)
            _add_conv(self.out, channels, active=False, relu6=True)

    def hybrid_forward(self, F, x):
        out = self.out(x)
        if self.use_shortcut:
            out = F.elemwise_add(out, x)
        return out


class MobileNet(FeaturesOutput):
    """MobileNet V1: a 3x3 convolution, 13 depthwise-separable convolutions, global
    average pooling and a Dense classifier.

    Args:
        multiplier: the width multiplier (at least 0.25).
        classes: the number of classes of the output layer.
        **kwargs: ``prefix``/``params`` of :class:`gluon.Block`.
    """

    def __init__(self, multiplier: float = 1.0, classes: int = 1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                _add_conv(self.features, channels=int(32 * multiplier), kernel=3, pad=1,
                          stride=2)
                dw_channels = [int(x * multiplier) for x in
                               [32, 64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024]]
                channels = [int(x * multiplier) for x in
                            [64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024] * 2]
                strides = [1, 2] * 3 + [1] * 5 + [2, 1]
                for dwc, c, s in zip(dw_channels, channels, strides):
                    _add_conv_dw(self.features, dw_channels=dwc, channels=c, stride=s)
                self.features.add(nn.GlobalAvgPool2D())
                self.features.add(nn.Flatten())

            self.output = nn.Dense(classes)


class MobileNetV2(FeaturesOutput):
    """MobileNet V2: a 3x3 convolution, 17 linear bottlenecks, a 1x1 convolution to
    1280 channels (more for multipliers above 1), global average pooling and a 1x1
    convolution classifier.

    Args:
        multiplier: the width multiplier.
        classes: the number of classes of the output layer.
        **kwargs: ``prefix``/``params`` of :class:`gluon.Block`.
    """

    def __init__(self, multiplier: float = 1.0, classes: int = 1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="features_")
            with self.features.name_scope():
                _add_conv(self.features, int(32 * multiplier), kernel=3, stride=2, pad=1,
                          relu6=True)
                in_channels_group = [int(x * multiplier) for x in
                                     [32] + [16] + [24] * 2 + [32] * 3 + [64] * 4
                                     + [96] * 3 + [160] * 3]
                channels_group = [int(x * multiplier) for x in
                                  [16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3
                                  + [160] * 3 + [320]]
                ts = [1] + [6] * 16
                strides = [1, 2] * 2 + [1, 1, 2] + [1] * 6 + [2] + [1] * 3
                for in_c, c, t, s in zip(in_channels_group, channels_group, ts, strides):
                    self.features.add(LinearBottleneck(in_channels=in_c, channels=c, t=t,
                                                       stride=s))
                last_channels = int(1280 * multiplier) if multiplier > 1.0 else 1280
                _add_conv(self.features, last_channels, relu6=True)
                self.features.add(nn.GlobalAvgPool2D())

            self.output = nn.HybridSequential(prefix="output_")
            with self.output.name_scope():
                self.output.add(nn.Conv2D(classes, 1, use_bias=False, prefix="pred_"),
                                nn.Flatten())


def _version_suffix(multiplier: float) -> str:
    """``'1.0'``, ``'0.75'``, ``'0.5'``, ``'0.25'``: the multiplier as in the model names."""
    suffix = f"{multiplier:.2f}"
    return suffix[:-1] if suffix in ("1.00", "0.50") else suffix


def get_mobilenet(multiplier: float, pretrained: bool = False, ctx=None,
                  root: str | None = None, **kwargs):
    """A MobileNet V1 with random weights.

    Args:
        multiplier: the width multiplier (at least 0.25).
        pretrained: load MXNet's pretrained weights from a local file (never
            downloaded): ``{root}/{name}-{short sha1}.params`` as MXNet's model store
            keeps them (SHA-1 checked), or ``{root}/{name}.params``.
        ctx: the context(s) of the loaded weights (default cpu(0)).
        root: the weights' directory (default ``$MXNET_HOME/models``, else
            ``~/.mxnet/models``).
        **kwargs: passed to :class:`MobileNet` (``classes``, ``prefix``, ``params``).

    Returns:
        The model, not initialized (with the weights loaded if ``pretrained``).

    Raises:
        FileNotFoundError: ``pretrained`` and no weights file (the message lists
            where it looked).
    """
    return build_model(f"mobilenet{_version_suffix(multiplier)}", MobileNet, multiplier,
                       pretrained=pretrained, ctx=ctx, root=root, **kwargs)


def get_mobilenet_v2(multiplier: float, pretrained: bool = False, ctx=None,
                     root: str | None = None, **kwargs):
    """A MobileNet V2 with random weights.

    Args:
        multiplier: the width multiplier.
        pretrained: load MXNet's pretrained weights from a local file (never
            downloaded): ``{root}/{name}-{short sha1}.params`` as MXNet's model store
            keeps them (SHA-1 checked), or ``{root}/{name}.params``.
        ctx: the context(s) of the loaded weights (default cpu(0)).
        root: the weights' directory (default ``$MXNET_HOME/models``, else
            ``~/.mxnet/models``).
        **kwargs: passed to :class:`MobileNetV2` (``classes``, ``prefix``, ``params``).

    Returns:
        The model, not initialized (with the weights loaded if ``pretrained``).

    Raises:
        FileNotFoundError: ``pretrained`` and no weights file (the message lists
            where it looked).
    """
    return build_model(f"mobilenetv2_{_version_suffix(multiplier)}", MobileNetV2, multiplier,
                       pretrained=pretrained, ctx=ctx, root=root, **kwargs)


mobilenet1_0 = variant(get_mobilenet, 1.0, name="mobilenet1_0",
                       summary="MobileNet V1 with width multiplier 1.0.")
mobilenet_v2_1_0 = variant(get_mobilenet_v2, 1.0, name="mobilenet_v2_1_0",
                           summary="MobileNet V2 with width multiplier 1.0.")
mobilenet0_75 = variant(get_mobilenet, 0.75, name="mobilenet0_75",
                        summary="MobileNet V1 with width multiplier 0.75.")
mobilenet_v2_0_75 = variant(get_mobilenet_v2, 0.75, name="mobilenet_v2_0_75",
                            summary="MobileNet V2 with width multiplier 0.75.")
mobilenet0_5 = variant(get_mobilenet, 0.5, name="mobilenet0_5",
                       summary="MobileNet V1 with width multiplier 0.5.")
mobilenet_v2_0_5 = variant(get_mobilenet_v2, 0.5, name="mobilenet_v2_0_5",
                           summary="MobileNet V2 with width multiplier 0.5.")
mobilenet0_25 = variant(get_mobilenet, 0.25, name="mobilenet0_25",
                        summary="MobileNet V1 with width multiplier 0.25.")
mobilenet_v2_0_25 = variant(get_mobilenet_v2, 0.25, name="mobilenet_v2_0_25",
                            summary="MobileNet V2 with width multiplier 0.25.")
