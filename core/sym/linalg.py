"""``core.sym.linalg`` is :mod:`core.symbol.linalg` (MXNet 1.x ``sym.linalg``)."""
from ..symbol import linalg as _module

globals().update({k: v for k, v in vars(_module).items() if not k.startswith("__")})
