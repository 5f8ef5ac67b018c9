"""MXNet 1.x's legacy symbolic RNN API (``mx.rnn``): cells that build Symbol graphs.

``mx.rnn`` cells are not Gluon Blocks: each call adds nodes to a Symbol graph, with
the weights as named variables (``lstm_i2h_weight``, ...). ``cell.unroll(length,
inputs)`` returns ``(outputs, states)`` Symbols that ``mx.mod.Module`` or
``BucketingModule`` bind and train; ``FusedRNNCell`` is the fused ``RNN`` operator and
``unfuse()`` its stack of step cells; ``pack_weights``/``unpack_weights`` convert
between packed and per-gate arrays; ``encode_sentences`` and ``BucketSentenceIter``
prepare text; ``save_rnn_checkpoint``/``load_rnn_checkpoint`` save per-gate weights.
Under the ``mxnet`` alias this package is ``mxnet.rnn``.

Modules: ``params`` (RNNParams), ``sequence`` (inputs as steps or one Symbol),
``base`` (BaseRNNCell), ``cells`` (RNN/LSTM/GRU), ``fused`` (FusedRNNCell, FusedRNN),
``containers`` (Sequential, Bidirectional), ``modifiers`` (Dropout, Zoneout,
Residual), ``conv_cells`` (ConvRNN/ConvLSTM/ConvGRU), ``io``, ``checkpoint``;
``rnn_cell`` and ``rnn`` are MXNet's module names for the same classes and functions.

Example:
    >>> from core import rnn, sym
    >>> stack = rnn.SequentialRNNCell()
    >>> stack.add(rnn.LSTMCell(16, prefix="l0_"))
    >>> stack.add(rnn.GRUCell(8, prefix="l1_"))
    >>> outputs, states = stack.unroll(5, sym.var("data"), merge_outputs=True)
    >>> outputs.infer_shape(data=(4, 5, 3))[1]
    [(4, 5, 8)]
"""
from . import io  # noqa: F401  (mx.rnn.io)
from .base import BaseRNNCell
from .cells import GRUCell, LSTMCell, RNNCell
from .checkpoint import do_rnn_checkpoint, load_rnn_checkpoint, rnn_unroll, save_rnn_checkpoint
from .containers import BidirectionalCell, SequentialRNNCell
from .conv_cells import BaseConvRNNCell, ConvGRUCell, ConvLSTMCell, ConvRNNCell
from .fused import FusedRNN, FusedRNNCell
from .io import BucketSentenceIter, encode_sentences
from .modifiers import DropoutCell, ModifierCell, ResidualCell, ZoneoutCell
from .params import RNNParams

__all__ = ["BaseConvRNNCell", "BaseRNNCell", "BidirectionalCell", "BucketSentenceIter",
           "ConvGRUCell", "ConvLSTMCell", "ConvRNNCell", "DropoutCell", "FusedRNN",
           "FusedRNNCell", "GRUCell", "LSTMCell", "ModifierCell", "RNNCell", "RNNParams",
           "ResidualCell", "SequentialRNNCell", "ZoneoutCell", "do_rnn_checkpoint",
           "encode_sentences", "load_rnn_checkpoint", "rnn_unroll", "save_rnn_checkpoint"]
