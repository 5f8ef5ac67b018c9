"""MXNet 1.9's ``gluon.contrib.rnn``: convolutional cells, variational dropout, LSTMP.

Example:
    >>> from core import nd
    >>> from gluon.contrib.rnn import LSTMPCell
    >>> cell = LSTMPCell(8, 3)
    >>> cell.initialize()
    >>> out, (r, c) = cell(nd.ones((2, 5)), cell.begin_state(2))
    >>> out.shape, r.shape, c.shape
    ((2, 3), (2, 3), (2, 8))
"""
from . import conv_rnn_cell, rnn_cell
from .conv_rnn_cell import *
from .rnn_cell import *

__all__ = list(conv_rnn_cell.__all__) + list(rnn_cell.__all__)
