"""MXNet 1.x ``sym.linalg`` names (the operators of ``nd.linalg``, on Symbols)."""
from ._compose import namespace as _namespace

globals().update(_namespace("linalg"))
