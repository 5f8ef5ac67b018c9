"""Inception V3 (MXNet Gluon 1.9's ``model_zoo.vision.inception``), from "Rethinking the
Inception Architecture for Computer Vision" (https://arxiv.org/abs/1512.00567).

As in MXNet, the model has no auxiliary classifier, and its features end with a fixed
8x8 average pooling, so the images must be at least 299x299 (the standard size).

Example:
    >>> from gluon.block import NameManager
    >>> from gluon.model_zoo import vision
    >>> with NameManager():  # count the model names from 0
    ...     net = vision.inception_v3(classes=10)
    >>> [net.features[i].prefix for i in (7, 10, 15, 16)]
    ['inception30_A1_', 'inception30_B_', 'inception30_D_', 'inception30_E1_']
"""
from __future__ import annotations

from ... import nn
from ._common import FeaturesOutput, build_model

__all__ = ["Inception3", "inception_v3"]

_CONV_SETTINGS = ("channels", "kernel_size", "strides", "padding")


def _make_basic_conv(**kwargs):
    """A convolution without bias, BatchNorm (epsilon 0.001) and ReLU."""
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(use_bias=False, **kwargs))
    out.add(nn.BatchNorm(epsilon=0.001))
    out.add(nn.Activation("relu"))
    return out


def _make_branch(use_pool: str | None, *conv_settings):
    """An optional pooling (``'avg'``: 3x3 stride 1 padded, ``'max'``: 3x3 stride 2),
    then basic convolutions, each given as ``(channels, kernel_size, strides,
    padding)`` with None for the default."""
    out = nn.HybridSequential(prefix="")
    if use_pool == "avg":
        out.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif use_pool == "max":
        out.add(nn.MaxPool2D(pool_size=3, strides=2))
    for setting in conv_settings:
        kwargs = {name: value for name, value in zip(_CONV_SETTINGS, setting)
                  if value is not None}
        out.add(_make_basic_conv(**kwargs))
    return out


def _make_A(pool_features: int, prefix: str):
    out = nn.HybridConcatenate(axis=1, prefix=prefix)
    with out.name_scope():
        out.add(_make_branch(None, (64, 1, None, None)))
        out.add(_make_branch(None, (48, 1, None, None), (64, 5, None, 2)))
        out.add(_make_branch(None, (64, 1, None, None), (96, 3, None, 1),
                             (96, 3, None, 1)))
        out.add(_make_branch("avg", (pool_features, 1, None, None)))
    return out


def _make_B(prefix: str):
    out = nn.HybridConcatenate(axis=1, prefix=prefix)
    with out.name_scope():
        out.add(_make_branch(None, (384, 3, 2, None)))
        out.add(_make_branch(None, (64, 1, None, None), (96, 3, None, 1),
                             (96, 3, 2, None)))
        out.add(_make_branch("max"))
    return out


def _make_C(channels_7x7: int, prefix: str):
    out = nn.HybridConcatenate(axis=1, prefix=prefix)
    with out.name_scope():
        out.add(_make_branch(None, (192, 1, None, None)))
        out.add(_make_branch(None, (channels_7x7, 1, None, None),
                             (channels_7x7, (1, 7), None, (0, 3)),
                             (192, (7, 1), None, (3, 0))))
        out.add(_make_branch(None, (channels_7x7, 1, None, None),
                             (channels_7x7, (7, 1), None, (3, 0)),
                             (channels_7x7, (1, 7), None, (0, 3)),
                             (channels_7x7, (7, 1), None, (3, 0)),
                             (192, (1, 7), None, (0, 3))))
        out.add(_make_branch("avg", (192, 1, None, None)))
    return out


def _make_D(prefix: str):
    out = nn.HybridConcatenate(axis=1, prefix=prefix)
    with out.name_scope():
        out.add(_make_branch(None, (192, 1, None, None), (320, 3, 2, None)))
        out.add(_make_branch(None, (192, 1, None, None), (192, (1, 7), None, (0, 3)),
                             (192, (7, 1), None, (3, 0)), (192, 3, 2, None)))
        out.add(_make_branch("max"))
    return out


