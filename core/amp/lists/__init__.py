"""AMP's operator lists, one module per low-precision dtype (``symbol_fp16``,
``symbol_bf16``), under MXNet 1.9's names. Every name is a ``core.nd`` function.

Each module defines:

- ``LP16_FUNCS`` (``FP16_FUNCS``/``BF16_FUNCS``): run in the low-precision dtype (their
  floating inputs are cast to it): the convolutions and fully-connected layers, where
  the speed is.
- ``FP32_FUNCS``: always run in float32 (their inputs are cast up): exponentials,
  logarithms, reductions, softmax and the losses, where float16 loses range or accuracy.
- ``LP16_FP32_FUNCS`` (``FP16_FP32_FUNCS``/``BF16_FP32_FUNCS``): run in whatever dtype
  they are given (shape ops, ReLU, pooling, ...); nothing is cast.
- ``CONDITIONAL_FP32_FUNCS``: ``(name, attribute, values)``: float32 when the attribute
  has one of the values (``Activation`` with ``act_type='softrelu'``), else as given.
- ``WIDEST_TYPE_CASTS``: ops with several inputs that run in the widest dtype among
  them (a float16 and a float32 input: both float32); ``dot`` and ``batch_dot`` too.

The names and their placement follow MXNet 1.9's lists for the operators kbackend
has (``tests/core/amp/test_convert.py`` compares a converted graph with MXNet's), plus
kbackend's own operators (``softmax_cross_entropy_with_logits`` in float32, ...).
- ``LOSS_OUTPUT_FUNCTIONS``: the output ops with a ``grad_scale`` that AMP multiplies by
  the loss scale (``SoftmaxOutput``, ...).

Example:
    >>> from core.amp.lists import symbol_fp16
    >>> "FullyConnected" in symbol_fp16.FP16_FUNCS, "softmax" in symbol_fp16.FP32_FUNCS
    (True, True)
"""
from __future__ import annotations

from . import symbol_bf16, symbol_fp16

__all__ = ["symbol_bf16", "symbol_fp16"]
