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
from .classification import (
    HingeLoss,
    KLDivLoss,
    LogisticLoss,
    SigmoidBCELoss,
    SigmoidBinaryCrossEntropyLoss,
    SoftmaxCELoss,
    SoftmaxCrossEntropyLoss,
    SquaredHingeLoss,
)
from .ctc import CTCLoss
from .embedding import CosineEmbeddingLoss, SDMLLoss, TripletLoss
from .loss import Loss
from .loss import _apply_weighting as _apply_weighting  # for custom losses, as in MXNet
from .loss import _reshape_like as _reshape_like
from .regression import HuberLoss, L1Loss, L2Loss, PoissonNLLLoss

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
