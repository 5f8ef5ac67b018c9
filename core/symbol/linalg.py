"""MXNet 1.x ``sym.linalg`` names (the operators of ``nd.linalg``, on Symbols)."""
from .compose import namespace as _namespace

globals().update(_namespace("linalg"))
