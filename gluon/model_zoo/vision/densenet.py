"""DenseNet-BC 121/161/169/201 (MXNet Gluon 1.9's ``model_zoo.vision.densenet``), from
"Densely Connected Convolutional Networks" (https://arxiv.org/abs/1608.06993).

The features end with a fixed 7x7 average pooling (as in MXNet), so the images must
be at least 221x221; 224x224 gives 1x1 pooled features.

Example:
    >>> from gluon.block import NameManager
    >>> from gluon.model_zoo import vision
    >>> with NameManager():  # count the model names from 0
    ...     net = vision.densenet121(classes=10)
    >>> len(net.features), net.features[4].prefix
    (15, 'densenet0_stage1_')
"""
from __future__ import annotations

from ... import nn
from ._common import FeaturesOutput, build_model, spec_entry, variant

__all__ = ["DenseNet", "densenet121", "densenet161", "densenet169", "densenet201",
           "get_densenet"]


def _make_dense_layer(growth_rate: int, bn_size: int, dropout: float):
    """BatchNorm-ReLU-1x1 conv, BatchNorm-ReLU-3x3 conv (``growth_rate`` channels),
    concatenated after the layer's input."""
    new_features = nn.HybridSequential(prefix="")
    new_features.add(nn.BatchNorm())
    new_features.add(nn.Activation("relu"))
    new_features.add(nn.Conv2D(bn_size * growth_rate, kernel_size=1, use_bias=False))
    new_features.add(nn.BatchNorm())
    new_features.add(nn.Activation("relu"))
    new_features.add(nn.Conv2D(growth_rate, kernel_size=3, padding=1, use_bias=False))
    if dropout:
        new_features.add(nn.Dropout(dropout))

    out = nn.HybridConcatenate(axis=1, prefix="")
    out.add(nn.Identity())
    out.add(new_features)
    return out


def _make_dense_block(num_layers: int, bn_size: int, growth_rate: int, dropout: float,
                      stage_index: int):
    out = nn.HybridSequential(prefix=f"stage{stage_index}_")
    with out.name_scope():
        for _ in range(num_layers):
            out.add(_make_dense_layer(growth_rate, bn_size, dropout))
    return out


def _make_transition(num_output_features: int):
    out = nn.HybridSequential(prefix="")
    out.add(nn.BatchNorm())
    out.add(nn.Activation("relu"))
    out.add(nn.Conv2D(num_output_features, kernel_size=1, use_bias=False))
    out.add(nn.AvgPool2D(pool_size=2, strides=2))
    return out


class DenseNet(FeaturesOutput):
    """DenseNet-BC: a 7x7 stem, dense blocks separated by transitions that halve the
    channels and the resolution, BatchNorm, ReLU, a 7x7 average pooling and a Dense
    classifier.

    Args:
        num_init_features: the channels of the stem convolution.
        growth_rate: the channels each dense layer adds (``k`` in the paper).
        block_config: the number of layers in each dense block.
        bn_size: the bottleneck width factor (the 1x1 convolutions have
            ``bn_size * growth_rate`` channels).
        dropout: the dropout rate after each dense layer (0: none).
        classes: the number of classes of the output layer.
        **kwargs: ``prefix``/``params`` of :class:`gluon.Block`.
    """

    def __init__(self, num_init_features: int, growth_rate: int, block_config,
                 bn_size: int = 4, dropout: float = 0, classes: int = 1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(num_init_features, kernel_size=7, strides=2,
                                        padding=3, use_bias=False))
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation("relu"))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2, padding=1))
            num_features = num_init_features
            for i, num_layers in enumerate(block_config):
                self.features.add(_make_dense_block(num_layers, bn_size, growth_rate,
                                                    dropout, i + 1))
                num_features += num_layers * growth_rate
                if i != len(block_config) - 1:
                    self.features.add(_make_transition(num_features // 2))
                    num_features //= 2
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation("relu"))
            self.features.add(nn.AvgPool2D(pool_size=7))
            self.features.add(nn.Flatten())

            self.output = nn.Dense(classes)


# num_layers: (num_init_features, growth_rate, block_config)
densenet_spec = {121: (64, 32, [6, 12, 24, 16]),
                 161: (96, 48, [6, 12, 36, 24]),
                 169: (64, 32, [6, 12, 32, 32]),
                 201: (64, 32, [6, 12, 48, 32])}


def get_densenet(num_layers: int, pretrained: bool = False, ctx=None,
                 root: str | None = None, **kwargs):
    """A DenseNet-BC with random weights.

    Args:
        num_layers: 121, 161, 169 or 201.
        pretrained: load MXNet's pretrained weights from a local file (never
            downloaded): ``{root}/{name}-{short sha1}.params`` as MXNet's model store
            keeps them (SHA-1 checked), or ``{root}/{name}.params``.
        ctx: the context(s) of the loaded weights (default cpu(0)).
        root: the weights' directory (default ``$MXNET_HOME/models``, else
            ``~/.mxnet/models``).
        **kwargs: passed to :class:`DenseNet` (``classes``, ``bn_size``, ``dropout``,
            ``prefix``, ``params``).

    Returns:
        The model, not initialized (with the weights loaded if ``pretrained``).

    Raises:
        ValueError: for an unknown depth.
        FileNotFoundError: ``pretrained`` and no weights file (the message lists
            where it looked).
    """
    num_init_features, growth_rate, block_config = spec_entry("get_densenet", densenet_spec,
                                                              num_layers)
    return build_model(f"densenet{num_layers}", DenseNet, num_init_features, growth_rate,
                       block_config, pretrained=pretrained, ctx=ctx, root=root,
                       **kwargs)


densenet121 = variant(get_densenet, 121, name="densenet121", summary="DenseNet-BC-121.")
densenet161 = variant(get_densenet, 161, name="densenet161", summary="DenseNet-BC-161.")
densenet169 = variant(get_densenet, 169, name="densenet169", summary="DenseNet-BC-169.")
densenet201 = variant(get_densenet, 201, name="densenet201", summary="DenseNet-BC-201.")
