"""Batch normalization: two pure primitives and the public ``BatchNorm`` that updates the
running statistics.

``_batch_norm_train`` normalizes with the batch statistics and returns them,
(out, mean, var); ``_batch_norm_infer`` normalizes with given (moving) statistics.
``BatchNorm`` picks one by ``autograd.is_training()`` and ``use_global_stats`` and, in
training, then updates ``moving_mean``/``moving_var`` in place outside the recorded
graph. The shared layout, forward and fused VJP live in ``norm.py``.

What MXNet 1.x does (src/operator/nn/batch_norm.cc, v1.9.x): the batch variance is the
biased one, ``sum((x - mean)^2) / m`` over the m elements of a channel; the running
statistics are ``moving = moving * momentum + batch * (1 - momentum)`` with that biased
variance (recovered from the saved inverse std as ``1/invstd^2 - eps``). The CPU and the
non-cuDNN GPU kernels apply that update in the *backward* pass; the cuDNN path
(cudnnBatchNormalizationForwardTraining, factor 1 - momentum) applies it in the forward
pass and accumulates cuDNN's running variance, which cuDNN documents as the unbiased
(m / (m - 1)) estimate. We follow the CPU reference: biased variance, applied when the
training forward runs (as cuDNN does), so the statistics change after a training
forward whether or not backward follows.

For graphs (``core.symbol``) there is also the registry operator ``BatchNorm``: one
pure operator for both modes, selected by its ``training`` attribute, with five outputs
(out, mean, inv_std, new_moving_mean, new_moving_var) of which a Symbol shows one (three
with ``output_mean_var``); the last two replace the moving statistics after each run
(``updates``). While tracing, ``nd.BatchNorm`` on a traced input emits it with
``training=TRAIN`` (the executor's ``is_train``) and writes the new statistics into
``moving_mean``/``moving_var`` in place, which the tracer records as graph updates.
"""
from __future__ import annotations

import numpy

from ... import tape as _tape
from ...ndarray import NDArray, Placeholder, array
from ..abstract import is_tracing
from ..dispatch import invoke
from ..namespace import with_out
from ..param_shapes import ParamShapes, axis_position
from ..registry import Aval, F, defop
from . import batchnorm_cudnn
from .norm import acc_dtype, normalize, param_spec, plan, vjp_with_stats

# The smallest eps a backend's batch-norm kernel accepts, by array module (none today:
# the NumPy and CuPy elementwise kernels take any eps; the cuDNN path, batchnorm_cudnn,
# compensates its CUDNN_BN_MIN_EPSILON = 1e-5 itself with the same folding).
MIN_EPS: dict = {}


def min_eps_adjust(var, eps, eps_min):
    """``(var', eps')`` with ``var' + eps' == var + eps`` and ``eps' >= eps_min``.

    A backend that clamps eps up to ``eps_min`` would normalize by ``sqrt(var +
    eps_min)`` instead of ``sqrt(var + eps)``; handing it ``var + eps - eps_min`` and
    ``eps_min`` gives exactly the caller's result. Works on arrays and NDArrays.
    """
    if eps_min is None or eps >= eps_min:
        return var, eps
    return var + (eps - eps_min), eps_min


def _stats_params(gamma, beta, moving_mean=None, moving_var=None, aux=False):
    p = (param_spec("gamma", gamma), param_spec("beta", beta))
    if aux:
        p += (param_spec("moving_mean", moving_mean), param_spec("moving_var", moving_var))
    return p


def _train_infer(data, gamma, beta, eps=1e-3, fix_gamma=True, axis=1):
    plan("batch", data.shape, data.dtype, _stats_params(gamma, beta), axis)
    c = (data.shape[axis],)
    acc = acc_dtype(data.dtype)
    return Aval(data.shape, data.dtype), Aval(c, acc), Aval(c, acc)


def _train_vjp(c, g):
    x, gamma, beta = c.inputs
    a = c.attrs
    return vjp_with_stats(c, g[0], x, gamma, beta, c.outputs[1], c.outputs[2], g[1], g[2],
                          "batch", "var", a["eps"], fix_gamma=a["fix_gamma"], axis=a["axis"])


def _bn_params(shape, a, n_in):
    """gamma, beta and the moving statistics: one per channel (``axis``)."""
    if shape is None:
        return {}
    ax = axis_position(shape, a.get("axis", 1))
    if ax is None:
        return {}
    c = (shape[ax],)
    return {i: c for i in range(1, min(n_in, 5))}


def _bn_param_dtype(data_dtype, a):
    """MXNet keeps float16 batch norm's parameters in float32."""
    return numpy.float32 if data_dtype == numpy.float16 else data_dtype


