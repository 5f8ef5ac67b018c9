"""gluon.model_zoo.vision: image-classification architectures (MXNet Gluon 1.9's
``gluon.model_zoo.vision``).

AlexNet, DenseNet-BC (121/161/169/201), Inception V3, ResNet V1 and V2
(18/34/50/101/152), SqueezeNet 1.0/1.1, VGG (11/13/16/19, with and without
BatchNorm), MobileNet V1 and V2 (width multipliers 1.0, 0.75, 0.5, 0.25): the same
layer structure, parameter names, ``features``/``output`` children and defaults
(``classes=1000``) as MXNet's model zoo. Build a model by its constructor
(``resnet18_v1()``) or by name (:func:`get_model`); it has random weights once
initialized.

``pretrained=True`` loads MXNet's pretrained weights from a local file, never
downloaded: ``{root}/{name}-{short sha1}.params``, the name and layout of MXNet's model
store (so an existing ``~/.mxnet/models`` works; the SHA-1 is checked), or
``{root}/{name}.params``; ``root`` defaults to ``$MXNET_HOME/models``, else
``~/.mxnet/models`` (see :mod:`gluon.model_zoo.model_store`). With no file, the error
lists where it looked.

The models expect mini-batches of RGB images (N x 3 x H x W) scaled to [0, 1] and
normalized with mean (0.485, 0.456, 0.406) and std (0.229, 0.224, 0.225), H and W
normally 224 (299 for Inception V3).

Example:
    >>> from core import nd
    >>> from gluon.model_zoo import vision
    >>> net = vision.get_model("mobilenetv2_0.25", classes=10)
    >>> net.initialize()
    >>> net(nd.zeros((2, 3, 32, 32))).shape
    (2, 10)
"""
from __future__ import annotations

from . import alexnet as _alexnet
from . import densenet as _densenet
from . import inception as _inception
from . import mobilenet as _mobilenet
from . import resnet as _resnet
from . import squeezenet as _squeezenet
from . import vgg as _vgg
from .alexnet import *
from .densenet import *
from .inception import *
from .mobilenet import *
from .resnet import *
from .squeezenet import *
from .vgg import *

# The names get_model accepts, as in MXNet.
_models = {
    "resnet18_v1": resnet18_v1,
    "resnet34_v1": resnet34_v1,
    "resnet50_v1": resnet50_v1,
    "resnet101_v1": resnet101_v1,
    "resnet152_v1": resnet152_v1,
    "resnet18_v2": resnet18_v2,
    "resnet34_v2": resnet34_v2,
    "resnet50_v2": resnet50_v2,
    "resnet101_v2": resnet101_v2,
    "resnet152_v2": resnet152_v2,
    "vgg11": vgg11,
    "vgg13": vgg13,
    "vgg16": vgg16,
    "vgg19": vgg19,
    "vgg11_bn": vgg11_bn,
    "vgg13_bn": vgg13_bn,
    "vgg16_bn": vgg16_bn,
    "vgg19_bn": vgg19_bn,
    "alexnet": alexnet,
    "densenet121": densenet121,
    "densenet161": densenet161,
    "densenet169": densenet169,
    "densenet201": densenet201,
    "squeezenet1.0": squeezenet1_0,
    "squeezenet1.1": squeezenet1_1,
    "inceptionv3": inception_v3,
    "mobilenet1.0": mobilenet1_0,
    "mobilenet0.75": mobilenet0_75,
    "mobilenet0.5": mobilenet0_5,
    "mobilenet0.25": mobilenet0_25,
    "mobilenetv2_1.0": mobilenet_v2_1_0,
    "mobilenetv2_0.75": mobilenet_v2_0_75,
    "mobilenetv2_0.5": mobilenet_v2_0_5,
    "mobilenetv2_0.25": mobilenet_v2_0_25,
}


def get_model(name: str, **kwargs):
    """A model of the zoo by name.

    Args:
        name: the model's name, case-insensitive: ``'resnet18_v1'`` ...
            ``'resnet152_v2'``, ``'vgg11'`` ... ``'vgg19_bn'``, ``'alexnet'``,
            ``'densenet121'`` ... ``'densenet201'``, ``'squeezenet1.0'``,
            ``'squeezenet1.1'``, ``'inceptionv3'``, ``'mobilenet1.0'`` ...
            ``'mobilenet0.25'``, ``'mobilenetv2_1.0'`` ... ``'mobilenetv2_0.25'``.
        **kwargs: passed to the model's function: ``classes`` (default 1000),
            ``pretrained``/``ctx``/``root`` (local pretrained weights, as above),
            model-specific options (``thumbnail``, ``batch_norm``, ...), ``prefix``,
            ``params``.

    Returns:
        The model (a HybridBlock), not initialized (with the weights loaded if
        ``pretrained``).

    Raises:
        ValueError: for an unknown name (listing the valid ones).
        FileNotFoundError: ``pretrained`` and no weights file (the message lists where
            it looked).

    Example:
        >>> from gluon.model_zoo.vision import get_model
        >>> type(get_model("VGG11_bn", classes=10)).__name__
        'VGG'
        >>> get_model("resnet_18")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: Model resnet_18 is not supported. Available options are
            alexnet
            densenet121
        ...
    """
    key = name.lower()
    if key not in _models:
        raise ValueError(f"Model {key} is not supported. Available options are\n\t"
                         + "\n\t".join(sorted(_models)))
    return _models[key](**kwargs)


__all__ = (["get_model"] + _alexnet.__all__ + _densenet.__all__ + _inception.__all__
           + _mobilenet.__all__ + _resnet.__all__ + _squeezenet.__all__ + _vgg.__all__)
