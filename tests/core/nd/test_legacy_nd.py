"""MXNet 1.x's legacy nd API: add_n/ElementWiseSum, the 0-index element operators,
onehot_encode, concatenate, from_numpy, NDArray.slice, inplace= shape methods, positional
ctx/dtype and stype in the creation functions, the top-level random draws, nd.CachedOp.
"""
import json

import numpy as np
import pytest

from core import autograd, nd, sym
from tests.mxnet_ref import requires_mxnet, run_mxnet


def test_add_n_and_element_wise_sum():
    ones = nd.ones((2, 3))
    res = nd.ElementWiseSum(ones, ones * 2, ones * 4, ones * 8)
    assert res.asnumpy().tolist() == [[15.0] * 3] * 2
    data = [nd.array(np.random.default_rng(i).uniform(size=(3, 4))) for i in range(4)]
    want = sum(d.asnumpy() for d in data)
    out = nd.add_n(*data, out=data[0])
    assert out is data[0]
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-6)
    with pytest.raises(ValueError, match="add_n: all arrays must have the same shape"):
        nd.add_n(nd.ones(2), nd.ones(3))
    s = sym.ElementWiseSum(sym.var("a"), sym.var("b"), name="esum")
    assert s.eval(a=nd.ones(2), b=nd.ones(2))[0].asnumpy().tolist() == [2.0, 2.0]


def test_add_n_gradient():
    xs = [nd.array([1.0, 2.0]) for _ in range(3)]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        y = nd.add_n(*xs) * nd.array([3.0, 5.0])
    y.backward()
    for x in xs:
        assert x.grad.asnumpy().tolist() == [3.0, 5.0]


def test_choose_and_fill_element_0index():
    rng = np.random.default_rng(0)
    arr = rng.uniform(size=(5, 4)).astype(np.float32)
    idx = rng.integers(0, 4, size=5)
    got = nd.choose_element_0index(nd.array(arr), nd.array(idx)).asnumpy()
    np.testing.assert_array_equal(got, arr[np.arange(5), idx])
    val = rng.uniform(size=5).astype(np.float32)
    want = arr.copy()
    want[np.arange(5), idx] = val
    got = nd.fill_element_0index(nd.array(arr), nd.array(val), nd.array(idx)).asnumpy()
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="choose_element_0index: .*index 4 is out of range"):
        nd.choose_element_0index(nd.array(arr), nd.array([4, 0, 0, 0, 0]))
    with pytest.raises(ValueError, match="rhs must hold one index per row"):
        nd.choose_element_0index(nd.array(arr), nd.array([1, 2]))


def test_onehot_encode_writes_out():
    out = nd.zeros((3, 4))
    r = nd.onehot_encode(nd.array([3, 0, 1]), out=out)
    assert r is out
    assert out.asnumpy().tolist() == np.eye(4)[[3, 0, 1]].tolist()
    with pytest.raises(ValueError, match=r"onehot_encode: indices must be in \[0, 4\)"):
        nd.onehot_encode(nd.array([4, 0, 1]), out)


def test_concatenate():
    arrays = [np.full((2, 3), k, np.float32) for k in range(3)]
    for axis in (0, 1):
        got = nd.concatenate([nd.array(a) for a in arrays], axis=axis).asnumpy()
        np.testing.assert_array_equal(got, np.concatenate(arrays, axis=axis))
    one = nd.ones(2)
    assert nd.concatenate([one], always_copy=False) is one
    assert nd.concatenate([one]) is not one


def test_from_numpy_zero_copy_and_copy():
    for zero_copy in (False, True):
        for a in (np.array([[1, 2], [3, 4]], dtype="float32"), np.array((1,)).reshape(()),
                  np.array(()).reshape((1, 0, 2))):
            x = nd.from_numpy(a.copy(), zero_copy=zero_copy)
            np.testing.assert_array_equal(x.asnumpy(), a)
            assert x.dtype == a.dtype
    a = np.array([[1, 2], [3, 4], [5, 6]], dtype="float32")
    x = nd.from_numpy(a)
    with pytest.raises(ValueError):
        a[2, 1] = 0  # read-only now, as in MXNet
    x[2, 1] = 100
    assert a[2, 1] == 100  # the memory is shared
    y = nd.from_numpy(a)  # again (MXNet's test does): shares it too
    y[0, 0] = -5
    assert a[0, 0] == -5 and x[0, 0].item() == -5
    frozen = np.ones(3)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="from_numpy: zero_copy of a read-only NumPy array"):
        nd.from_numpy(frozen)
    assert nd.from_numpy(frozen, zero_copy=False).asnumpy().tolist() == [1.0] * 3
    with pytest.raises(ValueError, match="from_numpy: zero_copy needs a C-contiguous array"):
        nd.from_numpy(np.ones((2, 3)).T)


