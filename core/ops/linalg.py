"""Linear algebra: gemm, inv, det, slogdet, cholesky, qr, svd, eigh, solve and norms.

Every operator takes stacks of matrices (the last two axes) and follows NumPy's
``numpy.linalg``: integer and boolean inputs are computed in float64 (NumPy's rule),
float32/float64 keep their dtype, and float16/bfloat16 raise TypeError (NumPy's
linalg rejects them too; cast to float32). MXNet's ``nd.linalg`` names (``inverse``,
``potrf``, ``syevd``, ...) share the operators where the semantics agree.

Gradients are written with core operators, so they can be differentiated again. The
decompositions' gradients assume what makes them well defined: ``cholesky`` and
``eigh`` return the symmetric gradient (their input is taken as symmetric), ``eigh``
needs distinct eigenvalues, ``svd`` distinct non-zero singular values (for U and V),
``qr`` a full-rank input, and ``det``/``slogdet``/``solve`` an invertible matrix.
"""
from __future__ import annotations

import math

import numpy

from ..dtypes import is_float
from .broadcast import sum_to
from .infer import is_aval, norm_axis, reduced_shape, shape_of
from .matmul import (
    const,
    desc,
    eye,
    mat_shapes,
    matmul_raw,
    mT,
    ones,
    product_vjp,
    result_dtype,
    via,
    wanted,
)
from .registry import Aval, F, defop

_F32, _F64 = numpy.dtype("float32"), numpy.dtype("float64")


def _lin_dtype(name, dtype, names, avals):
    """The dtype a linalg operator computes in: NumPy's rule, float16 refused."""
    d = numpy.dtype(dtype)
    if d.kind in "biu":
        return _F64
    if d in (_F32, _F64):
        return d
    raise TypeError(f"{name}: {d.name} is not supported by linear algebra "
                    f"({desc(names, avals)}); cast to float32 or float64")


def _square(name, a, names=("a",), avals=None):
    """The compute dtype of a stack of square matrices ``a``, or a clear error."""
    avals = avals or (a,)
    if not is_aval(a) or a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: expects square matrices in the last two dimensions, got "
                         f"shape {shape_of(a)} ({desc(names, avals)})")
    return _lin_dtype(name, a.dtype, names, avals)


def _prep(xp, a, dtype=None):
    """``a`` in the dtype linalg computes in (float64 for integers and booleans)."""
    if dtype is not None:
        return a.astype(dtype, copy=False)
    if a.dtype.kind in "biu":
        return a.astype(_F64)
    if a.dtype not in (_F32, _F64):
        raise TypeError(f"{a.dtype} is not supported by linear algebra")
    return a


def _tril(like, n, k=0):
    return const(like, numpy.tril(numpy.ones((n, n), like.dtype), k))


def _pair_diff(v, n):
    """``D[..., i, j] = v[..., j] - v[..., i]`` and the off-diagonal ``1 / D`` (0 on it)."""
    o = ones(v, (n,))
    d = F.einsum(v, o, subscripts="...j,i->...ij") - F.einsum(v, o, subscripts="...i,j->...ij")
    i = eye(v, n)
    return (1 - i) / (d + i)


def _diag(v, n):
    """A stack of diagonal matrices from the vectors ``v`` (differentiable)."""
    return F.einsum(v, eye(v, n), subscripts="...i,ij->...ij")


# --------------------------------------------------------------- gemm2 / gemm (MXNet linalg)
def _gemm_axis(name, x, axis):
    if isinstance(axis, bool) or not isinstance(axis, (int, numpy.integer)) \
            or not -x.ndim <= axis < x.ndim - 1 or axis % x.ndim == x.ndim - 1:
        raise ValueError(f"{name}: axis={axis!r} must name the row axis, not the last "
                         f"(column) axis, of an array of {x.ndim} dimensions")
    return axis % x.ndim


