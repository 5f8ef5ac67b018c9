"""The transforms MXNet 1.9/2.0 added to gluon.data.vision.transforms: RandomCrop (with
padding), Rotate, RandomRotation, RandomGray, HybridCompose, HybridRandomApply."""
import numpy
import pytest

from core import nd, np, random
from gluon.data.vision import transforms


def _img(shape, dtype="uint8", seed=0):
    rng = numpy.random.default_rng(seed)
    return rng.integers(0, 256, shape).astype(dtype)


def test_random_crop_is_a_window_of_the_padded_image():
    raw = _img((10, 12, 3))
    padded = numpy.pad(raw, ((2, 2), (2, 2), (0, 0)), constant_values=7)
    random.seed(0)
    for _ in range(10):
        out = transforms.RandomCrop((8, 6), pad=2, pad_value=7)(raw)
        assert out.shape == (6, 8, 3) and out.dtype == numpy.uint8
        windows = [padded[y:y + 6, x:x + 8] for y in range(9) for x in range(9)]
        assert any((out == w).all() for w in windows)
    tall = transforms.RandomCrop(4, pad=(1, 1, 0, 0))(raw)
    assert tall.shape == (4, 4, 3)
    nd_out = transforms.RandomCrop(5)(nd.array(raw, dtype="uint8"))
    assert nd_out.shape == (5, 5, 3) and nd_out.dtype == numpy.uint8
    assert transforms.RandomCrop(4)(_img((2, 10, 12, 3))).shape == (2, 4, 4, 3)


def test_random_crop_larger_than_image_resizes():
    raw = _img((4, 4, 3))
    out = transforms.RandomCrop((8, 6))(raw)
    numpy.testing.assert_array_equal(out, transforms.Resize((8, 6))(raw))
    with pytest.raises(ValueError, match="pad must be"):
        transforms.RandomCrop(4, pad=(1, 2))


@pytest.mark.parametrize("size", [3, 4])
def test_rotate_by_right_angles(size):
    x = numpy.arange(2 * size * size, dtype="float32").reshape(2, size, size)
    numpy.testing.assert_allclose(transforms.Rotate(90)(x), numpy.rot90(x, 1, (1, 2)),
                                  atol=1e-4)
    numpy.testing.assert_allclose(transforms.Rotate(180)(x), x[:, ::-1, ::-1], atol=1e-4)
    numpy.testing.assert_allclose(transforms.Rotate(0)(x), x)
    batch = numpy.stack([x, x])
    numpy.testing.assert_allclose(transforms.Rotate(-90)(batch),
                                  numpy.rot90(batch, -1, (2, 3)), atol=1e-4)
    out = transforms.Rotate(90)(np.array(x))
    numpy.testing.assert_allclose(out.asnumpy(), numpy.rot90(x, 1, (1, 2)), atol=1e-4)


def test_rotate_zoom_and_errors():
    ones = numpy.ones((1, 9, 9), "float32")
    plain = transforms.Rotate(45)(ones)
    assert plain[0, 0, 0] == 0 and plain[0, 4, 4] == pytest.approx(1)
    assert transforms.Rotate(45, zoom_out=True)(ones)[0, 0, 0] == 0
    zoomed = transforms.Rotate(45, zoom_in=True)(ones)
    assert float(zoomed.min()) > 0.5  # no padding shows (bilinear edges aside)
    assert float((zoomed == 0).sum()) == 0
    with pytest.raises(TypeError, match="only float32"):
        transforms.Rotate(10)(numpy.ones((1, 4, 4), "uint8"))
    with pytest.raises(ValueError, match="cannot both"):
        transforms.Rotate(10, zoom_in=True, zoom_out=True)


def test_random_rotation():
    x = numpy.arange(16, dtype="float32").reshape(1, 4, 4)
    near_90 = transforms.RandomRotation((89.999, 90.001))(x)
    numpy.testing.assert_allclose(near_90, numpy.rot90(x, 1, (1, 2)), atol=1e-2)
    assert transforms.RandomRotation((0, 30), rotate_with_proba=0.0)(x) is x
    random.seed(5)
    a = transforms.RandomRotation((-30, 30))(numpy.stack([x, x]))
    random.seed(5)
    b = transforms.RandomRotation((-30, 30))(numpy.stack([x, x]))
    numpy.testing.assert_array_equal(a, b)
    assert not numpy.allclose(a[0], a[1])  # each image its own angle
    with pytest.raises(ValueError, match="lower < upper"):
        transforms.RandomRotation((10, 10))


def test_random_gray():
    raw = _img((5, 6, 3))
    gray = transforms.RandomGray(p=1.0)(raw)
    expected = raw.astype("float32") @ numpy.array([0.2989, 0.587, 0.114], "float32")
    numpy.testing.assert_allclose(gray, numpy.repeat(expected[..., None], 3, -1), rtol=1e-6)
    kept = transforms.RandomGray(p=0.0)(raw)
    assert kept.dtype == numpy.float32 and (kept == raw).all()
    with pytest.raises(ValueError, match="RGB"):
        transforms.RandomGray()(_img((5, 6, 1)))


def test_hybrid_compose_and_random_apply():
    t = transforms.HybridCompose([transforms.Resize(4), transforms.ToTensor()])
    assert t(_img((8, 8, 3))).shape == (3, 4, 4)
    with pytest.raises(ValueError, match="not a transform block"):
        transforms.HybridCompose([lambda x: x])
    cast = transforms.Cast("float16")
    assert transforms.HybridRandomApply(cast, p=1.0)(_img((2, 2, 3))).dtype == numpy.float16
    assert transforms.HybridRandomApply(cast, p=0.0)(_img((2, 2, 3))).dtype == numpy.uint8
    assert transforms.RandomApply(cast, p=1.0)(_img((2, 2, 3))).dtype == numpy.float16
