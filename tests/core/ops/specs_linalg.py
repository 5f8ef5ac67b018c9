"""Rows for the products and linear algebra (core/ops/matmul.py, core/ops/linalg.py).

Decompositions are checked through functions of their outputs that are well defined:
inputs with well-separated eigen/singular values, symmetrized inputs for cholesky and
eigh (they read one triangle only), and sign-free products such as u_i v_i^T.
"""
import numpy as np

from core import autograd, nd
from core import np as knp
from core.ops import F

from .op_db import OpSpec, Sample, away_from, rand

_FI = ("float32", "float64", "int32")
_FIH = _FI + ("float16", "bfloat16")
_LIN = {"rtol": 1e-4, "atol": 1e-5}


def _swap(x):
    return np.swapaxes(x, -1, -2) if x.ndim >= 2 else x


def _op(x, t):
    return _swap(x) if t else x


def _mT(x):
    return F.einsum(x, subscripts="...ij->...ji")


# ------------------------------------------------------------------ generators
def _well(rng, shape, d):
    """Well-conditioned square matrices (diagonally dominant)."""
    a = rand(rng, shape, "float64", -1, 1) + 3 * shape[-1] * np.eye(shape[-1])
    return np.round(a).astype(d) if np.dtype(d).kind in "iu" else a.astype(d)


def _spd(rng, shape, d):
    """Symmetric positive-definite matrices."""
    x = rand(rng, shape, "float64")
    return (x @ _swap(x) + shape[-1] * np.eye(shape[-1])).astype(d)


def _orth(rng, batch, n, k):
    q, _ = np.linalg.qr(rng.standard_normal(batch + (n, n)))
    return q[..., :k]


def _sep_sv(rng, shape, d):
    """Matrices with well-separated singular values (3, 2.2, 1.4, ...)."""
    *batch, m, n = shape
    k = min(m, n)
    s = 3.0 - 0.8 * np.arange(k)
    u, v = _orth(rng, tuple(batch), m, k), _orth(rng, tuple(batch), n, k)
    return ((u * s) @ _swap(v)).astype(d)


def _sep_sym(rng, shape, d):
    """Symmetric matrices with well-separated eigenvalues (-2, -0.8, 0.4, ...)."""
    n = shape[-1]
    w = -2.0 + 1.2 * np.arange(n)
    v = _orth(rng, tuple(shape[:-2]), n, n)
    return ((v * w) @ _swap(v)).astype(d)


def _pairs(gen_a=rand, gen_b=rand, cases=()):
    def samples(rng, d):
        return [Sample(gen_a(rng, a, d), gen_b(rng, b, d), **k) for a, b, k in cases]

    return samples


def _ones_of(gen, cases):
    def samples(rng, d):
        return [Sample(gen(rng, s, d), **k) for s, k in cases]

    return samples


# ------------------------------------------------------------------ matmul family
_MATMUL = [((3, 4), (4, 5), {}), ((2, 3, 4), (4, 5), {}), ((2, 1, 3, 4), (5, 4, 2), {}),
           ((4,), (4, 5), {}), ((3, 4), (4,), {}), ((4,), (4,), {}), ((2, 3, 4), (4,), {}),
           ((4,), (2, 4, 3), {}), ((4, 3), (4, 5), {"transpose_a": True}),
           ((3, 4), (5, 4), {"transpose_b": True}),
           ((2, 4, 3), (1, 5, 4), {"transpose_a": True, "transpose_b": True}),
           ((4,), (5, 4), {"transpose_b": True})]


def _matmul_ref(a, b, transpose_a=False, transpose_b=False):
    out = np.matmul(_op(a, transpose_a), _op(b, transpose_b))
    return out.astype(np.result_type(a, b))  # NumPy multiplies bfloat16 in float32


_MX_DOT = [((3, 4), (4, 5), {}), ((4,), (4, 5), {}), ((3, 4), (4,), {}), ((4,), (4,), {}),
           ((2, 3, 4), (4, 5), {}), ((3, 4), (4, 2, 5), {}), ((2, 3, 4), (4, 2, 5), {}),
           ((4, 3), (4, 5), {"transpose_a": True}), ((3, 4), (5, 4), {"transpose_b": True}),
           ((4, 3), (5, 4), {"transpose_a": True, "transpose_b": True}),
           ((4, 2, 3), (5, 4), {"transpose_a": True, "transpose_b": True}),
           ((2, 3, 4), (5, 3, 4), {"transpose_b": True}), ((4,), (5, 4), {"transpose_b": True})]


