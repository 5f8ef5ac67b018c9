"""core.sparse's arrays: layouts, conversions, copies, writes and format checks, checked
against scipy.sparse and NumPy."""
import numpy as np
import pytest
import scipy.sparse as spsp

import core
from core import nd
from core.sparse import CSRNDArray, NotSupportedForSparseNDArray, RowSparseNDArray


def _dense(rng, shape, density=0.4):
    x = rng.standard_normal(shape).astype(np.float32)
    x[rng.random(shape) > density] = 0
    return x


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def test_rsp_from_dense_keeps_nonzero_rows(rng):
    x = _dense(rng, (6, 3))
    x[[1, 4]] = 0
    a = nd.array(x).tostype("row_sparse")
    assert isinstance(a, RowSparseNDArray) and a.stype == "row_sparse"
    want = np.flatnonzero(np.abs(x).sum(axis=1))
    np.testing.assert_array_equal(a.indices.asnumpy(), want)
    assert a.indices.dtype == np.int64
    np.testing.assert_array_equal(a.data.asnumpy(), x[want])
    np.testing.assert_array_equal(a.asnumpy(), x)
    a.check_format(full_check=True)


def test_csr_matches_scipy(rng):
    x = _dense(rng, (5, 7))
    a = nd.array(x).tostype("csr")
    s = spsp.csr_matrix(x)
    assert isinstance(a, CSRNDArray)
    np.testing.assert_array_equal(a.indptr.asnumpy(), s.indptr)
    np.testing.assert_array_equal(a.indices.asnumpy(), s.indices)
    np.testing.assert_array_equal(a.data.asnumpy(), s.data)
    np.testing.assert_array_equal(a.asscipy().toarray(), x)
    a.check_format()


def test_constructors_all_forms(rng):
    x = _dense(rng, (4, 5))
    s = spsp.csr_matrix(x)
    forms = [nd.sparse.csr_matrix((s.data, s.indices, s.indptr), shape=(4, 5)),
             nd.sparse.csr_matrix(s), nd.sparse.csr_matrix(x), nd.sparse.csr_matrix(nd.array(x)),
             nd.sparse.array(s), nd.sparse.csr_matrix((s.tocoo().data, (s.tocoo().row,
                                                                          s.tocoo().col)),
                                                      shape=(4, 5))]
    for f in forms:
        np.testing.assert_allclose(f.asnumpy(), x)
    z = nd.sparse.csr_matrix((3, 4))
    assert z.shape == (3, 4) and z.data.shape == (0,)
    r = nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [0, 3]), shape=(5, 2))
    np.testing.assert_array_equal(r.asnumpy()[[0, 3]], [[1, 2], [3, 4]])
    assert nd.sparse.row_sparse_array((4, 2)).shape == (4, 2)
    assert nd.sparse.row_sparse_array(([[1.0]], [2])).shape == (3, 1)  # inferred
    assert nd.zeros((2, 3), stype="row_sparse").stype == "row_sparse"
    assert nd.sparse.zeros("csr", (2, 3), dtype="float64").dtype == np.float64
    assert nd.sparse.empty("default", (2, 2)).stype == "default"


def test_constructor_errors():
    with pytest.raises(ValueError, match="indptr has 3 entries"):
        nd.sparse.csr_matrix(([1.0], [0], [0, 1, 1]), shape=(3, 3))
    with pytest.raises(ValueError, match="1 indices"):
        nd.sparse.row_sparse_array(([[1.0], [2.0]], [0]), shape=(3, 1))
    with pytest.raises(ValueError, match="unknown storage type"):
        nd.sparse.zeros("coo", (2, 2))
    with pytest.raises(ValueError, match="csr to row_sparse"):
        nd.zeros((2, 2), stype="csr").tostype("row_sparse")
    with pytest.raises(ValueError, match="csr.*2-D"):
        nd.ones((2, 2, 2)).tostype("csr")
    with pytest.raises(ValueError, match="use `tostype`"):
        nd.sparse.array(nd.ones((2, 2)))


