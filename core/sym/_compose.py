"""Moved to :mod:`core.symbol.compose` (Symbol's one home); this name keeps old imports
(``from core.sym._compose import ...``) working."""
from ..symbol import compose as _module
from ..symbol.compose import *


def __getattr__(name: str):
    return getattr(_module, name)
