"""Initializers (``core.initializer``), also reachable as ``gluon.init`` and, under the
``mxnet`` alias, as ``mxnet.init``/``mxnet.initializer``.

The names are MXNet 2.0's: ``Initializer``, ``InitDesc``, ``Zero`` (``'zeros'``), ``One``
(``'ones'``), ``Constant``, ``Uniform``, ``Normal``, ``Orthogonal``, ``Xavier``,
``MSRAPrelu``, ``Bilinear``, ``LSTMBias``, ``Mixed``, ``Load``, ``register``, ``create``
and ``RNNFused`` (defined here: it fills the single flat parameter vector of the fused
RNN operator, ``npx.rnn``/``nd.RNN``). MXNet 1.x's ``FusedRNN`` (for the removed
``FusedRNNCell``) is not provided.

Example:
    >>> from gluon import init
    >>> init.Xavier(magnitude=2.24)
    Xavier(rnd_type='uniform', factor_type='avg', magnitude=2.24)
    >>> init.create('zeros')
    Zero()
"""
from __future__ import annotations

import numpy

from core import nd
from core.initializer import *
from core.initializer import Initializer, Uniform, create, register
from core.ndarray import NDArray

__all__ = ["Bilinear", "Constant", "InitDesc", "Initializer", "LSTMBias", "Load", "MSRAPrelu",
           "Mixed", "Normal", "One", "Orthogonal", "RNNFused", "Uniform", "Xavier", "Zero",
           "alias", "create", "register"]

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def _dumps(init):
    return init.dumps() if isinstance(init, Initializer) else init


@register
class RNNFused(Initializer):
    """Fills the flat parameter vector of a fused RNN piece by piece (MXNet 2.0).

    The vector is laid out as ``npx.rnn`` reads it: for each layer and direction the
    i2h weight ``(G*H, C)`` and the h2h weight ``(G*H, H)``, then all i2h and h2h biases
    ``(G*H,)`` in the same order (``G`` gates: 1 for rnn_relu/rnn_tanh, 4 for LSTM, 3 for
    GRU). The input size ``C`` of the first layer is read off the vector's length. Each
    piece is filled with its own initializer's weight rule, so ``LSTMBias`` or
    ``Constant`` work as bias initializers.

    Args:
        mode: ``'rnn_relu'``, ``'rnn_tanh'``, ``'lstm'`` or ``'gru'``.
        num_layers: the number of layers.
        state_size: the hidden size ``H``.
        bidirectional: two directions per layer.
        projection_size: must be None (LSTM projections are not supported here).
        i2h_weight_initializer: for the input-to-hidden weights; None gives
            ``Uniform()`` (MXNet 2.0's default for fused RNN weights).
        h2h_weight_initializer: for the hidden-to-hidden weights; None likewise.
        i2h_bias_initializer: for the input-to-hidden biases (default ``'zeros'``).
        h2h_bias_initializer: for the hidden-to-hidden biases (default ``'zeros'``).

    Raises:
        ValueError: an unknown mode, a projection size, or a vector whose length fits no
            input size for this configuration.

    Example:
        >>> from core import nd
        >>> from gluon import init
        >>> params = nd.zeros((3 * 4 * (2 + 4) + 2 * 3 * 4,))   # a GRU, H=4, input 2
        >>> init.RNNFused('gru', 1, 4, h2h_bias_initializer=init.Constant(1))('rnn_param',
        ...                                                                   params)
        >>> params[-12:].asnumpy().tolist() == [1.0] * 12
        True
    """

    def __init__(self, mode: str, num_layers: int, state_size: int,
                 bidirectional: bool = False, projection_size: int | None = None,
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros"):
        if mode not in _GATES:
            raise ValueError(f"RNNFused: mode must be one of {sorted(_GATES)}, got {mode!r}")
        if projection_size is not None:
            raise ValueError("RNNFused: projection_size is not supported (kbackend's fused "
                             "RNN has no LSTM projection)")
        super().__init__(mode=mode, num_layers=num_layers, state_size=state_size,
                         bidirectional=bidirectional,
                         i2h_weight_initializer=_dumps(i2h_weight_initializer),
                         h2h_weight_initializer=_dumps(h2h_weight_initializer),
                         i2h_bias_initializer=_dumps(i2h_bias_initializer),
                         h2h_bias_initializer=_dumps(h2h_bias_initializer))
        self.mode, self.num_layers, self.state_size = mode, int(num_layers), int(state_size)
        self.directions = 2 if bidirectional else 1
        self._inits = {k: create(v) if v is not None else Uniform() for k, v in (
            ("i2h_weight", i2h_weight_initializer), ("h2h_weight", h2h_weight_initializer),
            ("i2h_bias", i2h_bias_initializer), ("h2h_bias", h2h_bias_initializer))}

    def __call__(self, desc, arr: NDArray) -> None:
        """Fill ``arr``, the flat parameter vector, whatever its name (``'rnn_param'``)."""
        if not isinstance(arr, NDArray):
            raise TypeError(f"RNNFused: the array to fill must be an NDArray, got "
                            f"{type(arr).__name__}")
        self._init_weight(str(desc), arr)

    def _input_size(self, desc, size: int) -> int:
        gh, h, d = _GATES[self.mode] * self.state_size, self.state_size, self.directions
        upper = (self.num_layers - 1) * d * (gh * (d * h + h) + 2 * gh)
        first, rem = divmod(size - upper - d * 2 * gh, d * gh)
        if rem or first - h < 1:
            raise ValueError(
                f"RNNFused: {desc!r} has {size} entries, which fits no input size for mode="
                f"{self.mode!r}, num_layers={self.num_layers}, state_size={h}, "
                f"bidirectional={d == 2}")
        return first - h

    def _init_weight(self, desc, arr: NDArray) -> None:
        if arr.ndim != 1:
            raise ValueError(f"RNNFused: {desc!r} must be the flat parameter vector, got shape "
                             f"{tuple(arr.shape)}")
        gh, h, d = _GATES[self.mode] * self.state_size, self.state_size, self.directions
        c = self._input_size(desc, int(arr.shape[0]))
        weights, biases = [], []
        for layer in range(self.num_layers):
            cols = c if layer == 0 else d * h
            for direction in ("l", "r")[:d]:
                name = f"{desc}_{direction}{layer}"
                weights += [self._piece(f"{name}_i2h_weight", "i2h_weight", (gh, cols), arr),
                            self._piece(f"{name}_h2h_weight", "h2h_weight", (gh, h), arr)]
                biases += [self._piece(f"{name}_i2h_bias", "i2h_bias", (gh,), arr),
                           self._piece(f"{name}_h2h_bias", "h2h_bias", (gh,), arr)]
        arr[:] = nd.array(numpy.concatenate([p.ravel() for p in weights + biases]),
                          ctx=arr.context, dtype=arr.dtype)

    def _piece(self, name: str, kind: str, shape: tuple, arr: NDArray) -> numpy.ndarray:
        piece = nd.zeros(shape, ctx=arr.context, dtype=arr.dtype)
        self._inits[kind]._init_weight(name, piece)
        return piece.asnumpy()
