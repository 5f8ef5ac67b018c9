"""gluon.model_zoo: predefined network architectures (MXNet Gluon 1.9's
``gluon.model_zoo``).

The architectures (``vision``) and, for ``pretrained=True``, the lookup of their
weights in local files with MXNet's names and layout (``model_store``); nothing is ever
downloaded.

Example:
    >>> from gluon.model_zoo import vision
    >>> net = vision.get_model("resnet18_v1", classes=10)
    >>> type(net).__name__
    'ResNetV1'
"""
from . import model_store, vision

__all__ = ["model_store", "vision"]
