"""The connectionist temporal classification loss, ``CTCLoss`` (MXNet Gluon 1.9's
``gluon.loss``; re-exported by ``gluon.loss``)."""
from __future__ import annotations

from .loss import Loss, _apply_weighting

__all__ = ["CTCLoss"]


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
