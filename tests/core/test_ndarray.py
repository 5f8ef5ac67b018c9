"""NDArray: creation, properties, conversions, repr, operators, in-place, dlpack."""
import numpy as np
import pytest

import core
from core import cpu, nd
from core import np as knp
from core.dtypes import bfloat16


def test_creation_defaults_follow_mxnet():
    assert nd.array([1, 2, 3]).dtype == np.float32
    assert nd.array(np.arange(3)).dtype == np.float32
    assert nd.array([1, 2], dtype="int64").dtype == np.int64
    assert nd.zeros((2, 3)).dtype == np.float32
    assert knp.array(np.arange(3)).dtype == np.int64
    assert knp.array([1.5]).dtype == np.float32
    assert nd.array([True, False]).dtype == np.bool_
    x = nd.array([1.0], dtype="float16")
    assert nd.array(x).dtype == np.float16


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "bfloat16", "int8",
                                   "int16", "int32", "int64", "uint8", "bool"])
def test_all_dtypes(dtype):
    x = nd.ones((2, 2), dtype=dtype)
    assert x.dtype == (bfloat16 if dtype == "bfloat16" else np.dtype(dtype))
    assert x.asnumpy().shape == (2, 2)
    y = x.astype("float32")
    assert y.dtype == np.float32 and y.asnumpy().sum() == 4


def test_unsupported_dtype_is_clear():
    with pytest.raises(TypeError, match="unsupported dtype 'complex64'"):
        nd.zeros((2,), dtype="complex64")
    with pytest.raises(TypeError, match="only numbers and booleans"):
        nd.array(["a", "b"])


def test_properties():
    x = nd.zeros((2, 3, 4), ctx=cpu(1))
    assert x.shape == (2, 3, 4) and x.size == 24 and x.ndim == 3
    assert x.context == cpu(1) and x.ctx == cpu(1)
    assert x.T.shape == (4, 3, 2) if "transpose" in core.ops.REGISTRY else True
    assert len(x) == 2 and x.stype == "default"


def test_scalars_and_conversion():
    x = nd.array([3.5])
    assert x.asscalar() == np.float32(3.5) and isinstance(x.asscalar(), np.float32)
    assert x.item() == 3.5 and isinstance(x.item(), float)
    assert float(x) == 3.5 and int(nd.array([2], dtype="int32")) == 2
    assert bool(nd.array([1.0])) is True
    with pytest.raises(ValueError, match="ambiguous"):
        bool(nd.ones((2,)))
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        nd.ones((2,)).asscalar()
    assert np.asarray(nd.ones((2, 2))).shape == (2, 2)
    assert nd.array([[1, 2]]).tolist() == [[1.0, 2.0]]


def test_repr_like_mxnet():
    r = repr(nd.array([[1, 2, 3], [4, 5, 6]]))
    assert r.endswith("<NDArray 2x3 @cpu(0)>")
    assert "[[1. 2. 3.]" in r


def test_python_operators_against_numpy():
    a_np = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], np.float32)
    b_np = np.array([2.0, -1.0, 0.5], np.float32)
    a, b = nd.array(a_np), nd.array(b_np)
    cases = [
        (a + b, a_np + b_np), (a - b, a_np - b_np), (a * b, a_np * b_np),
        (a / b, a_np / b_np), (a // b, a_np // b_np), (a % b, a_np % b_np),
        (abs(a) ** b, np.abs(a_np) ** b_np), (-a, -a_np), (+a, a_np),
        (2 + a, 2 + a_np), (2 - a, 2 - a_np), (2 * a, 2 * a_np), (2 / b, 2 / b_np),
        (2 ** b, 2 ** b_np), (a_np + b, a_np + b_np), (a == b, a_np == b_np),
        (a != b, a_np != b_np), (a < b, a_np < b_np), (a <= b, a_np <= b_np),
        (a > b, a_np > b_np), (a >= b, a_np >= b_np), (abs(a), np.abs(a_np)),
    ]
    for ours, ref in cases:
        assert ours.dtype == ref.dtype
        np.testing.assert_allclose(ours.asnumpy(), ref, rtol=1e-6)
    i, j = nd.array([6, 3], dtype="int32"), nd.array([3, 5], dtype="int32")
    for ours, ref in ((i & j, np.array([6 & 3, 3 & 5])),
                      (i | j, np.array([6 | 3, 3 | 5])), (i ^ j, np.array([6 ^ 3, 3 ^ 5])),
                      (~i, np.array([~6, ~3]))):
        assert ours.asnumpy().tolist() == ref.tolist()


def test_in_place_operators_keep_identity():
    x = nd.array([1.0, 2.0])
    buf = x._data
    x += 1
    x *= 2
    x -= 1
    x /= 3
    assert x._data is buf
    np.testing.assert_allclose(x.asnumpy(), [1.0, 5.0 / 3.0], rtol=1e-6)
    i = nd.array([1, 2], dtype="int32")
    with pytest.raises(TypeError, match="in-place divide.*int32"):
        i /= 2
    with pytest.raises(ValueError, match="does not fit"):
        x += nd.ones((3, 2))


def test_setitem_basic():
    x = nd.zeros((2, 3))
    x[0] = 1
    x[1, 1:] = nd.array([5, 6])
    x[:] += 0  # augmented assignment through a view
    assert x.asnumpy().tolist() == [[1, 1, 1], [0, 5, 6]]


def test_copy_detach():
    x = nd.array([1.0, 2.0])
    y = x.copy()
    y[0] = 5
    assert x.asnumpy()[0] == 1.0
    d = x.detach()
    assert d._data is x._data and d._node is None


def test_dlpack_round_trip():
    x = nd.array([1.0, 2.0, 3.0])
    y = np.from_dlpack(x)
    np.testing.assert_array_equal(y, [1.0, 2.0, 3.0])
    z = core.from_dlpack(np.arange(4.0))
    assert z.context == cpu(0) and z.asnumpy().tolist() == [0.0, 1.0, 2.0, 3.0]


def test_ndarray_pickles_values_and_context_for_other_processes():
    import pickle

    x = nd.array([[1.5, 2.0]], ctx=cpu(1), dtype="float16")
    x.attach_grad()
    y = pickle.loads(pickle.dumps(x))
    assert y.context == cpu(1) and y.dtype == np.float16 and y.grad is None
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())
    b = pickle.loads(pickle.dumps(nd.array([1.0], dtype=bfloat16)))
    assert b.dtype == bfloat16


def test_numpy_on_the_left_defers_to_ndarray():
    r = np.ones(3, np.float32) * nd.ones((3,))
    assert isinstance(r, core.NDArray)


def test_constructor():
    x = core.NDArray([[1, 2]], ctx=cpu(2), dtype="float32")
    assert x.context == cpu(2) and x.shape == (1, 2)


def test_bfloat16_keeps_its_dtype_through_sigmoid_and_special_functions():
    x = nd.array(np.linspace(0.1, 0.9, 6), dtype="bfloat16")
    for op in (nd.sigmoid, nd.erf, nd.gammaln, nd.digamma):
        y = op(x)
        assert y.dtype == x.dtype, (op.__name__, y.dtype)
        want = op(x.astype("float32")).asnumpy()
        np.testing.assert_allclose(y.asnumpy().astype("float32"), want, rtol=2e-2)
