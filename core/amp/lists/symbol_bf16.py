"""AMP's bfloat16 operator lists (see :mod:`core.amp.lists`), MXNet 1.9's policy.

MXNet's bfloat16 AMP (on CPUs, through oneDNN) runs only the convolutions and matrix
products in bfloat16, passes a few ops through in whatever dtype they get (BatchNorm,
pooling, ReLU, ...), and casts the inputs of everything else to float32. The lists
here follow it, so a converted graph has MXNet's casts. ``BF16_USE_FP32_PARAMS`` names,
per op, the inputs that stay float32 when the op runs in bfloat16 (MXNet's format: the
input's name, or ``''`` for one that is cast): BatchNorm's gamma, beta and statistics.

Example:
    >>> from core.amp.lists.symbol_bf16 import BF16_FUNCS, BF16_USE_FP32_PARAMS
    >>> BF16_FUNCS, BF16_USE_FP32_PARAMS["BatchNorm"][:2]
    (['Convolution', 'FullyConnected', 'convolution'], ['', 'gamma'])
"""
from __future__ import annotations

from . import symbol_fp16 as _fp16

BF16_FUNCS = [
    "Convolution",
    "FullyConnected",
    "convolution",
]

# the inputs (by name; '' for those cast) that stay float32 in a bfloat16 op
BF16_USE_FP32_PARAMS = {
    "BatchNorm": ["", "gamma", "beta", "moving_mean", "moving_var"],
}

# as given: the ops with bfloat16 kernels that do not need a cast
BF16_FP32_FUNCS = [
    "BatchNorm",
    "Concat",
    "LRN",
    "Pooling",
    "abs",
    "clip",
    "concat",
    "pooling",
    "relu",
    "sqrt",
    "square",
    "tanh",
]

CONDITIONAL_FP32_FUNCS = list(_fp16.CONDITIONAL_FP32_FUNCS)

WIDEST_TYPE_CASTS = [n for n in _fp16.WIDEST_TYPE_CASTS
                     if n not in BF16_FP32_FUNCS and n != "broadcast_mul"]

LOSS_OUTPUT_FUNCTIONS = list(_fp16.LOSS_OUTPUT_FUNCTIONS)

# everything else in float32
FP32_FUNCS = sorted(
    (set(_fp16.FP16_FUNCS) | set(_fp16.FP16_FP32_FUNCS) | set(_fp16.FP32_FUNCS))
    - set(BF16_FUNCS) - set(BF16_FP32_FUNCS) - {c[0] for c in CONDITIONAL_FP32_FUNCS}
    - set(WIDEST_TYPE_CASTS) | {"broadcast_mul"})
