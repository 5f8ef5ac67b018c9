"""kbackend image: keras.ops.image against NumPy/SciPy references, and gradients."""
from __future__ import annotations

from colorsys import hsv_to_rgb, rgb_to_hsv

import keras
import numpy as np
import pytest
import scipy.ndimage as ndi
from keras import ops

import core
from core import autograd
from core import np as cnp

n = ops.convert_to_numpy
homography = keras.src.backend.image.compute_homography_matrix
MODES = ("constant", "nearest", "wrap", "mirror", "reflect")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def close(g, w, tol=1e-4):
    np.testing.assert_allclose(n(g), w, rtol=tol, atol=tol)
    assert n(g).dtype == np.asarray(w).dtype, (n(g).dtype, np.asarray(w).dtype)


def grad(f, x):
    t = ops.convert_to_tensor(x)
    t.attach_grad()
    with autograd.record():
        loss = f(t)
    loss.backward()
    return t.grad.asnumpy()


def check_linear_grad(rng, f, shape, tol=1e-4):
    """f linear in x: d<f(x), G>/dx[i] equals <f(e_i), G> for the basis images e_i."""
    x = rng.random(shape).astype("float32")
    G = rng.standard_normal(n(f(x)).shape).astype("float32")
    g = grad(lambda t: ops.sum(f(t) * G), x)
    ref = np.zeros(int(np.prod(shape)), "float32")
    for i in range(ref.size):
        e = np.zeros(ref.size, "float32")
        e[i] = 1
        ref[i] = (n(f(e.reshape(shape))) * G).sum()
    np.testing.assert_allclose(g, ref.reshape(shape), rtol=tol, atol=tol)
    assert np.abs(g).max() > 0


def raises(fn, *words):
    """fn raises a ValueError or TypeError whose message holds every one of ``words``."""
    with pytest.raises((ValueError, TypeError)) as info:
        fn()
    for w in words:
        assert w in str(info.value), (w, str(info.value))


# --- color

GRAY = np.array([0.2989, 0.5870, 0.1140], "float32")


def test_rgb_to_grayscale(rng):
    x = rng.random((2, 5, 6, 3)).astype("float32")
    close(ops.image.rgb_to_grayscale(x), (x @ GRAY)[..., None])
    close(ops.image.rgb_to_grayscale(np.moveaxis(x, -1, 1), data_format="channels_first"),
          (x @ GRAY)[:, None])
    close(ops.image.rgb_to_grayscale(x[0]), (x[0] @ GRAY)[..., None])
    u8 = (x * 255).astype("uint8")
    close(ops.image.rgb_to_grayscale(u8),
          np.rint(u8.astype("float32") @ GRAY)[..., None].astype("uint8"), 0)
    close(ops.image.rgb_to_grayscale(x[..., :1]), x[..., :1])


def test_rgb_to_hsv_and_back_against_colorsys(rng):
    x = rng.random((2, 5, 6, 3)).astype("float32")
    hsv = np.array([[rgb_to_hsv(*p) for p in row] for row in x[0]], "float32")
    close(ops.image.rgb_to_hsv(x[0]), hsv, 1e-5)
    close(ops.image.rgb_to_hsv(np.moveaxis(x[0], -1, 0), data_format="channels_first"),
          np.moveaxis(hsv, -1, 0), 1e-5)
    rgb = np.array([[hsv_to_rgb(*p) for p in row] for row in x[0]], "float32")
    close(ops.image.hsv_to_rgb(x[0]), rgb, 1e-5)
    close(ops.image.hsv_to_rgb(ops.image.rgb_to_hsv(x)), x, 1e-5)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_color_conversions_keep_low_precision_floats(rng, dt):
    x = rng.random((2, 5, 6, 3)).astype("float32")
    assert ops.image.rgb_to_hsv(x.astype(dt)).dtype == dt
    assert ops.image.hsv_to_rgb(x.astype(dt)).dtype == dt
    assert ops.image.rgb_to_grayscale(x.astype(dt)).dtype == dt


