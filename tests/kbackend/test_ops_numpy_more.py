"""kbackend math, linalg and the further numpy functions through keras.ops, against
NumPy/SciPy references.

The random inputs of each group come from one seeded generator, drawn in a fixed order
by a cached helper (``_*_inputs``), so that every case sees the same values whichever
tests run."""
from __future__ import annotations

import functools

import keras
import numpy as np
import pytest
import scipy.linalg as sl
import scipy.special as sp
from keras import ops

n = ops.convert_to_numpy


def close(g, w, tol, dtype=True):
    if isinstance(g, (tuple, list)):
        assert len(g) == len(w)
        for a, b in zip(g, w):
            close(a, b, tol, dtype)
        return
    np.testing.assert_allclose(n(g), w, rtol=tol, atol=tol)
    if dtype:
        assert str(n(g).dtype) == str(np.asarray(w).dtype), (n(g).dtype, np.asarray(w).dtype)


# ----------------------------------------------------------------------------- math

@functools.cache
def _math_inputs():
    rng = np.random.default_rng(0)
    d = rng.standard_normal((5, 3)).astype("float32")
    x = rng.standard_normal((3, 6)).astype("float32")
    y = rng.standard_normal((4, 6)).astype("float32")
    a = rng.standard_normal((3, 3)).astype("float32")
    return d, x, y, a


def test_segment_reductions():
    d = _math_inputs()[0]
    ids = np.array([0, 2, 0, -1, 2])
    want = np.zeros((4, 3), "float32")
    np.add.at(want, ids[ids >= 0], d[ids >= 0])
    close(ops.segment_sum(d, ids, num_segments=4), want, 1e-5)
    close(ops.segment_sum(d, np.array([0, 0, 1, 1, 1])),
          np.stack([d[:2].sum(0), d[2:].sum(0)]), 1e-5)
    want = np.full((3, 3), -np.inf, "float32")
    np.maximum.at(want, ids[ids >= 0], d[ids >= 0])
    close(ops.segment_max(d, ids, num_segments=3), want, 1e-5)
    vi = np.array([[3, 1, 2], [0, 5, 4]], "int32")
    close(ops.segment_max(vi, np.array([1, 1])),
          np.array([[np.iinfo("int32").min] * 3, [3, 5, 4]], "int32"), 1e-5)


def test_top_k_in_top_k_logsumexp_cdist():
    _, x, y, _ = _math_inputs()
    v, i = ops.top_k(x, 2)
    close(v, -np.sort(-x, -1)[:, :2], 1e-5)
    close(i, np.argsort(-x, -1)[:, :2].astype("int32"), 1e-5)
    assert n(ops.in_top_k(np.array([0, 1, 2]), x, 2)).tolist() == [
        bool(np.argsort(-x[r])[:2].__contains__(r)) for r in range(3)]
    close(ops.logsumexp(x, axis=1), sp.logsumexp(x, axis=1).astype("float32"), 1e-5)
    close(ops.logsumexp(x), np.float32(sp.logsumexp(x)), 1e-5)
    close(ops.cdist(x, y), np.sqrt(((x[:, None] - y[None]) ** 2).sum(-1)), 1e-4)


def test_extract_sequences():
    s = np.arange(10, dtype="float32").reshape(1, 10)
    close(ops.extract_sequences(s, 4, 3),
          np.array([[[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]]], "float32"), 1e-5)


def test_special_functions_and_logdet():
    _, x, _, a = _math_inputs()
    p = np.abs(x) + 0.1
    close(ops.rsqrt(p), 1 / np.sqrt(p), 1e-5)
    close(ops.erf(x), sp.erf(x).astype("float32"), 1e-5)
    close(ops.erfc(x), sp.erfc(x).astype("float32"), 1e-5)
    u = np.tanh(x) * 0.9
    close(ops.erfinv(u), sp.erfinv(u).astype("float32"), 1e-4)
    spd = a @ a.T + 3 * np.eye(3, dtype="float32")
    close(ops.logdet(spd), np.float32(np.linalg.slogdet(spd)[1]), 1e-4)


# --------------------------------------------------------------------------- linalg

@functools.cache
def _linalg_inputs():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 3)).astype("float32")
    spd = a @ a.T + 3 * np.eye(3, dtype="float32")
    b = rng.standard_normal((3, 2)).astype("float32")
    return a, spd, b


