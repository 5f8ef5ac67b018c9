"""Keras backend ``nn``: activations, convolutions, losses, ... on core's operators.

Activations, pooling, convolutions, one-hot encodings, losses, normalization and
attention delegate to ``core.nd``/``core.np`` so gradients flow. ``ctc_decode``, which
has no gradient, runs in NumPy on the host.
"""
from __future__ import annotations

import math as _math

import numpy
from keras.src.backend import config
from keras.src.backend.common import dtypes, standardize_dtype

from core import nd
from core import np as cnp
from kbackend.core import _float, _numpy_dtype, cast, convert_to_numpy, convert_to_tensor


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


def _c(x, v):
    """A Python number as a scalar tensor of ``x``'s dtype (no promotion)."""
    return convert_to_tensor(v, standardize_dtype(x.dtype))


def relu6(x):
    return nd.relu6(_float(x))


def tanh(x):
    return nd.tanh(_float(x))


def tanh_shrink(x):
    x = _float(x)
    return x - nd.tanh(x)


def softplus(x):
    return nd.softplus(_float(x))


def softsign(x):
    return nd.softsign(_float(x))


def silu(x):
    return nd.silu(_float(x))


def log_sigmoid(x):
    return nd.log_sigmoid(_float(x))


def leaky_relu(x, negative_slope=0.2):
    x = _float(x)
    return cnp.maximum(x, x * _c(x, negative_slope))


def hard_sigmoid(x):
    return nd.hard_sigmoid(_float(x), alpha=1.0 / 6.0, beta=0.5)


def hard_silu(x):
    x = _float(x)
    return x * hard_sigmoid(x)


def elu(x, alpha=1.0):
    x = _float(x)
    return cnp.where(x >= _c(x, 0.0), x, _c(x, alpha) * cnp.expm1(x))


def selu(x):
    return nd.selu(_float(x))


def gelu(x, approximate=True):
    return nd.gelu(_float(x), approximate=bool(approximate))


def celu(x, alpha=1.0):
    x = _float(x)
    a = _c(x, alpha)
    zero = _c(x, 0.0)
    return cnp.maximum(x, zero) + a * cnp.expm1(cnp.minimum(x, zero) / a)


def hard_tanh(x):
    x = _float(x)
    return cnp.clip(x, -1.0, 1.0)


def squareplus(x, b=4):
    x = _float(x)
    return (x + cnp.sqrt(x * x + _c(x, b))) / _c(x, 2.0)


def soft_shrink(x, threshold=0.5):
    x = _float(x)
    t = _c(x, threshold)
    return cnp.where(x > t, x - t, cnp.where(x < -t, x + t, x * _c(x, 0.0)))


def hard_shrink(x, threshold=0.5):
    x = _float(x)
    t = _c(x, threshold)
    return cnp.where(cnp.abs(x) > t, x, x * _c(x, 0.0))


def sparse_plus(x):
    x = _float(x)
    one = _c(x, 1.0)
    return cnp.where(x <= -one, x * _c(x, 0.0),
                     cnp.where(x < one, _c(x, 0.25) * (x + one) * (x + one), x))


def sparse_sigmoid(x):
    x = _float(x)
    return cnp.clip(_c(x, 0.5) * (x + _c(x, 1.0)), 0.0, 1.0)


def threshold(x, threshold, default_value):
    x = convert_to_tensor(x)
    return cnp.where(x > _c(x, threshold), x, _c(x, default_value))


def glu(x, axis=-1):
    x = _float(x)
    if x.shape[axis] % 2 != 0:
        raise ValueError("axis size must be divisible by 2. "
                         f"Received: x.shape={x.shape} with axis={axis}")
    a, b = cnp.split(x, 2, axis=axis)
    return a * nd.sigmoid(b)


