"""Learning-rate schedulers, reachable as ``core.lr_scheduler`` (MXNet's ``mx.lr_scheduler``).

They live in :mod:`core.optimizer.lr_scheduler`; see there.

Example:
    >>> from core import lr_scheduler
    >>> lr_scheduler.PolyScheduler(max_update=10, base_lr=0.1, pwr=1)(5)
    0.05
"""
from .optimizer.lr_scheduler import (  # noqa: F401 - re-exported
    CosineScheduler,
    FactorScheduler,
    LRScheduler,
    MultiFactorScheduler,
    PolyScheduler,
    __all__,
)
