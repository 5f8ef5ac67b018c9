"""Convolution operators: error messages and behaviour beyond the op table (specs_conv.py)."""
import numpy as np
import pytest

from core import autograd, nd
from core.ops import F


def _r(*shape, seed=0, dtype="float64"):
    return nd.array(np.random.default_rng(seed).uniform(-1, 1, shape), dtype=dtype)


# ------------------------------------------------------------------ errors
def test_channels_that_do_not_match_the_weight():
    with pytest.raises(ValueError, match=r"^Convolution: the data has 3 channels but the weight "
                                         r"expects 2 \(2 per group x 1 group\(s\); weight layout "
                                         r"\(num_filter, channels / num_group, kh, kw\)\) "
                                         r"\(data: \(2, 3, 5, 5\) float32, weight: "
                                         r"\(4, 2, 3, 3\) float32; kernel=\(3, 3\)"):
        nd.Convolution(nd.ones((2, 3, 5, 5)), nd.ones((4, 2, 3, 3)), kernel=(3, 3),
                       num_filter=4, no_bias=True)


def test_channels_last_weight_mismatch_names_its_layout():
    with pytest.raises(ValueError, match=r"Convolution: the data has 3 channels but the weight "
                                         r"expects 4 .*\(num_filter, kh, kw, channels / "
                                         r"num_group\).*data: \(1, 5, 5, 3\) float32"):
        nd.Convolution(nd.ones((1, 5, 5, 3)), nd.ones((2, 3, 3, 4)), layout="NHWC")


def test_kernel_larger_than_the_padded_input():
    with pytest.raises(ValueError, match=r"^Convolution: the kernel \(5, 5\) \(dilated to 5 along "
                                         r"spatial axis 0\) is larger than the padded input: 3 \+ "
                                         r"pad 1 \+ 0 = 4 \(data: \(1, 2, 3, 8\) float32, "
                                         r"weight: \(4, 2, 5, 5\) float32"):
        nd.Convolution(nd.ones((1, 2, 3, 8)), nd.ones((4, 2, 5, 5)), pad=((1, 0), (0, 0)),
                       no_bias=True)


def test_dilation_makes_the_kernel_too_large():
    with pytest.raises(ValueError, match=r"Convolution: the kernel \(3,\) \(dilated to 7 along "
                                         r"spatial axis 0\) is larger than the padded input"):
        nd.Convolution(nd.ones((1, 1, 6)), nd.ones((1, 1, 3)), dilate=3, no_bias=True)


def test_groups_that_do_not_divide_the_channels():
    with pytest.raises(ValueError, match=r"^Convolution: num_group=2 does not divide the 3 input "
                                         r"channels \(data: \(1, 3, 5, 5\) float32, weight: "
                                         r"\(4, 1, 3, 3\) float32"):
        nd.Convolution(nd.ones((1, 3, 5, 5)), nd.ones((4, 1, 3, 3)), num_group=2, no_bias=True)


def test_groups_that_do_not_divide_the_filters():
    with pytest.raises(ValueError, match=r"Convolution: num_group=2 does not divide the 3 "
                                         r"filters \(weight.shape\[0\]\)"):
        nd.Convolution(nd.ones((1, 4, 5, 5)), nd.ones((3, 2, 3, 3)), num_group=2, no_bias=True)


def test_wrong_weight_ndim():
    with pytest.raises(ValueError, match=r"^Convolution: weight must have 4 dimensions "
                                         r"\(num_filter, channels / num_group, kh, kw\) for "
                                         r"layout NCHW, got 3 \(data: \(1, 2, 5, 5\) float32, "
                                         r"weight: \(4, 2, 3\) float32"):
        nd.Convolution(nd.ones((1, 2, 5, 5)), nd.ones((4, 2, 3)), no_bias=True)


def test_wrong_data_ndim():
    with pytest.raises(ValueError, match=r"Convolution: data must have 3, 4 or 5 dimensions .*"
                                         r"got 2 \(data: \(2, 3\) float32"):
        nd.Convolution(nd.ones((2, 3)), nd.ones((4, 3)), no_bias=True)


def test_unknown_layout():
    with pytest.raises(ValueError, match=r"^Convolution: unknown layout 'NCWH'; expected 'NCHW' "
                                         r"\(channels first, the default\) or 'NHWC' \(channels "
                                         r"last\) \(data: \(1, 2, 5, 5\) float32, weight: "
                                         r"\(4, 2, 3, 3\) float32"):
        nd.Convolution(nd.ones((1, 2, 5, 5)), nd.ones((4, 2, 3, 3)), layout="NCWH", no_bias=True)


