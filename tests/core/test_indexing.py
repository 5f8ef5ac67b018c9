"""Behaviour of NDArray indexing and assignment, with autograd."""
import numpy as np
import pytest

from core import autograd, nd
from core.ops import F
from core.ops.index import index_shape


def _x(shape=(4, 5), dtype="float32"):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def _check(x_np, key, nd_key=None):
    got = nd.array(x_np, dtype=x_np.dtype)[key if nd_key is None else nd_key]
    want = x_np[key]
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got.asnumpy(), want)


def _scalar(y, w):
    """sum(y * w) as a 0-d array (a differentiable scalar)."""
    return F.sum_to(y * nd.array(w, dtype=y.dtype), shape=())


# ------------------------------------------------------------------ reading
@pytest.mark.parametrize("key", [1, -1, slice(1, 3), (slice(None), slice(None, None, 2)),
                                 (Ellipsis, None), (None, 2), slice(None, None, -1),
                                 (slice(3, 0, -2), slice(None, None, -3)), (2, 3), (-1, -5),
                                 (Ellipsis, 1), ()], ids=repr)
def test_basic_indexing(key):
    _check(_x(), key)


def test_basic_indexing_of_0d_arrays():
    x = nd.array(3.5)
    assert x[()].shape == () and x[()].item() == 3.5
    assert x[...].shape == () and x[None].shape == (1,)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool"])
def test_advanced_indexing(dtype):
    x = (_x((4, 5, 3)) % 7).astype(dtype)
    _check(x, [0, 2])
    _check(x, [[0, 2], [3, 3]])
    _check(x, (slice(None), [4, 0, 4], 1))
    _check(x, ([0, 1], slice(None), [2, 2]))  # separated: broadcast axes go first
    idx = np.array([3, 0, 0], dtype=np.int64)
    _check(x, idx, nd_key=nd.array(idx, dtype="int64"))
    _check(x, (1, idx), nd_key=(1, nd.array(idx, dtype="int32")))


def test_boolean_mask():
    x = _x((3, 4))
    mask = x % 3 == 0
    _check(x, mask, nd_key=nd.array(mask, dtype="bool"))
    _check(x, mask[:, 0], nd_key=nd.array(mask[:, 0], dtype="bool"))
    xn = nd.array(x)
    _check(x, x > 5, nd_key=xn > 5)
    assert xn[xn > 100].shape == (0,)


def test_iteration_and_len():
    x = nd.array(_x((3, 2)))
    rows = [r.asnumpy().tolist() for r in x]
    assert len(x) == 3 and rows == _x((3, 2)).tolist()


def test_basic_slices_are_views():
    x = nd.array(_x((4, 5)))
    y = x[1:3]
    y[:] = 0
    assert x.asnumpy()[1:3].sum() == 0 and x.asnumpy()[0].sum() == 10


# ------------------------------------------------------------------ errors
def test_out_of_range_index_names_the_shape():
    x = nd.zeros((3, 4))
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for axis 0 .*\(3, 4\)"):
        x[3]
    with pytest.raises(IndexError, match=r"index -5 is out of bounds for axis 1 .*\(3, 4\)"):
        x[:, -5]
    with pytest.raises(IndexError, match=r"index 9 .*\(3, 4\)"):
        x[nd.array([0, 9], dtype="int64")]
    with pytest.raises(IndexError, match=r"\(3, 4\)"):
        x[[1, -4]]
    with pytest.raises(IndexError, match=r"too many indices .*\(3, 4\)"):
        x[1, 2, 3]
    # MXNet's float32 index arrays work when they hold whole numbers
    assert x[nd.array([0.0, 2.0])].shape == (2, 4)
    with pytest.raises(IndexError, match=r"whole numbers"):
        x[nd.array([0.5, 1.0])]


# ------------------------------------------------------------------ assignment
def test_setitem_scalars_arrays_and_broadcasting():
    ref = _x((3, 4))
    x = nd.array(ref)
    for key, value in [(1, 7.0), ((slice(None), 2), nd.array([1.0, 2.0, 3.0])),
                       (slice(0, 2), nd.array([[9.0], [8.0]])), ((Ellipsis, -1), 5),
                       ([0, 2], nd.array([4.0, 3.0, 2.0, 1.0])), ((1, slice(None, None, -2)),
                                                                   nd.array([6.0, 5.0]))]:
        x[key] = value
        ref[key] = value.asnumpy() if isinstance(value, nd.NDArray) else value
        np.testing.assert_array_equal(x.asnumpy(), ref)
    mask = ref > 5
    x[nd.array(mask, dtype="bool")] = 0
    ref[mask] = 0
    np.testing.assert_array_equal(x.asnumpy(), ref)
    x[nd.array([1, 1], dtype="int32"), nd.array([0, 3], dtype="int32")] = -1
    ref[[1, 1], [0, 3]] = -1
    np.testing.assert_array_equal(x.asnumpy(), ref)


def test_setitem_bad_value_shape():
    x = nd.zeros((3, 4))
    with pytest.raises(ValueError, match=r"\(3, 4\)"):
        x[0] = nd.zeros((3,))