def _mx_dot_ref(a, b, transpose_a=False, transpose_b=False):
    """MXNet's dot: lhs's last (first if transposed) axis with rhs's first (last) axis."""
    if a.ndim == 1 and b.ndim == 1:
        return np.array([np.dot(a, b)])
    return np.tensordot(a, b, axes=([0 if transpose_a else -1], [-1 if transpose_b else 0]))


_NP_DOT = [((3, 4), (4, 5)), ((4,), (4,)), ((2, 3, 4), (4,)), ((4,), (4, 5)),
           ((3, 4), (2, 4, 5)), ((2, 3, 4), (2, 4, 5)), ((), (3, 4)), ((2, 3), ())]

_BATCH_DOT = [((2, 3, 4), (2, 4, 5), {}), ((2, 4, 3), (2, 4, 5), {"transpose_a": True}),
              ((2, 3, 4), (2, 5, 4), {"transpose_b": True}),
              ((2, 4, 3), (2, 5, 4), {"transpose_a": True, "transpose_b": True}),
              ((2, 2, 3, 4), (2, 2, 4, 5), {})]


def _gemm2_ref(a, b, transpose_a=False, transpose_b=False, alpha=1.0, axis=-2):
    ax = axis % a.ndim
    a2, b2 = np.moveaxis(a, ax, -2), np.moveaxis(b, ax, -2)
    out = alpha * np.matmul(_op(a2, transpose_a), _op(b2, transpose_b))
    return np.moveaxis(out, -2, ax).astype(np.result_type(a, b))


def _gemm_ref(a, b, c, beta=1.0, **k):
    return (_gemm2_ref(a, b, **k) + beta * c).astype(np.result_type(a, b, c))


_GEMM2 = [((3, 4), (4, 5), {}), ((2, 3, 4), (2, 4, 5), {"alpha": 2.5}),
          ((2, 4, 3), (2, 5, 4), {"transpose_a": True, "transpose_b": True, "alpha": -0.5}),
          ((4, 2, 3), (3, 2, 5), {"axis": 0}), ((4, 3), (4, 5), {"transpose_a": True})]


def _gemm_samples(rng, d):
    out = []
    for a, b, k in _GEMM2:
        shape = _gemm2_ref(np.zeros(a), np.zeros(b), **k).shape
        out.append(Sample(rand(rng, a, d), rand(rng, b, d), rand(rng, shape, d), beta=0.5,
                          **k))
    out.append(Sample(rand(rng, (3, 4), d), rand(rng, (4, 2), d), rand(rng, (3, 2), d)))
    return out


_TENSORDOT = [((2, 3, 4), (3, 4, 5), {"axes": 2}), ((2, 3), (3, 4), {"axes": 1}),
              ((2, 3), (4,), {"axes": 0}), ((3, 4, 5), (4, 3, 2), {"axes": ([1, 0], [0, 1])}),
              ((3, 4), (2, 4), {"axes": ([1], [1])}), ((3, 4), (4, 3), {"axes": (-1, 0)})]


def _einsum_samples(rng, d):
    r = lambda *s: rand(rng, s, d)
    return [Sample(r(3, 4), r(4, 5), subscripts="ij,jk->ik"),
            Sample(r(4, 4), subscripts="ii->i"), Sample(r(4, 4), subscripts="ii"),
            Sample(r(3, 4), subscripts="ij->"), Sample(r(3, 4), subscripts="ij->j"),
            Sample(r(2, 1, 3, 4), r(5, 4, 2), subscripts="...ij,...jk->...ik"),
            Sample(r(3), r(4), subscripts="i,j->ij"),
            Sample(r(2, 3, 4), r(2, 4, 5), subscripts="bij,bjk"),
            Sample(r(1, 3), r(2, 3), subscripts="ij,ij->ij"),
            Sample(r(2, 3), r(3, 4), r(4, 2), subscripts="ij,jk,kl->il"),
            Sample(r(2, 3, 4), subscripts="ijk->kji"),
            Sample(r(3, 2, 2), r(3), subscripts="ijj,i->j"),
            Sample(r(2, 3), r(2, 3), subscripts="ij,ij->"),
            Sample(r(3, 4), subscripts="...j->j...")]