def test_ndarray_slice_method():
    a = np.arange(60).reshape(3, 4, 5).astype(np.float32)
    x = nd.array(a)
    np.testing.assert_array_equal(x.slice(begin=(0, 2), end=(3, 4)).asnumpy(), a[0:3, 2:4])
    np.testing.assert_array_equal(x.slice((None, 0, 1), (None, 4, 5), (None, 2, 2)).asnumpy(),
                                  a[:, 0:4:2, 1:5:2])
    np.testing.assert_array_equal(x.slice(begin=(2,), end=(0,), step=(-1,)).asnumpy(),
                                  a[2:0:-1])


@pytest.mark.parametrize("method,kwargs", [("flatten", {}), ("squeeze", {"axis": 0}),
                                           ("expand_dims", {"axis": 1})])
def test_inplace_keyword_of_shape_methods(method, kwargs):
    data = nd.array(np.arange(6, dtype=np.float32).reshape(1, 2, 3))
    copy = getattr(data, method)(**kwargs)
    view = getattr(data, method)(inplace=True, **kwargs)
    before = copy.asnumpy().copy()
    data[0] = -1
    np.testing.assert_array_equal(copy.asnumpy(), before)  # a new array
    assert (view.asnumpy() == -1).all()  # shares the memory


def test_creation_positional_ctx_dtype_and_stype():
    assert nd.zeros((2, 3), nd.cpu(), "float64").dtype == np.float64
    assert nd.ones((2,), None, "int32").dtype == np.int32
    assert nd.empty((2, 2), nd.cpu(0), "float16").dtype == np.float16
    assert nd.full((2,), 7, nd.cpu(), "int32").asnumpy().tolist() == [7, 7]
    assert nd.full((2,), 7).dtype == np.float32  # MXNet's default, whatever the value
    assert nd.array([1, 2], nd.cpu(), "int64").dtype == np.int64
    assert nd.zeros((2,), stype="default").shape == (2,)
    assert nd.zeros(3).shape == (3,) and nd.zeros(3, dtype="float64").dtype == np.float64
    assert nd.zeros((2, 3), stype="row_sparse").stype == "row_sparse"  # core.sparse
    with pytest.raises(ValueError, match=r"nd.ones: stype='row_sparse' is not supported"):
        nd.ones((2,), stype="row_sparse")
    with pytest.raises(ValueError, match=r"csr array must be 2-D"):
        nd.ones(2).tostype("csr")
    assert nd.ones(2).tostype("default").asnumpy().tolist() == [1.0, 1.0]


def test_top_level_random_draws():
    assert nd.uniform(shape=(2, 3)).shape == (2, 3)
    u = nd.uniform(2, 3, (1000,)).asnumpy()
    assert 2 <= u.min() and u.max() < 3
    assert nd.normal(0, 1, (2, 2), dtype="float64").dtype == np.float64
    assert nd.random.randn(2, 3).shape == (2, 3)
    assert nd.random.randn(4, loc=5, scale=0.01).asnumpy().round().tolist() == [5.0] * 4
    assert nd.random_uniform(shape=(2,)).shape == (2,)


def test_cached_op_runs_a_symbol_with_autograd():
    net = sym.Convolution(kernel=(3, 3), num_filter=10) + 2
    op = nd.CachedOp(net)
    data, weight, bias = nd.ones((3, 4, 10, 10)), nd.ones((10, 4, 3, 3)), nd.ones((10,))
    o1 = op(data, weight, bias)
    bias[:] = 2
    o2 = op(data, weight, bias)
    np.testing.assert_allclose(o2.asnumpy(), o1.asnumpy() + 1)
    o2[:] = 0
    op(data, weight, bias, out=o2)
    np.testing.assert_allclose(o2.asnumpy(), o1.asnumpy() + 1)
    weight.attach_grad()
    bias.attach_grad()
    with autograd.record():
        o = op(data, weight, bias + 1) * 2
    o.backward()
    assert bias.grad.asnumpy().tolist() == [2.0 * 3 * 8 * 8] * 10
    data2 = nd.ones((5, 2, 10, 10))  # another shape: traced again
    data2.attach_grad()
    with autograd.record():
        o = op(data2, nd.ones((10, 2, 3, 3)), nd.ones((10,))) * 2
    o.backward()
    assert data2.grad.shape == (5, 2, 10, 10)
    with pytest.raises(ValueError, match="CachedOp: expects 3 NDArrays"):
        op(data)


