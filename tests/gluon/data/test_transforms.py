"""gluon.data.vision.transforms against NumPy references (OpenCV's resize formulas)."""
import math

import numpy as np
import pytest

import core
from core import NDArray, nd
from gluon.data import ArrayDataset, DataLoader
from gluon.data.vision import transforms as T
from gluon.data.vision.transforms import resize


def _img(h=6, w=5, c=3, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (h, w, c)).astype(dtype)


# ---------------------------------------------------------------------- references
def _ref_coords(n_in, n_out):
    scale = n_in / n_out
    for d in range(n_out):
        f = (d + 0.5) * scale - 0.5
        s = math.floor(f)
        yield d, s, f - s


def _ref_linear_1d(n_in, n_out):
    w = np.zeros((n_out, n_in))
    for d, s, f in _ref_coords(n_in, n_out):
        if s < 0:
            s, f = 0, 0.0
        if s >= n_in - 1:
            s, f = n_in - 1, 0.0
        w[d, s] += 1 - f
        w[d, min(s + 1, n_in - 1)] += f
    return w


def _ref_cubic_1d(n_in, n_out):
    def k(t, a=-0.75):
        t = abs(t)
        if t <= 1:
            return (a + 2) * t ** 3 - (a + 3) * t ** 2 + 1
        if t < 2:
            return a * t ** 3 - 5 * a * t ** 2 + 8 * a * t - 4 * a
        return 0.0

    w = np.zeros((n_out, n_in))
    for d, s, f in _ref_coords(n_in, n_out):
        for o in range(-1, 3):
            w[d, min(max(s + o, 0), n_in - 1)] += k(f - o)
    return w


def _ref_resize(img, width, height, w1d):
    wh, ww = w1d(img.shape[0], height), w1d(img.shape[1], width)
    out = np.zeros((height, width, img.shape[2]))
    for y in range(height):
        for x in range(width):
            out[y, x] = np.einsum("h,w,hwc->c", wh[y], ww[x], img.astype(np.float64))
    return out


