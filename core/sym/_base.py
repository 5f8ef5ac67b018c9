"""Moved to :mod:`core.symbol.constructors` (Symbol's one home); this name keeps old imports
(``from core.sym._base import ...``) working."""
from ..symbol import constructors as _module
from ..symbol.constructors import *


def __getattr__(name: str):
    return getattr(_module, name)
