"""Property tests (hypothesis): broadcasting and bad input for binary ops and reductions.

Random shapes and dtypes either give NumPy's answer or a clear ValueError/TypeError
whose message names the operator, never another exception.
"""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import nd
from core import np as knp

DTYPES = ["float16", "float32", "float64", "int8", "int32", "int64", "uint8", "bool"]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power",
          "equal", "less", "greater_equal", "logical_and", "bitwise_and", "bitwise_xor",
          "arctan2", "hypot", "logaddexp", "floor_divide", "mod", "copysign"]
REDUCE = ["sum", "mean", "prod", "max", "min", "std", "var", "all", "any", "argmax",
          "argmin", "nansum", "nanmean", "cumsum"]

shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)


def _make(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(1, 5, size=shape).astype(dtype)
    return rng.uniform(0.5, 2.0, size=shape).astype(dtype)


def _compare(name, ours_fn, ref_fn):
    try:
        ref = ref_fn()
        ref_err = None
    except Exception as e:  # noqa: BLE001
        ref, ref_err = None, e
    try:
        ours = ours_fn()
    except (ValueError, TypeError) as e:
        assert name in str(e), f"error does not name {name!r}: {e}"
        assert ref_err is not None, f"{name}: we raised {e!r} but NumPy gave a result"
        return
    assert ref_err is None, f"{name}: NumPy raised {ref_err!r} but we returned a result"
    ref = np.asarray(ref)
    assert ours.shape == ref.shape, (ours.shape, ref.shape)
    assert ours.dtype == ref.dtype, (ours.dtype, ref.dtype)
    if ref.dtype.kind == "f":
        tol = 1e-2 if ref.dtype == np.float16 else 1e-5
        np.testing.assert_allclose(ours.asnumpy(), ref, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(ours.asnumpy(), ref)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(BINARY), sa=shapes, sb=shapes, da=st.sampled_from(DTYPES),
       db=st.sampled_from(DTYPES), seed=st.integers(0, 10))
def test_binary_ops_match_numpy_or_fail_clearly(name, sa, sb, da, db, seed):
    a, b = _make(sa, da, seed), _make(sb, db, seed + 1)
    ref_fn = getattr(np, name)
    with np.errstate(all="ignore"):
        _compare(name, lambda: getattr(knp, name)(knp.array(a), knp.array(b)),
                 lambda: ref_fn(a, b))



@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(REDUCE), shape=shapes, dtype=st.sampled_from(DTYPES),
       axis=st.one_of(st.none(), st.integers(-5, 5),
                      st.lists(st.integers(-4, 4), min_size=1, max_size=3).map(tuple)),
       keepdims=st.booleans(), seed=st.integers(0, 10))
def test_reductions_match_numpy_or_fail_clearly(name, shape, dtype, axis, keepdims, seed):
    a = _make(shape, dtype, seed)
    kwargs = {"axis": axis}
    if name not in ("argmax", "argmin", "cumsum"):
        kwargs["keepdims"] = keepdims
    if name in ("argmax", "argmin", "cumsum") and isinstance(axis, tuple):
        kwargs["axis"] = axis[0]
    ref_fn = getattr(np, name)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _compare(name, lambda: getattr(knp, name)(knp.array(a), **kwargs),
                 lambda: ref_fn(a, **kwargs))


@settings(max_examples=100, deadline=None)
@given(sa=shapes, sb=shapes)
def test_broadcast_shape_matches_numpy(sa, sb):
    a, b = nd.ones(sa), nd.ones(sb)
    try:
        expected = np.broadcast_shapes(sa, sb)
    except ValueError:
        with pytest.raises(ValueError, match=r"add: shapes .* cannot be broadcast"):
            a + b
        return
    assert (a + b).shape == expected
