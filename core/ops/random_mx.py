"""MXNet 1.x's further samplers and its sampling front ends.

- ``random_negative_binomial`` (``k`` failures before success with probability ``p``)
  and ``random_generalized_negative_binomial`` (the Gamma-Poisson mixture with mean
  ``mu`` and dispersion ``alpha``: ``Poisson(Gamma(1 / alpha, alpha * mu))``, Poisson
  ``mu`` where ``alpha = 0``), with MXNet's ``shape=`` rules (``core.ops.random``);
- ``_sample_unique_zipfian(range_max, shape=(batch, n))``: per row ``n`` distinct
  classes drawn from the log-uniform (Zipfian) distribution
  ``P(c) = log((c + 2) / (c + 1)) / log(range_max + 1)`` by rejection, and the number
  of draws each row took (both int64);
- the front ends of ``nd.random``/``sym.random`` that MXNet writes in Python:
  ``exponential(scale)`` (the operator takes the rate ``lam = 1 / scale``),
  ``multinomial`` (a list ``[samples, log_prob]`` with ``get_prob=True``), and
  ``contrib.rand_zipfian`` (sampled candidates with their expected counts).
"""
from __future__ import annotations

import math
import numbers

import numpy

from .. import random as _random
from ..context import Context
from ..dtypes import FLOATS, float64, int64
from . import random as _rnd
from .infer import fmt
from .random import _any, _Dist, _nonneg
from .registry import REGISTRY, Aval, F, defop

# --------------------------------------------------------------------------- samplers

def _check_nbinom(v):
    _nonneg("k", strict=True)(v)
    if "p" in v and (_any(v["p"] <= 0) or _any(v["p"] > 1)):
        raise ValueError(f"p must be in (0, 1], got p={v['p']}")


def _s_nbinom(gen, xp, v, shape, cdt, dt):
    return gen.negative_binomial(v["k"], v["p"], shape)


def _s_gen_nbinom(gen, xp, v, shape, cdt, dt):
    mu, alpha = v["mu"], v["alpha"]
    a = xp.where(alpha > 0, alpha, 1.0) if not isinstance(alpha, float) else (alpha or 1.0)
    lam = gen.standard_gamma(1.0 / a + xp.zeros(shape, cdt), shape, cdt) * a * mu
    lam = xp.where(alpha > 0, lam, mu + xp.zeros(shape, cdt))
    return gen.poisson(lam, shape)


_Dist("random_negative_binomial", [("k", 1), ("p", 1.0)], _check_nbinom, _s_nbinom, "nd",
      "Negative binomial samples: failures before the k-th success of probability p "
      "(float32 by default, as in MXNet).", float_only=False).register(
    "random_negative_binomial", nd=("random.negative_binomial", "random_negative_binomial",
                                    "sample_negative_binomial"))
_Dist("random_generalized_negative_binomial", [("mu", 1.0), ("alpha", 1.0)],
      _nonneg("mu", "alpha"), _s_gen_nbinom, "nd",
      "Generalized negative binomial samples (Gamma-Poisson mixture with mean mu and "
      "dispersion alpha).", float_only=False).register(
    "random_generalized_negative_binomial",
    nd=("random.generalized_negative_binomial", "random_generalized_negative_binomial",
        "sample_generalized_negative_binomial"))


# --------------------------------------------------------------------------- zipfian

def _zipf_check(range_max, shape):
    name = "_sample_unique_zipfian"
    if isinstance(range_max, bool) or not isinstance(range_max, numbers.Integral) \
            or range_max < 1:
        raise ValueError(f"{name}: range_max must be a positive int, got {range_max!r}")
    shape = tuple(int(s) for s in (shape or ()))
    if len(shape) != 2 or shape[1] > range_max or min(shape) < 0:
        raise ValueError(f"{name}: shape must be (batch_size, num_sampled) with num_sampled "
                         f"<= range_max={range_max}, got shape={shape}")
    return int(range_max), shape


def _zipf_infer(range_max=None, shape=()):
    _, shape = _zipf_check(range_max, shape)
    return Aval(shape, int64), Aval(shape[:1], int64)


@defop("_sample_unique_zipfian", infer=_zipf_infer, inputs=(),
       attrs={"range_max": None, "shape": ()}, needs_ctx=True, random=True,
       differentiable=False, save=False, nd=("_internal._sample_unique_zipfian",))
def _unique_zipfian(xp, range_max=None, shape=(), ctx=None):
    """Distinct log-uniform classes per row, and how many draws each row took."""
    range_max, (batch, n) = _zipf_check(range_max, shape)
    gen = _random.get_generator(ctx)
    log_range = math.log(range_max + 1)
    classes = numpy.empty((batch, n), int64)
    trials = numpy.empty((batch,), int64)
    for b in range(batch):
        drawn = numpy.empty(0, int64)
        size = max(2 * n, 16)
        while True:
            u = numpy.asarray(gen.random(size, float64) if xp is numpy
                              else gen.random(size, float64).get())
            more = (numpy.exp(u * log_range) - 1).astype(int64) % range_max
            drawn = numpy.concatenate([drawn, more])
            _, first = numpy.unique(drawn, return_index=True)
            if first.size >= n:
                first.sort()
                classes[b] = drawn[first[:n]]
                trials[b] = first[n - 1] + 1 if n else 0
                break
            size *= 2
    return xp.asarray(classes), xp.asarray(trials)


