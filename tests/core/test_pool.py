"""Pooling and spatial sampling: behaviour the op table does not pin down, and errors."""
import numpy as np
import pytest

from core import autograd, nd
from core.ops import REGISTRY


def _grad(fn, x, head=None):
    a = nd.array(x)
    a.attach_grad()
    with autograd.record():
        y = fn(a)
    y.backward(nd.ones(y.shape, dtype=y.dtype) if head is None else nd.array(head))
    return y.asnumpy(), a.grad.asnumpy()


# ------------------------------------------------------------------ behaviour
def test_max_pool_ties_route_to_the_first_position():
    x = np.ones((1, 1, 4, 4), np.float32)
    _, g = _grad(lambda a: nd.Pooling(a, kernel=(2, 2), stride=(2, 2)), x)
    expect = np.zeros((4, 4), np.float32)
    expect[::2, ::2] = 1
    np.testing.assert_array_equal(g[0, 0], expect)
    # overlapping windows: each window routes once, to its own first maximum
    _, g = _grad(lambda a: nd.Pooling(a, kernel=(2,), stride=(1,)), np.ones((1, 1, 4)))
    np.testing.assert_array_equal(g[0, 0], [1, 1, 1, 0])


def test_max_pool_ties_nhwc_and_global():
    x = np.ones((1, 4, 4, 2), np.float32)
    _, g = _grad(lambda a: nd.Pooling(a, kernel=(2, 2), stride=(2, 2), layout="NHWC"), x)
    assert g[0, ::2, ::2].all() and g.sum() == 8
    _, g = _grad(lambda a: nd.Pooling(a, global_pool=True, layout="NHWC"), x)
    assert g[0, 0, 0].tolist() == [1, 1] and g.sum() == 2


def test_padded_cells_never_win_a_max():
    x = -np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3)
    y, g = _grad(lambda a: nd.Pooling(a, kernel=(3, 3), stride=(2, 2), pad=(1, 1)), x)
    np.testing.assert_array_equal(y[0, 0], [[-1, -2], [-4, -5]])
    assert g.sum() == 4 and g[0, 0, 0, 0] == 1


def test_average_divisor_with_and_without_padding():
    x = np.ones((1, 1, 3, 3), np.float32)
    inc = nd.Pooling(nd.array(x), kernel=(3, 3), pad=(1, 1), pool_type="avg").asnumpy()
    exc = nd.Pooling(nd.array(x), kernel=(3, 3), pad=(1, 1), pool_type="avg",
                     count_include_pad=False).asnumpy()
    np.testing.assert_allclose(inc[0, 0], [[4 / 9, 6 / 9, 4 / 9], [6 / 9, 1, 6 / 9],
                                           [4 / 9, 6 / 9, 4 / 9]], rtol=1e-6)
    np.testing.assert_allclose(exc, np.ones((1, 1, 3, 3)), rtol=1e-6)


def test_full_convention_does_not_count_cells_past_the_padded_input():
    # 5 cells, kernel 2, stride 2: 'full' adds a third window holding one real cell
    x = np.arange(5, dtype=np.float32).reshape(1, 1, 5)
    y = nd.Pooling(nd.array(x), kernel=(2,), stride=(2,), pool_type="avg",
                   pooling_convention="full")
    np.testing.assert_allclose(y.asnumpy()[0, 0], [0.5, 2.5, 4.0])
    assert nd.Pooling(nd.array(x), kernel=(2,), stride=(2,)).shape == (1, 1, 2)


def test_keras_same_padding_pairs_match_tensorflow_semantics():
    # TF 'same' for size 5, kernel 3, stride 2: out 3, total padding 2 -> (1, 1);
    # size 6: out 3, total padding 1 -> (0, 1)
    x = np.arange(30, dtype=np.float32).reshape(1, 5, 6, 1)
    y = nd.Pooling(nd.array(x), kernel=(3, 3), stride=(2, 2), pad=((1, 1), (0, 1)),
                   layout="NHWC", pool_type="avg", count_include_pad=False).asnumpy()
    img = x[0, :, :, 0]
    expect = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            r0, c0 = 2 * i - 1, 2 * j
            expect[i, j] = img[max(r0, 0):r0 + 3, c0:c0 + 3].mean()
    np.testing.assert_allclose(y[0, :, :, 0], expect, rtol=1e-6)


def test_global_pool_ignores_kernel_stride_and_pad():
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    y = nd.Pooling(nd.array(x), kernel=(2, 2), stride=(2, 2), pad=(1, 1), global_pool=True,
                   pool_type="avg")
    np.testing.assert_allclose(y.asnumpy(), x.mean(axis=(2, 3), keepdims=True), rtol=1e-5)


