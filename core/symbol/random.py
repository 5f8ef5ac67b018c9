"""MXNet 1.x ``sym.random`` names (the operators of ``nd.random``, on Symbols)."""
from .compose import namespace as _namespace

globals().update(_namespace("random"))
_sample_normal = _namespace("")["sample_normal"]


def randn(*shape, loc=0.0, scale=1.0, dtype=None, **kwargs):
    """MXNet's ``sym.random.randn(*shape, loc=0, scale=1, dtype=None)``: normal draws of
    the shape given as separate ints (or one tuple); Symbol ``loc``/``scale`` give
    ``shape`` draws per element (``sample_normal``).

    Example:
        >>> from core import sym
        >>> sym.random.randn(2, 3, loc=1.0).eval()[0].shape
        (2, 3)
    """
    from .symbol import Symbol

    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    if "shape" in kwargs:  # randn(shape=...) too
        shape = kwargs.pop("shape")
    # no shape: MXNet's () (unknown: inference takes it from the graph, as MXNet 1.x does)
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else shape
    if isinstance(loc, Symbol) or isinstance(scale, Symbol):
        return globals()["_sample_normal"](loc, scale, shape=shape, dtype=dtype, **kwargs)
    return normal(loc, scale, shape=shape, dtype=dtype, **kwargs)  # noqa: F821