def _einsum_ref(*ops, subscripts=None):
    dt = np.result_type(*ops)
    if dt.kind not in "biufc":  # bfloat16
        ops = [o.astype(np.float32) for o in ops]
    return np.asarray(np.einsum(subscripts, *ops)).astype(dt)


def _products():
    return [
        OpSpec("matmul", knp.matmul, _matmul_ref, _pairs(cases=_MATMUL), dtypes=_FIH, **_LIN),
        OpSpec("matmul", lambda a, b: a @ b, np.matmul, _pairs(cases=[
            (a, b, {}) for a, b, k in _MATMUL if not k]), dtypes=_FI, extra={"id": "matmul@"},
            **_LIN),
        OpSpec("dot", nd.dot, _mx_dot_ref, _pairs(cases=_MX_DOT), dtypes=_FIH, **_LIN),
        OpSpec("np_dot", knp.dot, lambda a, b: np.asarray(np.dot(a, b)),
               _pairs(cases=[(a, b, {}) for a, b in _NP_DOT]), dtypes=_FI, **_LIN),
        OpSpec("batch_dot", nd.batch_dot, _matmul_ref, _pairs(cases=_BATCH_DOT), dtypes=_FI,
               **_LIN),
        OpSpec("linalg_gemm2", nd.linalg.gemm2, _gemm2_ref, _pairs(cases=_GEMM2), **_LIN),
        OpSpec("linalg_gemm", nd.linalg.gemm, _gemm_ref, _gemm_samples, **_LIN),
        OpSpec("tensordot", knp.tensordot, np.tensordot, _pairs(cases=_TENSORDOT), dtypes=_FI,
               **_LIN),
        OpSpec("einsum", knp.einsum, _einsum_ref, _einsum_samples, dtypes=_FIH, **_LIN),
        # a 0-d operand (the gradient check would perturb it into a NumPy scalar)
        OpSpec("einsum", knp.einsum, _einsum_ref, lambda rng, d: [
            Sample(np.asarray(rand(rng, (), d)), rand(rng, (3,), d), subscripts=",i->i")],
            dtypes=_FI, grad=False, extra={"id": "einsum_0d"}, **_LIN),
        OpSpec("inner", knp.inner, lambda a, b: np.asarray(np.inner(a, b)), _pairs(cases=[
            ((3, 4), (5, 4), {}), ((4,), (4,), {}), ((2, 3, 4), (4,), {}), ((), (3,), {}),
            ((2, 3), (4, 2, 3), {})]), dtypes=_FI, **_LIN),
        OpSpec("outer", knp.outer, np.outer, _pairs(cases=[
            ((3,), (4,), {}), ((2, 3), (4,), {}), ((), (3,), {}), ((3,), (2, 2), {})]),
            dtypes=_FI, **_LIN),
    ]


# ------------------------------------------------------------------ second order
def _weights(shape):
    return np.cos(np.arange(int(np.prod(shape)), dtype=np.float64) * 0.7).reshape(shape)


def _grad_of(f, argnum=0):
    """d/d(arg) sum(w * f(args)), recorded (create_graph) so the table differentiates it."""

    def call(*args, **kw):
        xs = list(args)
        if xs[argnum]._node is None:  # the value checks: a fresh leaf
            xs[argnum] = xs[argnum].copy()
            xs[argnum].attach_grad()
        with autograd.record():
            y = f(*xs, **kw)
            w = nd.array(_weights(y.shape), dtype=y.dtype, ctx=y.context)
            s = F.sum_to(y * w, shape=())
        return autograd.grad(s, xs[argnum], create_graph=True)

    return call


