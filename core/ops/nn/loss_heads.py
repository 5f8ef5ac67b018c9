"""MXNet 1.x's symbolic loss heads: the regression outputs and ``MakeLoss``.

A loss head ends a symbolic network (``Module``'s ``fit`` calls ``backward()`` with no
head gradient): its forward is a plain transform of the data, and the gradient it sends
back is a fixed rule that ignores the incoming head gradient, as in MXNet 1.9.1:

- ``LinearRegressionOutput(data, label)``: forward ``data``; gradient
  ``(out - label) * grad_scale / num_output``;
- ``LogisticRegressionOutput(data, label)``: forward ``sigmoid(data)``; gradient
  ``(out - label) * grad_scale / num_output``;
- ``MAERegressionOutput(data, label)``: forward ``data``; gradient
  ``sign(out - label) * grad_scale / num_output`` (``-1`` where ``out == label``, as
  MXNet's ``minus_sign``);
- ``MakeLoss(data)`` (and ``make_loss``): forward ``data``; gradient ``grad_scale`` in
  every element, divided by the batch size (``normalization='batch'``) or by the number
  of elements greater than ``valid_thresh`` (``'valid'``, at least 1).

``num_output`` is ``label.size / label.shape[0]`` (the outputs per sample). The label
may have the data's shape, or any shape of the same size and batch size (``(N,)`` for
data ``(N, 1)``); in a ``core.sym`` graph a label left out becomes the variable
``<name>_label``, whose shape is inferred from the data's as MXNet does. The label gets
no gradient. ``SoftmaxOutput`` and ``BlockGrad`` live with the other losses
(``core/ops/nn/loss.py``, ``core/ops/cast.py``).

The gradients are rules, not derivatives, so they cannot be differentiated again.
"""
from __future__ import annotations

import math

import numpy

from ...dtypes import is_float, is_integer
from ..infer import fmt, require_float
from ..param_shapes import ParamShapes
from ..registry import Aval, F, defop

_KINDS = ("linear", "logistic", "mae")
_NORMALIZATIONS = ("null", "batch", "valid")


def _no_second_order(c, g):
    raise NotImplementedError(
        "loss heads (LinearRegressionOutput, LogisticRegressionOutput, MAERegressionOutput, "
        "MakeLoss): their gradient is a rule (MXNet's loss layers), not a derivative, and "
        "cannot be differentiated again")


# --------------------------------------------------------------- regression outputs
def _reg_check(name, data, label):
    avals = [data, label]
    require_float(name, data, what="data", shown=avals)
    if not (is_float(label.dtype) or is_integer(label.dtype)):
        raise TypeError(f"{name}: label must be numeric, got {fmt(avals)}")
    if data.ndim < 1 or label.ndim < 1:
        raise ValueError(f"{name}: data and label need a batch axis, got {fmt(avals)}")
    if label.shape[0] != data.shape[0] or math.prod(label.shape) != math.prod(data.shape):
        raise ValueError(f"{name}: label must have data's batch size {data.shape[0]} and "
                         f"size {math.prod(data.shape)} (shape {data.shape}), got {fmt(avals)}")


def _reg_infer(name):
    def infer(data, label, grad_scale=1.0):
        _reg_check(name, data, label)
        return Aval(data.shape, data.dtype)

    return infer


def _reg_label_shape(shape, a, n_in):
    """MXNet's rule: (N,) for data (N, 1), else the data's shape."""
    if shape is None or len(shape) == 0:
        return {}
    if len(shape) == 2 and shape[1] == 1:
        return {1: (shape[0],)}
    return {1: tuple(shape)}


_REG_PARAMS = ParamShapes(_reg_label_shape, (1,))


def _reg_fast_check(data, label):
    """The forward's own check (the dispatcher asks ``infer`` to explain a failure)."""
    if not data.ndim or not label.ndim or label.shape[0] != data.shape[0] \
            or label.size != data.size:
        raise ValueError("label")  # infer explains


def _reg_vjp(kind):
    def vjp(c, g):
        return (F._regression_output_grad(c.out, c.inputs[1], kind=kind,
                                          grad_scale=c.attrs["grad_scale"]), None)

    return vjp


@defop("LinearRegressionOutput", infer=_reg_infer("LinearRegressionOutput"),
       vjp=_reg_vjp("linear"), inputs=("data", "label"), attrs={"grad_scale": 1.0},
       nd=("LinearRegressionOutput",), param_shapes=_REG_PARAMS)
def _linear_regression_output(xp, data, label, grad_scale=1.0):
    """MXNet's LinearRegressionOutput: forward ``data``; gradient
    ``(out - label) * grad_scale / num_output`` whatever the head gradient.

    Example:
        >>> from core import nd, autograd
        >>> x = nd.array([[1.0, 2.0]]); x.attach_grad()
        >>> with autograd.record():
        ...     y = nd.LinearRegressionOutput(x, nd.array([[0.0, 4.0]]))
        >>> y.backward(); x.grad.asnumpy().tolist()
        [[0.5, -1.0]]
    """
    _reg_fast_check(data, label)
    return data.copy()


@defop("LogisticRegressionOutput", infer=_reg_infer("LogisticRegressionOutput"),
       vjp=_reg_vjp("logistic"), inputs=("data", "label"), attrs={"grad_scale": 1.0},
       nd=("LogisticRegressionOutput",), param_shapes=_REG_PARAMS)
