"""``npx``'s neural-network functions with MXNet 2.0's signatures.

Each is a thin binding onto an operator of the registry (or a public ``core.nd``
function that already handles the training mode and tracing), so every one is
differentiable under ``autograd`` and traceable by ``hybridize``; no kernel lives here.
Multi-output functions return lists, as MXNet's ``npx`` does.
"""
from __future__ import annotations

import numpy as _numpy

from .. import nd as _nd
from .. import ops as _ops
from ..ndarray import NDArray

_F = _ops.F


def _no_out(name, out):
    if out is not None:
        raise TypeError(f"npx.{name}: out= is not supported; assign the result instead")


def _listed(res):
    return list(res) if isinstance(res, tuple) else res


def _dtype_name(dtype):
    if dtype is None or isinstance(dtype, str):
        return dtype
    return _numpy.dtype(dtype).name


def _lengths(name, length, use_length):
    if use_length and length is None:
        raise ValueError(f"npx.{name}: use_length=True needs the length array")
    if length is not None and not use_length:
        raise ValueError(f"npx.{name}: length is given but use_length=False; pass "
                         "use_length=True to mask with it")


# ----------------------------------------------------------------- softmax family
def softmax(data, axis: int = -1, length=None, temperature=None, use_length: bool = False,
            dtype=None) -> NDArray:
    """Softmax along ``axis``: ``exp(x / t) / sum(exp(x / t))``.

    Args:
        data: the input.
        axis: the reduction axis.
        length: int lengths (the shape of ``data`` without ``axis``), read with
            ``use_length=True``: entries at or past a row's length get 0.
        temperature: ``t`` (default 1).
        use_length: mask with ``length``.
        dtype: the output dtype (default: the input's).

    Returns:
        An array of ``data``'s shape.

    Example:
        >>> from core import np, npx
        >>> npx.softmax(np.ones((2, 3)), axis=0).asnumpy().tolist()
        [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]
    """
    _lengths("softmax", length, use_length)
    return _F.softmax(data, length, axis=axis, temperature=temperature,
                      dtype=_dtype_name(dtype), use_length=use_length)


def log_softmax(data, axis: int = -1, length=None, temperature=None, use_length: bool = False,
                dtype=None) -> NDArray:
    """``log(softmax(data))``, computed stably; arguments as :func:`softmax`.

    Example:
        >>> from core import np, npx
        >>> [round(v, 4) for v in npx.log_softmax(np.array([1.0, 2.0, 0.1])).tolist()]
        [-1.417, -0.417, -2.317]
    """
    _lengths("log_softmax", length, use_length)
    return _F.log_softmax(data, length, axis=axis, temperature=temperature,
                          dtype=_dtype_name(dtype), use_length=use_length)


def _masked_logits(name, data, mask):
    if mask is None:
        return data
    if not hasattr(data, "dtype"):
        raise TypeError(f"npx.{name}: data must be an array, got {type(data).__name__}")
    low = -1e4 if data.dtype == _numpy.float16 else -1e18
    return _F.where(mask, data, low)


def masked_softmax(data, mask, axis: int = -1, temperature=1.0, normalize: bool = True) -> NDArray:
    """Softmax over the entries where ``mask`` is true; masked entries get 0.

    Args:
        data: the input.
        mask: booleans (or 0/1) broadcastable to ``data``; None masks nothing.
        axis: the reduction axis.
        temperature: divides ``data`` before the softmax.
        normalize: accepted for MXNet compatibility (the max is always subtracted,
            which changes no value).

    Returns:
        An array of ``data``'s shape; a row masked entirely is all 0.

    Example:
        >>> from core import np, npx
        >>> out = npx.masked_softmax(np.arange(5.0), np.array([1, 0, 1, 0, 1]))
        >>> [round(v, 4) for v in out.tolist()]
        [0.0159, 0.0, 0.1173, 0.0, 0.8668]
    """
    t = None if temperature in (None, 1.0) else temperature
    out = _F.softmax(_masked_logits("masked_softmax", data, mask), None, axis=axis,
                     temperature=t)
    if mask is None:
        return out
    return _F.where(mask, out, 0.0)


def masked_log_softmax(data, mask, axis: int = -1, temperature=1.0,
                       normalize: bool = True) -> NDArray:
    """``log`` of :func:`masked_softmax`: masked entries get ``-inf``.

    Example:
        >>> from core import np, npx
        >>> out = npx.masked_log_softmax(np.array([0.0, 1.0, 2.0]), np.array([1, 0, 1]))
        >>> [round(v, 4) for v in out.tolist()]
        [-2.1269, -inf, -0.1269]
    """
    t = None if temperature in (None, 1.0) else temperature
    out = _F.log_softmax(_masked_logits("masked_log_softmax", data, mask), None, axis=axis,
                         temperature=t)
    if mask is None:
        return out
    return _F.where(mask, out, -_numpy.inf)


