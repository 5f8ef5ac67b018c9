"""MXNet's ``mxnet.rnn.rnn_cell`` module name: the cells, defined in this package's
``base``, ``cells``, ``fused``, ``containers``, ``modifiers`` and ``conv_cells``."""
from .base import BaseRNNCell
from .cells import GRUCell, LSTMCell, RNNCell
from .containers import BidirectionalCell, SequentialRNNCell
from .conv_cells import BaseConvRNNCell, ConvGRUCell, ConvLSTMCell, ConvRNNCell
from .fused import FusedRNNCell
from .modifiers import DropoutCell, ModifierCell, ResidualCell, ZoneoutCell
from .params import RNNParams

__all__ = ["BaseConvRNNCell", "BaseRNNCell", "BidirectionalCell", "ConvGRUCell",
           "ConvLSTMCell", "ConvRNNCell", "DropoutCell", "FusedRNNCell", "GRUCell", "LSTMCell",
           "ModifierCell", "RNNCell", "RNNParams", "ResidualCell", "SequentialRNNCell",
           "ZoneoutCell"]
