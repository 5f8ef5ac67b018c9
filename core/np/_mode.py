"""MXNet's NumPy-mode switches (``npx.set_np``/``npx.reset_np``) and the default float dtype.

There is one array type (:class:`core.ndarray.NDArray`) that works with ``core.nd`` and
``core.np`` alike, so the ``shape`` and ``array`` switches only record what the program
asked for (``npx.is_np_array()`` reports it, as MXNet's does). The ``dtype`` switch is
real: with ``set_np(dtype=True)`` the floating-point creation functions of ``core.np``
(``zeros``, ``ones``, ``full``, ``empty``, ``arange``, ``linspace``, ``eye``,
``identity``, ``array`` of Python floats, ``random.uniform``/``normal``/...) default to
float64 as NumPy does, instead of MXNet's float32.

Example:
    >>> from core.np import _mode
    >>> _mode.default_float()
    'float32'
"""
from __future__ import annotations

import functools
import threading


class _Flags(threading.local):
    def __init__(self):
        self.shape = False
        self.array = False
        self.dtype = False


_flags = _Flags()


def set_np(shape: bool = True, array: bool = True, dtype: bool = False) -> None:
    """Turn on MXNet's NumPy semantics (this thread), as ``mxnet.npx.set_np`` does.

    Args:
        shape: NumPy shape semantics (zero-size and scalar arrays); always on here,
            recorded for :func:`is_np_shape`.
        array: NumPy array semantics; recorded for :func:`is_np_array` (one array
            type serves ``core.nd`` and ``core.np``).
        dtype: NumPy's float64 default for floating-point creation functions of
            ``core.np`` (MXNet's default, False, keeps float32).

    Raises:
        ValueError: ``array=True`` with ``shape=False`` (MXNet refuses it too).

    Example:
        >>> from core import npx
        >>> npx.set_np()
        >>> npx.is_np_array()
        True
        >>> npx.reset_np()
    """
    if array and not shape:
        raise ValueError("set_np: NumPy array semantics (array=True) need NumPy shape "
                         "semantics; call set_np(shape=True, array=True)")
    _flags.shape, _flags.array, _flags.dtype = bool(shape), bool(array), bool(dtype)


def reset_np() -> None:
    """Turn MXNet's NumPy switches off again (``set_np(False, False, False)``)."""
    _flags.shape = _flags.array = _flags.dtype = False


def is_np_array() -> bool:
    """Whether :func:`set_np` turned NumPy array semantics on in this thread."""
    return _flags.array


def is_np_shape() -> bool:
    """Whether :func:`set_np` turned NumPy shape semantics on in this thread."""
    return _flags.shape


def is_np_default_dtype() -> bool:
    """Whether ``core.np`` creation functions default to float64 (``set_np(dtype=True)``)."""
    return _flags.dtype


def set_np_default_dtype(is_np_default_dtype: bool = True) -> bool:
    """Switch the float64 creation default on or off; returns the previous setting."""
    prev = _flags.dtype
    _flags.dtype = bool(is_np_default_dtype)
    return prev


def default_float() -> str:
    """The dtype ``core.np`` gives floating-point data when none is asked for."""
    return "float64" if _flags.dtype else "float32"


def use_np(func):
    """Decorator: run ``func`` (or every method of a class) with NumPy semantics on.

    Example:
        >>> from core import npx
        >>> @npx.use_np
        ... def f():
        ...     return npx.is_np_array()
        >>> f(), npx.is_np_array()
        (True, False)
    """
    if isinstance(func, type):
        for name, attr in list(vars(func).items()):
            if callable(attr) and not isinstance(attr, type):
                setattr(func, name, use_np(attr))
        return func

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        prev = (_flags.shape, _flags.array, _flags.dtype)
        _flags.shape = _flags.array = True
        try:
            return func(*args, **kwargs)
        finally:
            _flags.shape, _flags.array, _flags.dtype = prev

    return wrapped
