"""MXNet 1.x's ``mx.contrib.symbol`` (also ``mx.contrib.sym``): the ``sym.contrib`` operators.

Every name is looked up in :mod:`core.symbol.contrib`, so operators added there later
appear here too.

Example:
    >>> from core.contrib import symbol
    >>> symbol.CTCLoss is not None
    True
"""
from ..symbol import contrib as _contrib

globals().update({k: v for k, v in vars(_contrib).items() if not k.startswith("_")})


def __getattr__(name: str):
    try:
        return getattr(_contrib, name)
    except AttributeError:
        raise AttributeError(f"mx.contrib.symbol has no operator {name!r} (nor has "
                             "core.symbol.contrib)") from None


def __dir__():
    return sorted(set(globals()) | {k for k in dir(_contrib) if not k.startswith("_")})
