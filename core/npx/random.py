"""``npx.random``: MXNet 2.0's extra samplers (``bernoulli``, ``uniform_n``,
``normal_n``), built on ``core.np.random``'s draws.

Example:
    >>> from core import npx
    >>> npx.random.uniform_n(0.0, 1.0, batch_shape=(4,)).shape
    (4,)
"""
from __future__ import annotations

import numpy as _numpy

from .. import ops as _ops
from ..ndarray import NDArray
from ..np import random as _npr

_F = _ops.F


def _batch(batch_shape, *params):
    lead = () if batch_shape is None else (
        (batch_shape,) if isinstance(batch_shape, int) else tuple(batch_shape))
    shapes = [tuple(p.shape) for p in params if hasattr(p, "shape")]
    return lead + (_numpy.broadcast_shapes(*shapes) if shapes else ())


def bernoulli(prob=None, logit=None, size=None, dtype=None, ctx=None, device=None,
              out=None) -> NDArray:
    """1 with probability ``prob`` (or ``sigmoid(logit)``), else 0; float32 by default.

    Example:
        >>> from core import np, npx
        >>> x = npx.random.bernoulli(0.5, size=(100,))
        >>> sorted(set(x.tolist())) in ([0.0], [1.0], [0.0, 1.0])
        True
    """
    if (prob is None) == (logit is None):
        raise ValueError("npx.random.bernoulli: give exactly one of prob and logit")
    p = _F.sigmoid(logit) if logit is not None else prob
    u = _npr.uniform(0.0, 1.0, size=_npr._shape_of(size, p), ctx=_npr._ctx_of(ctx, device, p))
    res = _F.less(u, p).astype(dtype or "float32")
    if out is not None:
        out[...] = res
        return out
    return res


def uniform_n(low=0.0, high=1.0, batch_shape=None, dtype=None, ctx=None, device=None) -> NDArray:
    """Uniform samples of shape ``batch_shape + broadcast(low, high).shape``.

    Example:
        >>> from core import np, npx
        >>> npx.random.uniform_n(np.zeros(3), 1.0, batch_shape=(2,)).shape
        (2, 3)
    """
    return _npr.uniform(low, high, size=_batch(batch_shape, low, high), dtype=dtype,
                        ctx=_npr._ctx_of(ctx, device, low, high))


def normal_n(loc=0.0, scale=1.0, batch_shape=None, dtype=None, ctx=None, device=None) -> NDArray:
    """Normal samples of shape ``batch_shape + broadcast(loc, scale).shape``.

    Example:
        >>> from core import np, npx
        >>> npx.random.normal_n(np.zeros((2, 1)), np.ones(3), batch_shape=4).shape
        (4, 2, 3)
    """
    return _npr.normal(loc, scale, size=_batch(batch_shape, loc, scale), dtype=dtype,
                       ctx=_npr._ctx_of(ctx, device, loc, scale))
