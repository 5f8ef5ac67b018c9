"""Error messages of the products and linear-algebra operators, and their dtype rules."""
import numpy as np
import pytest

from core import autograd, nd
from core import np as knp


def _m(*shape, dtype="float32"):
    return nd.array(np.arange(np.prod(shape)).reshape(shape) % 5 + np.eye(*shape[-2:]) * 7
                    if len(shape) >= 2 else np.arange(np.prod(shape)), dtype=dtype)


# ------------------------------------------------------------------ products
def test_matmul_inner_dimension_mismatch():
    with pytest.raises(ValueError, match=r"^matmul: a.shape\[-1\]=3 must equal b.shape\[-2\]=4 "
                                         r"\(a: \(2, 3\) float32, b: \(4, 5\) float32\)$"):
        nd.ones((2, 3)) @ nd.ones((4, 5))
    with pytest.raises(ValueError, match=r"matmul: a.shape\[-1\]=3 must equal b.shape\[0\]=4"):
        knp.matmul(nd.ones((2, 3)), nd.ones((4,)))


def test_matmul_transposed_mismatch_names_the_flag():
    with pytest.raises(ValueError, match=r"matmul: a.shape\[-2\]=2 must equal b.shape\[-2\]=4 "
                                         r".*transpose_a=True"):
        knp.matmul(nd.ones((2, 3)), nd.ones((4, 5)), transpose_a=True)


def test_matmul_batch_dimensions_must_broadcast():
    with pytest.raises(ValueError, match=r"matmul: batch dimensions \(2,\) and \(3,\) cannot be "
                                         r"broadcast together \(a: \(2, 2, 3\) float32"):
        knp.matmul(nd.ones((2, 2, 3)), nd.ones((3, 3, 4)))


def test_matmul_of_a_scalar():
    with pytest.raises(ValueError, match=r"matmul: a must have at least 1 dimension.*multiply"):
        knp.matmul(nd.array(2.0), nd.ones((2, 2)))


def test_dot_mismatch_mxnet_and_numpy():
    with pytest.raises(ValueError, match=r"dot: lhs.shape\[-1\]=3 must equal rhs.shape\[0\]=4 "
                                         r"\(lhs: \(2, 3\) float32, rhs: \(4, 5\) float32"):
        nd.dot(nd.ones((2, 3)), nd.ones((4, 5)))
    with pytest.raises(ValueError, match=r"dot: lhs.shape\[0\]=2 must equal rhs.shape\[0\]=4"):
        nd.dot(nd.ones((2, 3)), nd.ones((4, 5)), transpose_a=True)
    with pytest.raises(ValueError, match=r"dot: a.shape\[-1\]=3 must equal b.shape\[-2\]=4 "
                                         r"\(a: \(2, 3\) float32, b: \(2, 4, 5\) float32\)"):
        knp.dot(nd.ones((2, 3)), nd.ones((2, 4, 5)))
    with pytest.raises(ValueError, match=r"dot: cannot transpose vectors"):
        nd.dot(nd.ones((3,)), nd.ones((3,)), transpose_a=True)


def test_mxnet_vector_dot_has_shape_1_numpy_dot_is_0d():
    assert nd.dot(nd.ones((3,)), nd.ones((3,))).shape == (1,)
    assert knp.dot(nd.ones((3,)), nd.ones((3,))).shape == ()
    # N-d: MXNet contracts rhs's first axis, NumPy its second-to-last
    assert nd.dot(nd.ones((2, 3)), nd.ones((3, 4, 5))).shape == (2, 4, 5)
    assert knp.dot(nd.ones((2, 3)), nd.ones((4, 3, 5))).shape == (2, 4, 5)


def test_batch_dot_needs_3d_and_equal_batches():
    with pytest.raises(ValueError, match=r"batch_dot: lhs must have at least 3 dimensions"):
        nd.batch_dot(nd.ones((2, 3)), nd.ones((3, 4)))
    with pytest.raises(ValueError, match=r"batch_dot: lhs and rhs must have the same batch "
                                         r"dimensions, got \(2,\) and \(3,\)"):
        nd.batch_dot(nd.ones((2, 2, 3)), nd.ones((3, 3, 4)))


def test_gemm2_axis_and_shapes():
    with pytest.raises(ValueError, match=r"linalg_gemm2: axis=-1 must name the row axis"):
        nd.linalg.gemm2(nd.ones((2, 3)), nd.ones((3, 2)), axis=-1)
    with pytest.raises(ValueError, match=r"linalg_gemm2: A.shape\[-1\]=3 must equal "
                                         r"B.shape\[-2\]=2"):
        nd.linalg.gemm2(nd.ones((2, 3)), nd.ones((2, 2)))
    with pytest.raises(ValueError, match=r"linalg_gemm2: A and B must have the same batch "
                                         r"dimensions, got \(2,\) and \(1,\)"):
        nd.linalg.gemm2(nd.ones((2, 2, 3)), nd.ones((1, 3, 2)))


def test_tensordot_and_inner_mismatch():
    with pytest.raises(ValueError, match=r"tensordot: a.shape\[1\]=3 must equal "
                                         r"b.shape\[0\]=4"):
        knp.tensordot(nd.ones((2, 3)), nd.ones((4, 5)), axes=1)
    with pytest.raises(ValueError, match=r"inner: a.shape\[-1\]=3 must equal b.shape\[-1\]=4"):
        knp.inner(nd.ones((2, 3)), nd.ones((4,)))


