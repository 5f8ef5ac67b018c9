"""Metric-learning losses on embeddings: ``TripletLoss``, ``CosineEmbeddingLoss`` and
``SDMLLoss`` (MXNet Gluon 1.9's ``gluon.loss``; re-exported by ``gluon.loss``)."""
from __future__ import annotations

from .classification import KLDivLoss
from .loss import Loss, _apply_weighting, _reshape_like

__all__ = ["CosineEmbeddingLoss", "SDMLLoss", "TripletLoss"]


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
