"""VGG 11/13/16/19, with and without BatchNorm (MXNet Gluon 1.9's
``model_zoo.vision.vgg``), from "Very Deep Convolutional Networks for Large-Scale
Image Recognition" (https://arxiv.org/abs/1409.1556).

As in MXNet, the first Dense layer infers its input size on the first call: the
parameter count of the standard model is for 224x224 images (512x7x7 features);
smaller images (down to 32x32) give a smaller first Dense layer.

Example:
    >>> from gluon.model_zoo import vision
    >>> net = vision.vgg11_bn(classes=10)
    >>> [type(block).__name__ for block in net.features[:4]]
    ['Conv2D', 'BatchNorm', 'Activation', 'MaxPool2D']
"""
from __future__ import annotations

from core.initializer import Xavier

from ... import nn
from ._common import FeaturesOutput, build_model, spec_entry, variant

__all__ = [
    "VGG",
    "get_vgg",
    "vgg11",
    "vgg11_bn",
    "vgg13",
    "vgg13_bn",
    "vgg16",
    "vgg16_bn",
    "vgg19",
    "vgg19_bn",
]


class VGG(FeaturesOutput):
    """VGG: blocks of 3x3 convolutions (with BatchNorm if asked) and ReLU, each block
    closed by a 2x2 max pooling, then two Dense(4096) layers with ReLU and dropout, and
    a Dense classifier.

    Args:
        layers: the number of convolutions in each block.
        filters: the channels of each block's convolutions (as many as ``layers``).
        classes: the number of classes of the output layer.
        batch_norm: add a BatchNorm after each convolution.
        **kwargs: ``prefix``/``params`` of :class:`gluon.Block`.

    Raises:
        ValueError: when ``layers`` and ``filters`` differ in length.
    """

    def __init__(self, layers, filters, classes: int = 1000, batch_norm: bool = False,
                 **kwargs):
        super().__init__(**kwargs)
        if len(layers) != len(filters):
            raise ValueError(f"VGG: layers and filters must have the same length; got "
                             f"layers={list(layers)}, filters={list(filters)}")
        with self.name_scope():
            self.features = self._make_features(layers, filters, batch_norm)
            self.features.add(nn.Dense(4096, activation="relu", weight_initializer="normal",
                                       bias_initializer="zeros"))
            self.features.add(nn.Dropout(rate=0.5))
            self.features.add(nn.Dense(4096, activation="relu", weight_initializer="normal",
                                       bias_initializer="zeros"))
            self.features.add(nn.Dropout(rate=0.5))
            self.output = nn.Dense(classes, weight_initializer="normal",
                                   bias_initializer="zeros")

    @staticmethod
    def _make_features(layers, filters, batch_norm: bool):
        featurizer = nn.HybridSequential(prefix="")
        for num, channels in zip(layers, filters):
            for _ in range(num):
                featurizer.add(nn.Conv2D(channels, kernel_size=3, padding=1,
                                         weight_initializer=Xavier(rnd_type="gaussian",
                                                                   factor_type="out",
                                                                   magnitude=2),
                                         bias_initializer="zeros"))
                if batch_norm:
                    featurizer.add(nn.BatchNorm())
                featurizer.add(nn.Activation("relu"))
            featurizer.add(nn.MaxPool2D(strides=2))
        return featurizer


# num_layers: (convolutions per block, channels per block)
vgg_spec = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
            13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
            16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
            19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


def get_vgg(num_layers: int, pretrained: bool = False, ctx=None, root: str | None = None,
            **kwargs):
    """A VGG with random weights.

    Args:
        num_layers: 11, 13, 16 or 19.
        pretrained: load MXNet's pretrained weights from a local file (never
            downloaded): ``{root}/{name}-{short sha1}.params`` as MXNet's model store
            keeps them (SHA-1 checked), or ``{root}/{name}.params``.
        ctx: the context(s) of the loaded weights (default cpu(0)).
        root: the weights' directory (default ``$MXNET_HOME/models``, else
            ``~/.mxnet/models``).
        **kwargs: passed to :class:`VGG` (``classes``, ``batch_norm``, ``prefix``).

    Returns:
        The VGG, not initialized (with the weights loaded if ``pretrained``).

    Raises:
        ValueError: for an unknown depth.
        FileNotFoundError: ``pretrained`` and no weights file (the message lists
            where it looked).
    """
    layers, filters = spec_entry("get_vgg", vgg_spec, num_layers)
    return build_model(f"vgg{num_layers}{'_bn' if kwargs.get('batch_norm') else ''}", VGG,
                       layers, filters, pretrained=pretrained, ctx=ctx, root=root, **kwargs)


vgg11 = variant(get_vgg, 11, name="vgg11", summary="VGG-11.")
vgg11_bn = variant(get_vgg, 11, name="vgg11_bn", summary="VGG-11 with BatchNorm.",
                   batch_norm=True)
vgg13 = variant(get_vgg, 13, name="vgg13", summary="VGG-13.")
vgg13_bn = variant(get_vgg, 13, name="vgg13_bn", summary="VGG-13 with BatchNorm.",
                   batch_norm=True)
vgg16 = variant(get_vgg, 16, name="vgg16", summary="VGG-16.")
vgg16_bn = variant(get_vgg, 16, name="vgg16_bn", summary="VGG-16 with BatchNorm.",
                   batch_norm=True)
vgg19 = variant(get_vgg, 19, name="vgg19", summary="VGG-19.")
vgg19_bn = variant(get_vgg, 19, name="vgg19_bn", summary="VGG-19 with BatchNorm.",
                   batch_norm=True)