def test_layout_for_another_number_of_dimensions():
    with pytest.raises(ValueError, match=r"Convolution: layout 'NCHW' is for 4-dimensional data "
                                         r"but the data has 3 dimensions; use 'NCW' or 'NWC'"):
        nd.Convolution(nd.ones((1, 2, 5)), nd.ones((4, 2, 3)), layout="NCHW", no_bias=True)


def test_kernel_and_num_filter_must_match_the_weight():
    with pytest.raises(ValueError, match=r"Convolution: kernel=\(5, 5\) does not match the "
                                         r"weight's kernel shape \(3, 3\)"):
        nd.Convolution(nd.ones((1, 2, 5, 5)), nd.ones((4, 2, 3, 3)), kernel=(5, 5), no_bias=True)
    with pytest.raises(ValueError, match=r"Convolution: num_filter=8 does not match the "
                                         r"weight's 4 filters"):
        nd.Convolution(nd.ones((1, 2, 5, 5)), nd.ones((4, 2, 3, 3)), num_filter=8, no_bias=True)
    with pytest.raises(ValueError, match=r"Convolution: kernel=\(3, 3, 3\) must have 2 value"):
        nd.Convolution(nd.ones((1, 2, 5, 5)), nd.ones((4, 2, 3, 3)), kernel=(3, 3, 3))


def test_bad_stride_pad_and_bias():
    x, w = nd.ones((1, 2, 5, 5)), nd.ones((4, 2, 3, 3))
    with pytest.raises(ValueError, match=r"Convolution: stride=\(0, 1\) must be >= 1"):
        nd.Convolution(x, w, stride=(0, 1), no_bias=True)
    with pytest.raises(ValueError, match=r"Convolution: pad=-1 must not be negative"):
        nd.Convolution(x, w, pad=-1, no_bias=True)
    with pytest.raises(ValueError, match=r"Convolution: pad='full': the padding modes are "
                                         r"'valid' and 'same'"):
        nd.Convolution(x, w, pad="full", no_bias=True)
    with pytest.raises(ValueError, match=r"Convolution: bias must have shape \(4,\) "
                                         r"\(num_filter\), got \(3,\)"):
        nd.Convolution(x, w, nd.ones((3,)))
    with pytest.raises(ValueError, match=r"Convolution: a bias was given but no_bias=True"):
        nd.Convolution(x, w, nd.ones((4,)), no_bias=True)


def test_integer_inputs_are_rejected():
    with pytest.raises(TypeError, match=r"Convolution: expects floating-point data"):
        nd.Convolution(nd.ones((1, 2, 5, 5), dtype="int32"), nd.ones((4, 2, 3, 3)),
                       no_bias=True)


def test_deconvolution_errors():
    with pytest.raises(ValueError, match=r"^Deconvolution: the data has 3 channels but the "
                                         r"weight expects 2 \(weight.shape\[0\]; weight layout "
                                         r"\(in_channels, num_filter / num_group, kh, kw\)\) "
                                         r"\(data: \(1, 3, 4, 4\) float32, weight: "
                                         r"\(2, 4, 3, 3\) float32"):
        nd.Deconvolution(nd.ones((1, 3, 4, 4)), nd.ones((2, 4, 3, 3)))
    with pytest.raises(ValueError, match=r"Deconvolution: adj=\(2, 2\) must be smaller than "
                                         r"stride=\(2, 2\)"):
        nd.Deconvolution(nd.ones((1, 2, 4, 4)), nd.ones((2, 4, 3, 3)), stride=2, adj=2)
    with pytest.raises(ValueError, match=r"Deconvolution: target_shape=\(20, 20\) is larger "
                                         r"than the largest output \(9, 9\)"):
        nd.Deconvolution(nd.ones((1, 2, 4, 4)), nd.ones((2, 4, 3, 3)), stride=2,
                         target_shape=(20, 20))
    with pytest.raises(ValueError, match=r"Deconvolution: a bias was given but no_bias=True "
                                         r"\(the default for Deconvolution\); pass "
                                         r"no_bias=False"):
        nd.Deconvolution(nd.ones((1, 2, 4, 4)), nd.ones((2, 4, 3, 3)), nd.ones((4,)))
    with pytest.raises(ValueError, match=r"Deconvolution: num_group=3 does not divide the 2 "
                                         r"input channels"):
        nd.Deconvolution(nd.ones((1, 2, 4, 4)), nd.ones((2, 4, 3, 3)), num_group=3)
    with pytest.raises(ValueError, match=r"Deconvolution: pad=\(\(3, 3\),\) is too large"):
        nd.Deconvolution(nd.ones((1, 2, 2)), nd.ones((2, 1, 3)), pad=3)


