"""AMP (automatic mixed precision): MXNet 1.9's ``mx.amp`` and ``mxnet.contrib.amp``.

:mod:`core.amp.amp` holds the API (``init``, ``init_trainer``, ``scale_loss``,
``unscale``, ``convert_symbol``, ``convert_model``, ``convert_hybrid_block``, the
``list_*`` functions), :mod:`core.amp.loss_scaler` the dynamic loss scaler and
:mod:`core.amp.lists` the op lists. See ``docs/gpu.md`` ("AMP").

Example:
    >>> from core import amp
    >>> amp.list_lp16_ops("float16")[:2]
    ['Convolution', 'Deconvolution']
"""
from __future__ import annotations

from . import amp, lists, loss_scaler
from .amp import *
from .amp import __all__ as _all

__all__ = ["amp", "lists", "loss_scaler", *_all]  # noqa: PLE0604
