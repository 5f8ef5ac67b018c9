"""Basic layers (MXNet Gluon 1.9's ``gluon.nn.basic_layers``).

``Dense``, ``Dropout``, ``Embedding``, ``Flatten``, ``Identity`` and the concatenating
containers ``Concatenate`` / ``HybridConcatenate``; the normalization layers
(``BatchNorm``, ``BatchNormReLU``, ``SyncBatchNorm``, ``InstanceNorm``, ``LayerNorm``,
``GroupNorm``) live in ``norm_layers`` and are re-exported here, as MXNet has them in
this module. Each layer is a HybridBlock written in MXNet 1.x's
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

import numpy

from core import nd
from core.ops import F as _ops
from core.ops.abstract import is_tracing
from core.ops.act_grad import ACT_TYPES

from ..block import HybridBlock
from ..containers import HybridSequential, Sequential
from .activations import Activation
from .norm_layers import (
    BatchNorm,
    BatchNormReLU,
    GroupNorm,
    InstanceNorm,
    LayerNorm,
    SyncBatchNorm,
)

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


def _add_bias_and_activation(block, size: int, use_bias: bool, bias_initializer,
                             activation: str | None, **param_kwargs) -> None:
    """Set ``block.bias`` (shape ``(size,)``; None without ``use_bias``) and
    ``block.act``, the :class:`Activation` named ``activation`` (None for none): the end
    of the Dense and convolution layers."""
    if use_bias:
        block.bias = block.params.get("bias", shape=(size,), init=bias_initializer,
                                      **param_kwargs, allow_deferred_init=True)
    else:
        block.bias = None
    if activation is not None:
        block.act = Activation(activation, prefix=activation + "_")
    else:
        block.act = None


def _fuses_bias_act(F, block, bias) -> bool:
    """Whether ``block``'s bias and activation run as one ``_bias_act`` call
    (``core/ops/nn/bias_act.py``): imperatively (``F`` is ``core.nd``, not tracing a
    graph, so exported graphs keep MXNet's operators), with a bias, and an
    :class:`Activation` of relu, sigmoid or tanh that has no hooks."""
    act = block.act
    return (bias is not None and act is not None and F is nd and not is_tracing()
            and type(act) is Activation and act._act_type in ACT_TYPES
            and not act._forward_hooks and not act._forward_pre_hooks)


def _bias_act(out, bias, act, axis: int):
    """``act(out + bias)`` in one operator call (see :func:`_fuses_bias_act`)."""
    return _ops._bias_act(out, bias, act_type=act._act_type, axis=axis)

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
            _add_bias_and_activation(self, units, use_bias, bias_initializer, activation,
                                     dtype=dtype)

    def infer_shape(self, x, *args) -> None:
        if self._flatten:
            in_units = math.prod(x.shape[1:])
        else:
            in_units = x.shape[-1] if x.ndim else 0
        self.weight.shape = (self._units, in_units)

    def hybrid_forward(self, F, x, weight, bias=None):
        if _fuses_bias_act(F, self, bias):
            out = F.FullyConnected(x, weight, no_bias=True, num_hidden=self._units,
                                   flatten=self._flatten)
            return _bias_act(out, bias, self.act, -1)
        out = F.FullyConnected(x, weight, bias, no_bias=bias is None, num_hidden=self._units,
                               flatten=self._flatten, name="fwd")  # MXNet's node name
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
