"""Losses for training neural networks (MXNet Gluon 1.9's ``gluon.loss``).

Every loss is a :class:`~gluon.HybridBlock` called as ``loss(pred, label,
sample_weight=None)``; it returns one value per sample, shape ``(batch_size,)``: the
elementwise loss is multiplied by ``sample_weight`` (broadcast) and by the global
``weight``, then averaged over every axis but ``batch_axis``. The exceptions are MXNet's:
``KLDivLoss`` sums instead of averaging, ``PoissonNLLLoss`` averages over everything,
``CosineEmbeddingLoss`` returns shape ``(batch_size, 1)``.

The common training losses run on fused operators: ``SoftmaxCrossEntropyLoss`` on
``softmax_cross_entropy_with_logits`` (one operator forward and one backward, without
forming the probabilities), ``SigmoidBinaryCrossEntropyLoss`` and ``LogisticLoss`` on
``sigmoid_binary_cross_entropy``, ``CTCLoss`` on ``CTCLoss``. They compute the same
formulas as MXNet's composite ones.

A bad input (a label whose size differs from the prediction's, a sample weight that does
not broadcast, ...) raises ValueError naming the loss and every input's shape.

Example:
    >>> from core import nd
    >>> from gluon import loss as gloss
    >>> pred = nd.array([[0.0, 0.0], [1.0, 3.0]])
    >>> gloss.L2Loss()(pred, nd.array([[1.0, 1.0], [1.0, 1.0]])).asnumpy().tolist()
    [0.5, 1.0]
    >>> ce = gloss.SoftmaxCrossEntropyLoss()
    >>> [round(v, 4) for v in ce(pred, nd.array([0, 1])).asnumpy().tolist()]
    [0.6931, 0.1269]
"""
from __future__ import annotations

import inspect
import math
import numbers

from core.ndarray import NDArray

from .block import HybridBlock

__all__ = [
    "CTCLoss",
    "CosineEmbeddingLoss",
    "HingeLoss",
    "HuberLoss",
    "KLDivLoss",
    "L1Loss",
    "L2Loss",
    "LogisticLoss",
    "Loss",
    "PoissonNLLLoss",
    "SDMLLoss",
    "SigmoidBCELoss",
    "SigmoidBinaryCrossEntropyLoss",
    "SoftmaxCELoss",
    "SoftmaxCrossEntropyLoss",
    "SquaredHingeLoss",
    "TripletLoss",
]


def _apply_weighting(F, loss, weight=None, sample_weight=None):
    """``loss`` times ``sample_weight`` (broadcast) and times the scalar ``weight``.

    Args:
        F: the operator namespace (``core.nd``).
        loss: the elementwise loss.
        weight: a global scalar weight, or None.
        sample_weight: an array broadcastable to ``loss``'s shape (e.g. ``(64, 1)`` to
            weigh each sample of a ``(64, 10)`` loss), or None.

    Returns:
        The weighted loss.
    """
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        if not isinstance(weight, numbers.Number) or isinstance(weight, bool):
            raise TypeError(f"weight must be a number, got {type(weight).__name__} {weight!r}")
        loss = loss * weight
    return loss


def _reshape_like(F, x, y, names=("label", "pred")):
    """``x`` reshaped to ``y``'s shape; ValueError naming both when their sizes differ."""
    if tuple(x.shape) == tuple(y.shape):
        return x
    if math.prod(x.shape) != math.prod(y.shape):
        raise ValueError(f"{names[0]} has shape {tuple(x.shape)} ({math.prod(x.shape)} "
                         f"elements) but {names[1]} has shape {tuple(y.shape)} "
                         f"({math.prod(y.shape)} elements); they must have the same number "
                         "of elements")
    return x.reshape(y.shape)


def _batch_mean(F, loss, batch_axis):
    """The mean over every axis but ``batch_axis``."""
    return F.mean(loss, axis=batch_axis, exclude=True)


def _describe(value) -> str:
    if isinstance(value, NDArray):
        return f"{tuple(value.shape)} {value.dtype}"
    return type(value).__name__ if value is not None else "None"


