"""Random sampling operators: MXNet's ``nd.random`` and NumPy's ``np.random``.

Every forward draws from the generator of the context it runs on
(``core.random.get_generator(ctx)``), so :func:`core.random.seed` makes results
reproducible per context. The generator offers NumPy ``Generator`` method names on
both array modules, so each forward is written once.

The two front ends differ where the APIs do. MXNet (``nd``) operators take
``shape=`` and, given array parameters, draw ``shape`` samples per parameter element
(output ``param.shape + shape``); without array parameters and without a shape they
return shape ``(1,)``, and shape entries must be positive. NumPy (``np``) operators
take ``size=``, broadcast array parameters against it, and return a 0-d array when
``size`` is None. Floating-point results default to float32 on both, as in MXNet.

Distribution parameters are array inputs (an NDArray gives one distribution per
element) and, with the same names, scalar attributes: ``normal(scale=0.1)`` binds
``scale`` even though ``loc`` is not given, which optional inputs alone cannot do.
"""
from __future__ import annotations

import math
import numbers
import operator

import ml_dtypes
import numpy

from .. import random as _random
from ..dtypes import FLOATS, as_dtype, bfloat16, float16, float32, float64, int64, is_float
from ..ndarray import NDArray
from .dispatch import MXNetError
from .registry import Aval, F, defop

_REQUIRED = object()
# Mantissa bits (with the implicit one) of the low-precision float dtypes: uniform
# variates are rounded down to this grid so that casting them cannot round up to 1.
_MANTISSA = {float16: 11, bfloat16: 8}


def _is_scalar(v) -> bool:
    return isinstance(v, numbers.Number)


def _av(x):
    """Array-likes that the dispatcher converts (lists) as avals; everything else as is."""
    if x is None or _is_scalar(x) or (hasattr(x, "shape") and hasattr(x, "dtype")):
        return x
    a = numpy.asarray(x.asnumpy() if isinstance(x, NDArray) else x)
    return Aval(a.shape, a.dtype)


def _to_xp(xp, x, dtype=None):
    """An array of ``xp`` from an NDArray (of any context) or an array-like."""
    if isinstance(x, NDArray):
        x = x._data if x.context.xp is xp else x.asnumpy()
    return xp.asarray(x, dtype=dtype)


def _any(cond) -> bool:
    return bool(cond.any()) if hasattr(cond, "any") else bool(cond)


def _size(name: str, shape, what: str, positive: bool):
    """A shape tuple from an int or a sequence of ints (None stays None)."""
    if shape is None:
        return None
    try:
        shape = (operator.index(shape),) if not hasattr(shape, "__len__") else tuple(
            operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"{name}: {what} must be an int or a sequence of ints, "
                        f"got {shape!r}") from None
    if any(s <= 0 if positive else s < 0 for s in shape):
        need = "positive" if positive else "non-negative"
        raise ValueError(f"{name}: every entry of {what} must be {need}, got {what}={shape}")
    return shape


def _bshape(name: str, arrays) -> tuple:
    shapes = [tuple(a.shape) for a in arrays]
    try:
        return tuple(numpy.broadcast_shapes(*shapes)) if shapes else ()
    except ValueError:
        raise ValueError(f"{name}: parameter shapes {', '.join(map(str, shapes))} cannot be "
                         "broadcast together") from None


def _broadcasts_to(shape, target) -> bool:
    try:
        return tuple(numpy.broadcast_shapes(shape, target)) == tuple(target)
    except ValueError:
        return False


def _describe(vals) -> str:
    return ", ".join(f"{k}={v}" if _is_scalar(v) or v is None
                     else f"{k}: {tuple(v.shape)} {numpy.dtype(v.dtype).name}"
                     for k, v in vals.items())


# --------------------------------------------------------------------------- parametric

