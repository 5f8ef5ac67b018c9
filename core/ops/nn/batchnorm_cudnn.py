"""BatchNorm through cuDNN on GPU arrays, with the epsilon compensation.

cuDNN refuses ``eps < CUDNN_BN_MIN_EPSILON`` (1e-5; CUDNN_STATUS_BAD_PARAM). MXNet
falls back to its own kernel there; here the kernel is handed ``eps' = 1e-5`` and the
variance ``var + (eps - eps')`` (:func:`cudnn_eps`), so ``sqrt(var' + eps')`` is the
caller's ``sqrt(var + eps)`` and the output is the plain formula's ``(x - mean) /
sqrt(var + eps) * gamma + beta``. In training the batch statistics (mean, biased
variance: two passes) are computed first and the normalization is cuDNN's inference
kernel with them, so the compensation applies in both modes.

Used where CuPy exposes cuDNN (``cupyx.cudnn``, CuPy 13 and older with cuDNN
installed), for NCHW data normalized over axis 1; otherwise (CuPy 14, which has
no cuDNN, other layouts, 5-d data, whose derived descriptor CuPy 13 reads as 4-d, NumPy) :func:`forward` returns None and the elementwise path
runs. The CPU tests run this module with a fake ``cudnn`` (:data:`_fake_cudnn` is how a
test installs one).

Example:
    >>> import numpy
    >>> var, eps = cudnn_eps(numpy.array([0.0, 2.0]), 1e-8)
    >>> float(eps), bool(numpy.allclose(var + eps, numpy.array([0.0, 2.0]) + 1e-8, rtol=0,
    ...                                 atol=1e-15))
    (1e-05, True)
"""
from __future__ import annotations

import numpy

__all__ = ["CUDNN_BN_MIN_EPSILON", "cudnn_eps", "cudnn_module", "forward"]

#: cuDNN's smallest batch-norm epsilon (cudnn.h's CUDNN_BN_MIN_EPSILON)
CUDNN_BN_MIN_EPSILON = 1e-5

# a stand-in for cupyx.cudnn (tests): (module, spatial mode) or None
_fake_cudnn = None
_DTYPES = ("float16", "float32", "float64")


def cudnn_eps(var, eps: float, eps_min: float = CUDNN_BN_MIN_EPSILON):
    """``(var', eps')``: ``eps'`` raised to ``eps_min`` and the difference folded into
    the variance, ``var' + eps' == var + eps``.

    Args:
        var: the (per-channel) variance, a NumPy or CuPy array.
        eps: the caller's epsilon.
        eps_min: the kernel's smallest accepted epsilon.

    Returns:
        ``(var, eps)`` unchanged when ``eps >= eps_min``, else ``(var + (eps - eps_min),
        eps_min)``; the new variance in float64 arithmetic cast back to ``var``'s dtype.

    Example:
        >>> import numpy
        >>> cudnn_eps(numpy.array([1.0]), 1e-3)[1]
        0.001
    """
    if eps >= eps_min:
        return var, eps
    shifted = var.astype("float64") + (float(eps) - eps_min)
    return shifted.astype(var.dtype), eps_min


def cudnn_module(xp):
    """``(cupyx.cudnn, CUDNN_BATCHNORM_SPATIAL)`` when ``xp`` is CuPy built with cuDNN,
    else None (also for NumPy, unless a test installed a fake).

    Example:
        >>> import numpy
        >>> cudnn_module(numpy) is None
        True
    """
    if _fake_cudnn is not None:
        return _fake_cudnn
    if getattr(xp, "__name__", "") != "cupy":
        return None
    try:
        from cupy_backends.cuda.libs import cudnn as libcudnn
        from cupyx import cudnn
    except Exception:  # noqa: BLE001 - CuPy 14 has no cuDNN; or cuDNN is not installed
        return None
    return cudnn, libcudnn.CUDNN_BATCHNORM_SPATIAL


def forward(xp, data, gamma, beta, eps: float, fix_gamma: bool, axis: int, stats=None):
    """Batch normalization over every axis but 1 by cuDNN, or None where it does not apply.

    Args:
        xp: the array module of ``data``.
        data: the input, NCHW (4-d).
        gamma, beta: per-channel scale and offset (``gamma`` ignored with ``fix_gamma``).
        eps: the caller's epsilon (any positive value: compensated below 1e-5).
        fix_gamma: use a scale of 1.
        axis: the channel axis (only 1 runs here).
        stats: ``(mean, var)`` to normalize with (inference), or None for the batch's.

    Returns:
        ``(out, mean, var)`` with per-channel ``mean``/``var`` of shape ``(C,)`` (the
        batch's in training, float32 or float64), or None: cuDNN is not available or
        does not take this layout or dtype.
    """
    found = cudnn_module(xp)
    if (found is None or axis not in (1, 1 - data.ndim) or data.ndim != 4
            or numpy.dtype(data.dtype).name not in _DTYPES):
        return None
    cudnn, mode = found
    c = data.shape[1]
    pdt = "float64" if numpy.dtype(data.dtype).name == "float64" else "float32"
    if stats is None:
        red = (0,) + tuple(range(2, data.ndim))
        xw = data.astype(pdt)
        mean = xw.mean(axis=red)
        d = xw - mean.reshape((1, c) + (1,) * (data.ndim - 2))
        var = (d * d).mean(axis=red)  # two passes, as the elementwise path
    else:
        mean = stats[0].reshape(c).astype(pdt)
        var = stats[1].reshape(c).astype(pdt)
    g = xp.ones((c,), pdt) if fix_gamma else gamma.reshape(c).astype(pdt)
    var_k, eps_k = cudnn_eps(var, float(eps))
    out = cudnn.batch_normalization_forward_inference(
        xp.ascontiguousarray(data), g, beta.reshape(c).astype(pdt), mean, var_k, eps_k,
        True, mode)
    return out, mean, var
