"""Basic layers (MXNet Gluon 1.9's ``gluon.nn.basic_layers``).

``Dense``, ``Dropout``, the normalization layers (``BatchNorm``, ``BatchNormReLU``,
``SyncBatchNorm``, ``InstanceNorm``, ``LayerNorm``, ``GroupNorm``), ``Embedding``,
``Flatten``, ``Identity`` and the concatenating containers ``Concatenate`` /
``HybridConcatenate``. Each layer is a HybridBlock written in MXNet 1.x's
``hybrid_forward(self, F, x, *params)`` style, with MXNet's arguments, defaults and
parameter names (``dense0_weight``; ``weight``/``bias`` by structure).

Layers whose input size is not given (``in_units=0``, ``in_channels=0``) defer the
initialization of their parameters to the first forward, whose input gives the
missing sizes (:meth:`infer_shape`).

Example:
    >>> from core import nd
    >>> from gluon import nn
    >>> net = nn.Dense(4, activation="relu")
    >>> net
    Dense(None -> 4, Activation(relu))
    >>> net.initialize()
    >>> net(nd.ones((2, 3))).shape, net.weight.shape
    ((2, 4), (4, 3))
"""
from __future__ import annotations

import math
import warnings

import numpy

from core import nd

from ..block import HybridBlock
from ..containers import HybridSequential, Sequential
from .activations import Activation

__all__ = [
    "BatchNorm",
    "BatchNormReLU",
    "Concatenate",
    "Dense",
    "Dropout",
    "Embedding",
    "Flatten",
    "GroupNorm",
    "HybridConcatenate",
    "Identity",
    "InstanceNorm",
    "LayerNorm",
    "SyncBatchNorm",
]


def _kwargs_repr(kwargs: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


def _channel_dim(name: str, x, axis: int) -> int:
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"{name}: axis={axis} is out of range for an input of shape "
                         f"{tuple(x.shape)} ({x.ndim} dimensions)")
    return int(x.shape[axis])


class Dense(HybridBlock):
    """A densely-connected layer: ``activation(dot(x, weight.T) + bias)``.

    Args:
        units: the size of the output.
        activation: the name of an activation applied to the output (see
            :class:`Activation`); None for none (linear).
        use_bias: add a bias vector.
        flatten: collapse every axis but the first of the input into the features; with
            False the product applies to the last axis and the others are kept.
        dtype: the parameters' data type.
        weight_initializer: the weight's initializer; None uses the one given to
            ``initialize()``.
        bias_initializer: the bias's initializer.
        in_units: the size of the input features; 0 infers it from the first input
            (deferred initialization).
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).

    Parameters:
        weight: shape ``(units, in_units)``.
        bias: shape ``(units,)``.

    Inputs:
        data: with ``flatten=True`` ``(batch_size, x1, ..., xn)`` with ``x1 * ... * xn ==
        in_units``; otherwise ``(x1, ..., xn, in_units)``.

    Outputs:
        out: ``(batch_size, units)``, or ``(x1, ..., xn, units)`` with ``flatten=False``.

    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> layer = nn.Dense(2, in_units=3, flatten=False, weight_initializer="ones")
        >>> layer.initialize()
        >>> layer(nd.ones((4, 5, 3))).shape
        (4, 5, 2)
        >>> layer(nd.ones((1, 3))).asnumpy().tolist()
        [[3.0, 3.0]]
    """

    def __init__(self, units: int, activation: str | None = None, use_bias: bool = True,
                 flatten: bool = True, dtype="float32", weight_initializer=None,
                 bias_initializer="zeros", in_units: int = 0, **kwargs):
        super().__init__(**kwargs)
        self._flatten = flatten
        with self.name_scope():
            self._units = units
            self._in_units = in_units
            self.weight = self.params.get("weight", shape=(units, in_units),
                                          init=weight_initializer, dtype=dtype,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=(units,), init=bias_initializer,
                                            dtype=dtype, allow_deferred_init=True)
            else:
                self.bias = None
            if activation is not None:
                self.act = Activation(activation, prefix=activation + "_")
            else:
                self.act = None

    def infer_shape(self, x, *args) -> None:
        if self._flatten:
            in_units = math.prod(x.shape[1:])
        else:
            in_units = x.shape[-1] if x.ndim else 0
        self.weight.shape = (self._units, in_units)

    def hybrid_forward(self, F, x, weight, bias=None):
        out = F.FullyConnected(x, weight, bias, no_bias=bias is None, num_hidden=self._units,
                               flatten=self._flatten)
        if self.act is not None:
            out = self.act(out)
        return out

    def __repr__(self) -> str:
        shape = self.weight.shape
        act = self.act if self.act else "linear"
        return f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]}, {act})"