def _make_E(prefix: str):
    out = nn.HybridConcatenate(axis=1, prefix=prefix)
    with out.name_scope():
        out.add(_make_branch(None, (320, 1, None, None)))

        branch_3x3 = nn.HybridSequential(prefix="")
        out.add(branch_3x3)
        branch_3x3.add(_make_branch(None, (384, 1, None, None)))
        branch_3x3_split = nn.HybridConcatenate(axis=1, prefix="")
        branch_3x3_split.add(_make_branch(None, (384, (1, 3), None, (0, 1))))
        branch_3x3_split.add(_make_branch(None, (384, (3, 1), None, (1, 0))))
        branch_3x3.add(branch_3x3_split)

        branch_3x3dbl = nn.HybridSequential(prefix="")
        out.add(branch_3x3dbl)
        branch_3x3dbl.add(_make_branch(None, (448, 1, None, None), (384, 3, None, 1)))
        branch_3x3dbl_split = nn.HybridConcatenate(axis=1, prefix="")
        branch_3x3dbl.add(branch_3x3dbl_split)
        branch_3x3dbl_split.add(_make_branch(None, (384, (1, 3), None, (0, 1))))
        branch_3x3dbl_split.add(_make_branch(None, (384, (3, 1), None, (1, 0))))

        out.add(_make_branch("avg", (192, 1, None, None)))
    return out


def make_aux(classes: int):
    """The auxiliary classifier of the paper (MXNet defines it but Inception3 does not
    use it).

    Args:
        classes: the number of classes.

    Returns:
        A HybridSequential: 5x5 average pooling (stride 3), 1x1 and 5x5 basic
        convolutions, Flatten and Dense.
    """
    out = nn.HybridSequential(prefix="")
    out.add(nn.AvgPool2D(pool_size=5, strides=3))
    out.add(_make_basic_conv(channels=128, kernel_size=1))
    out.add(_make_basic_conv(channels=768, kernel_size=5))
    out.add(nn.Flatten())
    out.add(nn.Dense(classes))
    return out


class Inception3(FeaturesOutput):
    """Inception V3: a stem of basic convolutions and max poolings, the Inception
    modules A1-A3, B, C1-C4, D, E1-E2, an 8x8 average pooling, dropout and a Dense
    classifier.

    Args:
        classes: the number of classes of the output layer.
        **kwargs: ``prefix``/``params`` of :class:`gluon.Block`.
    """

    def __init__(self, classes: int = 1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(_make_basic_conv(channels=32, kernel_size=3, strides=2))
            self.features.add(_make_basic_conv(channels=32, kernel_size=3))
            self.features.add(_make_basic_conv(channels=64, kernel_size=3, padding=1))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
            self.features.add(_make_basic_conv(channels=80, kernel_size=1))
            self.features.add(_make_basic_conv(channels=192, kernel_size=3))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
            self.features.add(_make_A(32, "A1_"))
            self.features.add(_make_A(64, "A2_"))
            self.features.add(_make_A(64, "A3_"))
            self.features.add(_make_B("B_"))
            self.features.add(_make_C(128, "C1_"))
            self.features.add(_make_C(160, "C2_"))
            self.features.add(_make_C(160, "C3_"))
            self.features.add(_make_C(192, "C4_"))
            self.features.add(_make_D("D_"))
            self.features.add(_make_E("E1_"))
            self.features.add(_make_E("E2_"))
            self.features.add(nn.AvgPool2D(pool_size=8))
            self.features.add(nn.Dropout(0.5))

            self.output = nn.Dense(classes)


def inception_v3(pretrained: bool = False, ctx=None, root: str | None = None, **kwargs):
    """Inception V3 with random weights (for 299x299 images).

    Args:
        pretrained: load MXNet's pretrained weights from a local file (never
            downloaded): ``{root}/{name}-{short sha1}.params`` as MXNet's model store
            keeps them (SHA-1 checked), or ``{root}/{name}.params``.
        ctx: the context(s) of the loaded weights (default cpu(0)).
        root: the weights' directory (default ``$MXNET_HOME/models``, else
            ``~/.mxnet/models``).
        **kwargs: passed to :class:`Inception3` (``classes``, ``prefix``, ``params``).

    Returns:
        The model, not initialized (with the weights loaded if ``pretrained``).

    Raises:
        FileNotFoundError: ``pretrained`` and no weights file (the message lists
            where it looked).
    """
    return build_model("inceptionv3", Inception3, pretrained=pretrained, ctx=ctx,
                       root=root, **kwargs)
