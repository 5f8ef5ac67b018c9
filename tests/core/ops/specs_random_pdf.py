"""Rows for MXNet's density operators ``random_pdf_<dist>`` (``core/ops/random_pdf.py``)
against scipy.stats, gradients by finite differences, and for the ``random.<dist>_like``
samplers (``core/ops/random_mx.py``)."""
import math

import numpy as np
import pytest
import scipy.stats as ss

import core
from core import nd

from .op_db import OpSpec, Sample

P = (2, 3)  # parameters' shape
S = P + (4,)  # samples' shape: 4 samples per parameter element


def _u(rng, shape, lo, hi):
    return rng.uniform(lo, hi, size=shape)


def _b(p):  # a parameter broadcast against the samples
    return p.reshape(p.shape + (1,) * (len(S) - len(P)))


def _ref(logpdf):
    def ref(x, *params, is_log=False):
        lp = logpdf(x.astype(np.float64), *[_b(p.astype(np.float64)) for p in params])
        return (lp if is_log else np.exp(lp)).astype(x.dtype)
    return ref


def _pdf_row(dist, logpdf, gen, diff=None, **kw):
    name = f"random_pdf_{dist}"

    def samples(rng, d):
        args = [a.astype(d) for a in gen(rng)]
        return [Sample(*args, diff=diff), Sample(*args, is_log=True, diff=diff)]

    return OpSpec(name, getattr(nd, name), _ref(logpdf), samples,
                  covers=(f"_backward_{name}",), **kw)


def _nbinom(x, k, p):
    return ss.nbinom.logpmf(x, k, p)


def _ints(rng, shape, hi):
    return rng.integers(0, hi, size=shape).astype(np.float64)


def _dirichlet_ref(x, alpha, is_log=False):
    xf, af = x.astype(np.float64), alpha.astype(np.float64)
    a = af.reshape(af.shape[:-1] + (1,) + af.shape[-1:])
    lp = _lgamma(a.sum(-1)) - _lgamma(a).sum(-1) + ((a - 1) * np.log(xf)).sum(-1)
    return (lp if is_log else np.exp(lp)).astype(x.dtype)


def _lgamma(v):
    from scipy.special import gammaln

    return gammaln(v)


def _dirichlet_samples(rng, d):
    alpha = rng.uniform(0.5, 2.0, size=P + (3,))
    x = rng.dirichlet([1.0, 1.0, 1.0], size=P + (5,))
    x = np.clip(x, 0.05, None)
    x = x / x.sum(-1, keepdims=True)
    return [Sample(x.astype(d), alpha.astype(d), diff=[1]),
            Sample(x.astype(d), alpha.astype(d), is_log=True, diff=[1])]


def _check_like(spec, rng, arr):
    core.random.seed(41)
    like = arr(np.zeros((200, 500)), dtype="float64")
    n = 200 * 500
    cases = [
        (nd.random.uniform_like, {"low": -1.5, "high": 3.0}, 0.75, 4.5 / math.sqrt(12)),
        (nd.random.normal_like, {"loc": 10.0, "scale": 0.5}, 10.0, 0.5),
        (nd.random.gamma_like, {"alpha": 9.0, "beta": 0.5}, 4.5, 1.5),
        (nd.random.exponential_like, {"lam": 4.0}, 0.25, 0.25),
        (nd.random.poisson_like, {"lam": 4.0}, 4.0, 2.0),
        (nd.random.negative_binomial_like, {"k": 3, "p": 0.4}, 4.5, math.sqrt(1.8) / 0.4),
        (nd.random.generalized_negative_binomial_like, {"mu": 2.0, "alpha": 0.3}, 2.0,
         math.sqrt(2.0 + 0.3 * 4.0)),
    ]
    for fn, params, mean, std in cases:
        x = fn(like, **params)
        assert x.shape == (200, 500) and x.dtype == np.float64
        v = x.asnumpy()
        assert abs(v.mean() - mean) < 6 * std / math.sqrt(n), (fn.__name__, v.mean(), mean)
        assert abs(v.std() - std) < 0.03 * std, (fn.__name__, v.std(), std)
    assert nd.random.normal_like(nd.ones((2, 3), dtype="float16")).dtype == np.float16
    core.random.seed(5)
    a = nd.random.uniform_like(like).asnumpy()
    core.random.seed(5)
    assert np.array_equal(nd.random.uniform_like(like).asnumpy(), a)
    with pytest.raises(ValueError, match="random_normal_like"):
        nd.random.normal_like(like, scale=-1.0)
    with pytest.raises(TypeError, match="random_poisson_like"):
        nd.random.poisson_like(nd.ones((2,), dtype="int32"))


SPECS = [
    _pdf_row("uniform", lambda x, lo, hi: ss.uniform.logpdf(x, lo, hi - lo),
             lambda r: [_u(r, S, 0.2, 0.8), _u(r, P, -1.0, 0.1), _u(r, P, 0.9, 2.0)]),
    _pdf_row("normal", lambda x, mu, s: ss.norm.logpdf(x, mu, s),
             lambda r: [_u(r, S, -2, 2), _u(r, P, -1, 1), _u(r, P, 0.5, 2.0)]),
    _pdf_row("gamma", lambda x, a, b: ss.gamma.logpdf(x, a, 0, 1 / b),
             lambda r: [_u(r, S, 0.2, 3.0), _u(r, P, 0.5, 3.0), _u(r, P, 0.5, 2.0)]),
    _pdf_row("exponential", lambda x, lam: ss.expon.logpdf(x, 0, 1 / lam),
             lambda r: [_u(r, S, 0.1, 3.0), _u(r, P, 0.5, 3.0)]),
    _pdf_row("poisson", lambda x, lam: ss.poisson.logpmf(x, lam),
             lambda r: [_ints(r, S, 8), _u(r, P, 0.5, 6.0)], diff=[1]),
    _pdf_row("negative_binomial", _nbinom,
             lambda r: [_ints(r, S, 8), _u(r, P, 1.0, 6.0), _u(r, P, 0.2, 0.8)], diff=[1, 2]),
    _pdf_row("generalized_negative_binomial",
             lambda x, mu, a: ss.nbinom.logpmf(x, 1 / a, 1 / (mu * a + 1)),
             lambda r: [_ints(r, S, 8), _u(r, P, 0.5, 4.0), _u(r, P, 0.1, 1.0)], diff=[1, 2]),
    OpSpec("random_pdf_dirichlet", nd.random_pdf_dirichlet, _dirichlet_ref, _dirichlet_samples,
           covers=("_backward_random_pdf_dirichlet",)),
    OpSpec("random_normal_like", None, None, None, check=_check_like,
           covers=tuple(f"random_{n}_like" for n in (
               "uniform", "gamma", "exponential", "poisson", "negative_binomial",
               "generalized_negative_binomial"))),
]
