"""MXNet 1.x's ``mx.sym``: a thin alias of :mod:`core.symbol`, Symbol's one home.

Every registered operator is callable here on Symbols under ``core.nd``'s names;
``core.sym.<name>`` is ``core.symbol.<name>`` (the same objects). ``sym.var`` is MXNet's
variable constructor (``core.nd.var``, the variance, is not available under that name).

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
from .. import symbol as _symbol
from ..symbol import *

globals().update(_symbol.operator_functions())

from . import _internal, contrib, linalg, random, sparse  # noqa: F401
