"""NumPy's ``random`` names over the registry (``mxnet.np.random``).

Example:
    >>> from core import np
    >>> np.random.seed(0)
    >>> np.random.uniform(0, 1, size=(2, 3)).shape
    (2, 3)
"""
from .. import ops as _ops
from ..ops.registry import namespace as _namespace
from ..random import seed  # noqa: F401 - np.random.seed, as in MXNet

globals().update(_namespace("np", "random"))


def shuffle(x) -> None:
    """Shuffle ``x`` along its first axis in place (NumPy's semantics); returns None."""
    x[...] = _ops.F.random_shuffle(x)


def rand(*size, ctx=None, device=None):
    """Uniform samples in [0, 1) of the given dimensions (float32)."""
    return uniform(0.0, 1.0, size=size or None, ctx=ctx or device)  # noqa: F821


def randn(*size, ctx=None, device=None):
    """Standard normal samples of the given dimensions (float32)."""
    return normal(0.0, 1.0, size=size or None, ctx=ctx or device)  # noqa: F821


def random(size=None, ctx=None, device=None):
    """Uniform samples in [0, 1) (NumPy's ``random``/``random_sample``)."""
    return uniform(0.0, 1.0, size=size, ctx=ctx or device)  # noqa: F821


random_sample = random