def test_cached_op_updates_auxiliary_states():
    net = sym.BatchNorm(sym.var("x"), fix_gamma=False, momentum=0.5, name="bn")
    op = nd.CachedOp(net)
    names = net.list_inputs()
    assert names == ["x", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var"]
    x = nd.array([[1.0], [3.0]])
    mm, mv = nd.zeros((1,)), nd.ones((1,))
    with autograd.train_mode():
        op(x, nd.ones((1,)), nd.zeros((1,)), mm, mv)
    assert mm.asnumpy().tolist() == [1.0]  # 0.5 * 0 + 0.5 * 2


_MX = """
import mxnet as mx, numpy as np, json
arr = np.arange(20, dtype='float32').reshape(5, 4) / 7
idx = np.array([3, 0, 1, 2, 2], dtype='float32')
val = np.array([9, 8, 7, 6, 5], dtype='float32')
out = mx.nd.zeros((5, 4))
mx.nd.onehot_encode(mx.nd.array(idx), out=out)
x = mx.nd.array(np.arange(60, dtype='float32').reshape(3, 4, 5))
print(json.dumps({
  'choose': mx.nd.choose_element_0index(mx.nd.array(arr), mx.nd.array(idx)).asnumpy().tolist(),
  'fill': mx.nd.fill_element_0index(mx.nd.array(arr), mx.nd.array(val),
                                    mx.nd.array(idx)).asnumpy().tolist(),
  'onehot': out.asnumpy().tolist(),
  'slice': x.slice(begin=(None, 3, 1), end=(2, 0, 5), step=(1, -1, 2)).asnumpy().tolist(),
  'esum': mx.nd.ElementWiseSum(mx.nd.array(arr), mx.nd.array(arr) * 2).asnumpy().tolist(),
  'full': np.dtype(mx.nd.full((2,), 3).dtype).name,
}))
"""


@requires_mxnet
def test_legacy_functions_match_real_mxnet():
    ref = json.loads(run_mxnet(_MX))
    arr = np.arange(20, dtype="float32").reshape(5, 4) / 7
    idx = np.array([3, 0, 1, 2, 2], dtype="float32")
    val = np.array([9, 8, 7, 6, 5], dtype="float32")
    out = nd.zeros((5, 4))
    nd.onehot_encode(nd.array(idx), out=out)
    x = nd.array(np.arange(60, dtype="float32").reshape(3, 4, 5))
    ours = {
        "choose": nd.choose_element_0index(nd.array(arr), nd.array(idx)).asnumpy(),
        "fill": nd.fill_element_0index(nd.array(arr), nd.array(val), nd.array(idx)).asnumpy(),
        "onehot": out.asnumpy(),
        "slice": x.slice(begin=(None, 3, 1), end=(2, 0, 5), step=(1, -1, 2)).asnumpy(),
        "esum": nd.ElementWiseSum(nd.array(arr), nd.array(arr) * 2).asnumpy(),
    }
    for k, v in ours.items():
        np.testing.assert_allclose(v, np.array(ref[k]), rtol=1e-6, err_msg=k)
    assert str(nd.full((2,), 3).dtype) == ref["full"]


def _png(rgb: np.ndarray) -> bytes:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, format="PNG")
    return buf.getvalue()


_IMG = np.arange(5 * 4 * 3, dtype=np.uint8).reshape(5, 4, 3) * 4


def test_imdecode_chw_bgr_float32():
    """MXNet 1.9.1's own nd.imdecode fails on every call ("Shape is unknown"), so this
    follows its source (src/ndarray/ndarray.cc, Imdecode): OpenCV's BGR, CHW, float32."""
    buf = _png(_IMG)
    a = nd.imdecode(buf)
    assert a.shape == (3, 5, 4) and a.dtype == np.float32
    np.testing.assert_array_equal(a.asnumpy(), _IMG[:, :, ::-1].transpose(2, 0, 1))
    b = nd.imdecode(buf, clip_rect=(1, 2, 3, 5))
    np.testing.assert_array_equal(b.asnumpy(), _IMG[2:5, 1:3, ::-1].transpose(2, 0, 1))
    assert nd.imdecode(buf, channels=1).shape == (1, 5, 4)
    with pytest.raises(ValueError, match="imdecode: cannot decode the image"):
        nd.imdecode(b"not an image")
    with pytest.raises(ValueError, match=r"imdecode: clip_rect \(0, 0, 9, 9\) is outside"):
        nd.imdecode(buf, clip_rect=(0, 0, 9, 9))
    out = nd.zeros((2, 3, 5, 4))
    assert nd.imdecode(buf, out=out, index=1) is out
    np.testing.assert_array_equal(out[1].asnumpy(), a.asnumpy())
    assert out[0].asnumpy().sum() == 0
    mean = nd.ones((3, 5, 4))
    np.testing.assert_array_equal(nd.imdecode(buf, mean=mean).asnumpy(), a.asnumpy() - 1)