@defop("_batch_norm_train", infer=_train_infer, vjp=_train_vjp,
       inputs=("data", "gamma", "beta"), attrs={"eps": 1e-3, "fix_gamma": True, "axis": 1},
       param_shapes=ParamShapes(_bn_params, (1, 2), _bn_param_dtype), recompute=True)
def _batch_norm_train(xp, data, gamma, beta, eps=1e-3, fix_gamma=True, axis=1):
    """Batch normalization with the batch statistics over every axis but ``axis``:
    (out, mean, var), var the biased variance, statistics of shape (C,)."""
    return _train_forward(xp, data, gamma, beta, eps, fix_gamma, axis)


def _train_forward(xp, data, gamma, beta, eps, fix_gamma, axis):
    L = plan("batch", tuple(data.shape), data.dtype, _stats_params(gamma, beta), axis)
    if (dnn := batchnorm_cudnn.forward(xp, data, gamma, beta, eps, fix_gamma, axis)) is not None:
        out, mean, var = dnn  # cuDNN (GPU), eps compensated
    else:
        out, mean, var = normalize(xp, data, gamma, beta, L, eps, fix_gamma)
    c = (data.shape[axis],)
    return out, mean.reshape(c), var.reshape(c)


def _infer_infer(data, gamma, beta, moving_mean, moving_var, eps=1e-3, fix_gamma=True, axis=1):
    plan("batch", data.shape, data.dtype,
         _stats_params(gamma, beta, moving_mean, moving_var, True), axis)
    return Aval(data.shape, data.dtype)


def _infer_vjp(c, g):
    x, gamma, beta, mm, mv = c.inputs
    a = c.attrs
    gx, gg, gb = vjp_with_stats(c, g, x, gamma, beta, mm, mv, None, None, "batch", "var",
                                a["eps"], fix_gamma=a["fix_gamma"], batch_stats=False,
                                axis=a["axis"])
    return gx, gg, gb, None, None  # the moving statistics are auxiliary states: no gradient


@defop("_batch_norm_infer", infer=_infer_infer, vjp=_infer_vjp,
       inputs=("data", "gamma", "beta", "moving_mean", "moving_var"),
       attrs={"eps": 1e-3, "fix_gamma": True, "axis": 1},
       param_shapes=ParamShapes(_bn_params, (1, 2, 3, 4), _bn_param_dtype), recompute=True)
def _batch_norm_infer(xp, data, gamma, beta, moving_mean, moving_var, eps=1e-3, fix_gamma=True,
                      axis=1):
    """Batch normalization with given statistics (``moving_mean``, ``moving_var``)."""
    return _infer_forward(xp, data, gamma, beta, moving_mean, moving_var, eps, fix_gamma, axis)


def _infer_forward(xp, data, gamma, beta, moving_mean, moving_var, eps, fix_gamma, axis):
    L = plan("batch", tuple(data.shape), data.dtype,
             _stats_params(gamma, beta, moving_mean, moving_var, True), axis)
    if (dnn := batchnorm_cudnn.forward(xp, data, gamma, beta, eps, fix_gamma, axis,
                                       (moving_mean, moving_var))) is not None:
        return dnn[0]  # cuDNN (GPU), eps compensated
    var, eps = min_eps_adjust(moving_var, eps, MIN_EPS.get(xp.__name__))
    return normalize(xp, data, gamma, beta, L, eps, fix_gamma, (moving_mean, var))[0]


def _update_moving(moving, stat, momentum):
    moving *= momentum
    moving += stat * (1.0 - momentum)


# --------------------------------------------------------------------------- graph operator
_BN_INPUTS = ("data", "gamma", "beta", "moving_mean", "moving_var")
_BN_ATTRS = {"eps": 1e-3, "momentum": 0.9, "fix_gamma": True, "use_global_stats": False,
             "output_mean_var": False, "axis": 1, "cudnn_off": False, "min_calib_range": None,
             "max_calib_range": None, "training": True}


def _bn_infer(data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9,
              fix_gamma=True, use_global_stats=False, output_mean_var=False, axis=1,
              cudnn_off=False, min_calib_range=None, max_calib_range=None, training=True):
    # The outputs do not depend on ``training`` (which may be TRAIN here).
    plan("batch", data.shape, data.dtype,
         _stats_params(gamma, beta, moving_mean, moving_var, True), axis)
    c = (data.shape[axis],)
    acc = acc_dtype(data.dtype)
    return (Aval(data.shape, data.dtype), Aval(c, acc), Aval(c, acc),
            Aval(c, moving_mean.dtype), Aval(c, moving_var.dtype))


