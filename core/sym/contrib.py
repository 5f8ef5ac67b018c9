"""``core.sym.contrib`` is :mod:`core.symbol.contrib` (MXNet 1.x ``sym.contrib``)."""
from ..symbol import contrib as _module

globals().update({k: v for k, v in vars(_module).items() if not k.startswith("__")})
