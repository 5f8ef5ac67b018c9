"""Keras backend ``linalg`` on ``core.np.linalg`` (gradients flow through autograd).

``solve_triangular`` solves with the triangle of ``a`` (core's general solve on
``tril``/``triu``); ``pinv``, ``lstsq`` and ``matrix_rank`` are built on core's SVD.
``eig`` and ``lu_factor`` are operators of their own (LAPACK through NumPy/SciPy on
the host) whose VJPs are written with core operators. ``eig`` returns real results
only: core has no complex dtype, so a matrix with complex eigenvalues is an error.
``jvp`` is exact forward mode by the double-VJP trick: with ``g(u) = J^T u``
recorded, ``d<g(u), t>/du = J t``.
"""
from __future__ import annotations

import numpy as _np
from keras.src import tree
from keras.src.backend.common import dtypes, standardize_dtype

from core import autograd
from core import np as cnp
from core.ops.dispatch import invoke
from core.ops.registry import Aval, OpDef
from kbackend.core import _float, cast, convert_to_numpy, convert_to_tensor


def _pair(a, b):
    a = convert_to_tensor(a)
    b = convert_to_tensor(b)
    dtype = dtypes.result_type(a.dtype, b.dtype, float)
    return cast(a, dtype), cast(b, dtype)


def _mT(x):
    return cnp.swapaxes(x, -1, -2)


def cholesky(a, upper=False):
    """The lower (or, with ``upper``, upper) Cholesky factor."""
    a = _float(a)
    lower = cnp.linalg.cholesky(a)
    return _mT(lower) if upper else lower


def cholesky_inverse(a, upper=False):
    """The inverse of ``A`` given its Cholesky factor ``a``."""
    a = _float(a)
    identity = cnp.eye(a.shape[-1], dtype=standardize_dtype(a.dtype))
    inv_chol = solve_triangular(a, identity, lower=not upper)
    if upper:
        return cnp.matmul(inv_chol, _mT(inv_chol))
    return cnp.matmul(_mT(inv_chol), inv_chol)


def det(a):
    """Determinants of square matrices."""
    return cnp.linalg.det(_float(a))


def eigh(a):
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices."""
    return cnp.linalg.eigh(_float(a))


def inv(a):
    """Inverses of square matrices."""
    return cnp.linalg.inv(_float(a))


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector or matrix norms, NumPy's ``ord`` conventions."""
    x = _float(x)
    if isinstance(axis, list):
        axis = tuple(axis)
    return cnp.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)


def qr(x, mode="reduced"):
    """The QR decomposition (``mode`` 'reduced' or 'complete')."""
    if mode not in {"reduced", "complete"}:
        raise ValueError(
            "`mode` argument value not supported. Expected one of {'reduced', "
            f"'complete'}}. Received: mode={mode}")
    return cnp.linalg.qr(_float(x), mode=mode)


def solve(a, b):
    """Solves ``a x = b`` (``b`` a vector or a stack of matrices)."""
    a, b = _pair(a, b)
    if b.ndim == a.ndim - 1:
        return cnp.squeeze(cnp.linalg.solve(a, cnp.expand_dims(b, -1)), axis=-1)
    return cnp.linalg.solve(a, b)


def solve_triangular(a, b, lower=False):
    """Solves ``a x = b`` with the lower or upper triangle of ``a``."""
    a, b = _pair(a, b)
    tri = cnp.tril(a) if lower else cnp.triu(a)
    return solve(tri, b)


def svd(x, full_matrices=True, compute_uv=True):
    """The singular value decomposition (``u, s, vh``, or ``s`` alone)."""
    return cnp.linalg.svd(_float(x), full_matrices=full_matrices, compute_uv=compute_uv)


def pinv(x, rcond=None):
    """The Moore-Penrose pseudo-inverse through the SVD."""
    x = _float(x)
    u, s, vh = cnp.linalg.svd(x, full_matrices=False)
    if rcond is None:
        rcond = 10 * max(x.shape[-2:]) * float(_np.finfo(standardize_dtype(x.dtype)).eps)
    cutoff = convert_to_tensor(rcond, standardize_dtype(s.dtype)) * cnp.max(
        s, axis=-1, keepdims=True)
    big = s > cutoff
    safe = cnp.where(big, s, cnp.ones_like(s))
    s_inv = cnp.where(big, 1.0 / safe, cnp.zeros_like(s))
    return cnp.matmul(_mT(vh) * cnp.expand_dims(s_inv, -2), _mT(u))


def lstsq(a, b, rcond=None):
    """The least-squares solution of ``a x = b`` through the pseudo-inverse."""
    a, b = _pair(a, b)
    if b.ndim == 1:
        return cnp.squeeze(cnp.matmul(pinv(a, rcond), cnp.expand_dims(b, -1)), axis=-1)
    return cnp.matmul(pinv(a, rcond), b)