def test_im2col_and_col2im_errors():
    with pytest.raises(ValueError, match=r"^im2col: kernel must be given \(2 ints\) "
                                         r"\(data: \(1, 2, 5, 5\) float32"):
        nd.im2col(nd.ones((1, 2, 5, 5)))
    with pytest.raises(ValueError, match=r"im2col: the kernel \(7, 7\) .* larger than the padded"):
        nd.im2col(nd.ones((1, 2, 5, 5)), kernel=(7, 7))
    with pytest.raises(ValueError, match=r"^col2im: data.shape\[2\]=10 must be the number of "
                                         r"patches, 9 \(output spatial shape \(3, 3\)\) "
                                         r"\(data: \(1, 18, 10\) float32"):
        nd.col2im(nd.ones((1, 18, 10)), output_size=(5, 5), kernel=(3, 3))
    with pytest.raises(ValueError, match=r"col2im: data.shape\[1\]=10 must be a multiple of "
                                         r"prod\(kernel\)=9"):
        nd.col2im(nd.ones((1, 10, 9)), output_size=(5, 5), kernel=(3, 3))


# ------------------------------------------------------------------ behaviour
def test_mxnet_defaults_and_a_known_value():
    x = nd.ones((1, 1, 4, 4))
    w = nd.ones((2, 1, 3, 3))
    b = nd.array([0.0, 1.0])
    y = nd.Convolution(x, w, b, kernel=(3, 3), num_filter=2, pad=(1, 1))
    expected = np.array([[4, 6, 6, 4], [6, 9, 9, 6], [6, 9, 9, 6], [4, 6, 6, 4]], np.float32)
    np.testing.assert_array_equal(y.asnumpy()[0, 0], expected)
    np.testing.assert_array_equal(y.asnumpy()[0, 1], expected + 1)
    assert y.dtype == np.float32


def test_layouts_agree():
    x, w, b = _r(2, 4, 7, 6), _r(6, 2, 3, 2, seed=1), _r(6, seed=2)
    at = {"num_group": 2, "stride": (2, 1), "dilate": (1, 2), "pad": "same"}
    cf = nd.Convolution(x, w, b, **at)
    cl = nd.Convolution(x.transpose((0, 2, 3, 1)), w.transpose((0, 2, 3, 1)), b, layout="NHWC",
                        **at)
    np.testing.assert_allclose(cl.asnumpy().transpose(0, 3, 1, 2), cf.asnumpy(), rtol=1e-12)


def test_same_padding_output_shape_and_the_odd_pixel_after():
    x, w = _r(1, 1, 6, 7), _r(1, 1, 4, 3)
    y = nd.Convolution(x, w, pad="same", stride=(1, 2), no_bias=True)
    assert y.shape == (1, 1, 6, 4)  # ceil(x / stride)
    # kernel 4 at stride 1 pads 3 rows: 1 before, 2 after (TensorFlow); 7 at stride 2: 1 + 1
    same = nd.Convolution(x, w, pad=((1, 2), (1, 1)), stride=(1, 2), no_bias=True)
    np.testing.assert_array_equal(y.asnumpy(), same.asnumpy())


def test_kernel_and_num_filter_come_from_the_weight():
    x, w = _r(1, 3, 5, 5), _r(4, 3, 3, 3)
    a = nd.Convolution(x, w, no_bias=True)
    b = nd.Convolution(x, w, kernel=(3, 3), num_filter=4, no_bias=True)
    assert a.shape == (1, 4, 3, 3)
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


@pytest.mark.parametrize("layout", [None, "NHWC"])
@pytest.mark.parametrize("pad", [(1, 0), "same", "valid", ((0, 1), (2, 0))])
def test_deconvolution_is_the_adjoint_of_convolution(layout, pad):
    # <deconv(y, w), x> == <y, conv(x, w)> with the same stride, dilation, padding, groups
    cl = layout == "NHWC"
    x, w = _r(2, 7, 6, 4) if cl else _r(2, 4, 7, 6), _r(6, 2, 3, 2, seed=1)
    if cl:
        w = w.transpose((0, 2, 3, 1))
    at = {"stride": (2, 2), "dilate": (1, 2), "num_group": 2, "layout": layout}
    y = nd.Convolution(x, w, pad=pad, no_bias=True, **at)
    u = _r(*y.shape, seed=3)
    sp = x.shape[1:3] if cl else x.shape[2:]
    if isinstance(pad, str):
        pairs = {"same": ((1, 1), (0, 1)), "valid": ((0, 0), (0, 0))}[pad]
    else:
        pairs = tuple(p if isinstance(p, tuple) else (p, p) for p in pad)
    full = [2 * (o - 1) + dk for o, dk in zip(y.shape[1:3] if cl else y.shape[2:], (3, 3))]
    adj = tuple(s - (f - lo - hi) for s, f, (lo, hi) in zip(sp, full, pairs))
    z = nd.Deconvolution(u, w, pad=pairs, adj=adj, **at)
    assert z.shape == x.shape
    np.testing.assert_allclose((z * x).sum().item(), (u * y).sum().item(), rtol=1e-10)