def test_pooling_output_does_not_alias_its_input():
    x = nd.array(np.ones((1, 1, 2, 2), np.float32))
    y = nd.Pooling(x, kernel=(1, 1))
    y[:] = 5
    assert x.asnumpy().max() == 1


def test_upsampling_bilinear_weight_matches_mxnet_deconvolution_interior():
    # with MXNet's bilinear-initialized weight, the deconvolution is half-pixel bilinear
    # interpolation away from the border (where it zero-pads instead of clamping)
    scale, c = 2, 2
    k = 2 * scale - scale % 2
    f = np.ceil(k / 2)
    centre = (2 * f - 1 - f % 2) / (2 * f)
    og = np.arange(k)
    filt = (1 - np.abs(og / f - centre))
    w = np.broadcast_to(np.outer(filt, filt), (c, 1, k, k)).astype(np.float32)
    x = np.random.default_rng(1).standard_normal((1, c, 4, 5)).astype(np.float32)
    deconv = nd.UpSampling(nd.array(x), nd.array(w), scale=scale, sample_type="bilinear",
                           num_filter=c, num_args=2).asnumpy()
    direct = nd.UpSampling(nd.array(x), scale=scale, sample_type="bilinear").asnumpy()
    np.testing.assert_allclose(deconv[..., 1:-1, 1:-1], direct[..., 1:-1, 1:-1], rtol=1e-5,
                               atol=1e-6)


# ------------------------------------------------------------------ errors
def test_pooling_window_larger_than_padded_input():
    with pytest.raises(ValueError, match=r"^Pooling: the pooling window \(5, 5\) is larger than "
                                         r"the padded input \(4, 4\) \(input shape "
                                         r"\(1, 1, 4, 4\), layout NCHW"):
        nd.Pooling(nd.ones((1, 1, 4, 4)), kernel=(5, 5))
    with pytest.raises(ValueError, match=r"Pooling: the pooling window \(3,\) is larger than "
                                         r"the padded input \(2,\)"):
        nd.Pooling(nd.ones((1, 2, 3)), kernel=(3,), layout="NWC")


def test_pooling_padding_makes_room_for_the_window():
    assert nd.Pooling(nd.ones((1, 1, 4, 4)), kernel=(5, 5), pad=(1, 1)).shape == (1, 1, 2, 2)


def test_pooling_wrong_ndim_for_layout():
    with pytest.raises(ValueError, match=r"^Pooling: layout 'NCHW' needs a 4-D input, got shape "
                                         r"\(2, 3, 4\) \(3-D\)$"):
        nd.Pooling(nd.ones((2, 3, 4)), kernel=(2,), layout="NCHW")


def test_pooling_wrong_ndim_without_layout():
    with pytest.raises(ValueError, match=r"Pooling: the input must be 3-D .* got shape \(2, 3\)"):
        nd.Pooling(nd.ones((2, 3)), kernel=(2,))


def test_pooling_kernel_length_must_match_the_spatial_dimensions():
    with pytest.raises(ValueError, match=r"Pooling: kernel=\(2, 2\) has 2 value\(s\) but the "
                                         r"NCW input of shape \(1, 2, 6\) has 1 spatial"):
        nd.Pooling(nd.ones((1, 2, 6)), kernel=(2, 2))


def test_pooling_unknown_pool_type():
    with pytest.raises(ValueError, match=r"^Pooling: unknown pool_type 'mean' \(input shape "
                                         r"\(1, 1, 4, 4\)\); use one of 'max', 'avg', 'sum', "
                                         r"'lp'$"):
        nd.Pooling(nd.ones((1, 1, 4, 4)), kernel=(2, 2), pool_type="mean")


def test_pooling_unknown_convention_and_layout():
    with pytest.raises(ValueError, match=r"Pooling: unknown pooling_convention 'ceil'"):
        nd.Pooling(nd.ones((1, 1, 4, 4)), kernel=(2, 2), pooling_convention="ceil")
    with pytest.raises(ValueError, match=r"Pooling: unknown layout 'CHWN'"):
        nd.Pooling(nd.ones((1, 1, 4, 4)), kernel=(2, 2), layout="CHWN")


def test_pooling_lp_needs_p_value():
    with pytest.raises(ValueError, match=r"Pooling: pool_type='lp' needs a positive p_value"):
        nd.Pooling(nd.ones((1, 1, 4, 4)), kernel=(2, 2), pool_type="lp")