class Loss(HybridBlock):
    """Base class of the losses.

    Subclasses define ``hybrid_forward(self, F, pred, label, sample_weight=None)`` and
    typically use :func:`_reshape_like` and :meth:`_weighted_mean` (or
    :func:`_apply_weighting` and a reduction of their own). Value and type errors raised inside are re-raised with the
    loss' class name and its inputs' shapes.

    Args:
        weight: a global scalar weight for the loss, or None.
        batch_axis: the axis of the mini-batch.
        **kwargs: ``prefix`` and ``params``, as for any Block.

    Example:
        >>> from core import nd
        >>> from gluon.loss import Loss, _apply_weighting
        >>> class MyL1(Loss):
        ...     def __init__(self, weight=None, batch_axis=0, **kwargs):
        ...         super().__init__(weight, batch_axis, **kwargs)
        ...     def hybrid_forward(self, F, pred, label, sample_weight=None):
        ...         loss = _apply_weighting(F, F.abs(pred - label), self._weight,
        ...                                 sample_weight)
        ...         return F.mean(loss, axis=self._batch_axis, exclude=True)
        >>> MyL1(weight=2.0)(nd.array([[1.0, -1.0]]), nd.zeros((1, 2))).asnumpy().tolist()
        [2.0]
        >>> MyL1()
        MyL1(batch_axis=0, w=None)
    """

    def __init__(self, weight, batch_axis, **kwargs):
        super().__init__(**kwargs)
        if weight is not None and (not isinstance(weight, numbers.Number)
                                   or isinstance(weight, bool)):
            raise TypeError(f"{type(self).__name__}: weight must be a number or None, got "
                            f"{type(weight).__name__} {weight!r}")
        self._weight = weight
        self._batch_axis = batch_axis

    def __repr__(self) -> str:
        return f"{type(self).__name__}(batch_axis={self._batch_axis}, w={self._weight})"

    def _weighted_mean(self, F, loss, sample_weight):
        """``loss`` weighted by ``sample_weight`` and the global weight
        (:func:`_apply_weighting`), then averaged over every axis but ``batch_axis``."""
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return _batch_mean(F, loss, self._batch_axis)

    def forward(self, x, *args, **kwargs):
        """Run :meth:`hybrid_forward`; errors name the loss and its inputs' shapes."""
        try:
            return super().forward(x, *args, **kwargs)
        except (ValueError, TypeError) as e:
            if type(e) not in (ValueError, TypeError):
                raise
            raise type(e)(f"{type(self).__name__}: {e} (inputs: "
                          f"{self._describe_inputs((x, *args), kwargs)})") from e

    def _describe_inputs(self, args, kwargs) -> str:
        try:
            names = [n for n in inspect.signature(self.hybrid_forward).parameters][1:]
        except (TypeError, ValueError):
            names = []
        parts = []
        for i, a in enumerate(args):
            if a is not None:
                parts.append(f"{names[i] if i < len(names) else f'arg{i}'} {_describe(a)}")
        parts += [f"{k} {_describe(v)}" for k, v in kwargs.items() if v is not None]
        return ", ".join(parts)

    def hybrid_forward(self, F, x, *args, **kwargs):
        """The loss computation; subclasses define it."""
        raise NotImplementedError(f"{type(self).__name__} must define hybrid_forward(self, F, "
                                  "pred, label, sample_weight=None)")


