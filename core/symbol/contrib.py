"""MXNet 1.x ``sym.contrib`` names (the operators of ``nd.contrib``, on Symbols)."""
from .compose import namespace as _namespace

globals().update(_namespace("contrib"))