# ----------------------------------------------------------------- activations
def activation(data, act_type: str = "relu", **kwargs) -> NDArray:
    """MXNet's ``Activation``: ``'relu'``, ``'sigmoid'``, ``'tanh'``, ``'softrelu'``,
    ``'softsign'`` (and the other types ``nd.Activation`` takes).

    Example:
        >>> from core import np, npx
        >>> npx.activation(np.array([-1.0, 2.0]), act_type="relu").tolist()
        [0.0, 2.0]
    """
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"npx.activation: unexpected keyword argument(s) {sorted(kwargs)}")
    return _F.Activation(data, act_type=act_type)


def relu(data) -> NDArray:
    """``max(data, 0)``.

    Example:
        >>> from core import np, npx
        >>> npx.relu(np.array([-1.0, 2.0])).tolist()
        [0.0, 2.0]
    """
    return _F.relu(data)


def sigmoid(data) -> NDArray:
    """``1 / (1 + exp(-data))``.

    Example:
        >>> from core import np, npx
        >>> npx.sigmoid(np.zeros((2,))).tolist()
        [0.5, 0.5]
    """
    return _F.sigmoid(data)


def leaky_relu(data, gamma=None, act_type: str = "leaky", slope: float = 0.25,
               lower_bound: float = 0.125, upper_bound: float = 0.334, **kwargs) -> NDArray:
    """MXNet's ``LeakyReLU``: ``'leaky'``, ``'prelu'`` (slopes ``gamma``), ``'rrelu'``,
    ``'elu'``, ``'selu'``, ``'gelu'``.

    Example:
        >>> from core import np, npx
        >>> npx.leaky_relu(np.array([-2.0, 2.0]), slope=0.5).tolist()
        [-1.0, 2.0]
    """
    return _nd.LeakyReLU(data, gamma, act_type=act_type, slope=slope,
                         lower_bound=lower_bound, upper_bound=upper_bound, **kwargs)


# ----------------------------------------------------------------- layers
def fully_connected(x, weight, bias=None, num_hidden=None, no_bias: bool = False,
                    flatten: bool = True, **kwargs) -> NDArray:
    """``x @ weight.T + bias``; ``weight`` has shape ``(num_hidden, in_units)``.

    Args:
        x: the input; with ``flatten=True`` all axes but the first are flattened.
        weight: ``(num_hidden, in_units)``.
        bias: ``(num_hidden,)``, or None (then no bias is added).
        num_hidden: checked against ``weight`` when given.
        no_bias: ignore ``bias``.
        flatten: see ``x``; with False the last axis is contracted.

    Example:
        >>> from core import np, npx
        >>> npx.fully_connected(np.ones((2, 3)), np.ones((4, 3)), np.zeros((4,)),
        ...                     num_hidden=4).shape
        (2, 4)
    """
    kwargs.pop("name", None)
    _no_out("fully_connected", kwargs.pop("out", None))
    if kwargs:
        raise TypeError(f"npx.fully_connected: unexpected keyword argument(s) {sorted(kwargs)}")
    no_bias = no_bias or bias is None
    return _F.FullyConnected(x, weight, None if no_bias else bias, num_hidden=num_hidden,
                             no_bias=no_bias, flatten=flatten)


def _spatial(weight, kernel, what, layout=None):
    """``kernel`` as a tuple; when not given, the weight's spatial axes (MXNet's weight
    layout: ``(O, I, *k)``, or ``(O, *k, I)`` for channels-last layouts)."""
    if kernel not in (None, ()):
        return (kernel,) if isinstance(kernel, int) else tuple(kernel)
    if not hasattr(weight, "shape") or len(weight.shape) < 3:
        raise ValueError(f"npx.{what}: kernel is not given and cannot be read from a weight "
                         f"of shape {getattr(weight, 'shape', None)}")
    if layout is not None and str(layout).endswith("C"):
        return tuple(weight.shape[1:-1])
    return tuple(weight.shape[2:])


def _tup(v, n=1):
    """A size attribute as a tuple; an int stands for the same value on all ``n`` axes."""
    if v is None:
        return ()
    return (v,) * n if isinstance(v, int) else tuple(v)


