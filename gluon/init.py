"""Initializers (``core.initializer``), also reachable as ``gluon.init``.

Example:
    >>> from gluon import init
    >>> init.Xavier(magnitude=2.24)
    Xavier(rnd_type='uniform', factor_type='avg', magnitude=2.24)
"""
from core.initializer import *
from core.initializer import __all__  # noqa: F401
