"""MXNet's ``mxnet.rnn.rnn`` module name: the checkpoint functions (``checkpoint``)."""
from .checkpoint import do_rnn_checkpoint, load_rnn_checkpoint, rnn_unroll, save_rnn_checkpoint

__all__ = ["do_rnn_checkpoint", "load_rnn_checkpoint", "rnn_unroll", "save_rnn_checkpoint"]