def _gemm_infer_common(name, a, b, ta, tb, axis):
    names = ("A", "B")
    for n, x in zip(names, (a, b)):
        if not is_aval(x) or x.ndim < 2:
            raise ValueError(f"{name}: {n} must have at least 2 dimensions, got "
                             f"{desc(names, (a, b))}")
    ax = _gemm_axis(name, a, axis)

    def moved(x):
        s = list(x.shape)
        r = s.pop(ax)
        return Aval(s[:-1] + [r, s[-1]], x.dtype)

    _, shape = mat_shapes(name, names, moved(a), moved(b), ta, tb, False)
    s = list(shape)
    r = s.pop(-2)
    s.insert(ax, r)
    return tuple(s), result_dtype(name, names, a, b)


def _gemm2_infer(a, b, transpose_a=False, transpose_b=False, alpha=1.0, axis=-2):
    return Aval(*_gemm_infer_common("linalg_gemm2", a, b, transpose_a, transpose_b, axis))


def _gemm_forward(xp, a, b, ta, tb, alpha, axis):
    if a.ndim < 2 or a.ndim != b.ndim or not -a.ndim <= axis < a.ndim - 1 \
            or axis % a.ndim == a.ndim - 1:
        raise ValueError("gemm: bad axis or dimensions")  # infer explains
    ax = axis % a.ndim
    if ax != a.ndim - 2:
        a, b = xp.moveaxis(a, ax, -2), xp.moveaxis(b, ax, -2)
    if a.shape[:-2] != b.shape[:-2]:
        raise ValueError("gemm: batch dimensions differ")  # infer explains
    out = matmul_raw(xp, a, b, ta, tb)
    if alpha != 1:
        out = (out * alpha).astype(out.dtype, copy=False)
    return xp.moveaxis(out, -2, ax) if ax != a.ndim - 2 else out


_gemm2_vjp = product_vjp(None, via("linalg_gemm2", "alpha", "axis"), lambda s: True)


@defop("linalg_gemm2", infer=_gemm2_infer, vjp=_gemm2_vjp, inputs=("A", "B"),
       attrs={"transpose_a": False, "transpose_b": False, "alpha": 1.0, "axis": -2},
       nd=("linalg.gemm2", "linalg_gemm2"))
def _gemm2(xp, a, b, transpose_a=False, transpose_b=False, alpha=1.0, axis=-2):
    """alpha * op(A) @ op(B) over the batch dimensions (MXNet's linalg.gemm2)."""
    return _gemm_forward(xp, a, b, transpose_a, transpose_b, alpha, axis)


def _gemm_infer(a, b, cm, transpose_a=False, transpose_b=False, alpha=1.0, beta=1.0,
                axis=-2):
    shape, _ = _gemm_infer_common("linalg_gemm", a, b, transpose_a, transpose_b, axis)
    if not is_aval(cm) or cm.shape != shape:
        raise ValueError(f"linalg_gemm: C must have the shape of op(A) @ op(B), {shape}, got "
                         f"{desc(('A', 'B', 'C'), (a, b, cm))}")
    return Aval(shape, result_dtype("linalg_gemm", ("A", "B", "C"), a, b, cm))


def _gemm_vjp(c, g):
    at = c.attrs
    ga, gb = _gemm2_vjp(c, g)
    dc = wanted(c)[2]
    return ga, gb, (sum_to(g * at["beta"], c.in_shapes[2], dc) if dc is not None else None)


@defop("linalg_gemm", infer=_gemm_infer, vjp=_gemm_vjp, inputs=("A", "B", "C"),
       attrs={"transpose_a": False, "transpose_b": False, "alpha": 1.0, "beta": 1.0,
              "axis": -2}, nd=("linalg.gemm", "linalg_gemm"))
