"""AMP's float16 operator lists (see :mod:`core.amp.lists`).

Example:
    >>> from core.amp.lists.symbol_fp16 import FP16_FUNCS
    >>> sorted(FP16_FUNCS)[:3]
    ['Convolution', 'Deconvolution', 'FullyConnected']
"""
from __future__ import annotations

# where float16 pays: matrix products and convolutions (tensor cores on GPUs)
FP16_FUNCS = [
    "Convolution",
    "Deconvolution",
    "FullyConnected",
    "RNN",
    "batch_dot",
    "dot",
    "linalg_gemm",
    "linalg_gemm2",
]

# run in whatever dtype they are given: data movement, piecewise-linear ops, pooling,
# normalizations that keep float32 statistics internally
FP16_FP32_FUNCS = [
    "Activation",
    "BatchNorm",
    "Dropout",
    "Embedding",
    "Flatten",
    "LeakyReLU",
    "Pooling",
    "Reshape",
    "SequenceLast",
    "SequenceMask",
    "SequenceReverse",
    "SliceChannel",
    "UpSampling",
    "abs",
    "argmax",
    "argmin",
    "broadcast_to",
    "ceil",
    "clip",
    "expand_dims",
    "flatten",
    "floor",
    "max",
    "min",
    "one_hot",
    "ones_like",
    "pick",
    "relu",
    "repeat",
    "reshape",
    "round",
    "sign",
    "slice",
    "slice_axis",
    "split",
    "squeeze",
    "take",
    "tile",
    "transpose",
    "zeros_like",
]

# always float32: range (exp, pow), accuracy (log, reductions, norms) and the losses
FP32_FUNCS = [
    "CTCLoss",
    "GroupNorm",
    "InstanceNorm",
    "L2Normalization",
    "LRN",
    "LayerNorm",
    "LinearRegressionOutput",
    "LogisticRegressionOutput",
    "MAERegressionOutput",
    "MakeLoss",
    "SoftmaxActivation",
    "SoftmaxOutput",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctanh",
    "cbrt",
    "cosh",
    "ctc_loss",
    "erf",
    "erfinv",
    "exp",
    "expm1",
    "gamma",
    "gammaln",
    "log",
    "log10",
    "log1p",
    "log2",
    "log_softmax",
    "make_loss",
    "mean",
    "nanprod",
    "nansum",
    "norm",
    "power",
    "prod",
    "rcbrt",
    "reciprocal",
    "rsqrt",
    "sinh",
    "smooth_l1",
    "softmax",
    "softmax_cross_entropy",
    "softmin",
    "sqrt",
    "square",
    "sum",
    "tan",
    "topk",
]

# float32 only for these attribute values (the others run as given)
CONDITIONAL_FP32_FUNCS = [
    ("Activation", "act_type", ["softrelu"]),
    ("LeakyReLU", "act_type", ["elu", "selu"]),
]

# several inputs: all are cast to the widest floating dtype among them
WIDEST_TYPE_CASTS = [
    "Concat",
    "ElementWiseSum",
    "add_n",
    "broadcast_add",
    "broadcast_div",
    "broadcast_hypot",
    "broadcast_maximum",
    "broadcast_minimum",
    "broadcast_mul",
    "broadcast_sub",
    "concat",
    "elemwise_add",
    "elemwise_div",
    "elemwise_mul",
    "elemwise_sub",
    "maximum",
    "minimum",
    "stack",
    "where",
]

# output ops whose grad_scale attribute AMP multiplies by the loss scale
LOSS_OUTPUT_FUNCTIONS = [
    "LinearRegressionOutput",
    "LogisticRegressionOutput",
    "MAERegressionOutput",
    "SoftmaxOutput",
]
