"""Parameters of Blocks: ``Parameter``, ``Constant`` (``parameter``) and ``ParameterDict``
(``parameter_dict``), MXNet Gluon 1.9's ``gluon.parameter``.

A :class:`Parameter` holds one copy of its value per context it was initialized on
(all identical) and, unless ``grad_req='null'``, a gradient buffer for each, which
``backward`` fills. A shape may contain unknown dimensions (0 or -1); with
``allow_deferred_init=True`` initialization then waits until the shape is known,
which layers complete on their first forward (``infer_shape`` then
``_finish_deferred_init``).

Example:
    >>> from core import nd, cpu, initializer
    >>> from gluon import Parameter
    >>> w = Parameter("fc_weight", shape=(4, 3), init=initializer.One())
    >>> w.initialize(ctx=[cpu(0), cpu(1)])
    >>> [d.context for d in w.list_data()]
    [cpu(0), cpu(1)]
    >>> w.data(cpu(1)).sum().item(), w.grad(cpu(0)).shape
    (12.0, (4, 3))
"""
from .parameter import (
    Constant,
    DeferredInitializationError,
    InvalidStypeError,
    Parameter,
    tensor_types,
)
from .parameter_dict import ParameterDict

__all__ = ["Constant", "DeferredInitializationError", "InvalidStypeError", "Parameter",
           "ParameterDict", "tensor_types"]
