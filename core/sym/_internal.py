"""MXNet 1.x's ``sym._internal``: the operators registered under ``_internal.`` names
(``_square_sum``, ...), on Symbols.

Example:
    >>> from core import sym
    >>> s = sym._internal._square_sum(sym.var("v"), axis=1, keepdims=True)
    >>> s.infer_shape(v=(4, 3))[1]
    [(4, 1)]
"""
from ..symbol.compose import namespace as _namespace

globals().update(_namespace("_internal"))
