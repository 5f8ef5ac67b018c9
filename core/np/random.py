"""NumPy's ``random`` names over the registry, with MXNet 2.0's signatures
(``mxnet.np.random``): ``size``, ``dtype`` (float32 by default, float64 after
``npx.set_np(dtype=True)``), and ``ctx``/``device`` for where the samples go.

The distributions the registry has no operator for are transformations of uniform,
normal or gamma draws (``lognormal``, ``logistic``, ``gumbel``, ``laplace``,
``weibull``, ``pareto``, ``power``, ``rayleigh``, ``beta``, ``chisquare``, ``f``,
``multivariate_normal``), so they are reparameterized: gradients flow to array
parameters such as ``loc`` and ``scale``.

Example:
    >>> from core import np
    >>> np.random.seed(0)
    >>> np.random.uniform(0, 1, size=(2, 3)).shape
    (2, 3)
"""
from __future__ import annotations

from .. import ops as _ops
from ..ops.namespace import namespace as _namespace
from ..random import seed  # noqa: F401 - np.random.seed, as in MXNet
from ._mode import _flags

globals().update(_namespace("np", "random"))
_gen = _namespace("np", "random")
_F = _ops.F


def _dt(dtype):
    return "float64" if dtype is None and _flags.dtype else dtype


def _dev(ctx, device):
    return ctx if ctx is not None else device


def _out(res, out):
    if out is None:
        return res
    out[...] = res
    return out


def uniform(low=0.0, high=1.0, size=None, dtype=None, ctx=None, device=None, out=None):
    """Samples from the uniform distribution on ``[low, high)``.

    Example:
        >>> from core import np
        >>> x = np.random.uniform(-1, 1, size=(3,))
        >>> bool(((x >= -1) & (x < 1)).all()), x.dtype
        (True, dtype('float32'))
    """
    return _out(_gen["uniform"](low, high, size=size, dtype=_dt(dtype),
                                ctx=_dev(ctx, device)), out)


def normal(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, device=None, out=None):
    """Samples from the normal distribution with mean ``loc`` and deviation ``scale``.

    Example:
        >>> from core import np
        >>> np.random.normal(0, 1, size=(2, 2)).shape
        (2, 2)
    """
    return _out(_gen["normal"](loc, scale, size=size, dtype=_dt(dtype),
                               ctx=_dev(ctx, device)), out)


def shuffle(x) -> None:
    """Shuffle ``x`` along its first axis in place (NumPy's semantics); returns None."""
    x[...] = _ops.F.random_shuffle(x)


def rand(*size, ctx=None, device=None):
    """Uniform samples in [0, 1) of the given dimensions (float32)."""
    return uniform(0.0, 1.0, size=size or None, ctx=ctx, device=device)


def randn(*size, ctx=None, device=None):
    """Standard normal samples of the given dimensions (float32)."""
    return normal(0.0, 1.0, size=size or None, ctx=ctx, device=device)


def random(size=None, ctx=None, device=None):
    """Uniform samples in [0, 1) (NumPy's ``random``/``random_sample``)."""
    return uniform(0.0, 1.0, size=size, ctx=ctx, device=device)


random_sample = random


def _shape_of(size, *params):
    """The sample shape: ``size``, or the broadcast shape of the array parameters."""
    if size is not None:
        return (size,) if isinstance(size, int) else tuple(size)
    import numpy

    shapes = [tuple(p.shape) for p in params if hasattr(p, "shape")]
    return numpy.broadcast_shapes(*shapes) if shapes else ()


def _ctx_of(ctx, device, *params):
    dev = _dev(ctx, device)
    if dev is None:
        dev = next((p.context for p in params if hasattr(p, "context")), None)
    return dev


def _u(size, dtype, ctx, device, *params):
    """Uniform draws in the open interval (0, 1) of the parameters' shape."""
    shape = _shape_of(size, *params)
    u = _gen["uniform"](0.0, 1.0, size=shape, dtype=_dt(dtype), ctx=_ctx_of(ctx, device, *params))
    tiny = 1e-7 if u.dtype.itemsize <= 4 else 1e-15
    return _F.clip(u, a_min=tiny, a_max=1.0 - tiny)


def _std_normal(size, dtype, ctx, device, *params):
    shape = _shape_of(size, *params)
    return _gen["normal"](0.0, 1.0, size=shape, dtype=_dt(dtype),
                          ctx=_ctx_of(ctx, device, *params))


def lognormal(mean=0.0, sigma=1.0, size=None, dtype=None, ctx=None, device=None, out=None):
    """``exp(normal(mean, sigma))``.

    Example:
        >>> from core import np
        >>> bool((np.random.lognormal(size=(4,)) > 0).all())
        True
    """
    z = _std_normal(size, dtype, ctx, device, mean, sigma)
    return _out(_F.exp(z * sigma + mean), out)