class Dropout(HybridBlock):
    """Dropout: in training, zero each input unit with probability ``rate`` and scale the
    others by ``1 / (1 - rate)``; in inference, the identity.

    Training means ``autograd.is_training()`` (inside ``autograd.record()`` or
    ``autograd.train_mode()``).

    Args:
        rate: the fraction of units to drop, in [0, 1].
        axes: the axes along which one mask value is shared (``(2, 3)`` drops whole
            feature maps of NCHW data); empty for ordinary dropout.
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).

    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> nn.Dropout(0.5)(nd.ones((2, 2))).asnumpy().tolist()  # inference: identity
        [[1.0, 1.0], [1.0, 1.0]]
    """

    def __init__(self, rate: float, axes=(), **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate <= 1:
            raise ValueError(f"Dropout: rate must be in [0, 1], got {rate}")
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F, x):
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes, cudnn_off=False)
        return F.identity(x)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p = {self._rate}, axes={self._axes})"


class BatchNorm(HybridBlock):
    """Batch normalization (Ioffe and Szegedy, 2015).

    In training (``autograd.is_training()``) the input is normalized with the mean and
    (biased) variance of the batch over every axis but ``axis``, and the running
    statistics are updated in place: ``running = running * momentum + batch * (1 -
    momentum)``. In inference, or with ``use_global_stats``, the running statistics are
    used. ``running_mean``/``running_var`` are parameters without gradient
    (``grad_req='null'``), saved and loaded with the others.

    Args:
        axis: the channel axis (1 for NCHW data, -1 or 3 for NHWC).
        momentum: the running statistics' decay.
        epsilon: added to the variance.
        center: add the learned offset ``beta`` (False: beta stays 0).
        scale: multiply by the learned ``gamma`` (False: gamma is fixed to 1).
        use_global_stats: normalize with the running statistics in training too.
        fuse_relu: must be False (use :class:`BatchNormReLU`).
        beta_initializer: the initializer of ``beta``.
        gamma_initializer: the initializer of ``gamma``.
        running_mean_initializer: the initializer of ``running_mean``.
        running_variance_initializer: the initializer of ``running_var``.
        in_channels: the number of channels; 0 infers it from the first input.
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).

    Parameters:
        gamma, beta, running_mean, running_var: shape ``(in_channels,)``.

    Example:
        >>> from core import nd, autograd
        >>> from gluon import nn
        >>> bn = nn.BatchNorm(momentum=0.5)
        >>> bn.initialize()
        >>> with autograd.record():
        ...     y = bn(nd.array([[1.0, 2.0], [3.0, 6.0]]))
        >>> y.asnumpy().round(3).tolist()
        [[-1.0, -1.0], [1.0, 1.0]]
        >>> bn.running_mean.data().asnumpy().tolist()
        [1.0, 2.0]
        >>> bn
        BatchNorm(axis=1, eps=1e-05, momentum=0.5, fix_gamma=False, use_global_stats=False, in_channels=2)
    """

    def __init__(self, axis: int = 1, momentum: float = 0.9, epsilon: float = 1e-5,
                 center: bool = True, scale: bool = True, use_global_stats: bool = False,
                 fuse_relu: bool = False, beta_initializer="zeros", gamma_initializer="ones",
                 running_mean_initializer="zeros", running_variance_initializer="ones",
                 in_channels: int = 0, **kwargs):
        if fuse_relu and not isinstance(self, BatchNormReLU):
            raise ValueError("BatchNorm: fuse_relu=True is not supported here; use "
                             "nn.BatchNormReLU for batch normalization fused with ReLU")
        super().__init__(**kwargs)
        self._kwargs = {"axis": axis, "eps": epsilon, "momentum": momentum,
                        "fix_gamma": not scale, "use_global_stats": use_global_stats}
        self.fuse_relu = fuse_relu
        if in_channels != 0:
            self.in_channels = in_channels
        with self.name_scope():
            self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                         shape=(in_channels,), init=gamma_initializer,
                                         allow_deferred_init=True, differentiable=scale)
            self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                        shape=(in_channels,), init=beta_initializer,
                                        allow_deferred_init=True, differentiable=center)
            self.running_mean = self.params.get("running_mean", grad_req="null",
                                                shape=(in_channels,),
                                                init=running_mean_initializer,
                                                allow_deferred_init=True, differentiable=False)
            self.running_var = self.params.get("running_var", grad_req="null",
                                               shape=(in_channels,),
                                               init=running_variance_initializer,
                                               allow_deferred_init=True, differentiable=False)

    def cast(self, dtype) -> None:
        """Cast the parameters; float16 is kept in float32 (statistics need the range)."""
        if numpy.dtype(dtype).name == "float16":
            dtype = "float32"
        super().cast(dtype)

    def infer_shape(self, x, *args) -> None:
        c = _channel_dim(type(self).__name__, x, self._batch_norm_kwargs()["axis"])
        for p in (self.gamma, self.beta, self.running_mean, self.running_var):
            p.shape = (c,)

    def _batch_norm_kwargs(self) -> dict:
        return self._kwargs

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        out = F.BatchNorm(x, gamma, beta, running_mean, running_var,
                          **self._batch_norm_kwargs())
        if self.fuse_relu:
            out = F.relu(out)
        return out

    def __repr__(self) -> str:
        in_channels = self.gamma.shape[0]
        return (f"{type(self).__name__}({_kwargs_repr(self._kwargs)}, "
                f"in_channels={in_channels if in_channels else None})")