def test_color_gradients(rng):
    # grayscale is linear; hsv_to_rgb against central differences.
    check_linear_grad(rng, lambda t: ops.image.rgb_to_grayscale(t), (2, 3, 3))
    x64 = rng.uniform(0.1, 0.9, (2, 2, 3))
    G = rng.standard_normal((2, 2, 3))
    g = grad(lambda t: ops.sum(ops.image.hsv_to_rgb(t) * G), x64)
    num = np.zeros_like(x64)
    for i in np.ndindex(*x64.shape):
        e = np.zeros_like(x64)
        e[i] = 1e-6
        diff = n(ops.image.hsv_to_rgb(x64 + e)) - n(ops.image.hsv_to_rgb(x64 - e))
        num[i] = (diff * G).sum() / 2e-6
    np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-5)


_X_COLOR = np.random.default_rng(0).random((2, 5, 6, 3)).astype("float32")


@pytest.mark.parametrize("call, words", [
    (lambda x: ops.image.rgb_to_hsv((x * 255).astype("uint8")),
     ("rgb_to_hsv", "float dtype", "uint8")),
    (lambda x: ops.image.rgb_to_grayscale(x[0, 0]), ("rgb_to_grayscale", "rank")),
    (lambda x: ops.image.rgb_to_grayscale(x[..., :2]), ("channel size",)),
    (lambda x: keras.src.backend.image.hsv_to_rgb(x[..., :2]), ("hsv_to_rgb", "3 channels")),
], ids=["hsv_uint8", "gray_rank", "gray_channels", "hsv_channels"])
def test_color_errors(call, words):
    raises(lambda: call(_X_COLOR), *words)


# --- resize

def ref_linear(x, oh, ow):
    """Half-pixel bilinear resize in NumPy (edge-clamped taps), axis by axis."""
    for axis, m, k in ((1, x.shape[1], oh), (2, x.shape[2], ow)):
        pos = np.clip((np.arange(k) + 0.5) * m / k - 0.5, 0, m - 1)
        lo = np.floor(pos).astype(int)
        hi = np.minimum(lo + 1, m - 1)
        f = pos - lo
        shape = [1] * x.ndim
        shape[axis] = k
        f = f.reshape(shape)
        x = np.take(x, lo, axis) * (1 - f) + np.take(x, hi, axis) * f
    return x.astype("float32")


@pytest.fixture
def image(rng):
    return rng.random((2, 6, 8, 3)).astype("float32") * 255


@pytest.mark.parametrize("size", [(3, 4), (9, 13), (6, 5)])
def test_resize_bilinear_and_nearest(image, size):
    x = image
    close(ops.image.resize(x, size), ref_linear(x, *size), 1e-3)
    ri = (np.arange(size[0]) + 0.5) * 6 / size[0]
    ci = (np.arange(size[1]) + 0.5) * 8 / size[1]
    close(ops.image.resize(x, size, interpolation="nearest"),
          x[:, np.floor(ri).astype(int)][:, :, np.floor(ci).astype(int)])
    close(ops.image.resize(np.moveaxis(x, -1, 1), size, data_format="channels_first"),
          np.moveaxis(ref_linear(x, *size), -1, 1), 1e-3)


def test_resize_area(image):
    # block means when downsampling by integer factors, nearest when upsampling.
    x = image
    close(ops.image.resize(x, (3, 2), interpolation="area"),
          x.reshape(2, 3, 2, 2, 4, 3).mean((2, 4)), 1e-3)
    close(ops.image.resize(x, (12, 16), interpolation="area"),
          x.repeat(2, 1).repeat(2, 2), 1e-3)


def test_resize_antialiased_bilinear_halving_is_the_1331_filter(rng):
    # [1, 3, 3, 1] / 8, edges renormalized.
    one = rng.random((1, 8, 1)).astype("float32")
    k = np.array([1, 3, 3, 1], "float32") / 8
    pad = np.concatenate([one[:, :1] * 0, one, one[:, :1] * 0], 1)[0, :, 0]
    want = np.array([np.dot(pad[2 * j:2 * j + 4], k) for j in range(4)])
    want[0] = np.dot(pad[1:4], k[1:]) / k[1:].sum()
    want[-1] = np.dot(pad[6:9], k[:3]) / k[:3].sum()
    close(ops.image.resize(one, (1, 4), antialias=True)[0, :, 0], want.astype("float32"), 1e-5)


