"""ResNet V1 and V2 (MXNet Gluon 1.9's ``model_zoo.vision.resnet``).

V1 is from "Deep Residual Learning for Image Recognition"
(https://arxiv.org/abs/1512.03385), V2 (pre-activation) from "Identity Mappings in
Deep Residual Networks" (https://arxiv.org/abs/1603.05027). The layer structure,
parameter names and defaults are MXNet's: in particular the 1x1 convolutions of
``BottleneckV1``'s body have biases, as in MXNet.

Example:
    >>> from core import nd
    >>> from gluon.model_zoo import vision
    >>> net = vision.resnet18_v1(classes=10)
    >>> net.initialize()
    >>> net(nd.zeros((1, 3, 32, 32))).shape
    (1, 10)
"""
from __future__ import annotations

from ... import nn
from ...block import HybridBlock
from ._common import FeaturesOutput, build_model, spec_entry, variant

__all__ = [
    "BasicBlockV1",
    "BasicBlockV2",
    "BottleneckV1",
    "BottleneckV2",
    "ResNetV1",
    "ResNetV2",
    "get_resnet",
    "resnet18_v1",
    "resnet18_v2",
    "resnet34_v1",
    "resnet34_v2",
    "resnet50_v1",
    "resnet50_v2",
    "resnet101_v1",
    "resnet101_v2",
    "resnet152_v1",
    "resnet152_v2",
]


def _conv3x3(channels: int, stride: int, in_channels: int):
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False,
                     in_channels=in_channels)


class _ResidualV1(HybridBlock):
    """The V1 residual blocks: ``relu(body(x) + shortcut)``, the shortcut ``x`` or its
    projection ``downsample(x)``."""

    def _set_downsample(self, downsample: bool, channels: int, stride: int,
                        in_channels: int) -> None:
        """The projection of the shortcut (1x1 convolution and BatchNorm), or None."""
        if downsample:
            self.downsample = nn.HybridSequential(prefix="")
            self.downsample.add(nn.Conv2D(channels, kernel_size=1, strides=stride,
                                          use_bias=False, in_channels=in_channels))
            self.downsample.add(nn.BatchNorm())
        else:
            self.downsample = None

    def hybrid_forward(self, F, x):
        residual = x if self.downsample is None else self.downsample(x)
        return F.Activation(self.body(x) + residual, act_type="relu")


class BasicBlockV1(_ResidualV1):
    """The residual block of ResNet-18/34 V1: two 3x3 convolutions with BatchNorm,
    ReLU after the addition.

    Args:
        channels: output channels.
        stride: stride of the first convolution (and of the shortcut).
        downsample: project the shortcut with a 1x1 convolution and BatchNorm.
        in_channels: input channels (0: inferred on the first call).
        **kwargs: ``prefix``/``params`` of :class:`gluon.Block`.
    """

    def __init__(self, channels: int, stride: int, downsample: bool = False,
                 in_channels: int = 0, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix="")
        self.body.add(_conv3x3(channels, stride, in_channels))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation("relu"))
        self.body.add(_conv3x3(channels, 1, channels))
        self.body.add(nn.BatchNorm())
        self._set_downsample(downsample, channels, stride, in_channels)


