"""Learning-rate schedules (MXNet 1.9's ``mx.lr_scheduler``).

A scheduler maps the update count ``num_update`` (the largest number of updates any
weight has received) to a learning rate. Every scheduler can start with a warm-up of
``warmup_steps`` updates, either rising linearly from ``warmup_begin_lr`` to ``base_lr``
or holding ``warmup_begin_lr``. The optimizer calls its scheduler at every update.

As in MXNet, ``FactorScheduler`` and ``MultiFactorScheduler`` keep state (they lower
``base_lr`` as they go), so they expect non-decreasing update counts.

Example:
    >>> from core import lr_scheduler
    >>> s = lr_scheduler.FactorScheduler(step=10, factor=0.5, base_lr=1.0)
    >>> [s(n) for n in (1, 10, 11, 21)]
    [1.0, 1.0, 0.5, 0.25]
"""
from __future__ import annotations

import logging
from math import cos, pi

_log = logging.getLogger(__name__)

__all__ = ["CosineScheduler", "FactorScheduler", "LRScheduler", "MultiFactorScheduler",
           "PolyScheduler"]


class LRScheduler:
    """The base class of learning-rate schedulers.

    Args:
        base_lr: the learning rate after warm-up.
        warmup_steps: the number of warm-up updates.
        warmup_begin_lr: the learning rate at update 0 of the warm-up.
        warmup_mode: ``'linear'`` (rise in equal steps to ``base_lr``) or ``'constant'``
            (hold ``warmup_begin_lr``).

    Raises:
        ValueError: for a negative ``warmup_steps``, ``warmup_begin_lr > base_lr`` or
            an unknown mode.
    """

    def __init__(self, base_lr: float = 0.01, warmup_steps: int = 0,
                 warmup_begin_lr: float = 0, warmup_mode: str = "linear"):
        self.base_lr = base_lr
        if not isinstance(warmup_steps, int):
            raise TypeError(f"LRScheduler: warmup_steps must be an int, got {warmup_steps!r}")
        self.warmup_steps = warmup_steps
        self.warmup_final_lr = base_lr
        self.warmup_begin_lr = warmup_begin_lr
        if self.warmup_begin_lr > self.warmup_final_lr:
            raise ValueError("Base lr has to be higher than warmup_begin_lr")
        if self.warmup_steps < 0:
            raise ValueError("Warmup steps has to be positive or 0")
        if warmup_mode not in ("linear", "constant"):
            raise ValueError("Supports only linear and constant modes of warmup")
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update: int) -> float:
        """The warm-up learning rate at ``num_update`` (< ``warmup_steps``)."""
        if num_update >= self.warmup_steps:
            raise ValueError(f"get_warmup_lr: update {num_update} is past the warm-up "
                             f"({self.warmup_steps} steps)")
        if self.warmup_mode == "linear":
            increase = (self.warmup_final_lr - self.warmup_begin_lr) \
                * float(num_update) / float(self.warmup_steps)
            return self.warmup_begin_lr + increase
        return self.warmup_begin_lr

    def __call__(self, num_update: int) -> float:
        """The learning rate after ``num_update`` updates."""
        raise NotImplementedError("must override this")