def matrix_rank(x, tol=None):
    """The number of singular values above ``tol`` (int32)."""
    x = _float(x)
    if x.ndim < 2:
        raise ValueError("Expected input to have rank >= 2. "
                         f"Received input with shape {x.shape}.")
    s = cnp.linalg.svd(x, compute_uv=False)
    if tol is None:
        eps = float(_np.finfo(standardize_dtype(s.dtype)).eps)
        tol = cnp.max(s, axis=-1, keepdims=True) * (max(x.shape[-2:]) * eps)
    return cast(cnp.sum(cast(s > tol, "int32"), axis=-1), "int32")



# --------------------------------------------------------------------------- eig, LU


def _host(xp, a):
    return a if xp is _np else xp.asnumpy(a)


def _op(name, forward, infer, vjp):
    return OpDef(name=name, forward=forward, infer=infer, vjp=vjp, inputs=("x",),
                 attrs={}, nd=(), np=(), variadic=False,
                 needs_ctx=False, differentiable=True, save=True, place=None, doc=name)


def _square_infer(name):
    def infer(x):
        if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
            raise ValueError(f"{name}: expects square matrices (..., n, n), got shape "
                             f"{x.shape}")
        return Aval(x.shape[:-1], x.dtype), Aval(x.shape, x.dtype)
    return infer


def _eig_forward(xp, x):
    w, v = _np.linalg.eig(_host(xp, x))
    if _np.iscomplexobj(w):
        raise ValueError(
            "the matrix has complex eigenvalues, and the kbackend backend has no "
            "complex dtype (it supports real eigenvalues only; use eigh for symmetric "
            f"matrices). Input shape {x.shape}, {x.dtype}")
    return xp.asarray(w.astype(x.dtype)), xp.asarray(v.astype(x.dtype))


def _eig_vjp(ctx, g):
    # A = V diag(w) V^-1 with unit-norm columns of V (NumPy's normalisation):
    # gA = V^-T (diag(gw) + F * (V^T gV - V^T V diag(diag(V^T gV)))) V^T,
    # F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it.
    w, v = ctx.outputs
    gw, gv = g
    n = w.shape[-1]
    eye = cnp.eye(n, dtype=w.dtype)
    vt = _mT(v)
    diff = cnp.expand_dims(w, -2) - cnp.expand_dims(w, -1)
    f = cnp.where(eye > 0, cnp.zeros_like(diff), 1.0 / cnp.where(eye > 0, eye, diff))
    vtgv = cnp.matmul(vt, gv)
    inner = cnp.matmul(cnp.matmul(vt, v), vtgv * eye)
    middle = cnp.expand_dims(gw, -2) * eye + f * (vtgv - inner)
    return (cnp.linalg.solve(vt, cnp.matmul(middle, vt)),)


_EIG = _op("kbackend.eig", _eig_forward, _square_infer("eig"), _eig_vjp)


def eig(x):
    """Eigenvalues and right eigenvectors of square matrices with real eigenvalues.

    Args:
        x: a float tensor of shape ``(..., n, n)``.

    Returns:
        ``(w, v)``: eigenvalues ``(..., n)`` and unit-norm eigenvectors as the
        columns of ``v`` ``(..., n, n)``. Differentiable (distinct eigenvalues).

    Raises:
        ValueError: for non-square input or complex eigenvalues (core has no complex
            dtype).
    """
    return invoke(_EIG, [_float(x)], {})


def _lu_infer(x):
    if x.ndim < 2:
        raise ValueError(f"lu_factor: expects matrices (..., m, n), got shape {x.shape}")
    return Aval(x.shape, x.dtype), Aval(x.shape[:-2] + (min(x.shape[-2:]),), "int32")


def _lu_forward(xp, x):
    import scipy.linalg

    lu, piv = scipy.linalg.lu_factor(_host(xp, x), check_finite=False)
    return xp.asarray(lu.astype(x.dtype)), xp.asarray(piv.astype("int32"))


def _lu_vjp(ctx, g):
    # Square A = P L U: gA = P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T, where
    # gL/gU are the strict lower/upper (with diagonal) parts of the packed gradient.
    x, = ctx.inputs
    lu, piv = ctx.outputs
    glu = g[0]
    m, n = x.shape[-2:]
    if m != n:
        raise ValueError(f"lu_factor: the gradient is implemented for square matrices "
                         f"only, got shape {tuple(x.shape)}")
    eye = cnp.eye(n, dtype=lu.dtype)
    lower = cnp.tril(lu, -1) + eye
    upper = cnp.triu(lu)
    inner = cnp.tril(cnp.matmul(_mT(lower), cnp.tril(glu, -1)), -1) + cnp.triu(
        cnp.matmul(cnp.triu(glu), _mT(upper)))
    # inner U^-T = solve(U, inner^T)^T; L^-T y = solve(L^T, y).
    y = _mT(cnp.linalg.solve(upper, _mT(inner)))
    z = cnp.linalg.solve(_mT(lower), y)
    # A = P (L U) with P[perm[i], i] = 1, where row i of L U is row perm[i] of A.
    perm = _permutation(convert_to_numpy(piv), n)
    p = _np.zeros(perm.shape + (n,), dtype=standardize_dtype(lu.dtype))
    _np.put_along_axis(p, perm[..., :, None], 1.0, axis=-1)
    return (cnp.matmul(convert_to_tensor(_np.swapaxes(p, -1, -2)), z),)


