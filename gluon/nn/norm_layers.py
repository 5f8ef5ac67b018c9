"""Normalization layers (MXNet Gluon 1.9's, in its ``gluon.nn.basic_layers``, which
re-exports them): ``BatchNorm``, ``BatchNormReLU``, ``SyncBatchNorm``, ``InstanceNorm``,
``LayerNorm`` and ``GroupNorm``.

Each has a learned scale ``gamma`` and offset ``beta`` (fixed when ``scale``/``center``
is False), sized by the channel axis of the first input unless given.

Example:
    >>> from core import nd
    >>> from gluon import nn
    >>> layer = nn.LayerNorm()
    >>> layer
    LayerNorm(eps=1e-05, axis=-1, center=True, scale=True, in_channels=0)
    >>> layer.initialize()
    >>> layer(nd.ones((2, 3))).shape, layer.gamma.shape
    ((2, 3), (3,))
"""
from __future__ import annotations

import warnings

import numpy

from ..block import HybridBlock

__all__ = ["BatchNorm", "BatchNormReLU", "GroupNorm", "InstanceNorm", "LayerNorm",
           "SyncBatchNorm"]


def _kwargs_repr(kwargs: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


def _channel_dim(name: str, x, axis: int) -> int:
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"{name}: axis={axis} is out of range for an input of shape "
                         f"{tuple(x.shape)} ({x.ndim} dimensions)")
    return int(x.shape[axis])

