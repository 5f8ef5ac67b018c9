"""The base class of the losses, :class:`Loss`, and what the losses share: the weighting
by ``sample_weight`` and the global ``weight``, the per-sample mean and the reshape of a
label to the prediction's shape (MXNet Gluon 1.9's ``gluon.loss``)."""
from __future__ import annotations

import inspect
import math
import numbers

from core import nd
from core.ndarray import NDArray

from ..block import HybridBlock

__all__ = ["Loss"]


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


def _imperative(F) -> bool:
    """Whether ``hybrid_forward`` runs on NDArrays (``F`` is ``core.nd``, also while a
    hybridized block is traced) rather than composing shapeless Symbols (``core.sym``)."""
    return F is nd


def _reshape_like(F, x, y, names=("label", "pred")):
    """``x`` reshaped to ``y``'s shape; ValueError naming both when their sizes differ.

    On Symbols (``F = core.sym``) it is MXNet's ``F.reshape_like(x, y)``: the shapes are
    known, and checked, only when the Symbol is bound."""
    if not _imperative(F):
        return F.reshape_like(x, y)
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
    if type(value).__name__ == "Symbol":
        return f"Symbol '{value.name}'"
    return type(value).__name__ if value is not None else "None"


class Loss(HybridBlock):
    """Base class of the losses.

    Subclasses define ``hybrid_forward(self, F, pred, label, sample_weight=None)`` and
    typically use :func:`_reshape_like` and :meth:`_weighted_mean` (or
    :func:`_apply_weighting` and a reduction of their own). Value and type errors raised
    inside are re-raised with the loss' class name and its inputs' shapes.

    Every loss also composes on Symbols of unknown shape, as in MXNet 1.x:
    ``loss(sym.var('pred'), sym.var('label'))`` is a Symbol built with ``F = core.sym``
    operators only (``reshape_like``, ``broadcast_mul``, ``mean(..., exclude=True)``,
    ...), whose shapes are inferred when it is bound (e.g. by ``mx.mod.Module``).

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
