"""Compatibility with code written for Apache MXNet 2.0 (and Dive into Deep Learning).

``gluon.compat.mxnet.install()`` makes ``import mxnet`` resolve to kbackend's modules in
the current process (see ``gluon.compat.mxnet``); ``gluon.compat.image`` and
``gluon.compat.util`` are the stand-ins for ``mxnet.image`` and ``mxnet.util``.
``gluon.compat.onnx`` is MXNet's ``mx.contrib.onnx`` (ONNX files to Symbols and Gluon
blocks), and ``gluon.compat.caffe`` converts Caffe models to MXNet's files like MXNet's
``tools/caffe_converter`` (``python -m gluon.compat.caffe``).

Example:
    >>> from gluon.compat import mxnet as alias
    >>> callable(alias.install)
    True
"""
from . import mxnet

__all__ = ["mxnet"]