def test_check_format_errors():
    a = nd.sparse.csr_matrix(([1.0, 2.0], [2, 1], [0, 2, 2]), shape=(2, 3))
    with pytest.raises(ValueError, match="row 0 must be sorted"):
        a.check_format()
    a.check_format(full_check=False)
    b = nd.sparse.csr_matrix(([1.0], [5], [0, 1, 1]), shape=(2, 3))
    with pytest.raises(ValueError, match=r"column indices must lie in \[0, 3\)"):
        b.check_format()
    r = nd.sparse.row_sparse_array(([[1.0], [2.0]], [3, 1]), shape=(4, 1))
    with pytest.raises(ValueError, match="sorted and unique"):
        r.check_format()


def test_copies_contexts_casts(rng):
    x = _dense(rng, (4, 3))
    a = nd.array(x).tostype("row_sparse")
    b = a.copyto(core.cpu(1))
    assert b.stype == "row_sparse" and b.context == core.cpu(1)
    np.testing.assert_array_equal(b.asnumpy(), x)
    assert a.as_in_context(core.cpu(0)) is a
    c = a.astype("float64")
    assert c.dtype == np.float64 and c.stype == "row_sparse"
    d = nd.zeros((4, 3))
    a.copyto(d)
    np.testing.assert_array_equal(d.asnumpy(), x)
    e = nd.sparse.zeros("row_sparse", (4, 3))
    a.copyto(e)
    np.testing.assert_array_equal(e.asnumpy(), x)
    with pytest.raises(TypeError, match="csr"):
        a.copyto(nd.sparse.zeros("csr", (4, 3)))
    assert a.copy().stype == "row_sparse" and a.detach().stype == "row_sparse"
    assert a.tostype("default").stype == "default"


def test_writes_drop_the_cached_dense_value(rng):
    a = nd.array(_dense(rng, (3, 2))).tostype("row_sparse")
    _ = a.asnumpy()  # cache the dense value
    a[:] = nd.ones((3, 2)) * 3
    np.testing.assert_array_equal(a.asnumpy(), np.full((3, 2), 3))
    a += nd.ones((3, 2)).tostype("row_sparse")
    np.testing.assert_array_equal(a.asnumpy(), np.full((3, 2), 4))
    a *= 0.5
    np.testing.assert_array_equal(a.asnumpy(), np.full((3, 2), 2))
    assert a.stype == "row_sparse"
    a[:] = 0
    assert a.data.shape == (0, 2)
    with pytest.raises(TypeError, match=r"only supports \[:\]"):
        a[1] = 2
    c = nd.zeros((2, 2), stype="csr")
    with pytest.raises(ValueError, match="numeric"):
        c[:] = 1


def test_csr_slicing(rng):
    x = _dense(rng, (6, 4))
    a = nd.array(x).tostype("csr")
    for key in (slice(1, 3), slice(2, None), slice(None, 4), 0, -1, 3):
        got = a[key]
        want = x[key] if isinstance(key, slice) else x[key:key + 1 if key != -1 else None]
        assert got.stype == "csr"
        np.testing.assert_array_equal(got.asnumpy(), want)
        got.check_format()
    assert a[:] is a
    with pytest.raises(ValueError, match="continuous"):
        a[::2]
    np.testing.assert_array_equal(nd.slice(a, begin=(1,), end=(4,)).asnumpy(), x[1:4])


def test_refused_methods():
    a = nd.zeros((2, 2), stype="row_sparse")
    with pytest.raises(NotSupportedForSparseNDArray):
        a.reshape((4,))
    assert "RowSparseNDArray 2x2" in repr(a)


def test_dense_fallback_is_dense(rng):
    x = _dense(rng, (3, 4))
    a = nd.array(x).tostype("csr")
    y = nd.exp(a)
    assert y.stype == "default"
    np.testing.assert_allclose(y.asnumpy(), np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(nd.sum(a, axis=1).asnumpy(), x.sum(axis=1), rtol=1e-5)


def test_pickle_roundtrip(rng):
    import pickle

    a = nd.array(_dense(rng, (3, 2))).tostype("row_sparse")
    b = pickle.loads(pickle.dumps(a))
    assert b.stype == "row_sparse"
    np.testing.assert_array_equal(b.asnumpy(), a.asnumpy())