class _Dist:
    """A distribution with parameters: its checks and its sampler, shared by nd and np."""

    def __init__(self, name, params, check, sample, api, doc, float_only=True,
                 default="float32"):
        self.name, self.params, self.check, self.sample = name, params, check, sample
        self.doc = doc
        self.api, self.float_only, self.default = api, float_only, default
        self.size_attr = "shape" if api == "nd" else "size"

    def values(self, arrays, attrs, xp=None) -> dict:
        """Each parameter's value: its array input when given, else its attribute.

        With ``xp`` (in forward), array-likes that arrived as attributes (a keyword that
        follows a missing input: ``normal(scale=arr)``) become arrays of ``xp``.
        """
        vals = {}
        for i, (p, _) in enumerate(self.params):
            v = arrays[i] if i < len(arrays) and arrays[i] is not None else attrs.get(p)
            if xp is not None and v is not None and not _is_scalar(v):
                v = _to_xp(xp, v)
            v = _av(v)
            if v is None:
                raise TypeError(f"{self.name}: missing required parameter {p!r}")
            if _is_scalar(v) and not isinstance(v, numbers.Real):
                raise TypeError(f"{self.name}: {p} must be a real number or an array, got {v!r}")
            vals[p] = float(v) if _is_scalar(v) else v
        return vals

    def plan(self, vals, size, dtype):
        """(output shape, output dtype, sample shape appended to the parameters' shape)."""
        arrays = [v for v in vals.values() if not _is_scalar(v)]
        pshape = _bshape(self.name, arrays)
        if dtype is None:
            fl = [numpy.dtype(a.dtype) for a in arrays if numpy.dtype(a.dtype) in FLOATS]
            out_dt = as_dtype(self.default if not fl or not self.float_only
                              else numpy.result_type(*fl), self.name)
        else:
            out_dt = as_dtype(dtype, self.name)
        if self.float_only and out_dt not in FLOATS:
            raise TypeError(f"{self.name}: dtype must be a floating-point type "
                            f"(float16, bfloat16, float32, float64), got {out_dt.name}")
        if out_dt.kind == "b":
            raise TypeError(f"{self.name}: dtype bool is not supported")
        if self.api == "nd":
            s = _size(self.name, size, "shape", positive=True)
            s = ((1,) if not arrays else ()) if s is None else s
            return pshape + s, out_dt, s
        s = _size(self.name, size, "size", positive=False)
        if s is None:
            return pshape, out_dt, ()
        if arrays and not _broadcasts_to(pshape, s):
            raise ValueError(f"{self.name}: size={s} does not match the parameters' broadcast "
                             f"shape {pshape} ({_describe(vals)}); size must be that shape "
                             "or a shape it broadcasts to")
        return s, out_dt, ()

    def infer(self, *avals, **attrs):
        vals = self.values(avals, attrs)
        shape, dt, _ = self.plan(vals, attrs.get(self.size_attr), attrs.get("dtype"))
        try:
            self.check({k: v for k, v in vals.items() if _is_scalar(v)})
        except ValueError as e:
            raise ValueError(f"{self.name}: {e}") from None
        return Aval(shape, dt)

    def forward(self, xp, *arrays, ctx=None, **attrs):
        vals = self.values(arrays, attrs, xp)
        shape, dt, extra = self.plan(vals, attrs.get(self.size_attr), attrs.get("dtype"))
        cdt = float64 if dt == float64 else float32
        pshape = tuple(shape[:len(shape) - len(extra)])
        for k, v in vals.items():
            if not _is_scalar(v):
                v = xp.asarray(v, dtype=cdt)
                if extra:  # nd: each parameter element gets its own `shape` samples
                    v = xp.broadcast_to(v, pshape).reshape(pshape + (1,) * len(extra))
                vals[k] = v
        self.check(vals)  # the dispatcher prefixes the operator's name
        out = self.sample(_random.get_generator(ctx), xp, vals, shape, cdt, dt)
        return xp.asarray(out).astype(dt, copy=False)

    def register(self, regname, nd=(), np=()):
        attrs = {self.size_attr: None, "dtype": None}
        attrs.update({p: None if d is _REQUIRED else d for p, d in self.params})
        inputs = tuple(p if d is _REQUIRED else p + "?" for p, d in self.params)
        defop(regname, infer=self.infer, inputs=inputs, attrs=attrs, needs_ctx=True, random=True,
              differentiable=False, save=False, nd=nd, np=np, doc=self.doc)(self.forward)


def _uniform01(gen, shape, cdt, dt):
    u = gen.random(shape, cdt)
    k = _MANTISSA.get(dt)
    return u if k is None else (u * 2.0 ** k) // 1 / 2.0 ** k


def _check_uniform(v):
    if "low" in v and "high" in v and _any(v["low"] > v["high"]):
        raise ValueError(f"low must be <= high, got {_describe(v)}")


def _nonneg(*names, strict=False):
    def check(v):
        for p in names:
            if p in v and _any(v[p] <= 0 if strict else v[p] < 0):
                raise ValueError(f"{p} must be {'positive' if strict else 'non-negative'}, "
                                 f"got {_describe(v)}")

    return check


