"""MXNet 1.x ``nd.random`` names."""
from .. import ops as _ops  # noqa: F401
from ..ops.namespace import namespace as _namespace

globals().update(_namespace("nd", "random"))


def randn(*shape, loc: float = 0.0, scale: float = 1.0, dtype=None, ctx=None, out=None,
          **kwargs):
    """MXNet's ``nd.random.randn(*shape, loc=0, scale=1, dtype=None, ctx=None)``: Gaussian
    draws of the shape given as separate integers (or one tuple).

    Example:
        >>> from core import nd
        >>> nd.random.randn(2, 3).shape
        (2, 3)
    """
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return normal(loc, scale, shape=shape, dtype=dtype, ctx=ctx, out=out, **kwargs)  # noqa: F821
