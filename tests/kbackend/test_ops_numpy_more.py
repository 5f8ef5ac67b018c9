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


NUMPY_MORE = r'''
import numpy as np, keras
from keras import ops
n = ops.convert_to_numpy
rng = np.random.default_rng(0)
def close(g, w, tol=1e-5, dtype=True):
    if isinstance(g, (tuple, list)):
        assert len(g) == len(w)
        for a, b in zip(g, w): close(a, b, tol, dtype)
        return
    np.testing.assert_allclose(n(g), w, rtol=tol, atol=tol)
    if dtype:
        assert str(n(g).dtype) == str(np.asarray(w).dtype), (n(g).dtype, np.asarray(w).dtype)
a = rng.standard_normal((3, 4)).astype("float32")
b = rng.standard_normal((3, 4)).astype("float32")
i = np.array([[1, 5, 2], [0, 3, 3]], "int32")
close(ops.pad(a, ((1, 0), (2, 1))), np.pad(a, ((1, 0), (2, 1))))
close(ops.pad(a, 1, constant_values=2.0), np.pad(a, 1, constant_values=2.0))
close(ops.pad(a, 2, mode="reflect"), np.pad(a, 2, mode="reflect"))
close(ops.pad(a, 2, mode="symmetric"), np.pad(a, 2, mode="symmetric"))
close(ops.linspace(0, 1, 5), np.linspace(0, 1, 5).astype("float32"))
close(ops.linspace(0., 2, 4, endpoint=False), np.linspace(0, 2, 4, endpoint=False).astype("float32"))
close(ops.logspace(0, 2, 3), np.logspace(0, 2, 3).astype("float32"))
close(ops.diag(a), np.diag(a)); close(ops.diag(a[0], k=1), np.diag(a[0], k=1))
close(ops.diagonal(a, offset=1), np.diagonal(a, 1)); close(ops.trace(a), np.float32(np.trace(a)))
close(ops.diagflat(a[:2, :2]), np.diagflat(a[:2, :2]))
close(ops.roll(a, 1, axis=1), np.roll(a, 1, axis=1)); close(ops.roll(a, -2), np.roll(a, -2))
close(ops.nonzero(i), [x.astype("int32") for x in np.nonzero(i)])
idx = np.argsort(a, axis=1)
close(ops.take_along_axis(a, idx, axis=1), np.take_along_axis(a, idx, axis=1))
close(ops.take_along_axis(a, idx[:1, :2], axis=1), np.take_along_axis(a, np.broadcast_to(idx[:1, :2], (3, 2)), axis=1))
close(ops.bitwise_and(i, 3), i & 3); close(ops.bitwise_or(i, 4), i | 4); close(ops.bitwise_xor(i, i[::-1]), i ^ i[::-1])
close(ops.bitwise_invert(i), ~i); close(ops.left_shift(i, 2), i << 2); close(ops.right_shift(i, 1), i >> 1)
close(ops.hstack([a, b]), np.hstack([a, b])); close(ops.vstack([a, b]), np.vstack([a, b])); close(ops.dstack([a, b]), np.dstack([a, b]))
close(ops.append(a, b, axis=0), np.append(a, b, axis=0)); close(ops.append(a, b), np.append(a, b))
close(ops.array_split(np.arange(7.0).astype("float32"), 3), np.array_split(np.arange(7.0).astype("float32"), 3))
close(ops.hsplit(a, 2), np.hsplit(a, 2)); close(ops.vsplit(a[:2], 2), np.vsplit(a[:2], 2))
close(ops.fliplr(a), np.fliplr(a)); close(ops.flipud(a), np.flipud(a))
for k in range(-1, 4): close(ops.rot90(a, k), np.rot90(a, k))
close(ops.deg2rad(a), np.deg2rad(a)); close(ops.rad2deg(a), np.rad2deg(a), 1e-4)
close(ops.exp2(a), np.exp2(a)); close(ops.fabs(a), np.fabs(a))
close(ops.signbit(a), np.signbit(a)); close(ops.real(a), a); close(ops.imag(a), np.zeros_like(a)); close(ops.conj(a), a)
close(ops.count_nonzero(i), np.int32(5)); close(ops.count_nonzero(i, axis=1), np.array([3, 2], "int32"))
close(ops.diff(a), np.diff(a)); close(ops.diff(a, n=2, axis=0), np.diff(a, 2, axis=0))
close(ops.tri(3, 4, 1), np.tri(3, 4, 1).astype("float32"))
c = a.copy(); c[0, 0] = np.nan; c[1, 1] = np.inf; c[2, 2] = -np.inf
close(ops.isclose(a, a + 1e-7), np.isclose(a, a + 1e-7)); assert bool(n(ops.allclose(a, a)))
close(ops.isneginf(c), np.isneginf(c)); close(ops.isposinf(c), np.isposinf(c))
close(ops.isin(i, [3, 5]), np.isin(i, [3, 5]))
close(ops.nan_to_num(c), np.nan_to_num(c)); close(ops.nan_to_num(c, nan=1.0, posinf=9.0, neginf=-9.0), np.nan_to_num(c, nan=1.0, posinf=9.0, neginf=-9.0))
close(ops.divide_no_nan(a, np.where(b > 0, b, 0)), np.where(b > 0, a / np.where(b > 0, b, 1), 0).astype("float32"))
for f in ["nansum", "nanmean", "nanmax", "nanmin", "nanprod", "nanvar", "nanstd", "nanargmax", "nanargmin"]:
    close(getattr(ops, f)(c, axis=1), getattr(np, f)(c, axis=1), 1e-4, dtype=f not in ("nanargmax", "nanargmin"))
close(ops.nancumsum(c, axis=1), np.nancumsum(c, axis=1))
q = rng.standard_normal((5, 7)).astype("float32")
close(ops.quantile(q, 0.3, axis=1), np.quantile(q, 0.3, axis=1))
close(ops.quantile(q, [0.1, 0.9]), np.quantile(q, [0.1, 0.9]).astype("float32"))
close(ops.percentile(q, 40, axis=0, keepdims=True), np.percentile(q, 40, axis=0, keepdims=True))
close(ops.median(q, axis=1), np.median(q, axis=1)); close(ops.median(q), np.float32(np.median(q)))
qn = q.copy(); qn[0, 1] = np.nan
close(ops.nanmedian(qn, axis=1), np.nanmedian(qn, axis=1)); close(ops.nanquantile(qn, 0.7, axis=1), np.nanquantile(qn, 0.7, axis=1))
close(ops.ptp(a, axis=0), np.ptp(a, axis=0))
w = np.array([1., 2, 3, 4], "float32")
close(ops.average(a, axis=1, weights=w), np.average(a, axis=1, weights=w)); close(ops.average(a), np.float32(a.mean()))
x1, y1 = np.arange(3.0), np.arange(2.0)
close(ops.meshgrid(x1, y1), np.meshgrid(x1, y1), dtype=False); close(ops.meshgrid(x1, y1, indexing="ij"), np.meshgrid(x1, y1, indexing="ij"), dtype=False)
close(ops.select([a > 0.5, a < -0.5], [a, b], 0), np.select([a > 0.5, a < -0.5], [a, b], 0))
close(ops.heaviside(a, 0.5), np.heaviside(a, np.float32(0.5)))
close(ops.fmax(c, a), np.fmax(c, a)); close(ops.fmin(c, a), np.fmin(c, a)); close(ops.fmod(a, 0.7), np.fmod(a, np.float32(0.7)), 1e-4)
close(ops.logaddexp2(a, b), np.logaddexp2(a, b), 1e-4)
close(ops.gcd(i, 4), np.gcd(i, 4)); close(ops.lcm(i, 4), np.lcm(i, 4))
close(ops.sinc(a), np.sinc(a), 1e-4)
close(ops.vdot(a, b), np.float32(np.vdot(a, b)), 1e-4); close(ops.inner(a, b), np.inner(a, b), 1e-4)
close(ops.kron(a[:2, :2], b[:2, :3]), np.kron(a[:2, :2], b[:2, :3]))
v1, v2 = rng.standard_normal((4, 3)).astype("float32"), rng.standard_normal((4, 3)).astype("float32")
close(ops.cross(v1, v2), np.cross(v1, v2), 1e-4)
close(ops.trapezoid(a), np.trapezoid(a), 1e-4); close(ops.trapezoid(a, x=np.array([0., 1, 3, 6], "float32")), np.trapezoid(a, x=np.array([0., 1, 3, 6], "float32")), 1e-4)
close(ops.vander(np.array([1., 2, 3], "float32")), np.vander(np.array([1., 2, 3], "float32")), dtype=False)
close(ops.corrcoef(a), np.corrcoef(a).astype("float32"), 1e-4)
close(ops.correlate(a[0], b[0], mode="full"), np.correlate(a[0], b[0], mode="full"), 1e-4)
close(ops.searchsorted(np.array([1., 2, 3]), np.array([2.5, 0.])), np.array([2, 0], "int32"))
close(ops.digitize(a, np.array([-1., 0, 1])), np.digitize(a, np.array([-1., 0, 1])).astype("int32"))
close(ops.bincount(np.array([0, 1, 1, 3])), np.array([1, 2, 0, 1], "int32"))
close(ops.unravel_index(np.array([5, 7]), (3, 4)), [np.array([1, 1], "int64"), np.array([1, 3], "int64")], dtype=False)
close(ops.histogram(np.arange(10.0), bins=5), np.histogram(np.arange(10.0), bins=5), dtype=False)
close(ops.slogdet(a[:3, :3]), np.linalg.slogdet(a[:3, :3]), 1e-4, dtype=False)
close(ops.hamming(5), np.hamming(5).astype("float32")); close(ops.kaiser(5, 3.0), np.kaiser(5, 3.0).astype("float32"))
close(ops.empty((2, 3)).shape, (2, 3), dtype=False)
print("numpy more ok")
'''


