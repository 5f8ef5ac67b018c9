"""``mxnet.contrib.amp.loss_scaler``: :mod:`core.amp.loss_scaler` under MXNet's path.

Example:
    >>> from core.contrib.amp.loss_scaler import LossScaler
    >>> LossScaler().loss_scale
    65536.0
"""
from __future__ import annotations

from core.amp.loss_scaler import *
from core.amp.loss_scaler import __all__  # noqa: F401