def test_cholesky_det_inv_eigh():
    a, spd, _ = _linalg_inputs()
    L = np.linalg.cholesky(spd)
    close(ops.linalg.cholesky(spd), L, 1e-4)
    close(ops.linalg.cholesky(spd, upper=True), L.T, 1e-4)
    close(ops.linalg.cholesky_inverse(L), np.linalg.inv(spd), 1e-3)
    close(ops.linalg.det(a), np.float32(np.linalg.det(a)), 1e-4)
    close(ops.linalg.inv(spd), np.linalg.inv(spd), 1e-4)
    w, v = ops.linalg.eigh(spd)
    close(w, np.linalg.eigh(spd)[0], 1e-4)
    close(n(v) @ np.diag(n(w)) @ n(v).T, spd, 1e-4)
    close(ops.linalg.det(np.array([[2, 1], [1, 3]])), np.float32(5), 1e-4)


def test_norm():
    a = _linalg_inputs()[0]
    close(ops.linalg.norm(a), np.float32(np.linalg.norm(a)), 1e-4)
    close(ops.linalg.norm(a, ord=1, axis=1), np.linalg.norm(a, ord=1, axis=1), 1e-4)
    close(ops.linalg.norm(a, ord="fro", axis=(0, 1)), np.float32(np.linalg.norm(a, "fro")), 1e-4)


def test_qr_and_svd():
    _, _, b = _linalg_inputs()
    q, r = ops.linalg.qr(b)
    close(n(q) @ n(r), b, 1e-4)
    assert n(q).shape == (3, 2)
    q, r = ops.linalg.qr(b, mode="complete")
    assert n(q).shape == (3, 3)
    u, s, vh = ops.linalg.svd(b, full_matrices=False)
    close(n(u) * n(s) @ n(vh), b, 1e-4)
    close(s, np.linalg.svd(b)[1], 1e-4)
    close(ops.linalg.svd(b, compute_uv=False), np.linalg.svd(b)[1], 1e-4)


def test_solve_pinv_lstsq_matrix_rank():
    a, spd, b = _linalg_inputs()
    close(ops.linalg.solve(spd, b), np.linalg.solve(spd, b), 1e-4)
    close(ops.linalg.solve(spd, b[:, 0]), np.linalg.solve(spd, b[:, 0]), 1e-4)
    close(ops.linalg.solve_triangular(spd, b, lower=True),
          sl.solve_triangular(spd, b, lower=True), 1e-4)
    close(ops.linalg.solve_triangular(spd, b), sl.solve_triangular(spd, b, lower=False), 1e-4)
    close(ops.linalg.pinv(b), np.linalg.pinv(b), 1e-4)
    close(ops.linalg.lstsq(b, a[:, 0]), np.linalg.lstsq(b, a[:, 0], rcond=None)[0], 1e-4)
    rank1 = np.outer([1., 2, 3], [1., 1, 0]).astype("float32")
    assert int(n(ops.linalg.matrix_rank(rank1))) == 1


# ---------------------------------------------------------------------- numpy more

@functools.cache
def _numpy_inputs():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype("float32")
    b = rng.standard_normal((3, 4)).astype("float32")
    q = rng.standard_normal((5, 7)).astype("float32")
    v1 = rng.standard_normal((4, 3)).astype("float32")
    v2 = rng.standard_normal((4, 3)).astype("float32")
    return a, b, q, v1, v2


I = np.array([[1, 5, 2], [0, 3, 3]], "int32")  # noqa: E741


def _with_non_finite(a):
    c = a.copy()
    c[0, 0] = np.nan
    c[1, 1] = np.inf
    c[2, 2] = -np.inf
    return c


