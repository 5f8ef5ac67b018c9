"""kbackend math, linalg and the further numpy functions through keras.ops, against
NumPy/SciPy references (one subprocess per test)."""
from __future__ import annotations

from .conftest import check, run_python

MATH = r'''
import numpy as np, keras
from keras import ops
import scipy.special as sp
n = ops.convert_to_numpy
rng = np.random.default_rng(0)
def close(g, w, tol=1e-5):
    np.testing.assert_allclose(n(g), w, rtol=tol, atol=tol)
    assert n(g).dtype == np.asarray(w).dtype, (n(g).dtype, np.asarray(w).dtype)
d = rng.standard_normal((5, 3)).astype("float32")
ids = np.array([0, 2, 0, -1, 2])
want = np.zeros((4, 3), "float32"); np.add.at(want, ids[ids >= 0], d[ids >= 0])
close(ops.segment_sum(d, ids, num_segments=4), want)
close(ops.segment_sum(d, np.array([0, 0, 1, 1, 1])), np.stack([d[:2].sum(0), d[2:].sum(0)]))
want = np.full((3, 3), -np.inf, "float32"); np.maximum.at(want, ids[ids >= 0], d[ids >= 0])
close(ops.segment_max(d, ids, num_segments=3), want)
vi = np.array([[3, 1, 2], [0, 5, 4]], "int32")
close(ops.segment_max(vi, np.array([1, 1])), np.array([[np.iinfo("int32").min]*3, [3, 5, 4]], "int32"))
x = rng.standard_normal((3, 6)).astype("float32")
v, i = ops.top_k(x, 2)
close(v, -np.sort(-x, -1)[:, :2]); close(i, np.argsort(-x, -1)[:, :2].astype("int32"))
assert n(ops.in_top_k(np.array([0, 1, 2]), x, 2)).tolist() == [bool(np.argsort(-x[r])[:2].__contains__(r)) for r in range(3)]
close(ops.logsumexp(x, axis=1), sp.logsumexp(x, axis=1).astype("float32"))
close(ops.logsumexp(x), np.float32(sp.logsumexp(x)))
y = rng.standard_normal((4, 6)).astype("float32")
close(ops.cdist(x, y), np.sqrt(((x[:, None] - y[None]) ** 2).sum(-1)), 1e-4)
s = np.arange(10, dtype="float32").reshape(1, 10)
close(ops.extract_sequences(s, 4, 3), np.array([[[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]]], "float32"))
p = np.abs(x) + 0.1
close(ops.rsqrt(p), 1 / np.sqrt(p))
close(ops.erf(x), sp.erf(x).astype("float32"))
close(ops.erfc(x), sp.erfc(x).astype("float32"))
u = np.tanh(x) * 0.9
close(ops.erfinv(u), sp.erfinv(u).astype("float32"), 1e-4)
a = rng.standard_normal((3, 3)).astype("float32"); spd = a @ a.T + 3 * np.eye(3, dtype="float32")
close(ops.logdet(spd), np.float32(np.linalg.slogdet(spd)[1]), 1e-4)
print("math ok")
'''

LINALG = r'''
import numpy as np, keras
from keras import ops
import scipy.linalg as sl
n = ops.convert_to_numpy
rng = np.random.default_rng(0)
def close(g, w, tol=1e-4):
    np.testing.assert_allclose(n(g), w, rtol=tol, atol=tol)
    assert n(g).dtype == np.asarray(w).dtype, (n(g).dtype, np.asarray(w).dtype)
a = rng.standard_normal((3, 3)).astype("float32"); spd = a @ a.T + 3 * np.eye(3, dtype="float32")
b = rng.standard_normal((3, 2)).astype("float32")
L = np.linalg.cholesky(spd)
close(ops.linalg.cholesky(spd), L)
close(ops.linalg.cholesky(spd, upper=True), L.T)
close(ops.linalg.cholesky_inverse(L), np.linalg.inv(spd), 1e-3)
close(ops.linalg.det(a), np.float32(np.linalg.det(a)))
close(ops.linalg.inv(spd), np.linalg.inv(spd))
w, v = ops.linalg.eigh(spd)
close(w, np.linalg.eigh(spd)[0]); close(n(v) @ np.diag(n(w)) @ n(v).T, spd)
close(ops.linalg.norm(a), np.float32(np.linalg.norm(a)))
close(ops.linalg.norm(a, ord=1, axis=1), np.linalg.norm(a, ord=1, axis=1))
close(ops.linalg.norm(a, ord="fro", axis=(0, 1)), np.float32(np.linalg.norm(a, "fro")))
q, r = ops.linalg.qr(b)
close(n(q) @ n(r), b); assert n(q).shape == (3, 2)
q, r = ops.linalg.qr(b, mode="complete"); assert n(q).shape == (3, 3)
close(ops.linalg.solve(spd, b), np.linalg.solve(spd, b))
close(ops.linalg.solve(spd, b[:, 0]), np.linalg.solve(spd, b[:, 0]))
close(ops.linalg.solve_triangular(spd, b, lower=True), sl.solve_triangular(spd, b, lower=True))
close(ops.linalg.solve_triangular(spd, b), sl.solve_triangular(spd, b, lower=False))
u, s, vh = ops.linalg.svd(b, full_matrices=False)
close(n(u) * n(s) @ n(vh), b); close(s, np.linalg.svd(b)[1])
close(ops.linalg.svd(b, compute_uv=False), np.linalg.svd(b)[1])
close(ops.linalg.pinv(b), np.linalg.pinv(b))
close(ops.linalg.lstsq(b, a[:, 0]), np.linalg.lstsq(b, a[:, 0], rcond=None)[0])
assert int(n(ops.linalg.matrix_rank(np.outer([1., 2, 3], [1., 1, 0]).astype("float32")))) == 1
close(ops.linalg.det(np.array([[2, 1], [1, 3]])), np.float32(5))
print("linalg ok")
'''


def test_math(hook_installed):
    assert "math ok" in check(run_python(MATH, "kbackend", timeout=300))


def test_linalg(hook_installed):
    assert "linalg ok" in check(run_python(LINALG, "kbackend", timeout=300))