class L2Loss(Loss):
    r"""Half the squared error: ``L = 0.5 * (label - pred)**2``, averaged per sample.

    ``label`` may have any shape with as many elements as ``pred``.

    Args:
        weight: a global scalar weight (default 1; None counts as 1).
        batch_axis: the axis of the mini-batch.

    Inputs: ``pred``, ``label`` and an optional ``sample_weight`` broadcastable to
    ``pred``'s shape. Output: shape ``(batch_size,)``.

    Example:
        >>> from core import nd
        >>> from gluon.loss import L2Loss
        >>> L2Loss()(nd.array([[1.0, 3.0]]), nd.array([[0.0, 1.0]])).asnumpy().tolist()
        [1.25]
    """

    def __init__(self, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.square(label - pred)
        half = 0.5 if self._weight is None else self._weight / 2
        loss = _apply_weighting(F, loss, half, sample_weight)
        return _batch_mean(F, loss, self._batch_axis)


class L1Loss(Loss):
    r"""The absolute error: ``L = |label - pred|``, averaged per sample.

    Args:
        weight: a global scalar weight, or None.
        batch_axis: the axis of the mini-batch.

    Inputs: ``pred``, ``label`` (as many elements as ``pred``) and an optional
    ``sample_weight`` broadcastable to ``pred``'s shape. Output: ``(batch_size,)``.

    Example:
        >>> from core import nd
        >>> from gluon.loss import L1Loss
        >>> L1Loss()(nd.array([[1.0, 3.0]]), nd.array([[0.0, 1.0]])).asnumpy().tolist()
        [1.5]
    """

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        return self._weighted_mean(F, F.abs(label - pred), sample_weight)


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
        loss = F.sigmoid_binary_cross_entropy(pred, label, pos_weight,
                                              from_logits=not self._from_sigmoid)
        return self._weighted_mean(F, loss, sample_weight)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


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


class CTCLoss(Loss):
    r"""Connectionist temporal classification loss, on the ``CTCLoss`` operator.

    The last class (``alphabet_size - 1``) is the blank; labels are 0-based and padded
    with -1 (or delimited by ``label_lengths``).

    Args:
        layout: ``pred``'s layout, ``'NTC'`` or ``'TNC'`` (batch, time, classes).
        label_layout: ``label``'s layout, ``'NT'`` or ``'TN'``; its batch axis is the
            loss' ``batch_axis``.
        weight: a global scalar weight, or None.

    Inputs: ``pred`` (unnormalized scores, the softmax is taken inside), ``label``,
    optional ``pred_lengths`` and ``label_lengths`` of shape ``(batch_size,)``, and an
    optional ``sample_weight`` broadcastable to ``(batch_size,)``. Output: the negative
    log-likelihood per sequence, ``(batch_size,)``.

    Example:
        >>> from core import nd
        >>> from gluon.loss import CTCLoss
        >>> pred = nd.zeros((1, 2, 3))  # NTC: uniform over 2 letters and the blank
        >>> round(float(CTCLoss()(pred, nd.array([[0, -1]])).asscalar()), 4)
        1.0986
    """

    def __init__(self, layout="NTC", label_layout="NT", weight=None, **kwargs):
        if layout not in ("NTC", "TNC"):
            raise ValueError(f"CTCLoss: only the 'NTC' and 'TNC' layouts are supported for "
                             f"pred, got {layout!r}")
        if label_layout not in ("NT", "TN"):
            raise ValueError(f"CTCLoss: only the 'NT' and 'TN' layouts are supported for "
                             f"label, got {label_layout!r}")
        self._layout = layout
        self._label_layout = label_layout
        super().__init__(weight, label_layout.find("N"), **kwargs)

    def hybrid_forward(self, F, pred, label, pred_lengths=None, label_lengths=None,
                       sample_weight=None):
        if self._layout == "NTC":
            pred = F.swapaxes(pred, 0, 1)
        if self._batch_axis == 1:
            label = F.swapaxes(label, 0, 1)
        loss = F.CTCLoss(pred, label, pred_lengths, label_lengths,
                         use_data_lengths=pred_lengths is not None,
                         use_label_lengths=label_lengths is not None,
                         blank_label="last")
        return _apply_weighting(F, loss, self._weight, sample_weight)


class HuberLoss(Loss):
    r"""Smoothed L1 loss: ``L = 0.5 / rho * (label - pred)**2`` where
    ``|label - pred| <= rho``, else ``|label - pred| - 0.5 * rho``; averaged per sample.

    Args:
        rho: the threshold between the quadratic and the linear part.
        weight: a global scalar weight, or None.
        batch_axis: the axis of the mini-batch.

    Inputs: ``pred``, ``label`` (as many elements as ``pred``) and an optional
    ``sample_weight`` broadcastable to ``pred``'s shape. Output: ``(batch_size,)``.

    Example:
        >>> from core import nd
        >>> from gluon.loss import HuberLoss
        >>> HuberLoss()(nd.array([[0.5, 3.0]]), nd.zeros((1, 2))).asnumpy().tolist()
        [1.3125]
    """

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.abs(label - pred)
        loss = F.where(loss > self._rho, loss - 0.5 * self._rho,
                       (0.5 / self._rho) * F.square(loss))
        return self._weighted_mean(F, loss, sample_weight)


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
        loss = F.sigmoid_binary_cross_entropy(pred, label, from_logits=True)
        return self._weighted_mean(F, loss, sample_weight)


class TripletLoss(Loss):
    r"""Triplet loss: ``L = max(sum(|positive - pred|**2) - sum(|negative - pred|**2) +
    margin, 0)``, the sums over every axis but ``batch_axis``.

    Args:
        margin: the margin between the positive and the negative distances.
        weight: a global scalar weight, or None.
        batch_axis: the axis of the mini-batch.

    Inputs: ``pred``, ``positive``, ``negative`` (as many elements as ``pred``) and an
    optional ``sample_weight`` broadcastable to ``(batch_size,)`` (MXNet 2.0's; 1.9 has
    none). Output: ``(batch_size,)``.

    Example:
        >>> from core import nd
        >>> from gluon.loss import TripletLoss
        >>> pred, pos, neg = nd.zeros((1, 2)), nd.array([[1.0, 0.0]]), nd.array([[1.0, 1.0]])
        >>> TripletLoss()(pred, pos, neg).asnumpy().tolist()
        [0.0]
    """

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, positive, negative, sample_weight=None):
        positive = _reshape_like(F, positive, pred, ("positive", "pred"))
        negative = _reshape_like(F, negative, pred, ("negative", "pred"))
        loss = F.sum(F.square(positive - pred) - F.square(negative - pred),
                     axis=self._batch_axis, exclude=True)
        loss = F.relu(loss + self._margin)
        return _apply_weighting(F, loss, self._weight, sample_weight)