@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("method", ["bicubic", "lanczos3", "lanczos5"])
def test_resize_kernels_are_normalized(method, antialias):
    flat = np.full((7, 9, 2), 3.5, "float32")  # kernels are normalized: constants stay
    close(ops.image.resize(flat, (4, 13), interpolation=method, antialias=antialias),
          np.full((4, 13, 2), 3.5, "float32"), 1e-4)


def test_resize_rounds_and_saturates_integers():
    u8 = np.array([0, 1, 254, 255], "uint8").reshape(1, 2, 2, 1)
    close(ops.image.resize(u8, (4, 4), interpolation="bicubic"),
          np.array([[0, 0, 0, 0], [53, 53, 53, 54], [201, 202, 202, 202], [255] * 4],
                   "uint8").reshape(1, 4, 4, 1), 0)


@pytest.mark.parametrize("dt", ["float16", "bfloat16", "int32"])
def test_resize_keeps_dtype(image, dt):
    assert ops.image.resize(image.astype(dt), (3, 3)).dtype == dt


def test_resize_crop_and_pad_to_aspect_ratio(rng):
    img = rng.random((10, 6, 1)).astype("float32")
    close(ops.image.resize(img, (3, 6), crop_to_aspect_ratio=True, interpolation="nearest"),
          img[3:6])
    out = n(ops.image.resize(np.ones((4, 8, 2), "float32"), (8, 8), pad_to_aspect_ratio=True,
                             fill_value=7.0, interpolation="nearest"))
    assert (out[:2] == 7).all() and (out[6:] == 7).all() and (out[2:6] == 1).all(), out[..., 0]


@pytest.mark.parametrize("method", ["bilinear", "nearest", "bicubic", "lanczos3", "area"])
def test_resize_gradients_flow_to_the_images(rng, method):
    # every method is linear in the image
    check_linear_grad(rng, lambda t: ops.image.resize(t, (3, 5), interpolation=method),
                      (4, 3, 2))


def test_resize_gradients_antialiased_and_padded(rng):
    check_linear_grad(rng, lambda t: ops.image.resize(t, (3, 3), antialias=True), (5, 4, 1))
    check_linear_grad(rng, lambda t: ops.image.resize(t, (3, 3), pad_to_aspect_ratio=True),
                      (4, 2, 1))


def test_resize_errors(image):
    raises(lambda: ops.image.resize(image, (3, 3), interpolation="cubic"),
           "resize", "interpolation")
    raises(lambda: ops.image.resize(image[0, 0], (3, 3)), "rank")


def test_scale_and_translate(rng):
    # Keras' docstring example, and a pure integer shift.
    img = np.arange(9, dtype="float32").reshape(3, 3)
    sc = np.array([2.0, 2.0], "float32")
    close(ops.image.scale_and_translate(img, (5, 5), sc, -(sc / 2 - 0.5), (0, 1), "linear"),
          np.array([[0, .5, 1, 1.5, 2], [1.5, 2, 2.5, 3, 3.5], [3, 3.5, 4, 4.5, 5],
                    [4.5, 5, 5.5, 6, 6.5], [6, 6.5, 7, 7.5, 8]], "float32"), 1e-5)
    row = rng.random((1, 6)).astype("float32")
    close(ops.image.scale_and_translate(row, (1, 6), np.array([1.0]), np.array([2.0]), (1,),
                                        "cubic"),
          np.concatenate([[[0, 0]], row[:, :4]], 1).astype("float32"), 1e-5)
    check_linear_grad(rng, lambda t: ops.image.scale_and_translate(
        t, (3, 4), np.array([0.7, 1.4]), np.array([0.2, -0.3]), (0, 1), "lanczos3"), (4, 3))
    raises(lambda: ops.image.scale_and_translate(img, (5, 5), sc, sc, (0, 1), "box"), "method")


# --- map_coordinates and warps