def convolution(data=None, weight=None, bias=None, kernel=None, stride=None, dilate=None,
                pad=None, num_filter=1, num_group=1, workspace=1024, no_bias=False,
                cudnn_tune=None, cudnn_off=False, layout=None) -> NDArray:
    """N-d convolution (1 to 3 spatial axes) with groups, MXNet's ``Convolution``.

    ``kernel`` defaults to the weight's spatial shape and ``num_filter`` to its first
    axis; a ``bias`` of None means no bias.

    Example:
        >>> from core import np, npx
        >>> npx.convolution(np.ones((1, 2, 5, 5)), np.ones((3, 2, 3, 3)), kernel=(3, 3),
        ...                 num_filter=3, no_bias=True).shape
        (1, 3, 3, 3)
    """
    kernel = _spatial(weight, kernel, "convolution", layout)
    no_bias = no_bias or bias is None
    nf = weight.shape[0] if hasattr(weight, "shape") else num_filter
    return _F.Convolution(data, weight, None if no_bias else bias, kernel=kernel,
                          stride=_tup(stride, len(kernel)), dilate=_tup(dilate, len(kernel)),
                          pad=_tup(pad, len(kernel)), num_filter=nf, num_group=num_group,
                          workspace=workspace, no_bias=no_bias, cudnn_tune=cudnn_tune,
                          cudnn_off=cudnn_off, layout=layout)


def deconvolution(data=None, weight=None, bias=None, kernel=None, stride=None, dilate=None,
                  pad=None, adj=None, target_shape=None, num_filter=1, num_group=1,
                  workspace=512, no_bias=True, cudnn_tune=None, cudnn_off=False,
                  layout=None) -> NDArray:
    """Transposed convolution, MXNet's ``Deconvolution``; ``weight`` is
    ``(in_channels, num_filter / num_group, *kernel)``.

    Example:
        >>> from core import np, npx
        >>> npx.deconvolution(np.ones((1, 2, 3, 3)), np.ones((2, 4, 2, 2)), kernel=(2, 2),
        ...                   num_filter=4).shape
        (1, 4, 4, 4)
    """
    kernel = _spatial(weight, kernel, "deconvolution", layout)
    no_bias = no_bias or bias is None
    return _F.Deconvolution(data, weight, None if no_bias else bias, kernel=kernel,
                            stride=_tup(stride, len(kernel)), dilate=_tup(dilate, len(kernel)),
                            pad=_tup(pad, len(kernel)), adj=_tup(adj, len(kernel)),
                            target_shape=_tup(target_shape, len(kernel)),
                            num_filter=num_filter, num_group=num_group, workspace=workspace,
                            no_bias=no_bias, cudnn_tune=cudnn_tune, cudnn_off=cudnn_off,
                            layout=layout)


def pooling(data=None, kernel=None, stride=None, pad=None, pool_type="max",
            pooling_convention="valid", global_pool=False, cudnn_off=False, p_value=None,
            count_include_pad=None, layout=None, **kwargs) -> NDArray:
    """Max, average, sum or Lp pooling over 1-D/2-D/3-D windows, MXNet's ``Pooling``.

    Example:
        >>> from core import np, npx
        >>> npx.pooling(np.ones((1, 1, 4, 4)), kernel=(2, 2), stride=(2, 2)).shape
        (1, 1, 2, 2)
    """
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"npx.pooling: unexpected keyword argument(s) {sorted(kwargs)}")
    n = max(len(getattr(data, "shape", ())) - 2, 1)
    return _F.Pooling(data, kernel=_tup(kernel, n), pool_type=pool_type, global_pool=global_pool,
                      cudnn_off=cudnn_off, pooling_convention=pooling_convention,
                      stride=_tup(stride, n), pad=_tup(pad, n), p_value=p_value,
                      count_include_pad=count_include_pad, layout=layout)


def dropout(data, p: float = 0.5, mode: str = "training", axes=None, cudnn_off: bool = True,
            **kwargs) -> NDArray:
    """Zero entries with probability ``p`` and scale the rest by ``1 / (1 - p)``, in
    training mode only (``mode='always'``: always).

    Example:
        >>> from core import np, npx
        >>> npx.dropout(np.ones((2,)), p=0.5).tolist()  # not training: the input
        [1.0, 1.0]
    """
    return _nd.Dropout(data, p=p, mode=mode, axes=_tup(axes), cudnn_off=cudnn_off, **kwargs)


def batch_norm(x, gamma, beta, running_mean, running_var, eps: float = 1e-3,
               momentum: float = 0.9, fix_gamma: bool = True, use_global_stats: bool = False,
               output_mean_var: bool = False, axis: int = 1, cudnn_off: bool = False,
               min_calib_range=None, max_calib_range=None, **kwargs) -> NDArray | list:
    """Batch normalization, MXNet's ``BatchNorm``: batch statistics (and an in-place
    update of ``running_mean``/``running_var``) in training mode, the running ones
    otherwise.

    Returns:
        ``out``, or ``[out, mean, inv_std]`` with ``output_mean_var=True``.

    Example:
        >>> from core import np, npx
        >>> x = np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> npx.batch_norm(x, np.ones(2), np.zeros(2), np.zeros(2), np.ones(2),
        ...                eps=0.0).tolist()
        [[1.0, 2.0], [3.0, 4.0]]
    """
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"npx.batch_norm: unexpected keyword argument(s) {sorted(kwargs)}")
    return _listed(_nd.BatchNorm(x, gamma, beta, running_mean, running_var, eps=eps,
                                 momentum=momentum, fix_gamma=fix_gamma,
                                 use_global_stats=use_global_stats,
                                 output_mean_var=output_mean_var, axis=axis,
                                 cudnn_off=cudnn_off, min_calib_range=min_calib_range,
                                 max_calib_range=max_calib_range))