class BatchNormReLU(BatchNorm):
    """Batch normalization followed by ReLU (MXNet's fused ``BatchNormReLU``).

    Args:
        As :class:`BatchNorm` (``fuse_relu`` must be True).
    """

    def __init__(self, axis: int = 1, momentum: float = 0.9, epsilon: float = 1e-5,
                 center: bool = True, scale: bool = True, use_global_stats: bool = False,
                 fuse_relu: bool = True, beta_initializer="zeros", gamma_initializer="ones",
                 running_mean_initializer="zeros", running_variance_initializer="ones",
                 in_channels: int = 0, **kwargs):
        if not fuse_relu:
            raise ValueError("BatchNormReLU: fuse_relu must be True; use nn.BatchNorm "
                             "without ReLU fusion")
        super().__init__(axis, momentum, epsilon, center, scale, use_global_stats, True,
                         beta_initializer, gamma_initializer, running_mean_initializer,
                         running_variance_initializer, in_channels, **kwargs)


class SyncBatchNorm(BatchNorm):
    """Cross-device synchronized batch normalization (MXNet's ``SyncBatchNorm``), over
    the channel axis 1.

    On one device it is :class:`BatchNorm`. The statistics are not synchronized across
    devices: with parameters on several contexts each replica normalizes with its own
    batch statistics and updates its own running statistics.

    Args:
        in_channels: the number of channels; 0 infers it from the first input.
        num_devices: the number of devices taking part (default: the number of GPUs,
            at least 1); recorded.
        momentum, epsilon, center, scale, use_global_stats, beta_initializer,
        gamma_initializer, running_mean_initializer, running_variance_initializer:
            as :class:`BatchNorm`.
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).
    """

    def __init__(self, in_channels: int = 0, num_devices: int | None = None,
                 momentum: float = 0.9, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = True, use_global_stats: bool = False,
                 beta_initializer="zeros", gamma_initializer="ones",
                 running_mean_initializer="zeros", running_variance_initializer="ones",
                 **kwargs):
        super().__init__(1, momentum, epsilon, center, scale, use_global_stats, False,
                         beta_initializer, gamma_initializer, running_mean_initializer,
                         running_variance_initializer, in_channels, **kwargs)
        if num_devices is None:
            num_devices = self._get_num_devices()
        self._bn_kwargs = dict(self._kwargs)
        self._kwargs = {"eps": epsilon, "momentum": momentum, "fix_gamma": not scale,
                        "use_global_stats": use_global_stats, "ndev": num_devices,
                        "key": self.prefix}

    @staticmethod
    def _get_num_devices() -> int:
        import core

        warnings.warn("Caution using SyncBatchNorm: if not using all the GPUs, please "
                      "manually set num_devices", UserWarning, stacklevel=3)
        return max(core.num_gpus(), 1)

    def _batch_norm_kwargs(self) -> dict:
        return self._bn_kwargs


