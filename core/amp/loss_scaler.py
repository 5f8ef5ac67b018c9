"""Dynamic loss scaling for AMP: :class:`LossScaler`.

A float16 gradient underflows to zero where the float32 one would not; multiplying the
loss by a large scale (2**16) lifts the gradients into float16's range, and the update
divides it out again. Too large a scale overflows to inf or NaN instead: then the step
is skipped and the scale halves. After ``scale_window`` steps in a row without an
overflow, the scale doubles (up to ``max_scale``), so it stays near the largest safe one.
"""
from __future__ import annotations

import logging

import numpy

__all__ = ["LossScaler", "grads_finite"]

_log = logging.getLogger(__name__)


def grads_finite(params) -> bool:
    """Whether every gradient of ``params`` (on every context) is finite.

    Args:
        params: Parameters (objects with ``list_grad()``); those with ``grad_req='null'``
            or without gradients are skipped.

    Returns:
        False when any gradient holds an inf or a NaN.

    Example:
        >>> from gluon import Parameter
        >>> p = Parameter("w", shape=(2,)); p.initialize()
        >>> grads_finite([p])
        True
        >>> p.grad()[:] = float("inf")
        >>> grads_finite([p])
        False
    """
    for p in params:
        if getattr(p, "grad_req", "write") == "null":
            continue
        try:
            grads = p.list_grad()
        except RuntimeError:  # no gradient buffers (uninitialized or grad_req null)
            continue
        for g in grads:
            if g is None:
                continue
            a = g.asnumpy()
            if a.dtype.kind not in "fc":
                a = a.astype(numpy.float32)  # bfloat16 (ml_dtypes)
            if not numpy.isfinite(a).all():
                return False
    return True


class LossScaler:
    """Dynamic loss scaler (MXNet's ``amp.loss_scaler.LossScaler``).

    Args:
        init_scale: the first scale (MXNet: 2**16).
        scale_factor: what the scale is divided by on an overflow and multiplied by
            after ``scale_window`` clean steps.
        scale_window: clean steps in a row before the scale grows (MXNet: 2000).
        max_scale: the largest scale (MXNet: 2**24).
        min_scale: the smallest scale (the scale never halves below it).

    Unlike MXNet's, where a decision takes effect one step late, a change takes effect
    at once: the step after an overflow scales its loss by the halved scale.

    Example:
        >>> s = LossScaler(init_scale=8.0, scale_window=2)
        >>> s.update(overflow=True), s.loss_scale
        (True, 4.0)
        >>> s.update(False), s.update(False), s.loss_scale
        (False, False, 8.0)
    """

    def __init__(self, init_scale: float = 2.0 ** 16, scale_factor: float = 2.0,
                 scale_window: int = 2000, max_scale: float = 2.0 ** 24,
                 min_scale: float = 2.0 ** -24):
        if not init_scale > 0 or not scale_factor > 1 or int(scale_window) < 1:
            raise ValueError(f"LossScaler: need init_scale > 0, scale_factor > 1 and "
                             f"scale_window >= 1, got init_scale={init_scale}, "
                             f"scale_factor={scale_factor}, scale_window={scale_window}")
        self._loss_scale = float(init_scale)
        self._scale_factor = float(scale_factor)
        self._scale_seq_len = int(scale_window)
        self._max_loss_scale = float(max_scale)
        self._min_loss_scale = float(min_scale)
        self._unskipped = 0
        self.skipped_steps = 0

    @property
    def loss_scale(self) -> float:
        """The scale the next loss is multiplied by."""
        return self._loss_scale

    @property
    def scale_window(self) -> int:
        """Clean steps in a row before the scale grows."""
        return self._scale_seq_len

    def update(self, overflow: bool) -> bool:
        """Adapt the scale to one step's outcome.

        Args:
            overflow: whether that step's gradients had an inf or a NaN.

        Returns:
            ``overflow`` (the step is to be skipped when True).
        """
        if overflow:
            self._loss_scale = max(self._min_loss_scale, self._loss_scale / self._scale_factor)
            self._unskipped = 0
            self.skipped_steps += 1
            _log.info("AMP: overflow, step skipped; decreasing loss scale to %g",
                      self._loss_scale)
            return True
        self._unskipped += 1
        if self._unskipped == self._scale_seq_len:
            self._unskipped = 0
            self._loss_scale = min(self._max_loss_scale, self._loss_scale * self._scale_factor)
            _log.info("AMP: increasing loss scale to %g", self._loss_scale)
        return False

    def has_overflow(self, params) -> bool:
        """Check ``params``' gradients for inf/NaN and adapt the scale (see :meth:`update`).

        Args:
            params: the Parameters whose gradients to check.

        Returns:
            True when a gradient overflowed (the step is to be skipped).
        """
        return self.update(not grads_finite(params))