def _s_uniform(gen, xp, v, shape, cdt, dt):
    return v["low"] + (v["high"] - v["low"]) * _uniform01(gen, shape, cdt, dt)


def _s_normal(gen, xp, v, shape, cdt, dt):
    return v["loc"] + v["scale"] * gen.standard_normal(shape, cdt)


def _s_exp_rate(gen, xp, v, shape, cdt, dt):
    return gen.standard_exponential(shape, cdt) / v["lam"]


def _s_exp_scale(gen, xp, v, shape, cdt, dt):
    return gen.standard_exponential(shape, cdt) * v["scale"]


def _s_gamma_nd(gen, xp, v, shape, cdt, dt):
    return gen.standard_gamma(v["alpha"], shape, cdt) * v["beta"]


def _s_gamma_np(gen, xp, v, shape, cdt, dt):
    return gen.standard_gamma(v["shape"], shape, cdt) * v["scale"]


def _s_poisson(gen, xp, v, shape, cdt, dt):
    return gen.poisson(v["lam"], shape)


_DISTS = [
    ("uniform", [("low", 0.0), ("high", 1.0)], _check_uniform, _s_uniform,
     "Uniform samples in [low, high).", {}),
    ("normal", [("loc", 0.0), ("scale", 1.0)], _nonneg("scale"), _s_normal,
     "Normal (Gaussian) samples with mean loc and standard deviation scale.", {}),
]
_ND_ONLY = [
    ("exponential", [("lam", 1.0)], _nonneg("lam", strict=True), _s_exp_rate,
     "Exponential samples with rate lam (mean 1 / lam).", {}),
    ("gamma", [("alpha", 1.0), ("beta", 1.0)], _nonneg("alpha", "beta", strict=True),
     _s_gamma_nd, "Gamma samples with shape alpha and scale beta.", {}),
    ("poisson", [("lam", 1.0)], _nonneg("lam"), _s_poisson,
     "Poisson samples with rate lam (float32 by default, as in MXNet).",
     {"float_only": False}),
]
_NP_ONLY = [
    ("exponential", [("scale", 1.0)], _nonneg("scale"), _s_exp_scale,
     "Exponential samples with scale (mean) scale.", {}),
    ("gamma", [("shape", _REQUIRED), ("scale", 1.0)], _nonneg("shape", "scale"), _s_gamma_np,
     "Gamma samples with shape ``shape`` and scale ``scale``.", {}),
    ("poisson", [("lam", 1.0)], _nonneg("lam"), _s_poisson,
     "Poisson samples with rate lam (int64).", {"float_only": False, "default": "int64"}),
]

for _n, _params, _check, _sample, _doc, _kw in _DISTS + _ND_ONLY:
    _Dist(f"random_{_n}", _params, _check, _sample, "nd", _doc, **_kw).register(
        f"random_{_n}", nd=(f"random.{_n}", f"random_{_n}", f"sample_{_n}"))
for _n, _params, _check, _sample, _doc, _kw in _DISTS + _NP_ONLY:
    _Dist(f"np_random_{_n}", _params, _check, _sample, "np", _doc, **_kw).register(
        f"np_random_{_n}", np=(f"random.{_n}",))


# --------------------------------------------------------------------------- randint

def _randint_plan(name, low, high, shape, dtype, api):
    if api == "np" and high is None:
        low, high = 0, low
    for what, v in (("low", low), ("high", high)):
        if v is None:
            raise TypeError(f"{name}: {what} is required")
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{name}: {what} must be an int, got {v!r}")
    low, high = int(low), int(high)
    if low >= high:
        raise ValueError(f"{name}: low must be < high, got low={low}, high={high}")
    dt = as_dtype(dtype, name)
    if dt.kind not in "iu":
        raise TypeError(f"{name}: dtype must be an integer type, got {dt.name}")
    info = numpy.iinfo(dt)
    if low < info.min or high - 1 > info.max:
        raise ValueError(f"{name}: [low, high) = [{low}, {high}) does not fit in {dt.name} "
                         f"([{info.min}, {info.max}])")
    if api == "nd":
        s = _size(name, shape, "shape", positive=True)
        s = (1,) if s is None else s
    else:
        s = _size(name, shape, "size", positive=False) or ()
    return low, high, s, dt