class FactorScheduler(LRScheduler):
    """Multiply the rate by ``factor`` every ``step`` updates, down to ``stop_factor_lr``.

    After warm-up, the rate at update ``n`` is
    ``max(base_lr * factor ** floor((n - 1) / step), stop_factor_lr)``.

    Args:
        step: the number of updates between reductions (>= 1).
        factor: the reduction factor (<= 1).
        stop_factor_lr: the rate does not go below this.
        base_lr, warmup_steps, warmup_begin_lr, warmup_mode: as :class:`LRScheduler`.

    Example:
        >>> from core import lr_scheduler
        >>> s = lr_scheduler.FactorScheduler(step=2, factor=0.1, base_lr=1.0, warmup_steps=2)
        >>> [round(s(n), 6) for n in range(6)]
        [0.0, 0.5, 1.0, 0.1, 0.1, 0.01]
    """

    def __init__(self, step: int, factor: float = 1, stop_factor_lr: float = 1e-8,
                 base_lr: float = 0.01, warmup_steps: int = 0, warmup_begin_lr: float = 0,
                 warmup_mode: str = "linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if step < 1:
            raise ValueError("Schedule step must be greater or equal than 1 round")
        if factor > 1.0:
            raise ValueError("Factor must be no more than 1 to make lr reduce")
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.count = 0

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        # a loop rather than one step: training may resume at a later update
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr *= self.factor
            if self.base_lr < self.stop_factor_lr:
                self.base_lr = self.stop_factor_lr
                _log.info("Update[%d]: now learning rate arrived at %0.5e, will not "
                             "change in the future", num_update, self.base_lr)
            else:
                _log.info("Update[%d]: Change learning rate to %0.5e",
                             num_update, self.base_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Multiply the rate by ``factor`` after each update count in ``step``.

    After warm-up, the rate at update ``n`` is ``base_lr * factor ** k`` where ``k``
    is the number of entries of ``step`` smaller than ``n``.

    Args:
        step: increasing update counts (each >= 1).
        factor: the reduction factor (<= 1).
        base_lr, warmup_steps, warmup_begin_lr, warmup_mode: as :class:`LRScheduler`.

    Example:
        >>> from core import lr_scheduler
        >>> s = lr_scheduler.MultiFactorScheduler(step=[2, 4], factor=0.5, base_lr=1.0)
        >>> [s(n) for n in range(1, 7)]
        [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]
    """

    def __init__(self, step: list, factor: float = 1, base_lr: float = 0.01,
                 warmup_steps: int = 0, warmup_begin_lr: float = 0,
                 warmup_mode: str = "linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(step, list) or len(step) < 1:
            raise ValueError(f"MultiFactorScheduler: step must be a non-empty list of "
                             f"update counts, got {step!r}")
        for i, s in enumerate(step):
            if i != 0 and s <= step[i - 1]:
                raise ValueError("Schedule step must be an increasing integer list")
            if s < 1:
                raise ValueError("Schedule step must be greater or equal than 1 round")
        if factor > 1.0:
            raise ValueError("Factor must be no more than 1 to make lr reduce")
        self.step = step
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind <= len(self.step) - 1:
            if num_update > self.step[self.cur_step_ind]:
                self.count = self.step[self.cur_step_ind]
                self.cur_step_ind += 1
                self.base_lr *= self.factor
                _log.info("Update[%d]: Change learning rate to %0.5e",
                             num_update, self.base_lr)
            else:
                return self.base_lr
        return self.base_lr


class _DecayScheduler(LRScheduler):
    """The base of the schedulers that decay from ``base_lr`` to ``final_lr`` at
    ``max_update``: after warm-up, the rate at update ``n <= max_update`` is
    ``final_lr + _decayed(n - warmup_steps)``, and ``final_lr`` after that."""

    def __init__(self, max_update: int, base_lr: float, final_lr: float, warmup_steps: int,
                 warmup_begin_lr: float, warmup_mode: str):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(max_update, int):
            raise TypeError(f"{type(self).__name__}: max_update must be an int, got "
                            f"{max_update!r}")
        if max_update < 1:
            raise ValueError("maximum number of updates must be strictly positive")
        self.base_lr_orig = base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = self.max_update - self.warmup_steps

    def _decayed(self, step: int) -> float:
        """What the rate is above ``final_lr`` after ``step`` updates past warm-up."""
        raise NotImplementedError("must override this")

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            self.base_lr = self.final_lr + self._decayed(num_update - self.warmup_steps)
        return self.base_lr


class PolyScheduler(_DecayScheduler):
    """Polynomial decay to ``final_lr`` at ``max_update``.

    After warm-up, the rate at update ``n <= max_update`` is
    ``final_lr + (base_lr - final_lr) * (1 - (n - warmup_steps) / (max_update -
    warmup_steps)) ** pwr``, and ``final_lr`` after that.

    Args:
        max_update: the update count at which the rate reaches ``final_lr``.
        base_lr: the starting rate.
        pwr: the power of the decay.
        final_lr: the final rate.
        warmup_steps, warmup_begin_lr, warmup_mode: as :class:`LRScheduler`.

    Example:
        >>> from core import lr_scheduler
        >>> s = lr_scheduler.PolyScheduler(max_update=4, base_lr=1.0, pwr=2)
        >>> [s(n) for n in (0, 1, 2, 4, 10)]
        [1.0, 0.5625, 0.25, 0.0, 0.0]
    """

    def __init__(self, max_update: int, base_lr: float = 0.01, pwr: float = 2,
                 final_lr: float = 0, warmup_steps: int = 0, warmup_begin_lr: float = 0,
                 warmup_mode: str = "linear"):
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                         warmup_mode)
        self.power = pwr

    def _decayed(self, step: int) -> float:
        return (self.base_lr_orig - self.final_lr) * pow(
            1 - float(step) / float(self.max_steps), self.power)


class CosineScheduler(_DecayScheduler):
    """Cosine decay to ``final_lr`` at ``max_update``.

    After warm-up, the rate at update ``n <= max_update`` is
    ``final_lr + (base_lr - final_lr) * (1 + cos(pi * (n - warmup_steps) / (max_update -
    warmup_steps))) / 2``, and ``final_lr`` after that.

    Args:
        max_update: the update count at which the rate reaches ``final_lr``.
        base_lr: the starting rate.
        final_lr: the final rate.
        warmup_steps, warmup_begin_lr, warmup_mode: as :class:`LRScheduler`.

    Example:
        >>> from core import lr_scheduler
        >>> s = lr_scheduler.CosineScheduler(max_update=10, base_lr=1.0, warmup_steps=2,
        ...                                  warmup_begin_lr=0.5)
        >>> [round(s(n), 4) for n in (0, 1, 2, 6, 10, 20)]
        [0.5, 0.75, 1.0, 0.5, 0.0, 0.0]
    """

    def __init__(self, max_update: int, base_lr: float = 0.01, final_lr: float = 0,
                 warmup_steps: int = 0, warmup_begin_lr: float = 0,
                 warmup_mode: str = "linear"):
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                         warmup_mode)

    def _decayed(self, step: int) -> float:
        return (self.base_lr_orig - self.final_lr) * (1 + cos(pi * step / self.max_steps)) / 2
