"""Keras backend ``linalg`` on ``core.np.linalg`` (gradients flow through autograd).

``solve_triangular`` solves with the triangle of ``a`` (core's general solve on
``tril``/``triu``); ``pinv``, ``lstsq`` and ``matrix_rank`` are built on core's SVD.
``eig`` (complex results), ``lu_factor`` and ``jvp`` are not implemented yet
(``_NOT_YET``: they raise NotImplementedError naming the function).
"""
from __future__ import annotations

from keras.src.backend import config
from keras.src.backend.common import dtypes, standardize_dtype

from core import np as cnp
from kbackend._missing import add_stubs
from kbackend.core import cast, convert_to_tensor


def _float(x):
    x = convert_to_tensor(x)
    dtype = standardize_dtype(x.dtype)
    if "int" in dtype or dtype == "bool":
        x = cast(x, config.floatx())
    return x


def _pair(a, b):
    a = convert_to_tensor(a)
    b = convert_to_tensor(b)
    dtype = dtypes.result_type(a.dtype, b.dtype, float)
    return cast(a, dtype), cast(b, dtype)


def _mT(x):
    return cnp.swapaxes(x, -1, -2)


def cholesky(a, upper=False):
    a = _float(a)
    lower = cnp.linalg.cholesky(a)
    return _mT(lower) if upper else lower


def cholesky_inverse(a, upper=False):
    a = _float(a)
    identity = cnp.eye(a.shape[-1], dtype=standardize_dtype(a.dtype))
    inv_chol = solve_triangular(a, identity, lower=not upper)
    if upper:
        return cnp.matmul(inv_chol, _mT(inv_chol))
    return cnp.matmul(_mT(inv_chol), inv_chol)


def det(a):
    return cnp.linalg.det(_float(a))


def eigh(a):
    return cnp.linalg.eigh(_float(a))


def inv(a):
    return cnp.linalg.inv(_float(a))


def norm(x, ord=None, axis=None, keepdims=False):
    x = _float(x)
    if isinstance(axis, list):
        axis = tuple(axis)
    return cnp.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)


def qr(x, mode="reduced"):
    if mode not in {"reduced", "complete"}:
        raise ValueError(
            "`mode` argument value not supported. Expected one of {'reduced', "
            f"'complete'}}. Received: mode={mode}")
    return cnp.linalg.qr(_float(x), mode=mode)


def solve(a, b):
    a, b = _pair(a, b)
    if b.ndim == a.ndim - 1:
        return cnp.squeeze(cnp.linalg.solve(a, cnp.expand_dims(b, -1)), axis=-1)
    return cnp.linalg.solve(a, b)


def solve_triangular(a, b, lower=False):
    a, b = _pair(a, b)
    tri = cnp.tril(a) if lower else cnp.triu(a)
    return solve(tri, b)


def svd(x, full_matrices=True, compute_uv=True):
    return cnp.linalg.svd(_float(x), full_matrices=full_matrices, compute_uv=compute_uv)


def pinv(x, rcond=None):
    x = _float(x)
    u, s, vh = cnp.linalg.svd(x, full_matrices=False)
    if rcond is None:
        import numpy as _np
        rcond = 10 * max(x.shape[-2:]) * float(_np.finfo(standardize_dtype(x.dtype)).eps)
    cutoff = convert_to_tensor(rcond, standardize_dtype(s.dtype)) * cnp.max(
        s, axis=-1, keepdims=True)
    big = s > cutoff
    safe = cnp.where(big, s, cnp.ones_like(s))
    s_inv = cnp.where(big, 1.0 / safe, cnp.zeros_like(s))
    return cnp.matmul(_mT(vh) * cnp.expand_dims(s_inv, -2), _mT(u))


def lstsq(a, b, rcond=None):
    a, b = _pair(a, b)
    if b.ndim == 1:
        return cnp.squeeze(cnp.matmul(pinv(a, rcond), cnp.expand_dims(b, -1)), axis=-1)
    return cnp.matmul(pinv(a, rcond), b)


def matrix_rank(x, tol=None):
    x = _float(x)
    if x.ndim < 2:
        raise ValueError("Expected input to have rank >= 2. "
                         f"Received input with shape {x.shape}.")
    s = cnp.linalg.svd(x, compute_uv=False)
    if tol is None:
        import numpy as _np
        eps = float(_np.finfo(standardize_dtype(s.dtype)).eps)
        tol = cnp.max(s, axis=-1, keepdims=True) * (max(x.shape[-2:]) * eps)
    return cast(cnp.sum(cast(s > tol, "int32"), axis=-1), "int32")


_NOT_YET = ["eig", "lu_factor", "jvp"]
add_stubs(globals(), "linalg", _NOT_YET)