def test_pad_linspace_diag_roll_nonzero_take_along_axis():
    a = _numpy_inputs()[0]
    close(ops.pad(a, ((1, 0), (2, 1))), np.pad(a, ((1, 0), (2, 1))), 1e-5)
    close(ops.pad(a, 1, constant_values=2.0), np.pad(a, 1, constant_values=2.0), 1e-5)
    close(ops.pad(a, 2, mode="reflect"), np.pad(a, 2, mode="reflect"), 1e-5)
    close(ops.pad(a, 2, mode="symmetric"), np.pad(a, 2, mode="symmetric"), 1e-5)
    close(ops.linspace(0, 1, 5), np.linspace(0, 1, 5).astype("float32"), 1e-5)
    close(ops.linspace(0., 2, 4, endpoint=False),
          np.linspace(0, 2, 4, endpoint=False).astype("float32"), 1e-5)
    close(ops.logspace(0, 2, 3), np.logspace(0, 2, 3).astype("float32"), 1e-5)
    close(ops.diag(a), np.diag(a), 1e-5)
    close(ops.diag(a[0], k=1), np.diag(a[0], k=1), 1e-5)
    close(ops.diagonal(a, offset=1), np.diagonal(a, 1), 1e-5)
    close(ops.trace(a), np.float32(np.trace(a)), 1e-5)
    close(ops.diagflat(a[:2, :2]), np.diagflat(a[:2, :2]), 1e-5)
    close(ops.roll(a, 1, axis=1), np.roll(a, 1, axis=1), 1e-5)
    close(ops.roll(a, -2), np.roll(a, -2), 1e-5)
    close(ops.nonzero(I), [x.astype("int32") for x in np.nonzero(I)], 1e-5)
    idx = np.argsort(a, axis=1)
    close(ops.take_along_axis(a, idx, axis=1), np.take_along_axis(a, idx, axis=1), 1e-5)
    close(ops.take_along_axis(a, idx[:1, :2], axis=1),
          np.take_along_axis(a, np.broadcast_to(idx[:1, :2], (3, 2)), axis=1), 1e-5)


def test_bitwise():
    i = I
    close(ops.bitwise_and(i, 3), i & 3, 1e-5)
    close(ops.bitwise_or(i, 4), i | 4, 1e-5)
    close(ops.bitwise_xor(i, i[::-1]), i ^ i[::-1], 1e-5)
    close(ops.bitwise_invert(i), ~i, 1e-5)
    close(ops.left_shift(i, 2), i << 2, 1e-5)
    close(ops.right_shift(i, 1), i >> 1, 1e-5)


def test_stack_append_split_flip_rot90():
    a, b = _numpy_inputs()[:2]
    close(ops.hstack([a, b]), np.hstack([a, b]), 1e-5)
    close(ops.vstack([a, b]), np.vstack([a, b]), 1e-5)
    close(ops.dstack([a, b]), np.dstack([a, b]), 1e-5)
    close(ops.append(a, b, axis=0), np.append(a, b, axis=0), 1e-5)
    close(ops.append(a, b), np.append(a, b), 1e-5)
    close(ops.array_split(np.arange(7.0).astype("float32"), 3),
          np.array_split(np.arange(7.0).astype("float32"), 3), 1e-5)
    close(ops.hsplit(a, 2), np.hsplit(a, 2), 1e-5)
    close(ops.vsplit(a[:2], 2), np.vsplit(a[:2], 2), 1e-5)
    close(ops.fliplr(a), np.fliplr(a), 1e-5)
    close(ops.flipud(a), np.flipud(a), 1e-5)
    for k in range(-1, 4):
        close(ops.rot90(a, k), np.rot90(a, k), 1e-5)


def test_elementwise_math():
    a, b = _numpy_inputs()[:2]
    close(ops.deg2rad(a), np.deg2rad(a), 1e-5)
    close(ops.rad2deg(a), np.rad2deg(a), 1e-4)
    close(ops.exp2(a), np.exp2(a), 1e-5)
    close(ops.fabs(a), np.fabs(a), 1e-5)
    close(ops.signbit(a), np.signbit(a), 1e-5)
    close(ops.real(a), a, 1e-5)
    close(ops.imag(a), np.zeros_like(a), 1e-5)
    close(ops.conj(a), a, 1e-5)
    close(ops.divide_no_nan(a, np.where(b > 0, b, 0)),
          np.where(b > 0, a / np.where(b > 0, b, 1), 0).astype("float32"), 1e-5)
    close(ops.heaviside(a, 0.5), np.heaviside(a, np.float32(0.5)), 1e-5)
    close(ops.logaddexp2(a, b), np.logaddexp2(a, b), 1e-4)
    close(ops.sinc(a), np.sinc(a), 1e-4)
    close(ops.fmod(a, 0.7), np.fmod(a, np.float32(0.7)), 1e-4)
    close(ops.gcd(I, 4), np.gcd(I, 4), 1e-5)
    close(ops.lcm(I, 4), np.lcm(I, 4), 1e-5)