UNFOLD_VECTORIZE = r'''
import numpy as np, keras
from keras import ops
n = ops.convert_to_numpy
rng = np.random.default_rng(0)
x = rng.standard_normal((2, 3, 5, 4)).astype("float32")
u = ops.unfold(x, 2, padding=1, stride=2)
xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
blocks = []
for i in range(0, xp.shape[2] - 1, 2):
    for j in range(0, xp.shape[3] - 1, 2):
        blocks.append(xp[:, :, i:i + 2, j:j + 2].reshape(2, -1))
np.testing.assert_allclose(n(u), np.stack(blocks, -1), atol=1e-6)
f = ops.fold(ops.unfold(x, 2), (5, 4), 2)
cnt = np.zeros((5, 4)); 
for i in range(4):
    for j in range(3): cnt[i:i + 2, j:j + 2] += 1
np.testing.assert_allclose(n(f), x * cnt, atol=1e-5)
vf = ops.vectorize(lambda a, b: a * b + 1.0)
np.testing.assert_allclose(n(vf(np.arange(3.0), np.arange(3.0))), np.arange(3.0) ** 2 + 1)
vm = ops.vectorize(lambda a: ops.sum(a), signature="(n)->()")
np.testing.assert_allclose(n(vm(x[0, 0])), x[0, 0].sum(-1), atol=1e-5)
print("unfold/vectorize ok")
'''