# ---------------------------------------------------------------------- ToTensor, Normalize, Cast
def test_to_tensor_image_and_batch():
    img = _img()
    out = T.ToTensor()(img)
    assert out.shape == (3, 6, 5) and out.dtype == np.float32
    np.testing.assert_allclose(out, img.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    batch = np.stack([img, _img(seed=1)])
    out = T.ToTensor()(batch)
    assert out.shape == (2, 3, 6, 5)
    np.testing.assert_allclose(out, batch.transpose(0, 3, 1, 2) / 255.0, rtol=1e-6)
    # NDArray in, NDArray out
    nout = T.ToTensor()(nd.array(img, dtype=np.uint8))
    assert isinstance(nout, NDArray) and nout.dtype == np.float32
    np.testing.assert_allclose(nout.asnumpy(), img.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    with pytest.raises(ValueError, match=r"ToTensor: expected an image of shape \(H, W, C\)"):
        T.ToTensor()(np.zeros((4, 4)))


def test_normalize_per_channel_and_scalar():
    x = np.random.default_rng(0).random((3, 4, 2)).astype(np.float32)
    mean, std = (0.1, 0.2, 0.3), (0.5, 1.0, 2.0)
    ref = (x - np.array(mean).reshape(3, 1, 1)) / np.array(std).reshape(3, 1, 1)
    np.testing.assert_allclose(T.Normalize(mean, std)(x), ref, rtol=1e-6, atol=1e-6)
    out = T.Normalize(mean, std)(nd.array(x))
    assert isinstance(out, NDArray) and out.dtype == np.float32
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(T.Normalize(0.5, 0.25)(x), (x - 0.5) / 0.25, rtol=1e-6)
    batch = np.stack([x, x])
    np.testing.assert_allclose(T.Normalize(mean, std)(batch), np.stack([ref, ref]), rtol=1e-6,
                               atol=1e-6)


def test_normalize_errors():
    with pytest.raises(TypeError, match="apply ToTensor"):
        T.Normalize(0.5, 0.5)(np.zeros((3, 2, 2), np.uint8))
    with pytest.raises(ValueError, match="2 mean values for 3 channels"):
        T.Normalize((0.1, 0.2), 1.0)(np.zeros((3, 2, 2), np.float32))
    with pytest.raises(ValueError, match="non-zero"):
        T.Normalize(0.0, (1.0, 0.0))


def test_cast():
    assert T.Cast()(np.ones(2, np.uint8)).dtype == np.float32
    out = T.Cast("float16")(nd.array([1, 2], dtype="uint8"))
    assert isinstance(out, NDArray) and out.dtype == np.float16


# ---------------------------------------------------------------------- resize
def test_resize_output_sizes():
    img = _img(10, 20)
    assert T.Resize(8)(img).shape == (8, 8, 3)
    assert T.Resize((8, 4))(img).shape == (4, 8, 3)  # (width, height)
    assert T.Resize(5, keep_ratio=True)(img).shape == (5, 10, 3)  # shorter edge
    assert T.Resize(7, keep_ratio=True)(_img(20, 10)).shape == (14, 7, 3)
    assert T.Resize(3, keep_ratio=True)(_img(7, 10)).shape == (3, 4, 3)  # 10 * 3 // 7
    assert T.Resize((6, 6))(np.stack([img, img])).shape == (2, 6, 6, 3)


def test_resize_nearest_matches_the_reference():
    img = _img(7, 9)
    out = resize(img, 4, 12, interpolation=0)
    rows = [min(math.floor(d * 7 / 12), 6) for d in range(12)]
    cols = [min(math.floor(d * 9 / 4), 8) for d in range(4)]
    np.testing.assert_array_equal(out, img[rows][:, cols])
    assert out.dtype == np.uint8


@pytest.mark.parametrize("size", [(3, 4), (11, 13), (5, 6)])
@pytest.mark.parametrize("interp,w1d", [(1, _ref_linear_1d), (2, _ref_cubic_1d)])
def test_resize_bilinear_bicubic_match_the_reference(size, interp, w1d):
    img = _img(6, 5).astype(np.float32)
    out = resize(img, size[0], size[1], interpolation=interp)
    np.testing.assert_allclose(out, _ref_resize(img, size[0], size[1], w1d), rtol=1e-5,
                               atol=1e-4)


def test_resize_uint8_rounds_and_clips():
    img = _img(6, 5)
    out = resize(img, 11, 13, interpolation=2)  # bicubic overshoots
    ref = _ref_resize(img, 11, 13, _ref_cubic_1d)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, np.clip(np.rint(ref), 0, 255).astype(np.uint8))


def test_resize_area_downscale_is_a_box_average():
    img = np.arange(8 * 6 * 2, dtype=np.float32).reshape(8, 6, 2)
    out = resize(img, 3, 4, interpolation=3)
    ref = img.reshape(4, 2, 3, 2, 2).mean(axis=(1, 3))
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    # fractional factor: the weights of each output pixel still sum to one
    frac = resize(np.ones((7, 7, 1), np.float32), 3, 3, interpolation=3)
    np.testing.assert_allclose(frac, 1.0, rtol=1e-6)


@pytest.mark.parametrize("interp", [0, 1, 2, 3, 4])
def test_resize_keeps_constant_images_and_identity(interp):
    const = np.full((5, 7, 3), 77, np.uint8)
    for w, h in ((3, 2), (14, 10), (7, 5)):
        np.testing.assert_array_equal(resize(const, w, h, interp), np.full((h, w, 3), 77))
    img = _img()
    np.testing.assert_array_equal(resize(img, 5, 6, interp), img)


def test_resize_batch_equals_per_image_and_ndarray_path():
    a, b = _img(seed=1), _img(seed=2)
    out = T.Resize((4, 9))(np.stack([a, b]))
    np.testing.assert_array_equal(out[1], T.Resize((4, 9))(b))
    nout = T.Resize((4, 9))(nd.array(a, dtype=np.uint8))
    assert isinstance(nout, NDArray) and nout.dtype == np.uint8
    np.testing.assert_array_equal(nout.asnumpy(), T.Resize((4, 9))(a))


def test_resize_errors():
    with pytest.raises(ValueError, match="interpolation must be one of"):
        resize(_img(), 2, 2, interpolation=7)
    with pytest.raises(TypeError, match=r"size must be an int or a \(width, height\)"):
        T.Resize("big")(_img())


# ---------------------------------------------------------------------- crops
def test_center_crop():
    img = np.arange(6 * 8).reshape(6, 8, 1)
    np.testing.assert_array_equal(T.CenterCrop((4, 2))(img), img[2:4, 2:6])
    np.testing.assert_array_equal(T.CenterCrop(3)(img), img[1:4, 2:5])
    # larger than the image: the largest centred box of that aspect ratio, upsampled
    big = T.CenterCrop((16, 6))(img.astype(np.float32))
    assert big.shape == (6, 16, 1)
    np.testing.assert_allclose(big, resize(img[1:4].astype(np.float32), 16, 6, 1))


def test_crop_resize():
    img = _img(10, 12)
    np.testing.assert_array_equal(T.CropResize(2, 3, 4, 5)(img), img[3:8, 2:6])
    out = T.CropResize(2, 3, 4, 5, size=(8, 10), interpolation=0)(img)
    np.testing.assert_array_equal(out, np.repeat(np.repeat(img[3:8, 2:6], 2, 0), 2, 1))
    with pytest.raises(ValueError, match="does not fit"):
        T.CropResize(10, 0, 4, 4)(img)


def test_random_resized_crop():
    img = _img(20, 30)
    core.random.seed(4)
    a = T.RandomResizedCrop((8, 6))(img)
    core.random.seed(4)
    b = T.RandomResizedCrop((8, 6))(img)
    assert a.shape == (6, 8, 3) and a.dtype == np.uint8
    np.testing.assert_array_equal(a, b)
    # the whole image at aspect 1: a plain resize of a square image
    sq = _img(9, 9)
    np.testing.assert_array_equal(T.RandomResizedCrop(4, scale=(1.0, 1.0), ratio=(1.0, 1.0))(sq),
                                  resize(sq, 4, 4, 1))
    # an impossible aspect ratio falls back to the centre crop
    np.testing.assert_array_equal(
        T.RandomResizedCrop(3, scale=(1.0, 1.0), ratio=(50.0, 60.0))(sq), T.CenterCrop(3)(sq))
    out = T.RandomResizedCrop(5)(nd.array(img, dtype=np.uint8))
    assert isinstance(out, NDArray) and out.shape == (5, 5, 3)


# ---------------------------------------------------------------------- flips and colour
@pytest.mark.parametrize("cls,axis", [(T.RandomFlipLeftRight, 1), (T.RandomFlipTopBottom, 0)])
def test_random_flips(cls, axis):
    img = _img()
    core.random.seed(0)
    outs = [cls()(img) for _ in range(40)]
    flipped = [np.array_equal(o, np.flip(img, axis)) for o in outs]
    same = [np.array_equal(o, img) for o in outs]
    assert all(f or s for f, s in zip(flipped, same))
    assert 5 < sum(flipped) < 35
    nd_outs = [cls()(nd.array(img, dtype=np.uint8)).asnumpy() for _ in range(20)]
    assert any(np.array_equal(o, np.flip(img, axis)) for o in nd_outs)
    assert any(np.array_equal(o, img) for o in nd_outs)
    batch = np.stack([img, img])
    out = cls()(batch)
    assert np.array_equal(out, batch) or np.array_equal(out, np.flip(batch, axis + 1))


def _alpha(seed, lo, hi):
    core.random.seed(seed)
    return core.random.get_generator(core.cpu(0)).uniform(lo, hi)


def test_random_brightness_contrast_saturation_match_the_formulas():
    img = _img(4, 5)
    x = img.astype(np.float32)
    gray = x @ np.array([0.299, 0.587, 0.114], np.float32)

    a = _alpha(1, 0.5, 1.5)
    core.random.seed(1)
    out = T.RandomBrightness(0.5)(img)
    np.testing.assert_array_equal(out, np.clip(x * a, 0, 255).astype(np.uint8))

    a = _alpha(2, 0.7, 1.3)
    core.random.seed(2)
    out = T.RandomContrast(0.3)(img)
    ref = np.clip(x * a + (1 - a) * gray.mean(), 0, 255).astype(np.uint8)
    assert np.abs(out.astype(int) - ref.astype(int)).max() <= 1

    a = _alpha(3, 0.0, 2.0)
    core.random.seed(3)
    out = T.RandomSaturation(1.0)(img)
    ref = np.clip(x * a + (1 - a) * gray[..., None], 0, 255).astype(np.uint8)
    assert np.abs(out.astype(int) - ref.astype(int)).max() <= 1

    for t in (T.RandomBrightness(0), T.RandomContrast(0), T.RandomSaturation(0)):
        np.testing.assert_array_equal(t(img), img)
        assert isinstance(t(nd.array(img, dtype=np.uint8)), NDArray)
    with pytest.raises(ValueError, match="RGB"):
        T.RandomContrast(0.5)(np.zeros((2, 2, 4), np.uint8))


def test_random_hue_matches_colorsys():
    import colorsys

    x = np.random.default_rng(5).uniform(0, 255, (4, 3, 3)).astype(np.float32)
    x[0, 0] = (40, 40, 40)  # gray: unchanged
    a = _alpha(9, -0.3, 0.3)
    core.random.seed(9)
    out = T.RandomHue(0.3)(x)
    ref = np.empty_like(x)
    for idx in np.ndindex(x.shape[:2]):
        h, l, s = colorsys.rgb_to_hls(*(x[idx] / 255.0))
        ref[idx] = np.array(colorsys.hls_to_rgb((h + a) % 1.0, l, s)) * 255.0
    np.testing.assert_allclose(out, ref, atol=1e-3)
    np.testing.assert_array_equal(out[0, 0], x[0, 0])
    assert T.RandomHue(0.5)(_img()).dtype == np.uint8


def test_random_lighting_and_color_jitter():
    img = _img(3, 4)
    core.random.seed(2)
    w = core.random.get_generator(core.cpu(0)).normal(0.0, 0.1, 3)
    core.random.seed(2)
    out = T.RandomLighting(0.1)(img.astype(np.float32))
    eig = np.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                    [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                    [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]])
    np.testing.assert_allclose(out, img + eig @ w, rtol=1e-5)
    np.testing.assert_array_equal(T.RandomColorJitter()(img), img)
    x = img.astype(np.float32) + 1
    ratio = T.RandomColorJitter(brightness=0.5)(x) / x
    assert np.allclose(ratio, ratio.flat[0]) and 0.5 <= ratio.flat[0] <= 1.5
    core.random.seed(3)
    a = T.RandomColorJitter(0.4, 0.4, 0.4, 0.1)(img)
    core.random.seed(3)
    np.testing.assert_array_equal(T.RandomColorJitter(0.4, 0.4, 0.4, 0.1)(img), a)
    assert a.dtype == np.uint8 and a.shape == img.shape
    with pytest.raises(ValueError, match=">= 0"):
        T.RandomColorJitter(brightness=-1)