def test_fluent_methods_and_small_legacy_operators():
    x = nd.array(np.random.default_rng(1).uniform(size=(5, 17, 1)))
    for name in ("degrees", "radians", "rcbrt", "softmin", "argmax_channel"):
        np.testing.assert_allclose(getattr(x, name)().asnumpy(), getattr(nd, name)(x).asnumpy())
    np.testing.assert_allclose(x.degrees().asnumpy(), np.degrees(x.asnumpy()), rtol=1e-6)
    np.testing.assert_allclose(nd.rcbrt(x).asnumpy(), 1 / np.cbrt(x.asnumpy()), rtol=1e-5)
    assert nd.argmax_channel(nd.array([[0, 1, 2], [5, 4, 3]])).asnumpy().tolist() == [2, 0]
    assert x.shape_array().asnumpy().tolist() == [5, 17, 1]
    assert x.shape_array().dtype == np.int64 and x.size_array().asnumpy().tolist() == [85]
    parts = nd.split_v2(x, (1, 3), axis=0)
    assert [p.shape for p in parts] == [(1, 17, 1), (2, 17, 1), (2, 17, 1)]
    assert isinstance(nd.split(x, num_outputs=5, axis=0), list)
    assert isinstance(x.split(num_outputs=5, axis=0), list)
    assert isinstance(nd.split(x, num_outputs=1, axis=0), nd.NDArray)
    assert x.broadcast_axes(axis=(2,), size=(4,)).shape == (5, 17, 4)
    with pytest.raises(ValueError, match="broadcast_axis: axis 1 of shape"):
        nd.broadcast_axis(x, axis=1, size=3)
    y = nd.ones((5, 17, 2, 3))
    assert y.reshape_like(nd.ones((30, 17))).shape == (30, 17)
    assert nd.reshape_like(y, nd.ones((6, 5)), lhs_begin=2, lhs_end=4, rhs_begin=0,
                           rhs_end=1).shape == (5, 17, 6)
    v = nd.array([2.0, np.nan, 3.0])
    assert nd.nanprod(v).item() == 6.0
    assert x.transpose(axes=(1, 0, 2)).shape == (17, 5, 1)


def test_contrib_isinf_isnan_isfinite_are_float():
    v = nd.array([np.inf, -np.inf, np.nan, 5.0])
    assert nd.contrib.isinf(v).asnumpy().tolist() == [1.0, 1.0, 0.0, 0.0]
    assert nd.contrib.isnan(v).asnumpy().tolist() == [0.0, 0.0, 1.0, 0.0]
    assert nd.contrib.isfinite(v).asnumpy().tolist() == [0.0, 0.0, 0.0, 1.0]
    assert nd.contrib.isinf(v).dtype == np.float32


def test_dlpack_handles_and_one_element_assignment():
    a = nd.ones((2, 3))
    b = nd.from_dlpack(a.to_dlpack_for_read())
    c = nd.from_dlpack(nd.to_dlpack_for_write(a))
    c[0, 0] = 5
    assert a[0, 0].item() == 5 and b[0, 0].item() == 5  # the memory is shared
    assert np.from_dlpack(a.to_dlpack_for_read()).shape == (2, 3)
    z = nd.zeros(1)
    z[0] = np.array([47.844944], dtype=np.float32)  # MXNet: a 1-element array fills one
    assert z.asnumpy().tolist() == [np.float32(47.844944)]
    with pytest.raises(ValueError, match="__setitem__: cannot assign"):
        z[0] = np.ones(2)


def test_internal_crop_assign():
    x = nd.ones((2, 3, 4))
    assert nd.crop(x, begin=(0, 0, 0), end=(2, 1, 3)).shape == (2, 1, 3)
    r = nd._internal._crop_assign(x, nd.zeros((2, 1, 3)), begin=(0, 0, 0), end=(2, 1, 3),
                                  out=x)
    want = np.ones((2, 3, 4))
    want[0:2, 0:1, 0:3] = 0
    assert r is x and (x.asnumpy() == want).all()
    y = nd._internal._crop_assign_scalar(nd.ones((2, 3)), scalar=5, begin=(None, 1),
                                         end=(None, None), step=(None, 2))
    assert y.asnumpy().tolist() == [[1.0, 5.0, 1.0], [1.0, 5.0, 1.0]]
    assert nd._internal._adamw_update.op is nd.contrib.adamw_update.op
