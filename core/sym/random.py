"""``core.sym.random`` is :mod:`core.symbol.random` (MXNet 1.x ``sym.random``)."""
from ..symbol import random as _module

globals().update({k: v for k, v in vars(_module).items() if not k.startswith("__")})