# ---------------------------------------------------------------------- composition
def test_compose_random_apply_and_block_api():
    t = T.Compose([T.Resize(4), T.ToTensor(), T.Normalize(0.5, 0.5)])
    t.hybridize()
    img = _img(8, 8)
    ref = (resize(img, 4, 4, 1).transpose(2, 0, 1).astype(np.float32) / 255 - 0.5) / 0.5
    np.testing.assert_allclose(t(img), ref, rtol=1e-6)
    np.testing.assert_allclose(t(nd.array(img, dtype=np.uint8)).asnumpy(), ref, rtol=1e-6)
    assert len(t) == 3 and isinstance(t[1], T.ToTensor) and t.forward(img).shape == (3, 4, 4)
    assert "Resize" in repr(t[0])
    np.testing.assert_array_equal(T.RandomApply([T.Cast("int32")], p=1.0)(img), img)
    assert T.RandomApply([T.Cast("int32")], p=1.0)(img).dtype == np.int32
    assert T.RandomApply([T.Cast("int32")], p=0.0)(img).dtype == np.uint8
    with pytest.raises(TypeError, match="callable"):
        T.Compose([1])


def test_transforms_in_dataloader_workers():
    imgs = np.stack([_img(8, 10, seed=i) for i in range(6)])
    ds = ArrayDataset(imgs, np.arange(6)).transform_first(
        T.Compose([T.Resize((5, 4)), T.ToTensor(), T.Normalize((0.5, 0.4, 0.3), 0.2)]))
    ref = list(DataLoader(ds, batch_size=4))
    got = list(DataLoader(ds, batch_size=4, num_workers=2))
    for (x0, y0), (x1, y1) in zip(ref, got):
        assert x0.shape == x1.shape and x1.dtype == np.float32
        np.testing.assert_array_equal(x0.asnumpy(), x1.asnumpy())
        np.testing.assert_array_equal(y0.asnumpy(), y1.asnumpy())
    assert ref[0][0].shape == (4, 3, 4, 5)