@pytest.mark.parametrize("stride,kernel", [(2, 3), (2, 4), (3, 2), (1, 3)])
def test_deconvolution_same_and_valid_output_sizes_are_keras(stride, kernel):
    x, w = _r(1, 2, 5, 4), _r(2, 3, kernel, kernel)
    same = nd.Deconvolution(x, w, stride=stride, pad="same")
    valid = nd.Deconvolution(x, w, stride=stride, pad="valid")
    assert same.shape == (1, 3, 5 * stride, 4 * stride)
    extra = max(kernel - stride, 0)
    assert valid.shape == (1, 3, 5 * stride + extra, 4 * stride + extra)


def test_deconvolution_target_shape():
    x, w = _r(1, 2, 4, 4), _r(2, 3, 3, 3)
    y = nd.Deconvolution(x, w, kernel=(3, 3), stride=(2, 2), target_shape=(8, 7), num_filter=3)
    assert y.shape == (1, 3, 8, 7)


def test_im2col_col2im_round_trip_counts_overlaps():
    x = _r(2, 3, 5, 6)
    at = {"kernel": (3, 2), "stride": (1, 2), "pad": (1, 0)}
    cols = nd.im2col(x, **at)
    assert cols.shape == (2, 18, 15)
    back = nd.col2im(cols, output_size=(5, 6), **at)
    count = nd.col2im(nd.im2col(nd.ones_like(x), **at), output_size=(5, 6), **at)
    np.testing.assert_allclose(back.asnumpy(), (x * count).asnumpy(), rtol=1e-12)


def test_convolution_equals_im2col_then_matmul():
    x, w = _r(2, 3, 6, 5), _r(4, 3, 3, 2, seed=1)
    cols = nd.im2col(x, kernel=(3, 2), stride=(2, 1), pad=(1, 1))
    y = nd.Convolution(x, w, stride=(2, 1), pad=(1, 1), no_bias=True)
    ref = np.einsum("fk,nkl->nfl", w.asnumpy().reshape(4, -1), cols.asnumpy())
    np.testing.assert_allclose(y.asnumpy().reshape(2, 4, -1), ref, rtol=1e-12)