def _gemm(xp, a, b, cm, transpose_a=False, transpose_b=False, alpha=1.0, beta=1.0, axis=-2):
    """alpha * op(A) @ op(B) + beta * C (MXNet's linalg.gemm)."""
    out = _gemm_forward(xp, a, b, transpose_a, transpose_b, alpha, axis)
    return (out + cm * beta if beta != 1 else out + cm).astype(
        numpy.result_type(out.dtype, cm.dtype), copy=False)


# --------------------------------------------------------------- inv, det, slogdet
def _inv_infer(a):
    return Aval(a.shape, _square("linalg_inv", a))


def _inv_vjp(c, g):
    if not is_float(c.in_dtypes[0]):
        return (None,)
    y = c.out
    return (-F.matmul(F.matmul(y, g, transpose_a=True), y, transpose_b=True),)


@defop("linalg_inv", infer=_inv_infer, vjp=_inv_vjp, inputs=("a",), np=("linalg.inv",),
       nd=("linalg.inverse", "linalg_inverse"))
def _inv(xp, a):
    """The inverse of each matrix in a stack."""
    return xp.linalg.inv(_prep(xp, a))


def _det_infer(a):
    return Aval(a.shape[:-2], _square("linalg_det", a))


def _det_vjp(c, g):
    if not is_float(c.in_dtypes[0]):
        return (None,)
    # d det(A) = det(A) tr(A^-1 dA): the gradient is g det(A) A^-T
    return (F.einsum(g * c.out, F.linalg_inv(c.inputs[0]), subscripts="...,...ji->...ij"),)


@defop("linalg_det", infer=_det_infer, vjp=_det_vjp, inputs=("a",), np=("linalg.det",),
       nd=("linalg.det", "linalg_det"))
def _det(xp, a):
    """The determinant of each matrix in a stack."""
    return xp.asarray(xp.linalg.det(_prep(xp, a)))


def _slogdet_infer(a):
    dt = _square("linalg_slogdet", a)
    return Aval(a.shape[:-2], dt), Aval(a.shape[:-2], dt)


def _slogdet_vjp(c, g):
    if not is_float(c.in_dtypes[0]):
        return (None,)
    return (F.einsum(g[1], F.linalg_inv(c.inputs[0]), subscripts="...,...ji->...ij"),)


@defop("linalg_slogdet", infer=_slogdet_infer, vjp=_slogdet_vjp, inputs=("a",),
       np=("linalg.slogdet",), nd=("linalg.slogdet", "linalg_slogdet"))
def _slogdet(xp, a):
    """Sign and log of the absolute determinant (two outputs); the sign has no gradient."""
    sign, logdet = xp.linalg.slogdet(_prep(xp, a))
    return xp.asarray(sign), xp.asarray(logdet)


# --------------------------------------------------------------- cholesky (potrf)
def _is_upper(upper, lower):
    return bool(upper) or not lower


def _chol_infer(a, upper=False, lower=True):
    return Aval(a.shape, _square("linalg_cholesky", a))


def _chol_vjp(c, g):
    if not is_float(c.in_dtypes[0]):
        return (None,)
    low, gl = c.out, g
    if _is_upper(c.attrs["upper"], c.attrs["lower"]):
        low, gl = mT(low), mT(g)
    n = c.in_shapes[0][-1]
    # Murray (2016): A^-bar = L^-T Phi(L^T L^-bar) L^-1, returned symmetric.
    p = F.matmul(low, gl, transpose_a=True) * _tril(g, n)
    p = (p + mT(p)) * const(g, 0.5 - 0.25 * numpy.eye(n, dtype=g.dtype))
    li = F.linalg_inv(low)
    return (F.matmul(F.matmul(li, p, transpose_a=True), li),)


@defop("linalg_cholesky", infer=_chol_infer, vjp=_chol_vjp, inputs=("a",),
       attrs={"upper": False, "lower": True}, np=("linalg.cholesky",),
       nd=("linalg.potrf", "linalg_potrf"))
