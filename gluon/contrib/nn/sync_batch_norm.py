"""MXNet 1.9's ``contrib.nn.SyncBatchNorm``: the same class as ``gluon.nn.SyncBatchNorm``.

Every replica of the layer (one per context) normalizes its slice of the batch with the
mean and variance of the whole batch over ``num_devices`` contexts (forward and
backward synchronized; see :class:`gluon.nn.SyncBatchNorm` and
:mod:`gluon.nn.batch_sync`). The replicas run concurrently under
:func:`core.parallel.forward_backward` (``gluon.Trainer.forward_backward``) or one
thread per context; a sequential loop in the main thread raises at once.

Example:
    >>> from gluon import nn
    >>> from gluon.contrib.nn import SyncBatchNorm
    >>> SyncBatchNorm is nn.SyncBatchNorm
    True
"""
from __future__ import annotations

from core.parallel.rendezvous import TIMEOUT_S

from ...nn.norm_layers import SyncBatchNorm

__all__ = ["TIMEOUT_S", "SyncBatchNorm"]