def _randint(name, api):
    size_attr = "shape" if api == "nd" else "size"

    def infer(low=None, high=None, dtype=None, **attrs):
        _, _, s, dt = _randint_plan(name, low, high, attrs.get(size_attr), dtype, api)
        return Aval(s, dt)

    def forward(xp, low=None, high=None, dtype=None, ctx=None, **attrs):
        low, high, s, dt = _randint_plan(name, low, high, attrs.get(size_attr), dtype, api)
        # Drawn as int64 so that every integer dtype works on both array modules.
        out = _random.get_generator(ctx).integers(low, high, size=s, dtype=int64)
        return xp.asarray(out).astype(dt, copy=False)

    return infer, forward


_ri_nd = _randint("random_randint", "nd")
defop("random_randint", infer=_ri_nd[0], inputs=(),
      attrs={"low": None, "high": None, "shape": None, "dtype": "int32"}, needs_ctx=True, random=True,
      differentiable=False, save=False, nd=("random.randint", "random_randint"),
      doc="Uniform random integers in [low, high) (int32 by default, as in MXNet).")(_ri_nd[1])
_ri_np = _randint("np_random_randint", "np")
defop("np_random_randint", infer=_ri_np[0], inputs=(),
      attrs={"low": None, "high": None, "size": None, "dtype": "int64"}, needs_ctx=True, random=True,
      differentiable=False, save=False, np=("random.randint",),
      doc="Uniform random integers in [low, high), or [0, low) without high.")(_ri_np[1])


# --------------------------------------------------------------------------- shuffle

def _shuffle_infer(data):
    data = _av(data)
    if _is_scalar(data):
        if isinstance(data, bool) or not isinstance(data, numbers.Integral) or data < 0:
            raise ValueError(f"random_shuffle: an int argument must be a non-negative int "
                             f"(a permutation of range(n)), got {data!r}")
        return Aval((int(data),), int64)
    if len(data.shape) == 0:
        raise ValueError(f"random_shuffle: expects an array of at least 1 dimension "
                         f"(it shuffles the first axis), got shape {data.shape}")
    return Aval(data.shape, data.dtype)


@defop("random_shuffle", infer=_shuffle_infer, inputs=("data",), needs_ctx=True, random=True,
       differentiable=False, save=False, nd=("random.shuffle",), np=("random.permutation",))
def _shuffle(xp, data, ctx=None):
    """A copy of ``data`` with its first axis randomly permuted (an int n: a permuted range)."""
    _shuffle_infer(data)
    gen = _random.get_generator(ctx)
    if _is_scalar(data):
        return xp.asarray(gen.permutation(int(data))).astype(int64, copy=False)
    return data[gen.permutation(data.shape[0])]


# --------------------------------------------------------------------------- multinomial

class RangeError(ValueError, MXNetError):
    """A value out of what the output dtype holds: a ValueError, and MXNet's MXNetError."""


def _multinomial_infer(data, shape=None, get_prob=False, dtype="int32"):
    name = "random_multinomial"
    data = _av(data)
    if _is_scalar(data) or data is None:
        raise TypeError(f"{name}: data must be an array of probabilities, got {data!r}")
    if data.dtype not in FLOATS:
        raise TypeError(f"{name}: data must be floating-point probabilities, got "
                        f"{data.shape} {data.dtype.name}")
    if len(data.shape) == 0 or data.shape[-1] == 0:
        raise ValueError(f"{name}: data must have a last axis of k >= 1 probabilities, got "
                         f"shape {data.shape}")
    s = _size(name, shape, "shape", positive=True) or ()
    out = tuple(data.shape[:-1]) + s
    dt = as_dtype(dtype, name)
    if dt.kind == "b":
        raise TypeError(f"{name}: dtype bool is not supported")
    k = data.shape[-1]
    top = numpy.iinfo(dt).max if dt.kind in "iu" else 2 ** (_MANTISSA.get(
        dt, numpy.finfo(dt).nmant + 1 if dt in (float32, float64) else 24))
    if k - 1 > top:  # the largest index must be exact in the output dtype
        raise RangeError(f"{name}: {k} categories do not fit in the output dtype {dt.name} "
                         f"(indices up to {top}); pass a wider dtype")
    out = out or (1,)  # MXNet: one probability row and no shape gives shape (1,)
    if get_prob:
        return Aval(out, dt), Aval(out, data.dtype)
    return Aval(out, dt)