def _second_order():
    w = _weights
    return [
        OpSpec("matmul", _grad_of(knp.matmul), lambda a, b: w((3, 5)) @ b.T,
               _pairs(cases=[((3, 4), (4, 5), {})]), dtypes=("float64",),
               extra={"id": "matmul_grad2"}, **_LIN),
        OpSpec("dot", _grad_of(nd.dot, 1), lambda a, b: a.T @ w((3, 5)),
               _pairs(cases=[((3, 4), (4, 5), {})]), dtypes=("float64",),
               extra={"id": "dot_grad2"}, **_LIN),
        OpSpec("einsum", _grad_of(lambda a, b: knp.einsum(a, b, subscripts="bij,bjk->bik")),
               lambda a, b: np.einsum("bik,bjk->bij", w((2, 3, 5)), b),
               _pairs(cases=[((2, 3, 4), (2, 4, 5), {})]), dtypes=("float64",),
               extra={"id": "einsum_grad2"}, **_LIN),
        OpSpec("linalg_inv", _grad_of(knp.linalg.inv),
               lambda a: -_swap(np.linalg.inv(a)) @ w((3, 3)) @ _swap(np.linalg.inv(a)),
               _ones_of(_well, [((3, 3), {})]), dtypes=("float64",),
               extra={"id": "linalg_inv_grad2"}, **_LIN),
        OpSpec("linalg_det", _grad_of(knp.linalg.det),
               lambda a: w(()) * np.linalg.det(a) * _swap(np.linalg.inv(a)),
               _ones_of(_well, [((3, 3), {})]), dtypes=("float64",),
               extra={"id": "linalg_det_grad2"}, **_LIN),
        OpSpec("linalg_norm", _grad_of(knp.linalg.norm), lambda x: x / np.linalg.norm(x),
               _ones_of(rand, [((3, 4), {})]), dtypes=("float64",),
               extra={"id": "linalg_norm_grad2"}, **_LIN),
    ]


# ------------------------------------------------------------------ decompositions
def _sym(a):
    return (a + _mT(a)) * 0.5


def _chol_call(fn):
    return lambda a, **k: fn(_sym(a), **k)


def _chol_ref(a, upper=False, lower=True):
    low = np.linalg.cholesky(a)
    return _swap(low) if upper or not lower else low


def _cols_outer(u, v):
    """u[:, i] v[:, i]^T for every i (no sign ambiguity), NDArrays or NumPy."""
    ein = np.einsum if isinstance(u, np.ndarray) else \
        (lambda s, *o: knp.einsum(*o, subscripts=s))
    return ein("...mi,...ni->...imn", u, v)


def _svd_call(a, **k):
    if k.get("compute_uv", True) is False:
        return knp.linalg.svd(a, **k)
    u, s, vh = knp.linalg.svd(a, **k)
    return s, _cols_outer(u, _mT(vh))


def _svd_ref(a, **k):
    if k.get("compute_uv", True) is False:
        return np.linalg.svd(a, **k)
    u, s, vh = np.linalg.svd(a, **k)
    return s, _cols_outer(u, _swap(vh))


def _eigh_call(a, **k):
    w, v = knp.linalg.eigh(_sym(a), **k)
    return w, _cols_outer(v, v)


def _eigh_ref(a, **k):
    w, v = np.linalg.eigh(a, **k)
    return w, _cols_outer(v, v)


def _syevd_call(a):
    u, lam = nd.linalg.syevd(_sym(a))
    return _cols_outer(_mT(u), _mT(u)), lam


def _syevd_ref(a):
    w, v = np.linalg.eigh(a)
    return _cols_outer(v, v), w


def _qr_ref(a, mode="reduced"):
    return np.linalg.qr(a, mode=mode)


def _solve_samples(rng, d):
    return [Sample(_well(rng, (3, 3), d), rand(rng, (3,), d)),
            Sample(_well(rng, (3, 3), d), rand(rng, (3, 2), d)),
            Sample(_well(rng, (2, 3, 3), d), rand(rng, (3,), d)),
            Sample(_well(rng, (2, 3, 3), d), rand(rng, (1, 3, 2), d)),
            Sample(_well(rng, (3, 3), d), rand(rng, (2, 3, 4), d))]


_SQUARE = [((3, 3), {}), ((2, 4, 4), {}), ((2, 1, 2, 2), {}), ((1, 1), {})]


def _norm_samples(rng, d):
    x = lambda *s: away_from(rng, s, d, gap=0.2)
    inf = np.inf
    out = [Sample(x(5)), Sample(x(3, 4)), Sample(x(2, 3, 4)), Sample(x(2, 3, 4), keepdims=True)]
    out += [Sample(x(5), ord=o) for o in (1, 2, inf, -inf, 0, 3, 0.5, -1.5)]
    out += [Sample(x(3, 4), ord=o) for o in ("fro", "nuc", 1, -1, 2, -2, inf, -inf)]
    out += [Sample(x(3, 4), axis=1), Sample(x(3, 4), axis=0, ord=1, keepdims=True),
            Sample(x(2, 3, 4), axis=(0, 2), ord="fro"), Sample(x(2, 3, 4), axis=(2, 0), ord=2),
            Sample(x(2, 3, 4), axis=(0, 2), ord=1, keepdims=True),
            Sample(x(2, 3, 4), axis=(-1, 1), ord=-inf), Sample(x(2, 4, 3), axis=(1, 2),
                                                                ord="nuc", keepdims=True),
            Sample(x(3, 4), axis=(0, 1), ord=-2, keepdims=True)]
    return out


