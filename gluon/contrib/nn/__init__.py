"""MXNet 1.9's ``gluon.contrib.nn``: layers MXNet 1.x kept under ``contrib``.

Example:
    >>> from core import nd
    >>> from gluon.contrib.nn import PixelShuffle2D
    >>> PixelShuffle2D((2, 3))(nd.zeros((1, 12, 3, 5))).shape
    (1, 2, 6, 15)
"""
from . import basic_layers
from .basic_layers import *

__all__ = list(basic_layers.__all__)
