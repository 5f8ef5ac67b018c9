"""gluon.model_zoo: predefined network architectures (MXNet Gluon 1.9's
``gluon.model_zoo``).

Only the architectures are provided (``vision``); nothing is downloaded, so
``pretrained=True`` raises an error. To use trained weights, build the model and load
them from a local file with ``net.load_parameters(path)``.

Example:
    >>> from gluon.model_zoo import vision
    >>> net = vision.get_model("resnet18_v1", classes=10)
    >>> type(net).__name__
    'ResNetV1'
"""
from . import vision

__all__ = ["vision"]
