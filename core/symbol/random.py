"""MXNet 1.x ``sym.random`` names (the operators of ``nd.random``, on Symbols)."""
from .compose import namespace as _namespace

globals().update(_namespace("random"))
