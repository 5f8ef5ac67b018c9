"""core.sparse.ops: values against NumPy/scipy, output storage types as MXNet 1.9.1
gives them, and gradients (finite differences) through sparse inputs."""
import numpy as np
import pytest
import scipy.sparse as spsp

from core import autograd, nd


def _dense(rng, shape, density=0.5):
    x = rng.standard_normal(shape)
    x[rng.random(shape) > density] = 0
    return x.astype(np.float32)


@pytest.fixture
def rng():
    return np.random.default_rng(1)


@pytest.mark.parametrize("name,ls,rs,want", [
    ("elemwise_add", "row_sparse", "row_sparse", "row_sparse"),
    ("elemwise_add", "csr", "csr", "csr"),
    ("elemwise_add", "row_sparse", "default", "default"),
    ("elemwise_sub", "row_sparse", "row_sparse", "row_sparse"),
    ("elemwise_mul", "row_sparse", "default", "row_sparse"),
    ("elemwise_mul", "default", "csr", "csr"),
    ("elemwise_mul", "csr", "csr", "csr"),
    ("elemwise_div", "row_sparse", "row_sparse", "default"),
])
def test_elemwise_storage_and_values(rng, name, ls, rs, want):
    x, y = _dense(rng, (5, 4)), _dense(rng, (5, 4)) + (name == "elemwise_div") * 3
    a, b = nd.array(x).tostype(ls), nd.array(y).tostype(rs)
    out = getattr(nd, name)(a, b)
    assert out.stype == want
    ref = {"elemwise_add": np.add, "elemwise_sub": np.subtract, "elemwise_mul": np.multiply,
           "elemwise_div": np.divide}[name](x, y)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-6)
    if want != "default":
        out.check_format()


def test_rsp_add_keeps_union_of_rows():
    a = nd.sparse.row_sparse_array(([[1.0, 1.0]], [0]), shape=(4, 2))
    b = nd.sparse.row_sparse_array(([[-1.0, -1.0], [2.0, 2.0]], [0, 2]), shape=(4, 2))
    c = a + b
    assert c.indices.asnumpy().tolist() == [0, 2]  # row 0 is zero but stored (MXNet)
    np.testing.assert_array_equal(c.asnumpy(), [[0, 0], [0, 0], [2, 2], [0, 0]])


def test_scalar_and_broadcast_rules(rng):
    x = _dense(rng, (4, 3))
    a = nd.array(x).tostype("csr")
    assert (a * 2).stype == "csr" and (a / 2).stype == "csr" and (2 * a).stype == "csr"
    assert (a + 1).stype == "default" and (-a).stype == "csr"
    np.testing.assert_allclose((a * 2).asnumpy(), x * 2)
    v = rng.standard_normal((1, 3)).astype(np.float32)
    m = nd.broadcast_mul(a, nd.array(v))
    assert m.stype == "csr"
    np.testing.assert_allclose(m.asnumpy(), x * v, rtol=1e-6)
    np.testing.assert_allclose(nd.broadcast_add(a, nd.array(v)).asnumpy(), x + v, rtol=1e-6)


@pytest.mark.parametrize("ta,rs,want", [(False, "default", "default"),
                                        (True, "default", "row_sparse"),
                                        (False, "row_sparse", "default"),
                                        (True, "row_sparse", "row_sparse")])
def test_dot_csr(rng, ta, rs, want):
    x = _dense(rng, (6, 5))
    w = rng.standard_normal((6 if ta else 5, 3)).astype(np.float32)
    a = nd.array(x).tostype("csr")
    out = nd.dot(a, nd.array(w).tostype(rs), transpose_a=ta)
    assert out.stype == want
    ref = (spsp.csr_matrix(x).T if ta else spsp.csr_matrix(x)) @ w
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5, atol=1e-6)
    if want == "row_sparse":
        np.testing.assert_array_equal(out.indices.asnumpy(), np.unique(np.nonzero(x)[1]))


def test_dot_dense_csr_and_forward_stype(rng):
    x, y = _dense(rng, (3, 4)), _dense(rng, (4, 5))
    c = nd.array(y).tostype("csr")
    out = nd.dot(nd.array(x), c)
    assert out.stype == "csr"
    np.testing.assert_allclose(out.asnumpy(), x @ y, rtol=1e-5, atol=1e-6)
    assert nd.dot(nd.array(x), c, forward_stype="default").stype == "default"
    assert nd.sparse.dot(nd.array(x), nd.array(y)).stype == "default"


def test_retain_add_n_square_sum_where(rng):
    x = _dense(rng, (6, 2), density=0.9)
    a = nd.array(x).tostype("row_sparse")
    r = nd.sparse.retain(a, nd.array([4, 1, 0]))
    keep = np.zeros_like(x)
    keep[[0, 1, 4]] = x[[0, 1, 4]]
    np.testing.assert_array_equal(r.asnumpy(), keep)
    r.check_format()
    s = nd.add_n(a, a, a)
    assert s.stype == "row_sparse"
    np.testing.assert_allclose(s.asnumpy(), 3 * x, rtol=1e-6)
    assert nd.add_n(a, nd.array(x)).stype == "default"
    q = nd._internal._square_sum(a, axis=1, keepdims=True)
    assert q.stype == "row_sparse"
    np.testing.assert_allclose(q.asnumpy(), (x * x).sum(1, keepdims=True), rtol=1e-5)
    cond = nd.array(_dense(rng, (6, 2))).tostype("csr")
    w = nd.where(cond, nd.ones((6, 2)), nd.zeros((6, 2)))
    np.testing.assert_array_equal(w.asnumpy(), (cond.asnumpy() != 0).astype(np.float32))