def test_count_nonzero_diff_tri():
    a = _numpy_inputs()[0]
    close(ops.count_nonzero(I), np.int32(5), 1e-5)
    close(ops.count_nonzero(I, axis=1), np.array([3, 2], "int32"), 1e-5)
    close(ops.diff(a), np.diff(a), 1e-5)
    close(ops.diff(a, n=2, axis=0), np.diff(a, 2, axis=0), 1e-5)
    close(ops.tri(3, 4, 1), np.tri(3, 4, 1).astype("float32"), 1e-5)


def test_non_finite_predicates_and_nan_to_num():
    a = _numpy_inputs()[0]
    c = _with_non_finite(a)
    close(ops.isclose(a, a + 1e-7), np.isclose(a, a + 1e-7), 1e-5)
    assert bool(n(ops.allclose(a, a)))
    close(ops.isneginf(c), np.isneginf(c), 1e-5)
    close(ops.isposinf(c), np.isposinf(c), 1e-5)
    close(ops.isin(I, [3, 5]), np.isin(I, [3, 5]), 1e-5)
    close(ops.nan_to_num(c), np.nan_to_num(c), 1e-5)
    close(ops.nan_to_num(c, nan=1.0, posinf=9.0, neginf=-9.0),
          np.nan_to_num(c, nan=1.0, posinf=9.0, neginf=-9.0), 1e-5)
    close(ops.fmax(c, a), np.fmax(c, a), 1e-5)
    close(ops.fmin(c, a), np.fmin(c, a), 1e-5)


@pytest.mark.parametrize("f", ["nansum", "nanmean", "nanmax", "nanmin", "nanprod", "nanvar",
                               "nanstd", "nanargmax", "nanargmin"])
def test_nan_reductions(f):
    c = _with_non_finite(_numpy_inputs()[0])
    close(getattr(ops, f)(c, axis=1), getattr(np, f)(c, axis=1), 1e-4,
          dtype=f not in ("nanargmax", "nanargmin"))


def test_nancumsum():
    c = _with_non_finite(_numpy_inputs()[0])
    close(ops.nancumsum(c, axis=1), np.nancumsum(c, axis=1), 1e-5)


def test_quantiles_medians_ptp_average():
    a, _, q = _numpy_inputs()[:3]
    close(ops.quantile(q, 0.3, axis=1), np.quantile(q, 0.3, axis=1), 1e-5)
    close(ops.quantile(q, [0.1, 0.9]), np.quantile(q, [0.1, 0.9]).astype("float32"), 1e-5)
    close(ops.percentile(q, 40, axis=0, keepdims=True),
          np.percentile(q, 40, axis=0, keepdims=True), 1e-5)
    close(ops.median(q, axis=1), np.median(q, axis=1), 1e-5)
    close(ops.median(q), np.float32(np.median(q)), 1e-5)
    qn = q.copy()
    qn[0, 1] = np.nan
    close(ops.nanmedian(qn, axis=1), np.nanmedian(qn, axis=1), 1e-5)
    close(ops.nanquantile(qn, 0.7, axis=1), np.nanquantile(qn, 0.7, axis=1), 1e-5)
    close(ops.ptp(a, axis=0), np.ptp(a, axis=0), 1e-5)
    w = np.array([1., 2, 3, 4], "float32")
    close(ops.average(a, axis=1, weights=w), np.average(a, axis=1, weights=w), 1e-5)
    close(ops.average(a), np.float32(a.mean()), 1e-5)


def test_meshgrid_and_select():
    a, b = _numpy_inputs()[:2]
    x1, y1 = np.arange(3.0), np.arange(2.0)
    close(ops.meshgrid(x1, y1), np.meshgrid(x1, y1), 1e-5, dtype=False)
    close(ops.meshgrid(x1, y1, indexing="ij"), np.meshgrid(x1, y1, indexing="ij"), 1e-5,
          dtype=False)
    close(ops.select([a > 0.5, a < -0.5], [a, b], 0),
          np.select([a > 0.5, a < -0.5], [a, b], 0), 1e-5)