@pytest.mark.parametrize("layout", [None, "NHWC"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_computes_in_float32(dtype, layout):
    x, w = _r(2, 2, 5, 5), _r(3, 2, 3, 3, seed=1)
    if layout:
        x, w = x.transpose((0, 2, 3, 1)), w.transpose((0, 2, 3, 1))
    y = nd.Convolution(x.astype(dtype), w.astype(dtype), no_bias=True, pad=1, layout=layout)
    assert y.dtype == np.dtype(x.astype(dtype).dtype)
    ref = nd.Convolution(x.astype(dtype).astype("float64"), w.astype(dtype).astype("float64"),
                         no_bias=True, pad=1, layout=layout)
    np.testing.assert_allclose(y.asnumpy().astype(np.float64), ref.asnumpy(), rtol=2e-2,
                               atol=2e-2)


def test_mixed_float_dtypes_promote_and_gradients_keep_input_dtypes():
    x, w = _r(1, 2, 5, 5, dtype="float32"), _r(3, 2, 3, 3, dtype="float64")
    x.attach_grad()
    w.attach_grad()
    with autograd.record():
        y = nd.Convolution(x, w, no_bias=True)
    assert y.dtype == np.float64
    y.backward(nd.ones(y.shape, dtype="float64"))
    assert x.grad.dtype == np.float32 and w.grad.dtype == np.float64


def test_third_order_gradient_through_the_gradient_operators():
    # d/dx of d/dw of sum(conv(x, w)^3): every gradient operator's VJP runs
    x, w = _r(1, 2, 4, 4), _r(2, 2, 2, 2, seed=1)
    x.attach_grad()
    w.attach_grad()
    with autograd.record():
        y = nd.Convolution(x, w, no_bias=True, stride=2, pad=1)
        (gw,) = autograd.grad((y * y * y).sum(), [w], create_graph=True)
        s = (gw * gw).sum()
    s.backward()
    eps = 1e-6

    def f(xv):
        xx = nd.array(xv, dtype="float64")
        ww = w.copy()
        ww.attach_grad()
        with autograd.record():
            yy = nd.Convolution(xx, ww, no_bias=True, stride=2, pad=1)
            (g2,) = autograd.grad((yy * yy * yy).sum(), [ww], create_graph=True)
        return float((g2 * g2).sum().item())

    d = np.random.default_rng(5).standard_normal(x.shape)
    num = (f(x.asnumpy() + eps * d) - f(x.asnumpy() - eps * d)) / (2 * eps)
    np.testing.assert_allclose(float((x.grad.asnumpy() * d).sum()), num, rtol=1e-5)


def test_gradient_operators_infer_their_shapes():
    g, w = nd.ones((1, 4, 3, 3)), nd.ones((4, 2, 3, 3))
    gx = F._conv_grad_data(g, w, data_shape=(1, 2, 5, 5), kernel=(3, 3), stride=(1, 1),
                           dilate=(1, 1), pad=((0, 0), (0, 0)), num_group=1, layout="NCHW")
    assert gx.shape == (1, 2, 5, 5)
    with pytest.raises(ValueError, match=r"_conv_grad_data: the output gradient has shape "
                                         r"\(1, 4, 3, 3\) but the convolution's output has "
                                         r"shape \(1, 4, 4, 4\)"):
        F._conv_grad_data(g, w, data_shape=(1, 2, 6, 6), num_group=1, layout="NCHW")


def test_lowercase_names_are_the_same_operators():
    assert nd.convolution.op is nd.Convolution.op
    assert nd.deconvolution.op is nd.Deconvolution.op


@pytest.mark.parametrize("layout", [None, "NHWC"])
def test_long_rows_and_several_samples_against_the_reference(layout):
    # rows of 16+ outputs take the batch-major paths the small table samples do not
    from tests.core.ops.specs_conv import conv_grad_refs, conv_ref

    rng = np.random.default_rng(7)
    x, w, b = rng.uniform(-1, 1, (3, 2, 4, 19)), rng.uniform(-1, 1, (4, 2, 2, 3)), \
        rng.uniform(-1, 1, (4,))
    at = {"pad": (1, 1), "dilate": (1, 2)}
    if layout:
        x, w = np.moveaxis(x, 1, -1).copy(), np.moveaxis(w, 1, -1).copy()
        at["layout"] = layout
    xs, ws, bs = nd.array(x, dtype="float64"), nd.array(w, dtype="float64"), \
        nd.array(b, dtype="float64")
    for a in (xs, ws):
        a.attach_grad()
    with autograd.record():
        y = nd.Convolution(xs, ws, bs, **at)
    u = rng.uniform(-1, 1, y.shape)
    y.backward(nd.array(u, dtype="float64"))
    np.testing.assert_allclose(y.asnumpy(), conv_ref(x, w, b, **at), rtol=1e-10)
    gx, gw = conv_grad_refs(x, w, u, **at)
    np.testing.assert_allclose(xs.grad.asnumpy(), gx, rtol=1e-10)
    np.testing.assert_allclose(ws.grad.asnumpy(), gw, rtol=1e-10)


def test_scratch_memory_is_never_returned():
    # two results of the same shape must not share memory (scratch reuse)
    x, w = _r(2, 3, 5, 5), _r(4, 3, 3, 3, seed=1)
    a = nd.Convolution(x, w, no_bias=True, pad=1)
    b = nd.Convolution(x * 2, w, no_bias=True, pad=1)
    np.testing.assert_allclose(b.asnumpy(), 2 * a.asnumpy(), rtol=1e-12)


def test_a_bias_of_another_float_dtype_is_cast():
    x, w = _r(1, 2, 4, 4, dtype="float32"), _r(3, 2, 3, 3, dtype="float32")
    b = nd.array([1.0, 2.0, 3.0], dtype="float64")
    y = nd.Convolution(x, w, b)
    assert y.dtype == np.float32
    z = nd.Deconvolution(x, nd.ones((2, 3, 3, 3)), b, no_bias=False)
    assert z.dtype == np.float32 and z.shape == (1, 3, 6, 6)


def test_col2im_of_integers_is_a_type_error():
    with pytest.raises(TypeError, match=r"col2im: expects floating-point data"):
        nd.col2im(nd.ones((1, 9, 9), dtype="int32"), output_size=(5, 5), kernel=(3, 3))
