"""gluon.compat.image: the ``mxnet.image`` functions d2l uses (decode, resize, crops)."""
import numpy
import pytest

from core import nd, random
from gluon.compat import image
from gluon.data.vision import transforms


def _png(tmp_path, array):
    Image = pytest.importorskip("PIL.Image")
    path = tmp_path / "img.png"
    Image.fromarray(array).save(path)
    return path


def test_imread_and_imdecode(tmp_path):
    rgb = numpy.random.default_rng(0).integers(0, 256, (5, 7, 3)).astype("uint8")
    path = _png(tmp_path, rgb)
    img = image.imread(str(path))
    assert img.dtype == numpy.uint8 and img.shape == (5, 7, 3)
    numpy.testing.assert_array_equal(img.asnumpy(), rgb)
    numpy.testing.assert_array_equal(image.imread(str(path), to_rgb=False).asnumpy(),
                                     rgb[..., ::-1])
    assert image.imread(str(path), flag=0).shape == (5, 7, 1)
    decoded = image.imdecode(path.read_bytes())
    numpy.testing.assert_array_equal(decoded.asnumpy(), rgb)
    numpy.testing.assert_array_equal(
        image.imdecode(nd.array(numpy.frombuffer(path.read_bytes(), "uint8"),
                                dtype="uint8")).asnumpy(), rgb)


def test_resize_and_crops():
    raw = numpy.arange(6 * 8 * 3).reshape(6, 8, 3).astype("uint8")
    img = nd.array(raw, dtype="uint8")
    out = image.imresize(img, 4, 3)
    assert out.shape == (3, 4, 3) and out.dtype == numpy.uint8
    numpy.testing.assert_array_equal(out.asnumpy(), transforms.Resize((4, 3))(raw))
    assert image.resize_short(img, 3).shape == (3, 4, 3)
    numpy.testing.assert_array_equal(image.fixed_crop(img, 2, 1, 3, 4).asnumpy(),
                                     raw[1:5, 2:5])
    assert image.fixed_crop(img, 0, 0, 4, 4, size=(2, 2)).shape == (2, 2, 3)
    with pytest.raises(ValueError, match="does not fit"):
        image.fixed_crop(img, 6, 0, 4, 4)
    crop, box = image.center_crop(img, (4, 2))
    assert box == (2, 2, 4, 2)
    numpy.testing.assert_array_equal(crop.asnumpy(), raw[2:4, 2:6])
    random.seed(3)
    first = image.random_crop(img, (4, 4))
    random.seed(3)
    second = image.random_crop(img, (4, 4))
    assert first[1] == second[1]
    x0, y0, w, h = first[1]
    numpy.testing.assert_array_equal(first[0].asnumpy(), raw[y0:y0 + h, x0:x0 + w])
    with pytest.raises(ValueError, match=r"expected an image of shape \(H, W, C\)"):
        image.imresize(nd.zeros((4, 4)), 2, 2)


def test_color_normalize():
    out = image.color_normalize(nd.ones((2, 2, 3)) * 4, nd.array([1, 2, 3]), nd.array([1, 2, 4]))
    numpy.testing.assert_allclose(out.asnumpy()[0, 0], [3, 1, 0.25])


def test_imrotate_and_random_rotate():
    x = numpy.arange(32, dtype="float32").reshape(2, 1, 4, 4)
    out = image.imrotate(nd.array(x), nd.array([90, 180]))
    numpy.testing.assert_allclose(out.asnumpy()[0], numpy.rot90(x[0], 1, (1, 2)), atol=1e-4)
    numpy.testing.assert_allclose(out.asnumpy()[1], x[1, :, ::-1, ::-1], atol=1e-4)
    with pytest.raises(ValueError, match="3 angles for 2 images"):
        image.imrotate(x, [1, 2, 3])
    with pytest.raises(TypeError, match="only float32"):
        image.imrotate(x.astype("uint8"), 10)
    random.seed(1)
    assert image.random_rotate(x, (-20, 20), zoom_in=True).shape == (2, 1, 4, 4)