def _permutation(piv, n):
    """Row order of ``L U`` from LAPACK's swaps: ``(L U)[i] = A[perm[i]]``."""
    perm = _np.broadcast_to(_np.arange(n), piv.shape[:-1] + (n,)).copy()
    for idx in _np.ndindex(*piv.shape[:-1]):
        row = perm[idx]
        for i, q in enumerate(piv[idx]):
            row[[i, q]] = row[[q, i]]
    return perm


_LU = _op("kbackend.lu_factor", _lu_forward, _lu_infer, _lu_vjp)


def lu_factor(x):
    """LU factorisation with partial pivoting, packed as LAPACK's ``getrf``.

    Args:
        x: a float tensor of shape ``(..., m, n)``.

    Returns:
        ``(lu, pivots)``: ``lu`` holds ``U`` on and above the diagonal and the unit
        lower ``L`` below it; ``pivots`` (int32, 0-based, ``(..., min(m, n))``) says
        row ``i`` was swapped with row ``pivots[i]``. Differentiable for square input.
    """
    return invoke(_LU, [_float(x)], {})


# --------------------------------------------------------------------------- jvp


def jvp(fun, primals, tangents, has_aux=False):
    """Forward-mode Jacobian-vector product of ``fun`` at ``primals`` along ``tangents``.

    Exact (not a finite difference): the VJP ``g(u) = J^T u`` is recorded with a
    marked cotangent ``u``, and the gradient of ``<g(u), tangents>`` with respect to
    ``u`` is ``J tangents``.

    Args:
        fun: a function of ``len(primals)`` positional arguments (tensors or nested
            structures of tensors) returning a tensor or a nested structure of them
            (a pair ``(output, aux)`` when ``has_aux``).
        primals: a tuple or list of the arguments.
        tangents: the same structure and shapes as ``primals``.
        has_aux: whether ``fun`` returns ``(output, aux)``.

    Returns:
        ``(primals_out, tangents_out)``, or ``(primals_out, tangents_out, aux)``.
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: `primals` and `tangents` must be tuples or lists of "
                        f"arguments, got {type(primals).__name__} and "
                        f"{type(tangents).__name__}")
    flat_p, flat_t = tree.flatten(primals), tree.flatten(tangents)
    if len(primals) != len(tangents) or len(flat_p) != len(flat_t):
        raise ValueError(f"jvp: `primals` and `tangents` must have the same structure, "
                         f"got {len(flat_p)} and {len(flat_t)} tensors")
    xs, ts = [], []
    for p, t in zip(flat_p, flat_t):
        x = convert_to_tensor(p).copy()  # a fresh leaf: the caller's array is untouched
        t = convert_to_tensor(t)
        if tuple(t.shape) != tuple(x.shape):
            raise ValueError(f"jvp: a tangent of shape {tuple(t.shape)} does not match "
                             f"its primal's shape {tuple(x.shape)}")
        if "float" in standardize_dtype(x.dtype):
            x.attach_grad()
            ts.append(cast(t, standardize_dtype(x.dtype)))
        else:  # integer and boolean primals are constants
            ts.append(None)
        xs.append(x)
    args = tree.pack_sequence_as(primals, xs)
    with autograd.record(train_mode=autograd.is_training()):
        res = fun(*args)
    out, aux = res if has_aux else (res, None)
    flat_out = [convert_to_tensor(o) for o in tree.flatten(out)]
    tangent_out = _jvp_tangents(flat_out, xs, ts)
    primals_out = tree.pack_sequence_as(out, [o.detach() for o in flat_out])
    tangents_out = tree.pack_sequence_as(out, tangent_out)
    if has_aux:
        aux = tree.map_structure(
            lambda a: a.detach() if hasattr(a, "detach") else a, aux)
        return primals_out, tangents_out, aux
    return primals_out, tangents_out


def _jvp_tangents(outs, xs, ts):
    leaves = [x for x, t in zip(xs, ts) if t is not None]
    heads, us = [], []
    for o in outs:
        if o._node is not None and "float" in standardize_dtype(o.dtype):
            u = cnp.zeros_like(o)
            u.attach_grad()
            heads.append(o)
            us.append(u)
    zeros = [cnp.zeros_like(o) for o in outs]
    if not heads or not leaves:
        return zeros
    gs = autograd.grad(heads, leaves, head_grads=us, create_graph=True)
    with autograd.record(train_mode=False):
        terms = [(g * t).sum() for g, t in zip(gs, [t for t in ts if t is not None])
                 if g._node is not None]
        if not terms:
            return zeros
        total = terms[0]
        for term in terms[1:]:
            total = total + term
    jts = autograd.grad(total, us)
    result, k = [], 0
    for o, z in zip(outs, zeros):
        if heads and k < len(heads) and o is heads[k]:
            result.append(jts[k].detach())
            k += 1
        else:
            result.append(z)
    return result
