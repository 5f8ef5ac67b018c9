"""Devices: ``Context('cpu'|'gpu', id)``, ``cpu(i)``, ``gpu(i)``, ``current_context()``.

Several CPU contexts (``cpu(0)``, ``cpu(1)``, ...) are distinct logical devices that
share host memory: arrays remember their context and operators refuse to mix them,
so every multi-device code path runs on a machine without a GPU.
"""
from __future__ import annotations

import threading
from typing import ClassVar

import numpy

from . import cuda

_DEVICE_TYPES = ("cpu", "gpu")
# MXNet's pinned and shared host memory ('cpu_pinned', 'cpu_shared': what its DataLoader
# workers return) are plain host memory here: Context('cpu_shared', 0) is cpu(0).
_HOST_ALIASES = ("cpu_pinned", "cpu_shared")


class _CurrentOnClass:
    """``Context.default_ctx``: MXNet 1.x's deprecated class property, the current context."""

    def __get__(self, obj, cls=None):
        return current_context()


class Context:
    """A device: a type (``'cpu'`` or ``'gpu'``) and an id.

    MXNet's ``'cpu_pinned'`` and ``'cpu_shared'`` device types are accepted and give the
    CPU context of that id (host memory is all one kind here).

    Contexts are interned: ``Context('cpu', 1) is cpu(1)``. A context is also a
    ``with`` scope that makes it the default for array creation.

    Args:
        device_type: ``'cpu'`` or ``'gpu'``, or an existing Context.
        device_id: the device number.

    Example:
        >>> from core import cpu
        >>> with cpu(1):
        ...     pass
    """

    __slots__ = ("_xp", "device_id", "device_type")
    _interned: ClassVar[dict] = {}

    def __new__(cls, device_type="cpu", device_id: int = 0):
        if isinstance(device_type, Context):
            return device_type
        if isinstance(device_type, str) and "(" in device_type:  # "cpu(1)" / "gpu:0"
            name, _, rest = device_type.partition("(")
            device_type, device_id = name, int(rest.rstrip(")"))
        elif isinstance(device_type, str) and ":" in device_type:
            name, _, rest = device_type.partition(":")
            device_type, device_id = name, int(rest)
        if device_type == "cuda":
            device_type = "gpu"
        elif device_type in _HOST_ALIASES:  # MXNet's host-memory kinds: host memory here
            device_type = "cpu"
        if device_type not in _DEVICE_TYPES:
            raise ValueError(
                f"Context: unknown device type {device_type!r}; expected one of "
                f"{_DEVICE_TYPES + _HOST_ALIASES}"
            )
        if not isinstance(device_id, (int, numpy.integer)) or device_id < 0:
            raise ValueError(f"Context: device id must be a non-negative int, got {device_id!r}")
        key = (device_type, int(device_id))
        ctx = cls._interned.get(key)
        if ctx is None:
            ctx = object.__new__(cls)
            ctx.device_type, ctx.device_id = key
            ctx._xp = numpy if device_type == "cpu" else None
            cls._interned[key] = ctx
        return ctx

    @property
    def xp(self):
        """The array module for this device: numpy for CPU, cupy for GPU."""
        if self._xp is None:
            xp = cuda.get_cupy()
            n = cuda.gpu_count()
            if self.device_id >= n:  # CuPy without a GPU or driver (e.g. to compile kernels)
                raise RuntimeError(
                    f"{self!r}: no such CUDA device: CuPy is installed but sees {n} GPU(s) "
                    "(no GPU here, or the NVIDIA driver is missing or older than CuPy's "
                    "CUDA)")
            self._xp = xp
        return self._xp

    @property
    def device_typeid(self) -> int:
        return 1 if self.device_type == "cpu" else 2

    def device_guard(self):
        """A context manager that makes this device current for the array module."""
        if self.device_type == "cpu":
            return _NULL_GUARD
        return self.xp.cuda.Device(self.device_id)

    def __reduce__(self):
        return (Context, (self.device_type, self.device_id))

    default_ctx = _CurrentOnClass()

    @staticmethod
    def current_context() -> Context:
        """The innermost ``with ctx:`` context, or the default (MXNet's classmethod)."""
        return current_context()

    def __repr__(self) -> str:
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    def __enter__(self):
        _stack().append(self)
        return self

    def __exit__(self, *exc) -> None:
        _stack().pop()


class _NullGuard:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_NULL_GUARD = _NullGuard()


class _Local(threading.local):
    def __init__(self):
        self.stack = []


_local = _Local()
_default = None


def _stack():
    return _local.stack


def cpu(device_id: int = 0) -> Context:
    """The CPU context ``device_id`` (a logical device sharing host memory)."""
    return Context("cpu", device_id)


def gpu(device_id: int = 0) -> Context:
    """The GPU context ``device_id``; arrays on it need CuPy."""
    return Context("gpu", device_id)


def cpu_pinned(device_id: int = 0) -> Context:
    """MXNet's pinned-memory context; on this framework the same as ``cpu(device_id)``."""
    return Context("cpu", device_id)


def cpu_shared(device_id: int = 0) -> Context:
    """MXNet's shared-memory context (``Context('cpu_shared', i)``); here ``cpu(device_id)``.

    Example:
        >>> from core import context
        >>> context.cpu_shared(0) is context.cpu(0) is context.Context('cpu_shared', 0)
        True
    """
    return Context("cpu", device_id)


def current_context() -> Context:
    """The innermost ``with ctx:`` context, or the default (``cpu(0)``)."""
    s = _local.stack
    if s:
        return s[-1]
    return _default or cpu(0)


def set_default_context(ctx) -> None:
    """Set the process-wide default context used outside any ``with ctx:`` scope."""
    global _default
    _default = Context(ctx)


def num_gpus() -> int:
    """How many GPUs CuPy can see; 0 without CuPy or a GPU (never raises)."""
    return cuda.gpu_count()


def as_context(ctx) -> Context:
    """``None`` means the current context; strings and Contexts are accepted."""
    if ctx is None:
        return current_context()
    if isinstance(ctx, Context):
        return ctx
    return Context(ctx)


def ctx_or_device(ctx, device, where: str):
    """The context given as ``ctx=`` (MXNet 1.x) or ``device=`` (MXNet 2.0's name).

    Args:
        ctx: the value of ``ctx=`` (None when not given).
        device: the value of ``device=`` (None when not given).
        where: the function taking them, for the error.

    Returns:
        Whichever of the two was given (None when neither was).

    Raises:
        TypeError: both were given.

    Example:
        >>> ctx_or_device(None, cpu(1), "initialize")
        cpu(1)
    """
    if device is None:
        return ctx
    if ctx is not None:
        raise TypeError(f"{where}: give the context as ctx= or as device=, not both "
                        f"(got ctx={ctx!r}, device={device!r})")
    return device
