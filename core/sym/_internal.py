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

# MXNet's elementwise binary operators under their internal names (``_maximum``, ...)
_ALIASES = {"_maximum": "maximum", "_minimum": "minimum", "_hypot": "hypot",
            "_power": "power", "_plus": "elemwise_add", "_minus": "elemwise_sub",
            "_mul": "elemwise_mul", "_div": "elemwise_div"}


def _aliases() -> dict:
    from ..symbol import operator_functions

    fns = operator_functions()
    return {k: fns[v] for k, v in _ALIASES.items() if v in fns and k not in globals()}


globals().update(_aliases())