def fixed_scipy(inp, coords, order, mode, cval=0.0):
    """SciPy's map_coordinates on an input padded so its boundary bug cannot show."""
    pad = [(max(int(-np.floor(c.min())) + 1, 0), max(int(np.ceil(c.max())) + 1 - s, 0))
           for c, s in zip(coords, inp.shape)]
    mode_np = {"nearest": "edge", "mirror": "reflect", "reflect": "symmetric"}.get(mode, mode)
    kw = {"constant_values": cval} if mode == "constant" else {}
    padded = np.pad(inp, pad, mode=mode_np, **kw)
    shifted = [c + p[0] for c, p in zip(coords, pad)]
    return ndi.map_coordinates(padded, shifted, order=order, mode=mode, cval=cval)


@pytest.fixture
def warp_case(rng):
    inp = rng.random((4, 5)).astype("float32")
    coords = [rng.uniform(-3, 7, (3, 6)).astype("float32") for _ in range(2)]
    return inp, coords


@pytest.mark.parametrize("mode", MODES)
def test_map_coordinates_against_scipy(rng, warp_case, mode):
    inp, coords = warp_case
    for order in (0, 1):
        close(ops.image.map_coordinates(inp, coords, order, mode, 0.5),
              fixed_scipy(inp, coords, order, mode, 0.5), 1e-5)
        close(ops.image.map_coordinates(inp, np.stack(coords), order, mode),
              fixed_scipy(inp, coords, order, mode), 1e-5)
    check_linear_grad(rng, lambda t: ops.image.map_coordinates(t, coords, 1, mode), (4, 5))


def test_map_coordinates_of_integers(warp_case):
    inp, coords = warp_case
    i8 = (inp * 200).astype("uint8")
    close(ops.image.map_coordinates(i8, coords, 1, "nearest"),
          fixed_scipy(i8, coords, 1, "nearest"), 0)


def test_map_coordinates_gradient_in_the_coordinates(rng):
    # order 1, against central differences
    inp64 = rng.random((4, 5))
    c64 = rng.uniform(0.1, 3.9, (2, 7))
    c64 = np.where(np.abs(c64 - np.round(c64)) < 0.05, c64 + 0.1, c64)
    G = rng.standard_normal(7)
    g = grad(lambda t: ops.sum(ops.image.map_coordinates(inp64, t, 1) * G), c64)

    def f(c):
        return (n(ops.image.map_coordinates(inp64, c, 1)) * G).sum()

    num = np.zeros_like(c64)
    for i in np.ndindex(*c64.shape):
        e = np.zeros_like(c64)
        e[i] = 1e-6
        num[i] = (f(c64 + e) - f(c64 - e)) / 2e-6
    np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-6)


def test_map_coordinates_errors(warp_case):
    inp, coords = warp_case
    raises(lambda: ops.image.map_coordinates(inp, coords[:1], 1), "map_coordinates", "rank")
    raises(lambda: ops.image.map_coordinates(inp, coords, 2), "order")
    raises(lambda: ops.image.map_coordinates(inp, coords, 1, "edge"), "fill_mode", "edge")


# affine_transform: projective rows [a0, a1, a2, b0, b1, b2, c0, c1] (c0, c1 honoured).
TRANSFORMS = np.array([[0.9, 0.2, 0.5, -0.1, 1.1, 0.3, 0.01, 0.02],
                       [1.0, 0.0, -1.5, 0.0, 1.0, 2.0, 0.0, 0.0]], "float32")


def affine_ref(x, t, order, mode, cval=0.0):
    out = np.zeros_like(x)
    yy, xx = np.mgrid[:x.shape[1], :x.shape[2]].astype("float64")
    for b in range(x.shape[0]):
        a0, a1, a2, b0, b1, b2, c0, c1 = t[b].astype("float64")
        k = c0 * xx + c1 * yy + 1
        xi, yi = (a0 * xx + a1 * yy + a2) / k, (b0 * xx + b1 * yy + b2) / k
        for c in range(x.shape[3]):
            out[b, ..., c] = fixed_scipy(x[b, ..., c], [yi, xi], order, mode, cval)
    return out


@pytest.fixture
def batch(rng):
    return rng.random((2, 6, 7, 3)).astype("float32")


