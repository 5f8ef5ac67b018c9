"""Classification losses: ``SigmoidBinaryCrossEntropyLoss`` (``SigmoidBCELoss``),
``SoftmaxCrossEntropyLoss`` (``SoftmaxCELoss``), ``KLDivLoss``, ``HingeLoss``,
``SquaredHingeLoss`` and ``LogisticLoss`` (MXNet Gluon 1.9's ``gluon.loss``; re-exported
by ``gluon.loss``)."""
from __future__ import annotations

import numbers

from .loss import Loss, _apply_weighting, _batch_mean, _imperative, _reshape_like

__all__ = [
    "HingeLoss",
    "KLDivLoss",
    "LogisticLoss",
    "SigmoidBCELoss",
    "SigmoidBinaryCrossEntropyLoss",
    "SoftmaxCELoss",
    "SoftmaxCrossEntropyLoss",
    "SquaredHingeLoss",
]


class SigmoidBinaryCrossEntropyLoss(Loss):
    r"""Binary cross-entropy (alias ``SigmoidBCELoss``).

    With ``from_sigmoid=False`` (default) ``pred`` are logits and the loss is computed
    stably as ``max(x, 0) - x * z + log(1 + exp(-|x|))``, or with ``pos_weight``
    ``x - x * z + (1 + (pos_weight - 1) * z) * (log(1 + exp(-|x|)) + max(-x, 0))``.
    With ``from_sigmoid=True`` ``pred`` are probabilities and
    ``L = -(z * log(p + 1e-12) * pos_weight + (1 - z) * log(1 - p + 1e-12))``.
    Runs on the fused ``sigmoid_binary_cross_entropy`` operator.

    Args:
        from_sigmoid: whether ``pred`` already went through a sigmoid.
        weight: a global scalar weight, or None.
        batch_axis: the axis of the mini-batch.

    Inputs: ``pred``, ``label`` (values in [0, 1], as many elements as ``pred``), an
    optional ``sample_weight`` broadcastable to ``pred``'s shape and an optional
    ``pos_weight`` broadcastable to it (e.g. ``(1, classes)``), which weighs the
    positive term. Output: ``(batch_size,)``.

    Example:
        >>> from core import nd
        >>> from gluon.loss import SigmoidBCELoss
        >>> l = SigmoidBCELoss()(nd.array([[0.0, 0.0]]), nd.array([[1.0, 0.0]]))
        >>> round(float(l.asscalar()), 4)
        0.6931
    """

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def hybrid_forward(self, F, pred, label, sample_weight=None, pos_weight=None):
        label = _reshape_like(F, label, pred)
        if _imperative(F):
            loss = F.sigmoid_binary_cross_entropy(pred, label, pos_weight,
                                                  from_logits=not self._from_sigmoid)
        else:
            loss = _sigmoid_bce_composed(F, pred, label, pos_weight, self._from_sigmoid)
        return self._weighted_mean(F, loss, sample_weight)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


def _softrelu_bce(F, pred, label):
    """``max(x, 0) - x * z + log(1 + exp(-|x|))`` in MXNet's operators."""
    return F.relu(pred) - pred * label + F.Activation(-F.abs(pred), act_type="softrelu")


def _sigmoid_bce_composed(F, pred, label, pos_weight, from_sigmoid):
    """The binary cross-entropy composed of MXNet 1.9's operators (on Symbols, so that
    the graph has only operators MXNet has; the imperative path runs the fused one)."""
    if not from_sigmoid:
        if pos_weight is None:
            return _softrelu_bce(F, pred, label)
        log_weight = 1 + F.broadcast_mul(pos_weight - 1, label)
        return pred - pred * label + log_weight * (
            F.Activation(-F.abs(pred), act_type="softrelu") + F.relu(-pred))
    eps = 1e-12
    if pos_weight is None:
        return -(F.log(pred + eps) * label + F.log(1. - pred + eps) * (1. - label))
    return -(F.broadcast_mul(F.log(pred + eps) * label, pos_weight)
             + F.log(1. - pred + eps) * (1. - label))


def _hinge(F, pred, label, margin):
    """``max(0, margin - pred * label)``, ``label`` reshaped like ``pred``."""
    return F.relu(margin - pred * _reshape_like(F, label, pred))