def _cholesky(xp, a, upper=False, lower=True):
    """Cholesky factor L (A = L L^T) of symmetric positive-definite matrices; upper: L^T."""
    low = xp.linalg.cholesky(_prep(xp, a))
    return xp.swapaxes(low, -1, -2) if _is_upper(upper, lower) else low


# --------------------------------------------------------------- qr
def _qr_infer(a, mode="reduced"):
    if not is_aval(a) or a.ndim < 2:
        raise ValueError(f"linalg_qr: expects matrices (at least 2 dimensions), got "
                         f"{desc(('a',), (a,))}")
    dt = _lin_dtype("linalg_qr", a.dtype, ("a",), (a,))
    *batch, m, n = a.shape
    k = min(m, n)
    if mode == "reduced":
        return Aval((*batch, m, k), dt), Aval((*batch, k, n), dt)
    if mode == "complete":
        return Aval((*batch, m, m), dt), Aval((*batch, m, n), dt)
    if mode == "r":
        return Aval((*batch, k, n), dt)
    raise ValueError(f"linalg_qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")


def _qr_square_deep(q, r, gq, gr):
    """QR gradient for m >= n (after TensorFlow's QrGrad); ``gq`` may be None."""
    k = r.shape[-1]
    rdr = F.matmul(r, gr, transpose_b=True)
    m = rdr - mT(rdr)
    if gq is not None:
        qdq = F.matmul(q, gq, transpose_a=True)
        m = m + qdq - mT(qdq)
    ri = F.linalg_inv(r)
    out = F.matmul(q, gr + F.matmul(m * _tril(r, k), ri, transpose_b=True))
    if gq is not None:
        out = out + F.matmul(gq - F.matmul(q, qdq), ri, transpose_b=True)
    return out


def _qr_grad(a, q, r, gq, gr):
    m, n = a.shape[-2:]
    if m >= n:
        return _qr_square_deep(q, r, gq, gr)
    # Wide: A = [X | Y] with X = Q U square; the column blocks are products with slices
    # of the identity, so no slicing operator is needed.
    e = numpy.eye(n, dtype=a.dtype)
    e1, e2 = const(a, e[:, :m]), const(a, e[:, m:])
    dv = F.matmul(gr, e2)
    dq = F.matmul(F.matmul(a, e2), dv, transpose_b=True)
    if gq is not None:
        dq = dq + gq
    dx = _qr_square_deep(q, F.matmul(r, e1), dq, F.matmul(gr, e1))
    return F.matmul(dx, e1, transpose_b=True) + F.matmul(F.matmul(q, dv), e2, transpose_b=True)


def _qr_vjp(c, g):
    if not is_float(c.in_dtypes[0]):
        return (None,)
    a = c.inputs[0]
    mode = c.attrs["mode"]
    m, n = c.in_shapes[0][-2:]
    if mode == "r":
        q, r = F.linalg_qr(a)
        return (_qr_grad(a, q, r, None, g),)
    q, r = c.outputs
    gq, gr = g
    if mode == "complete" and m > n:
        _require_zero("linalg_qr", gq, (Ellipsis, slice(None), slice(n, None)),
                      "the last m - n columns of Q (mode='complete')", "mode='reduced'")
        e = const(a, numpy.eye(m, dtype=a.dtype)[:, :n])
        q, gq = F.matmul(q, e), F.matmul(gq, e)
        r, gr = F.matmul(e, r, transpose_a=True), F.matmul(e, gr, transpose_a=True)
    return (_qr_grad(a, q, r, gq, gr),)


def _require_zero(name, g, index, what, fix):
    if bool(g._ctx.xp.any(g._data[index] != 0)):
        raise ValueError(f"{name}: the gradient through {what} is not defined (they are not "
                         f"unique); use {fix}")


@defop("linalg_qr", infer=_qr_infer, vjp=_qr_vjp, inputs=("a",), attrs={"mode": "reduced"},
       np=("linalg.qr",))
