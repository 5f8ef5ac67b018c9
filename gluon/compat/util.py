"""The parts of ``mxnet.util`` and ``mxnet.base`` that model code uses, under the alias.

NumPy-mode switches come from ``core.npx`` (``set_np``, ``reset_np``, ``use_np``,
``is_np_array``, ``is_np_shape``); ``np_array``/``np_shape`` are scopes that turn one
switch on and restore it; ``MXNetError`` is the alias' error class, so ``except
mxnet.base.MXNetError`` works; ``NotImplementedForSymbol`` is what ``bool(symbol)``
raises; ``get_gpu_count`` reports ``core.context.num_gpus()``.

Example:
    >>> from core import npx
    >>> from gluon.compat import util
    >>> with util.np_array(True):
    ...     npx.is_np_array()
    True
"""
from __future__ import annotations

import contextlib

import numpy

from core.context import num_gpus as get_gpu_count
from core.npx import is_np_array, is_np_default_dtype, is_np_shape, reset_np, set_np, use_np
from core.symbol.symbol import NotImplementedForSymbol

from .mxnet import MXNetError

__all__ = [
    "MXNetError",
    "NotImplementedForSymbol",
    "get_gpu_count",
    "integer_types",
    "is_np_array",
    "is_np_shape",
    "mx_real_t",
    "numeric_types",
    "np_array",
    "np_shape",
    "py_str",
    "reset_np",
    "set_np",
    "string_types",
    "use_np",
    "use_np_array",
    "use_np_shape",
]

use_np_array = use_np_shape = use_np
mx_real_t = numpy.float32  # MXNet's default real type (mxnet.base.mx_real_t)
# mxnet.base's type tuples, for isinstance checks in MXNet code
integer_types = (int, numpy.integer)
numeric_types = (float, int, numpy.generic)
string_types = (str,)


def py_str(x: bytes) -> str:
    """MXNet's ``mxnet.base.py_str``: UTF-8 bytes as a str."""
    return x.decode("utf-8")


@contextlib.contextmanager
def np_array(active: bool = True):
    """A scope with NumPy array semantics on (or off), restored on exit.

    Args:
        active: the setting inside the scope.

    Yields:
        None.

    Example:
        >>> from core import npx
        >>> from gluon.compat import util
        >>> with util.np_array(False):
        ...     npx.is_np_array()
        False
    """
    before = (is_np_shape(), is_np_array())
    dtype = is_np_default_dtype()
    set_np(shape=before[0] or active, array=active, dtype=dtype)
    try:
        yield
    finally:
        set_np(shape=before[0], array=before[1], dtype=dtype)


@contextlib.contextmanager
def np_shape(active: bool = True):
    """A scope with NumPy shape semantics on (or off), restored on exit.

    Turning shape semantics off also turns array semantics off, as MXNet requires.

    Args:
        active: the setting inside the scope.

    Yields:
        None.

    Example:
        >>> from core import npx
        >>> from gluon.compat import util
        >>> with util.np_shape(True):
        ...     npx.is_np_shape()
        True
    """
    before = (is_np_shape(), is_np_array())
    dtype = is_np_default_dtype()
    set_np(shape=active, array=before[1] and active, dtype=dtype)
    try:
        yield
    finally:
        set_np(shape=before[0], array=before[1], dtype=dtype)