def _bn_vjp(c, g):
    x, gamma, beta, mm, mv = c.inputs
    a = c.attrs
    if a["training"] and not a["use_global_stats"]:
        gx, gg, gb = vjp_with_stats(c, g[0], x, gamma, beta, c.outputs[1], c.outputs[2], g[1],
                                    g[2], "batch", "rstd", a["eps"], fix_gamma=a["fix_gamma"],
                                    axis=a["axis"])
    else:  # mean and inv_std come from the moving statistics: no gradient through them
        gx, gg, gb = vjp_with_stats(c, g[0], x, gamma, beta, mm, mv, None, None, "batch", "var",
                                    a["eps"], fix_gamma=a["fix_gamma"], batch_stats=False,
                                    axis=a["axis"])
    return gx, gg, gb, None, None  # the moving statistics are auxiliary states: no gradient


def _moved(moving, stat, momentum):
    """``moving * momentum + stat * (1 - momentum)`` as :func:`_update_moving` computes it,
    into a new array of ``moving``'s dtype."""
    new = moving * momentum
    new += stat * (1.0 - momentum)
    return new


@defop("BatchNorm", infer=_bn_infer, vjp=_bn_vjp, inputs=_BN_INPUTS, attrs=_BN_ATTRS,
       updates={3: 3, 4: 4}, recompute=True,
       param_shapes=ParamShapes(_bn_params, (1, 2, 3, 4), _bn_param_dtype),
       visible_outputs=lambda attrs: 3 if attrs.get("output_mean_var") else 1)
def _batch_norm(xp, data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9,
                fix_gamma=True, use_global_stats=False, output_mean_var=False, axis=1,
                cudnn_off=False, min_calib_range=None, max_calib_range=None, training=True):
    """Batch normalization for graphs, in the mode the ``training`` attribute says:
    (out, mean, inv_std, new_moving_mean, new_moving_var).

    Training without ``use_global_stats``: the batch statistics, and the moving ones
    moved by ``momentum``; otherwise the moving statistics, which come back unchanged.
    ``mean`` and ``inv_std`` are what ``nd.BatchNorm(..., output_mean_var=True)`` returns.
    """
    acc = acc_dtype(data.dtype)
    if training and not use_global_stats:
        out, mean, var = _train_forward(xp, data, gamma, beta, eps, fix_gamma, axis)
        inv_std = xp.reciprocal(xp.sqrt(var + eps))
        return (out, mean, inv_std, _moved(moving_mean, mean, momentum),
                _moved(moving_var, var, momentum))
    out = _infer_forward(xp, data, gamma, beta, moving_mean, moving_var, eps, fix_gamma, axis)
    inv_std = xp.reciprocal(xp.sqrt(moving_var + eps))
    return (out, moving_mean.astype(acc, copy=True), inv_std.astype(acc, copy=False),
            moving_mean.copy(), moving_var.copy())


def _is_traced(arrays) -> bool:
    return any(isinstance(a, NDArray) and type(a._data) is Placeholder for a in arrays)


def _trace_batch_norm(arrays, attrs):
    """``nd.BatchNorm`` while tracing: the ``BatchNorm`` operator in the executor's mode,
    and the new moving statistics written into bound (traced) ``moving_mean``/``moving_var``
    (the tracer turns those writes into graph updates)."""
    from ...symbol.graph import TRAIN

    attrs = dict(attrs, training=False if attrs["use_global_stats"] else TRAIN)
    res = invoke(_batch_norm, arrays, attrs)
    for arr, new in zip(arrays[3:], res[3:]):
        if isinstance(arr, NDArray) and type(arr._data) is Placeholder:
            arr[...] = new
    return res[:3] if attrs["output_mean_var"] else res[0]