def test_math(hook_installed):
    assert "math ok" in check(run_python(MATH, "kbackend", timeout=300))


def test_linalg(hook_installed):
    assert "linalg ok" in check(run_python(LINALG, "kbackend", timeout=300))


def test_numpy_more(hook_installed):
    assert "numpy more ok" in check(run_python(NUMPY_MORE, "kbackend", timeout=300))


def test_unfold_fold_vectorize(hook_installed):
    assert "unfold/vectorize ok" in check(run_python(UNFOLD_VECTORIZE, "kbackend", timeout=300))


def test_clip_with_tensor_bounds():
    out = check(run_python(r'''
        import numpy as np, keras
        from keras import ops
        x = np.array([-2.0, 0.5, 3.0], "float32")
        lo, hi = ops.convert_to_tensor(0.0), ops.convert_to_tensor(1.0)
        np.testing.assert_array_equal(ops.convert_to_numpy(ops.clip(x, lo, hi)), [0, 0.5, 1])
        got = ops.clip(x, np.array([0.0, 0.0, 2.0]), 2.5)
        np.testing.assert_array_equal(ops.convert_to_numpy(got), [0, 0.5, 2.5])
        relu = keras.layers.ReLU(max_value=1.0)
        np.testing.assert_array_equal(ops.convert_to_numpy(relu(x)), [0, 0.5, 1])
        print("ok")
    ''', keras_backend="kbackend"))
    assert out.strip() == "ok"