def _logistic_regression_output(xp, data, label, grad_scale=1.0):
    """MXNet's LogisticRegressionOutput: forward ``sigmoid(data)``; gradient
    ``(out - label) * grad_scale / num_output`` whatever the head gradient.

    Example:
        >>> from core import nd
        >>> nd.LogisticRegressionOutput(nd.zeros((1, 2)), nd.ones((1, 2))).asnumpy().tolist()
        [[0.5, 0.5]]
    """
    _reg_fast_check(data, label)
    out = xp.negative(data)
    xp.exp(out, out=out)
    out += 1
    return xp.reciprocal(out, out=out)


@defop("MAERegressionOutput", infer=_reg_infer("MAERegressionOutput"),
       vjp=_reg_vjp("mae"), inputs=("data", "label"), attrs={"grad_scale": 1.0},
       nd=("MAERegressionOutput",), param_shapes=_REG_PARAMS)
def _mae_regression_output(xp, data, label, grad_scale=1.0):
    """MXNet's MAERegressionOutput: forward ``data``; gradient
    ``sign(out - label) * grad_scale / num_output`` (``-1`` at ties) whatever the head
    gradient.

    Example:
        >>> from core import nd
        >>> nd.MAERegressionOutput(nd.array([1.5]), nd.array([1.0])).asnumpy().tolist()
        [1.5]
    """
    _reg_fast_check(data, label)
    return data.copy()


def _rog_infer(out, label, kind="linear", grad_scale=1.0):
    name = "_regression_output_grad"
    if kind not in _KINDS:
        raise ValueError(f"{name}: kind must be one of {_KINDS}, got {kind!r}")
    _reg_check(name, out, label)
    return Aval(out.shape, out.dtype)


@defop("_regression_output_grad", infer=_rog_infer, vjp=_no_second_order,
       inputs=("out", "label"), attrs={"kind": "linear", "grad_scale": 1.0})
def _regression_output_grad(xp, out, label, kind="linear", grad_scale=1.0):
    """The regression outputs' gradient with respect to their data, from their output."""
    diff = out - label.reshape(out.shape).astype(out.dtype, copy=False)
    if kind == "mae":
        diff = xp.where(diff > 0, 1, -1).astype(out.dtype)
    _reg_fast_check(out, label)
    num_output = label.size // label.shape[0] if label.shape[0] else 1
    # MXNet computes the factor in float32 (grad_scale / num_output), then casts it
    diff *= out.dtype.type(numpy.float32(grad_scale) / numpy.float32(max(num_output, 1)))
    return diff


# --------------------------------------------------------------- MakeLoss
_ML_ATTRS = {"grad_scale": 1.0, "valid_thresh": 0.0, "normalization": "null"}


def _ml_check(name, data, normalization):
    require_float(name, data, what="data")
    if normalization not in _NORMALIZATIONS:
        raise ValueError(f"{name}: normalization must be 'null', 'batch' or 'valid', got "
                         f"{normalization!r}")


def _ml_infer(data, grad_scale=1.0, valid_thresh=0.0, normalization="null"):
    _ml_check("MakeLoss", data, normalization)
    return Aval(data.shape, data.dtype)


@defop("MakeLoss", infer=_ml_infer, inputs=("data",), attrs=_ML_ATTRS, save="inputs",
       nd=("MakeLoss", "make_loss"),
       vjp=lambda c, g: (F._make_loss_grad(c.inputs[0], **c.attrs),))
def _make_loss(xp, data, grad_scale=1.0, valid_thresh=0.0, normalization="null"):
    """MXNet's MakeLoss: forward ``data``; gradient ``grad_scale`` (divided by the batch
    size or the count of elements above ``valid_thresh`` with ``normalization``)
    whatever the head gradient.

    Example:
        >>> from core import nd, autograd
        >>> x = nd.array([[1.0, -2.0], [3.0, 0.5]]); x.attach_grad()
        >>> with autograd.record():
        ...     y = nd.MakeLoss(x * 2, normalization="batch")
        >>> y.backward(); x.grad.asnumpy().tolist()
        [[1.0, 1.0], [1.0, 1.0]]
    """
    if normalization not in _NORMALIZATIONS:
        raise ValueError("normalization")  # infer explains
    return data.copy()


def _mlg_infer(data, grad_scale=1.0, valid_thresh=0.0, normalization="null"):
    _ml_check("_make_loss_grad", data, normalization)
    return Aval(data.shape, data.dtype)


@defop("_make_loss_grad", infer=_mlg_infer, vjp=_no_second_order, inputs=("data",),
       attrs=_ML_ATTRS, save=False)
def _make_loss_grad(xp, data, grad_scale=1.0, valid_thresh=0.0, normalization="null"):
    """MakeLoss's gradient with respect to its data (from the data, for 'valid')."""
    if normalization not in _NORMALIZATIONS:
        raise ValueError("normalization")  # infer explains
    dt = data.dtype.type
    if normalization == "batch":  # MXNet: a float32 factor, then cast
        scale = dt(numpy.float32(grad_scale) / numpy.float32(data.shape[0] if data.ndim and
                                                             data.shape[0] else 1))
    elif normalization == "valid":  # MXNet: in the data's dtype
        scale = dt(grad_scale) / dt(max(1, int((data > valid_thresh).sum())))
    else:
        scale = dt(grad_scale)
    return xp.full(data.shape, scale, dtype=data.dtype)
