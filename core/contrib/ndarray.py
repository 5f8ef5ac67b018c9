"""MXNet 1.x's ``mx.contrib.ndarray`` (also ``mx.contrib.nd``): the ``nd.contrib`` operators.

Every name is looked up in :mod:`core.nd.contrib`, so operators added there later
appear here too.

Example:
    >>> from core import nd
    >>> from core.contrib import ndarray
    >>> ndarray.isfinite(nd.array([1.0, float("inf")])).asnumpy().tolist()
    [1.0, 0.0]
"""
from ..nd import contrib as _contrib

globals().update({k: v for k, v in vars(_contrib).items() if not k.startswith("_")})


def __getattr__(name: str):
    try:
        return getattr(_contrib, name)
    except AttributeError:
        raise AttributeError(f"mx.contrib.ndarray has no operator {name!r} (nor has "
                             "core.nd.contrib)") from None


def __dir__():
    return sorted(set(globals()) | {k for k in dir(_contrib) if not k.startswith("_")})