class PoissonNLLLoss(Loss):
    r"""Negative log-likelihood of a Poisson-distributed ``target``, averaged over all
    elements (the result is a scalar).

    With ``from_logits=True`` (default) ``pred`` is the log of the rate and
    ``L = exp(pred) - target * pred``; otherwise ``L = pred - target * log(pred +
    epsilon)``. ``compute_full=True`` adds Stirling's approximation of ``log(target!)``,
    ``target * log(target) - target + 0.5 * log(2 * pi * target)``, where ``target > 1``
    (0 elsewhere).

    Args:
        weight: a global scalar weight, or None.
        from_logits: whether ``pred`` is the log of the rate.
        batch_axis: the axis of the mini-batch (unused: the mean is over everything).
        compute_full: whether to add the Stirling term.

    Inputs: ``pred``, ``target`` (as many elements as ``pred``), an optional
    ``sample_weight`` broadcastable to ``pred``'s shape and ``epsilon`` (default 1e-8).
    Output: a scalar, shape ``()``.

    Example:
        >>> from core import nd
        >>> from gluon.loss import PoissonNLLLoss
        >>> float(PoissonNLLLoss()(nd.zeros((2, 2)), nd.ones((2, 2))).asscalar())
        1.0
    """

    def __init__(self, weight=None, from_logits=True, batch_axis=0, compute_full=False,
                 **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._compute_full = compute_full

    def hybrid_forward(self, F, pred, target, sample_weight=None, epsilon=1e-08):
        target = _reshape_like(F, target, pred, ("target", "pred"))
        if self._from_logits:
            loss = F.exp(pred) - target * pred
        else:
            loss = pred - target * F.log(pred + epsilon)
        if self._compute_full:
            above = target > 1
            # log(target) only where target > 1: no 0 * log(0) = nan below it
            t = F.where(above, target, F.ones_like(target))
            stirling = t * F.log(t) - t + 0.5 * F.log(2 * t * math.pi)
            loss = loss + stirling * above
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss)