def test_pooling_average_of_integers():
    with pytest.raises(TypeError, match=r"Pooling: pool_type='avg' needs a floating-point "
                                        r"input, got \(1, 1, 4, 4\) int32"):
        nd.Pooling(nd.ones((1, 1, 4, 4), dtype="int32"), kernel=(2, 2), pool_type="avg")


def test_pooling_bad_pad_pairs():
    with pytest.raises(ValueError, match=r"Pooling: pad=\(\(1, 1\),\) must give one "
                                         r"\(before, after\) pair per spatial dimension"):
        nd.Pooling(nd.ones((1, 1, 4, 4)), kernel=(2, 2), pad=((1, 1),))
    with pytest.raises(ValueError, match=r"Pooling: pad must be non-negative"):
        nd.Pooling(nd.ones((1, 1, 4, 4)), kernel=(2, 2), pad=(-1, 0))


def test_bilinear_sampler_bad_grid_shape():
    with pytest.raises(ValueError, match=r"^BilinearSampler: grid must have shape \(N, 2, H_out, "
                                         r"W_out\) with N=2 .*got grid \(2, 3, 4, 4\) float32 "
                                         r"for data \(2, 3, 5, 5\) float32$"):
        nd.BilinearSampler(nd.ones((2, 3, 5, 5)), nd.ones((2, 3, 4, 4)))
    with pytest.raises(ValueError, match=r"BilinearSampler: grid must have shape .* N=2 .*"
                                         r"got grid \(1, 2, 4, 4\)"):
        nd.BilinearSampler(nd.ones((2, 3, 5, 5)), nd.ones((1, 2, 4, 4)))


def test_bilinear_sampler_bad_data_shape():
    with pytest.raises(ValueError, match=r"BilinearSampler: data must be 4-D \(N, C, H, W\), "
                                         r"got data \(3, 5, 5\) float32"):
        nd.BilinearSampler(nd.ones((3, 5, 5)), nd.ones((3, 2, 4, 4)))


def test_grid_generator_bad_shapes():
    with pytest.raises(ValueError, match=r"GridGenerator: transform_type='affine' needs data of "
                                         r"shape \(N, 6\).* got \(2, 4\) float32"):
        nd.GridGenerator(nd.ones((2, 4)), target_shape=(3, 3))
    with pytest.raises(ValueError, match=r"GridGenerator: transform_type='affine' needs a "
                                         r"positive target_shape"):
        nd.GridGenerator(nd.ones((2, 6)))
    with pytest.raises(ValueError, match=r"GridGenerator: transform_type='warp' needs a flow "
                                         r"field of shape \(N, 2, H, W\), got \(2, 3, 4, 4\)"):
        nd.GridGenerator(nd.ones((2, 3, 4, 4)), transform_type="warp")


def test_upsampling_inputs_must_share_an_output_size():
    with pytest.raises(ValueError, match=r"UpSampling: every input must upsample by one integer "
                                         r"factor to the output size \(4, 4\).*\(1, 1, 3, 3\)"):
        nd.UpSampling(nd.ones((1, 1, 2, 2)), nd.ones((1, 1, 3, 3)), scale=2, num_args=2)


def test_upsampling_bilinear_weight_shape():
    with pytest.raises(ValueError, match=r"UpSampling: the bilinear weight must have shape "
                                         r"\(2, 1, 4, 4\).*got \(2, 1, 3, 3\)"):
        nd.UpSampling(nd.ones((1, 2, 3, 3)), nd.ones((2, 1, 3, 3)), scale=2,
                      sample_type="bilinear", num_args=2)


def test_resize_errors():
    resize = REGISTRY["image_resize"]
    with pytest.raises(ValueError, match=r"image_resize: images must be 4-D \(NCHW\) or 3-D .*"
                                         r"got shape \(4, 4\)"):
        resize(nd.ones((4, 4)), size=(2, 2))
    with pytest.raises(ValueError, match=r"image_resize: unknown method 'bicubic'"):
        resize(nd.ones((1, 1, 4, 4)), size=(2, 2), method="bicubic")
    with pytest.raises(ValueError, match=r"BilinearResize2D: data must be 4-D \(N, C, H, W\), "
                                         r"got shape \(1, 4, 4\)"):
        nd.BilinearResize2D(nd.ones((1, 4, 4)), height=2, width=2)
    with pytest.raises(TypeError, match=r"BilinearResize2D: the second input 'like' must be an "
                                        r"array, got 5; pass height= and width= by keyword"):
        nd.BilinearResize2D(nd.ones((1, 1, 4, 4)), 5, 6)
