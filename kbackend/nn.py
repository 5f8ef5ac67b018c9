"""Keras backend ``nn``: activations, convolutions, losses, ... on core's operators.

Implemented so far: ``relu``, ``sigmoid``, ``softmax``, ``log_softmax``; the rest of
Keras' nn interface (``_NOT_YET``) raises NotImplementedError naming the function.
"""
from __future__ import annotations

from keras.src.backend import config
from keras.src.backend.common import standardize_dtype

from core import nd
from kbackend._missing import add_stubs
from kbackend.core import cast, convert_to_tensor


def _float(x):
    x = convert_to_tensor(x)
    dtype = standardize_dtype(x.dtype)
    if "int" in dtype or dtype == "bool":
        x = cast(x, config.floatx())
    return x


def relu(x):
    return nd.relu(_float(x))


def sigmoid(x):
    return nd.sigmoid(_float(x))


def _axes(x, axis):
    axes = tuple(range(x.ndim)) if axis is None else axis
    return axes if isinstance(axes, (tuple, list)) else (axes,)


def softmax(x, axis=-1):
    x = _float(x)
    axes = _axes(x, axis)
    if len(axes) == 1:
        return nd.softmax(x, axis=axes[0])
    # Several axes: the softmax over their flattened product.
    exp_x = (x - x.max(axis=tuple(axes), keepdims=True)).exp()
    return exp_x / exp_x.sum(axis=tuple(axes), keepdims=True)


def log_softmax(x, axis=-1):
    x = _float(x)
    axes = _axes(x, axis)
    if len(axes) == 1:
        return nd.log_softmax(x, axis=axes[0])
    shifted = x - x.max(axis=tuple(axes), keepdims=True)
    return shifted - shifted.exp().sum(axis=tuple(axes), keepdims=True).log()


_NOT_YET = [
    "relu6", "sparse_sigmoid", "tanh", "tanh_shrink", "softplus", "softsign",
    "soft_shrink", "sparse_plus", "silu", "squareplus", "log_sigmoid", "leaky_relu",
    "hard_sigmoid", "hard_silu", "elu", "selu", "gelu", "celu", "glu", "hard_tanh",
    "hard_shrink", "threshold", "sparsemax", "max_pool", "average_pool",
    "adaptive_average_pool", "adaptive_max_pool", "conv", "depthwise_conv",
    "separable_conv", "conv_transpose", "one_hot", "multi_hot",
    "categorical_crossentropy", "sparse_categorical_crossentropy",
    "binary_crossentropy", "moments", "batch_normalization", "ctc_loss", "ctc_decode",
    "psnr", "dot_product_attention", "unfold", "fold", "depth_to_space",
    "space_to_depth",
]
add_stubs(globals(), "nn", _NOT_YET)