class CosineEmbeddingLoss(Loss):
    r"""Cosine embedding loss: ``1 - cos(input1, input2)`` where ``label`` is 1 and
    ``max(0, cos(input1, input2) - margin)`` where it is -1.

    The cosine is taken along the last axis, ``x . y / max(|x| |y|, 1e-12)``. As in
    MXNet 1.9, the result has shape ``(batch_size, 1)``.

    Args:
        weight: a global scalar weight, or None.
        batch_axis: the axis of the mini-batch.
        margin: the margin for dissimilar pairs.

    Inputs: ``input1``, ``input2`` (as many elements as ``input1``), ``label`` (1 or -1
    per pair, ``(batch_size,)``) and an optional ``sample_weight`` broadcastable to
    ``(batch_size, 1)``. Output: ``(batch_size, 1)``.

    Example:
        >>> from core import nd
        >>> from gluon.loss import CosineEmbeddingLoss
        >>> x = nd.array([[1.0, 0.0], [1.0, 0.0]])
        >>> y = nd.array([[0.0, 1.0], [1.0, 1.0]])
        >>> l = CosineEmbeddingLoss()(x, y, nd.array([1, -1]))
        >>> [round(v, 4) for v in l.asnumpy().ravel().tolist()]
        [1.0, 0.7071]
    """

    def __init__(self, weight=None, batch_axis=0, margin=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, input1, input2, label, sample_weight=None):
        input1 = _reshape_like(F, input1, input2, ("input1", "input2"))
        label = label.reshape((-1, 1))
        cos_sim = self._cosine_similarity(F, input1, input2)
        similar = (1 - cos_sim) * (label == 1)
        dissimilar = F.relu((label == -1) * (cos_sim - self._margin))
        loss = similar + dissimilar
        return _apply_weighting(F, loss, self._weight, sample_weight)

    def _cosine_similarity(self, F, x, y, axis=-1):
        x_norm = F.norm(x, axis=axis).reshape((-1, 1))
        y_norm = F.norm(y, axis=axis).reshape((-1, 1))
        x_dot_y = F.sum(x * y, axis=axis).reshape((-1, 1))
        return x_dot_y / F.maximum(x_norm * y_norm, 1e-12)


class SDMLLoss(Loss):
    r"""Batchwise smoothed deep metric learning loss (Bonadiman et al., 2019,
    arXiv:1905.12786).

    ``x1[i]`` and ``x2[i]`` form a positive pair, every other row of the batch serves as
    a negative. The loss is the KL divergence between the smoothed identity (``1 -
    smoothing_parameter`` on the diagonal, ``smoothing_parameter / (batch_size - 1)``
    elsewhere) and ``log_softmax(-distances, axis=1)``, with ``distances[i, j] =
    |x1[i] - x2[j]|**2``, summed per row.

    Args:
        smoothing_parameter: the probability mass spread over the negatives (< 1).
        weight: a global scalar weight (MXNet 1.9 ignores it; here it multiplies).
        batch_axis: the axis of the mini-batch.

    Inputs: ``x1`` and ``x2`` of shape ``(batch_size, dim)``, ``batch_size >= 2``.
    Output: ``(batch_size,)``.

    Example:
        >>> from core import nd
        >>> from gluon.loss import SDMLLoss
        >>> x = nd.array([[0.0, 0.0], [1.0, 0.0]])
        >>> [round(v, 4) for v in SDMLLoss()(x, x).asnumpy().tolist()]
        [0.0024, 0.0024]
    """

    def __init__(self, smoothing_parameter=0.3, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self.kl_loss = KLDivLoss(from_logits=True)
        self.smoothing_parameter = smoothing_parameter

    def _compute_distances(self, F, x1, x2):
        """Squared Euclidean distances between every row of ``x1`` and of ``x2``."""
        diff = F.broadcast_sub(F.expand_dims(x1, axis=1), F.expand_dims(x2, axis=0))
        return F.sum(F.square(diff), axis=2)

    def _compute_labels(self, F, batch_size, dtype):
        """The smoothed identity matrix of the positive pairs."""
        gold = F.eye(batch_size, dtype=dtype)
        s = self.smoothing_parameter
        return gold * (1 - s) + (1 - gold) * (s / (batch_size - 1))

    def hybrid_forward(self, F, x1, x2):
        if len(x1.shape) != 2 or tuple(x1.shape) != tuple(x2.shape):
            raise ValueError(f"x1 and x2 must be 2-D (batch_size, dim) of the same shape, got "
                             f"{tuple(x1.shape)} and {tuple(x2.shape)}")
        batch_size = x1.shape[0]
        if batch_size < 2:
            raise ValueError(f"needs a batch of at least 2 pairs (the other rows are the "
                             f"negatives), got batch_size={batch_size}")
        labels = self._compute_labels(F, batch_size, x1.dtype).as_in_context(x1.context)
        log_probabilities = F.log_softmax(-self._compute_distances(F, x1, x2), axis=1)
        loss = self.kl_loss(log_probabilities, labels)
        return _apply_weighting(F, loss, self._weight, None)
