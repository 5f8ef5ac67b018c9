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


# ---------------------------------------------------------------- file helpers (no network)
def test_check_sha1_and_replace_file(tmp_path):
    from gluon.utils import check_sha1, replace_file
    src = tmp_path / "a.tmp"
    src.write_bytes(b"abc")
    assert check_sha1(str(src), "A9993E364706816ABA3E25717850C26C9CD0D89D")
    assert not check_sha1(str(src), "0" * 40)
    dst = tmp_path / "a"
    dst.write_bytes(b"old")
    replace_file(str(src), str(dst))
    assert dst.read_bytes() == b"abc" and not src.exists()
    src.write_bytes(b"x")
    with pytest.raises(OSError, match="replace_file: moving"):
        replace_file(str(src), str(tmp_path / "missing_dir" / "b"))
    assert not src.exists()  # removed on failure, as in MXNet


def test_download_returns_existing_file_and_never_fetches(tmp_path, monkeypatch):
    from gluon.utils import NoNetworkError, download
    url = "https://example.com/gluon/dataset/train.rec"
    with pytest.raises(NoNetworkError, match=f"put the file at {tmp_path}/train.rec"):
        download(url, path=str(tmp_path))
    (tmp_path / "train.rec").write_bytes(b"abc")
    assert download(url, path=str(tmp_path)) == str(tmp_path / "train.rec")
    # a file path, and the current folder when path is None
    assert download(url, path=str(tmp_path / "train.rec")) == str(tmp_path / "train.rec")
    monkeypatch.chdir(tmp_path)
    assert download(url) == "train.rec"
    # the hash must match when given
    sha = "a9993e364706816aba3e25717850c26c9cd0d89d"
    assert download(url, sha1_hash=sha) == "train.rec"
    with pytest.raises(NoNetworkError, match="SHA-1 is not 0000"):
        download(url, sha1_hash="0" * 40)
    with pytest.raises(NoNetworkError, match="without overwrite=True"):
        download(url, overwrite=True)
    with pytest.raises(ValueError, match="cannot construct a file name"):
        download("https://example.com/dir/")
    with pytest.raises(ValueError, match="retries"):
        download(url, retries=-1)


def test_repo_urls(monkeypatch):
    from gluon.utils import _get_repo_file_url, _get_repo_url
    monkeypatch.delenv("MXNET_GLUON_REPO", raising=False)
    assert _get_repo_url() == "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/"
    monkeypatch.setenv("MXNET_GLUON_REPO", "http://mirror/x")
    assert _get_repo_file_url("gluon/models", "a.zip") == "http://mirror/x/gluon/models/a.zip"


def test_split_and_load_csr_keeps_storage():
    from core.nd import sparse
    dense = numpy.arange(12, dtype=numpy.float32).reshape(4, 3) % 3
    x = nd.array(dense).tostype("csr")
    parts = split_and_load(x, [cpu(0), cpu(1)])
    assert [p.stype for p in parts] == ["csr", "csr"]
    assert isinstance(parts[0], sparse.CSRNDArray) and parts[1].context == cpu(1)
    numpy.testing.assert_array_equal(numpy.concatenate([p.asnumpy() for p in parts]), dense)
    uneven = split_and_load(nd.array(dense[:3]).tostype("csr"), [cpu(0), cpu(1)],
                            even_split=False)
    assert [p.shape for p in uneven] == [(2, 3), (1, 3)]
    with pytest.raises(ValueError, match="cannot be evenly split"):
        split_and_load(nd.array(dense[:3]).tostype("csr"), [cpu(0), cpu(1)])
    with pytest.raises(ValueError, match="axis 0 only"):
        split_and_load(x, [cpu(0), cpu(1)], batch_axis=1)