def _class_axis(name, pred, axis):
    ndim = len(pred.shape)
    if not isinstance(axis, numbers.Integral) or not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis!r} is out of range for pred of shape {tuple(pred.shape)}")
    return axis % ndim


class SoftmaxCrossEntropyLoss(Loss):
    r"""Softmax cross-entropy (alias ``SoftmaxCELoss``).

    With ``sparse_label=True`` (default) ``label`` holds class indices, of ``pred``'s shape
    without ``axis`` (or with ``axis`` of size 1), and ``L = -log softmax(pred)[label]``;
    otherwise ``label`` holds distributions of ``pred``'s size and
    ``L = -sum(label * log softmax(pred), axis)``. With ``from_logits=True`` ``pred`` is
    taken as log-probabilities already (no log-softmax). Without ``from_logits`` the
    loss runs on the fused ``softmax_cross_entropy_with_logits`` operator; class indices
    outside ``[0, classes)`` raise ValueError there (MXNet clips them).

    Args:
        axis: the class axis.
        sparse_label: whether ``label`` holds class indices rather than distributions.
        from_logits: whether ``pred`` holds log-probabilities (e.g. from log_softmax).
        weight: a global scalar weight, or None.
        batch_axis: the axis of the mini-batch.

    Inputs: ``pred``, ``label`` and an optional ``sample_weight`` broadcastable to the
    loss before the mean, i.e. ``pred``'s shape with ``axis`` of size 1 (``(64, 1)`` for
    ``(64, 10)`` predictions). Output: ``(batch_size,)``.

    Example:
        >>> from core import nd
        >>> from gluon.loss import SoftmaxCrossEntropyLoss
        >>> ce = SoftmaxCrossEntropyLoss()
        >>> [round(v, 4) for v in ce(nd.zeros((2, 4)), nd.array([1, 3])).asnumpy().tolist()]
        [1.3863, 1.3863]
    """

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None,
                 batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._axis = axis
        self._sparse_label = sparse_label
        self._from_logits = from_logits

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not _imperative(F):
            return self._compose(F, pred, label, sample_weight)
        ax = _class_axis(type(self).__name__, pred, self._axis)
        if self._sparse_label:
            shape = tuple(pred.shape)
            removed, kept = shape[:ax] + shape[ax + 1:], shape[:ax] + (1,) + shape[ax + 1:]
            if tuple(label.shape) not in (removed, kept):
                raise ValueError(f"with sparse_label=True, label must have shape {removed} "
                                 f"(pred's shape {shape} without axis {self._axis}) or "
                                 f"{kept}, got {tuple(label.shape)}")
        else:
            label = _reshape_like(F, label, pred)
        if self._from_logits:
            if self._sparse_label:
                loss = -F.pick(pred, label, axis=ax, keepdims=True)
            else:
                loss = -F.sum(pred * label, axis=ax, keepdims=True)
        else:
            loss = F.softmax_cross_entropy_with_logits(pred, label, axis=ax,
                                                       sparse=self._sparse_label)
            if sample_weight is None and len(pred.shape) == 2 and ax != self._batch_axis % 2:
                # (batch, classes): the mean over the kept class axis of size 1 is the loss
                return _apply_weighting(F, loss, self._weight, None)
            loss = F.expand_dims(loss, axis=ax)
        return self._weighted_mean(F, loss, sample_weight)

    def _compose(self, F, pred, label, sample_weight):
        """MXNet 1.9's composition on Symbols of unknown shape: log_softmax, then pick
        (or the sum against the label distribution), the weighting and the mean."""
        if not self._from_logits:
            pred = F.log_softmax(pred, axis=self._axis)
        if self._sparse_label:
            loss = -F.pick(pred, label, axis=self._axis, keepdims=True)
        else:
            label = _reshape_like(F, label, pred)
            loss = -F.sum(pred * label, axis=self._axis, keepdims=True)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return _batch_mean(F, loss, self._batch_axis)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class KLDivLoss(Loss):
    r"""Kullback-Leibler divergence: ``L = label * (log(label + 1e-12) - pred)``, summed
    per sample (MXNet 1.9 sums, it does not average).

    With ``from_logits=True`` (default) ``pred`` holds log-probabilities; otherwise
    ``log_softmax(pred, axis)`` is taken first.

    Args:
        from_logits: whether ``pred`` holds log-probabilities.
        axis: the axis of the log-softmax when ``from_logits`` is False.
        weight: a global scalar weight, or None.
        batch_axis: the axis of the mini-batch.

    Inputs: ``pred``, ``label`` (probabilities, ``pred``'s shape) and an optional
    ``sample_weight`` broadcastable to ``pred``'s shape. Output: ``(batch_size,)``.

    Example:
        >>> from core import nd
        >>> from gluon.loss import KLDivLoss
        >>> l = KLDivLoss(from_logits=False)(nd.zeros((1, 2)), nd.array([[0.5, 0.5]]))
        >>> abs(round(float(l.asscalar()), 6))
        0.0
    """

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._axis = axis

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = F.log_softmax(pred, axis=self._axis)
        loss = label * (F.log(label + 1e-12) - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.sum(loss, axis=self._batch_axis, exclude=True)


class HingeLoss(Loss):
    r"""The SVM hinge loss: ``L = max(0, margin - pred * label)``, averaged per sample.

    Args:
        margin: the margin.
        weight: a global scalar weight, or None.
        batch_axis: the axis of the mini-batch.

    Inputs: ``pred``, ``label`` (-1 or 1, as many elements as ``pred``) and an optional
    ``sample_weight`` broadcastable to ``pred``'s shape. Output: ``(batch_size,)``.

    Example:
        >>> from core import nd
        >>> from gluon.loss import HingeLoss
        >>> HingeLoss()(nd.array([[0.5, 2.0]]), nd.array([[1.0, -1.0]])).asnumpy().tolist()
        [1.75]
    """

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        return self._weighted_mean(F, _hinge(F, pred, label, self._margin), sample_weight)


class SquaredHingeLoss(Loss):
    r"""The soft-margin SVM loss: ``L = max(0, margin - pred * label)**2``, averaged per
    sample.

    Args:
        margin: the margin.
        weight: a global scalar weight, or None.
        batch_axis: the axis of the mini-batch.

    Inputs: ``pred``, ``label`` (-1 or 1, as many elements as ``pred``) and an optional
    ``sample_weight`` broadcastable to ``pred``'s shape. Output: ``(batch_size,)``.

    Example:
        >>> from core import nd
        >>> from gluon.loss import SquaredHingeLoss
        >>> l = SquaredHingeLoss()(nd.array([[0.5, 2.0]]), nd.array([[1.0, -1.0]]))
        >>> l.asnumpy().tolist()
        [4.625]
    """

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        loss = F.square(_hinge(F, pred, label, self._margin))
        return self._weighted_mean(F, loss, sample_weight)


class LogisticLoss(Loss):
    r"""The logistic loss ``L = log(1 + exp(-pred * label))``, averaged per sample.

    With ``label_format='binary'`` labels are 0/1 (the loss is then the sigmoid binary
    cross-entropy); ``'signed'`` labels (-1/1) are mapped to ``(label + 1) / 2`` first.
    Runs on the fused ``sigmoid_binary_cross_entropy`` operator.

    Args:
        weight: a global scalar weight, or None.
        batch_axis: the axis of the mini-batch.
        label_format: ``'signed'`` (-1 or 1) or ``'binary'`` (0 or 1).

    Inputs: ``pred``, ``label`` (as many elements as ``pred``) and an optional
    ``sample_weight`` broadcastable to ``pred``'s shape. Output: ``(batch_size,)``.

    Example:
        >>> from core import nd
        >>> from gluon.loss import LogisticLoss
        >>> l = LogisticLoss()(nd.array([[0.0, 0.0]]), nd.array([[1.0, -1.0]]))
        >>> round(float(l.asscalar()), 4)
        0.6931
    """

    def __init__(self, weight=None, batch_axis=0, label_format="signed", **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._label_format = label_format
        if label_format not in ("signed", "binary"):
            raise ValueError(f"LogisticLoss: label_format must be 'signed' or 'binary', got "
                             f"{label_format!r}")

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        if self._label_format == "signed":
            label = (label + 1.0) / 2.0
        if _imperative(F):
            loss = F.sigmoid_binary_cross_entropy(pred, label, from_logits=True)
        else:
            loss = _softrelu_bce(F, pred, label)
        return self._weighted_mean(F, loss, sample_weight)
