"""gluon.nn: neural-network layers (MXNet Gluon 1.9's ``gluon.nn``).

The layers (``basic_layers``, which re-exports ``norm_layers``, ``conv_layers``,
``activations``), the containers ``Sequential``/``HybridSequential``/``Lambda``/
``HybridLambda`` and the base classes ``Block``/``HybridBlock``, all under one
namespace as in MXNet.

Example:
    >>> from core import nd
    >>> from gluon import nn
    >>> net = nn.HybridSequential()
    >>> with net.name_scope():
    ...     net.add(nn.Conv2D(4, 3, activation="relu"), nn.MaxPool2D(), nn.Flatten(),
    ...             nn.Dense(10))
    >>> net.initialize()
    >>> net(nd.zeros((2, 1, 8, 8))).shape
    (2, 10)
"""
from ..block import Block, HybridBlock
from ..containers import HybridLambda, HybridSequential, Lambda, Sequential
from ..symbol_block import SymbolBlock  # MXNet 1.x: gluon.nn.SymbolBlock is gluon's
from . import activations, basic_layers, conv_layers
from .activations import *
from .basic_layers import *
from .conv_layers import *

__all__ = (["Block", "HybridBlock", "HybridLambda", "HybridSequential", "Lambda",
            "Sequential", "SymbolBlock"] + activations.__all__ + basic_layers.__all__ + conv_layers.__all__)