class BottleneckV1(_ResidualV1):
    """The residual block of ResNet-50/101/152 V1: 1x1, 3x3 and 1x1 convolutions with
    BatchNorm (the stride on the first), ReLU after the addition.

    Args:
        channels: output channels (the bottleneck has ``channels // 4``).
        stride: stride of the first convolution (and of the shortcut).
        downsample: project the shortcut with a 1x1 convolution and BatchNorm.
        in_channels: input channels (0: inferred on the first call).
        **kwargs: ``prefix``/``params`` of :class:`gluon.Block`.
    """

    def __init__(self, channels: int, stride: int, downsample: bool = False,
                 in_channels: int = 0, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix="")
        self.body.add(nn.Conv2D(channels // 4, kernel_size=1, strides=stride))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation("relu"))
        self.body.add(_conv3x3(channels // 4, 1, channels // 4))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation("relu"))
        self.body.add(nn.Conv2D(channels, kernel_size=1, strides=1))
        self.body.add(nn.BatchNorm())
        self._set_downsample(downsample, channels, stride, in_channels)


class _ResidualV2(HybridBlock):
    """The V2 (pre-activation) residual blocks: BatchNorm, ReLU and a convolution per
    layer (``bn1``/``conv1``, ``bn2``/``conv2``, ...), plus the shortcut: ``x`` or the
    projection ``downsample`` of the first ReLU's output."""

    def _set_downsample(self, downsample: bool, channels: int, stride: int,
                        in_channels: int) -> None:
        """The projection of the shortcut (1x1 convolution), or None."""
        if downsample:
            self.downsample = nn.Conv2D(channels, 1, stride, use_bias=False,
                                        in_channels=in_channels)
        else:
            self.downsample = None

    def _layers(self) -> tuple:
        """The ``(BatchNorm, convolution)`` pairs in order."""
        raise NotImplementedError

    def hybrid_forward(self, F, x):
        residual = x
        (bn1, conv1), *later = self._layers()
        x = F.Activation(bn1(x), act_type="relu")
        if self.downsample is not None:
            residual = self.downsample(x)
        x = conv1(x)
        for bn, conv in later:
            x = conv(F.Activation(bn(x), act_type="relu"))
        return x + residual


class BasicBlockV2(_ResidualV2):
    """The pre-activation residual block of ResNet-18/34 V2: BatchNorm, ReLU and a 3x3
    convolution, twice; the shortcut, when projected, starts after the first ReLU.

    Args:
        channels: output channels.
        stride: stride of the first convolution (and of the shortcut).
        downsample: project the shortcut with a 1x1 convolution.
        in_channels: input channels (0: inferred on the first call).
        **kwargs: ``prefix``/``params`` of :class:`gluon.Block`.
    """

    def __init__(self, channels: int, stride: int, downsample: bool = False,
                 in_channels: int = 0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)
        self._set_downsample(downsample, channels, stride, in_channels)

    def _layers(self) -> tuple:
        return (self.bn1, self.conv1), (self.bn2, self.conv2)


class BottleneckV2(_ResidualV2):
    """The pre-activation residual block of ResNet-50/101/152 V2: BatchNorm, ReLU and a
    convolution (1x1, 3x3 with the stride, 1x1), without biases.

    Args:
        channels: output channels (the bottleneck has ``channels // 4``).
        stride: stride of the 3x3 convolution (and of the shortcut).
        downsample: project the shortcut with a 1x1 convolution.
        in_channels: input channels (0: inferred on the first call).
        **kwargs: ``prefix``/``params`` of :class:`gluon.Block`.
    """

    def __init__(self, channels: int, stride: int, downsample: bool = False,
                 in_channels: int = 0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = nn.Conv2D(channels // 4, kernel_size=1, strides=1, use_bias=False)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels // 4, stride, channels // 4)
        self.bn3 = nn.BatchNorm()
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False)
        self._set_downsample(downsample, channels, stride, in_channels)

    def _layers(self) -> tuple:
        return (self.bn1, self.conv1), (self.bn2, self.conv2), (self.bn3, self.conv3)


def _check_layers(layers, channels) -> None:
    if len(layers) != len(channels) - 1:
        raise ValueError(f"ResNet: channels must have one more entry than layers (the stem's "
                         f"channels first); got layers={list(layers)}, "
                         f"channels={list(channels)}")


def _make_stage(block, num_layers: int, channels: int, stride: int, stage_index: int,
                in_channels: int):
    stage = nn.HybridSequential(prefix=f"stage{stage_index}_")
    with stage.name_scope():
        stage.add(block(channels, stride, channels != in_channels, in_channels=in_channels,
                        prefix=""))
        for _ in range(num_layers - 1):
            stage.add(block(channels, 1, False, in_channels=channels, prefix=""))
    return stage


def _add_stem_and_stages(features, block, layers, channels, thumbnail: bool) -> None:
    """The stem (a 3x3 convolution for thumbnails, else 7x7 convolution, BatchNorm, ReLU
    and max pooling), then one stage per entry of ``layers``, the first of stride 1."""
    if thumbnail:
        features.add(_conv3x3(channels[0], 1, 0))
    else:
        features.add(nn.Conv2D(channels[0], 7, 2, 3, use_bias=False))
        features.add(nn.BatchNorm())
        features.add(nn.Activation("relu"))
        features.add(nn.MaxPool2D(3, 2, 1))
    for i, num_layers in enumerate(layers):
        stride = 1 if i == 0 else 2
        features.add(_make_stage(block, num_layers, channels[i + 1], stride, i + 1,
                                 in_channels=channels[i]))


class ResNetV1(FeaturesOutput):
    """ResNet V1: a 7x7 stem (or a 3x3 one for small images), four stages of residual
    blocks, global average pooling and a Dense classifier.

    Args:
        block: the residual block class, :class:`BasicBlockV1` or :class:`BottleneckV1`.
        layers: the number of blocks in each stage.
        channels: the stem's output channels, then each stage's (one more entry than
            ``layers``).
        classes: the number of classes of the output layer.
        thumbnail: use a single 3x3 convolution (stride 1) as the stem, for small
            images such as CIFAR's 32x32.
        **kwargs: ``prefix``/``params`` of :class:`gluon.Block`.

    Raises:
        ValueError: when ``channels`` does not have ``len(layers) + 1`` entries.
    """

    def __init__(self, block, layers, channels, classes: int = 1000, thumbnail: bool = False,
                 **kwargs):
        super().__init__(**kwargs)
        _check_layers(layers, channels)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            _add_stem_and_stages(self.features, block, layers, channels, thumbnail)
            self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes, in_units=channels[-1])


class ResNetV2(FeaturesOutput):
    """ResNet V2 (pre-activation): a BatchNorm on the input (without scale and shift),
    the stem, four stages of residual blocks, BatchNorm, ReLU, global average pooling
    and a Dense classifier.

    Args:
        block: the residual block class, :class:`BasicBlockV2` or :class:`BottleneckV2`.
        layers: the number of blocks in each stage.
        channels: the stem's output channels, then each stage's (one more entry than
            ``layers``).
        classes: the number of classes of the output layer.
        thumbnail: use a single 3x3 convolution (stride 1) as the stem, for small
            images such as CIFAR's 32x32.
        **kwargs: ``prefix``/``params`` of :class:`gluon.Block`.

    Raises:
        ValueError: when ``channels`` does not have ``len(layers) + 1`` entries.
    """

    def __init__(self, block, layers, channels, classes: int = 1000, thumbnail: bool = False,
                 **kwargs):
        super().__init__(**kwargs)
        _check_layers(layers, channels)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.BatchNorm(scale=False, center=False))
            _add_stem_and_stages(self.features, block, layers, channels, thumbnail)
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation("relu"))
            self.features.add(nn.GlobalAvgPool2D())
            self.features.add(nn.Flatten())
            self.output = nn.Dense(classes, in_units=channels[-1])


# num_layers: (block type, blocks per stage, channels of the stem and of each stage)
resnet_spec = {18: ("basic_block", [2, 2, 2, 2], [64, 64, 128, 256, 512]),
               34: ("basic_block", [3, 4, 6, 3], [64, 64, 128, 256, 512]),
               50: ("bottle_neck", [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
               101: ("bottle_neck", [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
               152: ("bottle_neck", [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}

resnet_net_versions = [ResNetV1, ResNetV2]
resnet_block_versions = [{"basic_block": BasicBlockV1, "bottle_neck": BottleneckV1},
                         {"basic_block": BasicBlockV2, "bottle_neck": BottleneckV2}]


def get_resnet(version: int, num_layers: int, pretrained: bool = False, ctx=None,
               root: str | None = None, **kwargs):
    """A ResNet V1 or V2 with random weights.

    Args:
        version: 1 or 2.
        num_layers: 18, 34, 50, 101 or 152.
        pretrained: load MXNet's pretrained weights from a local file (never
            downloaded): ``{root}/{name}-{short sha1}.params`` as MXNet's model store
            keeps them (SHA-1 checked), or ``{root}/{name}.params``.
        ctx: the context(s) of the loaded weights (default cpu(0)).
        root: the weights' directory (default ``$MXNET_HOME/models``, else
            ``~/.mxnet/models``).
        **kwargs: passed to :class:`ResNetV1`/:class:`ResNetV2` (``classes``,
            ``thumbnail``, ``prefix``, ``params``).

    Returns:
        The ResNet, not initialized (with the weights loaded if ``pretrained``).

    Raises:
        ValueError: for an unknown version or depth.
        FileNotFoundError: ``pretrained`` and no weights file (the message lists
            where it looked).

    Example:
        >>> from gluon.model_zoo.vision import get_resnet
        >>> type(get_resnet(2, 50)).__name__
        'ResNetV2'
    """
    block_type, layers, channels = spec_entry("get_resnet", resnet_spec, num_layers)
    if version not in (1, 2):
        raise ValueError(f"get_resnet: invalid ResNet version {version!r}; options are 1 "
                         "and 2")
    block = resnet_block_versions[version - 1][block_type]
    return build_model(f"resnet{num_layers}_v{version}", resnet_net_versions[version - 1],
                       block, layers, channels, pretrained=pretrained, ctx=ctx, root=root,
                       **kwargs)


_V1 = 'from "Deep Residual Learning for Image Recognition".'
_V2 = 'from "Identity Mappings in Deep Residual Networks".'
_OPTIONS = "``classes``, ``thumbnail``"

resnet18_v1 = variant(get_resnet, 1, 18, name="resnet18_v1", summary=f"ResNet-18 V1 {_V1}",
                      options=_OPTIONS)
resnet34_v1 = variant(get_resnet, 1, 34, name="resnet34_v1", summary=f"ResNet-34 V1 {_V1}",
                      options=_OPTIONS)
resnet50_v1 = variant(get_resnet, 1, 50, name="resnet50_v1", summary=f"ResNet-50 V1 {_V1}",
                      options=_OPTIONS)
resnet101_v1 = variant(get_resnet, 1, 101, name="resnet101_v1",
                       summary=f"ResNet-101 V1 {_V1}", options=_OPTIONS)
resnet152_v1 = variant(get_resnet, 1, 152, name="resnet152_v1",
                       summary=f"ResNet-152 V1 {_V1}", options=_OPTIONS)
resnet18_v2 = variant(get_resnet, 2, 18, name="resnet18_v2", summary=f"ResNet-18 V2 {_V2}",
                      options=_OPTIONS)
resnet34_v2 = variant(get_resnet, 2, 34, name="resnet34_v2", summary=f"ResNet-34 V2 {_V2}",
                      options=_OPTIONS)
resnet50_v2 = variant(get_resnet, 2, 50, name="resnet50_v2", summary=f"ResNet-50 V2 {_V2}",
                      options=_OPTIONS)
resnet101_v2 = variant(get_resnet, 2, 101, name="resnet101_v2",
                       summary=f"ResNet-101 V2 {_V2}", options=_OPTIONS)
resnet152_v2 = variant(get_resnet, 2, 152, name="resnet152_v2",
                       summary=f"ResNet-152 V2 {_V2}", options=_OPTIONS)
