"""Keras backend ``rnn``: not implemented yet (each function raises NotImplementedError).

``cudnn_ok`` answers False: there is no fused cuDNN path to offer Keras yet.
"""
from kbackend._missing import add_stubs


def cudnn_ok(*args, **kwargs):
    return False


_NOT_YET = ["rnn", "lstm", "gru", "bidirectional_lstm", "bidirectional_gru"]
add_stubs(globals(), "rnn", _NOT_YET)