def _categorical(xp, gen, rows, n):
    """``n`` category indices per row of probabilities ``rows`` (b, k): int64 (b, n)."""
    b, k = rows.shape
    cdf = xp.cumsum(rows.astype(float64), axis=1)
    if _any(cdf[:, -1] <= 0):
        raise ValueError("every probability row must have a positive sum")
    cdf = cdf / cdf[:, -1:]
    cdf[:, -1] = 1.0
    # One searchsorted for all rows: row r's cumulative probabilities move to [r, r + 1].
    r = xp.arange(b, dtype=float64)[:, None]
    q = xp.minimum(gen.random((b, n), float64) + r, xp.nextafter(r + 1.0, r))
    idx = xp.searchsorted((cdf + r).ravel(), q.ravel(), side="right").reshape(b, n)
    return xp.clip(idx - xp.arange(b, dtype=int64)[:, None] * k, 0, k - 1)


def _multinomial_vjp(c, g):
    if not c.attrs.get("get_prob"):
        return (None,)
    samples, logp = c.outputs
    # d log p[s] / d p[s] = 1 / p[s]; exp(logp) is p at the sampled categories.
    w = g[1] / F.exp(logp)
    return (F._random_multinomial_grad(samples, w, shape=c.in_shapes[0]),)


@defop("random_multinomial", infer=_multinomial_infer, vjp=_multinomial_vjp, inputs=("data",),
       attrs={"shape": None, "get_prob": False, "dtype": "int32"}, needs_ctx=True, random=True,
       nd=("random.multinomial", "sample_multinomial"))
def _multinomial(xp, data, shape=None, get_prob=False, dtype="int32", ctx=None):
    """Categories drawn from the probability rows of ``data`` (and, with get_prob, log p)."""
    out = _multinomial_infer(data, shape, get_prob, dtype)
    out_shape, dt = (out[0] if get_prob else out).shape, (out[0] if get_prob else out).dtype
    if _any(data < 0):
        raise ValueError("probabilities must be non-negative")
    k = data.shape[-1]
    rows = data.reshape(-1, k)
    n = math.prod(_size("random_multinomial", shape, "shape", positive=True) or ())
    idx = _categorical(xp, _random.get_generator(ctx), rows, n)
    samples = idx.reshape(out_shape).astype(dt, copy=False)
    if not get_prob:
        return samples
    logp = xp.log(xp.take_along_axis(rows, idx, axis=1))
    return samples, logp.reshape(out_shape)


def _multinomial_grad_infer(samples, w, shape=()):
    return Aval(shape, w.dtype)


@defop("_random_multinomial_grad", infer=_multinomial_grad_infer, inputs=("samples", "w"),
       attrs={"shape": ()}, differentiable=False, save=False)
def _multinomial_grad(xp, samples, w, shape=()):
    """Sums ``w`` into the categories ``samples`` picked from rows of shape ``shape``."""
    k = shape[-1]
    b = math.prod(shape[:-1])
    s = samples.reshape(b, -1).astype(int64) + xp.arange(b, dtype=int64)[:, None] * k
    out = xp.bincount(s.ravel(), weights=w.reshape(-1).astype(float64), minlength=b * k)
    return out.reshape(shape).astype(w.dtype, copy=False)


# --------------------------------------------------------------------------- np only

def _np_multinomial_infer(n, pvals, size=None):
    name = "np_random_multinomial"
    pvals = _av(pvals)
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise TypeError(f"{name}: n must be a non-negative int, got {n!r}")
    if _is_scalar(pvals) or pvals is None or len(pvals.shape) == 0 or pvals.shape[-1] == 0:
        raise ValueError(f"{name}: pvals must be an array of k >= 1 probabilities, got "
                         f"{pvals!r}")
    batch = tuple(pvals.shape[:-1])
    s = _size(name, size, "size", positive=False)
    if s is not None:
        if not _broadcasts_to(batch, s):
            raise ValueError(f"{name}: size={s} does not match pvals' leading shape {batch}")
        batch = s
    return Aval(batch + (pvals.shape[-1],), int64)


@defop("np_random_multinomial", infer=_np_multinomial_infer, inputs=("n", "pvals"),
       attrs={"size": None}, needs_ctx=True, random=True, differentiable=False, save=False,
       np=("random.multinomial",))