def test_products_cross_trapezoid_vander_corrcoef_correlate():
    a, b, _, v1, v2 = _numpy_inputs()
    close(ops.vdot(a, b), np.float32(np.vdot(a, b)), 1e-4)
    close(ops.inner(a, b), np.inner(a, b), 1e-4)
    close(ops.kron(a[:2, :2], b[:2, :3]), np.kron(a[:2, :2], b[:2, :3]), 1e-5)
    close(ops.cross(v1, v2), np.cross(v1, v2), 1e-4)
    close(ops.trapezoid(a), np.trapezoid(a), 1e-4)
    xs = np.array([0., 1, 3, 6], "float32")
    close(ops.trapezoid(a, x=xs), np.trapezoid(a, x=xs), 1e-4)
    close(ops.vander(np.array([1., 2, 3], "float32")), np.vander(np.array([1., 2, 3], "float32")),
          1e-5, dtype=False)
    close(ops.corrcoef(a), np.corrcoef(a).astype("float32"), 1e-4)
    close(ops.correlate(a[0], b[0], mode="full"), np.correlate(a[0], b[0], mode="full"), 1e-4)
    close(ops.slogdet(a[:3, :3]), np.linalg.slogdet(a[:3, :3]), 1e-4, dtype=False)


def test_searchsorted_digitize_bincount_unravel_histogram():
    a = _numpy_inputs()[0]
    close(ops.searchsorted(np.array([1., 2, 3]), np.array([2.5, 0.])),
          np.array([2, 0], "int32"), 1e-5)
    close(ops.digitize(a, np.array([-1., 0, 1])),
          np.digitize(a, np.array([-1., 0, 1])).astype("int32"), 1e-5)
    close(ops.bincount(np.array([0, 1, 1, 3])), np.array([1, 2, 0, 1], "int32"), 1e-5)
    close(ops.unravel_index(np.array([5, 7]), (3, 4)),
          [np.array([1, 1], "int64"), np.array([1, 3], "int64")], 1e-5, dtype=False)
    close(ops.histogram(np.arange(10.0), bins=5), np.histogram(np.arange(10.0), bins=5), 1e-5,
          dtype=False)


def test_windows_and_empty():
    close(ops.hamming(5), np.hamming(5).astype("float32"), 1e-5)
    close(ops.kaiser(5, 3.0), np.kaiser(5, 3.0).astype("float32"), 1e-5)
    close(ops.empty((2, 3)).shape, (2, 3), 1e-5, dtype=False)


# ------------------------------------------------------------ unfold, fold, vectorize

@functools.cache
def _unfold_input():
    return np.random.default_rng(0).standard_normal((2, 3, 5, 4)).astype("float32")


def test_unfold():
    x = _unfold_input()
    u = ops.unfold(x, 2, padding=1, stride=2)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    blocks = []
    for i in range(0, xp.shape[2] - 1, 2):
        for j in range(0, xp.shape[3] - 1, 2):
            blocks.append(xp[:, :, i:i + 2, j:j + 2].reshape(2, -1))
    np.testing.assert_allclose(n(u), np.stack(blocks, -1), atol=1e-6)


def test_fold_of_unfold_counts_overlaps():
    x = _unfold_input()
    f = ops.fold(ops.unfold(x, 2), (5, 4), 2)
    cnt = np.zeros((5, 4))
    for i in range(4):
        for j in range(3):
            cnt[i:i + 2, j:j + 2] += 1
    np.testing.assert_allclose(n(f), x * cnt, atol=1e-5)


def test_vectorize():
    x = _unfold_input()
    vf = ops.vectorize(lambda a, b: a * b + 1.0)
    np.testing.assert_allclose(n(vf(np.arange(3.0), np.arange(3.0))), np.arange(3.0) ** 2 + 1)
    vm = ops.vectorize(lambda a: ops.sum(a), signature="(n)->()")
    np.testing.assert_allclose(n(vm(x[0, 0])), x[0, 0].sum(-1), atol=1e-5)


# ---------------------------------------------------------------------------- clip

def test_clip_with_tensor_bounds():
    x = np.array([-2.0, 0.5, 3.0], "float32")
    lo, hi = ops.convert_to_tensor(0.0), ops.convert_to_tensor(1.0)
    np.testing.assert_array_equal(ops.convert_to_numpy(ops.clip(x, lo, hi)), [0, 0.5, 1])
    got = ops.clip(x, np.array([0.0, 0.0, 2.0]), 2.5)
    np.testing.assert_array_equal(ops.convert_to_numpy(got), [0, 0.5, 2.5])
    relu = keras.layers.ReLU(max_value=1.0)
    np.testing.assert_array_equal(ops.convert_to_numpy(relu(x)), [0, 0.5, 1])
