"""Recurrent layers and cells (MXNet Gluon 1.9's ``gluon.rnn``).

The fused layers ``RNN``, ``LSTM`` and ``GRU`` (``rnn_layer``) run a whole sequence
through the operator ``nd.RNN``; the cells (``rnn_cell``) compute one step at a
time and compose: ``SequentialRNNCell``/``HybridSequentialRNNCell`` stack them,
``BidirectionalCell`` pairs two, ``DropoutCell``, ``ZoneoutCell`` and
``ResidualCell`` modify them. A cell unrolled equals the fused layer with the same
weights.
"""
from .rnn_cell import (
                       BidirectionalCell,
                       DropoutCell,
                       GRUCell,
                       HybridRecurrentCell,
                       HybridSequentialRNNCell,
                       LSTMCell,
                       ModifierCell,
                       RecurrentCell,
                       ResidualCell,
                       RNNCell,
                       SequentialRNNCell,
                       ZoneoutCell,
)
from .rnn_layer import GRU, LSTM, RNN

__all__ = ["GRU", "LSTM", "RNN", "BidirectionalCell", "DropoutCell", "GRUCell",
           "HybridRecurrentCell", "HybridSequentialRNNCell", "LSTMCell", "ModifierCell",
           "RNNCell", "RecurrentCell", "ResidualCell", "SequentialRNNCell", "ZoneoutCell"]