def _np_multinomial(xp, n, pvals, size=None, ctx=None):
    """NumPy's multinomial: counts of ``n`` draws over ``len(pvals)`` categories."""
    shape = _np_multinomial_infer(n, pvals, size).shape
    p = xp.broadcast_to(xp.asarray(pvals, dtype=float64), shape)
    if _any(p < 0) or _any(p[..., :-1].sum(axis=-1) > 1.0 + 1e-12):
        raise ValueError("pvals must be non-negative and sum(pvals[:-1]) must be <= 1")
    gen = _random.get_generator(ctx)
    # Conditional binomials: category j gets Binomial(n left, p_j / probability left);
    # the last category takes what remains (NumPy ignores pvals[-1] the same way).
    left = xp.full(shape[:-1], int(n), dtype=int64)
    mass = xp.ones(shape[:-1], dtype=float64)
    out = xp.empty(shape, dtype=int64)
    for j in range(shape[-1] - 1):
        pj = xp.clip(xp.where(mass > 0, p[..., j] / xp.where(mass > 0, mass, 1.0), 0.0), 0, 1)
        x = xp.asarray(gen.binomial(left, pj, shape[:-1])).astype(int64, copy=False)
        out[..., j] = x
        left = left - x
        mass = mass - p[..., j]
    out[..., -1] = left
    return out


def _p_len(p):
    if p is None:
        return None
    return numpy.shape(p)[0] if not hasattr(p, "shape") else (p.shape[0] if p.shape else 0)


def _choice_infer(a, size=None, replace=True, p=None):
    name = "np_random_choice"
    a = _av(a)
    if _is_scalar(a):
        if isinstance(a, bool) or not isinstance(a, numbers.Integral) or a < 0:
            raise ValueError(f"{name}: a must be a non-negative int or a 1-D array, got {a!r}")
        n, dt = int(a), int64
    else:
        if len(a.shape) != 1:
            raise ValueError(f"{name}: a must be 1-dimensional, got shape {a.shape}")
        n, dt = a.shape[0], a.dtype
    s = _size(name, size, "size", positive=False)
    s = () if s is None else s
    m = math.prod(s)
    if p is not None and (numpy.ndim(p) if not hasattr(p, "shape") else len(p.shape)) != 1:
        raise ValueError(f"{name}: p must be 1-dimensional")
    if p is not None and _p_len(p) != n:
        raise ValueError(f"{name}: a and p must have the same size, got {n} and {_p_len(p)}")
    if m > 0 and n == 0:
        raise ValueError(f"{name}: a cannot be empty unless no samples are taken")
    if not replace and m > n:
        raise ValueError(f"{name}: cannot take a larger sample ({m}) than the population "
                         f"({n}) when replace=False")
    return Aval(s, dt)


@defop("np_random_choice", infer=_choice_infer, inputs=("a",),
       attrs={"size": None, "replace": True, "p": None}, needs_ctx=True, random=True, differentiable=False,
       save=False, np=("random.choice",))
def _choice(xp, a, size=None, replace=True, p=None, ctx=None):
    """NumPy's choice: samples from ``a`` (or ``range(a)``), optionally weighted by ``p``."""
    out = _choice_infer(a, size, replace, p)
    n = int(a) if _is_scalar(a) else a.shape[0]
    m = math.prod(out.shape)
    gen = _random.get_generator(ctx)
    if p is not None:
        pdt = numpy.dtype(p.dtype) if hasattr(p, "dtype") else float64
        p = _to_xp(xp, p, float64)
        # ml_dtypes.finfo: NumPy's has no bfloat16/float8 (their kind is "V", not "f")
        atol = math.sqrt(float(ml_dtypes.finfo(pdt if is_float(pdt) else float64).eps))
        if _any(p < 0) or abs(float(p.sum()) - 1.0) > max(atol, 1e-8):
            raise ValueError("probabilities must be non-negative and sum to 1")
    if p is None and replace:
        idx = gen.integers(0, max(n, 1), size=m, dtype=int64)
    elif p is None:
        idx = gen.permutation(n)[:m]
    elif replace:
        idx = _categorical(xp, gen, p[None, :], m)[0]
    else:
        if int((p > 0).sum()) < m:
            raise ValueError("fewer non-zero entries in p than size")
        # Exponential race: the m smallest E_i / p_i are a weighted draw without
        # replacement in the order NumPy's sequential method would give.
        e = gen.standard_exponential(n, float64)
        keys = xp.where(p > 0, e / xp.where(p > 0, p, 1.0), xp.inf)
        idx = xp.argsort(keys)[:m]
    idx = xp.asarray(idx).astype(int64, copy=False).reshape(out.shape)
    return idx if _is_scalar(a) else a[idx]


# MXNet 1.x's further samplers and its Python front ends (nd.random.exponential's scale).
from . import random_mx  # noqa: E402, F401
from . import random_pdf  # noqa: E402, F401