def layer_norm(data=None, gamma=None, beta=None, axis: int = -1, eps: float = 1e-5,
               output_mean_var: bool = False) -> NDArray | list:
    """Layer normalization over ``axis``, scaled by ``gamma`` and shifted by ``beta``.

    Returns:
        ``out``, or ``[out, mean, std]`` with ``output_mean_var=True``.

    Example:
        >>> from core import np, npx
        >>> npx.layer_norm(np.array([[1.0, 3.0]]), np.ones(2), np.zeros(2), eps=0.0).tolist()
        [[-1.0, 1.0]]
    """
    return _listed(_nd.LayerNorm(data, gamma, beta, axis=axis, eps=eps,
                                 output_mean_var=output_mean_var))


def group_norm(data, gamma, beta, num_groups: int = 1, eps: float = 1e-5,
               output_mean_var: bool = False) -> NDArray | list:
    """Group normalization: the channels (axis 1) split into ``num_groups`` groups, each
    normalized over its channels and spatial axes, then scaled and shifted per channel.

    Returns:
        ``out``, or ``[out, mean, std]`` with ``output_mean_var=True``.

    Example:
        >>> from core import np, npx
        >>> x = np.array([[[1.0], [3.0]]])
        >>> npx.group_norm(x, np.ones(2), np.zeros(2), eps=0.0).reshape(-1).tolist()
        [-1.0, 1.0]
    """
    return _listed(_nd.GroupNorm(data, gamma, beta, num_groups=num_groups, eps=eps,
                                 output_mean_var=output_mean_var))


def embedding(data, weight, input_dim=None, output_dim=None, dtype="float32",
              sparse_grad: bool = False, **kwargs) -> NDArray:
    """The rows of ``weight`` at the integer ids in ``data``: shape
    ``data.shape + (output_dim,)``; the sizes default to ``weight``'s.

    Example:
        >>> from core import np, npx
        >>> w = np.arange(6.0).reshape(3, 2)
        >>> npx.embedding(np.array([2, 0]), w, 3, 2).tolist()
        [[4.0, 5.0], [0.0, 1.0]]
    """
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"npx.embedding: unexpected keyword argument(s) {sorted(kwargs)}")
    if hasattr(weight, "shape") and len(weight.shape) == 2:
        input_dim = weight.shape[0] if input_dim is None else input_dim
        output_dim = weight.shape[1] if output_dim is None else output_dim
    return _F.Embedding(data, weight, input_dim=input_dim, output_dim=output_dim,
                        dtype=_dtype_name(dtype), sparse_grad=sparse_grad)


def rnn(data=None, parameters=None, state=None, state_cell=None, sequence_length=None,
        mode=None, state_size=None, num_layers=None, bidirectional=False,
        state_outputs=False, p=0.0, use_sequence_length=False, projection_size=None,
        lstm_state_clip_min=None, lstm_state_clip_max=None, lstm_state_clip_nan=None,
        layout="TNC", **kwargs) -> NDArray | list:
    """MXNet's fused RNN/LSTM/GRU over a ``(T, N, C)`` sequence (see ``nd.RNN``).

    Returns:
        ``out``, or with ``state_outputs=True`` ``[out, h_n]`` (``[out, h_n, c_n]``
        for LSTM).

    Example:
        >>> from core import np, npx
        >>> out = npx.rnn(np.ones((4, 2, 3)), np.ones(3 * 5 + 5 * 5 + 5 + 5) * 0.1,
        ...               np.zeros((1, 2, 5)), mode="rnn_tanh", state_size=5, num_layers=1)
        >>> out.shape
        (4, 2, 5)
    """
    return _listed(_nd.RNN(data, parameters, state, state_cell, sequence_length,
                           state_size=state_size, num_layers=num_layers or 1,
                           bidirectional=bidirectional, mode=mode, p=p,
                           state_outputs=state_outputs, projection_size=projection_size,
                           lstm_state_clip_min=lstm_state_clip_min,
                           lstm_state_clip_max=lstm_state_clip_max,
                           lstm_state_clip_nan=bool(lstm_state_clip_nan),
                           use_sequence_length=use_sequence_length, layout=layout, **kwargs))