# ---------------------------------------------------------------- pooling / conv
def _tuple(v, n, name):
    if isinstance(v, int):
        return (v,) * n
    v = tuple(int(i) for i in v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise ValueError(f"kbackend: `{name}` must have {n} values, got {v}")
    return v


def _layout(ndim, data_format):
    spatial = "DHW"[3 - (ndim - 2):]
    return "N" + spatial + "C" if data_format == "channels_last" else "NC" + spatial


def _spatial_shape(x, data_format):
    return tuple(x.shape[1:-1]) if data_format == "channels_last" else tuple(x.shape[2:])


def _same_pads(sizes, kernel, strides, dilation=None):
    dilation = dilation or (1,) * len(sizes)
    pads = []
    for n, k, s, d in zip(sizes, kernel, strides, dilation):
        k_eff = (k - 1) * d + 1
        total = max((-(-n // s) - 1) * s + k_eff - n, 0)
        pads.append((total // 2, total - total // 2))
    return tuple(pads)


def _pool(inputs, pool_size, strides, padding, data_format, pool_type):
    data_format = backend_std_format(data_format)
    x = _float(inputs)
    n = x.ndim - 2
    kernel = _tuple(pool_size, n, "pool_size")
    stride = kernel if strides is None else _tuple(strides, n, "strides")
    padding = padding.lower()
    if padding == "same":
        pad = _same_pads(_spatial_shape(x, data_format), kernel, stride)
    elif padding == "valid":
        pad = ((0, 0),) * n
    else:
        raise ValueError(f"kbackend: padding must be 'same' or 'valid', got {padding!r}")
    return nd.Pooling(x, kernel=kernel, pool_type=pool_type, stride=stride, pad=pad,
                      pooling_convention="valid", layout=_layout(x.ndim, data_format),
                      count_include_pad=False)


def backend_std_format(data_format):
    from keras.src.backend import standardize_data_format
    return standardize_data_format(data_format)


def max_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    return _pool(inputs, pool_size, strides, padding, data_format, "max")


def average_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    return _pool(inputs, pool_size, strides, padding, data_format, "avg")


def _conv_pad(x, kernel_spatial, strides, padding, data_format, dilation):
    padding = padding.lower()
    if padding == "same":
        return _same_pads(_spatial_shape(x, data_format), kernel_spatial, strides,
                          dilation)
    if padding == "valid":
        return ((0, 0),) * len(kernel_spatial)
    raise ValueError(f"kbackend: padding must be 'same' or 'valid', got {padding!r}")


def _weight(kernel, data_format):
    """Keras' (*kernel, in/groups, out) kernel in core's Convolution weight layout."""
    nd_ = kernel.ndim
    if data_format == "channels_last":
        return cnp.moveaxis(kernel, -1, 0)           # (out, *kernel, in/groups)
    return cnp.transpose(kernel, (nd_ - 1, nd_ - 2) + tuple(range(nd_ - 2)))


def _conv_dtype(inputs, kernel):
    inputs = convert_to_tensor(inputs)
    kernel = convert_to_tensor(kernel)
    dtype = dtypes.result_type(inputs.dtype, kernel.dtype)
    if "float" not in dtype:
        dtype = config.floatx()
    return cast(inputs, dtype), cast(kernel, dtype)


def conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    data_format = backend_std_format(data_format)
    x, kernel = _conv_dtype(inputs, kernel)
    n = x.ndim - 2
    channels = x.shape[-1] if data_format == "channels_last" else x.shape[1]
    kin = kernel.shape[-2]
    if channels % kin:
        raise ValueError(
            "The number of input channels must be evenly divisible by kernel's "
            f"in_channels. Received input channels {channels} and kernel in_channels "
            f"{kin}. ")
    stride = _tuple(strides, n, "strides")
    dilate = _tuple(dilation_rate, n, "dilation_rate")
    ksp = tuple(kernel.shape[:-2])
    pad = _conv_pad(x, ksp, stride, padding, data_format, dilate)
    out = nd.Convolution(x, _weight(kernel, data_format), kernel=ksp, stride=stride,
                         dilate=dilate, pad=pad, num_filter=kernel.shape[-1],
                         num_group=channels // kin, no_bias=True,
                         layout=_layout(x.ndim, data_format))
    if out.size == 0 and x.size != 0:
        raise ValueError(
            "The convolution operation resulted in an empty output. This can happen "
            "if the input is too small for the given kernel size, strides, dilation "
            "rate, and padding mode. Please check the input shape and convolution "
            "parameters.")
    return out


def depthwise_conv(inputs, kernel, strides=1, padding="valid", data_format=None,
                   dilation_rate=1):
    x, kernel = _conv_dtype(inputs, kernel)
    groups = kernel.shape[-2]
    kernel = cnp.reshape(kernel, tuple(kernel.shape[:-2]) + (1, groups * kernel.shape[-1]))
    return conv(x, kernel, strides, padding, data_format, dilation_rate)


def separable_conv(inputs, depthwise_kernel, pointwise_kernel, strides=1,
                   padding="valid", data_format=None, dilation_rate=1):
    out = depthwise_conv(inputs, depthwise_kernel, strides, padding, data_format,
                         dilation_rate)
    return conv(out, pointwise_kernel, strides=1, padding="valid",
                data_format=data_format, dilation_rate=dilation_rate)


def conv_transpose(inputs, kernel, strides=1, padding="valid", output_padding=None,
                   data_format=None, dilation_rate=1):
    """Keras' transposed convolution: kernel ``(*kernel, filters, in_channels)``.

    core's ``Deconvolution`` (no padding) gives the full output ``(in - 1) * stride +
    dilated_kernel``; Keras' padding/output_padding then crop it (or extend it with
    the zeros that lie past the full output).
    """
    from keras.src.backend.common.backend_utils import (
        compute_conv_transpose_padding_args_for_jax,
    )

    data_format = backend_std_format(data_format)
    x, kernel = _conv_dtype(inputs, kernel)
    n = x.ndim - 2
    stride = _tuple(strides, n, "strides")
    dilate = _tuple(dilation_rate, n, "dilation_rate")
    ksp = tuple(kernel.shape[:-2])
    channels = x.shape[-1] if data_format == "channels_last" else x.shape[1]
    if channels != kernel.shape[-1]:
        raise ValueError(
            "The number of input channels must match the kernel's last dimension. "
            f"Received input channels {channels} and kernel shape {kernel.shape}.")
    pads = compute_conv_transpose_padding_args_for_jax(
        input_shape=x.shape, kernel_shape=kernel.shape, strides=stride, padding=padding,
        output_padding=output_padding, dilation_rate=dilate)
    nk = kernel.ndim
    if data_format == "channels_last":     # (C, *kernel, F)
        weight = cnp.transpose(kernel, (nk - 1,) + tuple(range(nk - 2)) + (nk - 2,))
    else:                                  # (C, F, *kernel)
        weight = cnp.transpose(kernel, (nk - 1, nk - 2) + tuple(range(nk - 2)))
    full = nd.Deconvolution(x, weight, kernel=ksp, stride=stride, dilate=dilate,
                            num_filter=kernel.shape[-2], no_bias=True,
                            layout=_layout(x.ndim, data_format))
    first = 1 if data_format == "channels_last" else 2
    index = [slice(None)] * full.ndim
    extend = [(0, 0)] * full.ndim
    for i, ((left, right), k, d) in enumerate(zip(pads, ksp, dilate)):
        k_eff = (k - 1) * d + 1
        size = full.shape[first + i]
        start = k_eff - 1 - left
        stop = size - max(k_eff - 1 - right, 0)
        index[first + i] = slice(start, stop)
        extend[first + i] = (0, max(right - (k_eff - 1), 0))
    out = full[tuple(index)]
    if any(e != (0, 0) for e in extend):
        out = cnp.pad(out, tuple(extend))
    return out


# ---------------------------------------------------------------- encodings, losses
def one_hot(x, num_classes, axis=-1, dtype=None, sparse=False):
    if sparse:
        raise ValueError("kbackend: one_hot does not support sparse=True")
    x = convert_to_tensor(x)
    dtype = standardize_dtype(dtype or "float32")
    out = nd.one_hot(cast(x, "int32"), int(num_classes), dtype=dtype)
    if axis != -1 and axis != out.ndim - 1:
        out = cnp.moveaxis(out, -1, axis)
    return out


def multi_hot(x, num_classes, axis=-1, dtype=None, sparse=False):
    if sparse:
        raise ValueError("kbackend: multi_hot does not support sparse=True")
    x = convert_to_tensor(x)
    reduction_axis = 1 if x.ndim > 1 else 0
    return cnp.max(one_hot(cast(x, "int32"), num_classes, axis=axis, dtype=dtype),
                   axis=reduction_axis)


def _epsilon():
    from keras.src.backend import epsilon
    return epsilon()


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    target = convert_to_tensor(target)
    output = _float(output)
    if tuple(target.shape) != tuple(output.shape):
        raise ValueError(
            "Arguments `target` and `output` must have the same shape. Received: "
            f"target.shape={target.shape}, output.shape={output.shape}")
    if len(target.shape) < 1:
        raise ValueError(
            "Arguments `target` and `output` must be at least rank 1. Received: "
            f"target.shape={target.shape}, output.shape={output.shape}")
    target = cast(target, output.dtype)
    if from_logits:
        log_prob = log_softmax(output, axis=axis)
    else:
        output = output / output.sum(axis=axis, keepdims=True)
        eps = _epsilon()
        log_prob = cnp.clip(output, eps, 1.0 - eps).log()
    return -(target * log_prob).sum(axis=axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    target = cast(convert_to_tensor(target), "int32")
    output = _float(output)
    if target.ndim == output.ndim and target.shape[-1] == 1:
        target = cnp.squeeze(target, axis=-1)
    if output.ndim < 1:
        raise ValueError("Argument `output` must be at least rank 1. Received: "
                         f"output.shape={output.shape}")
    if tuple(target.shape) != tuple(output.shape[:-1]):
        raise ValueError(
            "Arguments `target` and `output` must have the same shape up until the "
            f"last dimension: target.shape={target.shape}, output.shape={output.shape}")
    if from_logits:
        log_prob = log_softmax(output, axis=axis)
    else:
        output = output / output.sum(axis=axis, keepdims=True)
        eps = _epsilon()
        log_prob = cnp.clip(output, eps, 1.0 - eps).log()
    onehot = one_hot(target, output.shape[axis], axis=axis,
                     dtype=standardize_dtype(output.dtype))
    return -(onehot * log_prob).sum(axis=axis)


def binary_crossentropy(target, output, from_logits=False):
    target = convert_to_tensor(target)
    output = _float(output)
    if tuple(target.shape) != tuple(output.shape):
        raise ValueError(
            "Arguments `target` and `output` must have the same shape. Received: "
            f"target.shape={target.shape}, output.shape={output.shape}")
    target = cast(target, output.dtype)
    if from_logits:
        output = nd.sigmoid(output)
    eps = _epsilon()
    output = cnp.clip(output, eps, 1.0 - eps)
    one = _c(output, 1.0)
    bce = target * output.log() + (one - target) * (one - output).log()
    return -bce


def ctc_loss(target, output, target_length, output_length, mask_index=0):
    """CTC negative log likelihood per sequence: ``output`` (batch, time, classes)
    logits, ``target`` (batch, max_label_length), ``mask_index`` the blank class."""
    target = cast(convert_to_tensor(target), "int32")
    output = _float(output)
    if standardize_dtype(output.dtype) in ("float16", "bfloat16"):
        output = cast(output, "float32")     # Keras' backends return float32 for these
    target_length = cast(convert_to_tensor(target_length), "int32")
    output_length = cast(convert_to_tensor(output_length), "int32")
    c = output.shape[-1]
    mask_index = int(mask_index) % c
    if mask_index == 0:
        blank = "first"
    elif mask_index == c - 1:
        blank = "last"
    else:
        # Move the blank class to the front; labels below it shift up by one.
        order = [mask_index] + [k for k in range(c) if k != mask_index]
        output = cnp.take(output, convert_to_tensor(order, "int32"), axis=-1)
        target = cnp.where(target < mask_index, target + 1, target)
        blank = "first"
    data = cnp.transpose(output, (1, 0, 2))
    out = nd.CTCLoss(data, target, output_length, target_length,
                     use_data_lengths=True, use_label_lengths=True, blank_label=blank)
    return cast(out, output.dtype)


# ---------------------------------------------------------------- normalization
def moments(x, axes, keepdims=False, synchronized=False):
    x = _float(x)
    axes = tuple(axes) if isinstance(axes, (list, tuple)) else (axes,)
    if synchronized:
        # the global batch's statistics over a data-parallel step's replicas; elsewhere
        # the batch seen here is the whole one (kbackend/sync_moments.py)
        from kbackend import sync_moments

        if (step := sync_moments.current()) is not None:
            return sync_moments.moments(x, axes, keepdims, step)
    ori = standardize_dtype(x.dtype)
    if ori in ("float16", "bfloat16"):
        x = cast(x, "float32")
    mean = x.mean(axis=axes, keepdims=True)
    variance = (x * x).mean(axis=axes, keepdims=True) - mean * mean
    variance = cnp.maximum(variance, _c(variance, 0.0))
    if not keepdims:
        mean = cnp.squeeze(mean, axis=axes)
        variance = cnp.squeeze(variance, axis=axes)
    if ori in ("float16", "bfloat16"):
        mean = cast(cnp.clip(mean, -65504.0, 65504.0), ori)
        variance = cast(cnp.clip(variance, -65504.0, 65504.0), ori)
    return mean, variance


def batch_normalization(x, mean, variance, axis, offset=None, scale=None, epsilon=1e-3):
    x = _float(x)
    mean = convert_to_tensor(mean)
    variance = convert_to_tensor(variance)
    shape = [1] * x.ndim
    shape[axis] = mean.shape[0]
    shape = tuple(shape)
    mean = cnp.reshape(mean, shape)
    variance = cnp.reshape(variance, shape)
    inv = _c(variance, 1.0) / cnp.sqrt(variance + _c(variance, epsilon))
    if scale is not None:
        inv = inv * cnp.reshape(convert_to_tensor(scale), shape)
    res = -mean * inv
    if offset is not None:
        res = res + cnp.reshape(convert_to_tensor(offset), shape)
    return x * inv + res


def psnr(x1, x2, max_val):
    x1 = _float(x1)
    x2 = _float(x2)
    if tuple(x1.shape) != tuple(x2.shape):
        raise ValueError(f"Input shapes {x1.shape} and {x2.shape} must match for PSNR "
                         "calculation. ")
    mse = ((x1 - x2) ** 2).mean()
    return 20 * _math.log10(max_val) - 10 * cnp.log10(mse)


def sparsemax(x, axis=-1):
    logits = _float(x)
    dtype = standardize_dtype(logits.dtype)
    srt = -cnp.sort(-logits, axis=axis)
    csum = cnp.cumsum(srt, axis=axis)
    shape = [1] * logits.ndim
    shape[axis] = -1
    r = cnp.reshape(convert_to_tensor(list(range(1, logits.shape[axis] + 1)), dtype),
                    tuple(shape))
    one = _c(logits, 1.0)
    support = srt - (csum - one) / r > _c(logits, 0.0)
    k = cnp.sum(cast(support, dtype), axis=axis, keepdims=True)
    tau = (cnp.sum(cnp.where(support, csum, _c(logits, 0.0)), axis=axis, keepdims=True)
           - one) / k
    return cnp.maximum(logits - tau, _c(logits, 0.0))


def depth_to_space(x, block_size, data_format="channels_last"):
    x = convert_to_tensor(x)
    b = int(block_size)
    if data_format == "channels_last":
        n, h, w, c = x.shape
        x = cnp.reshape(x, (n, h, w, b, b, c // (b * b)))
        x = cnp.transpose(x, (0, 1, 3, 2, 4, 5))
        return cnp.reshape(x, (n, h * b, w * b, c // (b * b)))
    n, c, h, w = x.shape
    x = cnp.reshape(x, (n, c // (b * b), b, b, h, w))
    x = cnp.transpose(x, (0, 1, 4, 2, 5, 3))
    return cnp.reshape(x, (n, c // (b * b), h * b, w * b))


def space_to_depth(x, block_size, data_format="channels_last"):
    x = convert_to_tensor(x)
    b = int(block_size)
    if data_format == "channels_last":
        n, h, w, c = x.shape
        x = cnp.reshape(x, (n, h // b, b, w // b, b, c))
        x = cnp.transpose(x, (0, 1, 3, 2, 4, 5))
        return cnp.reshape(x, (n, h // b, w // b, c * b * b))
    n, c, h, w = x.shape
    x = cnp.reshape(x, (n, c, h // b, b, w // b, b))
    x = cnp.transpose(x, (0, 1, 3, 5, 2, 4))
    return cnp.reshape(x, (n, c * b * b, h // b, w // b))


def dot_product_attention(query, key, value, bias=None, mask=None, scale=None,
                          is_causal=False, flash_attention=None,
                          attn_logits_soft_cap=None):
    """Scaled dot-product attention on (batch, seq, heads, head_dim) tensors (as
    jax.nn.dot_product_attention); the softmax runs in float32."""
    if flash_attention:
        raise ValueError("kbackend: flash attention is not supported")
    query = convert_to_tensor(query)
    key = convert_to_tensor(key)
    value = convert_to_tensor(value)
    if query.ndim != 4:
        raise ValueError(
            "`dot_product_attention` only supports 4D inputs. Received: "
            f"query.shape={query.shape}, key.shape={key.shape}, value.shape={value.shape}.")
    dtype = dtypes.result_type(query.dtype, key.dtype, value.dtype)
    query, key, value = cast(query, dtype), cast(key, dtype), cast(value, dtype)
    num_heads, kv_heads = query.shape[2], key.shape[2]
    if kv_heads != num_heads:
        # Grouped-query attention: query head n attends with key/value head n // group.
        if kv_heads == 0 or num_heads % kv_heads or value.shape[2] != kv_heads:
            raise ValueError(
                "dot_product_attention: the number of query heads must be a multiple of "
                f"the number of key/value heads. Received: query.shape={query.shape}, "
                f"key.shape={key.shape}, value.shape={value.shape}.")
        group = num_heads // kv_heads
        key = cnp.repeat(key, group, axis=2)
        value = cnp.repeat(value, group, axis=2)
    head_dim = key.shape[-1]
    scale = (1.0 / _math.sqrt(head_dim)) if scale is None else scale
    logits_dtype = dtypes.result_type(dtype, "float32")
    logits = cnp.einsum("BTNH,BSNH->BNTS", cast(query, logits_dtype),
                        cast(key, logits_dtype))
    logits = logits * convert_to_tensor(scale, logits_dtype)
    if bias is not None:
        logits = logits + cast(convert_to_tensor(bias), logits_dtype)
    if attn_logits_soft_cap is not None:
        cap = convert_to_tensor(attn_logits_soft_cap, logits_dtype)
        logits = nd.tanh(logits / cap) * cap
    if mask is not None or is_causal:
        keep = None
        if mask is not None:
            keep = cast(convert_to_tensor(mask), "bool")
        if is_causal:
            t, s_ = logits.shape[2], logits.shape[3]
            tri = cnp.reshape(cnp.tril(cnp.ones((t, s_), dtype="bool")), (1, 1, t, s_))
            keep = tri if keep is None else cnp.logical_and(keep, tri)
        big = 65500.0 if logits_dtype == "float16" else 3.38953e38
        logits = cnp.where(keep, logits, convert_to_tensor(-0.7 * big, logits_dtype))
    probs = cast(nd.softmax(cast(logits, "float32"), axis=-1), dtype)
    return cnp.einsum("BNTS,BSNH->BTNH", probs, value)


def _pair2(v):
    return (int(v), int(v)) if isinstance(v, int) else tuple(int(i) for i in v)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks of an (N, C, H, W) tensor: (N, C * kh * kw, L), as torch's
    ``unfold`` (core's ``im2col``)."""
    x = convert_to_tensor(input)
    if x.ndim != 4:
        raise ValueError(f"unfold: input must be 4-D (N, C, H, W), got shape {x.shape}")
    return nd.im2col(x, kernel=_pair2(kernel_size), stride=_pair2(stride),
                     dilate=_pair2(dilation), pad=_pair2(padding))


def fold(x, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The adjoint of ``unfold``: (N, C * kh * kw, L) blocks summed into (N, C, H, W)."""
    x = convert_to_tensor(x)
    return nd.col2im(x, output_size=_pair2(output_size), kernel=_pair2(kernel_size),
                     stride=_pair2(stride), dilate=_pair2(dilation), pad=_pair2(padding))


def _adaptive_pool(inputs, output_size, data_format, reduce):
    data_format = backend_std_format(data_format)
    x = _float(inputs)
    n = x.ndim - 2
    if n not in (1, 2, 3):
        raise ValueError("adaptive pooling supports only 1D/2D/3D inputs")
    sizes = _tuple(output_size, n, "output_size")
    first = 1 if data_format == "channels_last" else 2
    # A box window is the product of per-axis windows: reduce one axis at a time.
    for i, out in enumerate(sizes):
        ax = first + i
        length = x.shape[ax]
        parts = []
        for j in range(out):
            start = (j * length) // out
            stop = -((-(j + 1) * length) // out)
            index = [slice(None)] * x.ndim
            index[ax] = slice(start, stop)
            parts.append(reduce(x[tuple(index)], ax))
        x = cnp.stack(parts, axis=ax)
    return x


def adaptive_average_pool(inputs, output_size, data_format=None):
    return _adaptive_pool(inputs, output_size, data_format,
                          lambda v, ax: cnp.mean(v, axis=ax))


def adaptive_max_pool(inputs, output_size, data_format=None):
    return _adaptive_pool(inputs, output_size, data_format,
                          lambda v, ax: cnp.max(v, axis=ax))


# ---------------------------------------------------------------- CTC decoding
def _ctc_greedy(logits, lengths, merge_repeated, blank):
    """Best class per frame; repeats merged, blanks dropped, labels packed to the left."""
    batch, steps, _ = logits.shape
    best = logits.argmax(axis=-1)
    score = logits.max(axis=-1)
    past_end = numpy.arange(steps)[None, :] >= lengths[:, None]
    best = numpy.where(past_end, blank, best)
    score = numpy.where(past_end, 0.0, score)
    if merge_repeated:
        repeat = numpy.zeros_like(past_end)
        repeat[:, 1:] = best[:, 1:] == best[:, :-1]
        best = numpy.where(repeat, blank, best)
    keep = best != blank
    decoded = numpy.full((batch, steps), -1, dtype=numpy.int32)
    # Stable sort on "not kept" moves the kept labels to the front, in order.
    order = numpy.argsort(~keep, axis=1, kind="stable")
    packed = numpy.take_along_axis(best, order, axis=1)
    filled = numpy.take_along_axis(keep, order, axis=1)
    decoded[filled] = packed[filled]
    return decoded[None], -score.sum(axis=1, keepdims=True)


def _best(scores, tie_key, count):
    """Indices of the ``count`` best finite ``scores``, best first; equal scores are
    ordered by ``tie_key(index)``, larger first."""
    finite = numpy.flatnonzero(scores > -numpy.inf)
    if len(finite) > count:
        cut = numpy.partition(scores[finite], len(finite) - count)[len(finite) - count]
        finite = finite[scores[finite] >= cut]
    order = finite[numpy.argsort(-scores[finite], kind="stable")]
    ranked = scores[order]
    if not (ranked[1:] == ranked[:-1]).any():
        return order[:count].tolist()
    out = []
    for value in numpy.unique(ranked)[::-1]:
        out.extend(sorted(order[ranked == value].tolist(), key=tie_key, reverse=True))
        if len(out) >= count:
            break
    return out[:count]


class _Prefixes:
    """Label sequences as nodes of a prefix tree (0 is the empty sequence), so a beam
    holds integers and a prefix's parent and last label are one lookup away."""

    def __init__(self):
        self.parent = [-1]
        self.last = [-1]
        self.children: dict = {}

    def child(self, node, label):
        key = (node, label)
        found = self.children.get(key)
        if found is None:
            found = self.children[key] = len(self.parent)
            self.parent.append(node)
            self.last.append(label)
        return found

    def labels(self, node):
        out = []
        while node > 0:
            out.append(self.last[node])
            node = self.parent[node]
        return tuple(reversed(out))

    def tie_key(self, node, num_classes):
        """Keras' jax backend breaks ties by the path whose labels, read as
        ``num_classes - 1 - label``, sort later."""
        return tuple(num_classes - 1 - c for c in self.labels(node))


class _Candidates:
    """The prefix-tree node of each candidate of one beam step (created on demand)."""

    def __init__(self, tree, nodes, num_classes):
        self.tree, self.nodes, self.num_classes = tree, nodes, num_classes

    def __getitem__(self, k):
        n = len(self.nodes)
        if k < n:
            return int(self.nodes[k])
        parent, label = divmod(k - n, self.num_classes)
        return self.tree.child(int(self.nodes[parent]), label)

    def tie_key(self, k):
        return self.tree.tie_key(self[k], self.num_classes)


def _ctc_beam_one(logp, length, beam_width, top_paths, blank):
    """CTC prefix beam search on one (time, classes) array of log-probabilities.

    Each beam entry is a label sequence with two log-scores: ending in a label
    (``emit``) or in a blank (``gap``). Per frame, a prefix can stay as it is (a blank,
    or its last label again) or grow by one label; prefixes reached two ways are merged
    by log-add, and the ``beam_width`` most probable are kept.
    """
    steps, num_classes = logp.shape
    tree = _Prefixes()
    labels = [c for c in range(num_classes) if c != blank]
    nodes = numpy.array([0] + [tree.child(0, c) for c in labels])
    emit = numpy.array([-numpy.inf] + [logp[0, c] for c in labels])
    gap = numpy.full(len(nodes), -numpy.inf)
    gap[0] = logp[0, blank]
    # On the first frame, ties go to the lower class (the blank included).
    first = [blank] + labels
    keep = _best(numpy.logaddexp(emit, gap), lambda i: -first[i], beam_width)
    nodes, emit, gap = nodes[keep], emit[keep], gap[keep]
    classes = numpy.arange(num_classes)
    for t in range(1, min(int(length), steps)):
        x = logp[t]
        total = numpy.logaddexp(emit, gap)
        tails = numpy.array([tree.last[v] for v in nodes])
        stay_gap = total + x[blank]
        stay_emit = numpy.where(tails >= 0, emit + x[numpy.maximum(tails, 0)], -numpy.inf)
        # Growing by the label a prefix ends with needs a blank in between.
        grow = numpy.where(tails[:, None] == classes[None, :], gap[:, None],
                           total[:, None]) + x[None, :]
        grow[:, blank] = -numpy.inf
        # A grown prefix that is already in the beam merges into that entry.
        where = {v: i for i, v in enumerate(nodes.tolist())}
        for j, v in enumerate(nodes.tolist()):
            i = where.get(tree.parent[v])
            if v and i is not None:
                stay_emit[j] = numpy.logaddexp(stay_emit[j], grow[i, tree.last[v]])
                grow[i, tree.last[v]] = -numpy.inf
        grow = grow.ravel()
        scores = numpy.concatenate([numpy.logaddexp(stay_emit, stay_gap), grow])

        # Candidate k < n is beam entry k as it was; k >= n is entry (k - n) // classes
        # grown by label (k - n) % classes.
        candidates = _Candidates(tree, nodes, num_classes)
        keep = _best(scores, candidates.tie_key, beam_width)
        emit = numpy.concatenate([stay_emit, grow])[keep]
        gap = numpy.concatenate([stay_gap, numpy.full(grow.shape, -numpy.inf)])[keep]
        nodes = numpy.array([candidates[k] for k in keep], dtype=numpy.int64)
    total = numpy.logaddexp(emit, gap)
    order = _best(total, lambda i: tree.tie_key(int(nodes[i]), num_classes), top_paths)
    return [tree.labels(int(nodes[i])) for i in order], total[order]


def _ctc_beam_search(logits, lengths, beam_width, top_paths, blank):
    batch, steps, _ = logits.shape
    shifted = logits - logits.max(axis=-1, keepdims=True)
    logp = shifted - numpy.log(numpy.exp(shifted).sum(axis=-1, keepdims=True))
    decoded = numpy.full((top_paths, batch, steps), -1, dtype=numpy.int32)
    scores = numpy.full((batch, top_paths), -numpy.inf)
    for b in range(batch):
        found, found_scores = _ctc_beam_one(logp[b], lengths[b], beam_width, top_paths,
                                            blank)
        for k, path in enumerate(found):
            decoded[k, b, :len(path)] = path
        scores[b, :len(found)] = found_scores
    return decoded, scores


def ctc_decode(inputs, sequence_lengths, strategy="greedy", beam_width=100, top_paths=1,
               merge_repeated=True, mask_index=0):
    """Decodes the output of a CTC model (not differentiable).

    Args:
        inputs: Logits of shape ``(batch, max_length, num_classes)``.
        sequence_lengths: ``(batch,)`` number of valid frames of each sequence.
        strategy: ``"greedy"`` (best class per frame) or ``"beam_search"`` (CTC prefix
            beam search on the log-softmax of ``inputs``).
        beam_width: Prefixes kept per frame in beam search.
        top_paths: Number of decoded sequences returned per batch entry (beam search).
        merge_repeated: Greedy only: merge repeated labels (beam search always does).
        mask_index: The blank class (``None``: the last class).

    Returns:
        ``(decoded, scores)``: int32 ``decoded`` of shape ``(top_paths, batch,
        max_length)`` (1 path for greedy), padded with -1; ``scores`` of shape
        ``(batch, top_paths)``: the negated sum of the best logits (greedy) or the log
        probability of each path (beam search).

    Example:
        >>> decoded, scores = ctc_decode(numpy.log([[[.1, .9], [.9, .1]]]), [2])
    """
    if strategy not in ("greedy", "beam_search"):
        raise ValueError(f"Invalid strategy {strategy}. Supported values are 'greedy' "
                         "and 'beam_search'.")
    inputs = convert_to_tensor(inputs)
    dtype = dtypes.result_type(inputs.dtype, "float32")
    if inputs.ndim != 3:
        raise ValueError(
            "ctc_decode: `inputs` must have shape (batch_size, max_length, num_classes). "
            f"Received: inputs.shape={inputs.shape}")
    batch, _, num_classes = inputs.shape
    logits = convert_to_numpy(cast(inputs, dtype)).astype(numpy.float64)
    lengths = convert_to_numpy(convert_to_tensor(sequence_lengths)).astype(numpy.int64)
    if lengths.shape != (batch,):
        raise ValueError(
            "ctc_decode: `sequence_lengths` must have shape (batch_size,). Received: "
            f"sequence_lengths.shape={lengths.shape}, inputs.shape={inputs.shape}")
    blank = num_classes - 1 if mask_index is None else int(mask_index)
    if not -num_classes <= blank < num_classes:
        raise ValueError(f"ctc_decode: mask_index={mask_index} is out of range for "
                         f"{num_classes} classes (inputs.shape={inputs.shape})")
    blank %= num_classes
    if strategy == "greedy":
        decoded, scores = _ctc_greedy(logits, lengths, merge_repeated, blank)
    else:
        if int(beam_width) < 1 or int(top_paths) < 1 or int(top_paths) > int(beam_width):
            raise ValueError(
                "ctc_decode: need 1 <= top_paths <= beam_width. Received: "
                f"beam_width={beam_width}, top_paths={top_paths}")
        decoded, scores = _ctc_beam_search(logits, lengths, int(beam_width),
                                           int(top_paths), blank)
    return convert_to_tensor(decoded, "int32"), convert_to_tensor(scores.astype(
        _numpy_dtype(dtype)), dtype)
