"""AMP's bfloat16 operator lists (see :mod:`core.amp.lists`).

bfloat16 has float32's exponent range, so fewer ops need float32 than with float16
(no overflow in ``exp``-free sums); what loses accuracy in 8 mantissa bits stays float32.
``BF16_USE_FP32_PARAMS`` names, per op, which inputs stay float32 (``True``) when the op
runs in bfloat16: BatchNorm's gamma, beta and statistics.

Example:
    >>> from core.amp.lists.symbol_bf16 import BF16_FUNCS, BF16_USE_FP32_PARAMS
    >>> "Convolution" in BF16_FUNCS, BF16_USE_FP32_PARAMS["BatchNorm"]
    (True, [False, True, True, True, True])
"""
from __future__ import annotations

from . import symbol_fp16 as _fp16

BF16_FUNCS = [
    "BatchNorm",
    "Convolution",
    "Deconvolution",
    "FullyConnected",
    "Pooling",
    "batch_dot",
    "convolution",
    "deconvolution",
    "dot",
    "pooling",
]

# input positions (in the op's input order) that stay float32 in a bfloat16 op
BF16_USE_FP32_PARAMS = {
    "BatchNorm": [False, True, True, True, True],
}

BF16_FP32_FUNCS = sorted(
    (set(_fp16.FP16_FP32_FUNCS) | {"RNN", "linalg_gemm", "linalg_gemm2"}) - set(BF16_FUNCS))

FP32_FUNCS = list(_fp16.FP32_FUNCS)

CONDITIONAL_FP32_FUNCS = list(_fp16.CONDITIONAL_FP32_FUNCS)

WIDEST_TYPE_CASTS = list(_fp16.WIDEST_TYPE_CASTS)

LOSS_OUTPUT_FUNCTIONS = list(_fp16.LOSS_OUTPUT_FUNCTIONS)