def _qr(xp, a, mode="reduced"):
    """QR factorization of a stack of matrices: Q (orthonormal columns) and R (upper)."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"unsupported mode {mode!r}")  # infer explains
    if mode == "r":
        return xp.linalg.qr(_prep(xp, a), mode="r")
    q, r = xp.linalg.qr(_prep(xp, a), mode=mode)
    return q, r


# --------------------------------------------------------------- svd
def _svd_infer(a, full_matrices=True, compute_uv=True, hermitian=False):
    if not is_aval(a) or a.ndim < 2:
        raise ValueError(f"linalg_svd: expects matrices (at least 2 dimensions), got "
                         f"{desc(('a',), (a,))}")
    dt = _lin_dtype("linalg_svd", a.dtype, ("a",), (a,))
    *batch, m, n = a.shape
    k = min(m, n)
    s = Aval((*batch, k), dt)
    if not compute_uv:
        return s
    if full_matrices:
        return Aval((*batch, m, m), dt), s, Aval((*batch, n, n), dt)
    return Aval((*batch, m, k), dt), s, Aval((*batch, k, n), dt)


def _svd_grad(u, s, vh, gu, gs, gvh):
    """Gradient of the reduced SVD A = U diag(s) Vh (Townsend 2016)."""
    m, k, n = u.shape[-2], s.shape[-1], vh.shape[-1]
    f = _pair_diff(s * s, k)  # 1 / (s_j^2 - s_i^2) off the diagonal
    utgu = F.matmul(u, gu, transpose_a=True)
    vtgv = F.matmul(vh, gvh, transpose_b=True)
    inner = (_diag(gs, k)
             + F.einsum(f * (utgu - mT(utgu)), s, subscripts="...ij,...j->...ij")
             + F.einsum(s, f * (vtgv - mT(vtgv)), subscripts="...i,...ij->...ij"))
    ga = F.matmul(F.matmul(u, inner), vh)
    sinv = 1 / s
    if m > k:  # the part of U's gradient outside its column space
        p = F.einsum(gu - F.matmul(u, utgu), sinv, subscripts="...ij,...j->...ij")
        ga = ga + F.matmul(p, vh)
    if n > k:
        p = gvh - F.matmul(F.matmul(gvh, vh, transpose_b=True), vh)
        ga = ga + F.matmul(u, F.einsum(sinv, p, subscripts="...i,...ij->...ij"))
    return ga


def _svd_vjp(c, g):
    if not is_float(c.in_dtypes[0]):
        return (None,)
    a = c.inputs[0]
    at = c.attrs
    if not at["compute_uv"]:
        u, _, vh = F.linalg_svd(a, full_matrices=False)
        return (F.matmul(F.einsum(u, g, subscripts="...ik,...k->...ik"), vh),)
    u, s, vh = c.outputs
    gu, gs, gvh = g
    m, n = c.in_shapes[0][-2:]
    k = min(m, n)
    if at["full_matrices"] and m > n:
        _require_zero("linalg_svd", gu, (Ellipsis, slice(None), slice(k, None)),
                      "the last m - n columns of U (full_matrices=True)", "full_matrices=False")
        e = const(a, numpy.eye(m, dtype=a.dtype)[:, :k])
        u, gu = F.matmul(u, e), F.matmul(gu, e)
    elif at["full_matrices"] and n > m:
        _require_zero("linalg_svd", gvh, (Ellipsis, slice(k, None), slice(None)),
                      "the last n - m rows of Vh (full_matrices=True)", "full_matrices=False")
        e = const(a, numpy.eye(n, dtype=a.dtype)[:, :k])
        vh, gvh = F.matmul(e, vh, transpose_a=True), F.matmul(e, gvh, transpose_a=True)
    return (_svd_grad(u, s, vh, gu, gs, gvh),)


@defop("linalg_svd", infer=_svd_infer, vjp=_svd_vjp, inputs=("a",),
       attrs={"full_matrices": True, "compute_uv": True, "hermitian": False},
       np=("linalg.svd",))
def _svd(xp, a, full_matrices=True, compute_uv=True, hermitian=False):
    """Singular value decomposition U, s, Vh (s descending), as NumPy's svd."""
    # hermitian only selects a faster algorithm in NumPy; the general one gives an SVD too
    if not compute_uv:
        return xp.linalg.svd(_prep(xp, a), compute_uv=False)
    u, s, vh = xp.linalg.svd(_prep(xp, a), full_matrices=bool(full_matrices))
    return u, s, vh