def _add_gamma_beta(block, size: int, center: bool, scale: bool, gamma_initializer,
                    beta_initializer, lock_fixed: bool = False) -> None:
    """Set the normalization parameters ``block.gamma`` (the scale) and ``block.beta``
    (the offset), shape ``(size,)`` (0: inferred on the first call).

    Each is learned (``grad_req='write'``) when ``scale``/``center``, else fixed
    (``'null'``); with ``lock_fixed`` a fixed one is also not differentiable, so no later
    ``grad_req`` change makes it learned (BatchNorm).
    """
    for name, learned, init in (("gamma", scale, gamma_initializer),
                                ("beta", center, beta_initializer)):
        lock = {"differentiable": learned} if lock_fixed else {}
        setattr(block, name, block.params.get(name, grad_req="write" if learned else "null",
                                              shape=(size,), init=init,
                                              allow_deferred_init=True, **lock))

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
            _add_gamma_beta(self, in_channels, center, scale, gamma_initializer,
                            beta_initializer, lock_fixed=True)
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
    the channel axis 1: every replica normalizes its shard with the mean and variance of
    the whole batch over the ``num_devices`` contexts.

    In training each replica (one per context) contributes its per-channel sums, forward
    and backward, and continues with the totals (:mod:`gluon.nn.batch_sync`): outputs,
    input gradients and running statistics equal one :class:`BatchNorm` over the whole
    batch; the gamma/beta gradients stay per replica (the Trainer's all-reduce sums
    them into the whole batch's). The replicas must run concurrently:
    ``gluon.Trainer.forward_backward`` / :func:`core.parallel.forward_backward`, or one
    thread per context; a loop over the shards in the main thread raises at once (it
    could never synchronize). With ``num_devices=1``, in inference and with
    ``use_global_stats`` it is :class:`BatchNorm`. ``gluon.contrib.nn.SyncBatchNorm``
    (MXNet 1.9's name) is this class.

    Args:
        in_channels: the number of channels; 0 infers it from the first input.
        num_devices: how many replicas (contexts) share a batch (default: the number of
            GPUs, at least 1, with a warning as in MXNet).
        momentum, epsilon, center, scale, use_global_stats, beta_initializer,
        gamma_initializer, running_mean_initializer, running_variance_initializer:
            as :class:`BatchNorm`.
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).

    Example:
        >>> from core import nd, cpu, parallel
        >>> from gluon import nn
        >>> bn = nn.SyncBatchNorm(in_channels=1, num_devices=2)
        >>> bn.initialize(ctx=[cpu(0), cpu(1)])
        >>> xs = [nd.array([[1.0], [2.0]], ctx=cpu(0)), nd.array([[3.0], [6.0]], ctx=cpu(1))]
        >>> outs = [None, None]
        >>> def replica(x):
        ...     outs[x.context.device_id] = bn(x)
        ...     return outs[x.context.device_id].sum()
        >>> _ = parallel.forward_backward(replica, [(x,) for x in xs], [])
        >>> [o.asnumpy().round(3).ravel().tolist() for o in outs]   # mean 3, std 1.871
        [[-1.069, -0.535], [0.0, 1.604]]
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
        if int(num_devices) < 1:
            raise ValueError(f"SyncBatchNorm: num_devices must be at least 1, got "
                             f"{num_devices!r}")
        self._bn_kwargs = dict(self._kwargs)
        self._kwargs = {"eps": epsilon, "momentum": momentum, "fix_gamma": not scale,
                        "use_global_stats": use_global_stats, "ndev": int(num_devices),
                        "key": self.prefix}

    @staticmethod
    def _get_num_devices() -> int:
        import core

        warnings.warn("Caution using SyncBatchNorm: if not using all the GPUs, please "
                      "manually set num_devices", UserWarning, stacklevel=3)
        return max(core.num_gpus(), 1)

    def _batch_norm_kwargs(self) -> dict:
        return self._bn_kwargs

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        from core import autograd
        from core.ndarray import NDArray

        from . import batch_sync

        k = self._kwargs
        synced = (k["ndev"] > 1 and autograd.is_training() and not k["use_global_stats"]
                  and isinstance(x, NDArray))
        if not synced:
            return F.BatchNorm(x, gamma, beta, running_mean, running_var,
                               **self._batch_norm_kwargs())
        if x.ndim < 2:
            raise ValueError(f"SyncBatchNorm '{self.name}': the input needs a channel axis 1, "
                             f"got shape {tuple(x.shape)}")
        fwd, bwd = batch_sync.rendezvous_of(self, k["ndev"])
        fn = batch_sync.SyncBN(fwd, bwd, k["eps"], k["momentum"], k["fix_gamma"],
                               running_mean, running_var)
        return fn(x, gamma, beta)


class _AxisNorm(HybridBlock):
    """What :class:`InstanceNorm` and :class:`LayerNorm` share: ``gamma`` and ``beta``
    sized by the input's ``axis``, and the repr."""

    def __init__(self, axis: int, epsilon: float, center: bool, scale: bool,
                 beta_initializer, gamma_initializer, in_channels: int, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon
        with self.name_scope():
            _add_gamma_beta(self, in_channels, center, scale, gamma_initializer,
                            beta_initializer)

    def infer_shape(self, x, *args) -> None:
        c = _channel_dim(type(self).__name__, x, self._axis)
        self.gamma.shape = (c,)
        self.beta.shape = (c,)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({_kwargs_repr(self._kwargs)}, "
                f"in_channels={self.gamma.shape[0]})")


class InstanceNorm(_AxisNorm):
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
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer,
                         in_channels, **kwargs)

    def hybrid_forward(self, F, x, gamma, beta):
        if self._axis in (1, 1 - x.ndim):
            return F.InstanceNorm(x, gamma, beta, eps=self._epsilon)
        x = F.swapaxes(x, 1, self._axis)
        out = F.InstanceNorm(x, gamma, beta, eps=self._epsilon)
        return F.swapaxes(out, 1, self._axis)


class LayerNorm(_AxisNorm):
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
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer,
                         in_channels, prefix=prefix, params=params)
        self._center = center
        self._scale = scale

    def hybrid_forward(self, F, data, gamma, beta):
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)


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
            _add_gamma_beta(self, num_groups, center, scale, gamma_initializer,
                            beta_initializer)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.GroupNorm(data, gamma=gamma, beta=beta, num_groups=self._num_groups,
                           eps=self._epsilon)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({_kwargs_repr(self._kwargs)})"
