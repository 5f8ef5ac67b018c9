"""gluon.utils: split_data, split_and_load, clip_global_norm."""
import math

import numpy
import pytest

from core import cpu, nd
from gluon.utils import clip_global_norm, shape_is_known, split_and_load, split_data


def test_split_data_even_and_uneven():
    x = nd.arange(20).reshape(10, 2)
    parts = split_data(x, 5)
    assert [p.shape for p in parts] == [(2, 2)] * 5
    numpy.testing.assert_array_equal(numpy.concatenate([p.asnumpy() for p in parts]),
                                     x.asnumpy())
    parts = split_data(x, 3, even_split=False)
    assert [p.shape[0] for p in parts] == [4, 3, 3]
    numpy.testing.assert_array_equal(numpy.concatenate([p.asnumpy() for p in parts]),
                                     x.asnumpy())
    with pytest.raises(ValueError, match=r"\(10, 2\) cannot be evenly split into 3.*even_split"):
        split_data(x, 3)
    with pytest.raises(ValueError, match="Too many slices"):
        split_data(x, 11, even_split=False)


def test_split_data_other_axis():
    x = nd.arange(24).reshape(2, 6, 2)
    parts = split_data(x, 3, batch_axis=1)
    assert [p.shape for p in parts] == [(2, 2, 2)] * 3
    numpy.testing.assert_array_equal(parts[1].asnumpy(), x.asnumpy()[:, 2:4])
    parts = split_data(x, 2, batch_axis=-1)
    assert [p.shape for p in parts] == [(2, 6, 1)] * 2
    with pytest.raises(ValueError, match="batch_axis=3"):
        split_data(x, 2, batch_axis=3)


@pytest.mark.multi_device
def test_split_and_load_contexts():
    ctxs = [cpu(0), cpu(1), cpu(2)]
    data = numpy.arange(18, dtype=numpy.float64).reshape(6, 3)
    parts = split_and_load(data, ctxs)
    assert [p.context for p in parts] == ctxs
    assert [p.shape for p in parts] == [(2, 3)] * 3
    assert parts[0].dtype == numpy.float32  # nd.array's default, as in MXNet
    numpy.testing.assert_array_equal(parts[2].asnumpy(), data[4:])
    nd_parts = split_and_load(nd.array(data, ctx=cpu(1)), ctxs[:2], even_split=False)
    assert [p.context for p in nd_parts] == ctxs[:2]
    single = split_and_load(nd.ones((5, 2)), [cpu(2)])
    assert len(single) == 1 and single[0].context == cpu(2) and single[0].shape == (5, 2)
    uneven = split_and_load(numpy.ones((5, 2)), ctxs[:2], even_split=False)
    assert [p.shape[0] for p in uneven] == [3, 2]
    with pytest.raises(ValueError, match="evenly split"):
        split_and_load(numpy.ones((5, 2)), ctxs[:2])


@pytest.mark.multi_device
def test_clip_global_norm():
    a = nd.array([3.0, 0.0], ctx=cpu(0))
    b = nd.array([[4.0]], ctx=cpu(1))
    norm = clip_global_norm([a, b], 1.0)
    assert isinstance(norm, float) and math.isclose(norm, 5.0, rel_tol=1e-6)
    numpy.testing.assert_allclose(a.asnumpy(), [0.6, 0.0], rtol=1e-6)
    numpy.testing.assert_allclose(b.asnumpy(), [[0.8]], rtol=1e-6)
    # below the limit: unchanged
    c = nd.array([0.3, 0.4])
    assert math.isclose(clip_global_norm([c], 10.0), 0.5, rel_tol=1e-6)
    numpy.testing.assert_allclose(c.asnumpy(), [0.3, 0.4], rtol=1e-6)
    # no synchronization: the norm stays an NDArray
    d = nd.array([6.0, 8.0], dtype="float16")
    n = clip_global_norm([d], 5.0, check_isfinite=False)
    assert n.shape == (1,) and d.dtype == numpy.float16
    numpy.testing.assert_allclose(d.asnumpy(), [3.0, 4.0], rtol=1e-3)


def test_clip_global_norm_warns_on_nan():
    a = nd.array([float("nan"), 1.0])
    with pytest.warns(UserWarning, match="nan or inf"):
        norm = clip_global_norm([a], 1.0)
    assert math.isnan(norm)
    with pytest.raises(ValueError, match="empty"):
        clip_global_norm([], 1.0)


def test_shape_is_known():
    assert shape_is_known((2, 3)) and not shape_is_known((2, 0))
    assert not shape_is_known((-1,)) and not shape_is_known(None)