@pytest.mark.parametrize("subscripts, shapes, pattern", [
    ("ij,jk->ik", [(2, 3)], r"name 2 operand\(s\) but 1 were given"),
    ("ij,jk->ik", [(2, 3), (4, 5)], r"subscript 'j' has size 3 in one operand and 4"),
    ("ijk", [(2, 3)], r"operand 0 has 2 dimension\(s\) .* its subscripts 'ijk' name 3"),
    ("...ij->ij", [(4, 2, 3)], r"the output needs '...'"),
    ("i1", [(2, 3)], r"invalid subscript 'i1'"),
    ("ij->k", [(2, 3)], r"output subscript 'k' .* does not appear"),
    ("ii->i", [(2, 3)], r"repeats subscript 'i' over dimensions of different sizes 2 and 3"),
])
def test_einsum_errors(subscripts, shapes, pattern):
    with pytest.raises(ValueError, match="einsum: .*" + pattern):
        knp.einsum(*[nd.ones(s) for s in shapes], subscripts=subscripts)


# ------------------------------------------------------------------ linalg
@pytest.mark.parametrize("fn, name", [(knp.linalg.inv, "linalg_inv"),
                                      (knp.linalg.det, "linalg_det"),
                                      (knp.linalg.slogdet, "linalg_slogdet"),
                                      (knp.linalg.cholesky, "linalg_cholesky"),
                                      (knp.linalg.eigh, "linalg_eigh"),
                                      (nd.linalg.inverse, "linalg_inv")])
def test_non_square_input(fn, name):
    with pytest.raises(ValueError, match=name + r": expects square matrices in the last two "
                                         r"dimensions, got shape \(2, 3\) \(a: \(2, 3\) float32\)"):
        fn(nd.ones((2, 3)))
    with pytest.raises(ValueError, match=name + r": expects square matrices .* shape \(3,\)"):
        fn(nd.ones((3,)))


def test_integer_inputs_follow_numpy():
    # numpy.linalg computes integer (and boolean) input in float64; so do we
    a = nd.array(np.array([[2, 1], [1, 3]]), dtype="int32")
    out = knp.linalg.inv(a)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.asnumpy(), np.linalg.inv(np.array([[2, 1], [1, 3]])))
    assert knp.linalg.det(a).dtype == np.float64
    assert knp.linalg.norm(a).dtype == np.float64
    # and integer matrix products stay integer, like NumPy's
    assert (a @ a).dtype == np.int32


def test_half_precision_is_refused_with_a_hint():
    with pytest.raises(TypeError, match=r"linalg_inv: float16 is not supported by linear algebra "
                                        r"\(a: \(2, 2\) float16\); cast to float32"):
        knp.linalg.inv(nd.ones((2, 2), dtype="float16"))


def test_singular_and_not_positive_definite():
    with pytest.raises(ValueError, match=r"linalg_inv: .*[Ss]ingular matrix"):
        knp.linalg.inv(nd.ones((3, 3)))
    with pytest.raises(ValueError, match=r"linalg_cholesky: .*positive"):
        knp.linalg.cholesky(-nd.array(np.eye(3)))


def test_solve_shape_errors():
    with pytest.raises(ValueError, match=r"linalg_solve: b.shape\[0\]=4 must equal "
                                         r"a.shape\[-1\]=3"):
        knp.linalg.solve(_m(3, 3), nd.ones((4,)))
    with pytest.raises(ValueError, match=r"linalg_solve: b.shape\[-2\]=4 must equal "
                                         r"a.shape\[-1\]=3"):
        knp.linalg.solve(_m(3, 3), nd.ones((4, 2)))


def test_norm_orders():
    with pytest.raises(ValueError, match=r"linalg_norm: invalid norm order 'fro' for vectors"):
        knp.linalg.norm(nd.ones((3,)), ord="fro")
    with pytest.raises(ValueError, match=r"linalg_norm: invalid norm order 3 for matrices"):
        knp.linalg.norm(nd.ones((3, 3)), ord=3)
    with pytest.raises(ValueError, match=r"linalg_norm: ord=2 with axis=None needs a 1-D or "
                                         r"2-D input"):
        knp.linalg.norm(nd.ones((2, 3, 4)), ord=2)
    with pytest.raises(ValueError, match=r"linalg_norm: axis=3 is out of range"):
        knp.linalg.norm(nd.ones((2, 3)), axis=3)


def test_qr_mode():
    with pytest.raises(ValueError, match=r"linalg_qr: mode must be 'reduced', 'complete' or "
                                         r"'r', got 'raw'"):
        knp.linalg.qr(nd.ones((3, 2)), mode="raw")


def test_svd_gradient_through_extra_columns_is_refused():
    x = np.random.default_rng(0).standard_normal((4, 2))
    a = nd.array(x, dtype="float64")
    a.attach_grad()
    with autograd.record():
        u, _, _ = knp.linalg.svd(a)  # full_matrices=True: U is 4 x 4
    with pytest.raises(ValueError, match=r"linalg_svd: the gradient through the last m - n "
                                         r"columns of U .* full_matrices=False"):
        u.backward(nd.ones((4, 4), dtype="float64"))
    # the singular values alone are fine with full_matrices=True
    with autograd.record():
        s = knp.linalg.svd(a)[1]
    s.backward(nd.ones((2,), dtype="float64"))
    u2, _, vh2 = np.linalg.svd(x, full_matrices=False)
    np.testing.assert_allclose(a.grad.asnumpy(), u2 @ vh2, rtol=1e-10, atol=1e-12)


def test_qr_complete_gradient_through_extra_columns_is_refused():
    a = nd.array(np.random.default_rng(1).standard_normal((4, 2)), dtype="float64")
    a.attach_grad()
    with autograd.record():
        q = knp.linalg.qr(a, mode="complete")[0]
    with pytest.raises(ValueError, match=r"linalg_qr: the gradient through the last m - n "
                                         r"columns of Q .* mode='reduced'"):
        q.backward(nd.ones((4, 4), dtype="float64"))
