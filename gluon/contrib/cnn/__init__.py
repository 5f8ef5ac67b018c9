"""MXNet 1.9's ``gluon.contrib.cnn``: deformable convolutions (plain and modulated).

Example:
    >>> from core import nd
    >>> from gluon.contrib.cnn import DeformableConvolution
    >>> layer = DeformableConvolution(2, kernel_size=3)
    >>> layer.initialize()
    >>> layer(nd.ones((1, 1, 4, 4))).shape
    (1, 2, 2, 2)
"""
from . import conv_layers, deformable
from .conv_layers import DeformableConvolution, ModulatedDeformableConvolution

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution", "conv_layers",
           "deformable"]
