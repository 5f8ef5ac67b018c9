"""``mxnet.contrib.amp``: MXNet 1.9's home of AMP, the same functions as :mod:`core.amp`
(one state: ``core.amp.amp``'s), so ``from mxnet.contrib import amp``,
``from mxnet.contrib.amp import amp`` and ``from mxnet.contrib.amp.amp import bfloat16``
work. The submodules ``amp`` and ``loss_scaler`` re-export core.amp's.

Example:
    >>> from core.contrib import amp
    >>> import core.amp
    >>> amp.init is core.amp.init and amp.amp.scale_loss is core.amp.scale_loss
    True
"""
from __future__ import annotations

from core.amp import *
from core.amp import __all__, amp, lists, loss_scaler  # noqa: F401