def test_setitem_under_record_flows_to_base_and_value():
    w = np.random.default_rng(0).standard_normal((3, 4))
    x = nd.array(_x((3, 4)), dtype="float64")
    v = nd.array([1.0, 2.0, 3.0, 4.0], dtype="float64")
    x.attach_grad()
    v.attach_grad()
    with autograd.record():
        y = x * 2
        y[1:3] = v * 3  # broadcast over two rows
        loss = _scalar(y * y, w)
    loss.backward()
    yv = 2 * x.asnumpy()
    yv[1:3] = 3 * v.asnumpy()
    gy = 2 * yv * w
    gx = 2 * gy
    gx[1:3] = 0
    np.testing.assert_allclose(x.grad.asnumpy(), gx)
    np.testing.assert_allclose(v.grad.asnumpy(), 3 * gy[1:3].sum(axis=0))


def test_setitem_under_record_with_index_arrays_and_scalars():
    x = nd.array(_x((4, 3)), dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = x + 0
        y[nd.array([0, 2], dtype="int64")] = 0.0
        y[:, 1] = x[:, 0] * x[:, 0]
        loss = F.sum_to(y, shape=())
    loss.backward()
    g = np.ones((4, 3))
    g[[0, 2]] = 0
    g[:, 1] = 0
    g[:, 0] += 2 * _x((4, 3), "float64")[:, 0]
    np.testing.assert_allclose(x.grad.asnumpy(), g)


def test_setitem_on_marked_variable_under_record_raises():
    x = nd.zeros((2, 2))
    x.attach_grad()
    with autograd.record(), pytest.raises(RuntimeError, match="attach_grad"):
        x[0] = 1.0


def test_setitem_then_higher_order_gradient():
    x = nd.array([1.0, 2.0, 3.0], dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = nd.zeros((2, 3), dtype="float64")
        y[1] = x * x * x
        s = F.sum_to(y, shape=())
        g = autograd.grad(s, x, create_graph=True)
        h = F.sum_to(g, shape=())
    h.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 6 * x.asnumpy())


# ------------------------------------------------------------------ repeated indices
def test_repeated_indices_accumulate_gradients():
    x = nd.array(_x((3, 4)), dtype="float64")
    x.attach_grad()
    idx = nd.array([2, 0, 2, 2], dtype="int64")
    with autograd.record():
        a = F.sum_to(x[idx], shape=())
        b = F.sum_to(nd.take(x, nd.array([1.0, 1.0, 3.0]), axis=1), shape=())
        c = F.sum_to(nd.gather_nd(x, nd.array([[0, 0], [1, 1]])), shape=())
        d = F.sum_to(x[[0, 0], [3, 3]], shape=())
        loss = a + b * 10 + c * 100 + d * 1000
    loss.backward()
    want = np.zeros((3, 4))
    want[2] += 3
    want[0] += 1
    want[:, 1] += 20
    want[:, 3] += 10
    want[0, 1] += 200
    want[0, 3] += 2000
    np.testing.assert_allclose(x.grad.asnumpy(), want)


def test_mask_gradient():
    x = nd.array([[-1.0, 2.0], [3.0, -4.0]], dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = x[x > 0]
        loss = F.sum_to(y * y, shape=())
    loss.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [[0.0, 4.0], [6.0, 0.0]])


# ------------------------------------------------------------------ inferred shapes
def _random_key(rng, shape):
    parts = []
    axis = 0
    while axis < len(shape) and rng.random() < 0.8:
        n = shape[axis]
        r = rng.integers(0, 7)
        if r == 0:
            parts.append(int(rng.integers(-n, n)))
        elif r == 1:
            parts.append(slice(int(rng.integers(-n - 1, n + 1)), None, int(rng.choice([-2, 1, 3]))))
        elif r == 2:
            parts.append(rng.integers(-n, n, size=tuple(rng.integers(1, 3, rng.integers(1, 3)))))
        elif r == 3:
            parts.append(None)
            continue
        elif r == 4 and not any(p is Ellipsis for p in parts):
            parts.append(Ellipsis)
            axis = len(shape) - (len(shape) - axis) // 2
            continue
        elif r == 5:
            parts.append(rng.random(n) > 0.5)
        else:
            parts.append(slice(None))
        axis += 1
    return tuple(parts)


def test_index_shape_matches_numpy():
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(3000):
        shape = tuple(int(s) for s in rng.integers(1, 5, rng.integers(0, 5)))
        key = _random_key(rng, shape)
        try:
            want = np.zeros(shape)[key].shape
        except IndexError:
            if any(getattr(k, "dtype", None) == bool for k in key):
                continue  # mask counts decide whether index arrays broadcast
            with pytest.raises(IndexError):
                index_shape("indexing", shape, key)
            continue
        got = index_shape("indexing", shape, key)
        assert len(got) == len(want) and all(g is None or g == w for g, w in zip(got, want)), (
            shape, key, got, want)
        checked += 1
    assert checked > 1000


def test_gradient_of_a_full_integer_index_reaches_the_element():
    # NumPy returns a scalar copy (not a view) for x[i] on a 1-D array: the scatter in
    # the VJP must still write into the gradient.
    a = nd.array([1.0, 2.0, 4.0])
    a.attach_grad()
    with autograd.record():
        s = a[0] * 2 + a[-1] * 3 + a[0]
    s.backward()
    np.testing.assert_array_equal(a.grad.asnumpy(), [3.0, 0.0, 3.0])
    b = nd.array([[1.0, 2.0], [3.0, 4.0]])
    b.attach_grad()
    with autograd.record():
        s = b[1, 0] * 5 + b[0][1]
    s.backward()
    np.testing.assert_array_equal(b.grad.asnumpy(), [[0.0, 1.0], [5.0, 0.0]])
