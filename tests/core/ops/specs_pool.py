"""Rows for pooling (core/ops/nn/pool.py).

The reference is a direct loop over output positions in channels-first layout (channels-last
inputs are transposed for it). Inputs hold distinct values (a shuffled ramp), so no window
has a tie and max pooling's gradient is well defined for finite differences.
"""
import itertools
import math

import numpy as np

from core import nd

from .op_db import OpSpec, Sample, np_dtype
from .specs_shape import second_order


def distinct(rng, shape, dtype, low=-2.0, high=2.0):
    """Distinct values spread over [low, high) in random order (no ties anywhere)."""
    n = math.prod(shape)
    ramp = low + (high - low) * (rng.permutation(n) + 0.5) / max(n, 1)
    if np.dtype(np_dtype(dtype)).kind in "iu":
        return rng.permutation(n).reshape(shape).astype(np_dtype(dtype)) - n // 2
    return ramp.reshape(shape).astype(np_dtype(dtype))


def _channels_first(layout, ndim):
    return layout is None or layout[1] == "C"


def ref_pool(x, kernel=(), pool_type="max", global_pool=False, pooling_convention="valid",
             stride=(), pad=(), p_value=None, count_include_pad=None, layout=None, **_):
    """Slow reference pooling: one window at a time."""
    last = not _channels_first(layout, x.ndim)
    if last:
        x = np.moveaxis(x, -1, 1)
    size = x.shape[2:]
    n = len(size)
    if global_pool:
        kernel, stride, before, after = size, (1,) * n, (0,) * n, (0,) * n
        pooling_convention = "valid"
    else:
        stride = tuple(stride) if stride else (1,) * n
        if pad and isinstance(pad[0], (tuple, list)):
            before, after = [p[0] for p in pad], [p[1] for p in pad]
        else:
            before = after = tuple(pad) if pad else (0,) * n
    padded = [b + s + a for b, s, a in zip(before, size, after)]
    if pooling_convention == "valid":
        out = [(p - k) // s + 1 for p, k, s in zip(padded, kernel, stride)]
    elif pooling_convention == "full":
        out = [math.ceil((p - k) / s) + 1 for p, k, s in zip(padded, kernel, stride)]
    else:
        out = [math.ceil(p / s) for p, s in zip(padded, stride)]
    include = True if count_include_pad is None else count_include_pad
    res = np.zeros(x.shape[:2] + tuple(out), dtype=x.dtype)
    for o in itertools.product(*[range(v) for v in out]):
        real, counted = [], 1
        for d in range(n):
            start = o[d] * stride[d] - before[d]
            end = start + kernel[d]
            real.append(slice(max(start, 0), min(end, size[d])))
            lo, hi = (-before[d], size[d] + after[d]) if include else (0, size[d])
            counted *= max(min(end, hi) - max(start, lo), 1)
        win = x[(slice(None), slice(None)) + tuple(real)].reshape(x.shape[:2] + (-1,))
        if pool_type == "max":
            v = win.max(axis=-1)
        elif pool_type == "sum":
            v = win.sum(axis=-1)
        elif pool_type == "avg":
            v = win.sum(axis=-1) / counted
        else:
            s = (win.astype(np.float64) ** p_value).sum(axis=-1)
            v = np.cbrt(s) if p_value == 3 else s ** (1.0 / p_value)
        res[(slice(None), slice(None)) + o] = v
    return np.moveaxis(res, 1, -1) if last else res


def _last(shape):
    """A channels-first shape as channels-last."""
    return (shape[0],) + tuple(shape[2:]) + (shape[1],)


# (shape in channels-first order, kwargs); each also runs channels-last
_WINDOWS = [
    ((2, 3, 4, 6), {"kernel": (2, 2), "stride": (2, 2)}),
    ((2, 2, 5, 7), {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}),
    ((1, 2, 6, 5), {"kernel": (3, 2), "stride": (2, 1), "pooling_convention": "full"}),
    ((2, 3, 7, 5), {"kernel": (2, 2), "stride": (3, 2)}),
    ((2, 3, 7), {"kernel": (3,), "stride": (2,)}),
    ((1, 2, 7), {"kernel": (3,), "stride": (3,), "pad": (1,), "pooling_convention": "full"}),
    ((2, 2, 7), {"kernel": (3,), "stride": (2,), "pooling_convention": "same"}),
    ((1, 2, 5, 6), {"kernel": (2, 3), "stride": (2, 2), "pooling_convention": "same"}),
    ((1, 2, 3, 4, 5), {"kernel": (2, 2, 2), "stride": (1, 2, 2)}),
    ((2, 1, 4, 5, 4), {"kernel": (2, 3, 2), "stride": (2, 2, 2), "pad": (1, 0, 1),
                       "pooling_convention": "full"}),
    ((2, 3, 5, 4), {"global_pool": True}),
    ((1, 2, 3, 4, 2), {"global_pool": True, "kernel": (1, 1, 1)}),
    ((2, 2, 4, 4), {"kernel": (4, 4)}),
    # Keras' 'same': total padding (ceil(x/s) - 1) * s + k - x split as (t // 2, t - t // 2)
    ((1, 2, 5, 6), {"kernel": (3, 3), "stride": (2, 2), "pad": ((1, 1), (0, 1))}),
    ((2, 2, 6, 6), {"kernel": (2, 2), "stride": (1, 1), "pad": ((0, 1), (0, 1))}),
]


def _both_layouts(cases):
    out = []
    for shape, k in cases:
        out.append((shape, k))
        out.append((_last(shape), dict(k, layout={3: "NWC", 4: "NHWC", 5: "NDHWC"}[len(shape)])))
    return out


def _pool_samples(pool_type, extra=(), gen=distinct, cases=_WINDOWS):
    def samples(rng, d):
        out = []
        for shape, k in _both_layouts(cases):
            for e in extra or ({},):
                out.append(Sample(gen(rng, shape, d), **dict(k, pool_type=pool_type, **e)))
        return out

    return samples


def _positive(rng, shape, d):
    return distinct(rng, shape, d, 0.5, 2.5)


def _call(x, **k):
    return nd.Pooling(x, **k)


_AVG_CASES = [c for c in _WINDOWS if "pad" in c[1] or c[1].get("pooling_convention")
              in ("full", "same")]
_LP_CASES = [_WINDOWS[1], _WINDOWS[4], _WINDOWS[8], _WINDOWS[10], _WINDOWS[13]]


def _lowercase_and_positional(spec, rng, arr):
    x = distinct(rng, (2, 3, 4, 4), "float32")
    a = nd.pooling(arr(x), kernel=(2, 2), stride=(2, 2), pool_type="avg")
    b = nd.Pooling(arr(x), (2, 2), "avg", False, False, "valid", (2, 2))
    ref = ref_pool(x, kernel=(2, 2), stride=(2, 2), pool_type="avg")
    np.testing.assert_allclose(a.asnumpy(), ref, rtol=1e-6)
    np.testing.assert_allclose(b.asnumpy(), ref, rtol=1e-6)


def _grad2_cases(shape, gen=distinct):
    return lambda rng: [[gen(rng, shape, "float64")]]


def _grad2(kind, fn, shape, covers, gen=distinct):
    spec = second_order("Pooling", fn, _grad2_cases(shape, gen), suffix=f"grad2-{kind}")
    spec.covers = covers
    return spec


SPECS = [
    OpSpec("Pooling", _call, ref_pool, _pool_samples("max"),
           dtypes=("float32", "float64", "float16", "int32"), extra={"id": "Pooling:max"}),
    OpSpec("Pooling", _call, ref_pool, _pool_samples("max", cases=_WINDOWS[:2]),
           dtypes=("bfloat16",), grad=False,
           extra={"id": "Pooling:max-bfloat16"}),
    OpSpec("Pooling", _call, ref_pool,
           _pool_samples("avg", extra=({}, {"count_include_pad": False})),
           dtypes=("float32", "float64", "float16"), extra={"id": "Pooling:avg"}),
    OpSpec("Pooling", _call, ref_pool, _pool_samples("avg", cases=_WINDOWS[:1] + _WINDOWS[3:5]
                                                     + _WINDOWS[8:13]),
           extra={"id": "Pooling:avg-unpadded"}),
    OpSpec("Pooling", _call, ref_pool, _pool_samples("sum", cases=_WINDOWS[::2]),
           dtypes=("float32", "float64", "int32"), extra={"id": "Pooling:sum"}),
    OpSpec("Pooling", _call, ref_pool,
           _pool_samples("lp", extra=({"p_value": 1}, {"p_value": 2}, {"p_value": 3},
                                      {"p_value": 1.5}), gen=_positive, cases=_LP_CASES),
           rtol=1e-4, atol=1e-5, extra={"id": "Pooling:lp"}),
    OpSpec("Pooling", None, None, None, check=_lowercase_and_positional,
           extra={"id": "Pooling:names"}),
    _grad2("max", lambda x: nd.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1)),
           (1, 2, 5, 5), ("_pooling_max_route", "_pooling_max_gather")),
    _grad2("max-nhwc", lambda x: nd.Pooling(x, kernel=(2, 2), stride=(2, 2), layout="NHWC"),
           (2, 4, 4, 2), ("_pooling_max_route", "_pooling_max_gather")),
    _grad2("max-global", lambda x: nd.Pooling(x, global_pool=True, layout="NWC"),
           (2, 5, 3), ("_pooling_max_route", "_pooling_max_gather")),
    _grad2("avg", lambda x: nd.Pooling(x, kernel=(3,), stride=(2,), pad=(1,), pool_type="avg",
                                       count_include_pad=False), (2, 2, 7),
           ("_pooling_spread",)),
    _grad2("sum-global", lambda x: nd.Pooling(x, global_pool=True, pool_type="sum"),
           (2, 2, 3, 3), ("_pooling_spread",)),
    _grad2("lp", lambda x: nd.Pooling(x, kernel=(2, 2), stride=(1, 1), pool_type="lp",
                                      p_value=2), (1, 2, 3, 4), ("_pooling_spread",),
           gen=lambda rng, s, d: distinct(rng, s, d, 0.5, 2.5)),
]