def _norm_ref(x, **k):
    out = np.asarray(np.linalg.norm(x, **k))
    return out.astype(x.dtype if x.dtype.kind == "f" else np.float64)


def _decompositions():
    fl = ("float32", "float64")
    return [
        OpSpec("linalg_inv", knp.linalg.inv, np.linalg.inv, _ones_of(_well, _SQUARE),
               dtypes=_FI, **_LIN),
        OpSpec("linalg_inv", nd.linalg.inverse, np.linalg.inv, _ones_of(_well, _SQUARE[:2]),
               extra={"id": "linalg_inverse"}, **_LIN),
        OpSpec("linalg_det", knp.linalg.det, lambda a: np.asarray(np.linalg.det(a)),
               _ones_of(_well, _SQUARE), dtypes=_FI, rtol=1e-4, atol=1e-4),
        OpSpec("linalg_slogdet", knp.linalg.slogdet,
               lambda a: tuple(np.asarray(v) for v in np.linalg.slogdet(a)),
               lambda rng, d: [Sample(_well(rng, s, d) * np.where(np.arange(s[-1]) == 0, -1, 1)
                                      .astype(d)) for s, _ in _SQUARE], dtypes=_FI, **_LIN),
        OpSpec("linalg_cholesky", _chol_call(knp.linalg.cholesky), _chol_ref,
               _ones_of(_spd, _SQUARE + [((3, 3), {"upper": True})]), dtypes=fl, **_LIN),
        OpSpec("linalg_cholesky", _chol_call(nd.linalg.potrf), _chol_ref,
               _ones_of(_spd, [((2, 3, 3), {}), ((3, 3), {"lower": False})]), dtypes=fl,
               extra={"id": "linalg_potrf"}, **_LIN),
        OpSpec("linalg_qr", knp.linalg.qr, _qr_ref, _ones_of(rand, [
            ((4, 3), {}), ((3, 3), {}), ((3, 5), {}), ((2, 4, 3), {}), ((2, 3, 4), {}),
            ((4, 3), {"mode": "r"}), ((3, 5), {"mode": "r"}), ((3, 5), {"mode": "complete"})]),
            dtypes=fl, **_LIN),
        OpSpec("linalg_svd", _svd_call, _svd_ref, _ones_of(_sep_sv, [
            ((3, 3), {}), ((4, 3), {"full_matrices": False}), ((3, 5), {"full_matrices": False}),
            ((2, 4, 3), {"full_matrices": False}), ((4, 3), {"compute_uv": False}),
            ((2, 3, 5), {"compute_uv": False})]), dtypes=fl, **_LIN),
        OpSpec("linalg_svd", knp.linalg.svd, np.linalg.svd, _ones_of(_sep_sv, [
            ((4, 3), {}), ((2, 3, 5), {})]), dtypes=fl, grad=False,
            extra={"id": "linalg_svd_full"}, **_LIN),
        OpSpec("linalg_eigh", _eigh_call, _eigh_ref, _ones_of(_sep_sym, [
            ((3, 3), {}), ((2, 4, 4), {}), ((3, 3), {"UPLO": "U"})]), dtypes=fl, **_LIN),
        OpSpec("linalg_syevd", _syevd_call, _syevd_ref, _ones_of(_sep_sym, [
            ((3, 3), {}), ((2, 4, 4), {})]), dtypes=fl, **_LIN),
        OpSpec("linalg_solve", knp.linalg.solve, np.linalg.solve, _solve_samples, dtypes=fl,
               **_LIN),
        OpSpec("linalg_norm", knp.linalg.norm, _norm_ref, _norm_samples, dtypes=fl, **_LIN),
        OpSpec("linalg_norm", knp.linalg.norm, _norm_ref, _ones_of(rand, [
            ((3, 4), {}), ((5,), {"ord": 1}), ((3, 4), {"ord": "fro", "axis": (0, 1)})]),
            dtypes=("int32",), grad=False, extra={"id": "linalg_norm_int"}, **_LIN),
    ]


SPECS = _products() + _second_order() + _decompositions()