# --------------------------------------------------------------- eigh, syevd
def _eigh_infer(a, UPLO="L"):
    if UPLO not in ("L", "U"):
        raise ValueError(f"linalg_eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    dt = _square("linalg_eigh", a)
    return Aval(a.shape[:-1], dt), Aval(a.shape, dt)


def _eigh_grad(w, v, gw, gv):
    """Gradient of A = V diag(w) V^T for symmetric A with distinct eigenvalues."""
    n = w.shape[-1]
    inner = _diag(gw, n) + _pair_diff(w, n) * F.matmul(v, gv, transpose_a=True)
    ga = F.matmul(F.matmul(v, inner), v, transpose_b=True)
    return (ga + mT(ga)) * 0.5


def _eigh_vjp(c, g):
    if not is_float(c.in_dtypes[0]):
        return (None,)
    w, v = c.outputs
    return (_eigh_grad(w, v, *g),)


@defop("linalg_eigh", infer=_eigh_infer, vjp=_eigh_vjp, inputs=("a",), attrs={"UPLO": "L"},
       np=("linalg.eigh",))
def _eigh(xp, a, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric matrices."""
    w, v = xp.linalg.eigh(_prep(xp, a), UPLO=UPLO)
    return w, v


def _syevd_infer(a):
    w, v = _eigh_infer(a)
    return v, w


def _syevd_vjp(c, g):
    if not is_float(c.in_dtypes[0]):
        return (None,)
    u, w = c.outputs
    gu, gw = g
    return (_eigh_grad(w, mT(u), gw, mT(gu)),)


@defop("linalg_syevd", infer=_syevd_infer, vjp=_syevd_vjp, inputs=("A",),
       nd=("linalg.syevd", "linalg_syevd"))
def _syevd(xp, a):
    """MXNet's syevd: U (eigenvectors as rows) and L (ascending), A = U^T diag(L) U."""
    w, v = xp.linalg.eigh(_prep(xp, a))
    return xp.swapaxes(v, -1, -2), w


# --------------------------------------------------------------- solve
def _solve_infer(a, b):
    names = ("a", "b")
    _square("linalg_solve", a, names, (a, b))
    if not is_aval(b) or b.ndim == 0:
        raise ValueError(f"linalg_solve: b must be a vector or a stack of matrices "
                         f"({desc(names, (a, b))})")
    dt = _lin_dtype("linalg_solve", result_dtype("linalg_solve", names, a, b), names, (a, b))
    m = a.shape[-1]
    if b.ndim == 1:
        if b.shape[0] != m:
            raise ValueError(f"linalg_solve: b.shape[0]={b.shape[0]} must equal "
                             f"a.shape[-1]={m} ({desc(names, (a, b))})")
        return Aval(a.shape[:-1], dt)
    if b.shape[-2] != m:
        raise ValueError(f"linalg_solve: b.shape[-2]={b.shape[-2]} must equal a.shape[-1]={m} "
                         f"({desc(names, (a, b))}); a 1-D b is a vector, anything else a "
                         "stack of matrices (NumPy 2)")
    try:
        batch = numpy.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"linalg_solve: batch dimensions {a.shape[:-2]} and {b.shape[:-2]} "
                         f"cannot be broadcast together ({desc(names, (a, b))})") from None
    return Aval((*batch, m, b.shape[-1]), dt)


def _solve_vjp(c, g):
    a = c.inputs[0]
    (ash, bsh), (ad, bd) = c.in_shapes, wanted(c)
    x = c.out
    if len(bsh) == 1:
        gb = F.einsum(F.linalg_inv(a), g, subscripts="...ji,...j->...i")  # A^-T g
        ga = -F.einsum(gb, x, subscripts="...i,...j->...ij")
    else:
        gb = F.linalg_solve(mT(a), g)
        ga = -F.matmul(gb, x, transpose_b=True)
    return (sum_to(ga, ash, ad) if is_float(ad) else None,
            sum_to(gb, bsh, bd) if is_float(bd) else None)


@defop("linalg_solve", infer=_solve_infer, vjp=_solve_vjp, inputs=("a", "b"),
       np=("linalg.solve",))
def _solve(xp, a, b):
    """Solution x of a @ x = b (b a vector when 1-D, else a stack of matrices)."""
    dt = numpy.result_type(a.dtype, b.dtype)
    dt = _F64 if dt.kind in "biu" else dt
    a, b = _prep(xp, a, dt), _prep(xp, b, dt)
    vector = b.ndim == 1
    if vector:
        b = b[:, None]
    batch = numpy.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if a.shape[:-2] != batch:
        a = xp.broadcast_to(a, batch + a.shape[-2:])
    if b.shape[:-2] != batch:
        b = xp.broadcast_to(b, batch + b.shape[-2:])
    out = xp.linalg.solve(a, b)
    return out[..., 0] if vector else out


# --------------------------------------------------------------- norms
_INF = math.inf
_MATRIX_ORDS = (None, "fro", "nuc", 1, -1, 2, -2, _INF, -_INF)


def _norm_plan(x, ord, axis):
    """('flat' | 'vector' | 'matrix', axes) for np.linalg.norm's arguments."""
    name, nd = "linalg_norm", x.ndim
    if axis is None:
        if ord is None:
            return "flat", tuple(range(nd))
        if nd not in (1, 2):
            raise ValueError(f"{name}: ord={ord!r} with axis=None needs a 1-D or 2-D input, "
                             f"got shape {x.shape}; pass axis")
        axes = tuple(range(nd))
    elif isinstance(axis, (list, tuple)):
        axes = tuple(norm_axis(name, ax, nd) for ax in axis)
        if len(axes) not in (1, 2) or len(set(axes)) != len(axes):
            raise ValueError(f"{name}: axis must be an int or a pair of distinct axes, got "
                             f"{axis!r}")
    else:
        axes = (norm_axis(name, axis, nd),)
    if len(axes) == 1:
        if isinstance(ord, str):
            raise ValueError(f"{name}: invalid norm order {ord!r} for vectors")
        return "vector", axes
    if ord not in _MATRIX_ORDS:
        raise ValueError(f"{name}: invalid norm order {ord!r} for matrices; use one of "
                         "None, 'fro', 'nuc', 1, -1, 2, -2, inf, -inf")
    return "matrix", axes


def _lnorm_infer(x, ord=None, axis=None, keepdims=False):
    kind, axes = _norm_plan(x, ord, axis)
    dt = x.dtype if is_float(x.dtype) else _F64
    if kind == "matrix" and ord in (2, -2, "nuc"):
        dt = _lin_dtype("linalg_norm", x.dtype, ("x",), (x,))
    shape = reduced_shape(x.shape, set(axes), keepdims)
    if keepdims and axis is None:
        shape = (1,) * x.ndim
    return Aval(shape, dt)


def _keep(t, ndim, axes, keepdims):
    """``t`` (reduced over ``axes``) with those axes back as size-1 dimensions."""
    if keepdims or not axes:
        return t
    letters = "abcdefghijklmnopqrstuvwxy"[:ndim]
    sub = "".join(ch for i, ch in enumerate(letters) if i not in axes)
    ops = [t] + [ones(t, (1,)) for _ in axes]
    subs = ",".join([sub] + [letters[i] for i in axes])
    return F.einsum(*ops, subscripts=f"{subs}->{letters}")


def _vector_norm_grad(x, r, g, axes, keepdims, p):
    """Gradient of the vector p-norm of ``x`` over ``axes`` (r is the norm)."""
    nd = x.ndim
    gk = _keep(g, nd, axes, keepdims)
    if p == 0:
        return F.zeros_like(x)
    if p == 1:
        return gk * F.sign(x)
    rk = _keep(r, nd, axes, keepdims)
    if p is None or p == 2:
        return gk * x / F.where(rk == 0, 1, rk)
    if p in (_INF, -_INF):  # ties share the gradient
        mask = F.cast(F.abs(x) == rk, dtype=x.dtype)
        count = sum_to(mask, tuple(1 if i in axes else s for i, s in enumerate(x.shape)))
        return gk * F.sign(x) * mask / count
    return gk * F.sign(x) * F.power(F.abs(x) / rk, p - 1)


def _matrix_norm_grad(x, r, g, axes, keepdims, ord):
    nd = x.ndim
    ra, ca = axes
    if ord in (None, "fro"):
        return _vector_norm_grad(x, r, g, axes, keepdims, 2)
    if ord in (1, -1, _INF, -_INF):
        # ord=+-1: extreme column sum (sum over rows); ord=+-inf: extreme row sum
        sum_ax = ra if ord in (1, -1) else ca
        sums = sum_to(F.abs(x), tuple(1 if i == sum_ax else s for i, s in enumerate(x.shape)))
        mask = F.cast(sums == _keep(r, nd, axes, keepdims), dtype=x.dtype)
        count = sum_to(mask, tuple(1 if i in axes else s for i, s in enumerate(x.shape)))
        return _keep(g, nd, axes, keepdims) * F.sign(x) * mask / count
    letters = "abcdefghijklmnopqrstuvwxy"[:nd]
    batch = "".join(ch for i, ch in enumerate(letters) if i not in axes)
    mat = batch + letters[ra] + letters[ca]
    u, _, vh = F.linalg_svd(F.einsum(x, subscripts=f"{letters}->{mat}"), full_matrices=False)
    if ord == "nuc":
        m = F.matmul(u, vh)
    else:  # the outer product of the largest (ord=2) or smallest (ord=-2) singular pair
        k = u.shape[-1]
        e = numpy.zeros(k, x.dtype)
        e[0 if ord == 2 else k - 1] = 1
        m = F.einsum(u, const(x, e), vh, subscripts="...ik,k,...kj->...ij")
    if keepdims:
        g = F.einsum(g, subscripts=f"{letters}->{batch}")
    return F.einsum(m, g, subscripts=f"{mat},{batch}->{letters}")


def _lnorm_vjp(c, g):
    if not is_float(c.in_dtypes[0]):
        return (None,)
    x, at = c.inputs[0], c.attrs
    kind, axes = _norm_plan(Aval(x.shape, x.dtype), at["ord"], at["axis"])
    grad = _matrix_norm_grad if kind == "matrix" else _vector_norm_grad
    gx = grad(x, c.out, g, axes, at["keepdims"], 2 if kind == "flat" else at["ord"])
    return (sum_to(gx, x.shape, x.dtype),)


@defop("linalg_norm", infer=_lnorm_infer, vjp=_lnorm_vjp, inputs=("x",),
       attrs={"ord": None, "axis": None, "keepdims": False}, np=("linalg.norm",))
def _linalg_norm(xp, x, ord=None, axis=None, keepdims=False):
    """Vector or matrix norm (NumPy's linalg.norm)."""
    axis = tuple(axis) if isinstance(axis, list) else axis
    out = xp.asarray(xp.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims))
    dt = x.dtype if is_float(x.dtype) else _F64
    return out if out.dtype == dt else out.astype(dt)
