"""The step cells: ``RNNCell``, ``LSTMCell``, ``GRUCell`` (MXNet 1.x's ``mx.rnn``).

Each step is two ``FullyConnected`` nodes (``i2h`` on the input, ``h2h`` on the
previous hidden state) with the gates stacked along the output axis, in MXNet's order
(LSTM: input, forget, cell, output; GRU: reset, update, candidate with the reset gate
applied after the hidden projection, as cuDNN does): the same functions, with the same
weights, as the fused ``RNN`` operator and ``gluon.rnn``'s cells.
"""
from __future__ import annotations

import numbers

from .. import initializer
from .. import sym as symbol
from .base import BaseRNNCell
from .params import RNNParams

__all__ = ["GRUCell", "LSTMCell", "RNNCell"]


def _check_hidden(cls: str, num_hidden) -> int:
    if isinstance(num_hidden, bool) or not isinstance(num_hidden, numbers.Integral) \
            or num_hidden < 1:
        raise ValueError(f"{cls}: num_hidden must be a positive int, got {num_hidden!r}")
    return num_hidden


def _nc(num_hidden: int) -> dict:
    return {"shape": (0, num_hidden), "__layout__": "NC"}


class RNNCell(BaseRNNCell):
    """An Elman RNN step: ``h' = activation(W_i x + b_i + W_h h + b_h)``.

    Args:
        num_hidden: the number of hidden units.
        activation: an ``Activation`` ``act_type`` (``'tanh'``, ``'relu'``, ...) or a
            callable ``f(symbol, name=...)``.
        prefix: prefix of node and weight names (default ``'rnn_'``).
        params: an ``RNNParams`` to share weights (None: the cell's own).

    Example:
        >>> from core import rnn, sym
        >>> cell = rnn.RNNCell(100, prefix="rnn_")
        >>> outputs, _ = cell.unroll(3, [sym.var(f"rnn_t{i}_data") for i in range(3)])
        >>> sym.Group(outputs).infer_shape(rnn_t0_data=(10, 50), rnn_t1_data=(10, 50),
        ...                                rnn_t2_data=(10, 50))[1]
        [(10, 100), (10, 100), (10, 100)]
    """

    def __init__(self, num_hidden: int, activation="tanh", prefix: str = "rnn_",
                 params: RNNParams | None = None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = _check_hidden("RNNCell", num_hidden)
        self._activation = activation
        self._iW = self.params.get("i2h_weight")
        self._iB = self.params.get("i2h_bias")
        self._hW = self.params.get("h2h_weight")
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self) -> list:
        return [_nc(self._num_hidden)]

    @property
    def _gate_names(self):
        return ("",)

    def __call__(self, inputs, states):
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden, name=f"{name}i2h")
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden, name=f"{name}h2h")
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
        return output, [output]


class LSTMCell(BaseRNNCell):
    """A Long Short-Term Memory step; states ``[h, c]``.

    Args:
        num_hidden: the number of hidden units.
        prefix: prefix of node and weight names (default ``'lstm_'``).
        params: an ``RNNParams`` to share weights (None: the cell's own).
        forget_bias: the initial forget-gate bias: ``<prefix>i2h_bias`` carries an
            ``LSTMBias(forget_bias)`` initializer (``__init__`` attribute), which
            ``Module.init_params`` applies.

    Example:
        >>> from core import rnn, sym
        >>> cell = rnn.LSTMCell(8, prefix="l0_")
        >>> out, (h, c) = cell(sym.var("x"), cell.begin_state())
        >>> out.name, c.name
        ('l0_t0_out', 'l0_t0_state')
    """

    def __init__(self, num_hidden: int, prefix: str = "lstm_", params: RNNParams | None = None,
                 forget_bias: float = 1.0):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = _check_hidden("LSTMCell", num_hidden)
        self._iW = self.params.get("i2h_weight")
        self._hW = self.params.get("h2h_weight")
        # the forget bias goes into i2h_bias: it adds to the forget gate's activation
        self._iB = self.params.get("i2h_bias",
                                   init=initializer.LSTMBias(forget_bias=forget_bias))
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self) -> list:
        return [_nc(self._num_hidden), _nc(self._num_hidden)]

    @property
    def _gate_names(self):
        return ["_i", "_f", "_c", "_o"]

    def __call__(self, inputs, states):
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        h = self._num_hidden
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=h * 4, name=f"{name}i2h")
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=h * 4, name=f"{name}h2h")
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4, name=f"{name}slice")
        in_gate = symbol.Activation(gates[0], act_type="sigmoid", name=f"{name}i")
        forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name=f"{name}f")
        in_transform = symbol.Activation(gates[2], act_type="tanh", name=f"{name}c")
        out_gate = symbol.Activation(gates[3], act_type="sigmoid", name=f"{name}o")
        next_c = symbol.elemwise_add(forget_gate * states[1], in_gate * in_transform,
                                     name=f"{name}state")
        next_h = symbol.elemwise_mul(out_gate, symbol.Activation(next_c, act_type="tanh"),
                                     name=f"{name}out")
        return next_h, [next_h, next_c]


class GRUCell(BaseRNNCell):
    """A Gated Recurrent Unit step (cuDNN's variant: the reset gate multiplies the
    projected hidden state).

    Args:
        num_hidden: the number of hidden units.
        prefix: prefix of node and weight names (default ``'gru_'``).
        params: an ``RNNParams`` to share weights (None: the cell's own).

    Example:
        >>> from core import rnn, sym
        >>> cell = rnn.GRUCell(5, prefix="g_")
        >>> sorted(cell.params._params)
        ['g_h2h_bias', 'g_h2h_weight', 'g_i2h_bias', 'g_i2h_weight']
    """

    def __init__(self, num_hidden: int, prefix: str = "gru_", params: RNNParams | None = None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = _check_hidden("GRUCell", num_hidden)
        self._iW = self.params.get("i2h_weight")
        self._iB = self.params.get("i2h_bias")
        self._hW = self.params.get("h2h_weight")
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self) -> list:
        return [_nc(self._num_hidden)]

    @property
    def _gate_names(self):
        return ["_r", "_z", "_o"]

    def __call__(self, inputs, states):
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        h = self._num_hidden
        prev_h = states[0]
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=h * 3, name=f"{name}_i2h")
        h2h = symbol.FullyConnected(data=prev_h, weight=self._hW, bias=self._hB,
                                    num_hidden=h * 3, name=f"{name}_h2h")
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name=f"{name}_i2h_slice")
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name=f"{name}_h2h_slice")
        reset_gate = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name=f"{name}_r_act")
        update_gate = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid",
                                        name=f"{name}_z_act")
        next_h_tmp = symbol.Activation(i2h + reset_gate * h2h, act_type="tanh",
                                       name=f"{name}_h_act")
        next_h = symbol.elemwise_add((1. - update_gate) * next_h_tmp, update_gate * prev_h,
                                     name=f"{name}out")
        return next_h, [next_h]