def logistic(loc=0.0, scale=1.0, size=None, ctx=None, device=None, out=None):
    """Samples from the logistic distribution: ``loc + scale * log(u / (1 - u))``."""
    u = _u(size, None, ctx, device, loc, scale)
    return _out(_F.log(u / (1.0 - u)) * scale + loc, out)


def gumbel(loc=0.0, scale=1.0, size=None, ctx=None, device=None, out=None):
    """Samples from the Gumbel distribution: ``loc - scale * log(-log(u))``."""
    u = _u(size, None, ctx, device, loc, scale)
    return _out(loc - _F.log(-_F.log(u)) * scale, out)


def laplace(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, device=None, out=None):
    """Samples from the Laplace distribution with mean ``loc`` and decay ``scale``."""
    u = _u(size, dtype, ctx, device, loc, scale) - 0.5
    return _out(loc - _F.sign(u) * _F.log(1.0 - 2.0 * _F.abs(u)) * scale, out)


def weibull(a, size=None, ctx=None, device=None, out=None):
    """Samples from the Weibull distribution of shape ``a``: ``(-log(1 - u)) ** (1 / a)``."""
    u = _u(size, None, ctx, device, a)
    return _out(_F.power(-_F.log(1.0 - u), 1.0 / a), out)


def pareto(a, size=None, ctx=None, device=None, out=None):
    """Samples from the Pareto II (Lomax) distribution of shape ``a``, as NumPy's."""
    u = _u(size, None, ctx, device, a)
    return _out(_F.power(1.0 - u, -1.0 / a) - 1.0, out)


def power(a, size=None, ctx=None, device=None, out=None):
    """Samples in [0, 1] with density ``a x ** (a - 1)``: ``u ** (1 / a)``."""
    u = _u(size, None, ctx, device, a)
    return _out(_F.power(u, 1.0 / a), out)


def rayleigh(scale=1.0, size=None, ctx=None, device=None, out=None):
    """Samples from the Rayleigh distribution: ``scale * sqrt(-2 log(1 - u))``."""
    u = _u(size, None, ctx, device, scale)
    return _out(_F.sqrt(-2.0 * _F.log(1.0 - u)) * scale, out)


def beta(a, b, size=None, dtype=None, ctx=None, device=None):
    """Samples from the beta distribution: ``X / (X + Y)``, X ~ Gamma(a), Y ~ Gamma(b).

    Example:
        >>> from core import np
        >>> x = np.random.beta(2.0, 3.0, size=(5,))
        >>> bool(((x > 0) & (x < 1)).all())
        True
    """
    dev = _ctx_of(ctx, device, a, b)
    shape = _shape_of(size, a, b)
    x = _gen["gamma"](a, 1.0, size=shape, dtype=_dt(dtype), ctx=dev)
    y = _gen["gamma"](b, 1.0, size=shape, dtype=_dt(dtype), ctx=dev)
    return x / (x + y)


def chisquare(df, size=None, dtype=None, ctx=None, device=None):
    """Samples from the chi-square distribution with ``df`` degrees of freedom
    (``2 * Gamma(df / 2)``)."""
    return _gen["gamma"](df / 2.0 if not hasattr(df, "shape") else df * 0.5, 2.0,
                         size=_shape_of(size, df), dtype=_dt(dtype),
                         ctx=_ctx_of(ctx, device, df))


def f(dfnum, dfden, size=None, ctx=None, device=None):
    """Samples from the F distribution: ``(chi2(dfnum) / dfnum) / (chi2(dfden) / dfden)``."""
    shape = _shape_of(size, dfnum, dfden)
    num = chisquare(dfnum, size=shape, ctx=ctx, device=device)
    den = chisquare(dfden, size=shape, ctx=ctx, device=device)
    return (num / dfnum) / (den / dfden)


def multivariate_normal(mean, cov, size=None, check_valid=None, tol=None):
    """Samples from the multivariate normal ``N(mean, cov)``: ``mean + L z`` with ``L``
    the Cholesky factor of ``cov`` (which must be positive definite); shape
    ``size + mean.shape``.

    Example:
        >>> from core import np
        >>> np.random.multivariate_normal(np.zeros(2), np.eye(2), size=(3,)).shape
        (3, 2)
    """
    from ..ndarray import NDArray
    from ..ndarray import array as _nd_array

    mean = mean if isinstance(mean, NDArray) else _nd_array(mean)
    cov = cov if isinstance(cov, NDArray) else _nd_array(cov, ctx=mean.context)
    lead = () if size is None else ((size,) if isinstance(size, int) else tuple(size))
    z = _gen["normal"](0.0, 1.0, size=lead + tuple(mean.shape), dtype=mean.dtype,
                       ctx=mean.context)
    chol = _F.linalg_cholesky(cov)
    return mean + _F.matmul(z, chol, transpose_b=True)
