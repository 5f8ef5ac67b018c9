"""Optimizers, learning-rate schedulers and the Updater (MXNet 1.9's ``mx.optimizer``).

Optimizers are created by name (case-insensitive) with :func:`create`, or directly:
``SGD`` (momentum), ``NAG``, ``Signum``, ``LARS``, ``SGLD``, ``DCASGD``, ``Adam``,
``AdamW``, ``Adamax``, ``Nadam``, ``LAMB``, ``RMSProp`` (plain and centered),
``AdaGrad``, ``AdaDelta``, ``Ftrl``, ``FTML``, and MXNet's ``Test`` and ``ccSGD``.
Every update runs in place on the weight's buffer, fused into one kernel per weight on
GPU. :func:`get_updater` pairs an optimizer with lazily created per-weight states.

Example:
    >>> from core import nd, optimizer
    >>> opt = optimizer.create('adam', learning_rate=0.01, wd=1e-4)
    >>> updater = optimizer.get_updater(opt)
    >>> w = nd.ones((2, 2))
    >>> updater(0, nd.ones((2, 2)), w)
    >>> opt.num_update
    1
"""
from . import lr_scheduler
from .adagrad import AdaDelta, AdaGrad, RMSProp
from .adam import Adam, Adamax, AdamW, Nadam
from .ftrl import FTML, Ftrl
from .lamb import LAMB
from .optimizer import Optimizer, Test, create, register
from .sgd import DCASGD, LARS, NAG, SGD, SGLD, Signum, ccSGD
from .updater import Updater, get_updater

__all__ = [
    "DCASGD",
    "FTML",
    "LAMB",
    "LARS",
    "NAG",
    "SGD",
    "SGLD",
    "AdaDelta",
    "AdaGrad",
    "Adam",
    "AdamW",
    "Adamax",
    "Ftrl",
    "Nadam",
    "Optimizer",
    "RMSProp",
    "Signum",
    "Test",
    "Updater",
    "ccSGD",
    "create",
    "get_updater",
    "lr_scheduler",
    "register",
]
