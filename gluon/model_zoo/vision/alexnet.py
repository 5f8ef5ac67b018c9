"""AlexNet (MXNet Gluon 1.9's ``model_zoo.vision.alexnet``), the single-GPU variant
of "One weird trick for parallelizing convolutional neural networks"
(https://arxiv.org/abs/1404.5997).

As in MXNet, the first Dense layer infers its input size on the first call: the
parameter count of the standard model is for 224x224 images (256x6x6 features).
The smallest image it accepts is 63x63.

Example:
    >>> from core import nd
    >>> from gluon.model_zoo import vision
    >>> net = vision.alexnet(classes=10)
    >>> net.initialize()
    >>> net(nd.zeros((1, 3, 63, 63))).shape
    (1, 10)
"""
from __future__ import annotations

from ... import nn
from ._common import FeaturesOutput, build_model

__all__ = ["AlexNet", "alexnet"]


class AlexNet(FeaturesOutput):
    """AlexNet: five convolutions with ReLU (max pooling after the 1st, 2nd and 5th),
    two Dense(4096) layers with ReLU and dropout, and a Dense classifier.

    Args:
        classes: the number of classes of the output layer.
        **kwargs: ``prefix``/``params`` of :class:`gluon.Block`.
    """

    def __init__(self, classes: int = 1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                self.features.add(nn.Conv2D(64, kernel_size=11, strides=4, padding=2,
                                            activation="relu"))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                self.features.add(nn.Conv2D(192, kernel_size=5, padding=2,
                                            activation="relu"))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                self.features.add(nn.Conv2D(384, kernel_size=3, padding=1,
                                            activation="relu"))
                self.features.add(nn.Conv2D(256, kernel_size=3, padding=1,
                                            activation="relu"))
                self.features.add(nn.Conv2D(256, kernel_size=3, padding=1,
                                            activation="relu"))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                self.features.add(nn.Flatten())
                self.features.add(nn.Dense(4096, activation="relu"))
                self.features.add(nn.Dropout(0.5))
                self.features.add(nn.Dense(4096, activation="relu"))
                self.features.add(nn.Dropout(0.5))
            self.output = nn.Dense(classes)


def alexnet(pretrained: bool = False, ctx=None, root: str | None = None, **kwargs):
    """AlexNet with random weights.

    Args:
        pretrained: load MXNet's pretrained weights from a local file (never
            downloaded): ``{root}/{name}-{short sha1}.params`` as MXNet's model store
            keeps them (SHA-1 checked), or ``{root}/{name}.params``.
        ctx: the context(s) of the loaded weights (default cpu(0)).
        root: the weights' directory (default ``$MXNET_HOME/models``, else
            ``~/.mxnet/models``).
        **kwargs: passed to :class:`AlexNet` (``classes``, ``prefix``, ``params``).

    Returns:
        The model, not initialized (with the weights loaded if ``pretrained``).

    Raises:
        FileNotFoundError: ``pretrained`` and no weights file (the message lists
            where it looked).
    """
    return build_model("alexnet", AlexNet, pretrained=pretrained, ctx=ctx, root=root,
                       **kwargs)