@pytest.mark.parametrize("mode", MODES)
def test_affine_transform_against_scipy(batch, mode):
    for interp, order in (("bilinear", 1), ("nearest", 0)):
        close(ops.image.affine_transform(batch, TRANSFORMS, interp, mode, 0.25),
              affine_ref(batch, TRANSFORMS, order, mode, 0.25), 1e-5)


def test_affine_transform_layouts_identity_gradient_and_errors(rng, batch):
    x, t = batch, TRANSFORMS
    close(ops.image.affine_transform(np.moveaxis(x, -1, 1), t, data_format="channels_first"),
          np.moveaxis(affine_ref(x, t, 1, "constant"), -1, 1), 1e-5)
    close(ops.image.affine_transform(x[0], t[1]),
          affine_ref(x[:1], t[1:], 1, "constant")[0], 1e-5)
    close(ops.image.affine_transform(x, np.array([1, 0, 0, 0, 1, 0, 0, 0], "float32")), x,
          1e-6)
    check_linear_grad(rng, lambda v: ops.image.affine_transform(v, t[:1], fill_mode="reflect"),
                      (1, 3, 4, 2))
    raises(lambda: ops.image.affine_transform(x, t[:, :6]), "affine_transform", "(2, 6)")


def test_affine_transform_gradient_in_the_transform(rng):
    # Bilinear warps are differentiable in the transform too (central differences; the
    # coordinates stay 0.007 away from integers, where the interpolation has kinks).
    img64 = rng.random((5, 6, 2))
    t64 = np.array([0.91, 0.137, 0.331, -0.093, 1.047, 0.4517, 0.013, 0.021])
    G = rng.standard_normal((5, 6, 2))

    def f(tt):
        return (n(ops.image.affine_transform(img64, tt, fill_mode="nearest")) * G).sum()

    g = grad(lambda tt: ops.sum(ops.image.affine_transform(img64, tt, fill_mode="nearest") * G),
             t64)
    num = np.array([(f(t64 + e) - f(t64 - e)) / 2e-7 for e in np.eye(8) * 1e-7])
    np.testing.assert_allclose(g, num, rtol=1e-4, atol=1e-4)


def test_perspective_transform_and_homography(rng, batch):
    x = batch
    start = rng.uniform(0, 6, (2, 4, 2)).astype("float32")
    end = start + rng.uniform(-1, 1, (2, 4, 2)).astype("float32")
    h = n(homography(start, end))
    assert h.shape == (2, 8) and h.dtype == np.float32
    for b in range(2):
        a0, a1, a2, b0, b1, b2, c0, c1 = h[b].astype("float64")
        ex, ey = end[b, :, 0], end[b, :, 1]
        k = c0 * ex + c1 * ey + 1
        np.testing.assert_allclose(np.stack([(a0 * ex + a1 * ey + a2) / k,
                                             (b0 * ex + b1 * ey + b2) / k], -1), start[b],
                                   atol=1e-3)
    close(ops.image.perspective_transform(x, start, end, fill_value=0.5),
          affine_ref(x, h, 1, "constant", 0.5), 1e-4)
    close(ops.image.perspective_transform(x, start, start), x, 1e-4)
    check_linear_grad(rng, lambda v: ops.image.perspective_transform(v, start[:1], end[:1]),
                      (6, 7, 1))
    raises(lambda: ops.image.perspective_transform(x, start[:, :3], end[:, :3]), "start_points")
    raises(lambda: homography(np.zeros((4, 2)), np.zeros((4, 2))),
           "compute_homography_matrix", "degenerate")


# --- filters

def gauss1d(size, sigma):
    v = np.exp(-0.5 * ((np.arange(size) - (size - 1) / 2) / sigma) ** 2)
    return v / v.sum()


@pytest.fixture
def images(rng):
    return rng.random((2, 9, 8, 3)).astype("float32")


@pytest.mark.parametrize("ks, sg", [((3, 3), (1.0, 1.0)), ((5, 3), (1.5, 0.7)),
                                    ((4, 6), (1.0, 2.0))])
