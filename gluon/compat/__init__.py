"""Compatibility with code written for Apache MXNet 2.0 (and Dive into Deep Learning).

``gluon.compat.mxnet.install()`` makes ``import mxnet`` resolve to kbackend's modules in
the current process (see ``gluon.compat.mxnet``); ``gluon.compat.image`` and
``gluon.compat.util`` are the stand-ins for ``mxnet.image`` and ``mxnet.util``.

Example:
    >>> from gluon.compat import mxnet as alias
    >>> callable(alias.install)
    True
"""
from . import mxnet

__all__ = ["mxnet"]