def BatchNorm(data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9,
              fix_gamma=True, use_global_stats=False, output_mean_var=False, axis=1,
              cudnn_off=False, min_calib_range=None, max_calib_range=None, name=None, out=None):
    """Batch normalization (MXNet 1.x ``BatchNorm``).

    ``out = (data - mean) / sqrt(var + eps) * gamma + beta`` per channel (``axis``; -1 for
    channels-last layouts such as NHWC), the statistics taken over every other axis.

    In training mode (``autograd.is_training()``) without ``use_global_stats`` the batch
    mean and biased variance are used, and ``moving_mean``/``moving_var`` (NDArrays of
    shape (C,), MXNet's auxiliary states) are updated in place, outside the recorded
    graph, as ``moving = moving * momentum + batch * (1 - momentum)`` (MXNet's CPU
    kernel: the biased batch variance; see the module docstring). Otherwise (inference,
    or ``use_global_stats``) the moving statistics are used and left unchanged.

    ``eps`` is used exactly as given. When a backend imposes a minimum eps (cuDNN
    requires at least 1e-5), compensate by adjusting the variance (var + eps - eps_min)
    so results do not drift: :func:`min_eps_adjust`.

    Args:
        data: the input, with C channels on ``axis``.
        gamma, beta: scale and shift, shape (C,). With ``fix_gamma=True`` (MXNet's
            default) gamma is treated as 1 and its gradient is zero.
        moving_mean, moving_var: the running statistics, shape (C,).
        eps: added to the variance.
        momentum: the running statistics' decay.
        fix_gamma: ignore ``gamma`` (treat it as ones).
        use_global_stats: normalize with the moving statistics even in training mode.
        output_mean_var: also return the mean and the inverse standard deviation
            ``1 / sqrt(var + eps)`` that were used (MXNet's outputs ``mean`` and
            ``var``, which hold the inverse std).
        axis: the channel axis.
        cudnn_off, min_calib_range, max_calib_range, name: accepted for MXNet
            compatibility; no effect.
        out: an NDArray to write the result into (may be ``data``), or one per result.

    Returns:
        ``out``, or ``(out, mean, inv_std)``.

    While tracing (``core.symbol``) with a traced input, this emits the registry operator
    ``BatchNorm`` with ``training=TRAIN`` (the executor's ``is_train``; ``False`` with
    ``use_global_stats``) and writes the new moving statistics into ``moving_mean`` and
    ``moving_var`` when they are traced too (bound with ``Tracer.bind``), which makes
    them graph updates; unbound moving statistics are graph constants and stay as they are.

    Example:
        >>> from core import nd, autograd
        >>> x = nd.array([[1.0], [3.0]], dtype="float64")
        >>> mm, mv = nd.zeros((1,), dtype="float64"), nd.ones((1,), dtype="float64") * 3
        >>> with autograd.train_mode():  # batch mean 2, batch (biased) variance 1
        ...     y = BatchNorm(x, nd.ones((1,)), nd.zeros((1,)), mm, mv, eps=0.0, momentum=0.5)
        >>> y.asnumpy().ravel().tolist(), mm.asnumpy().tolist(), mv.asnumpy().tolist()
        ([-1.0, 1.0], [1.0], [2.0])
    """
    if is_tracing() and _is_traced((data, gamma, beta, moving_mean, moving_var)):
        return with_out("BatchNorm", _trace_batch_norm(
            [data, gamma, beta, moving_mean, moving_var],
            {"eps": eps, "momentum": momentum, "fix_gamma": fix_gamma,
             "use_global_stats": use_global_stats, "output_mean_var": output_mean_var,
             "axis": axis, "cudnn_off": cudnn_off, "min_calib_range": min_calib_range,
             "max_calib_range": max_calib_range}), out)
    if _tape.is_training() and not use_global_stats:
        for label, arr in (("moving_mean", moving_mean), ("moving_var", moving_var)):
            if not isinstance(arr, NDArray):
                raise TypeError(f"BatchNorm: {label} must be an NDArray (it is updated in "
                                f"place in training mode), got {type(arr).__name__}")
        x = data if hasattr(data, "shape") else array(data)
        plan("batch", tuple(x.shape), x.dtype,
             _stats_params(gamma, beta, moving_mean, moving_var, True), axis)
        res, mean, var = F._batch_norm_train(x, gamma, beta, eps=eps, fix_gamma=fix_gamma,
                                             axis=axis)
        with _tape.pause(_tape.is_training()):
            _update_moving(moving_mean, mean, momentum)
            _update_moving(moving_var, var, momentum)
        if output_mean_var:
            return with_out("BatchNorm", (res, mean, F.rsqrt(var + eps)), out)
        return with_out("BatchNorm", res, out)
    mm, mv = moving_mean, moving_var
    if _tape.is_recording() and isinstance(mm, NDArray) and isinstance(mv, NDArray):
        # Snapshots (C values each): a later training call of the same layer in this
        # graph updates the moving statistics in place, which backward must not see.
        mm, mv = mm.detach().copy(), mv.detach().copy()
    res = F._batch_norm_infer(data, gamma, beta, mm, mv, eps=eps, fix_gamma=fix_gamma,
                              axis=axis)
    if output_mean_var:
        with _tape.pause(_tape.is_training()):
            res = (res, F.copy(moving_mean), F.rsqrt(moving_var + eps))
    return with_out("BatchNorm", res, out)


NAMESPACE_OVERRIDES = {"nd": {"BatchNorm": BatchNorm, "batch_norm": BatchNorm}, "np": {}}