def test_unary_keeps_storage(rng):
    x = _dense(rng, (4, 3))
    a = nd.array(x).tostype("row_sparse")
    for name, ref in (("abs", np.abs), ("square", np.square), ("sign", np.sign)):
        out = getattr(nd, name)(a)
        assert out.stype == "row_sparse"
        np.testing.assert_allclose(out.asnumpy(), ref(x), rtol=1e-6)
    assert abs(a).stype == "row_sparse" and a.square().stype == "row_sparse"
    assert a.abs().stype == "row_sparse"
    assert nd.sigmoid(a).stype == "default"
    assert nd.zeros_like(a).stype == "row_sparse"


@pytest.mark.parametrize("stype", ["row_sparse", "csr"])
def test_gradients_through_sparse_inputs(rng, stype):
    x = rng.standard_normal((3, 4))
    a = nd.array(x, dtype="float64").tostype(stype)
    a.attach_grad()
    with autograd.record():
        y = (a * a + nd.exp(a) * 2).sum()
    y.backward()
    assert a.grad.stype == stype
    np.testing.assert_allclose(a.grad.asnumpy(), 2 * x + 2 * np.exp(x), rtol=1e-6)


def test_sparse_dot_gradient_is_row_sparse(rng):
    x = _dense(rng, (2, 8))
    lhs = nd.array(x, dtype="float64").tostype("csr")
    w = nd.ones((8, 3), dtype="float64")
    w.attach_grad(stype="row_sparse")
    with autograd.record():
        y = nd.dot(lhs, w)
    y.backward()
    assert w.grad.stype == "row_sparse"
    np.testing.assert_allclose(w.grad.asnumpy(), x.T @ np.ones((2, 3)))
    # finite differences of sum(dot(lhs, w)) in w
    eps = 1e-6
    base = (x @ np.ones((8, 3))).sum()
    w2 = np.ones((8, 3))
    w2[3, 1] += eps
    assert abs(((x @ w2).sum() - base) / eps - w.grad.asnumpy()[3, 1]) < 1e-4


def test_grad_stype_of_attach_grad():
    for st in ("default", "row_sparse", "csr"):
        x = nd.zeros((2, 2), stype=st)
        x.attach_grad()
        assert x.grad.stype == st
        for gst in ("default", "row_sparse", "csr"):
            x.attach_grad(stype=gst)
            assert x.grad.stype == gst
        assert x.detach().stype == st


def test_scalar_comparisons_keep_storage_when_false_at_zero():
    a = nd.array([[0, 1], [2, 0]]).tostype("csr")
    z = a == 1
    assert z.stype == "csr" and z.asnumpy().tolist() == [[0, 1], [0, 0]]
    assert (1 == a).stype == "csr" and (a > 0).stype == "csr"
    assert (a == 0).stype == "default" and (a <= 1).stype == "default"
    np.testing.assert_array_equal((a < 2).asnumpy(), [[1, 1], [0, 1]])
    assert (a == a.copy()).stype == "default"


def test_take_getnnz_out_and_nd_array_of_sparse(rng):
    x = _dense(rng, (5, 4))
    a = nd.array(x).tostype("csr")
    t = nd.take(a, nd.array([4, 0, 4]))
    assert t.stype == "csr"
    np.testing.assert_array_equal(t.asnumpy(), x[[4, 0, 4]])
    s = spsp.csr_matrix(x)
    for axis in (None, 0, 1):
        np.testing.assert_array_equal(nd.contrib.getnnz(a, axis=axis).asnumpy(),
                                      np.atleast_1d(s.getnnz(axis=axis)))
    out = nd.zeros((5, 4), stype="csr")
    nd.broadcast_add(nd.ones((5, 4)), nd.ones((5, 4)), out=out)
    assert out.stype == "csr" and (out.asnumpy() == 2).all()
    b = nd.array(s)
    assert b.stype == "csr" and nd.array(a).stype == "csr"
    from core.ops.dispatch import MXNetError

    with pytest.raises(MXNetError, match="unexpected argument"):
        nd.sparse.retain(nd.ones((2, 2)).tostype("row_sparse"), [0], invalid_arg=1)
    with pytest.raises(MXNetError, match="RowSparseNDArray"):
        nd.sparse.retain(nd.ones((2, 2)), [0])


def test_sparse_embedding_gradient_is_row_sparse():
    from core import sym

    w = nd.array(np.arange(40, dtype=np.float32).reshape(10, 4)).tostype("row_sparse")
    w.attach_grad()
    with autograd.record():
        y = nd.contrib.SparseEmbedding(nd.array([1, 3, 1]), w, input_dim=10, output_dim=4)
    y.backward()
    np.testing.assert_array_equal(y.asnumpy(), w.asnumpy()[[1, 3, 1]])
    assert w.grad.stype == "row_sparse" and w.grad.indices.asnumpy().tolist() == [1, 3]
    np.testing.assert_array_equal(w.grad.asnumpy()[1], [2, 2, 2, 2])
    e = sym.contrib.SparseEmbedding(sym.var("d"), sym.var("w", stype="row_sparse"),
                                    input_dim=10, output_dim=4, name="embed")
    assert e.infer_shape(d=(2, 3))[1] == [(2, 3, 4)]
