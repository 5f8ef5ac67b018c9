"""kbackend numpy: result dtypes against Keras' (JAX's) rules, unsigned dtypes and the
edge cases Keras' ``ops/numpy_test.py`` checks, against NumPy."""
from __future__ import annotations

import keras
import numpy as np
import pytest
from keras import ops

import core
from core import autograd

n = ops.convert_to_numpy


def dt(x):
    return keras.backend.standardize_dtype(x.dtype)


# ------------------------------------------------------------------ result dtypes

@pytest.mark.parametrize("d", ["uint16", "uint32", "uint64"])
def test_unsigned_creation(d):
    assert dt(ops.ones((2,), dtype=d)) == d, d


def test_unsigned_promotion_and_reductions():
    assert dt(ops.add(ops.ones((1,), "uint8"), ops.ones((1,), "uint16"))) == "uint16"
    assert dt(ops.add(ops.ones((1,), "uint32"), ops.ones((1,), "int8"))) == "int32"
    assert dt(ops.sum(ops.ones((3,), "uint8"))) == "uint32"
    assert dt(ops.sum(ops.ones((3,), "int32"))) == "int32"
    assert dt(ops.sum(ops.ones((3,), "bool"))) == "int32"
    assert dt(ops.prod(ops.ones((3,), "int8"))) == "int32"
    assert dt(ops.cumsum(ops.ones((3,), "int16"))) == "int16"
    assert dt(ops.cumsum(ops.ones((3,), "bool"))) == "int32"
    assert dt(ops.cumprod(ops.ones((3,), "uint16"))) == "uint16"


def test_float_results_of_integer_inputs():
    assert dt(ops.arctan2(ops.ones((1,), "int16"), ops.ones((1,), "int32"))) == "float32"
    assert dt(ops.logaddexp(ops.ones((1,), "int8"), ops.ones((1,), "bool"))) == "float32"
    assert dt(ops.ceil(ops.ones((1,), "int32"))) == "float32"
    assert dt(ops.floor(ops.ones((1,), "bool"))) == "float32"
    assert dt(ops.trunc(ops.ones((1,), "int8"))) == "int8"
    assert dt(ops.deg2rad(ops.ones((1,), "bfloat16"))) == "bfloat16"
    assert dt(ops.deg2rad(ops.ones((1,), "int32"))) == "float32"
    assert dt(ops.diff(ops.ones((3,), "bool"))) == "bool"


def test_products_and_other_result_dtypes():
    i8 = ops.ones((2, 2), "int8")
    assert dt(ops.matmul(i8, i8)) == "int32" and dt(ops.einsum("ij,jk->ik", i8, i8)) == "int32"
    b = ops.ones((2, 2), "bool")
    assert dt(ops.matmul(i8, b)) == "int8" and dt(ops.einsum("ij,jk->ik", i8, b)) == "int8"
    assert dt(ops.full((2,), 0)) == keras.config.floatx()
    assert dt(ops.max(ops.ones((2,), "bool"), initial=1)) == "bool"
    assert dt(ops.trace(ops.ones((2, 2), "int8"))) == "int32"
    assert dt(ops.trace(ops.ones((2, 2), "uint8"))) == "uint32"
    assert dt(ops.vdot(ops.ones((2,), "int16"), ops.ones((2,), "bool"))) == "int16"
    assert dt(ops.square(ops.ones((2,), "bool"))) == "int32"


# ------------------------------------------------------------ values and edge cases

def close(g, w, tol=1e-6):
    np.testing.assert_allclose(n(g), w, rtol=tol, atol=tol)


def test_values_against_numpy():
    x = np.array([[1.0, 4.0], [3.0, 2.0]], "float32")
    close(ops.arctan2(x, x[::-1]), np.arctan2(x, x[::-1]))
    close(ops.cumsum(np.arange(6, dtype="int32").reshape(2, 3), axis=1),
          np.cumsum(np.arange(6).reshape(2, 3), axis=1))
    u = np.array([40000, 50000], "uint16")
    assert n(ops.sum(u)) == 90000 and n(ops.sum(u)).dtype == np.uint32
    close(ops.diff(np.array([True, False, False])), np.diff(np.array([True, False, False])))


def test_max_min_initial_over_an_empty_axis():
    # max/min with `initial` over an empty axis give `initial`, as NumPy does.
    x = np.array([[1.0, 4.0], [3.0, 2.0]], "float32")
    e = np.zeros((1, 0), "float32")
    close(ops.max(e, initial=1), np.max(e, initial=1))
    close(ops.min(e, axis=1, initial=2, keepdims=True),
          np.min(e, axis=1, initial=2, keepdims=True))
    close(ops.max(x, initial=5), 5.0)


def test_float16_mean_accumulates_in_float32():
    h = np.array([65504, 65504, 65504], "float16")  # no overflow
    close(ops.mean(h), np.mean(h))


def test_scalar_where_and_split_results():
    assert n(ops.argsort(np.array(1))) == 0
    close(ops.where(np.array([0, 2, 3]) > 1)[0], np.array([1, 2]))
    assert isinstance(ops.split(np.arange(6), 3), list)
    assert isinstance(ops.hsplit(np.ones((2, 4)), 2), list)


def test_nan_arg_reductions_and_nanmedian():
    a = np.array([[np.nan, np.nan], [1.0, np.nan]])
    close(ops.nanargmax(a, axis=1), np.array([-1, 0]))
    assert n(ops.nanargmin(np.array([np.nan, np.nan]))) == -1
    m = np.array([[1.0, np.nan, 3.0, 4.0, 5.0], [np.nan, 2.0, 3.0, np.inf, -np.inf]])
    close(ops.nanmedian(m, axis=()), np.nanmedian(m, axis=()))
    close(ops.nanmedian(m, axis=1), np.nanmedian(m, axis=1))


def test_unique_with_size():
    v, c = ops.unique(np.array([3, 1, 2, 1]), size=5, fill_value=-1, return_counts=True)
    close(v, [1, 2, 3, -1, -1])
    close(c, [2, 1, 1, 0, 0])
    v, c = ops.unique(np.array([3, 1, 2, 1]), size=2, return_counts=True)
    close(v, [1, 2])
    close(c, [2, 1])
    assert ops.shape(ops.unique(np.array([1.0, np.nan, 2.0, np.nan], "float32")))[0] == 4


@pytest.mark.parametrize("bad", [dict(array=np.ones(3)), dict(array=np.ones((2, 2)), axes=(0, 0))],
                         ids=["1-d", "same-axes"])
def test_rot90_bad_input(bad):
    with pytest.raises(ValueError, match="rot90"):
        ops.rot90(**bad)


# ------------------------------------------------------------------------ gradients

def test_gradients():
    x = core.np.array(np.array([[0.5, 2.0, 1.0], [3.0, 1.5, 0.25]], "float32"))
    x.attach_grad()
    with autograd.record():
        y = ops.sum(ops.cumsum(x, axis=1)) + ops.sum(ops.arctan2(x, 1.0 + x))
    y.backward()
    a = x.asnumpy()
    want = (np.array([[3, 2, 1], [3, 2, 1]], "float32")
            + (1.0 + a - a) / (a ** 2 + (1.0 + a) ** 2))
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-5)
