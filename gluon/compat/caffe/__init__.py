"""Caffe models to MXNet Symbols and parameters (MXNet's ``tools/caffe_converter``).

:func:`convert_model` reads a network definition (``deploy.prototxt``) and its trained
weights (``.caffemodel``) with protobuf, through the subset of Caffe's schema in
``caffe.proto`` (:mod:`.schema`), and returns the Symbol and its ``arg``/``aux``
parameters, or writes ``<prefix>-symbol.json`` and ``<prefix>-0000.params``. The command
line form is ``python -m gluon.compat.caffe deploy.prototxt weights.caffemodel prefix``.
The layers, and how their semantics map onto MXNet's operators, are in docs/caffe.md.

Example:
    >>> from gluon.compat import caffe
    >>> sorted(caffe.supported_layers())[:3]
    ['AbsVal', 'BNLL', 'BatchNorm']
"""
from __future__ import annotations

from .convert import convert_model, convert_symbol
from .layers import CONVERTERS, CaffeConversionError
from .reader import CaffeFormatError, read_caffemodel, read_prototxt

__all__ = ["CaffeConversionError", "CaffeFormatError", "convert_model", "convert_symbol",
           "read_caffemodel", "read_prototxt", "supported_layers"]


def supported_layers() -> list:
    """The Caffe layer types :func:`convert_model` converts (``Input`` gives inputs).

    Returns:
        The type strings, e.g. ``'Convolution'``.
    """
    return [*CONVERTERS, "Input"]
