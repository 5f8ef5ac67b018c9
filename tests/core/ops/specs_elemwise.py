"""Rows for the elementwise unary operators (core/ops/elemwise.py)."""
import numpy as np
import scipy.special as sp

from core import nd
from core import np as knp

from .op_db import OpSpec, Sample, away_from, positive, rand, unary_samples


def _u(name, ref, gen=rand, call=None, dtypes=("float32", "float64", "float16", "bfloat16"),
       **kw):
    fn = call or getattr(nd, name)
    return OpSpec(name, lambda x, **k: fn(x, **k), ref, unary_samples(gen), dtypes=dtypes, **kw)


def _in(low, high):
    return lambda rng, s, d: rand(rng, s, d, low, high)


def _ints(rng, s, d):
    return rand(rng, s, "int32", -5, 5)


SPECS = [
    _u("abs", np.abs, gen=lambda r, s, d: away_from(r, s, d)),
    _u("sign", np.sign, gen=lambda r, s, d: away_from(r, s, d)),
    _u("negative", np.negative),
    _u("reciprocal", np.reciprocal, gen=lambda r, s, d: away_from(r, s, d, gap=0.3)),
    _u("square", np.square),
    _u("sqrt", np.sqrt, gen=positive),
    _u("rsqrt", lambda x: 1 / np.sqrt(x), gen=positive),
    _u("cbrt", np.cbrt, gen=positive),
    _u("exp", np.exp),
    _u("expm1", np.expm1),
    _u("log", np.log, gen=positive),
    _u("log1p", np.log1p, gen=positive),
    _u("log2", np.log2, gen=positive),
    _u("log10", np.log10, gen=positive),
    _u("sin", np.sin), _u("cos", np.cos), _u("tan", np.tan, gen=_in(-1.2, 1.2)),
    _u("arcsin", np.arcsin, gen=_in(-0.9, 0.9)), _u("arccos", np.arccos, gen=_in(-0.9, 0.9)),
    _u("arctan", np.arctan),
    _u("sinh", np.sinh), _u("cosh", np.cosh), _u("tanh", np.tanh),
    _u("arcsinh", np.arcsinh), _u("arccosh", np.arccosh, gen=_in(1.2, 3.0)),
    _u("arctanh", np.arctanh, gen=_in(-0.9, 0.9)),
    _u("degrees", np.degrees), _u("radians", np.radians),
    _u("floor", np.floor, gen=lambda r, s, d: away_from(r, s, d, points=(-2, -1, 0, 1, 2))),
    _u("ceil", np.ceil, gen=lambda r, s, d: away_from(r, s, d, points=(-2, -1, 0, 1, 2))),
    _u("rint", np.rint, gen=lambda r, s, d: away_from(r, s, d, points=(-1.5, -.5, .5, 1.5))),
    _u("trunc", np.trunc, gen=lambda r, s, d: away_from(r, s, d, points=(-2, -1, 0, 1, 2))),
    _u("fix", np.fix, gen=lambda r, s, d: away_from(r, s, d, points=(-2, -1, 0, 1, 2))),
    OpSpec("round", lambda x, **k: nd.round(x, **k), lambda x, **k: np.round(x, **k),
           lambda rng, d: [Sample(away_from(rng, (3, 4), d, points=(-1.5, -.5, .5, 1.5))),
                           Sample(rand(rng, (5,), d), decimals=1)],
           dtypes=("float32", "float64")),
    _u("sigmoid", lambda x: sp.expit(x).astype(x.dtype), dtypes=("float32", "float64")),
    _u("relu", lambda x: np.maximum(x, 0), gen=lambda r, s, d: away_from(r, s, d)),
    _u("softsign", lambda x: x / (1 + np.abs(x)), gen=lambda r, s, d: away_from(r, s, d)),
    _u("erf", lambda x: sp.erf(x).astype(x.dtype), dtypes=("float32", "float64")),
    _u("erfinv", lambda x: sp.erfinv(x).astype(x.dtype), gen=_in(-0.9, 0.9),
       dtypes=("float32", "float64"), rtol=1e-4),
    _u("gamma", lambda x: sp.gamma(x).astype(x.dtype), gen=_in(0.5, 3.0),
       dtypes=("float32", "float64")),
    _u("gammaln", lambda x: sp.gammaln(x).astype(x.dtype), gen=_in(0.5, 3.0),
       dtypes=("float32", "float64")),
    _u("digamma", lambda x: sp.digamma(x).astype(x.dtype), gen=_in(0.5, 3.0),
       dtypes=("float32", "float64"), rtol=1e-4),
    OpSpec("polygamma", lambda x, **k: nd.polygamma(x, **k),
           lambda x, n=1: sp.polygamma(n, x).astype(x.dtype),
           lambda rng, d: [Sample(rand(rng, (3, 4), d, 0.5, 3.0), n=1),
                           Sample(rand(rng, (5,), d, 0.5, 3.0), n=2)], rtol=1e-4),
    _u("isnan", np.isnan, gen=lambda r, s, d: np.where(rand(r, s, "float64") > 1, np.nan,
                                                       rand(r, s, d)).astype(d), grad=False),
    _u("isinf", np.isinf, gen=lambda r, s, d: np.where(rand(r, s, "float64") > 1, np.inf,
                                                       rand(r, s, d)).astype(d), grad=False),
    _u("isfinite", np.isfinite, gen=lambda r, s, d: np.where(rand(r, s, "float64") > 1, -np.inf,
                                                             rand(r, s, d)).astype(d), grad=False),
    _u("logical_not", np.logical_not, grad=False, dtypes=("float32", "bool", "int32")),
    _u("bitwise_not", np.invert, call=knp.invert, grad=False, dtypes=("bool", "int32", "uint8")),
    OpSpec("clip", lambda x, **k: nd.clip(x, **k),
           lambda x, **k: np.clip(x, k.get("a_min"), k.get("a_max")),
           lambda rng, d: [Sample(away_from(rng, (3, 4), d, points=(-1, 1)), a_min=-1, a_max=1),
                           Sample(away_from(rng, (5,), d, points=(0.5,)), a_min=0.5),
                           Sample(away_from(rng, (2, 3), d, points=(0.0,)), a_max=0.0)]),
]
