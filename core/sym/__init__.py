"""MXNet 1.x's ``mx.sym``: every registered operator on Symbols, under ``core.nd``'s names.

Calling a function adds a node to a graph instead of computing (see
:mod:`core.symbol.symbol` for :class:`Symbol` and :mod:`core.sym._compose` for how
arguments bind and parameters are created). ``sym.var`` is MXNet's variable
constructor (``core.nd.var``, the variance, is not available under that name here).

Example:
    >>> from core import sym
    >>> x = sym.var("data")
    >>> net = sym.FullyConnected(x, num_hidden=3, name="fc1")
    >>> net = sym.Activation(net, act_type="relu", name="relu1")
    >>> net.list_arguments()
    ['data', 'fc1_weight', 'fc1_bias']
    >>> net.infer_shape(data=(5, 7))[0]
    [(5, 7), (3, 7), (3,)]
"""
from .. import ops as _ops  # noqa: F401 - registers the operators
from . import _compose

globals().update(_compose.namespace(""))

from ..symbol.symbol import Symbol  # noqa: F401
from ._base import (  # noqa: F401
    AttrScope,
    Group,
    NameManager,
    Prefix,
    Variable,
    load,
    load_json,
    var,
)
from ._compose import BlockGrad, concat, stack  # noqa: F401

stop_gradient = BlockGrad

from . import contrib, linalg, random  # noqa: F401