class InstanceNorm(HybridBlock):
    """Instance normalization (Ulyanov et al., 2016): each sample and channel is
    normalized over the remaining (spatial) axes.

    ``out = (x - mean) / sqrt(var + epsilon) * gamma + beta``.

    Args:
        axis: the channel axis, excluded from the normalization with the batch axis 0.
        epsilon: added to the variance.
        center: learn the offset ``beta``.
        scale: learn the scale ``gamma`` (default False: gamma stays 1).
        beta_initializer: the initializer of ``beta``.
        gamma_initializer: the initializer of ``gamma``.
        in_channels: the number of channels; 0 infers it from the first input.
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).

    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> layer = nn.InstanceNorm(epsilon=0.0)
        >>> layer.initialize()
        >>> layer(nd.array([[[1.0, 3.0]], [[2.0, 6.0]]])).asnumpy().tolist()
        [[[-1.0, 1.0]], [[-1.0, 1.0]]]
    """

    def __init__(self, axis: int = 1, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = False, beta_initializer="zeros", gamma_initializer="ones",
                 in_channels: int = 0, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon
        with self.name_scope():
            self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                         shape=(in_channels,), init=gamma_initializer,
                                         allow_deferred_init=True)
            self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                        shape=(in_channels,), init=beta_initializer,
                                        allow_deferred_init=True)

    def infer_shape(self, x, *args) -> None:
        c = _channel_dim("InstanceNorm", x, self._axis)
        self.gamma.shape = (c,)
        self.beta.shape = (c,)

    def hybrid_forward(self, F, x, gamma, beta):
        if self._axis in (1, 1 - x.ndim):
            return F.InstanceNorm(x, gamma, beta, eps=self._epsilon)
        x = F.swapaxes(x, 1, self._axis)
        out = F.InstanceNorm(x, gamma, beta, eps=self._epsilon)
        return F.swapaxes(out, 1, self._axis)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({_kwargs_repr(self._kwargs)}, "
                f"in_channels={self.gamma.shape[0]})")


class LayerNorm(HybridBlock):
    """Layer normalization (Ba et al., 2016): ``(x - mean) / sqrt(var + epsilon) * gamma
    + beta`` with the statistics along ``axis``.

    Args:
        axis: the normalized axis.
        epsilon: added to the variance.
        center: learn the offset ``beta``.
        scale: learn the scale ``gamma``.
        beta_initializer: the initializer of ``beta``.
        gamma_initializer: the initializer of ``gamma``.
        in_channels: the size of ``axis``; 0 infers it from the first input.
        prefix, params: see :class:`gluon.Block`.

    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> layer = nn.LayerNorm(epsilon=0.0)
        >>> layer.initialize()
        >>> layer(nd.array([[1.0, 3.0], [2.0, 6.0]])).asnumpy().tolist()
        [[-1.0, 1.0], [-1.0, 1.0]]
    """

    def __init__(self, axis: int = -1, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = True, beta_initializer="zeros", gamma_initializer="ones",
                 in_channels: int = 0, prefix: str | None = None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon
        self._center = center
        self._scale = scale
        with self.name_scope():
            self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                         shape=(in_channels,), init=gamma_initializer,
                                         allow_deferred_init=True)
            self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                        shape=(in_channels,), init=beta_initializer,
                                        allow_deferred_init=True)

    def infer_shape(self, x, *args) -> None:
        c = _channel_dim("LayerNorm", x, self._axis)
        self.gamma.shape = (c,)
        self.beta.shape = (c,)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({_kwargs_repr(self._kwargs)}, "
                f"in_channels={self.gamma.shape[0]})")