def rand_zipfian(true_classes, num_sampled: int, range_max: int, ctx=None):
    """MXNet's ``contrib.rand_zipfian``: ``num_sampled`` candidate classes drawn with
    replacement from the log-uniform distribution over ``[0, range_max)``, and the
    expected counts of ``true_classes`` and of the candidates in that many draws.

    Args:
        true_classes: the target classes (any shape).
        num_sampled: how many candidates to draw.
        range_max: the number of classes.
        ctx: the context of the draws (default: the current one).

    Returns:
        ``(sampled_classes int64 (num_sampled,), expected_count_true float64,
        expected_count_sampled float64)``.

    Example:
        >>> from core import nd
        >>> s, t, c = nd.contrib.rand_zipfian(nd.array([0, 3]), 5, 10)
        >>> s.shape, s.dtype.name, t.shape
        ((5,), 'int64', (2,))
    """
    log_range = math.log(range_max + 1)

    def draw():
        return F.random_uniform(low=0.0, high=log_range, shape=(int(num_sampled),),
                                dtype="float64")

    if ctx is not None:
        with Context(ctx):
            rand = draw()
    else:
        rand = draw()
    sampled = F.mod(F.cast(F.expm1(rand), dtype="int64"), int(range_max))

    def expected(cls):
        c = F.cast(cls, dtype="float64")
        return F.log(F.divide(c + 2.0, c + 1.0)) * (float(num_sampled) / log_range)

    return sampled, expected(true_classes), expected(sampled)


# --------------------------------------------------------------------------- front ends

def exponential(scale=1.0, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """MXNet's ``random.exponential(scale=1, shape, dtype, ctx, out)``: exponential
    samples with scale (mean) ``scale``; the operator (``random_exponential``) takes the
    rate ``lam = 1 / scale``. An array ``scale`` gives ``shape`` samples per element.

    Example:
        >>> from core import nd
        >>> nd.random.exponential(2.0, shape=(3,)).shape
        (3,)
    """
    from .namespace import make_function

    lam = 1.0 / scale if not isinstance(scale, numbers.Number) else 1.0 / float(scale)
    fn = make_function(REGISTRY["random_exponential"], "random_exponential")
    if isinstance(lam, float):
        return fn(lam=lam, shape=shape, dtype=dtype, ctx=ctx, out=out, **kwargs)
    return fn(lam, shape=shape, dtype=dtype, out=out, **kwargs)


def multinomial(data, shape=None, get_prob: bool = False, out=None, dtype="int32",
                **kwargs):
    """MXNet's ``nd.random.multinomial``: category indices drawn from the probability rows
    of ``data``; with ``get_prob=True`` the list ``[samples, log_probabilities]``.

    Example:
        >>> from core import nd
        >>> y, logp = nd.random.multinomial(nd.array([0.2, 0.8]), shape=4, get_prob=True)
        >>> y.shape, logp.shape
        ((4,), (4,))
    """
    from .namespace import make_function

    fn = make_function(REGISTRY["random_multinomial"], "random.multinomial")
    res = fn(data, shape=shape, get_prob=get_prob, out=out, dtype=dtype, **kwargs)
    return list(res) if isinstance(res, tuple) else res


NAMESPACE_OVERRIDES = {
    "nd": {"random.exponential": exponential, "random.multinomial": multinomial,
           "contrib.rand_zipfian": rand_zipfian},
    "np": {},
}

__all__ = ["exponential", "multinomial", "rand_zipfian"]


# --------------------------------------------------------------------------- *_like

def _like(name, params, check, sample):
    """``random.<name>_like(data, **params)``: samples of ``data``'s shape and dtype."""
    opname = f"random_{name}_like"
    defaults = dict(params)

    def values(attrs):
        v = {}
        for p, d in defaults.items():
            x = attrs.get(p, d)
            if not isinstance(x, numbers.Real) or isinstance(x, bool):
                raise TypeError(f"{opname}: {p} must be a real number, got {x!r}")
            v[p] = float(x)
        return v

    def infer(data, **attrs):
        if numpy.dtype(data.dtype) not in FLOATS:
            raise TypeError(f"{opname}: data must be floating-point (its shape and dtype are "
                            f"the samples'), got {fmt([data])}")
        try:
            check(values(attrs))
        except ValueError as e:
            raise ValueError(f"{opname}: {e}") from None
        return Aval(tuple(data.shape), data.dtype)

    def forward(xp, data, ctx=None, **attrs):
        infer(data, **attrs)
        v = values(attrs)
        dt = numpy.dtype(data.dtype)
        cdt = float64 if dt == float64 else numpy.dtype("float32")
        out = sample(_random.get_generator(ctx), xp, v, tuple(data.shape), cdt, dt)
        return xp.asarray(out).astype(dt, copy=False)

    forward.__doc__ = f"{name} samples of the shape and dtype of ``data``."
    defop(opname, infer=infer, inputs=("data",), attrs=dict(defaults), needs_ctx=True,
          random=True, differentiable=False, save=False,
          nd=(f"random.{name}_like", opname))(forward)


for _n, _params, _check, _sample in [
        ("uniform", [("low", 0.0), ("high", 1.0)], _rnd._check_uniform, _rnd._s_uniform),
        ("normal", [("loc", 0.0), ("scale", 1.0)], _nonneg("scale"), _rnd._s_normal),
        ("gamma", [("alpha", 1.0), ("beta", 1.0)], _nonneg("alpha", "beta", strict=True),
         _rnd._s_gamma_nd),
        ("exponential", [("lam", 1.0)], _nonneg("lam", strict=True), _rnd._s_exp_rate),
        ("poisson", [("lam", 1.0)], _nonneg("lam"), _rnd._s_poisson),
        ("negative_binomial", [("k", 1), ("p", 1.0)], _check_nbinom, _s_nbinom),
        ("generalized_negative_binomial", [("mu", 1.0), ("alpha", 1.0)],
         _nonneg("mu", "alpha"), _s_gen_nbinom)]:
    _like(_n, _params, _check, _sample)