def test_gaussian_blur_against_scipy(images, ks, sg):
    x = images
    k2 = np.outer(gauss1d(ks[1], sg[1]), gauss1d(ks[0], sg[0]))  # rows from the 2nd entries
    # scipy.ndimage.correlate centers even kernels one later than "same" padding does.
    origin = [-(1 - s % 2) for s in k2.shape]
    want = np.stack([np.stack([ndi.correlate(x[b, ..., c].astype("float64"), k2,
                                             mode="constant", origin=origin)
                               for c in range(3)], -1)
                     for b in range(2)]).astype("float32")
    close(ops.image.gaussian_blur(x, ks, sg), want, 1e-5)
    close(ops.image.gaussian_blur(np.moveaxis(x[0], -1, 0), ks, sg,
                                  data_format="channels_first"),
          np.moveaxis(want[0], -1, 0), 1e-5)


def test_gaussian_blur_gradient_dtype_and_errors(rng, images):
    check_linear_grad(rng, lambda t: ops.image.gaussian_blur(t, (3, 3), (1.0, 0.5)),
                      (1, 4, 4, 2))
    assert ops.image.gaussian_blur(images.astype("bfloat16")).dtype == "bfloat16"
    raises(lambda: ops.image.gaussian_blur(images[0, 0]), "gaussian_blur", "rank")


def sobel_ref(img):
    return np.stack([ndi.sobel(img.astype("float64"), axis=a, mode="mirror") for a in (0, 1)],
                    -1)


def test_sobel_edges(rng, images):
    # tf.image.sobel_edges (reflect padding) is SciPy's sobel in "mirror" mode.
    x = images
    want = np.stack([np.stack([sobel_ref(x[b, ..., c]) for c in range(3)], 2)
                     for b in range(2)]).astype("float32")
    close(ops.image.sobel_edges(x), want, 1e-5)
    close(ops.image.sobel_edges(np.moveaxis(x, -1, 1), data_format="channels_first"),
          np.moveaxis(want, 3, 1), 1e-5)
    close(ops.image.sobel_edges(np.full((1, 5, 5, 1), 0.5, "float32")),
          np.zeros((1, 5, 5, 1, 2), "float32"))
    check_linear_grad(rng, lambda t: ops.image.sobel_edges(t), (1, 3, 4, 1))
    raises(lambda: ops.image.sobel_edges(x[0]), "sobel_edges", "rank 4")


def test_elastic_transform(images):
    # seeded draws repeat, alpha=0 is the identity, gradients flow.
    x = images
    a = n(ops.image.elastic_transform(x, seed=3))
    b = n(ops.image.elastic_transform(x, seed=3))
    np.testing.assert_array_equal(a, b)
    assert a.shape == x.shape and a.dtype == np.float32 and not np.allclose(a, x)
    close(ops.image.elastic_transform(x, alpha=0.0, seed=1), x, 1e-6)
    close(ops.image.elastic_transform(np.moveaxis(x, -1, 1), alpha=0.0,
                                      data_format="channels_first"),
          np.moveaxis(x, -1, 1), 1e-6)
    g = grad(lambda t: ops.sum(ops.image.elastic_transform(t, alpha=0.0, seed=1) * 2.0), x)
    np.testing.assert_allclose(g, np.full_like(x, 2.0))
    raises(lambda: ops.image.elastic_transform(x, interpolation="bicubic"), "elastic_transform")


def test_images_on_another_context_stay_there(images):
    # the constants follow the images
    xc = cnp.array(images, ctx=core.cpu(1))
    tc = cnp.array(np.array([1, 0.1, 0.5, 0, 1, 0.3, 0, 0], "float32"), ctx=core.cpu(1))
    for out in (ops.image.resize(xc, (5, 5)),
                ops.image.resize(xc, (5, 5), interpolation="nearest"),
                ops.image.affine_transform(xc, tc), ops.image.gaussian_blur(xc),
                ops.image.elastic_transform(xc, seed=1), ops.image.sobel_edges(xc),
                ops.image.resize(xc, (4, 8), pad_to_aspect_ratio=True)):
        assert out.context == core.cpu(1), out.context