class GroupNorm(HybridBlock):
    """Group normalization (Wu and He, 2018): the channels (axis 1) of each sample are
    split into ``num_groups`` groups, each normalized over its channels and spatial
    positions.

    As in MXNet 1.x, ``gamma`` and ``beta`` hold one value per group.

    Args:
        num_groups: the number of groups; it must divide the number of channels.
        epsilon: added to the variance.
        center: learn the offset ``beta``.
        scale: learn the scale ``gamma``.
        beta_initializer: the initializer of ``beta``.
        gamma_initializer: the initializer of ``gamma``.
        prefix, params: see :class:`gluon.Block`.

    Parameters:
        gamma, beta: shape ``(num_groups,)``.

    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> layer = nn.GroupNorm(epsilon=0.0)
        >>> layer.initialize()
        >>> layer(nd.array([[[1.0], [3.0]]])).asnumpy().tolist()
        [[[-1.0], [1.0]]]
    """

    def __init__(self, num_groups: int = 1, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = True, beta_initializer="zeros", gamma_initializer="ones",
                 prefix: str | None = None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {"eps": epsilon, "num_groups": num_groups, "center": center,
                        "scale": scale}
        self._num_groups = num_groups
        self._epsilon = epsilon
        self._center = center
        self._scale = scale
        with self.name_scope():
            self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                         shape=(num_groups,), init=gamma_initializer,
                                         allow_deferred_init=True)
            self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                        shape=(num_groups,), init=beta_initializer,
                                        allow_deferred_init=True)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.GroupNorm(data, gamma=gamma, beta=beta, num_groups=self._num_groups,
                           eps=self._epsilon)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({_kwargs_repr(self._kwargs)})"


class Embedding(HybridBlock):
    """Maps integer ids to dense vectors: rows of a ``(input_dim, output_dim)`` table.

    Args:
        input_dim: the vocabulary size (largest id + 1).
        output_dim: the size of each vector.
        dtype: the table's data type.
        weight_initializer: the table's initializer; None uses the one given to
            ``initialize()``.
        sparse_grad: accepted for MXNet compatibility (the weight's ``grad_stype`` is
            ``'row_sparse'``); the gradient is stored densely.
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).

    Inputs:
        data: ids of any shape ``(x1, ..., xn)``.

    Outputs:
        out: ``(x1, ..., xn, output_dim)``.

    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> emb = nn.Embedding(10, 4)
        >>> emb
        Embedding(10 -> 4, float32)
        >>> emb.initialize()
        >>> emb(nd.array([[1, 2, 3]])).shape
        (1, 3, 4)
    """

    def __init__(self, input_dim: int, output_dim: int, dtype="float32",
                 weight_initializer=None, sparse_grad: bool = False, **kwargs):
        super().__init__(**kwargs)
        grad_stype = "row_sparse" if sparse_grad else "default"
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": sparse_grad}
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                          init=weight_initializer, dtype=dtype,
                                          allow_deferred_init=True, grad_stype=grad_stype)

    def hybrid_forward(self, F, x, weight):
        return F.Embedding(x, weight, **self._kwargs)

    def __repr__(self) -> str:
        k = self._kwargs
        dtype = k["dtype"]
        dtype = dtype if isinstance(dtype, str) else numpy.dtype(dtype).name
        return f"{type(self).__name__}({k['input_dim']} -> {k['output_dim']}, {dtype})"


class Flatten(HybridBlock):
    """Flattens the input to two dimensions: ``(N, x1, ..., xn)`` to ``(N, x1 * ... *
    xn)``.

    Args:
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).

    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> nn.Flatten()(nd.zeros((2, 3, 4))).shape
        (2, 12)
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def hybrid_forward(self, F, x):
        return F.flatten(x)

    def __repr__(self) -> str:
        return type(self).__name__


class Identity(HybridBlock):
    """Returns its input unchanged (a placeholder, e.g. for a skipped branch).

    Args:
        prefix, params: see :class:`gluon.Block`.

    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> nn.Identity()(nd.array([1.0, 2.0])).asnumpy().tolist()
        [1.0, 2.0]
    """

    def __init__(self, prefix: str | None = None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x):
        return x


class Concatenate(Sequential):
    """Runs each child on the same input and concatenates their outputs along ``axis``.

    Args:
        axis: the axis of concatenation.
        prefix, params: see :class:`gluon.Block`.

    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> net = nn.Concatenate(axis=1)
        >>> net.add(nn.Identity(), nn.Identity())
        >>> net(nd.zeros((2, 3))).shape
        (2, 6)
    """

    def __init__(self, axis: int = -1, prefix: str | None = None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x):
        out = [block(x) for block in self._children.values()]
        return nd.concat(*out, dim=self.axis)


class HybridConcatenate(HybridSequential):
    """Runs each (hybrid) child on the same input and concatenates their outputs along
    ``axis``.

    Args:
        axis: the axis of concatenation.
        prefix, params: see :class:`gluon.Block`.
    """

    def __init__(self, axis: int = -1, prefix: str | None = None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        out = [block(x) for block in self._children.values()]
        return F.concat(*out, dim=self.axis)
